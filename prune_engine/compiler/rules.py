"""Rewrite rules on the expression tree, run in the order of :data:`RULES`.

Each rule is a small pure function from tree to tree that keeps the SQL (three-valued)
meaning, or widens it where noted: after :func:`push_not` no ``NOT`` stands above a
predicate, so a rule applied to a leaf may replace it by anything whose TRUE-set contains the
leaf's TRUE-set (a superset only keeps more containers). Before that point, rules must be exact,
since an over-approximation under a ``NOT`` would turn into an under-approximation.

>>> from prune_engine.expr.sql import parse_sql
>>> str(rewrite(parse_sql("NOT (x < 5 OR y IS NULL) AND 5 <= z")))
'x >= 5 AND y IS NOT NULL AND z >= 5'
"""

from __future__ import annotations

import decimal
import math
import re
from dataclasses import replace

import numpy as np
import pyarrow as pa

from prune_engine.errors import TypeMismatchError
from prune_engine.evaluate.domains import (
    DAY_NS, EXACT_DECIMAL, TemporalDomain, date_value, domain_of, instant_ns, read_text_as,
)
from prune_engine.expr import nodes as n

#: nodes that are NULL only where an operand is (a CAST is not among them: a cast that fails
#: is NULL under TRY_CAST and Spark's non-ANSI mode, whatever its operand)
NULL_PROPAGATING = (n.Compare, n.Arith, n.Negate, n.And, n.Or, n.Not, n.Column,
                    n.InList, n.Like, n.RegexpLike, n.IsNan)


def _operands(e: n.Expr) -> tuple[n.Expr, ...]:
    """The children a rule rewrites (an IN list's values stay as they are)."""
    return (e.arg,) if isinstance(e, n.InList) else e.children()


def _rebuild(e: n.Expr, kids: list[n.Expr]) -> n.Expr:
    """``e`` with its :func:`_operands` replaced by ``kids`` (nodes are immutable)."""
    if isinstance(e, (n.And, n.Or)):
        return type(e)(tuple(kids))
    if isinstance(e, n.Compare):
        return n.Compare(e.op, kids[0], kids[1])
    if isinstance(e, n.Arith):
        return n.Arith(e.op, kids[0], kids[1])
    if isinstance(e, n.IsDistinct):
        return n.IsDistinct(kids[0], kids[1], e.negated)
    if isinstance(e, n.Func):
        return n.Func(e.name, tuple(kids))
    if isinstance(e, n.InList):
        return n.InList(kids[0], e.values, e.negated)
    if isinstance(e, (n.Not, n.IsNull, n.IsNan, n.IsBool, n.Like, n.RegexpLike, n.Negate, n.Cast)):
        return replace(e, arg=kids[0])
    return e


#: nodes no local rule rewrites (a bare column or literal): :func:`bottom_up` passes them by
_TERMINAL = frozenset({n.Column, n.Literal})


def bottom_up(e: n.Expr, fn) -> n.Expr:
    """Apply ``fn`` to every node, children first, each node seeing its rewritten children;
    on an explicit stack (trees may be thousands deep), each shared subtree once. Bare columns
    and literals (:data:`_TERMINAL`) and comparisons of a column with a literal (``x = 5``,
    :func:`settled`: most nodes of a long chain) are left as they are, except at the root.

    A node whose operands are all terminal (``5 < x``) is rewritten as its parent meets it,
    without a trip through the stack.

    >>> str(bottom_up(n.And((n.IsNull(n.Column("a")), n.Column("b"))),
    ...               lambda x: x.invert() if isinstance(x, n.IsNull) else x))
    'a IS NOT NULL AND b'
    """
    done: dict[int, n.Expr] = {}  # id of a node of ``e`` (alive throughout) -> its rewrite
    stack = [e]
    while stack:
        node = stack[-1]
        if id(node) in done:
            stack.pop()
            continue
        kids = _operands(node)
        new, pending, changed = [], [], False
        for k in kids:  # (one pass: the kids of long chains are many)
            if type(k) in _TERMINAL or settled(k):
                new.append(k)
                continue
            got = done.get(id(k))
            if got is None:
                if not _all_terminal(k):
                    pending.append(k)
                    continue
                got = done[id(k)] = fn(k)
            new.append(got)
            changed = changed or got is not k
        if pending:
            stack.extend(reversed(pending))
            continue
        stack.pop()
        done[id(node)] = fn(_rebuild(node, new) if changed else node)
    return done[id(e)]


