"""Immutable expression nodes: the one tree that every front end produces.

Nodes are frozen, hashable dataclasses compared by structure. Each predicate node that has an
SQL complement carries a ``negated`` flag, so that pushing ``NOT`` down is a lookup
(:meth:`Expr.invert`) rather than a case analysis. ``str(node)`` renders SQL text.

>>> e = Compare("<", Column(("x",)), Literal(5))
>>> str(e), str(e.invert())
('x < 5', 'x >= 5')
"""

from __future__ import annotations

import dataclasses
import weakref
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


class Expr:
    """Base of every node.

    Trees may be thousands of levels deep (programs write predicates), so nothing here
    recurses per level: :meth:`walk`, :meth:`sql`, ``==`` and ``hash`` run on explicit stacks,
    and a node's hash is computed once (nodes are immutable).
    """

    def invert(self) -> "Expr":
        """The SQL complement of this predicate (``NOT self``), pushed one level down."""
        return Not(self)

    def children(self) -> tuple["Expr", ...]:
        return ()

    def walk(self):
        """Yield this node and every node below it, parents first (depth first, in order)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def __str__(self) -> str:
        return self.sql()

    def sql(self) -> str:
        """The node as SQL text."""
        return render(self)

    def _sql(self, text) -> str:  # every node class defines it (Expr is no ABC: isinstance stays fast)
        """The node as SQL text, given ``text(child)``: the text of each child."""
        raise NotImplementedError

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return _equal(self, other)

    def __hash__(self):
        got = _HASHES.get(id(self))
        if got is not None:
            return got[0]
        if _is_flat(self):
            return _shallow_hash(self)
        return _hash_tree(self)


def fold(root, children, combine, memo: dict | None = None):
    """``combine(node, results of its children)`` for every distinct node of a tree, children
    first, on an explicit stack (trees may be thousands deep); the root's result.
    ``children(node)`` lists the nodes to fold before ``node``. ``memo`` (id of a node to its
    result) may be shared between calls over one live tree: each subtree is folded once.

    >>> fold(And((Column("a"), Or((Column("b"), Column("c"))))), lambda x: x.children(),
    ...      lambda x, below: 1 + sum(below))
    5
    """
    memo = {} if memo is None else memo
    stack: list = [(root, None)]  # a node, and its children once listed
    while stack:
        node, kids = stack[-1]
        if id(node) in memo:
            stack.pop()
            continue
        if kids is None:
            kids = children(node)
            pending = []
            for k in kids:
                if id(k) in memo:
                    continue
                if not pending and not children(k):
                    memo[id(k)] = combine(k, [])  # a leaf, its turn now: at once (long chains)
                else:
                    pending.append(k)
            if pending:
                stack[-1] = (node, kids)
                stack.extend((k, None) for k in reversed(pending))
                continue
        stack.pop()
        memo[id(node)] = combine(node, [memo[id(k)] for k in kids])
    return memo[id(root)]


def render(root: Expr, memo: dict | None = None) -> str:
    """The SQL text of ``root``, children first (:func:`fold`). ``memo`` (id of a node to its
    text) may be shared between calls over one live tree, so that the text of every subtree
    is built once."""
    memo = {} if memo is None else memo
    got = memo.get(id(root))
    if got is not None:
        return got
    if type(root) in _LEAVES:
        return root._sql(None)
    if _is_flat(root):  # (a predicate of a long chain: x = 5)
        got = memo[id(root)] = root._sql(_leaf_text)
        return got

    def text(c):  # a leaf's text needs no memo (nor a trip through the stack)
        return c._sql(None) if type(c) in _LEAVES else memo[id(c)]

    stack = [root]
    while stack:  # fold, with the nodes whose children are all leaves rendered in place
        node = stack[-1]
        if id(node) in memo:
            stack.pop()
            continue
        pending = []
        for k in _shown_children(node):
            if type(k) in _LEAVES or id(k) in memo:
                continue
            if _is_flat(k):
                memo[id(k)] = k._sql(text)
            else:
                pending.append(k)
        if pending:
            stack.extend(reversed(pending))
            continue
        stack.pop()
        memo[id(node)] = node._sql(text)
    return memo[id(root)]


def _leaf_text(leaf: Expr) -> str:
    return leaf._sql(None)


#: how many of an IN list's values its SQL text shows
SHOWN_VALUES = 8


def _shown_children(node: Expr) -> tuple:
    """The children whose text ``node``'s text uses (an IN list shows its first values)."""
    if isinstance(node, InList):
        return (node.arg,) + tuple(node.values[:SHOWN_VALUES])
    return node.children()


