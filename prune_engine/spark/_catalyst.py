"""The Spark front end: a Spark ``where`` as the engine's expression tree, read by Spark itself.

A ``where`` (Spark SQL text or a pyspark ``Column``) is not parsed here: the DataFrame is
filtered with it and Spark's own parser, analyzer and optimizer read it, with the session's
settings (time zone, ANSI mode, collations). The optimized filter over the file relation is
typed and folded: implicit casts are explicit, ``timestamp'...'`` literals are instants
read in the session time zone, ``'1' = int_col`` has become ``int_col = 1``,
``cast(ts as date) = date'...'`` a range of instants, ``BETWEEN`` two comparisons and
``LIKE 'ab%'`` a ``StartsWith``. That condition (Catalyst's JSON, plus the few literal values
the JSON loses, read from the JVM) is mapped onto the engine's nodes, construct by construct:

======================================  =====================================================
Catalyst                                engine
======================================  =====================================================
And, Or, Not, the comparisons, ``<=>``  Kleene logic, ``IS NOT DISTINCT FROM``
IsNull, IsNotNull, In, InSet            ``IS [NOT] NULL``, ``IN`` (NULL items kept)
Like (with its escape, ``\\``),         ``LIKE ... ESCAPE``
StartsWith, EndsWith, Contains
RLike                                   ``regexp_like``, when Java and RE2 read the pattern
                                        alike (:mod:`._java_regex`)
ArrayContains(list column, literal)     ``array_contains`` on the element statistics
Add, Subtract, Multiply, UnaryMinus     arithmetic on double, and on integers in ANSI mode
                                        only (Spark's legacy integers wrap around)
Cast                                    the casts that keep values and order as Spark does:
                                        integer and float widening, integer to float,
                                        integer and decimal to a wider decimal, decimal to
                                        double (compared conservatively), date and
                                        timestamp_ntz to each other, and timestamp to and
                                        from date or timestamp_ntz when the session zone is
                                        UTC
Literal                                 the exact value: timestamps as UTC instants
                                        (timestamp) or wall times (timestamp_ntz), floats
                                        as float32, decimals exact, binary as bytes
columns, struct fields                  the statistics leaf, when the types agree
                                        (:mod:`._columns`)
======================================  =====================================================

Every other construct (an unknown function, a UDF, ``isnan``, a collated string, ``ILIKE``,
which Spark runs through Java's ``lower``, a subquery) becomes an opaque function call, which
the engine reads as "unknown" and keeps, under ``NOT`` too. When the optimized plan is not a
filter over the file relation (a subquery became a join) nothing is pruned; when Spark fails
to optimize (an ANSI cast of a bad literal), nothing is pruned and Spark reports the error
when the query runs, as it would without prune_engine. Either way the where is
:data:`UNREAD`, "unknown" as a whole: not TRUE, which would tell ``pe.classify`` (and so a
top-k or a count from statistics) that every row matches.

On a Spark Connect session there is no JVM to ask: :mod:`._connect_where` reads the where on
the client and builds the same Catalyst nodes for the same translator.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from prune_engine.errors import PruneEngineError, SqlParseError, UnknownColumnError
from prune_engine.expr import nodes as n
from prune_engine.expr.like import dangling_escape, like_escape
from prune_engine.expr.regex import anchored_prefix
from prune_engine.spark._columns import INTEGRAL, StatsColumns, compatible, spark_type_name
from prune_engine.spark._java_regex import engine_reads_alike

log = logging.getLogger("prune_engine.spark")

_COMPARE = {"EqualTo": "=", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
            "GreaterThanOrEqual": ">="}
_ARITH = {"Add": "+", "Subtract": "-", "Multiply": "*"}
#: decimal digits of each integral type (an integer widens to a decimal without loss when the
#: decimal has at least as many integer digits)
_DIGITS = {"byte": 3, "short": 5, "integer": 10, "long": 19}
_INT_ARROW = {"byte": pa.int8(), "short": pa.int16(), "integer": pa.int32(), "long": pa.int64()}
_UTC_ZONES = {"UTC", "GMT", "Z", "Etc/UTC", "Etc/GMT", "Etc/UCT", "UCT", "Etc/Universal",
              "Universal", "Zulu", "Etc/Zulu", "+00:00", "-00:00", "UTC+00:00", "GMT+00:00"}
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
#: a where the engine did not read: "unknown", which keeps every container and proves no
#: row matches (``pe.classify`` says "some", never "all"; TRUE would claim every row does)
UNREAD = n.Func("spark_unread", ())
#: separates the members of an InSet read in one JVM call
_SEP = "\u0000\u001f\u0000"


def predicate(df, where, stats) -> n.Expr:
    """The engine's reading of ``df.where(where)`` against ``stats`` (see the module doc).

    ``df`` is a DataFrame over a file source (``spark.read...load``), ``where`` Spark SQL
    text or a ``Column``. Malformed SQL is a :class:`~prune_engine.SqlParseError`, an unknown
    column an :class:`~prune_engine.UnknownColumnError` naming the DataFrame's columns.
    """
    from prune_engine.spark._session import is_connect

    if is_connect(df):  # no JVM here: the where is read on the client (see the module)
        from prune_engine.spark import _connect_where

        return _connect_where.predicate(df, where, stats)
    filtered = _filtered(df, where)
    columns = StatsColumns(stats)
    try:
        plan = filtered._jdf.queryExecution().optimizedPlan()
        found = _relation_filter(plan)
    except Exception as e:  # noqa: BLE001 - any optimizer failure: Spark reports it at run time
        log.info("Spark could not optimize the filter (%s): no file is pruned",
                 str(e).splitlines()[0] if str(e) else type(e).__name__)
        return UNREAD
    if found is None or isinstance(found, n.Literal):
        return found if found is not None else UNREAD
    condition, relation = found
    session = df.sparkSession
    zone = session.conf.get("spark.sql.session.timeZone")
    translator = _Translator(condition, columns, partition_names(relation), zone in _UTC_ZONES)
    return translator.translate()


def _filtered(df, where):
    check_where(where)
    try:
        return df.where(where)
    except Exception as e:  # noqa: BLE001 - Spark's parse and analysis errors, re-raised below
        raise _spark_error(e, where, df) from None


def check_where(where) -> None:
    """Raise TypeError unless ``where`` is Spark SQL text or a pyspark Column (classic or
    Spark Connect)."""
    from pyspark.sql import Column

    kinds: tuple = (str, Column)
    try:
        from pyspark.sql.connect.column import Column as ConnectColumn

        kinds += (ConnectColumn,)
    except ImportError:  # pyspark without Connect's dependencies
        pass
    if not isinstance(where, kinds):
        raise TypeError(f"where must be Spark SQL text (str) or a pyspark Column, not "
                        f"{type(where).__name__}")


def _spark_error(e: Exception, where, df, what: str = "the where clause") -> PruneEngineError:
    """Spark's complaint about ``where`` (or another clause: ``what``) as one of
    prune_engine's errors."""
    cls = type(e).__name__
    message = str(e).split("\n\n", 1)[0].strip()
    params = {}
    try:
        params = e.getMessageParameters() or {}  # pyspark's captured exceptions
    except Exception:  # noqa: BLE001 - not a captured Spark exception
        pass
    text = where if isinstance(where, str) else str(where)
    if cls == "ParseException":
        found = re.search(r"\(line (\d+), pos (\d+)\)", str(e))
        line, col = (int(found.group(1)), int(found.group(2)) + 1) if found else (1, 1)
        message = re.sub(r"\s*\(line \d+, pos \d+\)", "", message)
        return SqlParseError(f"Spark cannot parse {what}: {message}", text, line, col)
    if "objectName" in params:
        name = params["objectName"].strip("`")
        return UnknownColumnError(name, df.columns)
    return PruneEngineError(f"Spark rejects {what} {text!r}: {message}")


