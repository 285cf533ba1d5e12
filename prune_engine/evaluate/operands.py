"""Operands: what a comparison's non-literal side is, and the bounds it takes per container.

A column's bounds are its min/max statistics. A monotone function of a column has bounds
computed from the column's: ``x + c`` is in ``[min + c, max + c]``, ``-x`` in ``[-max, -min]``,
an order-preserving ``CAST`` in ``[cast(min), cast(max)]``. NULL and NaN facts carry over from
the column (``x + c`` is NULL exactly where ``x`` is).

Integer results have a type, and engines differ where a value leaves it: DuckDB fails, Spark's
non-ANSI mode and Polars wrap around (``127 + 1`` is ``-128`` in TINYINT), others widen. A
prune must hold for all of them, so a container's derived bounds are known only when both of
the column's bounds are known and both images lie inside the narrowest type an engine may
compute in (:func:`prune_engine.compiler.lower.result_range`): then no value of the container
overflows anywhere, and every engine computes the exact value. Otherwise both bounds are
unknown (a wrapped value may lie anywhere) and the container is kept. Narrowing integer casts
follow the same rule. A cast that changes the time zone reading (a zoned timestamp to a date,
a zone-less one to a zoned one) shifts instants by the session's offset, so its bounds widen
by a day. A temporal bound at the end of its storage range (``±(2**63 - 1)``, or
``±(2**31 - 1)`` days) is DuckDB's ``±infinity``, which stays infinite through a cast: unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from prune_engine.evaluate.context import EvalContext, Facts, both
from prune_engine.evaluate.domains import DAY_NS, Domain, FloatDomain, IntDomain, TemporalDomain, domain_of
from prune_engine.stats.layout import ColumnInfo


@dataclass(frozen=True, eq=False)
class ColumnOperand:
    info: ColumnInfo
    domain: Domain

    @property
    def column(self) -> ColumnInfo:
        return self.info

    def bounds(self, ctx: EvalContext):
        return ctx.bounds(self.info, self.domain)

    def facts(self, ctx: EvalContext) -> Facts:
        return ctx.facts(self.info)

    def sql(self) -> str:
        return ".".join(self.info.path)

    @property
    def limits(self):
        return self.domain.limits


_I64 = (-(2**63), 2**63 - 1)


class _Derived:
    """What operands computed from another operand share: its column, NULLs and name."""

    @property
    def column(self) -> ColumnInfo:
        return self.base.column

    def facts(self, ctx) -> Facts:
        return self.base.facts(ctx)

    def sql(self) -> str:
        return self.text

    def base_bounds(self, ctx):
        """The base operand's bounds, or None when either side is missing altogether."""
        lo, lov, hi, hiv = self.base.bounds(ctx)
        if lo is None or hi is None:
            return None
        return lo, lov, hi, hiv


def _no_bounds(ctx):
    z = np.zeros(ctx.n, dtype=bool)
    return None, z, None, z


