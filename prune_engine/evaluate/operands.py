"""Operands: what a comparison's non-literal side is, and the bounds it takes per container.

A column's bounds are its min/max statistics. A monotone function of a column has bounds
computed from the column's: ``x + c`` is in ``[min + c, max + c]``, ``-x`` in ``[-max, -min]``,
an order-preserving ``CAST`` in ``[cast(min), cast(max)]``. Where that arithmetic would leave
the result's type range for a container (an engine would fail or wrap around), that
container's bounds become unknown, so it is kept. NULL and NaN facts carry over from the
column (``x + c`` is NULL exactly where ``x`` is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from prune_engine.compile.bind import ColumnInfo
from prune_engine.evaluate.context import EvalContext, Facts, both
from prune_engine.evaluate.domains import Domain, FloatDomain, IntDomain, TemporalDomain, domain_of


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
        # exact integer arithmetic: check the inputs so that no intermediate overflows
        rmin, rmax = self.limits
        ok_lo, ok_hi = self._safe_inputs(rmin, rmax)
        a_ok = _in_range(lo, *ok_lo) if ok_lo else np.zeros(len(lo), bool)
        b_ok = _in_range(hi, *ok_hi) if ok_hi else np.zeros(len(hi), bool)
        with np.errstate(all="ignore"):
            a = np.where(a_ok, lo, 0).astype(np.int64) * np.int64(self.scale) + np.int64(self.offset)
            b = np.where(b_ok, hi, 0).astype(np.int64) * np.int64(self.scale) + np.int64(self.offset)
        return a, both(lov, a_ok), b, both(hiv, b_ok)

    def _safe_inputs(self, rmin: int, rmax: int):
        """The input range whose image ``x * scale + offset`` stays inside [rmin, rmax]."""
        s, c = int(self.scale), int(self.offset)
        if s == 0:
            return None, None
        lo_in = (rmin - c) / s
        hi_in = (rmax - c) / s
        if s < 0:
            lo_in, hi_in = hi_in, lo_in
        rng = (max(math.ceil(lo_in), _I64[0]), min(math.floor(hi_in), _I64[1]))
        if rng[0] > rng[1]:
            return None, None
        return rng, rng


@dataclass(frozen=True, eq=False)
class CastOperand(_Derived):
    """An order-preserving ``CAST``: integer widening or in-range narrowing, integer to
    float, float to float, date to timestamp, timestamp to a finer unit or to date."""

    base: "Operand"
    domain: Domain
    kind: str
    text: str

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
            tmin, tmax = self.domain.limits
            a_ok = _in_range(lo, tmin, tmax)
            b_ok = _in_range(hi, tmin, tmax)
            return (np.where(a_ok, lo, 0).astype(self.domain.dtype), both(lov, a_ok),
                    np.where(b_ok, hi, 0).astype(self.domain.dtype), both(hiv, b_ok))
        src, dst = self.base.domain.unit_ns, self.domain.unit_ns
        if src >= dst:  # to a finer unit: exact multiplication, unless it overflows
            factor = src // dst
            limit = (2**63 - 1) // factor
            a_ok = _in_range(lo, -limit, limit)
            b_ok = _in_range(hi, -limit, limit)
            a = np.where(a_ok, lo, 0).astype(np.int64) * factor
            b = np.where(b_ok, hi, 0).astype(np.int64) * factor
            return a.astype(self.domain.dtype), both(lov, a_ok), b.astype(self.domain.dtype), both(hiv, b_ok)
        # to a coarser unit: engines floor, truncate or round; floor(lo) and ceil(hi) bound all
        factor = dst // src
        return (np.floor_divide(lo.astype(np.int64), factor).astype(self.domain.dtype), lov,
                (-np.floor_divide(-hi.astype(np.int64), factor)).astype(self.domain.dtype), hiv)


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
