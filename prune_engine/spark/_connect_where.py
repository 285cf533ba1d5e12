"""A Spark ``where`` read on a Spark Connect client: the same engine nodes as
:mod:`._catalyst`, without a JVM.

A Connect session has no py4j gateway, so Spark's optimized plan cannot be read. The where is
read here instead, from its syntax (SQL text through sqlglot's ``spark`` dialect, or a Connect
Column's expression tree), rebuilt as the Catalyst nodes Spark's analyzer would make of it
(:class:`._catalyst._Node`: ``AttributeReference``, ``GetStructField``, ``Literal``,
``Cast``, the comparisons, ``In``, ``Like`` ...), and mapped by the classic path's
:class:`._catalyst._Translator`. Spark keeps the last word on everything this module cannot
decide exactly, in two calls:

1. *Analysis* (``df.where(where).select(probes).schema``): Spark parses and resolves the
   where (a bad clause is Spark's error, mapped as on the classic path) and gives the type of
   every constant sub-expression and every explicit cast (the probes).
2. *Evaluation* (one row, ``spark.range(1).select(...)``): every constant, cast to the type
   Spark's type coercion gives it (``CAST(c AS t)`` run by Spark), read back exactly from
   Arrow (timestamps as microseconds, dates as days, decimals exact, floats as float32). So
   ``timestamp'...'`` is read in the session time zone, ``'2024-03-10'`` compared with a date
   becomes Spark's date, ``double('NaN')``, ``1.5D``, ``0.1`` against a float column are
   Spark's doubles. A constant Spark fails on (an ANSI cast of ``'1.5'`` to an integer)
   prunes nothing: Spark reports the error when the query runs. Constants whose value is
   certain as written skip this call (:class:`_Known`): decimal integers at an integer type
   that holds them, ``timestamp_seconds`` of one at a timestamp, and plain
   ``YYYY-MM-DD[ HH:MM:SS[.ffffff]]`` strings, ``date'...'`` and ``timestamp'...'`` at a
   date, or at a timestamp in a UTC session (elsewhere the zone's rules stay Spark's).

What the analyzer would add is emulated only where it is certain (:func:`common_type`):
numeric comparisons (Spark's common type: the wider integer, the wider decimal, double when
a float or double is involved), strings compared with dates, timestamps, numbers, binary
or booleans in ANSI mode (Spark 4's default: the string is cast), and date/timestamp
mixtures. Integer arithmetic with constants is modelled (exact in ANSI mode only, as on the
classic path), double arithmetic too; decimal arithmetic is not.

Everything else is "unknown" (keeps every file): collated strings, ``ILIKE``, a function of a
column, a comparison of two differently typed columns, constants with nondeterministic or
time-dependent functions (``rand``, ``current_date``, ``now``, ``uuid``, ...), functions
sqlglot does not know (possibly UDFs), subqueries, and any SQL sqlglot cannot parse.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from prune_engine.expr import nodes as n
from prune_engine.spark._catalyst import (_EPOCH, _EPOCH_DATE, _UTC_ZONES, UNREAD, _Node,
                                           _Translator, _spark_error, check_where)
from prune_engine.spark._columns import INTEGRAL, StatsColumns, spark_type_name

log = logging.getLogger("prune_engine.spark")

#: sqlglot class names (lower case) and function names of constants that must not be
#: evaluated once on the client: nondeterministic or time-dependent
_VOLATILE = re.compile(r"rand|uuid|current|now|localtimestamp|unix_timestamp|shuffle|"
                       r"monotonically|partition_id|input_file|session_user|user|"
                       r"curdate|today|sysdate|getdate", re.IGNORECASE)
#: functions sqlglot does not know (parsed as anonymous) that are Spark's and deterministic
_KNOWN_ANONYMOUS = {"make_date", "make_timestamp", "make_timestamp_ntz", "make_timestamp_ltz",
                    "timestamp_micros", "timestamp_millis", "timestamp_seconds",
                    "date_from_unix_date",
                    "tinyint", "smallint", "int", "bigint", "float", "double", "decimal",
                    "string", "binary", "boolean", "date", "timestamp", "timestamp_ntz",
                    "unhex", "negative", "positive"}
_NUMERIC = INTEGRAL | {"float", "double", "decimal"}
_DATETIME = {"date", "timestamp", "timestamp_ntz"}
#: a date, or a date and time without a zone, that Spark and Python read alike
_PLAIN_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}"
                             r"(\.[0-9]{1,6})?)?")
#: decimal digits of each integral type, as Spark widens it to a decimal
_DIGITS = {"byte": 3, "short": 5, "integer": 10, "long": 20}
_INT_RANK = {"byte": 0, "short": 1, "integer": 2, "long": 3}
_COMPARE = {"=": "EqualTo", "<": "LessThan", "<=": "LessThanOrEqual", ">": "GreaterThan",
            ">=": "GreaterThanOrEqual", "<=>": "EqualNullSafe"}
_FLIP = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "<=>": "<=>"}
_ARITH = {"+": "Add", "-": "Subtract", "*": "Multiply"}
_TEXT = {"startswith": "StartsWith", "endswith": "EndsWith", "contains": "Contains",
         "rlike": "RLike"}


# --------------------------------------------------------------------------------------------
# the where's syntax, from either source


@dataclass
class _Ref:
    """A column reference, as name parts (a struct field is a longer path)."""

    parts: tuple[str, ...]


@dataclass
class _Const:
    """A constant sub-expression (no column), evaluated by Spark: a Connect Column; ``known``:
    what it is as written, when that may need no evaluation (:class:`_Known`)."""

    column: Any
    probe: int = -1
    known: "_Known | None" = None


@dataclass(frozen=True)
class _Known:
    """A constant whose value at some types is known without Spark: ``kind`` ``"integer"``
    (a decimal integer as written, ``42``, ``-7``: the same at every integer type that holds
    it), ``"seconds"`` (``timestamp_seconds`` of one: a timestamp), or ``"text"`` (a string,
    ``date`` or ``timestamp`` literal of a plain ``YYYY-MM-DD[ HH:MM:SS[.ffffff]]``: a date
    when it is one, a timestamp in a UTC session; elsewhere the zone's rules are Spark's)."""

    kind: str
    value: Any

    def at(self, spark_type, utc: bool):
        """``(value, datetime value or None)`` of the constant at ``spark_type`` as Spark
        would evaluate it, or None when Spark must be asked."""
        if self.kind == "integer":
            bits = _INTEGER_BITS.get(spark_type) if isinstance(spark_type, str) else None
            fits = bits and -(1 << bits - 1) <= self.value < 1 << bits - 1
            return (self.value, None) if fits else None
        raw = None
        try:
            if self.kind == "seconds" and spark_type == "timestamp":
                raw = self.value * 1_000_000
            elif self.kind == "text" and spark_type == "date" and len(self.value) == 10:
                raw = (dt.date.fromisoformat(self.value) - _EPOCH_DATE).days
            elif self.kind == "text" and spark_type in ("timestamp", "timestamp_ntz") and utc:
                since = dt.datetime.fromisoformat(self.value) - _EPOCH
                raw = (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
        except ValueError:  # no such date (February 30th, year 0): Spark's error or NULL
            return None
        if raw is None or not -(1 << 63) <= raw < 1 << 63:
            return None
        return str(raw), raw


@dataclass
class _Call:
    """An operation this module models: ``op`` is one of ``and or not`` the comparison
    operators, ``isnull isnotnull in like rlike startswith endswith contains
    array_contains + - * neg cast``. A cast carries the Connect Column of itself in
    ``column`` (its type is asked of Spark)."""

    op: str
    args: list
    column: Any = None
    probe: int = -1


@dataclass
class _Opaque:
    """Anything else: unknown."""

    what: str


def _connect_functions():
    from pyspark.sql.connect import functions as F

    return F


# SQL text ------------------------------------------------------------------------------------


def _from_sql(text: str):
    """The where's syntax from Spark SQL text, or None when sqlglot cannot read it."""
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    try:
        tree = sqlglot.parse_one(text, read="spark")
    except (ParseError, TokenError, ValueError) as e:
        log.info("sqlglot cannot read the where (%s): no file is pruned", e)
        return None
    return _SqlReader(text).read(tree)