def settled(e: n.Expr) -> bool:
    """Is ``e`` a comparison of a bare column with a literal (``x > 5``)? Such a node is in the
    form every rule of :data:`RULES` leaves as it is (a new rule that would rewrite one must
    change this), so that :func:`bottom_up` need not show it to them.

    >>> x, five = n.Column("x"), n.Literal(5)
    >>> settled(n.Compare(">", x, five)), settled(n.Compare("<", five, x))
    (True, False)
    """
    return type(e) is n.Compare and type(e.left) is n.Column and type(e.right) is n.Literal


def _all_terminal(e: n.Expr) -> bool:
    """Are all operands of ``e`` terminal (:data:`_TERMINAL`)?"""
    if type(e) is n.Compare:  # (the most common node)
        return type(e.left) in _TERMINAL and type(e.right) in _TERMINAL
    return all(type(k) in _TERMINAL for k in _operands(e))


# --- rule 1 ------------------------------------------------------------------------------
def fold_literal_casts(e: n.Expr) -> n.Expr:
    """``CAST(<literal> AS t)`` and typed literals (``DATE '2024-01-01'``) become literals of
    type ``t``; a literal that cannot be read as ``t`` at all is a type error (the query would
    fail too). A cast whose result engines disagree on stays a cast, which compiles to
    "unknown" (see :func:`cast_literal`).

    >>> str(fold_literal_casts(n.Cast(n.Literal("2024-01-02 10:00"), pa.date32())))
    "DATE '2024-01-02'"
    >>> str(fold_literal_casts(n.Cast(n.Literal(8), pa.decimal128(6, 2))))
    '8.00'
    """
    return bottom_up(e, _fold_literal_cast)


def _fold_literal_cast(e: n.Expr) -> n.Expr:
    if isinstance(e, n.Func) and e.name == "in" and len(e.args) > 1 and all(isinstance(a, n.Literal) for a in e.args[1:]):
        return n.InList(e.args[0], e.args[1:])  # an IN list whose items were casts of literals
    if isinstance(e, n.Cast) and isinstance(e.arg, n.Literal):
        folded = cast_literal(e.arg, e.to)
        return folded if folded is not None else e
    if isinstance(e, n.Negate) and isinstance(e.arg, n.Literal) and isinstance(e.arg.value, (int, float)) \
            and not isinstance(e.arg.value, bool):
        return n.Literal(-e.arg.value, e.arg.type)
    return e


