"""Top-k from statistics: which containers can hold one of the first ``k`` rows of
``WHERE p ORDER BY x LIMIT k``.

The order (:class:`OrderBy`) puts every row in one of three places: the *leading* specials,
the regular (non-null, non-NaN) values sorted, and the *trailing* specials. NaN is above every
number (DuckDB and Spark), so it leads a descending order and trails an ascending one; NULLs
lead or trail as ``NULLS FIRST`` / ``NULLS LAST`` say (default: last, DuckDB's).

A container's *best* value is the bound its values can reach first (``max`` descending, ``min``
ascending), its *worst* the other. The threshold comes from the containers where every row
matches ``p`` (``pe.classify`` says ``"all"``): walking them from the best worst value on, the
rows each one certainly places at or before its worst value (every row but the trailing
specials, which needs the null and NaN counts) add up; where they reach ``k``, that worst value
``T`` is the threshold: at least ``k`` matching rows come at or before ``T``, so a container
whose best value comes strictly after ``T``, and that cannot hold a leading special, holds no
row of the first ``k`` (a row equal to ``T`` could tie; it is kept). Ties make the first ``k``
rows ambiguous in SQL too: what is fixed is the multiset of their sort keys, and that is what
is preserved.

>>> import pyarrow as pa, prune_engine as pe
>>> stats = pa.table({"container": ["a", "b", "c"], "num_records": [50, 50, 50],
...                   "min_values": [{"ts": 0}, {"ts": 100}, {"ts": 200}],
...                   "max_values": [{"ts": 99}, {"ts": 199}, {"ts": 299}],
...                   "null_count": [{"ts": 0}, {"ts": 0}, {"ts": 0}]})
>>> pe.prune_topk(stats, None, order_by="ts DESC", limit=20).to_pylist()
[False, False, True]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import PruneEngineError
from prune_engine.expr import nodes as n
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable

_ORDER = re.compile(r"^\s*(?P<column>.+?)(?:\s+(?P<dir>ASC|DESC))?"
                    r"(?:\s+NULLS\s+(?P<nulls>FIRST|LAST))?\s*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class OrderBy:
    """One sort key: a column path, the direction, and where NULLs go."""

    path: tuple[str, ...]
    descending: bool = False
    nulls_first: bool = False

    @classmethod
    def parse(cls, text: "str | OrderBy") -> "OrderBy":
        """``"ts"``, ``"ts DESC"``, ``"user.age ASC NULLS FIRST"`` (SQL's ORDER BY item; NULLS
        LAST unless told).

        >>> OrderBy.parse("ts DESC")
        OrderBy(path=('ts',), descending=True, nulls_first=False)
        """
        if isinstance(text, OrderBy):
            return text
        from prune_engine.expr.convert import to_expr

        m = _ORDER.match(text) if isinstance(text, str) else None
        if m is None:
            raise PruneEngineError(f"order_by takes 'column [ASC|DESC] [NULLS FIRST|LAST]', "
                                   f"not {text!r}")
        try:
            column = to_expr(m.group("column"))
        except PruneEngineError as e:
            raise PruneEngineError(f"order_by takes 'column [ASC|DESC] [NULLS FIRST|LAST]', "
                                   f"not {text!r}: {str(e).splitlines()[0]}") from None
        if not isinstance(column, n.Column):
            raise PruneEngineError(f"order_by sorts by a column, not {m.group('column')!r}")
        return cls(tuple(column.path), (m.group("dir") or "").upper() == "DESC",
                   (m.group("nulls") or "").upper() == "FIRST")

    @property
    def nan_leads(self) -> bool:
        """NaN comes before the regular values (descending: NaN is above every number)."""
        return self.descending

    def sql(self) -> str:
        name = ".".join(self.path)
        return (f"{name} {'DESC' if self.descending else 'ASC'} "
                f"NULLS {'FIRST' if self.nulls_first else 'LAST'}")


@dataclass
class Keys:
    """Per container, what the statistics say of the sort key (pyarrow arrays over
    containers): best and worst regular value (null: unknown), whether a leading special may
    be there, whether a regular value may, and how many rows certainly come at or before the
    worst value (null: unknown)."""

    best: pa.Array
    worst: pa.Array
    may_lead: np.ndarray
    may_regular: np.ndarray
    placed: np.ndarray  # int64; -1 unknown


def counts(ctx, struct: str, path: tuple[str, ...] = ()) -> np.ndarray:
    """A count column of the statistics (``num_records``, or a leaf of ``null_count`` /
    ``nan_count``) as int64, -1 where unknown."""
    read = ctx.counts(struct, path)
    if read is None:
        return np.full(ctx.n, -1, np.int64)
    values, valid = read
    return values.copy() if valid is None else np.where(valid, values, -1)


def _known_only(bounds: pa.Array, valid: np.ndarray | None) -> pa.Array:
    """``bounds`` with null where ``valid`` is False (None: all valid)."""
    if valid is None:
        return bounds
    return pc.if_else(pa.array(valid), bounds, pa.scalar(None, bounds.type))


def keys(stats: StatsTable, order: OrderBy, on_invalid: str = "raise") -> Keys:
    """The sort key's :class:`Keys` for every container of ``stats``."""
    from prune_engine.compiler.bind import StatsSchema
    from prune_engine.evaluate.context import EvalContext
    from prune_engine.evaluate.domains import domain_of

    info = StatsSchema(stats.schema).resolve(order.path)  # an unknown column: a clear error
    ctx = EvalContext(stats, on_invalid)
    n = stats.num_rows
    lo = ctx.leaf(layout.MIN_VALUES, order.path)
    hi = ctx.leaf(layout.MAX_VALUES, order.path)
    if lo is None and hi is None:
        raise PruneEngineError(f"order_by: the statistics have no bounds of "
                               f"{'.'.join(order.path)!r}")
    lo = pa.nulls(n, hi.type) if lo is None else lo
    hi = pa.nulls(n, lo.type) if hi is None else hi
    domain = domain_of(info.type)
    if domain is not None:  # the pruning's reading: a NaN bound unknown, min > max invalid
        _, lo_valid, _, hi_valid = ctx.bounds(info, domain)
        lo, hi = _known_only(lo, lo_valid), _known_only(hi, hi_valid)
    rows = counts(ctx, layout.NUM_RECORDS)
    nulls = counts(ctx, layout.NULL_COUNT, order.path)
    floating = pa.types.is_floating(lo.type)
    nans = counts(ctx, layout.NAN_COUNT, order.path) if floating else np.zeros(n, np.int64)
    may_null = nulls != 0
    may_nan = nans != 0
    known = (rows >= 0) & (nulls >= 0) & (nans >= 0)
    may_regular = ~(known & (nulls + nans >= rows))
    may_lead = np.zeros(n, bool)
    if order.nulls_first:
        may_lead |= may_null
    if order.nan_leads:
        may_lead |= may_nan
    # rows at or before the worst value: all but the trailing specials
    placed = rows.copy()
    if not order.nulls_first:
        placed = np.where(nulls >= 0, placed - nulls, -1)
    if not order.nan_leads:
        placed = np.where((nans >= 0) & (placed >= 0), placed - nans, -1)
    placed = np.where(rows >= 0, placed, -1)
    best, worst = (hi, lo) if order.descending else (lo, hi)
    return Keys(best, worst, may_lead, may_regular, placed)


