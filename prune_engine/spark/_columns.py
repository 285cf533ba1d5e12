"""Which statistics column a Spark column is, and whether the two hold values compared alike.

A Spark column (a name, or a struct field path) matches the statistics leaf with the same path
(exactly, else case-insensitively when that is unique: Spark resolves names without case by
default). A match is usable for pruning only when the Spark type and the statistics' Arrow type
hold the same values in the same order, so that comparing a literal with the raw statistics is
what Spark does on the rows:

==================  ==========================================  ==============================
Spark type          statistics (Arrow) types                    why they agree
==================  ==========================================  ==============================
byte .. long        any integer                                 Spark reads uint8..uint32 wider
decimal(p, s)       decimal, any integer                        uint64 reads as decimal(20, 0)
float / double      float32 / float64                           NaN = NaN, above +inf, -0 = 0
string              string, binary                              both ordered by UTF-8 bytes
binary              binary                                      unsigned bytes
boolean, date       bool, date32/date64
timestamp[_ntz]     timestamp (any unit and zone)               raw values: UTC instants for
                                                                timestamp, wall time for ntz
==================  ==========================================  ==============================

A string with a collation other than Spark's binary default, and every other type, matches
nothing: predicates on it are "unknown" and keep.

A partition column is what Spark reads from the directory name, whatever the file holds.
Statistics collected from footers record the folder values (``partition_values``) but
describe the file's own column when it has one of that name; then the two may differ, and
the column is usable only where every container's statistics are exactly its partition
value (min = max = value and no NULL, or all NULL for the Hive null). Statistics without
``partition_values`` for the name (e.g. from Spark's rows) describe the column as it is.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.compiler.bind import StatsSchema
from prune_engine.stats import layout
from prune_engine.stats.layout import ColumnInfo
from prune_engine.stats.table import StatsTable, as_stats_table

INTEGRAL = {"byte", "short", "integer", "long"}


def spark_type_name(spark_type) -> str:
    """The short name of a Spark type as Catalyst's JSON writes it (``"long"``,
    ``"decimal(10,2)"``, ``"struct"`` for a dict).

    >>> spark_type_name("decimal(10,2)"), spark_type_name({"type": "array"})
    ('decimal', 'array')
    """
    if isinstance(spark_type, dict):
        return spark_type.get("type", "")
    return spark_type.split("(", 1)[0]


def compatible(spark_type, arrow_type: pa.DataType) -> bool:
    """True when a Spark column of ``spark_type`` (Catalyst JSON form) and statistics of
    ``arrow_type`` hold the same values in the same order (the table above).

    >>> compatible("long", pa.uint32()), compatible("string", pa.int64())
    (True, False)
    >>> compatible("string collate UTF8_LCASE", pa.string())
    False
    """
    t = pa.types
    if not isinstance(spark_type, str):
        return False
    name = spark_type_name(spark_type)
    if name in INTEGRAL:
        return t.is_integer(arrow_type)
    if name == "decimal":
        return t.is_decimal(arrow_type) or t.is_integer(arrow_type)
    if name == "float":
        return t.is_float32(arrow_type)
    if name == "double":
        return t.is_float64(arrow_type)
    if spark_type == "string":
        return (t.is_string(arrow_type) or t.is_large_string(arrow_type)
                or t.is_binary(arrow_type) or t.is_large_binary(arrow_type))
    if name == "binary":
        return t.is_binary(arrow_type) or t.is_large_binary(arrow_type) or \
            t.is_fixed_size_binary(arrow_type)
    if name == "boolean":
        return t.is_boolean(arrow_type)
    if name == "date":
        return t.is_date32(arrow_type) or t.is_date64(arrow_type)
    if name in ("timestamp", "timestamp_ntz"):
        return t.is_timestamp(arrow_type)
    return False


class StatsColumns:
    """The leaves of a statistics table's ``min_values`` struct, looked up by Spark paths.

    >>> import pyarrow as pa
    >>> stats = pa.table({"container": ["a"], "num_records": [1],
    ...                   "min_values": [{"St": {"a": 1}}], "max_values": [{"St": {"a": 1}}]})
    >>> StatsColumns(stats).leaf(("st", "A")).path
    ('St', 'a')
    """

    def __init__(self, stats: StatsTable | pa.Table):
        self.stats = as_stats_table(stats)
        #: every described column: path -> ColumnInfo (path, Arrow type, ``element`` "list"
        #: or "map" when its statistics describe elements), as the engine binds them
        self.leaves: dict[tuple[str, ...], ColumnInfo] = StatsSchema(self.stats.schema).columns
        self._folded: dict[tuple[str, ...], list[ColumnInfo]] = {}
        for leaf in self.leaves.values():
            self._folded.setdefault(tuple(p.lower() for p in leaf.path), []).append(leaf)
        self._partition_ok: dict[str, bool] = {}

    def leaf(self, path: tuple[str, ...]) -> ColumnInfo | None:
        """The leaf at ``path``: exact, else the unique case-insensitive match, else None."""
        hit = self.leaves.get(tuple(path))
        if hit is not None:
            return hit
        matches = self._folded.get(tuple(p.lower() for p in path), [])
        return matches[0] if len(matches) == 1 else None

    def element(self, path: tuple[str, ...]) -> ColumnInfo | None:
        """The element statistics of the list column at ``path`` (``array_contains``)."""
        own = self.leaf(path)
        if own is not None:
            return own if own.element == "list" else None
        for name in ("element", "item"):
            leaf = self.leaf(tuple(path) + (name,))
            if leaf is not None and leaf.element == "list":
                return leaf
        return None

    def partition_exact(self, name: str) -> bool:
        """True when every container's statistics of ``name`` are exactly its partition value
        (so that Spark's partition column and the statistics agree); see the module doc."""
        if name not in self._partition_ok:
            self._partition_ok[name] = self._check_partition(name)
        return self._partition_ok[name]

    def _check_partition(self, name: str) -> bool:
        table = self.stats.table
        if layout.PARTITION_VALUES not in table.column_names:
            return True  # not from folders: the statistics describe the column itself
        parts = table.column(layout.PARTITION_VALUES).combine_chunks()
        if name not in [f.name for f in parts.type]:
            return True
        try:
            value = parts.field(name)
            lo = table.column(layout.MIN_VALUES).combine_chunks().field(name)
            hi = table.column(layout.MAX_VALUES).combine_chunks().field(name)
            nulls = table.column(layout.NULL_COUNT).combine_chunks().field(name)
            rows = table.column(layout.NUM_RECORDS).combine_chunks()
        except (KeyError, pa.ArrowException):
            return False
        if parts.null_count:  # a container without partition values: nothing to compare
            return False
        def true(a):
            return a.fill_null(False)

        no_bounds = pc.and_(lo.is_null(), hi.is_null())
        nulls_unknown = nulls.is_null()
        # a value: min = max = value, no NULL (or NULLs unknown)
        exact_value = pc.and_(true(pc.and_(pc.equal(lo, value), pc.equal(hi, value))),
                              pc.or_(nulls_unknown, true(pc.equal(nulls, 0))))
        # the Hive null: no bounds, all NULL (or unknown)
        exact_null = pc.and_(no_bounds, pc.or_(nulls_unknown, true(pc.equal(nulls, rows))))
        unknown = pc.and_(no_bounds, nulls_unknown)  # nothing known: the container is kept
        ok = pc.or_(pc.if_else(value.is_valid(), exact_value, exact_null), unknown)
        return bool(np.all(ok.to_numpy(zero_copy_only=False)))
