"""Peer implementations of the pruning keep-mask, to time ``pe.prune`` against.

A benchmark predicate is a small tree (:class:`Cmp`, :class:`In`, :class:`Prefix`, :class:`All`,
:class:`Any_`), kept apart from prune_engine's own expression nodes so that the peers share no
code with the engine they check. Every peer computes the same sound keep-mask (True = keep) with
the min/max rewrite of DataFusion's ``PruningPredicate``, written once in :func:`keep`::

    keep(atom)  = NOT coalesce(null_count = num_records, FALSE)     -- all-null prunes
                  AND coalesce(may_match(atom), TRUE)               -- unknown keeps
    may_match(x = v)        = x_min <= v AND v <= x_max
    may_match(x != v)       = x_min != v OR x_max != v
    may_match(x < v)        = x_min < v        (<=, >, >= alike)
    may_match(x IN (v...))  = OR over v of (x_min <= v AND v <= x_max)
    may_match(x NOT IN (v...)) = AND over v of (x_min != v OR x_max != v)
    may_match(x LIKE 'p%')  = x_min < succ(p) AND x_max >= p
    may_match(x NOT LIKE 'p%') = x_min < p OR x_max >= succ(p)
    float x, op in > >= !=  : ... OR nan_count != 0   (NaN sorts above +inf, NaN != v)
    keep(a AND b) = keep(a) AND keep(b);  keep(a OR b) = keep(a) OR keep(b)

Each engine supplies the handful of operations the rewrite needs (an "ops" object) and keeps its
native form: DuckDB and DataFusion get SQL text, pyarrow eager arrays, Polars expressions, the
Python loop closures over one row, and the numpy floor arrays prepared with their nulls filled
by values that keep (min -> lowest, max -> highest, counts -> "not all null"), so that it needs
no validity handling, and strings replaced by their ranks among the column's bounds and the
literals. PyIceberg is driven through its own expressions (:class:`IcebergPeer`).

A peer is built once per (table, predicate) outside any timed region; calling it computes the
mask and returns it in the engine's native type; :func:`to_numpy` turns any of them into a numpy
bool array for comparison.

>>> import pyarrow as pa
>>> t = pa.table({"container": ["a", "b"], "num_records": [10, 10],
...               "min_values": [{"x": 0}, {"x": 6}], "max_values": [{"x": 4}, {"x": 9}],
...               "null_count": [{"x": 0}, {"x": 10}]})
>>> p = Cmp("x", ">", 2)
>>> p.sql()
'x > 2'
>>> [to_numpy(PEERS[name](t, p)()).tolist() for name in ("pyarrow", "duckdb", "floor")]
[[True, False], [True, False], [True, False]]
"""

from __future__ import annotations

import abc

import bisect
import datetime as dt
import os
from dataclasses import dataclass
from functools import reduce
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.expr.like import successor
from prune_engine.stats.layout import MAX_VALUES, MIN_VALUES, NAN_COUNT, NULL_COUNT, NUM_RECORDS

# one thread for every engine, as pe.prune uses one core (a like-for-like comparison); this must
# be set before Polars is first imported
os.environ.setdefault("POLARS_MAX_THREADS", "1")


# -- the predicate tree ------------------------------------------------------------------------

class Pred(abc.ABC):
    """Base of the benchmark predicate nodes; ``sql()`` renders the text given to pe.prune."""

    @abc.abstractmethod
    def sql(self) -> str:
        """The predicate as SQL text."""


@dataclass(frozen=True)
class Cmp(Pred):
    """``column op value`` with ``op`` one of ``= != < <= > >=``."""

    column: str
    op: str
    value: Any

    def sql(self) -> str:
        return f"{self.column} {self.op} {sql_literal(self.value)}"


@dataclass(frozen=True)
class In(Pred):
    """``column IN (values...)``, or ``NOT IN`` when ``negated``."""

    column: str
    values: tuple
    negated: bool = False

    def sql(self) -> str:
        op = "NOT IN" if self.negated else "IN"
        return f"{self.column} {op} ({', '.join(sql_literal(v) for v in self.values)})"


