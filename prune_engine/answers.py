"""``pe.aggregate``: ``COUNT(*)``, ``COUNT(x)``, ``MIN(x)`` and ``MAX(x)`` answered from the
statistics where they suffice, and from the fewest containers' rows where they do not.

Per container, :func:`pe.classify <prune_engine.classify>` says whether ``where`` matches none,
all or some of its rows:

- ``none`` containers add nothing;
- an ``all`` container adds its ``num_records`` to ``COUNT(*)``, ``num_records - null_count``
  to ``COUNT(x)``, and its bounds to ``MIN`` / ``MAX`` when they are values it holds (see
  below); where one of those is unknown, the container is read instead;
- a ``some`` container is read (its rows filtered by ``where``), unless all it could add is a
  ``MIN`` or ``MAX`` its bounds show cannot win.

Bounds are values the container holds (not merely bounds) for Parquet footers and
``stats_from_arrow``, except strings and binary (writers may truncate them); Delta and Iceberg
bounds are treated as bounds only. NaN is above every number (SQL): a container that may hold
NaN answers ``MAX`` only when its NaN count is known. An inexact ``MIN`` is settled by reading
the containers whose lower bound is at or below the smallest upper bound of a container that
certainly holds a value (its row, null and NaN counts known; one of them holds the minimum),
and likewise for ``MAX``.

Rows deleted without their file (:mod:`prune_engine.stats.snapshot`: an Iceberg position or
equality delete file that may name the file, a Delta deletion vector, or deletes the
statistics do not place) are still in its row count, null count and bounds: bounds stay true
bounds of the live rows, but a count or an extreme taken from them may be a deleted row's.
Such a container is never answered from its statistics: it is ``some`` here (read, unless its
bounds show that it cannot hold the ``MIN`` or ``MAX``). With a source it is read as
:func:`pe.scan <prune_engine.scan>` reads it, its position deletes applied, or the reading
stops with the scan's :class:`~prune_engine.errors.ScanError` naming it (a deletion vector,
an equality delete); a table format's statistics read only the snapshot's live files.

Without a source, the result says what it could not answer (``exact`` False, the value None)
and which containers must be read (``must_read``); with one, it reads them and is exact.

>>> import pyarrow as pa, prune_engine as pe
>>> stats = pa.table({"container": ["a", "b", "c"], "num_records": [10, 10, 10],
...                   "min_values": [{"x": 0}, {"x": 6}, {"x": 3}],
...                   "max_values": [{"x": 4}, {"x": 9}, {"x": 8}],
...                   "null_count": [{"x": 0}, {"x": 1}, {"x": 0}]})
>>> r = pe.aggregate(stats, "COUNT(*), COUNT(x), MAX(x)")
>>> r.values, r.exact
({'COUNT(*)': 30, 'COUNT(x)': 29, 'MAX(x)': 9}, True)
>>> r = pe.aggregate(stats, "COUNT(*), MIN(x)", where="x > 5")
>>> r.values, r.must_read.to_pylist()
({'COUNT(*)': None, 'MIN(x)': None}, [False, True, True])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.compiler import classify, topk
from prune_engine.errors import PruneEngineError
from prune_engine.expr import nodes as n
from prune_engine.stats import layout
from prune_engine.stats.snapshot import FORMATS, table_snapshot
from prune_engine.stats.table import StatsTable, as_stats_table

if TYPE_CHECKING:
    from prune_engine.api import OnInvalid, Predicate, Source, Stats

__all__ = ["aggregate", "AggregateResult"]

FUNCTIONS = ("COUNT", "MIN", "MAX")


@dataclass(frozen=True)
class Item:
    """One aggregate of the list: its text, function and column (None: ``COUNT(*)``)."""

    text: str
    function: str
    path: tuple[str, ...] | None


@dataclass(frozen=True)
class AggregateResult:
    """``values``: per aggregate (as written), its value, None where not answered;
    ``exact``: every value answered; ``must_read``: per container, whether its rows are needed
    (before a source was read); ``containers_read``: how many were read (0 without a source).
    """

    values: dict
    exact: bool
    must_read: pa.BooleanArray
    containers_read: int = 0

    def to_table(self) -> pa.Table:
        """The values as a one-row table (a column per aggregate)."""
        return pa.table({k: [v] for k, v in self.values.items()})


def parse(items: str) -> list[Item]:
    """``"COUNT(*), MIN(x), MAX(a.b)"`` as :class:`Item`s.

    >>> [(i.function, i.path) for i in parse("count(*), MIN(x), max(a.b)")]
    [('COUNT', None), ('MIN', ('x',)), ('MAX', ('a', 'b'))]
    """
    import sqlglot
    from sqlglot import expressions as exp

    from prune_engine.expr.convert import to_expr

    try:
        select = sqlglot.parse_one(f"SELECT {items}")
    except sqlglot.errors.ParseError as e:
        raise PruneEngineError(f"aggregate: cannot read {items!r}: {e}") from None
    out = []
    for node in select.expressions:
        text = node.sql()
        kind = {exp.Count: "COUNT", exp.Min: "MIN", exp.Max: "MAX"}.get(type(node))
        if kind is None or isinstance(node.this, exp.Distinct):
            raise PruneEngineError(f"aggregate answers COUNT(*), COUNT(x), MIN(x) and MAX(x), "
                                   f"not {text}")
        arg = node.this
        if kind == "COUNT" and isinstance(arg, exp.Star):
            out.append(Item("COUNT(*)", kind, None))
            continue
        column = to_expr(arg.sql()) if arg is not None else None
        if not isinstance(column, n.Column):
            raise PruneEngineError(f"aggregate: {text} takes a column")
        out.append(Item(f"{kind}({'.'.join(column.path)})", kind, tuple(column.path)))
    return out


def _exact_bounds(stats: StatsTable, atype: pa.DataType) -> bool:
    """Are the bounds values the containers hold? (module doc)"""
    if pa.types.is_string(atype) or pa.types.is_large_string(atype) or \
            pa.types.is_binary(atype) or pa.types.is_large_binary(atype) or \
            pa.types.is_fixed_size_binary(atype):
        return False
    return not (set(FORMATS) & set(stats.metadata))


def with_deletes(stats: StatsTable) -> np.ndarray | None:
    """Per container: may rows of its file be deleted without the file (module doc)? None
    for statistics of no table format's snapshot."""
    snap = table_snapshot(stats)
    if snap is None:
        return None
    if snap.refused_all is not None or not (snap.refused or snap.has_position_deletes):
        return np.full(stats.num_rows, snap.refused_all is not None)
    paths = stats.table.column(layout.PATH).combine_chunks().dictionary_encode()
    files = np.array([snap.refusal(p) is not None or bool(snap.position_deletes(p))
                      for p in paths.dictionary.to_pylist()], bool)
    return files[np.asarray(paths.indices.to_numpy(zero_copy_only=False), np.intp)]


