"""What SQL constructs mean as nodes: written once for the two SQL readers.

:mod:`prune_engine.expr.sql` maps sqlglot's syntax tree onto nodes; :mod:`prune_engine.expr._fast_sql`
reads the common predicate subset itself. Both build the nodes of a number, a unary minus, a
``NOT``, a ``BETWEEN`` and an ``IN`` list here, so that the same text gives one tree either way.

>>> number_literal("1.50", duckdb=True), number_literal("1e3", duckdb=True)
(Literal(value=Decimal('1.50'), type=None), Literal(value=1000.0, type=None))
>>> str(negate_predicate(n.IsNull(n.Column("x")))), str(negate_value(n.Literal(5)))
('x IS NOT NULL', '-5')
"""

from __future__ import annotations

import decimal
import re

import pyarrow as pa

from prune_engine.expr import nodes as n

NUMBER_INT = re.compile(r"[0-9]+")
NUMBER_DECIMAL = re.compile(r"[0-9]*\.[0-9]*")
#: DuckDB reads a decimal literal of more digits than this (leading zeros counted) as a DOUBLE
DUCKDB_DECIMAL_DIGITS = 38

#: predicates with a negated form of their own: ``NOT`` over them sets their flag
_INVERTIBLE = (n.IsNull, n.IsNan, n.IsBool, n.IsDistinct, n.InList, n.Like, n.RegexpLike)


def number_literal(text: str, duckdb: bool) -> n.Expr:
    """The literal of a number as written: ``1`` an int, ``1.5`` an exact decimal (a DOUBLE
    past 38 digits, where ``duckdb`` reads it so), ``1e3`` a float."""
    if NUMBER_INT.fullmatch(text):
        return n.Literal(int(text))
    if NUMBER_DECIMAL.fullmatch(text):
        if duckdb and sum(ch.isdigit() for ch in text) > DUCKDB_DECIMAL_DIGITS:
            return n.Literal(float(text))  # too wide for DECIMAL: DuckDB reads a DOUBLE
        return n.Literal(decimal.Decimal(text))
    try:
        return n.Literal(float(text))
    except ValueError:
        return n.Func("literal", ())


def negate_value(arg: n.Expr) -> n.Expr:
    """Unary minus: folded into an untyped number literal, else :class:`~n.Negate`."""
    if (isinstance(arg, n.Literal) and arg.type is None and not isinstance(arg.value, bool)
            and isinstance(arg.value, (int, float, decimal.Decimal))):
        # copy_negate: exact, where unary minus would round to the context's 28 digits
        value = arg.value.copy_negate() if isinstance(arg.value, decimal.Decimal) else -arg.value
        return n.Literal(value)
    return n.Negate(arg)


def negate_predicate(inner: n.Expr) -> n.Expr:
    """``NOT inner``: the negated form of a predicate that has one (``IS NULL``, ``IN``,
    ``LIKE``, ...), else :class:`~n.Not`."""
    if isinstance(inner, _INVERTIBLE):
        return inner.invert()
    return n.Not(inner)


def between(x: n.Expr, low: n.Expr, high: n.Expr) -> n.Expr:
    """``x BETWEEN low AND high``: ``x >= low AND x <= high``; one DOUBLE bound makes engines
    compare all three as DOUBLE, FLOAT bounds as FLOAT."""
    kinds = {_float_kind(low), _float_kind(high)} - {None}
    if kinds:
        to = pa.float32() if kinds == {"float"} else pa.float64()
        low, high = _as_float(low, to), _as_float(high, to)
    return n.And((n.Compare(">=", x, low), n.Compare("<=", x, high)))


def in_list(x: n.Expr, values: tuple[n.Expr, ...]) -> n.Expr:
    """``x IN (values)``: an :class:`~n.InList` of literals, else the opaque ``in`` function."""
    if all(isinstance(v, n.Literal) for v in values):
        return n.InList(x, values)
    return n.Func("in", (x,) + values)


def _float_kind(e: n.Expr) -> str | None:
    """``"double"`` for a float literal or a literal cast to DOUBLE, ``"float"`` for one cast to
    FLOAT, else None."""
    if isinstance(e, n.Literal):
        return "double" if isinstance(e.value, float) else None
    if isinstance(e, n.Cast) and isinstance(e.arg, n.Literal) and pa.types.is_floating(e.to):
        return "float" if pa.types.is_float32(e.to) else "double"
    return None


def _as_float(e: n.Expr, to: pa.DataType) -> n.Expr:
    """An exact numeric literal, or a text literal (engines cast text to the common type),
    cast to the float type ``to`` (others unchanged)."""
    if isinstance(e, n.Literal) and isinstance(e.value, (int, decimal.Decimal)) and not isinstance(e.value, bool):
        return n.Literal(float(e.value)) if pa.types.is_float64(to) else n.Cast(e, to)
    if isinstance(e, n.Literal) and isinstance(e.value, str) and e.type is None:
        return n.Cast(e, to)
    return e