def _simple(obj) -> str:
    return obj.getClass().getSimpleName()


def _relation_filter(plan):
    """``(condition, relation)`` of a Filter right over the file relation; a literal when the
    optimizer decided the filter alone (TRUE: no filter left, FALSE: an empty relation); None
    for any other plan shape."""
    node = plan
    while _simple(node) == "Project":
        node = node.child()
    kind = _simple(node)
    if kind == "LogicalRelation":
        return n.TRUE
    if kind == "LocalRelation" and node.data().isEmpty():
        return n.FALSE
    if kind == "Filter" and _simple(node.child()) == "LogicalRelation":
        return node.condition(), node.child()
    return None


def partition_names(relation) -> set[str]:
    try:
        schema = json.loads(relation.relation().partitionSchema().json())
    except Exception:  # noqa: BLE001 - not a file relation: no partition columns
        return set()
    return {f["name"] for f in schema.get("fields", [])}


# --------------------------------------------------------------------------------------------
# Catalyst's JSON as a tree


@dataclass
class _Node:
    """One Catalyst expression: simple class name, its JSON fields, children, the child
    indices that lead to it from the root (for the JVM), and its position among the leaves.

    ``given`` holds what the JSON loses when it is known without a JVM (a tree built on the
    client for Spark Connect, :mod:`._connect_where`): ``"value"``, the exact internal value
    of a binary, date or timestamp literal (bytes, days, microseconds); ``"escape"``, a
    Like's escape character; ``"eval_mode"``, an arithmetic node's ``"ANSI"`` or
    ``"LEGACY"``. The translator asks the JVM only for what is not given."""

    cls: str
    fields: dict
    children: list = field(default_factory=list)
    path: tuple = ()
    leaf: int | None = None
    given: dict = field(default_factory=dict)