@dataclass(frozen=True)
class Prefix(Pred):
    """``column LIKE 'prefix%'`` (the prefix holds no wildcard), or ``NOT LIKE`` when
    ``negated``."""

    column: str
    prefix: str
    negated: bool = False

    def sql(self) -> str:
        op = "NOT LIKE" if self.negated else "LIKE"
        return f"{self.column} {op} {sql_literal(self.prefix + '%')}"


@dataclass(frozen=True)
class All(Pred):
    """Conjunction of its arguments."""

    args: tuple[Pred, ...]

    def sql(self) -> str:
        return " AND ".join(f"({a.sql()})" if isinstance(a, Any_) else a.sql() for a in self.args)


@dataclass(frozen=True)
class Any_(Pred):
    """Disjunction of its arguments."""

    args: tuple[Pred, ...]

    def sql(self) -> str:
        return " OR ".join(f"({a.sql()})" for a in self.args)


def sql_literal(value) -> str:
    """SQL text of a literal, as both pe.prune and DuckDB read it.

    >>> sql_literal("it's"), sql_literal(True), sql_literal(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
    ("'it''s'", 'TRUE', "TIMESTAMPTZ '2024-01-01 00:00:00+00:00'")
    >>> sql_literal(0.25), sql_literal(1e300)
    ('0.25e0', '1e+300')
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMPTZ '{value.isoformat(sep=' ')}'"
    if isinstance(value, float):  # an exponent makes it a DOUBLE (DuckDB 1.x reads 0.5 as DECIMAL)
        text = repr(value)
        return text if "e" in text else text + "e0"
    if isinstance(value, int):
        return repr(value)
    raise TypeError(f"no SQL literal for {type(value).__name__}")


# -- the rewrite, written once over an engine's ops ------------------------------------------

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
_NAN_MAY_MATCH = {">", ">=", "!="}  # ops that a NaN row satisfies (NaN sorts above +inf)


def keep(pred: Pred, ops, _has_values: dict | None = None) -> Any:
    """The keep-mask of ``pred`` in the engine of ``ops`` (no nulls: unknown already kept).
    The "not all null" test of a column is built once per call, however often it is named."""
    has_values = {} if _has_values is None else _has_values
    if isinstance(pred, (All, Any_)):
        combine = ops.and_ if isinstance(pred, All) else ops.or_
        return reduce(combine, (keep(a, ops, has_values) for a in pred.args))
    if pred.column not in has_values:
        nulls = ops.stat(NULL_COUNT, pred.column)
        has_values[pred.column] = ops.not_(ops.fill(ops.cmp("=", nulls, ops.num_records()), False))
    return ops.and_(has_values[pred.column], ops.fill(may_match(pred, ops), True))


def may_match(pred: Pred, ops) -> Any:
    """Three-valued "some row may satisfy ``pred``" from the bounds (null = unknown)."""
    lo, hi = ops.stat(MIN_VALUES, pred.column), ops.stat(MAX_VALUES, pred.column)
    if isinstance(pred, In) and not pred.negated:
        return ops.any_in_range(lo, hi, pred.values, pred.column)
    if isinstance(pred, In):
        return reduce(ops.and_, (ops.or_(ops.cmp("!=", lo, v), ops.cmp("!=", hi, v))
                                 for v in (ops.lit(x, pred.column) for x in pred.values)))
    if isinstance(pred, Prefix):
        upper = successor(pred.prefix)
        if upper is None:
            raise ValueError(f"the prefix {pred.prefix!r} has no successor")
        p, succ = ops.lit(pred.prefix, pred.column), ops.lit(upper, pred.column)
        if pred.negated:
            return ops.or_(ops.cmp("<", lo, p), ops.cmp(">=", hi, succ))
        return ops.and_(ops.cmp("<", lo, succ), ops.cmp(">=", hi, p))
    if not isinstance(pred, Cmp):
        raise TypeError(f"not a benchmark predicate: {pred!r}")
    v = ops.lit(pred.value, pred.column)
    if pred.op == "=":
        test = ops.and_(ops.cmp("<=", lo, v), ops.cmp(">=", hi, v))
    elif pred.op == "!=":
        test = ops.or_(ops.cmp("!=", lo, v), ops.cmp("!=", hi, v))
    elif pred.op in ("<", "<="):
        test = ops.cmp(pred.op, lo, v)
    else:
        test = ops.cmp(pred.op, hi, v)
    if pred.op in _NAN_MAY_MATCH and ops.is_float(pred.column):
        test = ops.or_(test, ops.cmp("!=", ops.stat(NAN_COUNT, pred.column), ops.lit(0, None)))
    return test


def _or_ranges(ops, lo, hi, values, column):
    """The plain IN rewrite: one range test per value, OR-ed (Kleene)."""
    tests = [ops.and_(ops.cmp("<=", lo, v), ops.cmp(">=", hi, v))
             for v in (ops.lit(x, column) for x in values)]
    while len(tests) > 1:  # balanced, so that no engine builds a 1000-deep tree
        tests = [ops.or_(*tests[i:i + 2]) if i + 1 < len(tests) else tests[i]
                 for i in range(0, len(tests), 2)]
    return tests[0]


class _Ops:
    """Shared part of the engines' ops: the stats schema, literal caching and the IN rewrite.

    Engines implement ``make_lit``; :meth:`lit` converts each literal once, so that repeated
    calls (the timed ones) do not pay for the conversion of constants.
    """

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self._consts: dict = {}

    def lit(self, value, column):
        return self.const((type(value), value, column), lambda: self.make_lit(value, column))

    def const(self, key, make):
        """``make()`` once per ``key``: constants are prepared, not timed."""
        if key not in self._consts:
            self._consts[key] = make()
        return self._consts[key]

    def data_type(self, column: str) -> pa.DataType:
        return self.schema.field(MIN_VALUES).type.field(column).type

    def is_float(self, column: str) -> bool:
        return pa.types.is_floating(self.data_type(column))

    any_in_range = _or_ranges


# -- DuckDB: SQL text over the registered Arrow table ----------------------------------------

class _SqlOps(_Ops):
    def stat(self, struct, column):
        return f'"{struct}"."{column}"'

    def num_records(self):
        return f'"{NUM_RECORDS}"'

    def make_lit(self, value, column):
        return sql_literal(value)

    def cmp(self, op, a, b):
        return f"({a} {op} {b})"

    def and_(self, a, b):
        return f"({a} AND {b})"

    def or_(self, a, b):
        return f"({a} OR {b})"

    def not_(self, a):
        return f"(NOT {a})"

    def fill(self, a, value):
        return f"COALESCE({a}, {sql_literal(value)})"


def duckdb_sql(pred: Pred, schema: pa.Schema, table_name: str = "stats") -> str:
    """The DuckDB query computing the keep-mask of ``pred`` over ``table_name``."""
    return f"SELECT {keep(pred, _SqlOps(schema))} AS keep FROM {table_name}"


def duckdb_peer(table: pa.Table, pred: Pred) -> Callable[[], pa.Table]:
    """DuckDB (one thread) evaluating the rewrite in SQL over the same Arrow table."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.register("stats", table)
    sql = duckdb_sql(pred, table.schema)
    return lambda: con.sql(sql).to_arrow_table()