#: id of a node -> (its hash, a weak reference that drops the entry with the node): kept
#: outside the nodes, so that ``vars(node)`` stays its fields and pickles carry no hash
_HASHES: dict[int, tuple[int, weakref.ref]] = {}


def _remember_hash(node: "Expr", h: int) -> None:
    key = id(node)
    _HASHES[key] = (h, weakref.ref(node, lambda _, key=key: _HASHES.pop(key, None)))


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _plain_ints(items: tuple) -> list | None:
    """The values of a tuple of untyped integer literals (equal exactly when their values
    are: :func:`_value_key`), else None."""
    values = [v.value for v in items
              if type(v) is Literal and v.type is None and type(v.value) is int]
    return values if len(values) == len(items) else None


def _equal(a: Expr, b: Expr) -> bool:
    """Structural equality of two trees, on an explicit stack."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if isinstance(x, Expr) or isinstance(y, Expr):
            if type(x) is not type(y):
                return False
            if isinstance(x, Literal):
                if x != y:
                    return False
                continue
            hx, hy = _HASHES.get(id(x)), _HASHES.get(id(y))
            if hx is not None and hy is not None and hx[0] != hy[0]:
                return False
            for name in _field_names(type(x)):
                stack.append((getattr(x, name), getattr(y, name)))
        elif isinstance(x, tuple) and isinstance(y, tuple):
            if len(x) != len(y):
                return False
            ints = _plain_ints(x)
            if ints is not None and ints == _plain_ints(y):
                continue  # (an IN list of join keys: thousands of literals, compared at once)
            stack.extend(zip(x, y))
        elif type(x) is not type(y) or x != y:
            return False
    return True


#: nodes with no children: their own ``==`` and ``hash``, in O(1)
_LEAVES = frozenset()  # (filled in below the classes: Column, Literal)
#: a flat node with more children than this caches its hash (an IN list of thousands of values)
_FLAT_UNCACHED = 8


def _is_flat(node: Expr) -> bool:
    """Are all children of ``node`` leaves (a column or a literal)? Such a node hashes in one
    step, without the cache (most nodes of a long chain are: ``x = 5``)."""
    if type(node) is Compare:  # (the most common node of long chains)
        return type(node.left) in _LEAVES and type(node.right) in _LEAVES
    kids = node.children()
    return len(kids) <= _FLAT_UNCACHED and all(type(k) in _LEAVES for k in kids)


def _shallow_hash(node: Expr) -> int:
    """The hash of ``node`` from its fields, its children hashed already (cached, or flat)."""
    return hash((type(node).__name__,) + tuple(getattr(node, f) for f in _field_names(type(node))))


def _hash_tree(root: Expr) -> int:
    """The hash of ``root``, computing (and caching) the hash of every node below it first;
    leaves and flat nodes (:func:`_is_flat`) hash in one step and are not cached."""
    stack = [root]
    while stack:
        node = stack[-1]
        if id(node) in _HASHES:
            stack.pop()
            continue
        pending = [c for c in node.children()
                   if type(c) not in _LEAVES and id(c) not in _HASHES and not _is_flat(c)]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        _remember_hash(node, _shallow_hash(node))
    return _HASHES[id(root)][0]


def _quote_ident(name: str) -> str:
    if name.isidentifier() and name.lower() not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


_RESERVED = {"and", "or", "not", "is", "null", "true", "false", "in", "like", "between", "select",
             "from", "where", "order", "group", "by", "case", "when", "then", "else", "end"}


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Column(Expr):
    """A column reference; nested struct fields are a path: ``Column(("st", "a"))``."""

    path: tuple[str, ...]

    def __post_init__(self):
        if isinstance(self.path, str):
            object.__setattr__(self, "path", (self.path,))

    def __eq__(self, other):  # a leaf: its path decides
        if type(other) is not Column:
            return NotImplemented
        return self.path == other.path

    def __hash__(self):
        return hash(("Column", self.path))

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def _sql(self, text) -> str:
        path = self.path
        if len(path) == 1:
            return _quote_ident(path[0])
        return ".".join(_quote_ident(p) for p in path)


@dataclass(frozen=True)  # its own == and hash
class Literal(Expr):
    """A constant. ``type`` is the Arrow type when the front end knows it (else inferred)."""

    value: Any
    type: pa.DataType | None = None

    def __eq__(self, other):
        if not isinstance(other, Literal):
            return NotImplemented
        return _lit_key(self) == _lit_key(other)

    def __hash__(self):
        v = self.value
        if type(v) is int and self.type is None:  # (the most common: the value is the key)
            return hash(v)
        return hash(_value_key(v, self.type))

    @property
    def is_null(self) -> bool:
        return self.value is None

    def _sql(self, text) -> str:
        v = self.value
        if type(v) is int:  # (the most common)
            return str(v)
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
    return _value_key(lit.value, lit.type)


def _value_key(v, t):
    """What decides whether two literals (value ``v``, Arrow type ``t``) are equal: the
    value's Python type, the value (NaN equal to NaN) and the Arrow type's text."""
    return (type(v).__name__, "<nan>" if isinstance(v, float) and v != v else v,
            None if t is None else str(t))


_LEAVES = frozenset({Column, Literal})

TRUE = Literal(True)
FALSE = Literal(False)
NULL = Literal(None)


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Compare(Expr):
    """``left op right`` with ``op`` one of ``= != < <= > >=``."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self):
        if self.op not in COMPARE_OPS:
            raise ValueError(f"unknown comparison {self.op!r}")

    def __hash__(self):  # the most common node of long chains: a flat one in one step
        left, right = self.left, self.right
        if type(left) is Column and type(right) is Literal:  # (x > 5: what decides ==, inline)
            v = right.value
            if type(v) is int and right.type is None:  # (an int: its value is its literal's key)
                return hash((self.op, left.path, v))
            return hash((self.op, left.path, _value_key(v, right.type)))
        if type(left) in _LEAVES and type(right) in _LEAVES:
            return hash(("Compare", self.op, left, right))
        return Expr.__hash__(self)

    def children(self):
        return (self.left, self.right)

    def invert(self):
        return Compare(COMPLEMENT[self.op], self.left, self.right)

    def _sql(self, text):
        left, right = self.left, self.right
        if type(left) in _BARE and type(right) in _BARE:  # (x > 5: no parentheses, in one step)
            return f"{left._sql(None)} {self.op} {right._sql(None)}"
        return f"{_wrap(left, text)} {self.op} {_wrap(right, text)}"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class And(Expr):
    """``args[0] AND args[1] AND ...``: n-ary and flat (an AND among the parts is spliced in)."""

    args: tuple[Expr, ...]

    def __post_init__(self):
        _flatten(self)

    def children(self):
        return self.args

    def invert(self):
        return negate(self)

    def _sql(self, text):  # only an OR needs parentheses here
        return " AND ".join(f"({text(a)})" if isinstance(a, Or) else text(a) for a in self.args)


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Or(Expr):
    """``args[0] OR args[1] OR ...``: n-ary and flat (an OR among the parts is spliced in)."""

    args: tuple[Expr, ...]

    def __post_init__(self):
        _flatten(self)

    def children(self):
        return self.args

    def invert(self):
        return negate(self)

    def _sql(self, text):
        return " OR ".join(f"({text(a)})" if isinstance(a, (Or, And)) else text(a) for a in self.args)


