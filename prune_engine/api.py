"""The public entry points: ``prune``, ``compile``, ``explain``."""

from __future__ import annotations

from typing import Literal as _Lit

import pyarrow as pa

from prune_engine.compiler.plan import PruningProgram, compile_predicate
from prune_engine.stats.table import StatsTable, as_stats_table

OnInvalid = _Lit["raise", "keep"]


def compile(expr, schema: pa.Schema | StatsTable | pa.Table | None) -> PruningProgram:  # noqa: A001
    """Compile a predicate once against a statistics schema; reuse the plan on many tables.

    ``expr`` is SQL WHERE text, a builder expression (``pe.col("x") > 5``) or a
    ``pyarrow.compute.Expression``. ``schema`` is the statistics table's schema (or the table).

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


def prune(stats: StatsTable | pa.Table, expr, *, on_invalid: OnInvalid = "raise") -> pa.BooleanArray:
    """Keep-mask for every container: ``True`` where a row may match ``expr``, never null.

    A container is pruned (``False``) only when its statistics prove that ``expr`` is FALSE or
    NULL for every row. ``on_invalid="keep"`` treats containers with impossible statistics as
    unknown (kept, with a warning) instead of raising :class:`~prune_engine.StatsError`.
    """
    stats = as_stats_table(stats)
    return _plan_for(stats, expr).evaluate(stats, on_invalid=on_invalid)


def _plan_for(stats: StatsTable, expr) -> PruningProgram:
    """The compiled plan of ``expr`` for this table, kept with the table's cached views."""
    if not isinstance(expr, str):
        return compile_predicate(expr, stats.schema)
    key = ("plan", expr)
    plan = stats._cache.get(key)
    if plan is None:
        plan = stats._cache[key] = compile_predicate(expr, stats.schema)
    return plan


def explain(stats: StatsTable | pa.Table, expr, *, on_invalid: OnInvalid = "raise") -> pa.Table:
    """Per container: ``container``, ``keep``, and ``reason``: for a pruned container, the part
    of the predicate (SQL text) that its statistics proved empty; null where kept."""
    stats = as_stats_table(stats)
    return _plan_for(stats, expr).explain(stats, on_invalid=on_invalid)