class _Answer:
    """One aggregate over the containers: what the statistics give, and what must be read."""

    def __init__(self, stats: StatsTable, codes: np.ndarray, item: Item, on_invalid: str):
        from prune_engine.evaluate.context import EvalContext

        ctx = EvalContext(stats, on_invalid)
        n_ = stats.num_rows
        self.item = item
        self.rows = topk.counts(ctx, layout.NUM_RECORDS)
        self.every = codes == classify.ALL_CODE
        self.some = codes == classify.SOME_CODE
        self.read = self.some.copy()
        if item.path is not None:
            from prune_engine.compiler.bind import StatsSchema

            StatsSchema(stats.schema).resolve(item.path)  # an unknown column: a clear error
        if item.path is None:
            self.read |= self.every & (self.rows < 0)
            return
        if item.function == "COUNT":
            nulls = topk.counts(ctx, layout.NULL_COUNT, item.path)
            self.nonnull = np.where((self.rows >= 0) & (nulls >= 0), self.rows - nulls, -1)
            self.read |= self.every & (self.nonnull < 0)
            return
        order = topk.OrderBy(item.path, descending=item.function == "MAX")
        self.order = order
        self.keys = topk.keys(stats, order, on_invalid)
        self.floating = pa.types.is_floating(self.keys.best.type)
        nans = topk.counts(ctx, layout.NAN_COUNT, item.path) if self.floating \
            else np.zeros(n_, np.int64)
        self.nan = self.every & (nans > 0) if order.descending else np.zeros(n_, bool)
        self.nan_rows = self.every & (nans > 0)  # MIN is NaN when no regular value is left
        unknown_nan = self.every & (nans < 0) & order.descending & self.keys.may_regular
        best = np.asarray(self.keys.best.is_valid().to_numpy(zero_copy_only=False))
        self.candidates = self.every & self.keys.may_regular & best & ~unknown_nan
        # an ALL container that may hold values whose best bound is unknown: read it
        self.read |= self.every & self.keys.may_regular & (~best | unknown_nan)
        self.exact_bounds = _exact_bounds(stats, self.keys.best.type)
        if self.nan.any():  # MAX is NaN: nothing else can change it
            self.read[:] = False
            return
        idx = np.flatnonzero(self.candidates)
        if len(idx) == 0:
            return
        bests = self.keys.best.take(pa.array(idx))
        winner = pc.max(bests) if order.descending else pc.min(bests)
        if not self.exact_bounds:  # the extreme is in a container whose best reaches the
            # worst of a container that certainly holds a value (null bar: read them all)
            sure = idx[self.keys.placed[idx] > 0]
            worsts = self.keys.worst.take(pa.array(sure, pa.int64()))
            bar = pc.max(worsts) if order.descending else pc.min(worsts)
            reach = ~topk.before(order, pa.repeat(bar, len(self.keys.best)), self.keys.best)
            self.read |= self.candidates & reach
            self.candidates &= ~self.read
            winner = bar
        # a SOME container whose best cannot beat the winner adds nothing
        self.read &= ~(self.some & ~self.keys.may_lead &
                       topk.before(order, pa.repeat(winner, len(self.keys.best)),
                                   self.keys.best) & ~self.every)
        self.read &= ~(self.some & ~self.keys.may_regular & ~self.keys.may_lead)

    def from_stats(self, skip: np.ndarray):
        """The aggregate over the containers not read (``skip``: those that are)."""
        use = self.every & ~skip
        if self.item.path is None:
            return int(self.rows[use].sum())
        if self.item.function == "COUNT":
            return int(self.nonnull[use].sum())
        if self.nan.any():
            return math.nan
        idx = np.flatnonzero(self.candidates & use)
        if len(idx) == 0:
            return math.nan if (self.nan_rows & use).any() else None
        bests = self.keys.best.take(pa.array(idx))
        return (pc.max(bests) if self.order.descending else pc.min(bests)).as_py()