def _in_range(values: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return (values >= lo) & (values <= hi)


def _whole(lo, lov, hi, hiv, lo_in: int, hi_in: int) -> np.ndarray:
    """Containers whose bounds are both known and both inside ``[lo_in, hi_in]``: there every
    value is, so a monotone map defined on that range is exact for the whole container."""
    return both(both(lov, hiv), _in_range(lo, lo_in, hi_in) & _in_range(hi, lo_in, hi_in))


@dataclass(frozen=True, eq=False)
class ArithOperand(_Derived):
    """``base * scale + offset`` with integer or float64 arithmetic (``scale`` is +-1 or a
    literal factor); ``limits`` is the result type's range for integer overflow checks."""

    base: "Operand"
    scale: float | int
    offset: float | int
    domain: Domain
    limits: tuple[int, int] | None
    text: str

    def bounds(self, ctx):
        b = self.base_bounds(ctx)
        if b is None:
            return _no_bounds(ctx)
        lo, lov, hi, hiv = b
        if self.scale < 0:
            lo, lov, hi, hiv = hi, hiv, lo, lov
        if isinstance(self.domain, FloatDomain):
            with np.errstate(all="ignore"):
                a = lo.astype(np.float64) * self.scale + self.offset
                b = hi.astype(np.float64) * self.scale + self.offset
            return a, lov, b, hiv
        safe = self.safe_inputs()
        if safe is None:
            return _no_bounds(ctx)
        ok = _whole(lo, lov, hi, hiv, *safe)
        # exact: the images lie in int64, and int64 arithmetic wraps modulo 2**64
        with np.errstate(all="ignore"):
            a = np.where(ok, lo, 0).astype(np.int64) * np.int64(self.scale) + np.int64(self.offset)
            b = np.where(ok, hi, 0).astype(np.int64) * np.int64(self.scale) + np.int64(self.offset)
        return a, ok, b, ok

    def safe_inputs(self) -> tuple[int, int] | None:
        """The inputs ``x`` (inside int64) whose image ``x * scale + offset`` stays inside the
        result range and int64, computed exactly; None when there are none.

        >>> op = ArithOperand(None, 1, -1, None, (-(2**63), 2**63 - 1), "x - 1")
        >>> op.safe_inputs() == (-(2**63) + 1, 2**63 - 1)
        True
        """
        s, c = int(self.scale), int(self.offset)
        rmin, rmax = max(self.limits[0], _I64[0]), min(self.limits[1], _I64[1])
        if s == 0:
            return None
        if s > 0:  # rmin <= x*s + c <= rmax
            lo_in, hi_in = -((c - rmin) // s), (rmax - c) // s
        else:
            lo_in, hi_in = -((c - rmax) // s), (rmin - c) // s
        lo_in, hi_in = max(lo_in, _I64[0]), min(hi_in, _I64[1])
        return (lo_in, hi_in) if lo_in <= hi_in else None


@dataclass(frozen=True, eq=False)
class CastOperand(_Derived):
    """An order-preserving ``CAST``: integer widening or in-range narrowing, integer to
    float, float to float, date to timestamp, timestamp to a finer unit or to date."""

    base: "Operand"
    domain: Domain
    kind: str
    text: str

    @property
    def limits(self):
        return self.domain.limits

    def facts(self, ctx):
        f = self.base.facts(ctx)
        if self.kind == "int_to_float":
            return Facts(f.maybe_value, f.maybe_null, np.zeros(ctx.n, bool), f.maybe_value)
        return f

    def bounds(self, ctx):
        b = self.base_bounds(ctx)
        if b is None:
            return _no_bounds(ctx)
        lo, lov, hi, hiv = b
        if self.kind in ("int_to_float", "float_to_float"):
            with np.errstate(all="ignore"):
                return lo.astype(self.domain.dtype), lov, hi.astype(self.domain.dtype), hiv
        if self.kind == "int_to_int":
            ok = _whole(lo, lov, hi, hiv, *self.domain.limits)
            return (np.where(ok, lo, 0).astype(self.domain.dtype), ok,
                    np.where(ok, hi, 0).astype(self.domain.dtype), ok)
        src, dst = self.base.domain.unit_ns, self.domain.unit_ns
        # DuckDB reads the ends of the storage range as -infinity / infinity, which a cast keeps
        infinity = self.base.domain.limits[1]
        lov, hiv = both(lov, lo > -infinity), both(hiv, hi < infinity)
        if src >= dst:  # to a finer unit: exact multiplication, unless it overflows
            factor = src // dst
            limit = (2**63 - 1) // factor
            lov = hiv = _whole(lo, lov, hi, hiv, -limit, limit)
            a = np.where(lov, lo, 0).astype(np.int64) * factor
            b = np.where(hiv, hi, 0).astype(np.int64) * factor
        else:  # to a coarser unit: engines floor, truncate or round; floor(lo) and ceil(hi) bound all
            factor = dst // src
            a = np.floor_divide(lo.astype(np.int64), factor)
            b = np.floor_divide(hi.astype(np.int64), factor) + (np.mod(hi.astype(np.int64), factor) != 0)
        if zoned(self.base.domain) != zoned(self.domain):  # read in the session's zone: +-1 day
            day = DAY_NS // dst
            tmin, tmax = self.domain.limits
            lov, hiv = both(lov, a >= tmin + day), both(hiv, b <= tmax - day)
            a, b = np.where(lov, a, tmin + day) - day, np.where(hiv, b, tmax - day) + day
        return a.astype(self.domain.dtype), lov, b.astype(self.domain.dtype), hiv


def zoned(domain: Domain) -> bool:
    """Does the domain hold instants (a timestamp with a zone), rather than wall-clock values?"""
    return pa.types.is_timestamp(domain.type) and domain.type.tz is not None


Operand = ColumnOperand | ArithOperand | CastOperand


def cast_kind(src: Domain, to: pa.DataType) -> str | None:
    """How a CAST from ``src`` to ``to`` preserves order, or None when it does not (or may not)."""
    dst = domain_of(to)
    if isinstance(src, IntDomain):
        if isinstance(dst, IntDomain):
            return "int_to_int"
        if isinstance(dst, FloatDomain):
            return "int_to_float"
    if isinstance(src, FloatDomain) and isinstance(dst, FloatDomain):
        return "float_to_float"
    if isinstance(src, TemporalDomain) and isinstance(dst, TemporalDomain):
        if pa.types.is_timestamp(to) or pa.types.is_date32(to):
            return "temporal"
    return None
