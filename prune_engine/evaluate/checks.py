"""The compiled tests: each answers, for every container at once, "may a row make this TRUE?".

A compiled predicate is a tree of these. Leaves read bounds and facts from the
:class:`~prune_engine.evaluate.context.EvalContext` and return a numpy bool array (True = may
be TRUE somewhere in the container, so keep); :class:`AllOf` and :class:`AnyOf` combine them.
Because NOT was pushed down before compiling, "may be TRUE" composes: an AND may be TRUE only
where every part may be, an OR wherever one part may be.

How a leaf decides, per container (``lo``/``hi`` the bounds, unknown bounds keep):

=================  ===================================================================
leaf               may be TRUE where
=================  ===================================================================
``x = v``          a regular value may exist and ``lo <= v <= hi``
``x != v``         a value may exist and not ``lo == hi == v`` (NaN != v)
``x < v``          a regular value may exist and ``lo < v``
``x > v``          a regular value may exist and ``hi > v``, or a NaN may exist
``x IN (S)``       some ``s`` in ``S`` has ``lo <= s <= hi`` (one lookup in sorted S)
``x NOT IN (S)``   a value may exist and not ``lo == hi`` in ``S``
``x IS NULL``      ``null_count > 0``
``x < y``          both may hold regular values and ``lo(x) < hi(y)``
``x LIKE 'p%'``    ``hi >= 'p'`` and ``lo < next('p')`` (next: the prefix's successor)
=================  ===================================================================

``explain`` asks a test that keeps a container why (:meth:`Check.why_kept`): a comparison says
whether a non-NaN value may match (``the bounds allow a match``, or ``min/max unknown``, with
the source's reason where it recorded one: :meth:`EvalContext.bounds_notes`) or only a NaN may
(``may hold NaN: nan_count unknown``, or ``holds NaN: nan_count > 0``), so that a float range
kept only for want of a NaN count says so; the other tests say what they read.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.evaluate.context import EvalContext, both, either_not, where_known
from prune_engine.evaluate.domains import DecimalDomain, Domain
from prune_engine.stats import layout
from prune_engine.stats.layout import ColumnInfo

#: NaN compared with a regular value / with NaN, under NaN = NaN and NaN above +inf
NAN_VS_VALUE = {"=": False, "!=": True, "<": False, "<=": False, ">": True, ">=": True}
VALUE_VS_NAN = {"=": False, "!=": True, "<": True, "<=": True, ">": False, ">=": False}
NAN_VS_NAN = {"=": True, "!=": False, "<": False, "<=": True, ">": False, ">=": True}

#: why a test keeps a container, as ``explain`` says it after the test's SQL
BOUNDS_ALLOW = "the bounds allow a match"
BOUNDS_UNKNOWN = "min/max unknown"
NAN_UNKNOWN = "may hold NaN: nan_count unknown"
NAN_COUNTED = "holds NaN: nan_count > 0"
UNDECIDED = "not decided by the statistics"
MAY_MATCH = "may match"
#: what a presence test (:class:`Presence`) keeps for
PRESENCE = {"value": "may hold a non-null value", "null": "may hold NULL",
            "regular": "may hold a non-NaN value"}


def _full(ctx, mask) -> np.ndarray:
    return np.ones(ctx.n, dtype=bool) if mask is None else mask


def _read(operand, ctx: EvalContext):
    """What a test of one operand reads: ``(lo, lo_valid, hi, hi_valid, facts)`` (a bound
    None: unknown everywhere; a validity None: known everywhere)."""
    lo, lov, hi, hiv = operand.bounds(ctx)
    return lo, lov, hi, hiv, operand.facts(ctx)


def _known(ctx, bound, valid) -> np.ndarray:
    """Where a bound is known (``bound`` None: nowhere; ``valid`` None: everywhere)."""
    return np.zeros(ctx.n, dtype=bool) if bound is None else _full(ctx, valid)


def _said(ctx, sql: str, why) -> np.ndarray:
    """``"<sql>: <why>"`` per container (``why``: one text, or an array of them)."""
    return np.char.add(f"{sql or 'TRUE'}: ", np.broadcast_to(np.asarray(why, dtype=str), (ctx.n,))
                       ).astype(object)


def _nan_reasons(ctx, sql: str, operands) -> np.ndarray:
    """Why only a NaN keeps: the NaN count is unknown, or counted above 0 (of every
    operand that may hold NaN)."""
    counted = np.ones(ctx.n, dtype=bool)
    for operand in operands:
        f = operand.facts(ctx)
        counted &= ~_full(ctx, f.maybe_nan) | (False if f.nan_counted is None else f.nan_counted)
    return _said(ctx, sql, np.where(counted, NAN_COUNTED, NAN_UNKNOWN))


class Check(abc.ABC):
    """Base of the compiled tests; ``sql`` is the predicate text shown by ``explain``.

    ``evaluate`` may return an array the context caches: callers combine it into new arrays
    and never write into it."""

    sql: str = ""

    @abc.abstractmethod
    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        """For every container: may a row make this test TRUE?"""

    def why_kept(self, ctx: EvalContext) -> np.ndarray:
        """For every container: why this test may be TRUE there, as ``explain`` says it
        (object array of text; read only where :meth:`evaluate` keeps)."""
        return _said(ctx, self.sql, MAY_MATCH)

    def children(self) -> tuple["Check", ...]:
        return ()

    def columns(self):
        return ()

    def __repr__(self):
        return f"{type(self).__name__}({self.sql})"


@dataclass(repr=False)
class Const(Check):
    """TRUE (possibly a row matches: also "unknown") or FALSE (no row can match)."""

    value: bool
    sql: str = ""

    def evaluate(self, ctx):
        return np.full(ctx.n, self.value, dtype=bool)

    def why_kept(self, ctx):
        return _said(ctx, self.sql, UNDECIDED)


@dataclass(repr=False)
class _Junction(Check):
    """AND / OR of its parts (at least one)."""

    parts: tuple[Check, ...]
    sql: str = ""

    def children(self):
        return self.parts


    def evaluate(self, ctx):
        return evaluate_tree(self, ctx)


class AllOf(_Junction):
    """AND: may be TRUE where every part may be."""


class AnyOf(_Junction):
    """OR: may be TRUE where some part may be."""


def evaluate_tree(check: Check, ctx: EvalContext) -> np.ndarray:
    """``check.evaluate(ctx)``, with nested AND/OR walked on an explicit stack (a predicate
    written by a program may nest them thousands deep). Over many containers an AND whose
    mask is already all False skips its remaining parts' reads."""
    if not isinstance(check, _Junction):
        return check.evaluate(ctx)
    frames = [[check, 0, None, False]]  # junction, next part, mask so far, mask is ours
    result = None
    while frames:
        frame = frames[-1]
        junction, i, out, owned = frame
        if result is not None:  # a part just finished
            op = np.logical_and if isinstance(junction, AllOf) else np.logical_or
            if out is None:  # a part's mask may be a cached one: not changed in place
                out = result
            elif owned:
                op(out, result, out=out)
            else:
                out, frame[3] = op(out, result), True
            frame[2], result = out, None
        done = i == len(junction.parts) or (
            isinstance(junction, AllOf) and out is not None and ctx.n > 65_536 and not out.any())
        if done:
            frames.pop()
            result = out
            continue
        frame[1] = i + 1
        part = junction.parts[i]
        if isinstance(part, _Junction):
            frames.append([part, 0, None, False])
        else:
            result = part.evaluate(ctx)
    return result