def _flatten(node: "And | Or") -> None:
    """Splice the parts of nested nodes of the same kind into ``node.args`` (one level is
    enough: those nodes are flat already), so that long chains stay one n-ary node."""
    kind, args = type(node), node.args
    if type(args) is tuple and not any(type(a) is kind for a in args):
        return
    flat: list[Expr] = []
    for a in args:
        if type(a) is kind:
            flat.extend(a.args)
        else:
            flat.append(a)
    object.__setattr__(node, "args", tuple(flat))


def negate(root: Expr) -> Expr:
    """``NOT root`` with De Morgan applied through every AND and OR, down to the complement of
    each predicate (:meth:`Expr.invert`); on an explicit stack, linear in the tree's size.

    >>> str(negate(And((Compare("<", Column("x"), Literal(5)), Or((Column("b"), IsNull(Column("y"))))))))
    'x >= 5 OR (NOT b AND y IS NOT NULL)'
    """
    def combine(node: Expr, parts: list) -> Expr:
        if isinstance(node, And):
            return Or(tuple(parts))
        return And(tuple(parts)) if isinstance(node, Or) else node.invert()

    return fold(root, lambda node: node.args if isinstance(node, (And, Or)) else (), combine)


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Not(Expr):
    """``NOT arg`` for nodes without a complement of their own (unknown functions)."""

    arg: Expr

    def children(self):
        return (self.arg,)

    def invert(self):
        return self.arg

    def _sql(self, text):
        return f"NOT {_wrap(self.arg, text)}"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class IsNull(Expr):
    """``arg IS [NOT] NULL``."""

    arg: Expr
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsNull(self.arg, not self.negated)

    def _sql(self, text):
        return f"{_wrap(self.arg, text)} IS {'NOT ' if self.negated else ''}NULL"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class IsNan(Expr):
    """``isnan(arg)`` (``negated``: ``NOT isnan(arg)``): NULL for a NULL ``arg``, FALSE for any
    value of a type without NaN."""

    arg: Expr
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsNan(self.arg, not self.negated)

    def _sql(self, text):
        return f"{'NOT ' if self.negated else ''}isnan({text(self.arg)})"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class IsBool(Expr):
    """``arg IS [NOT] TRUE`` / ``arg IS [NOT] FALSE``: never NULL."""

    arg: Expr
    value: bool
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return IsBool(self.arg, self.value, not self.negated)

    def _sql(self, text):
        return f"{_wrap(self.arg, text)} IS {'NOT ' if self.negated else ''}{'TRUE' if self.value else 'FALSE'}"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class IsDistinct(Expr):
    """``left IS [NOT] DISTINCT FROM right``: NULL-safe (in)equality, never NULL."""

    left: Expr
    right: Expr
    negated: bool = False

    def children(self):
        return (self.left, self.right)

    def invert(self):
        return IsDistinct(self.left, self.right, not self.negated)

    def _sql(self, text):
        return f"{_wrap(self.left, text)} IS {'NOT ' if self.negated else ''}DISTINCT FROM {_wrap(self.right, text)}"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class InList(Expr):
    """``arg [NOT] IN (values...)``; values are literals (a NULL among them is kept)."""

    arg: Expr
    values: tuple[Literal, ...]
    negated: bool = False

    def children(self):
        return (self.arg,) + tuple(self.values)

    def invert(self):
        return InList(self.arg, self.values, not self.negated)

    def _sql(self, text):
        shown = list(self.values[:SHOWN_VALUES])
        items = ", ".join(text(v) for v in shown) + (
            f", ... ({len(self.values)} values)" if len(self.values) > SHOWN_VALUES else "")
        return f"{_wrap(self.arg, text)} {'NOT ' if self.negated else ''}IN ({items})"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
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

    def _sql(self, text):
        op = ("NOT " if self.negated else "") + ("ILIKE" if self.case_insensitive else "LIKE")
        esc = f" ESCAPE {Literal(self.escape)}" if self.escape is not None else ""
        return f"{_wrap(self.arg, text)} {op} {Literal(self.pattern)}{esc}"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class RegexpLike(Expr):
    """``regexp_like(arg, pattern)`` (also ``arg RLIKE pattern``): a search, not a full match."""

    arg: Expr
    pattern: str
    negated: bool = False

    def children(self):
        return (self.arg,)

    def invert(self):
        return RegexpLike(self.arg, self.pattern, not self.negated)

    def _sql(self, text):
        out = f"regexp_matches({text(self.arg)}, {Literal(self.pattern)})"
        return f"NOT {out}" if self.negated else out


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Arith(Expr):
    """``left op right`` with ``op`` one of ``+ - *``."""

    op: str
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def _sql(self, text):
        return f"({text(self.left)} {self.op} {text(self.right)})"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Negate(Expr):
    """Unary minus."""

    arg: Expr

    def children(self):
        return (self.arg,)

    def _sql(self, text):
        return f"(-{_wrap(self.arg, text)})"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Cast(Expr):
    """``CAST(arg AS to)``."""

    arg: Expr
    to: pa.DataType

    def children(self):
        return (self.arg,)

    def _sql(self, text):
        return f"CAST({text(self.arg)} AS {sql_type(self.to)})"


