"""``LIMIT`` and ``ORDER BY ... LIMIT`` scans: read containers in the order most likely to
finish early, and stop.

LIMIT alone (any ``k`` matching rows): first the containers where every row matches
(``pe.classify`` says ``"all"``), the largest first, so that the fewest of them reach ``k``;
then the others in listing order; reading stops once ``k`` rows are in.

Top-k (``order_by`` and ``limit``): the statistics' threshold (:mod:`prune_engine.compiler.topk`)
drops the containers that cannot hold one of the first ``k`` rows before anything is read.
The rest are read best bound first (a container that may hold a leading NaN or NULL, or whose
bound is unknown, before all others); once ``k`` rows are in, the ``k``-th row's key is a
tighter threshold (a dynamic filter), and every container whose values all come after it is
skipped unread. The result is the first ``k`` rows in the order, ties broken arbitrarily: its
sort keys are those of ``ORDER BY ... LIMIT k`` over all the rows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.compiler import classify, topk
from prune_engine.evaluate.context import EvalContext
from prune_engine.stats import layout
from prune_engine.compiler.topk import OrderBy
from prune_engine.scanning.shape import extract
from prune_engine.stats.unify import plain_values

#: sort groups: where NULL, NaN and the regular values go
_LEAD_NULL, _LEAD_NAN, _REGULAR, _TRAIL_NAN, _TRAIL_NULL = range(5)


def sort_keys(values: pa.Array, order: OrderBy) -> tuple[np.ndarray, pa.Array]:
    """Per row its group (NULL and NaN first or last, as the order puts them) and value."""
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    values = plain_values(values)  # a dictionary sorts by its values
    group = np.full(len(values), _REGULAR, np.int8)
    group[np.asarray(values.is_null().to_numpy(zero_copy_only=False))] = \
        _LEAD_NULL if order.nulls_first else _TRAIL_NULL
    if pa.types.is_floating(values.type):
        nan = np.asarray(pc.fill_null(pc.is_nan(values), False).to_numpy(zero_copy_only=False))
        group[nan] = _LEAD_NAN if order.nan_leads else _TRAIL_NAN
    return group, values


def first_k(table: pa.Table, values: pa.Array, order: OrderBy, k: int
            ) -> tuple[pa.Table, pa.Array]:
    """The first ``k`` rows of ``table`` by ``values`` (one per row), in order."""
    group, values = sort_keys(values, order)
    keyed = pa.table({"g": group, "v": values})
    ranks = pc.sort_indices(keyed, sort_keys=[
        ("g", "ascending"), ("v", "descending" if order.descending else "ascending")])
    ranks = ranks.slice(0, k)
    return table.take(ranks), values.take(ranks)


def _regular_last(values: pa.Array, order: OrderBy):
    """The last value when it is a regular one (the dynamic threshold), else None."""
    if len(values) == 0:
        return None
    group, _ = sort_keys(values.slice(len(values) - 1), order)
    return values[len(values) - 1] if group[0] == _REGULAR else None


def _read_in_order(plan, units: list, skip, take) -> None:
    """Read ``units`` in order and hand each table to ``take``; ``skip(unit)``, asked just
    before a read would start, drops a unit unread. Reads start one at a time and the window
    doubles after each read that did not end the scan, up to ``plan.threads``: a scan that one
    container ends reads one container."""
    queue = list(units)
    window = 1
    with ThreadPoolExecutor(max(1, plan.threads)) as pool:
        pending: list = []
        while queue or pending:
            while queue and len(pending) < window:
                unit = queue.pop(0)
                if not skip(unit):
                    pending.append((unit, pool.submit(plan.read_rows, unit)))
            if not pending:
                break
            unit, future = pending.pop(0)
            table = future.result()
            plan.units_read.append(unit)
            take(table)
            window = min(2 * window, max(1, plan.threads))


def limited(plan, limit: int) -> pa.Table:
    """Any ``limit`` matching rows (``plan`` has no order)."""
    units = plan.units(per_row_group=True)
    every = [u for u in units if u.entire]
    rows = topk.counts(EvalContext(plan.stats), layout.NUM_RECORDS) if every else None
    every.sort(key=lambda u: -rows[u.index])  # (their statistics name them: index is set)
    tables: list[pa.Table] = []

    def skip(unit) -> bool:
        return sum(t.num_rows for t in tables) >= limit

    _read_in_order(plan, every + [u for u in units if not u.entire], skip, tables.append)
    table = pa.concat_tables(tables) if tables else plan.read_schema.empty_table()
    return plan.project(table.slice(0, limit))


class _TopRows:
    """The first ``limit`` rows seen so far, and their keys."""

    def __init__(self, plan, limit: int):
        self.plan, self.limit, self.order = plan, limit, plan.order
        self.rows: pa.Table | None = None
        self.values: pa.Array | None = None

    def take(self, table: pa.Table) -> None:
        if self.rows is not None:
            table = pa.concat_tables([self.rows, table]) if table.num_rows else self.rows
        values = extract(table.column(self.plan.order_path.names[0]), self.plan.order_path)
        self.rows, self.values = first_k(table, values, self.order, self.limit)

    def cutoff(self):
        """The ``limit``-th row's key once ``limit`` rows are in, when it is a regular
        value (None: nothing can be skipped yet)."""
        if self.rows is None or self.rows.num_rows < self.limit:
            return None
        return _regular_last(self.values, self.order)


def top(plan, limit: int) -> pa.Table:
    """The first ``limit`` matching rows in ``plan.order``."""
    order = plan.order
    units = plan.units(per_row_group=True)
    keys = topk.keys(plan.stats, order) if plan.stats is not None else None
    if keys is not None:  # the statistics' own threshold first
        t = topk.threshold(keys, plan.codes == classify.ALL_CODE, limit, order)
        if t is not None:
            behind = topk.behind(keys, t, order)
            units = [u for u in units if u.index is None or not behind[u.index]]

    sortable = None if keys is None else ~keys.may_lead & np.asarray(
        keys.best.is_valid().to_numpy(zero_copy_only=False), bool)

    def known(unit) -> bool:  # a best bound to sort by, and no leading NULL or NaN
        return sortable is not None and unit.index is not None and bool(sortable[unit.index])

    firsts = [u for u in units if not known(u)]
    rest = [u for u in units if known(u)]
    if rest:
        bests = keys.best.take(pa.array([u.index for u in rest]))
        idx = pc.sort_indices(bests, sort_keys=[
            ("", "descending" if order.descending else "ascending")]).to_numpy()
        rest = [rest[i] for i in idx]
    seen = _TopRows(plan, limit)

    def skip(unit) -> bool:
        cutoff = seen.cutoff()
        if cutoff is None or keys is None or unit.index is None:
            return False
        return bool(topk.behind(_one(keys, unit.index), cutoff, order)[0])

    _read_in_order(plan, firsts + rest, skip, seen.take)
    return plan.project(seen.rows if seen.rows is not None else plan.read_schema.empty_table())


def _one(keys: topk.Keys, i: int) -> topk.Keys:
    return topk.Keys(keys.best.slice(i, 1), keys.worst.slice(i, 1), keys.may_lead[i:i + 1],
                     keys.may_regular[i:i + 1], keys.placed[i:i + 1])