# -- DataFusion: the same SQL rewrite, in its dialect, over the same Arrow table ---------------

class _DataFusionOps(_SqlOps):
    """DataFusion reads a struct field as ``"struct"['field']`` and a zoned timestamp literal
    as ``TIMESTAMP '... +00:00'``; the rest of the SQL is DuckDB's."""

    def stat(self, struct, column):
        return f"\"{struct}\"['{column}']"

    def make_lit(self, value, column):
        if isinstance(value, dt.datetime):
            return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
        return sql_literal(value)


def datafusion_sql(pred: Pred, schema: pa.Schema, table_name: str = "stats") -> str:
    """The DataFusion query computing the keep-mask of ``pred`` over ``table_name``.

    >>> import pyarrow as pa
    >>> schema = pa.schema([("min_values", pa.struct([("x", pa.int64())]))])
    >>> print(datafusion_sql(Cmp("x", "<", 3), schema))
    SELECT ((NOT COALESCE(("null_count"['x'] = "num_records"), FALSE)) AND COALESCE(("min_values"['x'] < 3), TRUE)) AS keep FROM stats
    """
    return f"SELECT {keep(pred, _DataFusionOps(schema))} AS keep FROM {table_name}"


def datafusion_peer(table: pa.Table, pred: Pred) -> Callable[[], pa.Table]:
    """DataFusion's Python bindings evaluating the rewrite in SQL over the same Arrow table,
    registered as record batches in one partition (``target_partitions = 1``: one thread).
    Like DuckDB's, the timed call goes from the SQL text to the mask (parse, plan, run).

    DataFusion's ``get_field`` (up to apache/datafusion#25122) returns a child's value where
    the struct itself is null, which would read a whole unknown ``max_values`` as known bounds
    and prune unsoundly; the table is therefore registered with each struct's nulls pushed
    into its children (:func:`push_struct_nulls`, same meaning, prepared outside the timing)."""
    from datafusion import SessionConfig, SessionContext

    ctx = SessionContext(SessionConfig().with_target_partitions(1))
    ctx.register_record_batches("stats", [push_struct_nulls(table).to_batches()])
    sql = datafusion_sql(pred, table.schema)
    return lambda: ctx.sql(sql).to_arrow_table()