def before(order: OrderBy, a: pa.Array, b) -> np.ndarray:
    """Where value ``a`` comes strictly before ``b`` in the order (null: False)."""
    test = pc.greater(a, b) if order.descending else pc.less(a, b)
    return np.asarray(pc.fill_null(test, False).to_numpy(zero_copy_only=False))


def threshold(k: Keys, every: np.ndarray, limit: int, order: OrderBy):
    """``T``: a value with at least ``limit`` rows of ``every`` (the containers where each
    row matches) at or before it; None when they do not add up to ``limit``."""
    usable = every & (k.placed > 0) & np.asarray(k.worst.is_valid().to_numpy(
        zero_copy_only=False))
    idx = np.flatnonzero(usable)
    if len(idx) == 0 or k.placed[idx].sum() < limit:
        return None
    worst = k.worst.take(pa.array(idx))
    ranks = np.asarray(pc.sort_indices(worst, sort_keys=[
        ("", "descending" if order.descending else "ascending")]).to_numpy())
    total = np.cumsum(k.placed[idx][ranks])
    at = int(np.searchsorted(total, limit))  # the first prefix reaching `limit` rows
    return worst[int(ranks[at])]


def behind(k: Keys, value, order: OrderBy) -> np.ndarray:
    """Containers whose every row comes strictly after ``value``: no leading special, and
    the best regular value after it (or no regular value at all)."""
    after = before(order, pa.repeat(value, len(k.best)), k.best)
    return ~k.may_lead & (after | ~k.may_regular)


def prune_topk_mask(stats: StatsTable, codes: np.ndarray, order: OrderBy, limit: int,
                    on_invalid: str = "raise") -> np.ndarray:
    """Keep-mask for ``ORDER BY order LIMIT limit`` given the containers' classify codes."""
    from prune_engine.compiler.classify import ALL_CODE, NONE_CODE

    keep = codes != NONE_CODE
    if limit <= 0:
        return np.zeros(len(codes), bool)
    k = keys(stats, order, on_invalid)
    t = threshold(k, codes == ALL_CODE, limit, order)
    if t is None:
        return keep
    return keep & ~behind(k, t, order)