class _SqlReader:
    """sqlglot's tree of a where as :class:`_Ref`, :class:`_Const`, :class:`_Call`."""

    def __init__(self, text: str):
        self.text = text

    def read(self, e):
        from sqlglot import exp

        while isinstance(e, exp.Paren):
            e = e.this
        compare = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">",
                   exp.GTE: ">=", exp.NullSafeEQ: "<=>"}
        if type(e) in compare:
            op = compare[type(e)]
            call = _Call("=" if op == "!=" else op, [self.read(e.this), self.read(e.expression)])
            return _Call("not", [call]) if op == "!=" else call
        if isinstance(e, (exp.And, exp.Or)):
            return _Call("and" if isinstance(e, exp.And) else "or",
                         [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.Not):
            return _Call("not", [self.read(e.this)])
        if isinstance(e, exp.Column) or (isinstance(e, exp.Dot) and self._path(e) is not None):
            path = self._path(e)
            return _Ref(path) if path is not None else _Opaque("column")
        if self._constant(e):
            sql = self._constant_sql(e)
            return _Const(_connect_functions().expr(sql), known=self._known(e)) if sql \
                else _Opaque("constant")
        if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
            return _Call("isnull", [self.read(e.this)])
        if isinstance(e, exp.In):
            if e.args.get("query") or e.args.get("unnest") or e.args.get("field"):
                return _Opaque("in subquery")
            return _Call("in", [self.read(e.this)] + [self.read(x) for x in e.expressions])
        if isinstance(e, exp.Between):
            value = self.read(e.this)
            return _Call("and", [_Call(">=", [value, self.read(e.args["low"])]),
                                 _Call("<=", [value, self.read(e.args["high"])])])
        if isinstance(e, exp.Escape) and isinstance(e.this, exp.Like):
            return _Call("like", [self.read(e.this.this), self.read(e.this.expression),
                                  self.read(e.expression)])
        if isinstance(e, exp.Like):
            return _Call("like", [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.RegexpLike) and not e.args.get("flag"):
            return _Call("rlike", [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.StartsWith):
            return _Call("startswith", [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.ArrayContains):
            return _Call("array_contains", [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.Anonymous) and e.name.lower() in ("startswith", "endswith",
                                                               "contains") \
                and len(e.expressions) == 2:
            return _Call(e.name.lower(), [self.read(x) for x in e.expressions])
        if type(e) in (exp.Add, exp.Sub, exp.Mul):
            op = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}[type(e)]
            return _Call(op, [self.read(e.this), self.read(e.expression)])
        if isinstance(e, exp.Neg):
            return _Call("neg", [self.read(e.this)])
        if isinstance(e, (exp.Cast, exp.TryCast)) and not e.args.get("format"):
            sql = self._constant_sql(e)  # the cast with its column, as Spark SQL
            if sql:
                return _Call("cast", [self.read(e.this)], _connect_functions().expr(sql))
        return _Opaque(type(e).__name__)

    @staticmethod
    def _path(e) -> tuple[str, ...] | None:
        """The name parts of a column or a dotted field chain (``a.b.c``)."""
        from sqlglot import exp

        if isinstance(e, exp.Column):
            if isinstance(e.this, exp.Star):
                return None
            return tuple(p.name for p in e.parts)
        if isinstance(e, exp.Dot) and isinstance(e.expression, exp.Identifier):
            inner = _SqlReader._path(e.this)
            return None if inner is None else inner + (e.expression.name,)
        return None

    def _constant(self, e) -> bool:
        """No column, no subquery, no volatile or unknown function: Spark may evaluate it
        once for all rows."""
        from sqlglot import exp

        for node in e.walk():
            if isinstance(node, (exp.Column, exp.Dot, exp.Subquery, exp.Select, exp.Exists,
                                 exp.Star, exp.Placeholder, exp.Parameter, exp.Identifier,
                                 exp.Lambda, exp.Window, exp.AggFunc)):
                if isinstance(node, exp.Identifier) and isinstance(node.parent, exp.Anonymous):
                    continue
                return False
            if isinstance(node, exp.Anonymous):
                if node.name.lower() not in _KNOWN_ANONYMOUS:
                    return False
            elif isinstance(node, exp.Func) and _VOLATILE.search(type(node).__name__):
                return False
        return True

    def _known(self, e) -> _Known | None:
        """What ``e`` is as written, when its value may be known without Spark: a decimal
        integer (digits, maybe negated), ``timestamp_seconds`` of one, or a string, ``date``
        or ``timestamp`` literal of a plain date and time (:class:`_Known`)."""
        from sqlglot import exp

        if isinstance(e, exp.Anonymous) and e.name.lower() == "timestamp_seconds" \
                and len(e.expressions) == 1:
            inner = self._known(e.expressions[0])
            return _Known("seconds", inner.value) if inner and inner.kind == "integer" else None
        types = exp.DataType.Type
        if isinstance(e, exp.Cast) and e.to.this in (types.DATE, types.TIMESTAMP,
                                                      types.TIMESTAMPTZ, types.TIMESTAMPLTZ,
                                                      types.TIMESTAMPNTZ):
            inner = self._known(e.this)  # date'...', timestamp'...', CAST('...' AS DATE)
            if inner is None or inner.kind != "text" \
                    or (e.to.this == types.DATE and len(inner.value) != 10):
                return None  # a date cast drops a time of day
            return inner
        sign = -1 if isinstance(e, exp.Neg) else 1
        e = e.this if sign < 0 else e
        text = self._written(e) if isinstance(e, exp.Literal) else None
        if text is None:
            return None
        if not e.is_string:
            return _Known("integer", sign * int(text)) if re.fullmatch(r"[0-9]+", text) else None
        match = _PLAIN_DATETIME.fullmatch(text[1:-1]) if sign > 0 and text[0] == "'" else None
        return _Known("text", match.group()) if match else None

    def _written(self, e) -> str | None:
        """``e`` as written in the SQL text, or None when its place is not known."""
        meta = e.meta
        if "start" not in meta or "end" not in meta:
            return None
        return self.text[meta["start"]:meta["end"] + 1]

    def _constant_sql(self, e) -> str | None:
        """Spark SQL text of ``e`` with every literal as written (Spark reads its own string
        escapes and number suffixes: sqlglot's reading of them is not relied on)."""
        from sqlglot import exp

        def raw(node) -> str | None:
            meta = node.meta
            if "start" not in meta or "end" not in meta:
                return None
            return self.text[meta["start"]:meta["end"] + 1]

        failed = []

        def keep_literal(node):
            if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Literal):
                text = raw(node.this)
                if text is not None and re.fullmatch(r"[0-9.eE+-]+(?:bd|[lsydf])", text, re.I):
                    return exp.Var(this=text)  # 7L, 1.5D, 0.1f, 1.50BD: Spark's own reading
            if isinstance(node, exp.Literal):
                text = raw(node)
                if text is None:  # sqlglot made it (1.50BD, a type's digits): plain text only
                    if not re.fullmatch(r"[\w.+\- :]*", node.this):
                        failed.append(node)
                    return node
                if node.is_string and not re.fullmatch(r"(?s)(['\"]).*\1", text):
                    failed.append(node)
                    return node
                return exp.Var(this=text)
            return node

        copy = e.copy()
        # a node's meta does not survive copy(): positions are taken from the original
        for original, copied in zip(e.walk(), copy.walk()):
            copied.meta.update(original.meta)
        sql = copy.transform(keep_literal, copy=False).sql(dialect="spark")
        return None if failed else sql


# Connect Columns ------------------------------------------------------------------------------


def _from_column(expr):
    """The where's syntax from a Connect Column's expression tree."""
    from pyspark.sql.connect import expressions as ce

    if _column_free(expr):
        return _Const(_connect_column(expr))
    if isinstance(expr, ce.ColumnReference):
        if expr._is_metadata_column:
            return _Opaque("metadata column")
        parts = _attribute_parts(expr._unparsed_identifier)
        return _Ref(parts) if parts else _Opaque("column")
    if isinstance(expr, ce.SQLExpression):
        got = _from_sql(expr._expr)
        return _Opaque("sql") if got is None else got
    if isinstance(expr, ce.ColumnAlias):
        return _from_column(expr._child)
    if isinstance(expr, ce.CastExpression):
        return _Call("cast", [_from_column(expr._expr)], _connect_column(expr))
    if isinstance(expr, ce.UnresolvedExtractValue):
        inner = _from_column(expr._child)
        key = expr._extraction
        if isinstance(inner, _Ref) and isinstance(key, ce.LiteralExpression) \
                and isinstance(key._value, str):
            return _Ref(inner.parts + (key._value,))
        return _Opaque("extract value")
    if isinstance(expr, ce.UnresolvedFunction) and not expr._is_distinct:
        name, args = expr._name, expr._args
        lower = name.lower()
        read = [_from_column(a) for a in args]
        if lower in ("and", "or") and len(args) == 2:
            return _Call(lower, read)
        if lower in ("not", "!") and len(args) == 1:
            return _Call("not", read)
        if name in ("==", "<", "<=", ">", ">=", "<=>") and len(args) == 2:
            return _Call("=" if name == "==" else name, read)
        if name in ("!=", "<>") and len(args) == 2:
            return _Call("not", [_Call("=", read)])
        if lower in ("isnull", "isnotnull") and len(args) == 1:
            call = _Call("isnull", read)
            return call if lower == "isnull" else _Call("not", [call])
        if lower == "in" and args:
            return _Call("in", read)
        if lower == "like" and len(args) in (2, 3):
            return _Call("like", read)
        if lower in _TEXT and len(args) == 2:
            return _Call(lower, read)
        if lower == "array_contains" and len(args) == 2:
            return _Call(lower, read)
        if name in ("+", "-", "*") and len(args) == 2:
            return _Call(name, read)
        if lower == "negative" and len(args) == 1:
            return _Call("neg", read)
        return _Opaque(name)
    return _Opaque(type(expr).__name__)


def _column_free(expr) -> bool:
    """True when a Connect expression holds only literals and Spark's functions (no column,
    no UDF, no SQL text, no lambda)."""
    from pyspark.sql.connect import expressions as ce

    if isinstance(expr, ce.LiteralExpression):
        return True
    if isinstance(expr, ce.CastExpression):
        return _column_free(expr._expr)
    if isinstance(expr, ce.UnresolvedFunction):
        return not expr._is_distinct and not _VOLATILE.search(expr._name) and \
            all(_column_free(a) for a in expr._args)
    return False


def _connect_column(expr):
    from pyspark.sql.connect.column import Column

    return Column(expr)


def _attribute_parts(name: str) -> tuple[str, ...] | None:
    """Spark's reading of a column name (``UnresolvedAttribute.parseAttributeName``): dots
    separate parts, backticks quote (a doubled backtick is one)."""
    parts, cur, i, quoted = [], [], 0, False
    while i < len(name):
        c = name[i]
        if quoted:
            if c == "`":
                if i + 1 < len(name) and name[i + 1] == "`":
                    cur.append("`")
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(c)
        elif c == "`":
            if cur:
                return None
            quoted = True
        elif c == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quoted:
        return None
    parts.append("".join(cur))
    return tuple(parts) if all(parts) else None


# --------------------------------------------------------------------------------------------
# types


def common_type(types: list, ansi: bool):
    """The type Spark's analyzer casts every operand of a comparison or IN to, from the
    operands' Spark types (Catalyst JSON form, ``"void"`` for an untyped NULL), or None when
    not modelled. The first type is the column side's.

    >>> common_type(["integer", "long"], True), common_type(["integer", "decimal(3,1)"], True)
    ('long', 'decimal(11,1)')
    >>> common_type(["float", "integer"], True), common_type(["date", "string"], True)
    ('double', 'date')
    """
    typed = [t for t in types if t != "void"]
    if not typed or not all(isinstance(t, str) for t in typed):
        return types[0] if typed and all(t == typed[0] for t in typed) else None
    first = typed[0]
    if all(t == first for t in typed):
        return first
    names = [spark_type_name(t) for t in typed]
    if all(t in _NUMERIC for t in names):
        if any(t in ("float", "double") for t in names):
            if ansi or "double" in names or "decimal" in names:
                return "double"
            return "float"
        if all(t in INTEGRAL for t in names):
            return max(names, key=_INT_RANK.__getitem__)
        return _wider_decimal(typed)
    rest = typed[1:]
    if ansi and all(t == "string" for t in rest) and names[0] != "string":
        if names[0] in INTEGRAL:
            return "long"
        if names[0] in ("float", "double", "decimal"):
            return "double"
        if names[0] in _DATETIME | {"binary", "boolean"}:
            return first
        return None
    if set(names) <= _DATETIME:
        return "timestamp" if "timestamp" in names else "timestamp_ntz"
    return None


def _wider_decimal(types: list[str]) -> str | None:
    """Spark's ``widerDecimalType`` over decimals and integers (integers as decimal(d, 0));
    None beyond 38 digits, where Spark gives up digits (not modelled)."""
    scale, whole = 0, 0
    for t in types:
        if spark_type_name(t) in INTEGRAL:
            p, s = _DIGITS[spark_type_name(t)], 0
        else:
            inner = t[t.index("(") + 1:t.index(")")].split(",")
            p, s = int(inner[0]), int(inner[1])
        scale, whole = max(scale, s), max(whole, p - s)
    if whole + scale > 38:
        return None
    return f"decimal({whole + scale},{scale})"


def _arith_type(types: list):
    """Spark's result (and operand) type of ``+ - *`` over these operand types, when every
    operand is cast to it: the wider integer, or double; None otherwise (decimal arithmetic
    has its own precision rules, float arithmetic is not modelled)."""
    names = [spark_type_name(t) if isinstance(t, str) else "" for t in types]
    if all(t in INTEGRAL for t in names):
        return max(names, key=_INT_RANK.__getitem__)
    if "double" in names and all(t in INTEGRAL | {"double", "decimal"} for t in names):
        return "double"
    return None


def _json_type(data_type) -> Any:
    """Catalyst's JSON form of a pyspark DataType (``"long"``, ``"decimal(10,2)"``, a dict
    for a struct); ``"void"`` for NullType."""
    return data_type.jsonValue()


# --------------------------------------------------------------------------------------------
# building Catalyst nodes


@dataclass
class _Literal:
    """A literal waiting for its value: constant ``probe`` cast to ``spark_type``."""

    node: _Node
    probe: int
    spark_type: Any


@dataclass
class _Builder:
    """The where's syntax as Catalyst nodes over ``schema`` (the DataFrame's), with the
    probes' Spark types; each literal it makes waits in ``literals`` for its value."""

    schema: Any
    case_sensitive: bool
    ansi: bool
    probe_types: list
    literals: list = field(default_factory=list)

    # values ---------------------------------------------------------------------------------
    def typed(self, item):
        """``(node, Spark type)`` of a value; a None node when not modelled."""
        if isinstance(item, _Ref):
            return self.column(item.parts)
        if isinstance(item, _Const):
            return None, self.probe_types[item.probe]
        if isinstance(item, _Call) and item.op == "cast":
            inner, source = self.typed(item.args[0])
            target = self.probe_types[item.probe]
            if inner is None or not isinstance(target, str):
                return None, target
            return _Node("Cast", {"dataType": target}, [inner]), target
        if isinstance(item, _Call) and item.op in _ARITH:
            return self.arith(item)
        if isinstance(item, _Call) and item.op == "neg":
            inner, t = self.typed(item.args[0])
            if inner is None or spark_type_name(t) not in INTEGRAL | {"double"}:
                return None, t
            return _Node("UnaryMinus", {"failOnError": self.ansi}, [inner]), t
        return None, None

    def column(self, parts: tuple[str, ...]):
        """The AttributeReference (and GetStructField chain) Spark resolves ``parts`` to."""
        fields = self.schema.fields
        found = self.field(fields, parts[0])
        if found is None:
            return None, None
        node = _Node("AttributeReference", {"name": found.name,
                                            "dataType": _json_type(found.dataType)})
        data_type = found.dataType
        for part in parts[1:]:
            sub = self.field(getattr(data_type, "fields", None) or [], part)
            if sub is None or type(data_type).__name__ != "StructType":
                return None, None
            node = _Node("GetStructField", {"name": sub.name}, [node])
            data_type = sub.dataType
        return node, _json_type(data_type)

    def field(self, fields, name: str):
        if self.case_sensitive:
            hits = [f for f in fields if f.name == name]
        else:
            hits = [f for f in fields if f.name.lower() == name.lower()]
        return hits[0] if len(hits) == 1 else None

    def literal(self, const: _Const, spark_type) -> _Node:
        """A Literal of ``const`` cast to ``spark_type``, its value filled in later."""
        node = _Node("Literal", {"dataType": spark_type, "value": None})
        self.literals.append(_Literal(node, const.probe, spark_type))
        return node

    def coerce(self, value, consts: list[_Const]):
        """The value node and the constants' literals, as Spark's analyzer types them; None
        when not modelled."""
        node, t = self.typed(value)
        if node is None:
            return None
        target = common_type([t] + [self.probe_types[c.probe] for c in consts], self.ansi)
        if target is None:
            return None
        if target != t:
            node = _Node("Cast", {"dataType": target}, [node])
        return node, [self.literal(c, target) for c in consts]

    def arith(self, item: _Call):
        left, right = item.args
        if isinstance(left, _Const) and isinstance(right, _Const):
            return None, None
        operands = []
        types = []
        for arg in (left, right):
            if isinstance(arg, _Const):
                operands.append(arg)
                types.append(self.probe_types[arg.probe])
            else:
                node, t = self.typed(arg)
                if node is None:
                    return None, t
                operands.append((node, t))
                types.append(t)
        target = _arith_type(types)
        if target is None:
            return None, None
        children = []
        for arg in operands:
            if isinstance(arg, _Const):
                children.append(self.literal(arg, target))
            else:
                node, t = arg
                children.append(node if t == target else
                                _Node("Cast", {"dataType": target}, [node]))
        node = _Node(_ARITH[item.op], {}, children,
                     given={"eval_mode": "ANSI" if self.ansi else "LEGACY"})
        return node, target

    # predicates -----------------------------------------------------------------------------
    def predicate(self, item) -> _Node:
        unknown = _Node("ConnectUnmodelled", {})
        if isinstance(item, _Opaque):
            return _Node(f"Connect_{item.what}", {})
        if isinstance(item, _Const):
            return self.literal(item, self.probe_types[item.probe])
        if isinstance(item, _Ref):
            node, t = self.column(item.parts)
            return node if node is not None and t == "boolean" else unknown
        op, args = item.op, item.args
        if op in ("and", "or"):
            return _Node(op.capitalize(), {}, [self.predicate(a) for a in args])
        if op == "not":
            return _Node("Not", {}, [self.predicate(args[0])])
        if op in _COMPARE:
            return self.compare(op, args[0], args[1]) or unknown
        if op == "isnull":
            node, _ = self.typed(args[0])
            return _Node("IsNull", {}, [node]) if node is not None else unknown
        if op == "in":
            items = args[1:]
            if isinstance(args[0], _Const) or not all(isinstance(a, _Const) for a in items):
                return unknown
            got = self.coerce(args[0], items)
            return _Node("In", {}, [got[0], *got[1]]) if got else unknown
        if op == "like":
            return self.like(args) or unknown
        if op in _TEXT or op == "array_contains":
            node, t = self.typed(args[0])
            const = args[1]
            if node is None or not isinstance(const, _Const):
                return unknown
            ct = self.probe_types[const.probe]
            if op == "array_contains":
                # Spark casts the value to the element type when that is the wider one
                element = t.get("elementType") if isinstance(t, dict) else None
                if element is None or common_type([element, ct], self.ansi) != element \
                        or (ct == "string") != (element == "string"):
                    return unknown
                ct = element
            elif t != "string" or ct != "string":
                return unknown
            cls = _TEXT.get(op, "ArrayContains")
            return _Node(cls, {}, [node, self.literal(const, ct)])
        return unknown

    def compare(self, op: str, left, right) -> _Node | None:
        if isinstance(left, _Const) and not isinstance(right, _Const):
            return self.compare(_FLIP[op], right, left)
        if isinstance(left, _Const) or isinstance(right, _Const):
            got = self.coerce(left, [right])
            if got is None:
                return None
            return _Node(_COMPARE[op], {}, [got[0], got[1][0]])
        (a, ta), (b, tb) = self.typed(left), self.typed(right)
        if a is None or b is None or ta != tb:
            return None
        return _Node(_COMPARE[op], {}, [a, b])

    def like(self, args) -> _Node | None:
        node, t = self.typed(args[0])
        if node is None or t != "string" or not all(isinstance(a, _Const) for a in args[1:]):
            return None
        if any(self.probe_types[a.probe] != "string" for a in args[1:]):
            return None
        like = _Node("Like", {}, [node, self.literal(args[1], "string")])
        if len(args) == 3:
            like.given["escape_probe"] = args[2].probe
        else:
            like.given["escape"] = "\\"
        return like


# --------------------------------------------------------------------------------------------
# the entry point


def predicate(df, where, stats) -> n.Expr:
    """The engine's reading of ``df.where(where)`` on a Spark Connect session (see the
    module doc); errors as :func:`._catalyst.predicate`'s."""
    from pyspark.sql.connect.column import Column as ConnectColumn

    check_where(where)
    if not isinstance(where, (str, ConnectColumn)):
        raise TypeError("a Spark Connect DataFrame takes Connect Columns: build them with "
                        "pyspark.sql.connect.functions (prune_engine.spark._session.functions)")
    from prune_engine.spark._session import partition_names, settings

    session = df.sparkSession
    conf = settings(session, list(_SETTINGS))
    syntax = _from_sql(where) if isinstance(where, str) else _from_column(where._expr)
    if isinstance(where, str) and '"' in where \
            and str(conf["spark.sql.ansi.doubleQuotedIdentifiers"]).lower() == "true":
        syntax = None  # "x" is a column name here, a string to sqlglot: not read
    probes: list = []
    known: dict[int, _Known] = {}
    if syntax is not None:
        _number_probes(syntax, probes, known)
    probe_types = _analyse(df, where, probes)
    if syntax is None or probe_types is None:
        return UNREAD
    ansi = str(conf["spark.sql.ansi.enabled"]).lower() == "true"
    builder = _Builder(df.schema, str(conf["spark.sql.caseSensitive"]).lower() == "true",
                       ansi, probe_types)
    root = builder.predicate(syntax)
    zone = conf["spark.sql.session.timeZone"]
    if not _fill_literals(session, builder, probes, known, root, zone in _UTC_ZONES):
        return UNREAD
    translator = _Translator(None, StatsColumns(stats), partition_names(df), zone in _UTC_ZONES)
    return translator.predicate(root)


#: the settings the where's reading depends on (asked for in one request)
_SETTINGS = ("spark.sql.ansi.enabled", "spark.sql.caseSensitive", "spark.sql.session.timeZone",
             "spark.sql.ansi.doubleQuotedIdentifiers")


def _number_probes(item, probes: list, known: dict[int, _Known]) -> None:
    """Give every constant and cast its index among the probes Spark types; ``known``: the
    values of the constants known as written, by probe."""
    stack = [item]
    while stack:
        cur = stack.pop()
        if isinstance(cur, _Const):
            if cur.known is not None:
                known[len(probes)] = cur.known
            cur.probe = len(probes)
            probes.append(cur.column)
        elif isinstance(cur, _Call):
            if cur.op == "cast":
                cur.probe = len(probes)
                probes.append(cur.column)
            stack.extend(cur.args)


def _analyse(df, where, probes: list) -> list | None:
    """Spark's analysis of the where (its errors raised as prune_engine's) and the types of
    the probes; None when Spark types the where but not the probes (not modelled).

    A new column is always selected: a Connect DataFrame keeps its schema through a filter,
    so ``df.where(where).schema`` alone may not ask Spark at all."""
    lit = _connect_functions().lit
    filtered = df.where(where)
    try:
        schema = filtered.select(*[p.alias(f"p{i}") for i, p in enumerate(probes)],
                                 lit(0).alias("_analysed")).schema
    except Exception:  # noqa: BLE001 - the where's own error, or a probe's: told apart below
        try:
            filtered.select(lit(0).alias("_analysed")).schema
        except Exception as e:  # noqa: BLE001 - Spark's parse and analysis errors
            raise _spark_error(e, where, df) from None
        log.info("Spark cannot type the where's parts as read here: no file is pruned")
        return None
    return [_json_type(f.dataType) for f in schema.fields[:len(probes)]]


#: the integer types of Spark and their widths
_INTEGER_BITS = {"byte": 8, "short": 16, "integer": 32, "long": 64}


def _fill_literals(session, builder: _Builder, probes: list, known: dict[int, _Known],
                   root: _Node, utc: bool) -> bool:
    """Evaluate every literal's constant, cast as its node says, in one Spark call, and put
    the exact values in the nodes; False when Spark fails (the where prunes nothing). A
    constant whose value at its type is known as written needs no call (``known``; ``utc``:
    the session's time zone is UTC)."""
    from pyspark.sql.types import _parse_datatype_json_value

    escapes = [node for node in _walk(root) if "escape_probe" in node.given]
    asked = []
    for lit in builder.literals:
        given = known.get(lit.probe)
        value = given.at(lit.spark_type, utc) if given is not None else None
        if value is None:
            asked.append(lit)
            continue
        lit.node.fields["value"] = value[0]
        if value[1] is not None:
            lit.node.given["value"] = value[1]
    columns = []
    for lit in asked:
        column = probes[lit.probe]
        if lit.spark_type != builder.probe_types[lit.probe]:
            column = column.cast(_parse_datatype_json_value(lit.spark_type))
        columns.append(column)
    for node in escapes:
        columns.append(probes[node.given["escape_probe"]])
    if not columns:
        return True
    try:
        table, _ = session.range(1).select(
            *[c.alias(f"v{i}") for i, c in enumerate(columns)])._to_table()
    except Exception as e:  # noqa: BLE001 - an ANSI cast error, an overflow: Spark's at run time
        log.info("Spark cannot evaluate the where's constants (%s): no file is pruned",
                 str(e).splitlines()[0] if str(e) else type(e).__name__)
        return False
    for i, lit in enumerate(asked):
        _set_value(lit.node, lit.spark_type, table.column(i))
    for j, node in enumerate(escapes):
        value = table.column(len(asked) + j).to_pylist()[0]
        if isinstance(value, str) and len(value) == 1:
            node.given["escape"] = value
        else:
            node.cls = "ConnectUnmodelledLike"  # Spark rejects it
    return True


def _set_value(node: _Node, spark_type, column: pa.ChunkedArray) -> None:
    """Put the exact value of a one-row Arrow column into a Literal node (the JSON-like
    ``value``, and ``given["value"]`` for binary, date and timestamps)."""
    name = spark_type_name(spark_type) if isinstance(spark_type, str) else ""
    value = column.to_pylist()[0] if name not in _DATETIME else None
    if name in _DATETIME:
        raw = column.cast(pa.int32() if name == "date" else pa.int64()).to_pylist()[0]
        node.fields["value"] = None if raw is None else str(raw)
        node.given["value"] = raw
    elif value is None:
        node.fields["value"] = None
    elif name == "boolean":
        node.fields["value"] = "true" if value else "false"
    elif name == "binary":
        node.fields["value"] = "binary"
        node.given["value"] = bytes(value)
    elif name in _NUMERIC or spark_type == "string":
        node.fields["value"] = value
    else:
        node.cls = "ConnectUnmodelledLiteral"  # an interval, an array, a collated string ...
    if name == "void" or spark_type == "void":
        node.fields["dataType"] = "null"


def _walk(root: _Node):
    stack = [root]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(cur.children)
