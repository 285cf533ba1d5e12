"""The statistics-table layout: column names and conventions, defined once.

One row per container (a file or a Parquet row group), Delta-Lake style::

    container         string   unique id, e.g. "path" or "path#rg=3"
    path, row_group   string, int32 (optional)   where the container lives
    partition_values  struct   (optional) typed Hive-style partition values
    num_records       int64    row count; null = unknown
    min_values        struct   lower bounds of the non-null, non-NaN values (nested structs
    max_values        struct   upper bounds     mirror nested columns); null = unknown
    null_count        struct   same field names, int64 leaves; null = unknown
    nan_count         struct   (optional) over float leaves; null or missing = unknown
    ngram_index       struct<col: binary>  (optional) per-container index bytes
    bloom_filter      struct<"a.b": binary>  (optional) Parquet Bloom filters, one field per
                      leaf (dotted path), entries of :mod:`prune_engine.bloom.format`
    value_set         struct<"a.b": list<T>>  (optional) every value a container holds (its
                      dictionary), in the leaf's type; null = unknown

A stats struct that is null as a whole for a container means that every field under it is
unknown there. Leaves inside lists and maps describe *elements*, not rows: such a field is
marked with :data:`ELEMENT_KEY` metadata (value ``b"list"`` or ``b"map"``) and its type is the
element's (for a map, ``struct<key, value>``).

>>> import pyarrow as pa
>>> f = element_field("tags", pa.string())
>>> is_element_field(f), f.type
(True, DataType(string))
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

CONTAINER = "container"
PATH = "path"
ROW_GROUP = "row_group"
PARTITION_VALUES = "partition_values"
NUM_RECORDS = "num_records"
MIN_VALUES = "min_values"
MAX_VALUES = "max_values"
NULL_COUNT = "null_count"
NAN_COUNT = "nan_count"
NGRAM_INDEX = "ngram_index"
BLOOM_FILTER = "bloom_filter"
VALUE_SET = "value_set"

#: the per-column statistics structs, in the order they are usually laid out
STAT_STRUCTS = (MIN_VALUES, MAX_VALUES, NULL_COUNT, NAN_COUNT)

#: field-metadata key marking a stats field that describes list or map elements
ELEMENT_KEY = b"prune_engine.element"

#: schema-metadata key of the saved stats format version
FORMAT_VERSION_KEY = b"prune_engine.stats_format"
#: 2: a saved file carries its checksum (:mod:`prune_engine.stats.io`); 1: it did not
FORMAT_VERSION = 2


def element_field(name: str, element_type: pa.DataType, kind: str = "list") -> pa.Field:
    """A stats field describing the elements of a list (``kind="list"``) or map (``"map"``)."""
    if kind not in ("list", "map"):
        raise ValueError(f"kind must be 'list' or 'map', not {kind!r}")
    return pa.field(name, element_type, metadata={ELEMENT_KEY: kind.encode()})


def is_element_field(field: pa.Field) -> bool:
    """True when ``field`` describes list or map elements rather than row values."""
    return bool(field.metadata) and ELEMENT_KEY in field.metadata


@dataclass(frozen=True)
class ColumnInfo:
    """A data column that statistics describe: a leaf of the ``min_values`` struct.

    ``element`` is ``"list"``/``"map"`` when the path runs through a list or map: its bounds
    describe elements, not rows. ``has_nan_count``, ``ngram``, ``bloom`` and ``value_set`` say
    which optional statistics exist for it.
    """

    path: tuple[str, ...]
    type: pa.DataType
    element: str | None = None
    has_nan_count: bool = False
    ngram: bool = False
    bloom: bool = False
    value_set: bool = False

    @functools.cached_property
    def name(self) -> str:
        return ".".join(self.path)


def leaves(struct_type: pa.DataType, prefix: tuple[str, ...] = (), element: str | None = None
           ) -> Iterator[tuple[tuple[str, ...], pa.DataType, str | None]]:
    """Every leaf of a stats struct type, nested structs flattened: ``(path, type, element)``,
    where ``element`` is the kind (``"list"``/``"map"``) of the innermost element field on the
    path, or None when the leaf describes row values. The one walk of the stats structs.

    >>> t = pa.struct([("x", pa.int64()), ("st", pa.struct([("a", pa.string())])),
    ...                element_field("tags", pa.string())])
    >>> [(".".join(p), str(ty), kind) for p, ty, kind in leaves(t)]
    [('x', 'int64', None), ('st.a', 'string', None), ('tags', 'string', 'list')]
    """
    for field in struct_type:
        path = prefix + (field.name,)
        kind = field.metadata[ELEMENT_KEY].decode() if is_element_field(field) else element
        if pa.types.is_struct(field.type):
            yield from leaves(field.type, path, kind)
        else:
            yield path, field.type, kind


def struct_leaf(column: pa.Array | pa.ChunkedArray, path: tuple[str, ...]) -> pa.Array | None:
    """The leaf ``path`` of a stats struct column, with its own validity only (a null parent
    row is not applied); None when the struct lacks it.

    >>> col = pa.array([{"st": {"a": 1}}, {"st": {"a": None}}])
    >>> struct_leaf(col, ("st", "a")).to_pylist(), struct_leaf(col, ("b",))
    ([1, None], None)
    """
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    for name in path:
        index = array.type.get_field_index(name) if pa.types.is_struct(array.type) else -1
        if index < 0:
            return None
        array = array.field(index)
    return array


def with_struct_leaf(array: pa.StructArray, path: tuple[str, ...], values: pa.Array,
                     keep_nulls: bool = True) -> pa.StructArray:
    """``array`` with the leaf ``path`` set to ``values``, added (with the structs above it)
    where the struct lacks it. ``keep_nulls=False``: a row where a struct on the path is null
    becomes a row of null fields instead, so that the new leaf counts there too.

    >>> col = pa.array([{"a": 1}, None], pa.struct([("a", pa.int64())]))
    >>> with_struct_leaf(col, ("st", "b"), pa.array([0, 0])).to_pylist()
    [{'a': 1, 'st': {'b': 0}}, None]
    >>> with_struct_leaf(col, ("b",), pa.array([0, 0]), keep_nulls=False).to_pylist()
    [{'a': 1, 'b': 0}, {'a': None, 'b': 0}]
    """
    mask = array.is_null() if array.null_count and keep_nulls else None
    if array.null_count and not keep_nulls:
        children = array.flatten()  # the row's nulls carried into its fields
    else:
        children = [array.field(i) for i in range(array.type.num_fields)]
    fields = list(array.type)
    index = array.type.get_field_index(path[0])
    if len(path) > 1:
        inner = children[index] if index >= 0 else pa.array([{}] * len(array), pa.struct([]))
        values = with_struct_leaf(inner, path[1:], values, keep_nulls)
    field = pa.field(path[0], values.type, metadata=fields[index].metadata if index >= 0
                     else None)
    if index < 0:
        children.append(values)
        fields.append(field)
    else:
        children[index], fields[index] = values, field
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