def _tree(items: list[dict]) -> _Node:
    """Rebuild the tree from Catalyst's pre-order JSON (iteratively: long AND/OR chains are
    deep)."""
    root = None
    stack: list[tuple[_Node, int]] = []
    leaves = 0
    for item in items:
        node = _Node(item["class"].rsplit(".", 1)[-1], item)
        count = int(item.get("num-children", 0))
        if count == 0:
            node.leaf, leaves = leaves, leaves + 1
        if stack:
            parent = stack[-1][0]
            node.path = parent.path + (len(parent.children),)
            parent.children.append(node)
        else:
            root = node
        if count:
            stack.append((node, count))
        while stack and len(stack[-1][0].children) == stack[-1][1]:
            stack.pop()
    return root


# --------------------------------------------------------------------------------------------
# the mapping


class _Translator:
    """Catalyst nodes to the engine's nodes. ``condition`` is the JVM expression the nodes
    come from (None for a tree built without a JVM, whose nodes carry ``given`` values)."""

    def __init__(self, condition, columns: StatsColumns, partitions: set[str], utc: bool):
        self.jvm = condition
        self.columns = columns
        self.partitions = partitions
        self.utc = utc
        self._jvm_leaves = None

    def translate(self) -> n.Expr:
        root = _tree(json.loads(self.jvm.toJSON()))
        return self.predicate(root)

    # the JVM, for what the JSON loses ---------------------------------------------------
    def jvm_node(self, node: _Node):
        obj = self.jvm
        for i in node.path:
            obj = obj.children().apply(i)
        return obj

    def jvm_leaf_value(self, node: _Node):
        if "value" in node.given:
            return node.given["value"]
        if self._jvm_leaves is None:
            self._jvm_leaves = self.jvm.collectLeaves()
        return self._jvm_leaves.apply(node.leaf).value()

    # predicates --------------------------------------------------------------------------
    @staticmethod
    def unknown(node: _Node) -> n.Expr:
        return n.Func(f"spark_{node.cls}", ())

    def predicate(self, node: _Node) -> n.Expr:
        cls = node.cls
        if cls in ("And", "Or"):
            return self.connective(node)
        if cls == "Not":
            return n.Not(self.predicate(node.children[0]))
        if cls in _COMPARE or cls == "EqualNullSafe":
            left, right = self.value(node.children[0]), self.value(node.children[1])
            if left is None or right is None:
                return self.unknown(node)
            if cls == "EqualNullSafe":
                return n.IsDistinct(left[0], right[0], negated=True)
            return n.Compare(_COMPARE[cls], left[0], right[0])
        if cls in ("IsNull", "IsNotNull"):
            arg = self.value(node.children[0])
            return self.unknown(node) if arg is None else n.IsNull(arg[0], cls == "IsNotNull")
        if cls == "In":
            return self.in_list(node)
        if cls == "InSet":
            return self.in_set(node)
        if cls == "Like":
            return self.like(node)
        if cls in ("StartsWith", "EndsWith", "Contains"):
            return self.contains(node)
        if cls == "RLike":
            return self.rlike(node)
        if cls == "ArrayContains":
            return self.array_contains(node)
        if cls == "Literal" and node.fields.get("dataType") in ("boolean", "null"):
            value = node.fields.get("value")
            return n.NULL if value is None else n.Literal(value == "true")
        got = self.value(node)
        if got is not None and got[1] == "boolean":
            return got[0]
        return self.unknown(node)

    def connective(self, node: _Node) -> n.Expr:
        kind = node.cls
        parts, stack = [], [node]
        while stack:
            cur = stack.pop()
            if cur.cls == kind:
                stack.extend(reversed(cur.children))
            else:
                parts.append(self.predicate(cur))
        return n.And(tuple(parts)) if kind == "And" else n.Or(tuple(parts))

    def in_list(self, node: _Node) -> n.Expr:
        arg = self.value(node.children[0])
        items = [self.literal(c) if c.cls == "Literal" else None for c in node.children[1:]]
        if arg is None or any(i is None for i in items):
            return self.unknown(node)
        return n.InList(arg[0], tuple(i[0] for i in items))

    def in_set(self, node: _Node) -> n.Expr:
        arg = self.value(node.children[0])
        if arg is None:
            return self.unknown(node)
        parse = _MEMBER_PARSERS.get(spark_type_name(arg[1]))
        if parse is None or (spark_type_name(arg[1]) == "string" and arg[1] != "string"):
            return self.unknown(node)
        hset = self.jvm_node(node).hset()
        size = int(hset.size())
        text = hset.mkString(_SEP)
        members = text.split(_SEP) if size else []
        if len(members) != size:  # a member contains the separator
            return self.unknown(node)
        if self.jvm_node(node).hasNull():
            members.remove("null")
            values = [n.NULL]
        else:
            values = []
        for m in members:
            lit = parse(m, arg[1])
            if lit is None:
                return self.unknown(node)
            values.append(lit)
        return n.InList(arg[0], tuple(values))

    def like(self, node: _Node) -> n.Expr:
        arg, pattern = self.text_operands(node)
        if arg is None:
            return self.unknown(node)
        escape = node.given["escape"] if "escape" in node.given else \
            str(self.jvm_node(node).escapeChar())
        if dangling_escape(pattern, escape):
            return self.unknown(node)  # Spark rejects the pattern when it runs
        return n.Like(arg, pattern, escape)

    def contains(self, node: _Node) -> n.Expr:
        arg, text = self.text_operands(node)
        if arg is None:
            return self.unknown(node)
        quoted = like_escape(text, "\\")
        pattern = {"StartsWith": quoted + "%", "EndsWith": "%" + quoted,
                   "Contains": "%" + quoted + "%"}[node.cls]
        return n.Like(arg, pattern, "\\")

    def rlike(self, node: _Node) -> n.Expr:
        """``RLIKE`` read as RE2 where Java reads the pattern alike; else, where it pins an
        anchored prefix (read alike by both: :func:`~prune_engine.expr.regex.anchored_prefix`),
        "unknown AND starts with the prefix": a necessary condition, which prunes where the
        match must be TRUE and keeps under NOT (unknown OR not ... keeps)."""
        arg, pattern = self.text_operands(node)
        if arg is None:
            return self.unknown(node)
        if engine_reads_alike(pattern):
            return n.RegexpLike(arg, pattern)
        prefix = anchored_prefix(pattern)
        if not prefix:
            return self.unknown(node)
        return n.And((self.unknown(node), n.Like(arg, like_escape(prefix, "\\") + "%", "\\")))

    def text_operands(self, node: _Node):
        """A string column and a string literal (the pattern), or ``(None, None)``."""
        arg = self.value(node.children[0])
        lit = node.children[1]
        if (arg is None or arg[1] != "string" or lit.cls != "Literal"
                or lit.fields.get("dataType") != "string" or lit.fields.get("value") is None):
            return None, None
        return arg[0], lit.fields["value"]

    def array_contains(self, node: _Node) -> n.Expr:
        path = self.path(node.children[0])
        lit = self.literal(node.children[1]) if node.children[1].cls == "Literal" else None
        if path is None or lit is None:
            return self.unknown(node)
        leaf = self.columns.element(path[0])
        if leaf is None or not compatible(lit[1], leaf.type) or lit[0].value is None:
            return self.unknown(node)
        return n.Func("array_contains", (n.Column(leaf.path[:len(path[0])]), lit[0]))

    # values ----------------------------------------------------------------------------
    def value(self, node: _Node):
        """``(engine expression, Spark type)`` of a value, or None when not modelled."""
        cls = node.cls
        if cls in ("AttributeReference", "GetStructField"):
            return self.column(node)
        if cls == "Literal":
            return self.literal(node)
        if cls == "Cast":
            return self.cast(node)
        if cls in _ARITH or cls == "UnaryMinus":
            return self.arith(node)
        return None

    def path(self, node: _Node):
        """``(path, Spark type)`` of a column or struct field, else None."""
        names = []
        while node.cls == "GetStructField":
            names.append(node.fields["name"])
            node = node.children[0]
        if node.cls != "AttributeReference":
            return None
        spark_type = node.fields["dataType"]
        path = (node.fields["name"],)
        for name in reversed(names):
            if not isinstance(spark_type, dict) or spark_type.get("type") != "struct":
                return None
            found = [f for f in spark_type["fields"] if f["name"] == name]
            if len(found) != 1:
                return None
            spark_type = found[0]["type"]
            path += (name,)
        return path, spark_type

    def column(self, node: _Node):
        got = self.path(node)
        if got is None:
            return None
        path, spark_type = got
        leaf = self.columns.leaf(path)
        if leaf is None or leaf.element or not compatible(spark_type, leaf.type):
            return None
        if len(path) == 1 and path[0] in self.partitions and \
                not self.columns.partition_exact(leaf.path[0]):
            return None
        return n.Column(leaf.path), spark_type

    def literal(self, node: _Node):
        spark_type = node.fields.get("dataType")
        raw = node.fields.get("value")
        if raw is None:
            return n.NULL, spark_type
        if not isinstance(spark_type, str):
            return None
        name = spark_type_name(spark_type)
        if name in ("binary", "date", "timestamp", "timestamp_ntz"):
            raw = self.jvm_leaf_value(node)  # the JSON shows these formatted, not exact
        lit = _literal(name, spark_type, raw)
        return None if lit is None else (lit, spark_type)

    def cast(self, node: _Node):
        inner = self.value(node.children[0])
        target = node.fields.get("dataType")
        if inner is None or not isinstance(target, str):
            return None
        expr, source = inner
        if source == target:
            return expr, target
        s, t = spark_type_name(source), spark_type_name(target)
        converted = _cast(expr, s, t, source, target, self.utc)
        return None if converted is None else (converted, target)

    def arith(self, node: _Node):
        operands = [self.value(c) for c in node.children]
        if any(o is None for o in operands):
            return None
        spark_type = operands[0][1]
        if any(o[1] != spark_type for o in operands):
            return None
        name = spark_type_name(spark_type)
        if name in INTEGRAL:
            # legacy integer arithmetic wraps around; only ANSI's (an error instead) is exact
            if node.cls == "UnaryMinus":
                ansi = bool(node.fields.get("failOnError"))
            elif "eval_mode" in node.given:
                ansi = node.given["eval_mode"] == "ANSI"
            else:
                ansi = str(self.jvm_node(node).evalMode().toString()) == "ANSI"
            if not ansi:
                return None
        elif name != "double":
            return None
        if node.cls == "UnaryMinus":
            return n.Negate(operands[0][0]), spark_type
        return n.Arith(_ARITH[node.cls], operands[0][0], operands[1][0]), spark_type


