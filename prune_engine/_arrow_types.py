"""Families of Arrow types, each tested one way everywhere.

>>> is_list_type(pa.list_(pa.int8())), is_list_type(pa.map_(pa.int8(), pa.int8()))
(True, False)
>>> is_string_type(pa.large_string()), is_string_type(pa.binary())
(True, False)
"""

from __future__ import annotations

import pyarrow as pa


def is_list_view(typ: pa.DataType) -> bool:
    """A list view or large list view."""
    return pa.types.is_list_view(typ) or pa.types.is_large_list_view(typ)


def is_list_type(typ: pa.DataType) -> bool:
    """Any Arrow list: list, large, fixed-size, list view."""
    return (pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ)
            or is_list_view(typ))


def is_string_type(typ: pa.DataType) -> bool:
    """Any Arrow UTF-8 string: string, large string, string view."""
    return pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)
