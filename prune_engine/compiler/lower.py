"""Lowering: turn a predicate in negation normal form into a tree of container tests.

Each node of the rewritten tree becomes a :mod:`~prune_engine.evaluate.checks` test.
Literals meet their column's type here (:meth:`Domain.coerce`): ``u8_col < -1`` is FALSE,
``int_col = 2.5`` is FALSE, ``int_col > 2.5`` is ``int_col >= 3``. Whatever the engine cannot
reason about (an unknown function, a cast that does not preserve order, ``ILIKE`` without an
index) becomes "unknown", which keeps: never an error. Unknown column names and comparisons
that cannot be typed (a string column against a number) are errors.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa

from prune_engine.compiler.bind import StatsSchema
from prune_engine.errors import TypeMismatchError, UnknownColumnError
from prune_engine.evaluate import checks as c
from prune_engine.evaluate.domains import (
    ArrowDomain, Coerced, DecimalDomain, FloatDomain, IntDomain, TemporalDomain, domain_of, read_text_as,
    read_timestamp_text,
)
from prune_engine.evaluate.operands import ArithOperand, CastOperand, ColumnOperand, cast_kind, zoned
from prune_engine.expr import like as likes
from prune_engine.expr import regex
from prune_engine.expr import nodes as n
from prune_engine.stats import layout
from prune_engine.stats.layout import ColumnInfo

UNKNOWN = "unknown"
_JUNCTIONS = frozenset({n.And, n.Or})

#: the result of comparing with a literal outside every value of the domain
_BELOW = {"=": False, "!=": "value", "<": False, "<=": False, ">": "value", ">=": "value"}
_ABOVE = {"=": False, "!=": "value", "<": "value", "<=": "value", ">": False, ">=": False}
#: comparing with NaN (NaN = NaN, NaN above +inf)
_NAN = {"=": "nan", "!=": "regular", "<": "regular", "<=": "value", ">": False, ">=": "nan"}

ARRAY_CONTAINS = "array_contains"


#: integer type ranges, narrowest first, up to 128 bits (DuckDB's HUGEINT)
_INT_RANGES = [r for bits in (8, 16, 32, 64, 128)
               for r in ((-(2 ** (bits - 1)), 2 ** (bits - 1) - 1), (0, 2**bits - 1))]


def result_range(operand_range: tuple[int, int], constants) -> tuple[int, int]:
    """The range of the narrowest integer type an engine may compute ``x op c`` in: ``x``'s own
    type when every constant fits it (DuckDB computes ``tinyint_col + 1`` in TINYINT), else the
    smallest type holding both. A result beyond it overflows somewhere (an error, or a wrap
    around, as in Spark's non-ANSI mode), so it proves nothing.

    >>> result_range((-128, 127), [1]), result_range((0, 255), [-1]), result_range((0, 255), [1000])
    ((-128, 127), (-32768, 32767), (-32768, 32767))
    """
    lo, hi = operand_range
    if all(lo <= c <= hi for c in constants):
        return lo, hi
    lo, hi = min(lo, *constants), max(hi, *constants)
    return next(((a, b) for a, b in _INT_RANGES if a <= lo and hi <= b), (lo, hi))


class Lowering:
    """Compiles rewritten predicates against one statistics schema."""

    def __init__(self, schema: StatsSchema):
        self.schema = schema
        self._texts: dict[int, str] | None = None  # while lowering a tree: SQL of its nodes
        self._operands: dict[tuple[str, ...], object] = {}

    def text(self, e: n.Expr) -> str:
        """The SQL of ``e``, a node of the tree being lowered (each subtree rendered once)."""
        return n.render(e, self._texts) if self._texts is not None else str(e)

    # entry ---------------------------------------------------------------------------------
    def lower(self, e: n.Expr) -> c.Check:
        """The test tree of ``e``: AND/OR on an explicit stack (trees may be thousands deep),
        the SQL text of every subtree built once."""
        if self._texts is None:
            self._texts = {}  # id of a node of ``e`` (alive throughout) -> its SQL
            try:
                return self.lower(e)
            finally:
                self._texts = None
        if type(e) not in _JUNCTIONS:
            return self.predicate(e)
        texts, predicate = self._texts, self.predicate

        def junctions(node: n.Expr) -> list:
            return [a for a in node.args if type(a) in _JUNCTIONS]

        def combine(node: n.Expr, below: list) -> c.Check:
            sql = n.render(node, texts)  # (first: it renders the other parts' text in one go)
            done = iter(below)
            parts = tuple(next(done) if type(a) in _JUNCTIONS else predicate(a) for a in node.args)
            return (c.AllOf if type(node) is n.And else c.AnyOf)(parts, sql=sql)

        return n.fold(e, junctions, combine)

    def predicate(self, e: n.Expr) -> c.Check:
        """The test of one predicate (anything but AND and OR)."""
        if type(e) is n.Compare:  # (the most common)
            return self._compare(e)
        if isinstance(e, n.Literal):
            if e.value is None or isinstance(e.value, (bool, int, float)):
                return c.Const(bool(e.value), sql=self.text(e))
            raise TypeMismatchError(f"a predicate cannot be the literal {e}")
        if type(e) in _JUNCTIONS:
            return self.lower(e)
        if isinstance(e, n.Compare):
            return self._compare(e)
        if isinstance(e, n.IsNull):
            return self._is_null(e)
        if isinstance(e, n.IsNan):
            return self._is_nan(e)
        if isinstance(e, n.InList):
            return self._in_list(e)
        if isinstance(e, n.Like):
            return self._like(e)
        if isinstance(e, n.RegexpLike):
            return self._regexp(e)
        if isinstance(e, n.Func) and e.name == ARRAY_CONTAINS:
            return self._array_contains(e)
        self._check_columns(e)
        return c.Const(True, sql=self.text(e))

    def _check_columns(self, e: n.Expr):
        """Resolve every column under ``e`` (an unknown name is an error even where the
        predicate itself is unknown)."""
        for node in e.walk():
            if isinstance(node, n.Func) and node.name == ARRAY_CONTAINS and node.args:
                if isinstance(node.args[0], n.Column):
                    self.schema.resolve_list(node.args[0].path)
            elif isinstance(node, n.Column):
                self._resolve_any(node.path)

    def _resolve_any(self, path):
        try:
            return self.schema.resolve(path)
        except UnknownColumnError:
            if self.schema.resolve_list(path) is None:
                raise
            return None

    # operands ----------------------------------------------------------------------------
    def operand(self, e: n.Expr):
        """The operand for ``e`` (a column, or a monotone function of one), or None."""
        if isinstance(e, n.Column):
            got = self._operands.get(e.path)
            if got is None:  # one operand per column (False: a column of no domain)
                got = self._operands[e.path] = self._column_operand(e)
            return got if got is not False else None
        return self._operand(e)

    def _column_operand(self, e: n.Column):
        info = self.schema.resolve(e.path)
        if info.element and self._names_a_list(info):
            # a path through list elements (orders.price) is tested per element: its bounds
            # are the elements' and its counts unknown (EvalContext.facts), as the scan reads
            # it; a list itself compared to a value means something else in SQL
            raise TypeMismatchError(
                f"column {info.name!r} holds {info.element} elements; test them with "
                f"array_contains({e.path[0]}, value)")
        dom = domain_of(info.type)
        return ColumnOperand(info, dom) if dom is not None else False

    def _names_a_list(self, info: ColumnInfo) -> bool:
        """Is the stats leaf of ``info`` the list (or map) field itself, not a field of its
        elements?"""
        schema = self.schema.schema
        source = layout.MIN_VALUES if layout.MIN_VALUES in schema.names else layout.MAX_VALUES
        field = schema.field(source)
        for name in info.path:
            if not pa.types.is_struct(field.type) or field.type.get_field_index(name) < 0:
                return True  # pragma: no cover - resolved paths exist
            field = field.type.field(name)
        return layout.is_element_field(field)

    def _operand(self, e: n.Expr):
        if isinstance(e, n.Cast):
            base = self.operand(e.arg)
            if base is None:
                return None
            if base.domain.type == e.to:
                return base
            kind = cast_kind(base.domain, e.to)
            return CastOperand(base, domain_of(e.to), kind, str(e)) if kind else None
        if isinstance(e, n.Negate):
            return self._arith(e.arg, -1, 0, (), str(e))
        if isinstance(e, n.Arith):
            left, right = e.left, e.right
            if isinstance(right, n.Literal) and not isinstance(left, n.Literal):
                k = right.value
                if e.op == "+":
                    return self._arith(left, 1, k, (k,), str(e))
                if e.op == "-":
                    return self._arith(left, 1, -k if _numeric(k) else None, (k,), str(e))
                return self._arith(left, k, 0, (k,), str(e))
            if isinstance(left, n.Literal) and not isinstance(right, n.Literal):
                k = left.value
                if e.op == "+":
                    return self._arith(right, 1, k, (k,), str(e))
                if e.op == "-":
                    return self._arith(right, -1, k, (k,), str(e))
                return self._arith(right, k, 0, (k,), str(e))
        self._check_columns(e)
        return None

    def _arith(self, arg: n.Expr, scale, offset, constants: tuple, text: str):
        """``arg * scale + offset``, where the SQL wrote ``constants`` (their types matter)."""
        base = self.operand(arg)
        if base is None or not (_numeric(scale) and _numeric(offset)):
            return None
        if any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in (scale, offset)):
            return None  # constants beyond int64: leave such arithmetic unknown
        if isinstance(base.domain, IntDomain) and all(isinstance(v, int) for v in (scale, offset)):
            limits = result_range(base.limits, constants)
            return ArithOperand(base, scale, offset, IntDomain(pa.int64()), limits, text)
        if isinstance(base.domain, FloatDomain) and base.domain.dtype.itemsize == 8 and scale != 0:
            s, o = float(scale), float(offset)
            if not (math.isfinite(s) and math.isfinite(o)):
                return None
            return ArithOperand(base, s, o, base.domain, None, text)
        return None

    # comparisons -------------------------------------------------------------------------
    def _compare(self, e: n.Compare) -> c.Check:
        left, right = e.left, e.right
        sql = self.text(e)
        if isinstance(right, n.Literal):
            op = self.operand(left)
            if op is None:
                return c.Const(True, sql=sql)
            check = self.compare_literal(op, e.op, right, sql)
            if e.op == "=" and isinstance(op, ColumnOperand) and op.info.ngram and isinstance(right.value, str):
                probe = c.IndexProbe(op.info, "equals", ([right.value],), sql=sql)
                check = c.AllOf((check, probe), sql=sql)
            if e.op in ("=", "!="):
                check = self._index_tests(op, [right], e.op == "!=", check, sql)
            return check
        a, b = self.operand(left), self.operand(right)
        if a is None or b is None:
            return c.Const(True, sql=sql)
        return self._compare_columns(a, e.op, b, sql)

    def compare_literal(self, operand, op: str, lit: n.Literal, sql: str) -> c.Check:
        d = operand.domain
        if lit.value is None:
            return c.Const(False, sql=sql)
        if _plain_int(d, lit):  # (the most common)
            return self._point(operand, op, lit.value, sql)
        co = coerce_literal(d, lit)
        if co.kind == "exact":  # (the most common)
            return self._point(operand, op, co.lo, sql)
        if co.kind == "nan":
            return self._outcome(operand, _NAN[op], sql)
        if co.kind == "below":
            return self._outcome(operand, _BELOW[op], sql)
        if co.kind == "above":
            return self._outcome(operand, _ABOVE[op], sql)
        if co.kind == "between":
            if op == "=":
                return c.Const(False, sql=sql)
            if op == "!=":
                return self._outcome(operand, "value", sql)
            return self._point(operand, "<=", co.lo, sql) if op in ("<", "<=") else self._point(operand, ">=", co.hi, sql)
        if co.kind == "fuzzy":
            if op == "=":
                return c.AllOf((self._point(operand, ">=", co.lo, sql), self._point(operand, "<=", co.hi, sql)), sql=sql)
            if op == "!=":
                return self._outcome(operand, "value", sql)
            return self._point(operand, op, co.hi if op in ("<", "<=") else co.lo, sql)
        return self._point(operand, op, co.lo, sql)

    def _point(self, operand, op: str, v, sql: str) -> c.Check:
        """``operand op v`` for a value ``v`` on the domain's grid, maybe outside its range."""
        domain = operand.domain
        tmin, tmax = domain.limits
        if not isinstance(operand, ColumnOperand) and ((tmin is not None and v < tmin) or (tmax is not None and v > tmax)):
            # arithmetic may leave the type's range (engines compute it exactly, or fail):
            # a literal beyond the range proves nothing
            return c.Presence(operand, "value", sql=sql)
        if tmin is not None and v < tmin:
            return self._outcome(operand, _BELOW[op], sql)
        if tmax is not None and v > tmax:
            return self._outcome(operand, _ABOVE[op], sql)
        return c.CmpLit(operand, op, domain.scalar(v), domain, sql=sql)

    @staticmethod
    def _outcome(operand, what, sql: str) -> c.Check:
        if what is False:
            return c.Const(False, sql=sql)
        return c.Presence(operand, what, sql=sql)

    def _compare_columns(self, a, op: str, b, sql: str) -> c.Check:
        da, db = a.domain, b.domain
        if type(da) is not type(db):
            numeric = (IntDomain, FloatDomain)
            if isinstance(da, numeric) and isinstance(db, numeric):
                # ints meet floats in the float's precision (DuckDB and Spark compare INT with
                # FLOAT as FLOAT) or in double: the int bounds rounded to the float's type bound
                # both, and rounding may tie a strict inequality
                if op == "!=":
                    return self._both_present(a, b, sql)
                op = {"<": "<=", ">": ">="}.get(op, op)
                fd = da if isinstance(da, FloatDomain) else db
                a, b = (x if isinstance(x.domain, FloatDomain) else
                        CastOperand(x, fd, "int_to_float", x.sql()) for x in (a, b))
                return c.CmpCols(a, op, b, fd, sql=sql)
            if isinstance(da, numeric + (DecimalDomain,)) and isinstance(db, numeric + (DecimalDomain,)):
                return self._both_present(a, b, sql)  # decimal against int/float: not modelled
            raise TypeMismatchError(f"cannot compare {a.column.type} with {b.column.type} in {sql}")
        if isinstance(da, IntDomain):
            signed = {x.dtype.kind for x in (da, db)}
            if len(signed) > 1 and 8 in (da.dtype.itemsize, db.dtype.itemsize):
                return self._both_present(a, b, sql)  # int64 vs uint64: numpy would round
            return c.CmpCols(a, op, b, da, sql=sql)
        if isinstance(da, TemporalDomain):
            if da.unit_ns != db.unit_ns or zoned(da) != zoned(db):
                # the coarser side (or, in one unit, the zone-less side) is cast to the other's type,
                # as engines do (a zone-less value is read in the session's zone)
                keep_a = da.unit_ns < db.unit_ns or (da.unit_ns == db.unit_ns and zoned(da))
                fine, coarse = (a, b) if keep_a else (b, a)
                wrapped = CastOperand(coarse, fine.domain, "temporal", coarse.sql())
                a, b = (fine, wrapped) if fine is a else (wrapped, fine)
            return c.CmpCols(a, op, b, a.domain, sql=sql)
        if isinstance(da, DecimalDomain):
            if da.type.scale != db.type.scale or not (da.small and db.small):
                return self._both_present(a, b, sql)
            return c.CmpCols(a, op, b, da, sql=sql)
        if isinstance(da, ArrowDomain):
            if da.is_text != db.is_text:
                raise TypeMismatchError(f"cannot compare {a.column.type} with {b.column.type} in {sql}")
            if da.type != db.type:
                return self._both_present(a, b, sql)
            return c.CmpCols(a, op, b, da, sql=sql)
        return c.CmpCols(a, op, b, da, sql=sql)  # float/float, bool/bool

    @staticmethod
    def _both_present(a, b, sql):
        return c.AllOf((c.Presence(a, "value"), c.Presence(b, "value")), sql=sql)

    # IS NULL, IN, LIKE ---------------------------------------------------------------------
    def _is_null(self, e: n.IsNull) -> c.Check:
        if isinstance(e.arg, n.Column):
            info = self._resolve_any(e.arg.path)
            if info is None or info.element:
                return c.Const(True, sql=self.text(e))  # row-level nulls of a list: not in the stats
        op = self.operand(e.arg)
        if op is None:
            return c.Const(True, sql=self.text(e))
        if e.negated:
            return c.Presence(op, "value", sql=self.text(e))
        if isinstance(op, CastOperand):
            return c.Const(True, sql=self.text(e))  # a cast may produce NULL (TRY_CAST)
        return c.Presence(op, "null", sql=self.text(e))

    def _is_nan(self, e: n.IsNan) -> c.Check:
        """``isnan(x)``: a NaN may be present; ``NOT isnan(x)``: a non-NaN value may be.
        Integers and decimals hold no NaN (engines cast them to DOUBLE); other types are
        unknown (Spark casts the text 'NaN' to a NaN)."""
        op = self.operand(e.arg)
        if op is None or not isinstance(op.domain, (FloatDomain, IntDomain, DecimalDomain)):
            return c.Const(True, sql=self.text(e))
        return c.Presence(op, "regular" if e.negated else "nan", sql=self.text(e))

    def _in_list(self, e: n.InList) -> c.Check:
        sql = self.text(e)
        op = self.operand(e.arg)
        if op is None or not all(isinstance(v, n.Literal) for v in e.values):
            self._check_columns(e)
            return c.Const(True, sql=sql)  # an item the rewrite could not make a literal
        d = op.domain
        values = list(e.values)
        floats = [v for v in values if isinstance(v.value, float)]
        if floats:
            # a DOUBLE among the items makes engines compare every item (text too) as DOUBLE; FLOAT
            # items only, as FLOAT
            single = all(v.type is not None and pa.types.is_float32(v.type) for v in floats)
            values = [_as_float(v, pa.float32() if single else None) for v in values]
        if e.negated:
            if any(v.value is None for v in values):
                return c.Const(False, sql=sql)  # x NOT IN (.., NULL) is never TRUE
            exact = [x for x in (_exact_value(d, v) for v in values) if x is not _INEXACT]
            return self._index_tests(op, values, True, c.NotInSet(op, d.sorted_set(exact), d, sql=sql),
                                     sql)
        exact, ranges, has_nan = [], [], False
        for v in values:
            if v.value is None:
                continue
            x = _exact_value(d, v)
            if x is not _INEXACT:
                exact.append(x)
                continue
            co = coerce_literal(d, v)
            if co.kind == "nan":
                has_nan = True
            elif co.kind == "fuzzy":
                ranges.append(self.compare_literal(op, "=", v, sql))
        parts: list[c.Check] = []
        if exact or has_nan:
            parts.append(c.InSet(op, d.sorted_set(exact), d, has_nan, sql=sql))
        parts.extend(ranges)
        check = c.AnyOf(tuple(parts), sql=sql) if len(parts) > 1 else (parts[0] if parts else c.Const(False, sql=sql))
        if isinstance(op, ColumnOperand) and op.info.ngram and values and all(
                isinstance(v.value, str) or v.value is None for v in values):
            probe = c.IndexProbe(op.info, "equals", ([v.value for v in values if v.value is not None],), sql=sql)
            check = c.AllOf((check, probe), sql=sql)
        return self._index_tests(op, values, False, check, sql)

    @staticmethod
    def _index_tests(op, values: list[n.Literal], negated: bool, check: c.Check, sql: str
                     ) -> c.Check:
        """``check`` AND the index tests of ``op = v`` / ``op IN (values)`` (``negated``:
        ``!=`` / ``NOT IN``) where ``op`` is a column with Bloom filters (not negated) or
        value sets, and every value meets its type exactly (a value that meets it only
        approximately, such as timestamp text with a zone, would need a range: no test)."""
        info = op.info if isinstance(op, ColumnOperand) else None
        if info is None or not ((info.bloom and not negated) or info.value_set):
            return check
        exact = []
        for v in values:
            if v.value is None:
                if negated:
                    return check  # x NOT IN (.., NULL) is never TRUE: decided already
                continue  # NULL equals nothing
            co = coerce_literal(op.domain, v)
            if co.kind == "exact" and _in_limits(op.domain, co.lo):
                exact.append(co.lo)
            elif co.kind not in ("below", "above", "between", "exact"):  # those equal no value
                return check
        parts = [check]
        if info.bloom and not negated:
            parts.append(c.BloomProbe(info, tuple(exact), sql=f"{sql} (Bloom filter of {info.name})"))
        if info.value_set:
            parts.append(c.ValueSetCheck(info, op.domain, tuple(exact), negated,
                                         sql=f"{sql} (dictionary of {info.name})"))
        return c.AllOf(tuple(parts), sql=sql)

    def _like(self, e: n.Like) -> c.Check:
        sql = self.text(e)
        tokens = likes.parse_like(e.pattern, e.escape)
        op = self.operand(e.arg)
        if not isinstance(op, ColumnOperand) or not isinstance(op.domain, ArrowDomain):
            return c.Const(True, sql=sql)
        info, d = op.info, op.domain
        if e.case_insensitive:
            if e.negated or not info.ngram:
                return c.Presence(op, "value", sql=sql) if not e.negated else c.Const(True, sql=sql)
            return c.AllOf((c.Presence(op, "value"), self._like_probe(info, e)), sql=sql)
        wild = any(likes.is_wildcard(t) for t in tokens)
        text = "".join(tokens)
        if not wild:
            return self.compare_literal(op, "!=" if e.negated else "=", n.Literal(text), sql)
        prefix = likes.literal_prefix(tokens)
        if not d.is_text:
            prefix_v, upper = prefix.encode(), likes.successor_bytes(prefix.encode())
        else:
            prefix_v, upper = prefix, likes.successor(prefix)
        if e.negated:
            if prefix and len(tokens) == 2 and tokens[1] is likes.ANY:
                return c.AllStartWith(op, d.scalar(prefix_v), None if upper is None else d.scalar(upper), d, sql=sql)
            return c.Presence(op, "value", sql=sql)
        if prefix:
            check = c.PrefixRange(op, d.scalar(prefix_v), None if upper is None else d.scalar(upper), d, sql=sql)
        else:
            check = c.Presence(op, "value", sql=sql)
        if info.ngram:
            check = c.AllOf((check, self._like_probe(info, e)), sql=sql)
        return check

    @staticmethod
    def _like_probe(info: ColumnInfo, e: n.Like) -> c.Check:
        return c.IndexProbe(info, "like", (e.pattern, e.escape, e.case_insensitive), sql=str(e))

    def _regexp(self, e: n.RegexpLike) -> c.Check:
        """A match needs a value; one that starts with the pattern's anchored prefix
        (:func:`~prune_engine.expr.regex.anchored_prefix`, a range min/max can test); and, on
        an indexed column, the grams every match contains."""
        sql = self.text(e)
        op = self.operand(e.arg)
        if e.negated or not isinstance(op, ColumnOperand) or not isinstance(op.domain, ArrowDomain) \
                or not op.domain.is_text:
            return c.Const(True, sql=sql)
        parts: list[c.Check] = []
        prefix = regex.anchored_prefix(e.pattern)
        if prefix:
            upper = likes.successor(prefix)
            parts.append(c.PrefixRange(op, op.domain.scalar(prefix),
                                       None if upper is None else op.domain.scalar(upper),
                                       op.domain, sql=sql))
        if op.info.ngram:
            parts.append(c.IndexProbe(op.info, "regex", (e.pattern,), sql=sql))
        if not parts:
            return c.Const(True, sql=sql)
        return c.AllOf((c.Presence(op, "value"), *parts), sql=sql)

    def _array_contains(self, e: n.Func) -> c.Check:
        sql = self.text(e)
        if len(e.args) != 2 or not isinstance(e.args[0], n.Column) or not isinstance(e.args[1], n.Literal):
            self._check_columns(e)
            return c.Const(True, sql=sql)
        info = self.schema.resolve_list(e.args[0].path)
        dom = domain_of(info.type) if info is not None else None
        if dom is None:
            return c.Const(True, sql=sql)
        return self.compare_literal(ColumnOperand(info, dom), "=", e.args[1], sql)


def coerce_literal(d, lit: n.Literal):
    """Where ``lit`` falls in domain ``d``. Untyped text is cast by engines to the column's
    type, which rounds (DuckDB: ``'12.5'`` is 13 for a BIGINT, ``'00:00:00.7'`` is ``00:00:01``
    for TIMESTAMP_S) or truncates (DATE, Spark): text between two values may mean either. A
    zone written in timestamp text counts only where the text is read as a zoned timestamp
    (:func:`~prune_engine.evaluate.domains.read_text_as`); untyped text with a zone against a
    zone-less timestamp may mean either its wall time (DuckDB 2, PostgreSQL, Spark) or its
    instant (DuckDB 1.x for TIMESTAMP_NS): anything between the two."""
    value, instant = lit.value, None
    if lit.type is None and not isinstance(value, str):  # (what the rest makes of it, in one step)
        return d.coerce(value)
    if isinstance(value, str) and isinstance(d, TemporalDomain):
        try:
            written = read_timestamp_text(value)
        except ValueError:
            pass  # no date or timestamp: the domain's coerce says so
        else:
            value = read_text_as(written, lit.type, d.type)
            if lit.type is None and written.offset_s and pa.types.is_timestamp(d.type) and d.type.tz is None:
                instant = d.coerce(written)
    co = d.coerce(value)
    if instant is not None:
        return Coerced("fuzzy", min(co.lo, instant.lo), max(co.hi, instant.hi))
    if co.kind == "between" and lit.type is None and isinstance(lit.value, str):
        return Coerced("fuzzy", co.lo, co.hi)
    if co.kind == "between" and _may_hold_finer(d):
        return Coerced("fuzzy", co.lo, co.hi)
    if (lit.type is not None and pa.types.is_float32(lit.type) and co.kind in ("exact", "between", "fuzzy")
            and (isinstance(d, DecimalDomain) or (isinstance(d, IntDomain) and abs(lit.value) >= 2**24))):
        # INT against FLOAT compares as FLOAT (exact below 2**24): a value within a float32 step
        # of the literal may be equal
        step = Fraction(float(np.spacing(np.float32(abs(lit.value)))))
        per = 10 ** getattr(d, "scale", 0)
        return Coerced("fuzzy", math.floor((Fraction(lit.value) - step) * per),
                       math.ceil((Fraction(lit.value) + step) * per))
    return co


def _may_hold_finer(d) -> bool:
    """Microsecond timestamp statistics may stand for finer values: INT96 holds nanoseconds
    (Impala writes them) and a lake of nanosecond and coarser files has its statistics in
    microseconds, rounded outwards (:func:`~prune_engine.stats.unify.unify_types`). Against
    them a literal between two microseconds may be equal to a value: its neighbours are."""
    return isinstance(d, TemporalDomain) and pa.types.is_timestamp(d.type) and d.type.unit == "us"


def _plain_int(d, lit: n.Literal) -> bool:
    """Is ``lit`` an untyped Python int against an integer domain ``d``, which it meets exactly
    at its own value (:meth:`IntDomain.coerce`)? The common literal, taken in one step."""
    return type(lit.value) is int and lit.type is None and type(d) is IntDomain


#: what :func:`_exact_value` gives for a literal that meets no value of the domain exactly
_INEXACT = object()


def _exact_value(d, lit: n.Literal):
    """The value of domain ``d`` that ``lit`` meets exactly (:func:`coerce_literal`), if it is
    within the type's limits; else :data:`_INEXACT`.

    >>> d = IntDomain(pa.int8())
    >>> _exact_value(d, n.Literal(5)), _exact_value(d, n.Literal(2.0))
    (5, 2)
    >>> _exact_value(d, n.Literal(500)) is _INEXACT, _exact_value(d, n.Literal(2.5)) is _INEXACT
    (True, True)
    """
    if _plain_int(d, lit):
        v = lit.value
    else:
        co = coerce_literal(d, lit)
        if co.kind != "exact":
            return _INEXACT
        v = co.lo
    return v if _in_limits(d, v) else _INEXACT


def _as_float(lit: n.Literal, to: pa.DataType | None) -> n.Literal:
    """A number, or text that reads as one, as the DOUBLE (``to`` None) or FLOAT engines cast
    it to (anything else unchanged)."""
    v = lit.value
    if isinstance(v, bool) or not isinstance(v, (str, int, float, decimal.Decimal)):
        return lit
    try:
        x = float(v.strip() if isinstance(v, str) else v)
    except ValueError:
        return lit
    if to is not None:
        with np.errstate(over="ignore"):
            x = float(np.float32(x))
    return n.Literal(x, to)


def _numeric(v) -> bool:
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def _in_limits(d, v) -> bool:
    lo, hi = d.limits
    return (lo is None or v >= lo) and (hi is None or v <= hi)