@dataclass(frozen=True, eq=False)  # == and hash: Expr's
class Func(Expr):
    """Any other function call. The compiler knows a few by name (``array_contains``); the rest
    evaluate to "unknown", which keeps."""

    name: str
    args: tuple[Expr, ...] = ()

    def children(self):
        return self.args

    def _sql(self, text):
        return f"{self.name}({', '.join(text(a) for a in self.args)})"


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


#: operands whose text needs no parentheses anywhere (the common ones, by exact type)
_BARE = frozenset({Column, Literal})


def _wrap(e: Expr, render_child) -> str:
    """Render ``e`` (its text: ``render_child(e)``) as an operand, with parentheses where SQL
    precedence needs them: any predicate under NOT or inside a comparison (inside an AND, only
    an OR needs them: :meth:`And._sql`)."""
    text = render_child(e)
    if type(e) in _BARE or isinstance(e, (Column, Literal, Func, Arith, Negate, Cast, RegexpLike)) or (
            isinstance(e, IsNan) and not e.negated):
        return text
    return f"({text})"


def columns_of(e: Expr) -> list[Column]:
    """The distinct columns an expression references, in first-seen order."""
    seen: dict[Column, None] = {}
    for node in e.walk():
        if isinstance(node, Column):
            seen.setdefault(node)
    return list(seen)