@dataclass(repr=False)
class Presence(Check):
    """May the operand hold a ``value`` (IS NOT NULL), a ``null`` (IS NULL), a ``nan``, or a
    ``regular`` (non-null, non-NaN) value?"""

    operand: Any
    kind: str
    sql: str = ""

    def evaluate(self, ctx):
        f = self.operand.facts(ctx)
        mask = {"value": f.maybe_value, "null": f.maybe_null, "nan": f.maybe_nan,
                "regular": f.maybe_regular}[self.kind]
        return _full(ctx, mask)

    def why_kept(self, ctx):
        if self.kind == "nan":
            return _nan_reasons(ctx, self.sql, (self.operand,))
        return _said(ctx, self.sql, PRESENCE[self.kind])


class _Comparison(Check):
    """A test whose keep splits in two: where a non-NaN value may make it TRUE, and where only
    a NaN may (:meth:`_keeps`); ``explain`` tells them apart."""

    @abc.abstractmethod
    def _keeps(self, ctx) -> tuple[np.ndarray, np.ndarray | None]:
        """``(kept by a non-NaN value, kept by a NaN)`` (the latter None: nowhere)."""

    @abc.abstractmethod
    def _known(self, ctx) -> np.ndarray:
        """Where the bounds the test reads are known."""

    def _operands(self) -> tuple:
        return (self.operand,)

    def evaluate(self, ctx):
        regular, nan = self._keeps(ctx)
        return regular if nan is None else regular | _full(ctx, nan)

    def why_kept(self, ctx):
        regular, _ = self._keeps(ctx)
        known = self._known(ctx)
        why = np.where(known, BOUNDS_ALLOW, BOUNDS_UNKNOWN).astype(object)
        notes = ctx.bounds_notes()
        if notes is not None:  # why the source left them unknown, where it said
            noted = ~known & np.not_equal(notes, None).astype(bool)
            why[noted] = [f"{BOUNDS_UNKNOWN} ({note})" for note in notes[noted]]
        out = _said(ctx, self.sql, why)
        only_nan = ~regular
        if only_nan.any():
            out[only_nan] = _nan_reasons(ctx, self.sql, self._operands())[only_nan]
        return out