def cast_literal(lit: n.Literal, to: pa.DataType) -> n.Literal | None:
    """``CAST(lit AS to)`` computed exactly, as SQL engines agree on it; None where they do not.

    Numbers cast to a decimal round half away from zero to its scale (DuckDB, Spark and
    PostgreSQL agree); to an integer they must be whole; a timestamp must fall on its type's
    unit, and a date not within a microsecond of midnight (which rounding crosses). A fraction
    cast to an integer (DuckDB rounds, Spark truncates), a value beyond the target type (an
    error, NULL or a wrap), a double cast to a decimal scale it does not fall on (engines
    round the binary value differently) give None. Text that is no value of ``to`` is a type
    error; a zone written in it counts only where it is read as a zoned timestamp
    (:func:`~prune_engine.evaluate.domains.read_text_as`: ``CAST('2024-03-05 00:30+01:00' AS
    DATE)`` is 2024-03-05).

    >>> cast_literal(n.Literal(decimal.Decimal("1.005")), pa.decimal128(6, 2)).value
    Decimal('1.01')
    >>> cast_literal(n.Literal(decimal.Decimal("2.5")), pa.int32()) is None
    True
    """
    v = lit.value
    if v is None:
        return n.Literal(None, to)
    try:
        if pa.types.is_date(to):
            ns = instant_ns(read_text_as(v, lit.type, to) if isinstance(v, str) else v)
            if ns // DAY_NS != -(-ns // 1000) * 1000 // DAY_NS:
                return None  # within a microsecond of midnight: engines that round to it differ
            return n.Literal(date_value(ns // DAY_NS), to)
        if pa.types.is_timestamp(to):
            if instant_ns(v) % TemporalDomain(to).unit_ns:
                return None  # finer than the type: DuckDB rounds (TIMESTAMP_S), or truncates (TIMESTAMP)
            return n.Literal(v, to)  # the exact text keeps nanoseconds
        if pa.types.is_integer(to) or pa.types.is_decimal(to):
            return _exact_number_cast(v, to)
        if pa.types.is_floating(to) and isinstance(v, (str, int, float, decimal.Decimal)):
            x = float(v.strip()) if isinstance(v, str) else float(v)
            if pa.types.is_float32(to):
                with np.errstate(over="ignore"):
                    x = float(np.float32(x))
            return n.Literal(x, to)
        if (pa.types.is_binary(to) or pa.types.is_large_binary(to)) and isinstance(v, str):
            return n.Literal(blob_literal(v), to)
        return n.Literal(pa.scalar(v).cast(to).as_py(), to)
    except (TypeError, ValueError, OverflowError, ArithmeticError, pa.ArrowException) as err:
        raise TypeMismatchError(f"cannot cast literal {lit} to {to}: {err}") from None


_INTEGER_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")


def _exact_number_cast(v, to: pa.DataType) -> n.Literal | None:
    """A number (or its text) cast to an integer or decimal type, exactly (see :func:`cast_literal`)."""
    if isinstance(v, str):
        if pa.types.is_integer(to) and not _INTEGER_TEXT.fullmatch(v):
            decimal.Decimal(v.strip())  # not a number at all: a type error
            return None  # '1.5' or '1e2' as an integer: engines differ
        x = decimal.Decimal(v.strip())
    elif isinstance(v, (bool, int, float, decimal.Decimal)):
        x = decimal.Decimal(v)
    else:
        raise TypeError(f"{type(v).__name__} is no number")
    if not x.is_finite():
        return None
    if pa.types.is_integer(to):
        lo, hi = domain_of(to).limits
        if x != x.to_integral_value() or not lo <= x <= hi:
            return None
        return n.Literal(int(x), to)
    q = x.quantize(decimal.Decimal(1).scaleb(-to.scale), rounding=decimal.ROUND_HALF_UP, context=EXACT_DECIMAL)
    if (isinstance(v, float) and q != x) or abs(q) >= decimal.Decimal(10) ** (to.precision - to.scale):
        return None
    return n.Literal(q, to)


def blob_literal(text: str) -> bytes:
    r"""The bytes of a SQL BLOB literal: ``\xNN`` is one byte, any other character its UTF-8.

    >>> blob_literal("a\\x62\\xff")
    b'ab\xff'
    """
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i) and i + 4 <= len(text):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.extend(text[i].encode())
            i += 1
    return bytes(out)


# --- rule 2 ------------------------------------------------------------------------------
def orient_comparisons(e: n.Expr) -> n.Expr:
    """Put the literal on the right: ``5 < x`` becomes ``x > 5``.

    >>> str(orient_comparisons(n.Compare("<", n.Literal(5), n.Column("x"))))
    'x > 5'
    """
    return bottom_up(e, _orient_comparison)


def _orient_comparison(e: n.Expr) -> n.Expr:
    if isinstance(e, n.Compare) and isinstance(e.left, n.Literal) and not isinstance(e.right, n.Literal):
        return n.Compare(n.FLIPPED[e.op], e.right, e.left)
    if isinstance(e, n.IsDistinct) and isinstance(e.left, n.Literal) and not isinstance(e.right, n.Literal):
        return n.IsDistinct(e.right, e.left, e.negated)
    return e


# --- rule 2b -----------------------------------------------------------------------------
def fold_in_lists(e: n.Expr) -> n.Expr:
    """Equalities of one column with constants under OR become one IN list, inequalities
    under AND one NOT IN: exactly the same three-valued meaning (``x = 1 OR x = 2`` is
    ``x IN (1, 2)``, NULL where x is NULL), and one set test instead of a test per constant,
    which keeps programs' predicates of thousands of terms fast to compile and evaluate.
    Constants of one kind only (the same Python type and Arrow type); NULL is left alone.

    >>> str(fold_in_lists(n.Or((n.Compare("=", n.Column("x"), n.Literal(1)),
    ...                         n.Compare(">", n.Column("y"), n.Literal(0)),
    ...                         n.Compare("=", n.Column("x"), n.Literal(5))))))
    'x IN (1, 5) OR y > 0'
    """
    return bottom_up(e, _fold_in_list)


def _fold_in_list(e: n.Expr) -> n.Expr:
    if not isinstance(e, (n.And, n.Or)):
        return e
    op = "=" if isinstance(e, n.Or) else "!="
    keys = [_in_list_key(a, op) for a in e.args]
    groups: dict = {}  # a key -> its comparisons, in order (None once folded)
    for a, key in zip(e.args, keys):
        if key is not None:
            groups.setdefault(key, []).append(a)
    if all(len(group) == 1 for group in groups.values()):
        return e
    out: list[n.Expr] = []
    for a, key in zip(e.args, keys):
        group = None if key is None else groups[key]
        if key is None or (group is not None and len(group) == 1):
            out.append(a)
        elif group is not None:  # the first of its group: the whole group, here
            groups[key] = None
            values = tuple(dict.fromkeys(m.right for m in group))
            out.append(n.InList(group[0].left, values, negated=op == "!="))
    return out[0] if len(out) == 1 else type(e)(tuple(out))


def _in_list_key(a: n.Expr, op: str):
    """What ``a`` folds with (``a`` is ``column op constant``): the column's path and the
    constant's kind; None when it folds with nothing."""
    if type(a) is n.Compare and a.op == op and type(a.left) is n.Column and type(a.right) is n.Literal:
        v = a.right.value
        if v is not None:
            return (a.left.path, type(v), a.right.type)
    return None


# --- rule 3 ------------------------------------------------------------------------------
def push_not(e: n.Expr, negate: bool = False, leaf=None) -> n.Expr:
    """Negation normal form: push every ``NOT`` down to the predicates, by their SQL complements.

    The one NOT push-down of the engine: the pruning runs it as a rule, the row filter through
    :func:`prune_engine.scanning.rows.negation_normal_form`. ``NOT`` flips ``negate`` and
    ``AND`` / ``OR`` follow De Morgan; every other node is a predicate, which
    ``leaf(node, negate)`` rewrites (None leaves it to :func:`complement`). The pruning's leaf
    rule is :func:`widen_leaf`: a bare boolean column ``b`` is ``b = TRUE``, and
    ``IS [NOT] TRUE/FALSE`` and ``IS [NOT] DISTINCT FROM`` are expanded here, at the leaves,
    where widening is safe.

    >>> str(push_not(n.Not(n.And((n.Column("b"), n.IsNull(n.Column("y")))))))
    'b = FALSE OR y IS NOT NULL'
    >>> str(push_not(n.Not(n.Or((n.Column("b"), n.Column("c")))), leaf=lambda e, negate: None))
    'b = FALSE AND c = FALSE'
    """
    rule = widen_leaf if leaf is None else leaf

    def strip(node, neg):  # NOT NOT ... x: x, with the NOTs counted
        while isinstance(node, n.Not):
            node, neg = node.arg, not neg
        return node, neg

    def form(node, neg):  # a predicate (no AND, OR or NOT): its form
        if type(node) is n.Compare and not neg and leaf is None:
            return node  # (the most common: what widen_leaf and complement make of it)
        out = rule(node, neg)
        return complement(node, neg) if out is None else out

    root = strip(e, negate)
    if type(root[0]) not in (n.And, n.Or):
        return form(*root)
    done: dict[tuple[int, bool], n.Expr] = {}  # (id of an AND/OR, negate) -> its form
    stack = [root]
    while stack:  # on an explicit stack: trees may be thousands deep
        node, neg = stack[-1]
        if (id(node), neg) in done:
            stack.pop()
            continue
        kids = [(a, neg) if type(a) is not n.Not else strip(a, neg) for a in node.args]
        pending = [k for k in kids if type(k[0]) in (n.And, n.Or) and (id(k[0]), k[1]) not in done]
        if pending:
            stack.extend(reversed(pending))
            continue
        stack.pop()
        parts = tuple(done[id(k), kn] if type(k) in (n.And, n.Or) else form(k, kn) for k, kn in kids)
        kind = n.Or if (type(node) is n.And) == neg else n.And  # NOT over AND gives OR
        if kind is type(node) and all(p is a for p, a in zip(parts, node.args)):
            done[id(node), neg] = node  # nothing below changed
        else:
            done[id(node), neg] = kind(parts)
    return done[id(root[0]), root[1]]


def complement(e: n.Expr, negate: bool) -> n.Expr:
    """The predicate ``e``, or (``negate``) its exact SQL complement, one level down: NULL
    where ``e`` is NULL, as ``NOT e`` is. ``NOT (x < 5)`` is ``x >= 5``, ``NOT b`` is
    ``b = FALSE``, ``NOT TRUE`` is FALSE (``NOT NULL`` is NULL); a function (unknown to the
    rules) keeps its ``NOT``, as does anything without a complement of its own.

    >>> [str(complement(n.Compare("<", n.Column("x"), n.Literal(5)), True)),
    ...  str(complement(n.Column("b"), True)), str(complement(n.Func("f", ()), True))]
    ['x >= 5', 'b = FALSE', 'NOT f()']
    """
    if not negate:
        return e
    if isinstance(e, n.Column):
        return n.Compare("=", e, n.FALSE)
    if isinstance(e, n.Literal):
        return n.Literal(not e.value) if isinstance(e.value, bool) else e
    if isinstance(e, n.Func):
        return n.Not(e)
    return e.invert()


def widen_leaf(e: n.Expr, negate: bool) -> n.Expr | None:
    """The pruning's leaf rule for :func:`push_not` (None: the exact :func:`complement`): a bare
    boolean column is ``b = TRUE``, and ``IS [NOT] TRUE/FALSE`` and ``IS [NOT] DISTINCT FROM``
    become comparisons, widened where their NULL cases are not known exactly
    (:func:`may_be_null`).

    >>> str(widen_leaf(n.IsBool(n.Column("b"), True), negate=True))
    'b = FALSE OR b IS NULL'
    """
    if isinstance(e, n.IsBool):
        return _expand_is_bool(e.arg, e.value, e.negated != negate)
    if isinstance(e, n.IsDistinct):
        return _expand_is_distinct(e.left, e.right, e.negated != negate)
    if isinstance(e, n.Column) and not negate:
        return n.Compare("=", e, n.TRUE)
    return None


#: nodes that are never NULL, whatever is below them
NEVER_NULL = (n.IsNull, n.IsBool, n.IsDistinct)


def may_be_null(e: n.Expr) -> n.Expr:
    """A predicate TRUE wherever ``e`` may evaluate to NULL (widened: it may be TRUE more often).

    For trees of NULL-propagating operators, ``e`` is NULL only where one of its columns is
    NULL; ``IS [NOT] NULL``, ``IS [NOT] TRUE`` and ``IS [NOT] DISTINCT FROM`` are never NULL
    (what is below them does not matter); anything else (a function, a cast, a NULL literal, a
    NULL in an IN list) may be NULL anywhere.

    >>> str(may_be_null(n.Compare(">", n.Column("x"), n.Column("y"))))
    'x IS NULL OR y IS NULL'
    >>> str(may_be_null(n.Or((n.Compare(">", n.Column("x"), n.Literal(5)), n.IsNull(n.Column("x"))))))
    'x IS NULL'
    """
    cols = []
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, NEVER_NULL):
            continue
        if isinstance(node, n.Literal):
            if node.value is None:
                return n.TRUE
            continue
        if isinstance(node, n.InList) and any(v.value is None for v in node.values):
            return n.TRUE
        if not isinstance(node, NULL_PROPAGATING):
            return n.TRUE
        if isinstance(node, n.Column) and node not in cols:
            cols.append(node)
        stack.extend(reversed(node.children()))
    if not cols:
        return n.FALSE
    return n.Or(tuple(n.IsNull(c) for c in cols)) if len(cols) > 1 else n.IsNull(cols[0])


