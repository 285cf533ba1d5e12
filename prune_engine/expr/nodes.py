"""Immutable expression nodes: the one tree that every front end produces.

Nodes are frozen, hashable dataclasses compared by structure. Each predicate node that has an
SQL complement carries a ``negated`` flag, so that pushing ``NOT`` down is a lookup
(:meth:`Expr.invert`) rather than a case analysis. ``str(node)`` renders SQL text.

>>> e = Compare("<", Column(("x",)), Literal(5))
>>> str(e), str(e.invert())
('x < 5', 'x >= 5')
"""

from __future__ import annotations

import abc
import datetime as _dt
import decimal as _decimal
import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")
#: NOT (a op b)  ==  a COMPLEMENT[op] b, with SQL three-valued logic (NULL stays NULL)
COMPLEMENT = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
#: a op b  ==  b FLIPPED[op] a
FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class Expr(abc.ABC):
    """Base of every node."""

    def invert(self) -> "Expr":
        """The SQL complement of this predicate (``NOT self``), pushed one level down."""
        return Not(self)

    def children(self) -> tuple["Expr", ...]:
        return ()

    def walk(self):
        """Yield this node and every node below it, parents first."""
        yield self
        for child in self.children():
            yield from child.walk()

    def __str__(self) -> str:
        return self.sql()

    @abc.abstractmethod
    def sql(self) -> str:
        """The node as SQL text."""


def _quote_ident(name: str) -> str:
    if name.isidentifier() and name.lower() not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


_RESERVED = {"and", "or", "not", "is", "null", "true", "false", "in", "like", "between", "select",
             "from", "where", "order", "group", "by", "case", "when", "then", "else", "end"}


@dataclass(frozen=True)
class Column(Expr):
    """A column reference; nested struct fields are a path: ``Column(("st", "a"))``."""

    path: tuple[str, ...]

    def __post_init__(self):
        if isinstance(self.path, str):
            object.__setattr__(self, "path", (self.path,))

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def sql(self) -> str:
        return ".".join(_quote_ident(p) for p in self.path)


@dataclass(frozen=True)
class Literal(Expr):
    """A constant. ``type`` is the Arrow type when the front end knows it (else inferred)."""

    value: Any
    type: pa.DataType | None = None

    def __eq__(self, other):
        if not isinstance(other, Literal):
            return NotImplemented
        return _lit_key(self) == _lit_key(other)

    def __hash__(self):
        return hash(_lit_key(self))

    @property
    def is_null(self) -> bool:
        return self.value is None

    def sql(self) -> str:
        v = self.value
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, float):
            if math.isnan(v):
                return "CAST('NaN' AS DOUBLE)"
            if math.isinf(v):
                return f"CAST('{'-' if v < 0 else ''}Infinity' AS DOUBLE)"
            return repr(v)
        if isinstance(v, (int, _decimal.Decimal)):
            return str(v)
        if isinstance(v, str):
            text = "'" + v.replace("'", "''") + "'"
            t = self.type
            if t is not None and pa.types.is_timestamp(t):
                return f"{sql_type(t)} {text}"
            if t is not None and pa.types.is_date(t):
                return f"DATE {text}"
            return text
        if isinstance(v, bytes):
            return "'" + "".join(f"\\x{b:02x}" for b in v) + "'::BLOB"
        if isinstance(v, _dt.datetime):
            text = v.isoformat(sep=" ")
            return f"TIMESTAMPTZ '{text}'" if v.tzinfo else f"TIMESTAMP '{text}'"
        if isinstance(v, _dt.date):
            return f"DATE '{v.isoformat()}'"
        return repr(v)


def _lit_key(lit: Literal):
    v = lit.value
    if isinstance(v, float) and math.isnan(v):
        v = "<nan>"
    return (type(lit.value).__name__, v, str(lit.type) if lit.type is not None else None)


TRUE = Literal(True)
FALSE = Literal(False)
NULL = Literal(None)


