"""Join-driven pruning: the small side's join keys prune the big side's files before the join.

Hive's map-join partition pruning (HIVE-5119), extended as its design suggests: the key set
of the small (dimension) side is pushed onto the big (fact) side's *non-partition* columns as
well, tested against each fact container's min/max bounds, partition values and indexes:

1. the distinct non-NULL keys of the (filtered) dimension side are collected, one Spark job
   per key column (NULL never joins);
2. while a column has at most ``max_keys`` distinct keys they become an exact
   ``fact_col IN (keys)`` (a sorted-set test per container; n-gram indexes of string
   columns are probed too); above that, ``fact_col BETWEEN min AND max`` of the keys and,
   for integer and date keys, a Bloom filter built by the executors and probed over each
   container's range (:mod:`._bloom`);
3. multi-column keys prune column by column (a fact row joins only when each of its key
   columns holds a key of that column); the fact files proven to hold no joining row are
   excluded as in :func:`~prune_engine.spark._read` and Spark joins the rest.

The result equals the plain Spark join of the whole fact source. Only joins in which a fact
row without a partner contributes nothing are pruned: ``inner`` (and ``cross`` with this
condition), ``left_semi`` and ``right_outer`` (fact on the left). Joins that must keep every
fact row (``left_outer``, ``full_outer``, ``left_anti``) are run without pruning. A key
column pair whose types Spark compares through a cast that changes values (a string against
a number, a date against a timestamp) is not used for pruning.
"""

from __future__ import annotations

import functools
import operator
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from prune_engine.expr import nodes as n
from prune_engine.spark._arrow import to_arrow
from prune_engine.spark._bloom import MAX_SPAN, KeyBloom, as_int64
from prune_engine.spark._condition import condition_pairs, is_column
from prune_engine.spark._columns import INTEGRAL, StatsColumns, compatible, spark_type_name
from prune_engine.spark._jobs import job_description
from prune_engine.spark._session import functions
from prune_engine.spark._workers import check_workers
from prune_engine.stats import layout

#: join types whose result holds no fact row without a partner (the fact side is on the left)
PRUNABLE = {"inner", "cross", "semi", "leftsemi", "right", "rightouter"}
JOIN_TYPES = PRUNABLE | {"outer", "full", "fullouter", "left", "leftouter", "anti", "leftanti"}
_NUMERIC = INTEGRAL | {"decimal", "float", "double"}
_BLOOM_TYPES = INTEGRAL | {"date"}


@dataclass
class JoinKeys:
    """What the dimension's keys say about the fact side.

    ``expr``: an engine predicate over the fact columns (pass it to ``pe.prune``,
    ``pe.explain``, :func:`prune_dataframe`), the AND of ``tests`` (one per fact column);
    ``blooms``: per fact column path, the Bloom filter of keys too many for an ``IN``;
    ``info``: per fact column, how its keys are tested (``{"test": "in", "keys": 412}``,
    ``{"test": "range+bloom", ...}``, or ``{"test": "none", "why": ...}``); ``seconds``: time
    spent collecting the keys.
    """

    tests: dict[str, n.Expr] = field(default_factory=dict)
    blooms: dict[tuple[str, ...], KeyBloom] = field(default_factory=dict)
    info: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def expr(self) -> n.Expr:
        parts = tuple(self.tests.values())
        return parts[0] if len(parts) == 1 else (n.And(parts) if parts else n.TRUE)

    def drop(self, fact_col: str, why: str) -> None:
        """Do not prune on ``fact_col`` (``why`` goes to ``info``)."""
        self.tests.pop(fact_col, None)
        self.blooms.pop(tuple(fact_col.split(".")), None)
        self.info[fact_col] = {"test": "none", "why": why}

    def bloom_keep(self, stats) -> np.ndarray | None:
        """Per container of ``stats``: may a Bloom-filtered key lie in its range (None when
        there is no Bloom filter)."""
        from prune_engine.stats.table import as_stats_table

        if not self.blooms:
            return None
        table = as_stats_table(stats).table
        keep = np.ones(table.num_rows, dtype=bool)
        for path, bloom in self.blooms.items():
            leaf = StatsColumns(table).leaf(path)
            if leaf is None or not (pa.types.is_signed_integer(leaf.type)
                                    or pa.types.is_date32(leaf.type)):
                continue
            lo = _field(table, layout.MIN_VALUES, leaf.path)
            hi = _field(table, layout.MAX_VALUES, leaf.path)
            known = np.asarray(lo.is_valid()) & np.asarray(hi.is_valid())
            lo_v, hi_v = (np.where(known, _int64(a), 0) for a in (lo, hi))
            keep &= bloom.any_in_ranges(lo_v, hi_v, known)
        return keep