def _any(*parts: n.Expr) -> n.Expr:
    """OR of ``parts``, flattened, without FALSE terms."""
    flat: list[n.Expr] = []
    for p in parts:
        for q in (p.args if isinstance(p, n.Or) else (p,)):
            if q != n.FALSE and q not in flat:
                flat.append(q)
    if not flat:
        return n.FALSE
    return flat[0] if len(flat) == 1 else n.Or(tuple(flat))


def _expand_is_bool(arg: n.Expr, value: bool, negated: bool) -> n.Expr:
    # e IS TRUE = e; e IS FALSE = NOT e; e IS NOT TRUE = NOT e OR e IS NULL; ...
    positive = push_not(arg, negate=(value == negated))
    if not negated:
        return positive
    return _any(positive, may_be_null(arg))


def _expand_is_distinct(left: n.Expr, right: n.Expr, same: bool) -> n.Expr:
    for a, b in ((left, right), (right, left)):
        if isinstance(b, n.Literal) and b.value is None:
            return n.IsNull(a, negated=not same)
    if same:  # IS NOT DISTINCT FROM: equal, or both NULL
        both_null = n.And((may_be_null(left), may_be_null(right)))
        return _any(n.Compare("=", left, right), both_null)
    return _any(n.Compare("!=", left, right), may_be_null(left), may_be_null(right))