@dataclass(repr=False)
class CmpLit(_Comparison):
    """``operand op value`` with ``value`` a regular (non-NaN, non-NULL) value of the domain."""

    operand: Any
    op: str
    value: Any
    domain: Domain
    sql: str = ""

    def _known(self, ctx):
        lo, lov, hi, hiv = self.operand.bounds(ctx)
        low, high = _known(ctx, lo, lov), _known(ctx, hi, hiv)
        return low if self.op in ("<", "<=") else high if self.op in (">", ">=") else low & high

    def _keeps(self, ctx):
        lo, lov, hi, hiv, f = _read(self.operand, ctx)
        s = self.value
        d = self.domain
        op = self.op
        if op in ("<", "<="):
            test = either_not(lov, d.compare(lo, op, s)) if lo is not None else None
        elif op in (">", ">="):
            test = either_not(hiv, d.compare(hi, op, s)) if hi is not None else None
        elif op == "=":
            a = either_not(lov, d.compare(lo, "<=", s)) if lo is not None else None
            b = either_not(hiv, d.compare(hi, ">=", s)) if hi is not None else None
            test = both(a, b)
        else:  # "!=": only a container whose every value equals s fails
            if lo is None or hi is None:
                test = None
            else:
                test = ~where_known(d.compare(lo, "=", s) & d.compare(hi, "=", s), lov, hiv)
        keep = _full(ctx, both(f.maybe_regular, test))
        return keep, f.maybe_nan if d.nan_capable and NAN_VS_VALUE[op] else None


@dataclass(repr=False)
class CmpCols(_Comparison):
    """``left op right`` for two operands of one domain; rows pair values of one row, which the
    statistics do not relate, so any pair of a possible left and right value counts."""

    left: Any
    op: str
    right: Any
    domain: Domain
    sql: str = ""

    def _operands(self):
        return (self.left, self.right)

    def _known(self, ctx):
        llo, llov, lhi, lhiv = self.left.bounds(ctx)
        rlo, rlov, rhi, rhiv = self.right.bounds(ctx)
        return (_known(ctx, llo, llov) & _known(ctx, lhi, lhiv) & _known(ctx, rlo, rlov)
                & _known(ctx, rhi, rhiv))

    def _keeps(self, ctx):
        llo, llov, lhi, lhiv = self.left.bounds(ctx)
        rlo, rlov, rhi, rhiv = self.right.bounds(ctx)
        fl, fr = self.left.facts(ctx), self.right.facts(ctx)
        d, op = self.domain, self.op

        def cmp(a, av, b, bv, o):
            if a is None or b is None:
                return None
            t = d.compare_arrays(a, o, b)
            if av is not None:
                t |= ~av
            if bv is not None:
                t |= ~bv
            return t

        if op in ("<", "<="):
            test = cmp(llo, llov, rhi, rhiv, op)
        elif op in (">", ">="):
            test = cmp(lhi, lhiv, rlo, rlov, op)
        elif op == "=":
            test = both(cmp(llo, llov, rhi, rhiv, "<="), cmp(rlo, rlov, lhi, lhiv, "<="))
        else:
            if any(x is None for x in (llo, lhi, rlo, rhi)):
                test = None
            else:
                same = d.compare_arrays(llo, "=", lhi) & d.compare_arrays(rlo, "=", rhi) & d.compare_arrays(llo, "=", rlo)
                test = ~where_known(same, llov, lhiv, rlov, rhiv)
        keep = _full(ctx, both(both(fl.maybe_regular, fr.maybe_regular), test))
        if not d.nan_capable:
            return keep, None
        nan = np.zeros(ctx.n, dtype=bool)
        if NAN_VS_VALUE[op]:
            nan |= _full(ctx, fl.maybe_nan) & _full(ctx, fr.maybe_regular)
        if VALUE_VS_NAN[op]:
            nan |= _full(ctx, fl.maybe_regular) & _full(ctx, fr.maybe_nan)
        if NAN_VS_NAN[op]:
            nan |= _full(ctx, fl.maybe_nan) & _full(ctx, fr.maybe_nan)
        return keep, nan


