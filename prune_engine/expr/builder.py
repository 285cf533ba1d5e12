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


#: Python constants that become a literal as they are (checked first: chains of thousands)
_PLAIN = frozenset({int, float, str, bool})


def _node(value: Any) -> n.Expr:
    if type(value) in _PLAIN:
        return n.Literal(value)
    if isinstance(value, Builder):
        return value.node
    if isinstance(value, n.Expr):
        return value
    if isinstance(value, pa.Scalar):
        return scalar_literal(value)
    return n.Literal(value)


def _operand(kind: type, value: Any):
    """An operand of a ``kind`` chain: a chain of the same kind or a comparison not built yet
    stays linked (built once, with the whole chain); anything else becomes its node now."""
    if type(value) is Builder:  # (the common case, in one step)
        node = value._node
        if node is not None:
            return node
        if value._op is kind or type(value._op) is str:
            return value
    return _node(value)


def _build_chain(root: "Builder") -> n.Expr:
    """The flat n-ary node of a chain of ``&`` (or ``|``), its operands in written order,
    from an explicit stack (chains nest thousands deep, both ways)."""
    kind, parts = root._op, []
    stack = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, Builder):
            if item._node is None and item._op is kind:
                stack.append(item._right)
                stack.append(item._left)
                continue
            item = item.node
        parts.append(item)
    return kind(tuple(parts))


def col(name: str | Iterable[str]) -> "Builder":
    """A column reference; ``name`` ``"st.a"`` or ``("st", "a")`` names a nested field.

    >>> import prune_engine as pe
    >>> str((pe.col("price") > 100) & pe.col("st.a").isin([1, 2]))
    'price > 100 AND st.a IN (1, 2)'
    """
    if not isinstance(name, str) and not (isinstance(name, Iterable) and not isinstance(name, bytes)):
        raise TypeError(f"col takes a column name, such as 'price' or 'st.a'; got {_describe(name)}")
    path = tuple(name.split(".")) if isinstance(name, str) else tuple(name)
    if not path or not all(isinstance(p, str) for p in path):
        raise TypeError(f"col takes a column name, such as 'price' or 'st.a'; got {_describe(name)}")
    if isinstance(name, str) and '"' in name:
        path = (name,)
    return Builder(n.Column(path))


def lit(value: Any, type: pa.DataType | None = None) -> "Builder":
    """A literal: ``value`` (a Python value), optionally with an explicit Arrow ``type``.

    >>> import pyarrow as pa, prune_engine as pe
    >>> str(pe.col("d") >= pe.lit(1, pa.int8()))
    'd >= 1'
    """
    return Builder(n.Literal(value, type))


class Builder:
    """Operator-overloading wrapper around an expression node.

    ``a & b & c ...`` written by a program may chain thousands of terms: each ``&`` (``|``)
    only links its operands, and :attr:`node` builds the one flat n-ary node once, without
    recursion. A comparison with a plain constant (``x > 5``) only records its operands too,
    and is built with the chain. ``~`` over an AND or OR is ``NOT (...)`` (pushed down when
    compiling), so that a nest of ``~`` costs nothing per level.
    """

    __slots__ = ("_node", "_op", "_left", "_right")

    def __init__(self, node: n.Expr):
        self._node = node
        self._op = None  # not built yet: n.And / n.Or for a chain, "<" ... for a comparison
        self._left = self._right = None  # its operands: a chain's nodes or chains of its
        # kind or comparisons; a comparison's node and constant

    @classmethod
    def _link(cls, op: Any, left: Any, right: Any) -> "Builder":
        """A chain or comparison ``op`` of ``left`` and ``right``, not built yet."""
        out = cls.__new__(cls)
        out._node, out._op, out._left, out._right = None, op, left, right
        return out

    @classmethod
    def _chain(cls, kind: type, left: Any, right: Any) -> "Builder":
        return cls._link(kind, _operand(kind, left), _operand(kind, right))

    @property
    def node(self) -> n.Expr:
        """The expression tree."""
        if self._node is None:
            if type(self._op) is str:
                self._node = n.Compare(self._op, self._left, n.Literal(self._right))
            else:
                self._node = _build_chain(self)
            self._op = self._left = self._right = None
        return self._node

    # comparisons -------------------------------------------------------------------------
    def _cmp(self, op: str, other: Any) -> "Builder":
        node = self.node if self._node is None else self._node
        if type(other) in _PLAIN:  # (a constant of a long chain: its node comes with the chain's)
            return Builder._link(op, node, other)
        return Builder(n.Compare(op, node, _node(other)))

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
        return Builder._chain(n.And, self, other)

    def __rand__(self, other):
        return Builder._chain(n.And, other, self)

    def __or__(self, other):
        return Builder._chain(n.Or, self, other)

    def __ror__(self, other):
        return Builder._chain(n.Or, other, self)

    def __invert__(self):
        node = self.node
        if isinstance(node, (n.And, n.Or)):
            return Builder(n.Not(node))  # pushed down by the compiler, once for the whole tree
        if isinstance(node, n.Not):
            return Builder(node.arg)
        return Builder(node.invert())

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
        """``self IN (values)``: ``values`` an iterable of constants (a list, tuple, set, ...)."""
        if isinstance(values, (str, bytes, Builder, n.Expr)) or not isinstance(values, Iterable):
            raise TypeError(f".isin takes an iterable of values, such as [1, 2, 3]; got "
                            f"{_describe(values)}")
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
        return Builder(n.Like(self.node, *_like_args("like", pattern, escape)))

    def ilike(self, pattern: str, escape: str | None = None) -> "Builder":
        """SQL ``ILIKE`` (case-insensitive ``LIKE``)."""
        return Builder(n.Like(self.node, *_like_args("ilike", pattern, escape), case_insensitive=True))

    def rlike(self, pattern: str) -> "Builder":
        """``regexp_like(self, pattern)``: the regex matches somewhere in the value."""
        if not isinstance(pattern, str):
            raise TypeError(f".rlike takes a regular expression as a str, such as '^ab'; got "
                            f"{_describe(pattern)}")
        return Builder(n.RegexpLike(self.node, pattern))

    def is_distinct_from(self, other: Any) -> "Builder":
        return Builder(n.IsDistinct(self.node, _node(other)))

    def is_not_distinct_from(self, other: Any) -> "Builder":
        return Builder(n.IsDistinct(self.node, _node(other), negated=True))

    def cast(self, to: pa.DataType) -> "Builder":
        """``CAST(self AS to)``, ``to`` a pyarrow type (``pa.int64()``)."""
        if not isinstance(to, pa.DataType):
            raise TypeError(f".cast takes a pyarrow type, such as pa.int64(); got {_describe(to)}")
        return Builder(n.Cast(self.node, to))

    def __str__(self) -> str:
        return str(self.node)

    def __repr__(self) -> str:
        return f"<expr {self.node}>"


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _like_args(method: str, pattern: Any, escape: Any) -> tuple[str, str | None]:
    """Check the arguments of ``.like`` / ``.ilike``: a pattern (str) and an escape character."""
    if not isinstance(pattern, str):
        raise TypeError(f".{method} takes a pattern as a str, such as 'ab%' (% any run, _ one "
                        f"character); got {_describe(pattern)}")
    if escape is not None and not isinstance(escape, str):
        raise TypeError(f".{method} takes escape= as a one-character str, such as '\\\\'; got "
                        f"{_describe(escape)}")
    return pattern, escape