def push_struct_nulls(table: pa.Table) -> pa.Table:
    """``table`` with every top-level struct's null rows also null in each of its children
    (what ``StructArray.flatten`` gives), for readers that ignore a struct's own validity.

    >>> t = pa.table({"s": pa.StructArray.from_arrays([pa.array([1, 2])], ["x"],
    ...                                               mask=pa.array([False, True]))})
    >>> [x.column("s").chunk(0).field("x").to_pylist() for x in (t, push_struct_nulls(t))]
    [[1, 2], [1, None]]
    """
    columns = []
    for column in table.columns:
        if pa.types.is_struct(column.type) and column.null_count:
            column = pa.chunked_array([
                pa.StructArray.from_arrays(chunk.flatten(), fields=list(chunk.type),
                                           mask=chunk.is_null())
                for chunk in column.chunks], column.type)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=table.schema)


# -- unfused pyarrow.compute ---------------------------------------------------------------

_PC_CMP = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
           ">": pc.greater, ">=": pc.greater_equal}


class _ArrowOps(_Ops):
    def __init__(self, table: pa.Table):
        super().__init__(table.schema)
        self.table = table

    def stat(self, struct, column):
        if struct not in self.table.column_names or \
                self.table.schema.field(struct).type.get_field_index(column) < 0:
            return pa.nulls(self.table.num_rows, pa.int64())  # e.g. no nan_count: unknown
        return pc.struct_field(self.table.column(struct), column)

    def num_records(self):
        return self.table.column(NUM_RECORDS)

    def make_lit(self, value, column):
        return pa.scalar(value, self.data_type(column) if column else pa.int64())

    def cmp(self, op, a, b):
        return _PC_CMP[op](a, b)

    def and_(self, a, b):
        return pc.and_kleene(a, b)

    def or_(self, a, b):
        return pc.or_kleene(a, b)

    def not_(self, a):
        return pc.invert(a)

    def fill(self, a, value):
        return pc.fill_null(a, value)


def pyarrow_peer(table: pa.Table, pred: Pred) -> Callable[[], pa.ChunkedArray]:
    """The rewrite as unfused ``pyarrow.compute`` calls (struct_field, compare, fill_null, and/or)."""
    ops = _ArrowOps(table)
    return lambda: keep(pred, ops)


# -- Polars over the same Arrow table --------------------------------------------------------

class _PolarsOps(_Ops):
    def __init__(self, schema):
        super().__init__(schema)
        import polars as pl

        self.pl = pl

    def stat(self, struct, column):
        return self.pl.col(struct).struct.field(column)

    def num_records(self):
        return self.pl.col(NUM_RECORDS)

    def make_lit(self, value, column):
        return self.pl.lit(value)

    def cmp(self, op, a, b):
        return {"=": a.__eq__, "!=": a.__ne__, "<": a.__lt__, "<=": a.__le__,
                ">": a.__gt__, ">=": a.__ge__}[op](b)

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def not_(self, a):
        return ~a

    def fill(self, a, value):
        return a.fill_null(value)