def _both_known(ctx, operand) -> np.ndarray:
    lo, lov, hi, hiv = operand.bounds(ctx)
    return _known(ctx, lo, lov) & _known(ctx, hi, hiv)


@dataclass(repr=False)
class InSet(_Comparison):
    """``operand IN (values)``: one vectorized sorted-set test (:mod:`.membership`)."""

    operand: Any
    values: Any  # domain.sorted_set(...)
    domain: Domain
    has_nan: bool = False
    sql: str = ""

    def _known(self, ctx):
        return _both_known(ctx, self.operand)

    def _keeps(self, ctx):
        lo, lov, hi, hiv, f = _read(self.operand, ctx)
        test = None
        if lo is not None and hi is not None:
            test = self.domain.any_in_range(lo, hi, self.values, lov, hiv)
        keep = _full(ctx, both(f.maybe_regular, test))
        return keep, f.maybe_nan if self.has_nan else None


@dataclass(repr=False)
class NotInSet(_Comparison):
    """``operand NOT IN (values)`` (no NULL among them): FALSE only where every value of the
    container is a member of the set: ``lo == hi`` in the set, or, on an integer grid
    (integers, dates, timestamps, small decimals), every grid point of ``[lo, hi]`` in it;
    and no NaN."""

    operand: Any
    values: Any
    domain: Domain
    sql: str = ""

    def _known(self, ctx):
        return _both_known(ctx, self.operand)

    def _keeps(self, ctx):
        lo, lov, hi, hiv, f = _read(self.operand, ctx)
        if lo is None or hi is None:
            return _full(ctx, f.maybe_value), None
        same = self.domain.compare_arrays(lo, "=", hi)
        if isinstance(lo, np.ndarray):  # one value: is it a member? (only theirs looked up)
            one = np.flatnonzero(same)
            if len(one):
                same[one] = self.domain.isin(lo[one], self.values)
        else:
            same &= self.domain.isin(lo, self.values)
        if on_grid(self.domain) and len(self.values) > 1:
            same = same | covered(lo, hi, self.values)
        keep = _full(ctx, both(f.maybe_value, ~where_known(same, lov, hiv)))
        return keep, f.maybe_nan if self.domain.nan_capable else None


def on_grid(domain: Domain) -> bool:
    """Are the domain's values consecutive integers (so a range holds finitely many)?"""
    dtype = getattr(domain, "dtype", None)
    return dtype is not None and dtype.kind in "iu" and not domain.nan_capable and (
        not isinstance(domain, DecimalDomain) or domain.small)


def covered(lo: np.ndarray, hi: np.ndarray, members: np.ndarray) -> np.ndarray:
    """For each container: is every integer of ``[lo, hi]`` one of the sorted, distinct
    ``members``? (As many members fall in the range as it has integers.)"""
    # the range's size, where it could fit the members: hi - lo in unsigned arithmetic of the
    # same width is exact when hi >= lo (no overflow)
    unsigned = np.dtype(f"uint{lo.dtype.itemsize * 8}")
    small = (hi >= lo) & (hi.view(unsigned) - lo.view(unsigned) < len(members))
    out = np.zeros(len(lo), dtype=bool)
    idx = np.flatnonzero(small)  # few containers, usually: search only theirs
    if len(idx):
        l, h = lo[idx], hi[idx]
        inside = np.searchsorted(members, h, side="right") - \
            np.searchsorted(members, l, side="left")
        out[idx] = inside == h.astype(np.int64) - l.astype(np.int64) + 1
    return out


@dataclass(repr=False)
class PrefixRange(Check):
    """``x LIKE 'prefix...'``: a value starting with ``prefix`` lies in ``[prefix, upper)``
    (``upper`` None: no successor, only the lower end bounds)."""

    operand: Any
    prefix: Any
    upper: Any
    domain: Domain
    sql: str = ""

    def evaluate(self, ctx):
        lo, lov, hi, hiv, f = _read(self.operand, ctx)
        test = None
        if hi is not None:
            test = either_not(hiv, self.domain.compare(hi, ">=", self.prefix))
        if lo is not None and self.upper is not None:
            test = both(test, either_not(lov, self.domain.compare(lo, "<", self.upper)))
        return _full(ctx, both(f.maybe_value, test))