@dataclass(frozen=True)
class Compare(Expr):
    """``left op right`` with ``op`` one of ``= != < <= > >=``."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self):
        if self.op not in COMPARE_OPS:
            raise ValueError(f"unknown comparison {self.op!r}")

    def children(self):
        return (self.left, self.right)

    def invert(self):
        return Compare(COMPLEMENT[self.op], self.left, self.right)

    def sql(self):
        return f"{_wrap(self.left)} {self.op} {_wrap(self.right)}"


@dataclass(frozen=True)
class And(Expr):
    args: tuple[Expr, ...]

    def children(self):
        return self.args

    def invert(self):
        return Or(tuple(a.invert() for a in self.args))

    def sql(self):
        return " AND ".join(_wrap(a, in_and=True) for a in self.args)


@dataclass(frozen=True)
class Or(Expr):
    args: tuple[Expr, ...]

    def children(self):
        return self.args

    def invert(self):
        return And(tuple(a.invert() for a in self.args))

    def sql(self):
        return " OR ".join(f"({a.sql()})" if isinstance(a, (Or, And)) else a.sql() for a in self.args)


@dataclass(frozen=True)
class Not(Expr):
    """``NOT arg`` for nodes without a complement of their own (unknown functions)."""

    arg: Expr

    def children(self):
        return (self.arg,)

    def invert(self):
        return self.arg

    def sql(self):
        return f"NOT {_wrap(self.arg)}"


@dataclass(frozen=True)
class IsNull(Expr):
    """``arg IS [NOT] NULL``."""

    arg: Expr
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsNull(self.arg, not self.negated)

    def sql(self):
        return f"{_wrap(self.arg)} IS {'NOT ' if self.negated else ''}NULL"


@dataclass(frozen=True)
class IsNan(Expr):
    """``isnan(arg)`` (``negated``: ``NOT isnan(arg)``): NULL for a NULL ``arg``, FALSE for any
    value of a type without NaN."""

    arg: Expr
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsNan(self.arg, not self.negated)

    def sql(self):
        return f"{'NOT ' if self.negated else ''}isnan({self.arg})"


@dataclass(frozen=True)
class IsBool(Expr):
    """``arg IS [NOT] TRUE`` / ``arg IS [NOT] FALSE``: never NULL."""

    arg: Expr
    value: bool
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsBool(self.arg, self.value, not self.negated)

    def sql(self):
        return f"{_wrap(self.arg)} IS {'NOT ' if self.negated else ''}{'TRUE' if self.value else 'FALSE'}"


@dataclass(frozen=True)
class IsDistinct(Expr):
    """``left IS [NOT] DISTINCT FROM right``: NULL-safe (in)equality, never NULL."""

    left: Expr
    right: Expr
    negated: bool = False

    def children(self):
        return (self.left, self.right)

    def invert(self):
        return IsDistinct(self.left, self.right, not self.negated)

    def sql(self):
        return f"{_wrap(self.left)} IS {'NOT ' if self.negated else ''}DISTINCT FROM {_wrap(self.right)}"


@dataclass(frozen=True)
class InList(Expr):
    """``arg [NOT] IN (values...)``; values are literals (a NULL among them is kept)."""

    arg: Expr
    values: tuple[Literal, ...]
    negated: bool = False

    def children(self):
        return (self.arg,) + tuple(self.values)

    def invert(self):
        return InList(self.arg, self.values, not self.negated)

    def sql(self):
        shown = list(self.values[:8])
        items = ", ".join(str(v) for v in shown) + (f", ... ({len(self.values)} values)" if len(self.values) > 8 else "")
        return f"{_wrap(self.arg)} {'NOT ' if self.negated else ''}IN ({items})"


@dataclass(frozen=True)
class Like(Expr):
    """``arg [NOT] LIKE|ILIKE pattern [ESCAPE escape]``: SQL patterns, ``%`` and ``_``."""

    arg: Expr
    pattern: str
    escape: str | None = None
    case_insensitive: bool = False
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return Like(self.arg, self.pattern, self.escape, self.case_insensitive, not self.negated)

    def sql(self):
        op = ("NOT " if self.negated else "") + ("ILIKE" if self.case_insensitive else "LIKE")
        esc = f" ESCAPE {Literal(self.escape)}" if self.escape is not None else ""
        return f"{_wrap(self.arg)} {op} {Literal(self.pattern)}{esc}"


@dataclass(frozen=True)
class RegexpLike(Expr):
    """``regexp_like(arg, pattern)`` (also ``arg RLIKE pattern``): a search, not a full match."""

    arg: Expr
    pattern: str
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return RegexpLike(self.arg, self.pattern, not self.negated)

    def sql(self):
        text = f"regexp_matches({self.arg}, {Literal(self.pattern)})"
        return f"NOT {text}" if self.negated else text


@dataclass(frozen=True)
class Arith(Expr):
    """``left op right`` with ``op`` one of ``+ - *``."""

    op: str
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def sql(self):
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Negate(Expr):
    """Unary minus."""

    arg: Expr

    def children(self):
        return (self.arg,)

    def sql(self):
        return f"(-{_wrap(self.arg)})"


@dataclass(frozen=True)
class Cast(Expr):
    """``CAST(arg AS to)``."""

    arg: Expr
    to: pa.DataType

    def children(self):
        return (self.arg,)

    def sql(self):
        return f"CAST({self.arg} AS {sql_type(self.to)})"


@dataclass(frozen=True)
class Func(Expr):
    """Any other function call. The compiler knows a few by name (``array_contains``); the rest
    evaluate to "unknown", which keeps."""

    name: str
    args: tuple[Expr, ...] = ()

    def children(self):
        return self.args

    def sql(self):
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


_SQL_TYPES = {
    "int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT",
    "uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER", "uint64": "UBIGINT",
    "float": "FLOAT", "double": "DOUBLE", "bool": "BOOLEAN", "string": "VARCHAR",
    "large_string": "VARCHAR", "binary": "BLOB", "large_binary": "BLOB", "date32[day]": "DATE",
}


def sql_type(t: pa.DataType) -> str:
    """The SQL (DuckDB) spelling of an Arrow type.

    >>> sql_type(pa.timestamp("ms")), sql_type(pa.decimal128(10, 2)), sql_type(pa.int8())
    ('TIMESTAMP_MS', 'DECIMAL(10,2)', 'TINYINT')
    """
    if pa.types.is_timestamp(t):
        if t.tz:
            return "TIMESTAMPTZ"
        return {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[t.unit]
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    return _SQL_TYPES.get(str(t), str(t).upper())


def _wrap(e: Expr, in_and: bool = False) -> str:
    """Render ``e`` as an operand, with parentheses where SQL precedence needs them:
    an OR inside an AND, and any predicate under NOT or inside a comparison."""
    text = e.sql()
    if isinstance(e, (Column, Literal, Func, Arith, Negate, Cast, RegexpLike)) or (
            isinstance(e, IsNan) and not e.negated):
        return text
    if in_and and not isinstance(e, Or):
        return text
    return f"({text})"


def columns_of(e: Expr) -> list[Column]:
    """The distinct columns an expression references, in first-seen order."""
    seen: dict[Column, None] = {}
    for node in e.walk():
        if isinstance(node, Column):
            seen.setdefault(node)
    return list(seen)