# --- rule 4 ------------------------------------------------------------------------------
def simplify(e: n.Expr) -> n.Expr:
    """Flatten nested AND/OR, drop duplicates, fold constants: ``TRUE AND p`` is ``p``,
    ``FALSE AND p`` and ``NULL AND p`` cannot be TRUE, ``1 = 1`` is TRUE.

    Only for trees in negation normal form (there NULL and FALSE both mean "never TRUE").

    >>> str(simplify(n.And((n.TRUE, n.Or((n.NULL, n.Column("b"))), n.Compare("=", n.Literal(1), n.Literal(1))))))
    'b'
    """
    return bottom_up(e, _simplify_node)


def _simplify_node(e: n.Expr) -> n.Expr:
    """:func:`simplify` of one node whose children are simplified."""
    if type(e) is n.Compare and type(e.left) is not n.Literal:  # (the most common: as it is)
        return e
    if isinstance(e, (n.And, n.Or)):
        return _simplify_junction(e)
    if isinstance(e, n.Compare) and isinstance(e.left, n.Literal) and isinstance(e.right, n.Literal):
        return n.Literal(_compare_literals(e.op, e.left.value, e.right.value))
    if isinstance(e, n.IsNull) and isinstance(e.arg, n.Literal):
        return n.Literal((e.arg.value is None) != e.negated)
    return e