def _cast(expr: n.Expr, s: str, t: str, source: str, target: str, utc: bool) -> n.Expr | None:
    """A Spark CAST of a column-side ``expr`` as the engine's expression, or None (see the
    module doc for the casts kept)."""
    if s in INTEGRAL and t in INTEGRAL:
        return n.Cast(expr, _INT_ARROW[t])
    if s in INTEGRAL and t in ("float", "double"):
        return n.Cast(expr, pa.float32() if t == "float" else pa.float64())
    if s == "float" and t == "double":
        return n.Cast(expr, pa.float64())
    if t == "decimal" and s in INTEGRAL | {"decimal"}:
        p2, s2 = _decimal_params(target)
        p1, s1 = (_DIGITS[s], 0) if s in INTEGRAL else _decimal_params(source)
        if p2 - s2 >= p1 - s1 and s2 >= s1:
            return expr  # every value converts exactly: compare the values themselves
        return None
    if s == "decimal" and t == "double":
        return expr  # the engine compares a decimal with a double literal conservatively
    if (s, t) == ("date", "timestamp_ntz"):
        return n.Cast(expr, pa.timestamp("us"))
    if (s, t) == ("timestamp_ntz", "date"):
        return n.Cast(expr, pa.date32())
    if utc:  # midnight and the calendar day are the UTC ones: raw values agree
        if (s, t) == ("date", "timestamp"):
            return n.Cast(expr, pa.timestamp("us", "UTC"))
        if (s, t) == ("timestamp", "date"):
            return n.Cast(expr, pa.date32())
        if {s, t} == {"timestamp", "timestamp_ntz"}:
            return expr
    return None