def polars_peer(table: pa.Table, pred: Pred):
    """Polars (one thread) evaluating the rewrite over ``pl.from_arrow`` of the same table."""
    import polars as pl

    frame = pl.from_arrow(table)
    expr = keep(pred, _PolarsOps(table.schema)).alias("keep")
    return lambda: frame.select(expr).to_series()


# -- plain Python loop over to_pylist() rows -------------------------------------------------

_PY_CMP = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class _PythonOps(_Ops):
    """Closures over one row (a dict); ``None`` is unknown (SQL NULL)."""

    def stat(self, struct, column):
        def get(row):
            values = row.get(struct)
            return None if values is None else values[column]
        return get

    def num_records(self):
        return lambda row: row[NUM_RECORDS]

    def make_lit(self, value, column):
        return lambda row: value

    def cmp(self, op, a, b):
        f = _PY_CMP[op]

        def test(row):
            x, y = a(row), b(row)
            return None if x is None or y is None else f(x, y)
        return test

    def and_(self, a, b):
        def both(row):
            x = a(row)
            if x is False:
                return False
            y = b(row)
            return False if y is False else (None if x is None or y is None else True)
        return both

    def or_(self, a, b):
        def either(row):
            x = a(row)
            if x is True:
                return True
            y = b(row)
            return True if y is True else (None if x is None or y is None else False)
        return either

    def not_(self, a):
        return lambda row: None if (x := a(row)) is None else not x

    def fill(self, a, value):
        return lambda row: value if (x := a(row)) is None else x

    def any_in_range(self, lo, hi, values, column):
        ordered = sorted(values)

        def hit(row):  # Kleene OR over v of (low <= v AND v <= high), by binary search
            low, high = lo(row), hi(row)
            i = 0 if low is None else bisect.bisect_left(ordered, low)
            if i == len(ordered) or (high is not None and ordered[i] > high):
                return False
            return None if low is None or high is None else True
        return hit


def python_peer(table: pa.Table, pred: Pred, rows: list[dict] | None = None):
    """A plain per-container Python loop over ``table.to_pylist()`` rows (converted once)."""
    rows = table.to_pylist() if rows is None else rows
    test = keep(pred, _PythonOps(table.schema))
    return lambda: [test(row) for row in rows]


# -- the floor: one numpy pass, nulls filled ahead of time -----------------------------------

_NP_CMP = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
           ">": np.greater, ">=": np.greater_equal}


