"""Families of Arrow types, each tested one way everywhere.

>>> is_list_type(pa.list_(pa.int8())), is_list_type(pa.map_(pa.int8(), pa.int8()))
(True, False)
>>> is_string_type(pa.large_string()), is_string_type(pa.binary())
(True, False)
>>> unit_ns(pa.timestamp("ms", "UTC")), unit_ns(pa.date32()) == DAY_NS, unit_ns(pa.int8())
(1000000, True, None)
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


#: nanoseconds per unit of a timestamp, and per day (a date32's unit)
UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
DAY_NS = 86_400 * 10**9


def unit_ns(typ: pa.DataType) -> int | None:
    """Nanoseconds per stored integer of a date or timestamp type; None for other types."""
    if pa.types.is_timestamp(typ):
        return UNIT_NS[typ.unit]
    if pa.types.is_date32(typ):
        return DAY_NS
    if pa.types.is_date64(typ):
        return UNIT_NS["ms"]
    return None