def _decimal_params(spark_type: str) -> tuple[int, int]:
    inner = spark_type[spark_type.index("(") + 1:spark_type.index(")")]
    p, s = inner.split(",")
    return int(p), int(s)


def _literal(name: str, spark_type: str, raw) -> n.Literal | None:
    """The exact engine literal of a Catalyst literal value (JSON text, or the JVM's value for
    binary, date and timestamps); None when it has no faithful engine literal."""
    try:
        if name in INTEGRAL:
            return n.Literal(int(raw))
        if name == "float":
            return n.Literal(float(np.float32(raw)))
        if name == "double":
            return n.Literal(float(raw))
        if name == "decimal":
            return n.Literal(decimal.Decimal(raw))
        if spark_type == "string":
            return n.Literal(str(raw))
        if name == "boolean":
            return n.Literal(raw in (True, "true"))
        if name == "binary":
            return n.Literal(bytes(raw), pa.binary())
        if name == "date":
            return n.Literal(_EPOCH_DATE + dt.timedelta(days=int(raw)), pa.date32())
        if name == "timestamp":
            value = (_EPOCH + dt.timedelta(microseconds=int(raw))).replace(tzinfo=dt.timezone.utc)
            return n.Literal(value, pa.timestamp("us", "UTC"))
        if name == "timestamp_ntz":
            return n.Literal(_EPOCH + dt.timedelta(microseconds=int(raw)), pa.timestamp("us"))
    except (ValueError, TypeError, OverflowError, decimal.InvalidOperation):
        return None  # e.g. a date beyond year 9999: left to Spark
    return None


def _member(kind: str):
    """Parser of one InSet member's ``toString`` (Catalyst's internal value) as a literal."""
    def parse(text: str, spark_type: str) -> n.Literal | None:
        if kind in ("date", "timestamp", "timestamp_ntz"):  # days / microseconds
            return _literal(kind, spark_type, int(text))
        return _literal(kind, spark_type, text)
    return parse


_MEMBER_PARSERS = {k: _member(k) for k in (*INTEGRAL, "float", "double", "decimal", "string",
                                           "boolean", "date", "timestamp", "timestamp_ntz")}