def _field(table: pa.Table, struct: str, path: tuple[str, ...]) -> pa.Array:
    array = table.column(struct).combine_chunks()
    for p in path:
        array = array.field(p)
    return array


def _int64(array: pa.Array) -> np.ndarray:
    if pa.types.is_date32(array.type):
        array = array.cast(pa.int32())
    return np.asarray(array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))


def keys_predicate(dim_df, on, *, fact_schema=None, fact_stats=None, max_keys: int = 100_000,
                   bloom_fpp: float = 0.01) -> JoinKeys:
    """The engine predicate (and Bloom filters) that the join keys of ``dim_df`` put on the
    fact side (see the module doc).

    ``on``: ``[("fact_col", "dim_col"), ...]`` (or one pair, or one name for both sides);
    ``fact_schema``: the fact side's Spark schema, to leave out pairs that Spark compares
    through a value-changing cast. ``max_keys``: the most distinct keys per column tested as
    an exact ``IN`` set. ``bloom_fpp``: the rate at which a Bloom filter keeps a fact
    container that holds no key; a container's whole range is probed, so the filter is sized
    for ``bloom_fpp`` divided by the typical container span in ``fact_stats`` (when given).

    Example::

        import prune_engine as pe, prune_engine.spark as pes
        keys = pes.keys_predicate(stores.where("region = 'north'"), [("store_id", "id")])
        pe.prune(fact_stats, keys.expr)
    """
    started = time.perf_counter()
    keys = JoinKeys()
    spark = dim_df.sparkSession
    for fact_col, dim_col in _pairs(on):
        path = tuple(fact_col.split("."))
        dim_type = _type_at(dim_df.schema, dim_col)
        why = _why_not(_type_at(fact_schema, fact_col), dim_type) if fact_schema is not None \
            else (None if dim_type is not None else f"{dim_col!r} is not a column of dim_df")
        if why:
            keys.drop(fact_col, why)
            continue
        column = n.Column(path)
        with job_description(spark, f"prune_engine: join keys of {dim_col} for {fact_col}"):
            values = _distinct_keys(dim_df, dim_col, max_keys)
        if len(values) <= max_keys:
            keys.tests[fact_col] = n.InList(column, _literals(values))
            keys.info[fact_col] = {"test": "in", "keys": len(values)}
            continue
        keys.tests[fact_col] = _range(dim_df, dim_col, column, keys, fact_col)
        if spark_type_name(dim_type) in _BLOOM_TYPES:
            count = keys.info[fact_col]["approx_keys"]
            span = _typical_span(fact_stats, path) if fact_stats is not None else 1
            keys.blooms[path] = _build_bloom(dim_df, dim_col, count, bloom_fpp / span)
            keys.info[fact_col]["test"] = "range+bloom"
    keys.seconds = time.perf_counter() - started
    return keys


def _typical_span(stats, path: tuple[str, ...]) -> int:
    """The median number of values in a fact container's range of ``path`` (among the ranges
    a Bloom filter is probed over), at least 1."""
    from prune_engine.stats.table import as_stats_table

    table = as_stats_table(stats).table
    leaf = StatsColumns(table).leaf(path)
    if leaf is None or not (pa.types.is_integer(leaf.type) or pa.types.is_date32(leaf.type)):
        return 1
    lo, hi = (_field(table, s, leaf.path) for s in (layout.MIN_VALUES, layout.MAX_VALUES))
    known = np.asarray(lo.is_valid()) & np.asarray(hi.is_valid())
    with np.errstate(over="ignore"):
        span = (_int64(hi) - _int64(lo) + 1)[known]
    span = span[(span > 0) & (span <= MAX_SPAN)]
    return int(np.median(span)) if len(span) else 1


def _distinct_keys(dim_df, dim_col: str, max_keys: int) -> pa.Array:
    """The distinct non-NULL keys of ``dim_col`` (at most ``max_keys + 1`` of them: more
    means "too many"). A (filtered) dimension of at most ``max_keys`` rows is brought back
    as it is, in one stage, and deduplicated here; a larger one is deduplicated by Spark."""
    F = functions(dim_df)
    keys = dim_df.select(F.col(dim_col).alias("k")).where("k IS NOT NULL")
    rows = to_arrow(keys.limit(max_keys + 1)).column("k").combine_chunks()
    if len(rows) <= max_keys:
        return rows.unique()
    return to_arrow(keys.distinct().limit(max_keys + 1)).column("k").combine_chunks()