@dataclass(repr=False)
class AllStartWith(Check):
    """``x NOT LIKE 'prefix%'``: FALSE where both bounds start with ``prefix`` (then every value
    between them does too, so every value matches the LIKE)."""

    operand: Any
    prefix: Any
    upper: Any
    domain: Domain
    sql: str = ""

    def evaluate(self, ctx):
        lo, lov, hi, hiv, f = _read(self.operand, ctx)
        if lo is None or hi is None or self.upper is None:
            return _full(ctx, f.maybe_value)
        inside = self.domain.compare(lo, ">=", self.prefix) & self.domain.compare(hi, "<", self.upper)
        return _full(ctx, both(f.maybe_value, ~where_known(inside, lov, hiv)))


def _containers(ctx: EvalContext) -> pa.ChunkedArray | None:
    """The container ids, which an index probe names in its errors (None: the table has none)."""
    table = ctx.stats.table
    return table.column(layout.CONTAINER) if layout.CONTAINER in table.column_names else None


@dataclass(repr=False)
class IndexProbe(Check):
    """An n-gram index probe (LIKE/ILIKE, =/IN, regexp_like on an indexed string column)."""

    column: ColumnInfo
    kind: str  # "like" | "equals" | "regex"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    sql: str = ""

    def evaluate(self, ctx):
        from prune_engine.ngram import probe  # numba: loaded by the first index probe

        index = ctx.leaf(layout.NGRAM_INDEX, (self.column.path[0],))
        if index is None:
            return np.ones(ctx.n, dtype=bool)
        containers = _containers(ctx)
        fn = {"like": probe.like_may_match, "equals": probe.equals_may_match, "regex": probe.regex_may_match}[self.kind]
        out = fn(index, *self.args, on_invalid=ctx.on_invalid, containers=containers, **self.kwargs)
        return np.asarray(out, dtype=bool)


@dataclass(repr=False)
class BloomProbe(Check):
    """``x = v`` / ``x IN (values)`` against the Parquet Bloom filters of ``x``: FALSE where
    every filter of the container proves each value absent (values coerced to ``x``'s type)."""

    column: ColumnInfo
    values: tuple
    sql: str = ""

    def evaluate(self, ctx):
        from prune_engine.bloom import probe  # numba: loaded by the first Bloom probe

        index = ctx.leaf(layout.BLOOM_FILTER, (self.column.name,))
        if index is None:
            return np.ones(ctx.n, dtype=bool)
        return probe.may_contain(index, self.values, self.column.type, on_invalid=ctx.on_invalid,
                                 containers=_containers(ctx))


@dataclass(repr=False)
class ValueSetCheck(Check):
    """``x = v`` / ``x IN (values)``: FALSE where the container's exact set of values (its
    dictionary) holds none of them; negated (``x != v`` / ``x NOT IN``): FALSE where every
    value of the set is one of them. A missing set keeps."""

    column: ColumnInfo
    domain: Domain
    values: tuple
    negated: bool = False
    sql: str = ""

    def evaluate(self, ctx):
        sets = ctx.leaf(layout.VALUE_SET, (self.column.name,))
        if sets is None or not (pa.types.is_list(sets.type) or pa.types.is_large_list(sets.type)):
            return np.ones(ctx.n, dtype=bool)
        flat = pc.list_flatten(sets)
        if flat.type != self.domain.type:
            try:
                flat = flat.cast(self.domain.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return np.ones(ctx.n, dtype=bool)
        parents = np.asarray(pc.list_parent_indices(sets).to_numpy(zero_copy_only=False))
        values, valid = self.domain.view(flat)
        member = np.asarray(self.domain.isin(values, self.domain.sorted_set(list(self.values))),
                            dtype=bool)
        if valid is not None:
            member = member & valid  # a null in a set (never written) matches nothing
        deciding = ~member if self.negated else member
        keep = np.bincount(parents, weights=deciding, minlength=ctx.n) > 0
        return keep | np.asarray(sets.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def mask_to_arrow(mask: np.ndarray) -> pa.BooleanArray:
    """A numpy keep-mask as a null-free Arrow boolean array (bits packed by numpy)."""
    bits = np.packbits(mask, bitorder="little")
    return pa.BooleanArray.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(bits)])