def _simplify_junction(e: "n.And | n.Or") -> n.Expr:
    """:func:`simplify` of an AND or OR whose parts are simplified (and flat: the nodes splice
    in parts of their own kind). Constants (only literals are) absorb the whole, or drop out;
    the other parts are kept once each, in order.

    >>> x = n.Compare(">", n.Column("x"), n.Literal(1))
    >>> str(_simplify_junction(n.Or((x, n.FALSE, x, n.NULL)))), str(_simplify_junction(n.Or((x, n.TRUE))))
    ('x > 1', 'TRUE')
    """
    absorbing, neutral = (False, True) if isinstance(e, n.And) else (True, False)
    args = e.args
    if any(isinstance(a, type(e)) for a in args):  # (not from the node classes, which splice)
        args = tuple(p for a in args for p in (a.args if isinstance(a, type(e)) else (a,)))
    constants = [p for p in args if isinstance(p, n.Literal)]
    for p in constants:
        c = _truth(p)
        if c is absorbing or (c is None and isinstance(e, n.And)):
            return n.Literal(absorbing)
    parts = [p for p in args if not isinstance(p, n.Literal)] if constants else args
    try:
        out = list(dict.fromkeys(parts))  # each part hashed once
    except TypeError:  # an unhashable literal below: compare with each
        out = []
        for p in parts:
            if p not in out:
                out.append(p)
    if not out:
        return n.Literal(neutral)
    if len(out) == 1:
        return out[0]
    return e if args is e.args and len(out) == len(args) else type(e)(tuple(out))  # (nothing dropped: e)


