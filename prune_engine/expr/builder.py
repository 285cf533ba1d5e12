"""The Python builder front end: ``pe.col("x") > 5``.

A :class:`Builder` wraps an immutable node and overloads Python operators to make new ones;
``&``, ``|`` and ``~`` are AND, OR and NOT (Python's ``and``/``or``/``not`` cannot be
overloaded). ``Builder.node`` is the expression tree.

>>> import prune_engine as pe
>>> str((pe.col("x") > 5) & pe.col("s").like("ab%"))
"x > 5 AND s LIKE 'ab%'"
>>> str(~pe.col("st.a").isin([1, 2]) | pe.col("b").is_null())
'st.a NOT IN (1, 2) OR b IS NULL'
"""

from __future__ import annotations

from typing import Any, Iterable

import pyarrow as pa

from prune_engine.expr import nodes as n
from prune_engine.expr.from_arrow import scalar_literal


def _node(value: Any) -> n.Expr:
    if isinstance(value, Builder):
        return value.node
    if isinstance(value, n.Expr):
        return value
    if isinstance(value, pa.Scalar):
        return scalar_literal(value)
    return n.Literal(value)


def col(name: str | Iterable[str]) -> "Builder":
    """A column reference; ``"st.a"`` or ``("st", "a")`` name a nested field."""
    path = tuple(name.split(".")) if isinstance(name, str) else tuple(name)
    if isinstance(name, str) and '"' in name:
        path = (name,)
    return Builder(n.Column(path))


def lit(value: Any, type: pa.DataType | None = None) -> "Builder":
    """A literal, optionally with an explicit Arrow type."""
    return Builder(n.Literal(value, type))


class Builder:
    """Operator-overloading wrapper around an expression node."""

    __slots__ = ("node",)

    def __init__(self, node: n.Expr):
        self.node = node

    # comparisons -------------------------------------------------------------------------
    def _cmp(self, op: str, other: Any) -> "Builder":
        return Builder(n.Compare(op, self.node, _node(other)))

    def __eq__(self, other):  # type: ignore[override]
        return self._cmp("=", other)

    def __ne__(self, other):  # type: ignore[override]
        return self._cmp("!=", other)

    def __lt__(self, other):
        return self._cmp("<", other)

    def __le__(self, other):
        return self._cmp("<=", other)

    def __gt__(self, other):
        return self._cmp(">", other)

    def __ge__(self, other):
        return self._cmp(">=", other)

    __hash__ = None  # a Builder is not a value: == builds an expression

    def __bool__(self):
        raise TypeError("use & | ~ to combine predicates, not 'and', 'or', 'not' or chained comparisons")

    # boolean connectives -----------------------------------------------------------------
    def __and__(self, other):
        return Builder(n.And((self.node, _node(other))))

    def __rand__(self, other):
        return Builder(n.And((_node(other), self.node)))

    def __or__(self, other):
        return Builder(n.Or((self.node, _node(other))))

    def __ror__(self, other):
        return Builder(n.Or((_node(other), self.node)))

    def __invert__(self):
        return Builder(self.node.invert())

    # arithmetic --------------------------------------------------------------------------
    def __add__(self, other):
        return Builder(n.Arith("+", self.node, _node(other)))

    def __radd__(self, other):
        return Builder(n.Arith("+", _node(other), self.node))

    def __sub__(self, other):
        return Builder(n.Arith("-", self.node, _node(other)))

    def __rsub__(self, other):
        return Builder(n.Arith("-", _node(other), self.node))

    def __mul__(self, other):
        return Builder(n.Arith("*", self.node, _node(other)))

    def __rmul__(self, other):
        return Builder(n.Arith("*", _node(other), self.node))

    def __neg__(self):
        return Builder(n.Negate(self.node))

    # predicates --------------------------------------------------------------------------
    def isin(self, values: Iterable[Any]) -> "Builder":
        """``self IN (values)``."""
        return Builder(n.InList(self.node, tuple(_node(v) for v in values)))

    def between(self, low: Any, high: Any) -> "Builder":
        """``self BETWEEN low AND high`` (inclusive)."""
        return (self >= low) & (self <= high)

    def is_null(self) -> "Builder":
        return Builder(n.IsNull(self.node))

    def is_not_null(self) -> "Builder":
        return Builder(n.IsNull(self.node, negated=True))

    def is_nan(self) -> "Builder":
        """``isnan(x)``: TRUE for NaN, NULL for NULL, FALSE otherwise (``~`` gives ``NOT isnan``)."""
        return Builder(n.IsNan(self.node))

    def like(self, pattern: str, escape: str | None = None) -> "Builder":
        """SQL ``LIKE`` (case-sensitive; ``%`` any run, ``_`` one character)."""
        return Builder(n.Like(self.node, pattern, escape))

    def ilike(self, pattern: str, escape: str | None = None) -> "Builder":
        """SQL ``ILIKE`` (case-insensitive ``LIKE``)."""
        return Builder(n.Like(self.node, pattern, escape, case_insensitive=True))

    def rlike(self, pattern: str) -> "Builder":
        """``regexp_like(self, pattern)``: the regex matches somewhere in the value."""
        return Builder(n.RegexpLike(self.node, pattern))

    def is_distinct_from(self, other: Any) -> "Builder":
        return Builder(n.IsDistinct(self.node, _node(other)))

    def is_not_distinct_from(self, other: Any) -> "Builder":
        return Builder(n.IsDistinct(self.node, _node(other), negated=True))

    def cast(self, to: pa.DataType) -> "Builder":
        return Builder(n.Cast(self.node, to))

    def __str__(self) -> str:
        return str(self.node)

    def __repr__(self) -> str:
        return f"<expr {self.node}>"