class _NumpyOps(_Ops):
    """Plain numpy arrays, prepared outside the timed region with nulls filled by values that
    make the rewrite keep (so no validity handling is timed: a lower bound for any engine).
    Timestamps become int64 microseconds, booleans int8, strings their ranks among the column's
    bounds and the predicate's literals (:class:`StringRanks`): every comparison is a plain
    numeric one.
    The stand-ins for unknown bounds lie beyond every value of the type, so that even
    ``b > TRUE`` keeps an unknown max."""

    def __init__(self, table: pa.Table, pred: Pred):
        super().__init__(table.schema)
        self.arrays: dict[tuple[str, str], np.ndarray] = {}
        self.nr = table.column(NUM_RECORDS).to_numpy()
        arrow = _ArrowOps(table)
        self.ranks: dict[str, StringRanks] = {}
        for column in columns_of(pred):
            typ = self.data_type(column)
            if pa.types.is_string(typ):
                self.ranks[column] = StringRanks(
                    [arrow.stat(MIN_VALUES, column), arrow.stat(MAX_VALUES, column)],
                    _literals(pred, column))
            lowest, highest = _extremes(typ)
            fills = {MIN_VALUES: lowest, MAX_VALUES: highest, NULL_COUNT: 0}
            if pa.types.is_floating(typ):
                fills[NAN_COUNT] = 1  # unknown NaN count: "may hold NaN"
            for struct, fill in fills.items():
                leaf = arrow.stat(struct, column)
                if struct in (MIN_VALUES, MAX_VALUES):
                    leaf = self.ranks[column].of(leaf) if column in self.ranks else _numpy_values(leaf, typ)
                else:
                    leaf = pc.fill_null(leaf, 0).to_numpy()
                unknown = np.asarray(arrow.stat(struct, column).is_null())
                self.arrays[struct, column] = np.where(unknown, fill, leaf).astype(leaf.dtype)

    def stat(self, struct, column):
        return self.arrays[struct, column]

    def num_records(self):
        return self.nr

    def make_lit(self, value, column):
        if column is None:
            return value
        if column in self.ranks:
            return self._literals([value], column)[0]
        return _numpy_scalar(value, self.data_type(column))

    def _literals(self, values, column) -> np.ndarray:
        """Literals of ``column`` in the floor's domain; strings ranked in one call (a
        ``StringRanks.of`` call hashes every bound of the column once)."""
        if column in self.ranks:
            return self.ranks[column].of(pa.array(list(values), pa.string()))
        return np.array([_numpy_scalar(v, self.data_type(column)) for v in values])

    def cmp(self, op, a, b):
        return _NP_CMP[op](a, b)

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def not_(self, a):
        return ~a

    def fill(self, a, value):
        return a

    def any_in_range(self, lo, hi, values, column):
        ordered = self.const(("in", column, values), lambda: np.sort(self._literals(values, column)))
        i = np.searchsorted(ordered, lo)
        return (i < len(ordered)) & (ordered[np.minimum(i, len(ordered) - 1)] <= hi)


def columns_of(pred: Pred) -> list[str]:
    """The columns ``pred`` tests, sorted."""
    if isinstance(pred, (All, Any_)):
        return sorted({c for a in pred.args for c in columns_of(a)})
    return [pred.column]


def _extremes(typ: pa.DataType):
    """(lowest, highest) stand-ins, in the floor's numpy domain, for an unknown min and max."""
    if pa.types.is_floating(typ):
        return -np.inf, np.inf
    if pa.types.is_boolean(typ):  # int8 0/1 (see _numpy_values): -1 and 2 lie outside
        return -1, 2
    if pa.types.is_string(typ):
        return np.uint64(0), np.uint64(np.iinfo(np.uint64).max)
    if pa.types.is_timestamp(typ) or pa.types.is_integer(typ):
        return np.iinfo(np.int64).min, np.iinfo(np.int64).max
    raise TypeError(f"the floor does not handle {typ}")


def _literals(pred: Pred, column: str) -> list[str]:
    """Every string literal of ``pred`` that meets ``column`` (with the prefixes' successors)."""
    if isinstance(pred, (All, Any_)):
        return [v for a in pred.args for v in _literals(a, column)]
    if pred.column != column:
        return []
    if isinstance(pred, In):
        return list(pred.values)
    if isinstance(pred, Prefix):
        return [pred.prefix, successor(pred.prefix)]
    return [pred.value]


class StringRanks:
    """Order-preserving uint64 ranks of strings (byte order) among a fixed set: ``1`` for the
    smallest of them, and so on; null and the strings outside the set have no rank (0).

    >>> r = StringRanks([pa.array(["b", "ab", None])], ["https://x/1", "abc"])
    >>> r.of(pa.array(["ab", "abc", "b", "https://x/1", None])).tolist()
    [1, 2, 3, 4, 0]
    """

    def __init__(self, arrays: list, literals: list[str]):
        strings = [pa.chunked_array([a]) if isinstance(a, pa.Array) else a for a in arrays]
        values = pa.chunked_array([c for a in strings for c in a.chunks] + [pa.array(literals, pa.string())],
                                  pa.string())
        distinct = pc.unique(values.combine_chunks().drop_null())
        self.sorted = distinct.take(pc.sort_indices(distinct))

    def of(self, strings) -> np.ndarray:
        index = pc.index_in(strings, value_set=self.sorted)
        return np.asarray(pc.fill_null(pc.add(index, 1), 0).cast(pa.uint64()).to_numpy(zero_copy_only=False))


