"""The public entry points: ``prune``, ``compile``, ``explain``, and the types of their inputs."""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Literal as _Lit
from typing import Sequence as _Sequence
from typing import TypeAlias as _TypeAlias
from typing import Union as _Union

import pyarrow as pa

from prune_engine.compiler.plan import PruningProgram, compile_predicate
from prune_engine.expr.convert import ExprLike
from prune_engine.stats.table import StatsTable, as_stats_table

if _TYPE_CHECKING:
    import pyarrow.dataset

#: What every function that takes a predicate accepts (``expr``, ``where``): SQL WHERE text
#: (``"x > 5 AND s LIKE 'ab%'"``), a builder expression (``pe.col("x") > 5``), an expression
#: node, or a ``pyarrow.compute.Expression`` (``pc.field("x") > 5``).
Predicate: _TypeAlias = ExprLike
#: A statistics table: a :class:`StatsTable`, or a ``pyarrow.Table`` in the layout of DESIGN.md.
Stats: _TypeAlias = _Union[StatsTable, pa.Table]
#: Where Parquet files are (``source`` of ``scan`` and ``collect_stats``): a file, a directory
#: (walked; Hive ``key=value`` folders are partitions), a glob, a list of paths, or a
#: ``pyarrow.dataset.Dataset``.
Source: _TypeAlias = _Union[str, _os.PathLike[str], _Sequence[_Union[str, _os.PathLike[str]]],
                            "pyarrow.dataset.Dataset"]
#: What to do with a container whose statistics are impossible (min > max, more nulls than
#: rows): ``"raise"`` a :class:`~prune_engine.StatsError`, or ``"keep"`` it with a warning.
OnInvalid = _Lit["raise", "keep"]


def compile(expr: Predicate, schema: pa.Schema | StatsTable | pa.Table | None  # noqa: A001
            ) -> PruningProgram:
    """Compile a predicate once against a statistics schema; reuse the plan on many tables.

    ``expr`` (a :data:`Predicate`) is SQL WHERE text, a builder expression
    (``pe.col("x") > 5``) or a ``pyarrow.compute.Expression``. ``schema`` is the statistics
    table's schema (or the table itself); with ``None`` no column is known, which is of use
    only to check SQL text for syntax errors.

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pa.table({"container": ["a"], "num_records": [1], "min_values": [{"x": 1}],
    ...                   "max_values": [{"x": 3}], "null_count": [{"x": 0}]})
    >>> plan = pe.compile("x BETWEEN 5 AND 7", stats.schema)
    >>> plan.evaluate(stats).to_pylist()
    [False]
    """
    if isinstance(schema, (StatsTable, pa.Table)):
        schema = schema.schema
    return compile_predicate(expr, schema)


def prune(stats: Stats, expr: Predicate, *, on_invalid: OnInvalid = "raise") -> pa.BooleanArray:
    """Keep-mask for every container: ``True`` where a row may match ``expr``, never null.

    ``stats``: the statistics table, one row per container (a :class:`StatsTable` from
    ``collect_stats`` / ``read_stats`` / ``stats_from_arrow``, or a ``pyarrow.Table`` in the
    layout of DESIGN.md). ``expr`` (a :data:`Predicate`): SQL WHERE text
    (``"x > 5 AND s LIKE 'ab%'"``, DuckDB/ANSI dialect), a builder expression
    (``pe.col("x") > 5``), or a ``pyarrow.compute.Expression`` (``pc.field("x") > 5``).

    A container is pruned (``False``) only when its statistics prove that ``expr`` is FALSE or
    NULL for every row; what the statistics cannot decide (unknown statistics, a function the
    engine does not know) keeps. ``on_invalid="keep"`` treats containers with impossible
    statistics as unknown (kept, with a warning) instead of raising
    :class:`~prune_engine.StatsError`. A column the statistics do not describe is an
    :class:`~prune_engine.UnknownColumnError`, malformed SQL an
    :class:`~prune_engine.SqlParseError`.

    >>> import pyarrow as pa, pyarrow.compute as pc, prune_engine as pe
    >>> stats = pa.table({"container": ["a", "b"], "num_records": [10, 10],
    ...                   "min_values": [{"x": 0}, {"x": 6}], "max_values": [{"x": 4}, {"x": 9}],
    ...                   "null_count": [{"x": 0}, {"x": 0}]})
    >>> pe.prune(stats, "x > 5").to_pylist()
    [False, True]
    >>> pe.prune(stats, pe.col("x") < 3).to_pylist()
    [True, False]
    >>> pe.prune(stats, pc.field("x") == 7).to_pylist()
    [False, True]
    """
    stats = as_stats_table(stats)
    return _plan_for(stats, expr).evaluate(stats, on_invalid=on_invalid)


def _plan_for(stats: StatsTable, expr: Predicate) -> PruningProgram:
    """The compiled plan of ``expr`` for this table, kept with the table's cached views."""
    if not isinstance(expr, str):
        return compile_predicate(expr, stats.schema)
    key = ("plan", expr)
    plan = stats._cache.get(key)
    if plan is None:
        plan = stats._cache[key] = compile_predicate(expr, stats.schema)
    return plan