def _pairs(on) -> list[tuple[str, str]]:
    if isinstance(on, str):
        return [(on, on)]
    if isinstance(on, tuple) and len(on) == 2 and all(isinstance(s, str) for s in on):
        return [on]
    pairs = [(p, p) if isinstance(p, str) else tuple(p) for p in on]
    if not pairs or any(len(p) != 2 or not all(isinstance(s, str) for s in p) for p in pairs):
        raise ValueError("on must be a column name or a list of (fact_col, dim_col) pairs of "
                         f"names, not {on!r}")
    return pairs


def _type_at(schema, name: str):
    """The Catalyst JSON type of the (dotted, case-insensitive) column ``name``, or None."""
    if schema is None:
        return None
    current = schema
    for part in name.split("."):
        fields = getattr(current, "fields", None)
        if fields is None:
            return None
        found = [f for f in fields if f.name == part] or \
            [f for f in fields if f.name.lower() == part.lower()]
        if len(found) != 1:
            return None
        current = found[0].dataType
    return current.jsonValue()


def _why_not(fact_type, dim_type) -> str | None:
    """Why Spark's ``fact = dim`` is not a comparison of values (None: it is)."""
    if fact_type is None or dim_type is None:
        return "not a column of both sides"
    f, d = spark_type_name(fact_type), spark_type_name(dim_type)
    if f in _NUMERIC and d in _NUMERIC:
        return None
    if isinstance(fact_type, str) and fact_type == dim_type and f in (
            "string", "binary", "boolean", "date", "timestamp", "timestamp_ntz"):
        return None
    return f"Spark compares {fact_type} with {dim_type} through a cast"


def _literals(values: pa.Array) -> tuple[n.Literal, ...]:
    typed = pa.types.is_timestamp(values.type) or pa.types.is_date(values.type)
    type_ = values.type if typed else None
    return tuple(n.Literal(v, type_) for v in values.to_pylist())


def _range(dim_df, dim_col: str, column: n.Column, keys: JoinKeys, fact_col: str) -> n.Expr:
    F = functions(dim_df)
    c = F.col(dim_col)
    with job_description(dim_df.sparkSession, f"prune_engine: key range of {dim_col}"):
        row = to_arrow(dim_df.agg(F.min(c).alias("lo"), F.max(c).alias("hi"),
                                   F.approx_count_distinct(c).alias("n")))
    lo, hi = row.column("lo").combine_chunks(), row.column("hi").combine_chunks()
    keys.info[fact_col] = {"test": "range", "approx_keys": row.column("n")[0].as_py()}
    (low,), (high,) = _literals(lo), _literals(hi)
    return n.And((n.Compare(">=", column, low), n.Compare("<=", column, high)))


def _build_bloom(dim_df, dim_col: str, expected: int, fpp: float) -> KeyBloom:
    F = functions(dim_df)
    k = KeyBloom.empty(expected, fpp).k
    words = len(KeyBloom.empty(expected, fpp).words)

    def task(batches):
        bloom = KeyBloom(np.zeros(words, np.uint64), k)
        for batch in batches:
            bloom.add(as_int64(batch.column(0)))
        yield pa.RecordBatch.from_pydict({"bits": [bloom.to_bytes()]})

    frame = dim_df.select(F.col(dim_col).alias("k")).where("k IS NOT NULL")
    check_workers(dim_df.sparkSession)
    with job_description(dim_df.sparkSession, f"prune_engine: Bloom filter of {dim_col}"):
        rows = frame.mapInArrow(task, "bits binary").collect()
    bloom = KeyBloom(np.zeros(words, np.uint64), k)
    for row in rows:
        bloom.union(KeyBloom.from_bytes(row["bits"], k))
    return bloom