def _numpy_values(leaf, typ: pa.DataType) -> np.ndarray:
    """Bounds as a numpy array in the floor's domain (the values under nulls are arbitrary)."""
    if pa.types.is_timestamp(typ) or pa.types.is_boolean(typ):
        leaf = pc.cast(leaf, pa.int8() if pa.types.is_boolean(typ) else pa.int64())
    return np.asarray(pc.fill_null(leaf, pa.scalar(0).cast(leaf.type)).to_numpy())


def _numpy_scalar(value, typ: pa.DataType):
    if pa.types.is_timestamp(typ):
        return np.int64(pa.scalar(value, typ).cast(pa.int64()).as_py())
    if pa.types.is_boolean(typ):
        return np.int8(value)
    return value


def floor_peer(table: pa.Table, pred: Pred) -> Callable[[], np.ndarray]:
    """The floor: one numpy pass over the stats columns ``pred`` touches, prepared outside the
    timed region (e.g. ``x > 5`` is ``(max_x > 5) & ~(null_count_x == num_records)``)."""
    ops = _NumpyOps(table, pred)
    return lambda: keep(pred, ops)


# -- PyIceberg's InclusiveMetricsEvaluator, one DataFile per container -----------------------

class IcebergPeer:
    """PyIceberg's ``_InclusiveMetricsEvaluator`` over one ``DataFile`` per container.

    The float ``>``/``>=``/``!=`` tests are given as ``... OR is_nan(x)`` so that NaN follows
    our semantics (NaN sorts above +inf). Knowingly less precise than the rewrite above:
    ``IN`` with more than 200 values, ``NOT IN`` and ``!=`` always keep (PyIceberg's own choices).
    """

    def __init__(self, table: pa.Table, pred: Pred, files: list | None = None):
        from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator

        self.schema = _iceberg_schema(table.schema)
        self.files = iceberg_files(table) if files is None else files
        self.evaluator = _InclusiveMetricsEvaluator(self.schema, _iceberg_expr(pred, table.schema))

    def __call__(self) -> list[bool]:
        return [self.evaluator.eval(f) for f in self.files]


def iceberg_peer(table: pa.Table, pred: Pred, files: list | None = None) -> IcebergPeer:
    """See :class:`IcebergPeer`; ``files`` from :func:`iceberg_files` saves rebuilding them."""
    return IcebergPeer(table, pred, files)


def _iceberg_schema(schema: pa.Schema):
    from pyiceberg.schema import Schema
    from pyiceberg.types import (BooleanType, DoubleType, LongType, NestedField, StringType,
                                 TimestamptzType, TimestampType)

    def convert(typ):
        if pa.types.is_timestamp(typ):
            return TimestamptzType() if typ.tz else TimestampType()
        for test, iceberg in ((pa.types.is_integer, LongType), (pa.types.is_floating, DoubleType),
                              (pa.types.is_string, StringType), (pa.types.is_boolean, BooleanType)):
            if test(typ):
                return iceberg()
        raise TypeError(f"no Iceberg type for {typ}")

    fields = [NestedField(i + 1, f.name, convert(f.type), required=False)
              for i, f in enumerate(schema.field(MIN_VALUES).type)]
    return Schema(*fields)