def explain(stats: Stats, expr: Predicate, *, on_invalid: OnInvalid = "raise") -> pa.Table:
    """Per container: ``container``, ``keep``, ``reason``: for a pruned container, the part
    of the predicate (SQL text) that its statistics proved empty (null where kept), and
    ``kept_because``: for a kept one, the tests that could not prune it, each with why (null
    where pruned; at most three, then ``"; ..."``). A float comparison kept only because the
    container may hold NaN (its ``nan_count`` is unknown: NaN sorts above every number) says
    ``"may hold NaN: nan_count unknown"``; see ``collect_stats(..., nan_free=[...])``. And
    ``answer``: :func:`classify`'s ``"none"``, ``"some"`` or ``"all"``.

    ``stats``, ``expr`` and ``on_invalid`` are those of :func:`prune`, whose mask is the
    ``keep`` column.

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pa.table({"container": ["a", "b"], "num_records": [10, 10],
    ...                   "min_values": [{"x": 0}, {"x": 6}], "max_values": [{"x": 4}, {"x": 9}],
    ...                   "null_count": [{"x": 0}, {"x": 0}]})
    >>> pe.explain(stats, "x > 5 OR x IS NULL").to_pylist()
    [{'container': 'a', 'keep': False, 'reason': 'x > 5 OR x IS NULL', 'kept_because': None, 'answer': 'none'}, {'container': 'b', 'keep': True, 'reason': None, 'kept_because': 'x > 5: the bounds allow a match', 'answer': 'all'}]
    >>> floats = pa.table({"container": ["c"], "num_records": [10], "min_values": [{"f": 0.5}],
    ...                    "max_values": [{"f": 4.0}], "null_count": [{"f": 0}]})
    >>> pe.explain(floats, "f > 5").column("kept_because").to_pylist()
    ['f > 5: may hold NaN: nan_count unknown']
    """
    stats = as_stats_table(stats)
    return _plan_for(stats, expr).explain(stats, on_invalid=on_invalid)


def classify(stats: Stats, expr: Predicate, *, on_invalid: OnInvalid = "raise"
             ) -> pa.DictionaryArray:
    """Per container, how much of it matches ``expr``: ``"none"`` (no row: what :func:`prune`
    prunes), ``"all"`` (every row makes ``expr`` TRUE, proved from the statistics with SQL
    three-valued logic: a row where ``expr`` is NULL does not match), or ``"some"`` (may
    match). A dictionary-encoded string array; ``prune(stats, expr)`` is exactly
    ``classify(stats, expr) != "none"``.

    ``stats``, ``expr`` and ``on_invalid`` are those of :func:`prune`. An ``"all"`` container
    can be read without filtering its rows, answer ``COUNT(*)`` from ``num_records``, and
    bound a ``LIMIT`` or top-k (``pe.scan(..., order_by=..., limit=...)``).

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pa.table({"container": ["a", "b", "c"], "num_records": [10, 10, 10],
    ...                   "min_values": [{"x": 0}, {"x": 6}, {"x": 3}],
    ...                   "max_values": [{"x": 4}, {"x": 9}, {"x": 8}],
    ...                   "null_count": [{"x": 0}, {"x": 0}, {"x": 0}]})
    >>> pe.classify(stats, "x > 5").to_pylist()
    ['none', 'all', 'some']
    """
    from prune_engine.compiler import classify as c

    stats = as_stats_table(stats)
    return c.to_arrow(c.codes(_plan_for(stats, expr), stats, on_invalid))


def prune_topk(stats: Stats, expr: Predicate | None, *, order_by: str, limit: int,
               on_invalid: OnInvalid = "raise") -> pa.BooleanArray:
    """Keep-mask for ``WHERE expr ORDER BY order_by LIMIT limit``: the containers that may
    hold one of the first ``limit`` rows. ``expr`` None: no WHERE.

    ``order_by`` is ``"column [ASC|DESC] [NULLS FIRST|LAST]"`` (NULLS LAST unless told; NaN
    sorts above every number). The containers where every row matches (:func:`classify`
    says ``"all"``), walked from the best bound of ``order_by`` on, give a threshold once their
    rows reach ``limit``; a container whose values all come after it is skipped. Ties keep:
    the first ``limit`` rows of the kept containers have the same sort keys as those of all
    the rows. The rules are in :mod:`prune_engine.compiler.topk`. ``stats`` and
    ``on_invalid`` are those of :func:`prune`.

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pa.table({"container": ["a", "b", "c"], "num_records": [50, 50, 50],
    ...                   "min_values": [{"ts": 0}, {"ts": 100}, {"ts": 200}],
    ...                   "max_values": [{"ts": 99}, {"ts": 199}, {"ts": 299}],
    ...                   "null_count": [{"ts": 0}, {"ts": 0}, {"ts": 0}]})
    >>> pe.prune_topk(stats, "ts < 250", order_by="ts DESC", limit=20).to_pylist()
    [False, True, True]
    """
    from prune_engine.compiler import classify as c
    from prune_engine.compiler import topk
    from prune_engine.evaluate.checks import mask_to_arrow

    stats = as_stats_table(stats)
    order = topk.OrderBy.parse(order_by)
    codes = (c.codes(_plan_for(stats, expr), stats, on_invalid) if expr is not None
             else c.everything(stats))
    return mask_to_arrow(topk.prune_topk_mask(stats, codes, order, int(limit), on_invalid))