def join(spark, fact_source, dim_df, on, how: str = "inner", *, fact_stats=None, where=None,
         format: str = "parquet", options: dict | None = None, schema=None,
         max_keys: int = 100_000, bloom_fpp: float = 0.01, missing: str = "skip",
         return_summary: bool = False):
    """``fact.join(dim_df, fact[f] == dim_df[d] AND ..., how)`` over the fact files that may
    hold a joining row (see the module doc), where ``fact`` is
    ``spark.read.format(format).load(fact_source)`` (or the table, or the DataFrame over
    files, ``fact_source`` names; filtered by ``where``, Spark SQL or a
    Column, when given).

    ``on``: ``[("fact_col", "dim_col"), ...]`` (the result keeps both sides' columns), or the
    names both sides share, ``"k"`` or ``["k", "j"]`` (as Spark's ``join(other, "k")``, the
    result keeps one ``k``), or a Column of equalities ``fact["k"] == dim["id"] & ...`` (as
    Spark's ``join(other, condition)``; ``fact_source`` may be the fact DataFrame, see
    :mod:`._source`). ``how``: any Spark join type; only
    ``inner``, ``cross``, ``left_semi`` and ``right_outer`` prune (a ``left_outer``,
    ``full_outer`` or ``left_anti`` join keeps every fact row and runs unpruned).
    ``fact_stats``: the fact files' statistics (None: the saved ones, refreshed, as for
    :func:`~prune_engine.spark._read`). ``max_keys``: distinct
    keys per column tested exactly (more: range and Bloom filter). ``missing``,
    ``return_summary``: as for :func:`~prune_engine.spark._read`; the summary's ``join_keys``
    says how each key column was tested and how long collecting the keys took. ``format``,
    ``options`` and ``schema`` go to Spark's reader of a fact source given as paths.
    ``bloom_fpp``: the false-positive rate of the Bloom filter of keys too many for an
    ``IN`` (see :func:`keys_predicate`).

    Example::

        import prune_engine.spark as pes
        sales = pes.join(spark, "sales/", stores.where("region = 'north'"),
                         on=[("store_id", "id")], fact_stats=stats)
    """
    from prune_engine.spark._catalyst import predicate
    from prune_engine.spark._checked import check_files
    from prune_engine.spark._read import PruneSummary, names_source, prune_files, statistics
    from prune_engine.spark._source import source_frame

    kind = how.lower().replace("_", "")
    if kind not in JOIN_TYPES:
        raise ValueError(f"unknown join type {how!r}; Spark's join types: "
                         f"{', '.join(sorted(JOIN_TYPES))}")
    fact = None
    if is_column(on):  # its fact columns are found in the fact DataFrame
        fact = source_frame(spark, fact_source, format, options, schema)
        pairs = condition_pairs(on, fact, dim_df)
    else:
        pairs = _pairs(on)
    summary = PruneSummary()
    if kind not in PRUNABLE:
        fact = fact or source_frame(spark, fact_source, format, options, schema)
        summary.not_pruned = f"a {how} join keeps every fact row, with a partner or not"
    else:
        fact_stats = statistics(spark, fact_source, fact_stats, summary)
        # Spark lists the fact source (a driver-side wait) while the keys are collected
        with ThreadPoolExecutor(1) as pool:
            loading = None if fact is not None else \
                pool.submit(source_frame, spark, fact_source, format, options, schema)
            keys = keys_predicate(dim_df, pairs, fact_stats=fact_stats, max_keys=max_keys,
                                  bloom_fpp=bloom_fpp)
            fact = loading.result() if loading is not None else fact
        _keep_usable(keys, fact, fact_stats, dim_df, pairs)
        summary.join_keys.update(keys.info)
        summary.join_keys["seconds"] = keys.seconds
        started = time.perf_counter()
        expr = keys.expr
        if where is not None:
            expr = n.And((predicate(fact, where, fact_stats), expr))
        files = check_files(fact, fact_stats, missing)
        fact, summary = prune_files(fact, fact_stats, expr, files,
                                    keep=keys.bloom_keep(fact_stats), started=started,
                                    summary=summary,
                                    lineage=names_source(fact_source, where))
    if where is not None:
        fact = fact.where(where)
    if _by_name(on):  # Spark's join(other, "k"): one k column in the result
        result = fact.join(dim_df, [f for f, _ in pairs], how)
    else:  # a Column condition is its equalities: rebuilt on the pruned fact frame
        condition = functools.reduce(operator.and_, [fact[f] == dim_df[d] for f, d in pairs])
        result = fact.join(dim_df, condition, how)
    return (result, summary) if return_summary else result


def _by_name(on) -> bool:
    """``on`` names the key columns of both sides (``"k"`` or ``["k", "j"]``), as Spark's
    ``join(other, on)`` takes them: the result keeps one column of each key."""
    return isinstance(on, str) or (isinstance(on, list) and all(isinstance(k, str) for k in on))


def _keep_usable(keys: JoinKeys, fact, stats, dim_df, pairs) -> None:
    """Drop the key tests Spark's join does not compare by value, or whose fact column the
    statistics do not describe as Spark reads it."""
    from prune_engine.spark._session import partition_names

    columns = StatsColumns(stats)
    partitions = partition_names(fact)
    for fact_col, dim_col in pairs:
        path = tuple(fact_col.split("."))
        leaf = columns.leaf(path)
        spark_type = _type_at(fact.schema, fact_col)
        why = _why_not(spark_type, _type_at(dim_df.schema, dim_col))
        if why is None and (leaf is None or leaf.element or not compatible(spark_type, leaf.type)
                            or (len(path) == 1 and path[0] in partitions
                                and not columns.partition_exact(leaf.path[0]))):
            why = "the statistics do not describe this column as Spark reads it"
        if why:
            keys.drop(fact_col, why)