def iceberg_files(table: pa.Table) -> list:
    """One PyIceberg ``DataFile`` per container, with the table's bounds and counts (slow: do
    it once per table)."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    fields = [(f.field_id, f.name, f.field_type) for f in _iceberg_schema(table.schema).fields]
    files = []
    for row in table.to_pylist():
        lows, highs = row[MIN_VALUES] or {}, row[MAX_VALUES] or {}
        nulls, nans = row[NULL_COUNT] or {}, row.get(NAN_COUNT) or {}
        n = row[NUM_RECORDS]
        files.append(DataFile.from_args(
            content=DataFileContent.DATA, file_path=row["container"], file_format=FileFormat.PARQUET,
            partition=Record(), record_count=n, file_size_in_bytes=1,
            value_counts={fid: n for fid, _, _ in fields},
            null_value_counts={fid: nulls[name] for fid, name, _ in fields
                               if nulls.get(name) is not None},
            nan_value_counts={fid: nans[name] for fid, name, _ in fields if nans.get(name) is not None},
            lower_bounds={fid: to_bytes(t, _iceberg_value(lows[name])) for fid, name, t in fields
                          if lows.get(name) is not None},
            upper_bounds={fid: to_bytes(t, _iceberg_value(highs[name])) for fid, name, t in fields
                          if highs.get(name) is not None},
        ))
    return files


def _iceberg_value(value):
    if isinstance(value, dt.datetime):  # Iceberg stores timestamps as microseconds
        return round(value.timestamp() * 1_000_000)
    return value


def _iceberg_expr(pred: Pred, schema: pa.Schema):
    from pyiceberg import expressions as ie

    if isinstance(pred, All):
        return ie.And(*(_iceberg_expr(a, schema) for a in pred.args))
    if isinstance(pred, Any_):
        return ie.Or(*(_iceberg_expr(a, schema) for a in pred.args))
    if isinstance(pred, In):
        return (ie.NotIn if pred.negated else ie.In)(pred.column, set(pred.values))
    if isinstance(pred, Prefix):
        return (ie.NotStartsWith if pred.negated else ie.StartsWith)(pred.column, pred.prefix)
    make = {"=": ie.EqualTo, "!=": ie.NotEqualTo, "<": ie.LessThan, "<=": ie.LessThanOrEqual,
            ">": ie.GreaterThan, ">=": ie.GreaterThanOrEqual}[pred.op]
    expr = make(pred.column, _iceberg_value(pred.value))
    typ = schema.field(MIN_VALUES).type.field(pred.column).type
    if pred.op in _NAN_MAY_MATCH and pa.types.is_floating(typ):
        expr = ie.Or(expr, ie.IsNaN(pred.column))
    return expr


# -- registry ------------------------------------------------------------------------------

#: every peer by name: ``PEERS[name](table, pred)`` -> a callable computing the keep-mask
PEERS: dict[str, Callable] = {
    "floor": floor_peer,
    "duckdb": duckdb_peer,
    "datafusion": datafusion_peer,
    "pyarrow": pyarrow_peer,
    "polars": polars_peer,
    "pyiceberg": iceberg_peer,
    "python": python_peer,
}


#: peers too slow to run on more containers than this (minutes per call at 1M)
MAX_CONTAINERS: dict[str, int] = {"pyiceberg": 100_000, "python": 100_000}


def knowingly_less_precise(peer: str, pred: Pred) -> bool:
    """True where ``peer`` keeps more containers than the rewrite by its own design: PyIceberg
    keeps on ``!=``, on ``NOT IN`` and on ``IN`` with more than 200 values (its
    ``IN_PREDICATE_LIMIT``).

    >>> knowingly_less_precise("pyiceberg", In("x", tuple(range(300)))), knowingly_less_precise("duckdb", Cmp("x", "!=", 1))
    (True, False)
    """
    if peer != "pyiceberg":
        return False
    if isinstance(pred, (All, Any_)):
        return any(knowingly_less_precise(peer, a) for a in pred.args)
    return (isinstance(pred, In) and (pred.negated or len(pred.values) > 200)) or \
        (isinstance(pred, Cmp) and pred.op == "!=")


def to_numpy(mask) -> np.ndarray:
    """Any peer's (or pe.prune's) mask as a numpy bool array; a null would be a bug here."""
    if isinstance(mask, pa.Table):
        mask = mask.column(0)
    if hasattr(mask, "to_arrow") and not isinstance(mask, (pa.Array, pa.ChunkedArray)):
        mask = mask.to_arrow()  # Polars Series
    if isinstance(mask, (pa.Array, pa.ChunkedArray)):
        if mask.null_count:
            raise ValueError("a keep-mask holds nulls")
        return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    out = np.asarray(mask)
    if out.dtype != bool:
        raise ValueError(f"a keep-mask must be booleans, not {out.dtype}")
    return out