def _truth(e: n.Expr):
    """True/False for a boolean literal, None for NULL or anything else."""
    if isinstance(e, n.Literal) and isinstance(e.value, (bool, int, float)):
        return bool(e.value)
    return None


def _compare_literals(op: str, a, b):
    if a is None or b is None:
        return False  # NULL: never TRUE
    try:
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            an, bn = isinstance(a, float) and math.isnan(a), isinstance(b, float) and math.isnan(b)
            key = {"=": an and bn, "!=": an != bn, "<": bn and not an, "<=": bn,
                   ">": an and not bn, ">=": an}
            return key[op]
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    except TypeError:
        raise TypeMismatchError(f"cannot compare literals {a!r} and {b!r}") from None


def fold_literal_arithmetic(e: n.Expr) -> n.Expr:
    """Fold arithmetic between numeric literals (``1 + 2``).

    >>> str(fold_literal_arithmetic(n.Arith("+", n.Literal(1), n.Literal(2))))
    '3'
    """
    return bottom_up(e, _fold_arithmetic)


def _fold_arithmetic(e: n.Expr) -> n.Expr:
    if isinstance(e, n.Arith) and isinstance(e.left, n.Literal) and isinstance(e.right, n.Literal):
        a, b = e.left.value, e.right.value
        if a is None or b is None:
            return n.NULL
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            return n.Literal({"+": a + b, "-": a - b, "*": a * b}[e.op])
    return e


#: the rules, in the order they run
RULES = (fold_literal_casts, fold_literal_arithmetic, orient_comparisons, fold_in_lists, push_not,
         simplify)

#: the node steps of the first rules of :data:`RULES`, which all rewrite bottom-up, each node
#: after its children: applied in one pass, one node at a time, they give what the rules give
#: one after another (a step never undoes another's work on the children it is shown)
_LOCAL_STEPS = ((fold_literal_casts, _fold_literal_cast), (fold_literal_arithmetic, _fold_arithmetic),
                (orient_comparisons, _orient_comparison), (fold_in_lists, _fold_in_list))


def _local_steps(e: n.Expr) -> n.Expr:
    if type(e) is n.Compare:  # (the most common node; only orienting applies to it)
        return _orient_comparison(e)
    for _, step in _LOCAL_STEPS:
        e = step(e)
    return e


def rewrite(e: n.Expr) -> n.Expr:
    """Run every rule of :data:`RULES` in order (the bottom-up ones fused into one pass)."""
    rules = list(RULES)
    if tuple(rules[:len(_LOCAL_STEPS)]) == tuple(rule for rule, _ in _LOCAL_STEPS):
        e = bottom_up(e, _local_steps)
        rules = rules[len(_LOCAL_STEPS):]
    for rule in rules:
        e = rule(e)
    return e