def _combine(item: Item, a, b):
    if item.function == "COUNT":
        return a + b
    values = [v for v in (a, b) if v is not None]
    if not values:
        return None
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        return math.nan if item.function == "MAX" else min(
            (v for v in values if not (isinstance(v, float) and math.isnan(v))),
            default=math.nan)
    return max(values) if item.function == "MAX" else min(values)


def _from_rows(item: Item, rows: pa.Table):
    """The aggregate over rows (SQL: NULLs skipped, NaN above every number)."""
    if item.path is None:
        return rows.num_rows
    from prune_engine.scanning.paths import resolve_names
    from prune_engine.scanning.shape import extract

    fp = resolve_names(rows.schema, item.path)
    values = extract(rows.column(fp.names[0]), fp)
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if item.function == "COUNT":
        return len(values) - values.null_count
    if pa.types.is_floating(values.type):
        nan = pc.fill_null(pc.is_nan(values), False)
        if pc.any(nan).as_py():
            if item.function == "MAX":
                return math.nan
            regular = values.filter(pc.invert(nan))
            return pc.min(regular).as_py() if regular.null_count < len(regular) else math.nan
    return (pc.max(values) if item.function == "MAX" else pc.min(values)).as_py()


def aggregate(stats: "Stats", items: str, where: "Predicate | None" = None, *,
              source: "Source | None" = None, on_invalid: "OnInvalid" = "raise",
              filesystem=None) -> AggregateResult:
    """``SELECT items [WHERE where]`` over the containers of ``stats``, from the statistics
    where they suffice (see the module doc).

    ``items``: ``COUNT(*)``, ``COUNT(x)``, ``MIN(x)``, ``MAX(x)``, comma-separated (``x`` a
    column path). ``where``: a predicate as :func:`~prune_engine.prune` takes it (None: every
    row). ``source``: where the data is (as :func:`~prune_engine.scan` takes it); when given,
    the containers the statistics cannot answer for are read (filtered by ``where``, only the
    row groups named; ``filesystem`` as for ``scan``) and the result is exact. ``on_invalid``:
    as for :func:`~prune_engine.prune`. Returns an :class:`AggregateResult`.

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pa.table({"container": ["a", "b"], "num_records": [4, 6],
    ...                   "min_values": [{"ts": 1}, {"ts": 9}], "max_values": [{"ts": 5}, {"ts": 20}],
    ...                   "null_count": [{"ts": 0}, {"ts": 0}]})
    >>> pe.aggregate(stats, "COUNT(*)", where="ts >= 9").values
    {'COUNT(*)': 6}
    """
    from prune_engine.api import _plan_for

    stats = as_stats_table(stats)
    parsed = parse(items)
    codes = (classify.codes(_plan_for(stats, where), stats, on_invalid) if where is not None
             else classify.everything(stats))
    deleted = with_deletes(stats)
    if deleted is not None and deleted.any():  # counts and bounds include deleted rows
        codes = np.where(deleted & (codes == classify.ALL_CODE), classify.SOME_CODE,
                         codes).astype(codes.dtype)
    answers = [_Answer(stats, codes, item, on_invalid) for item in parsed]
    read = np.zeros(stats.num_rows, bool)
    for a in answers:
        read |= a.read
    must_read = pa.array(read)
    if not read.any():
        values = {a.item.text: a.from_stats(read) for a in answers}
        return AggregateResult(values, True, must_read)
    if source is None:
        values = {a.item.text: None for a in answers}
        return AggregateResult(values, False, must_read)
    from prune_engine.scanning.api import _Plan

    subset = StatsTable(stats.table.filter(must_read), stats.metadata)
    plan = _Plan(source, where, None, subset, False, None, on_invalid, filesystem,
                 described_only=True)
    tables = [plan.read_rows(u) for u in plan.units(per_row_group=False)]
    rows = pa.concat_tables(tables) if tables else plan.read_schema.empty_table()
    values = {a.item.text: _combine(a.item, a.from_stats(read), _from_rows(a.item, rows))
              for a in answers}
    return AggregateResult(values, True, must_read, int(read.sum()))
