"""Random predicates as SQL text, rendered for prune_engine and for DuckDB.

A predicate is a small tree (:class:`Atom`, :class:`And`, :class:`Or`, :class:`Not`,
:class:`IsBool`) rendered twice: ``sql("pe")`` is what prune_engine parses (sqlglot, default
dialect) and ``sql("duck")`` what DuckDB runs on the rows. The two differ only where DuckDB
needs help to compute the exact value: integer arithmetic is widened to HUGEINT in DuckDB (so
``i8 + 100`` is the mathematical value, never an overflow error) and ``array_contains`` is
spelled ``list_contains``.

Atoms cover every operator of the engine: comparisons with the column on either side,
[NOT] BETWEEN, [NOT] IN (with NULL inside, and lists of 1000+ values), IS [NOT] NULL,
IS [NOT] TRUE/FALSE, IS [NOT] DISTINCT FROM (literal, NULL, or another column), bare boolean
columns, [NOT] LIKE / ILIKE with ``%``, ``_`` and ESCAPE, column-vs-column comparisons, monotone
arithmetic (``x + c``, ``x - c``, ``c * x``, ``-x``), CASTs, unknown functions, list membership
and constant folding. Literals are drawn near the data (equal to a value, one step above or
below, between two values) and sometimes outside the column's type (``u8 < -1``, ``i8 > 1000``,
``i32 = 2.5``).

>>> import random
>>> from tests.oracle.data import random_case
>>> rnd = random.Random(7)
>>> p = random_predicate(rnd, random_case(rnd))
>>> isinstance(p.sql("pe"), str) and isinstance(p.sql("duck"), str)
True
"""

from __future__ import annotations

import abc
import datetime as _dt
import math
import re
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa

from .data import ALPHABET, DEC, Case, Leaf, dec, int_range, to_f32

#: when True, float32 columns are also compared with plain decimal literals (``f32 = 0.1``),
#: which DuckDB evaluates by casting the literal to FLOAT
F32_DECIMAL_LITERALS = True

COMPARE_OPS = ["=", "!=", "<>", "<", "<=", ">", ">="]
FLIP = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


# --------------------------------------------------------------------------- the tree


class Pred(abc.ABC):
    """A predicate; ``sql(dialect)`` with dialect ``"pe"``, ``"duck"`` or ``"wrap"`` (DuckDB
    under wrapping integer arithmetic, see :class:`Atom`)."""

    @abc.abstractmethod
    def sql(self, dialect: str = "pe") -> str:
        """The predicate as SQL text for prune_engine or DuckDB."""

    def children(self) -> tuple["Pred", ...]:
        return ()

    def columns(self) -> set[str]:
        out: set[str] = set()
        for c in self.children():
            out |= c.columns()
        return out

    def __str__(self) -> str:
        return self.sql("pe")


@dataclass(frozen=True)
class Atom(Pred):
    """``pe``: prune_engine's SQL; ``duck``: DuckDB's, with exact (HUGEINT) integer arithmetic;
    ``wrap``: DuckDB's under another semantics engines have (integer results wrapped around
    the narrowest type), None when there is no other."""

    pe: str
    duck: str
    cols: tuple[str, ...] = ()
    wrap: str | None = None

    def sql(self, dialect="pe"):
        if dialect == "pe":
            return self.pe
        return self.wrap if dialect == "wrap" and self.wrap is not None else self.duck

    def columns(self):
        return set(self.cols)


@dataclass(frozen=True)
class And(Pred):
    args: tuple[Pred, ...]

    def sql(self, dialect="pe"):
        return "(" + " AND ".join(a.sql(dialect) for a in self.args) + ")"

    def children(self):
        return self.args


@dataclass(frozen=True)
class Or(Pred):
    args: tuple[Pred, ...]

    def sql(self, dialect="pe"):
        return "(" + " OR ".join(a.sql(dialect) for a in self.args) + ")"

    def children(self):
        return self.args


@dataclass(frozen=True)
class Not(Pred):
    arg: Pred

    def sql(self, dialect="pe"):
        return f"(NOT {self.arg.sql(dialect)})"

    def children(self):
        return (self.arg,)


@dataclass(frozen=True)
class IsBool(Pred):
    arg: Pred
    value: bool
    negated: bool

    def sql(self, dialect="pe"):
        return f"(({self.arg.sql(dialect)}) IS {'NOT ' if self.negated else ''}{'TRUE' if self.value else 'FALSE'})"

    def children(self):
        return (self.arg,)


def same(text: str, *cols: str) -> Atom:
    """An atom spelled the same way for both engines (up to :func:`duck_literals`)."""
    return Atom(text, duck_literals(text), cols)


_TSTZ = re.compile(r"TIMESTAMPTZ '([^']*)([+-])(\d\d):(\d\d)'")


def duck_literals(text: str) -> str:
    """DuckDB spelling of ``text``: each ``TIMESTAMPTZ '...+hh:mm'`` literal becomes the
    ``TIMESTAMP`` literal of the same instant in UTC. DuckDB runs in UTC, so the two are equal,
    and DuckDB refuses to compare a TIMESTAMPTZ with its nanosecond timestamp types."""

    def utc(m: re.Match) -> str:
        local = _dt.datetime.fromisoformat(m.group(1))
        offset = _dt.timedelta(hours=int(m.group(3)), minutes=int(m.group(4)))
        instant = local - offset if m.group(2) == "+" else local + offset
        return f"TIMESTAMP '{instant.isoformat(sep=' ')}'"

    return _TSTZ.sub(utc, text)


def simplifications(p: Pred) -> list[Pred]:
    """Smaller predicates derived from ``p``: each compound node replaced by one of its
    children (used to minimise a failing predicate)."""
    out: list[Pred] = list(p.children())
    if isinstance(p, (And, Or)):
        for i, child in enumerate(p.args):
            for smaller in simplifications(child):
                args = p.args[:i] + (smaller,) + p.args[i + 1:]
                out.append(type(p)(args))
            if len(p.args) > 2:
                out.append(type(p)(p.args[:i] + p.args[i + 1:]))
    elif isinstance(p, Not):
        out += [Not(s) for s in simplifications(p.arg)]
    elif isinstance(p, IsBool):
        out += [IsBool(s, p.value, p.negated) for s in simplifications(p.arg)]
    return out


# --------------------------------------------------------------------------- literals

EPOCH = _dt.datetime(1970, 1, 1)
PER_SEC = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def sql_blob(b: bytes, hex_form: bool = False) -> str:
    """A BLOB literal: ``'\\x61'::BLOB``, or (``hex_form``) ``X'61'``."""
    if hex_form:
        return f"X'{b.hex()}'"
    return "'" + "".join(f"\\x{x:02x}" for x in b) + "'::BLOB"


def sql_double(v: float) -> str:
    if math.isnan(v):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(v):
        return "CAST('Infinity' AS DOUBLE)" if v > 0 else "CAST('-Infinity' AS DOUBLE)"
    return f"CAST('{v!r}' AS DOUBLE)"


def sql_decimal(d: Decimal) -> str:
    return format(d, "f")


#: the instants Python's datetime spells (years 1 to 9999), in microseconds after the epoch
_DT_RANGE = (-62135596800 * 10**6, 253402300799999999)


def _dt_text(us: int) -> str:
    """ISO text of the instant ``us`` microseconds after the epoch; an instant outside years 1
    to 9999 is moved to the nearer end (any literal serves, as long as both engines read it)."""
    us = min(max(us, _DT_RANGE[0]), _DT_RANGE[1])
    return (EPOCH + _dt.timedelta(microseconds=us)).isoformat(sep=" ")


def sql_timestamp(rnd, us: int) -> str:
    """A TIMESTAMP literal (read as UTC) or a TIMESTAMPTZ literal with a random offset, for the
    instant ``us`` microseconds after the epoch."""
    if rnd.random() < 0.5:
        return f"TIMESTAMP '{_dt_text(us)}'"
    us = min(max(us, _DT_RANGE[0]), _DT_RANGE[1])
    minutes = rnd.choice([0, 120, -300, 330])
    if not _DT_RANGE[0] <= us + minutes * 60 * 10**6 <= _DT_RANGE[1]:
        minutes = 0
    sign = "+" if minutes >= 0 else "-"
    text = _dt_text(us + minutes * 60 * 10**6)
    return f"TIMESTAMPTZ '{text}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}'"


def sql_date(days: int) -> str:
    """A DATE literal (a day outside years 1 to 9999 moved to the nearer end, as
    :func:`_dt_text` does)."""
    days = min(max(days, -719162), 2932896)
    return f"DATE '{(_dt.date(1970, 1, 1) + _dt.timedelta(days=days)).isoformat()}'"


def _f32_text(v: float) -> str | None:
    """The shortest decimal text that rounds to the float32 ``v`` (None when it needs an
    exponent), e.g. 0.1 for the float32 nearest to 0.1."""
    if math.isnan(v) or math.isinf(v):
        return None
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if to_f32(float(text)) == v:
            return None if "e" in text else (text if "." in text else text + ".0")
    return None


def data_values(case: Case, leaf: Leaf) -> list:
    """The non-null values of a leaf over the whole table (list elements flattened)."""
    vals = case.values[leaf.name]
    if leaf.element:
        vals = [e for row in vals if row for e in row]
    return [v for v in vals if v is not None]


def literal(rnd, case: Case, leaf: Leaf) -> str:
    """SQL text of a literal for comparing with ``leaf``: near its data, at type edges, or out of
    the type's range."""
    vals = data_values(case, leaf)
    v = rnd.choice(vals) if vals and rnd.random() < 0.9 else None
    kind = leaf.kind
    if kind == "int":
        lo, hi = int_range(leaf.type)
        if v is None or rnd.random() < 0.15:
            return str(rnd.choice([lo - 1, lo, hi, hi + 1, 1000, -1, 0, 2**64, -(2**63) - 1]))
        r = rnd.random()
        if r < 0.08:
            return f"{v}.5" if v >= 0 else f"-{abs(v) - 1}.5" if v < -1 else "-0.5"
        if r < 0.12:
            return sql_double(float(v))
        if r < 0.13:
            return "CAST('NaN' AS DOUBLE)"
        return str(v + rnd.choice([0, 0, -1, 1]))
    if kind == "float":
        if v is None:
            return sql_double(rnd.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0]))
        w = rnd.choice([v, v, math.nextafter(v, math.inf), math.nextafter(v, -math.inf),
                        v + 0.5, -v, math.nan, math.inf, -math.inf, 0.0, -0.0])
        if leaf.type.bit_width == 32 and F32_DECIMAL_LITERALS and rnd.random() < 0.2:
            text = _f32_text(v)
            if text is not None:
                return text
        if not math.isnan(w) and not math.isinf(w) and w == int(w) and abs(w) < 1e15 and rnd.random() < 0.5:
            return str(int(w))
        return sql_double(w)
    if kind == "decimal":
        ulp = dec(1, leaf.type.scale)
        if v is None:
            limit = dec(10 ** leaf.type.precision - 1, leaf.type.scale)
            # one step past the type's range (DuckDB cannot parse that literal for precision 38)
            beyond = [DEC.add(limit, ulp), DEC.minus(DEC.add(limit, ulp))] if leaf.type.precision < 38 else []
            return sql_decimal(rnd.choice([limit, DEC.minus(limit), Decimal(0), *beyond]))
        w = DEC.add(v, rnd.choice([0, 0, ulp, -ulp, DEC.divide(ulp, 2), DEC.divide(-ulp, 2)]))
        if rnd.random() < 0.1:
            return sql_double(float(w))
        return sql_decimal(w)
    if kind == "date":
        if v is None:
            v = rnd.choice([0, 19000])
        r = rnd.random()
        if r < 0.2:
            return sql_timestamp(rnd, (v * 86400 + rnd.choice([0, 43200])) * 10**6)
        return sql_date(v + rnd.choice([0, 0, -1, 1]))
    if kind == "timestamp":
        per = PER_SEC[leaf.type.unit]
        us = (v if v is not None else 0) * 10**6 // per
        r = rnd.random()
        if r < 0.15:
            return sql_date(us // (86400 * 10**6) + rnd.choice([0, 1]))
        return sql_timestamp(rnd, us + rnd.choice([0, 0, -1, 1, 10**6, -(10**6), 500000]))
    if kind == "string":
        if v is None or rnd.random() < 0.1:
            return sql_string(rnd.choice(["", "a", "zzz", "😀", "x" * 90]))
        return sql_string(rnd.choice(_string_neighbours(v)))
    if kind == "binary":
        if v is None:
            return sql_blob(rnd.choice([b"", b"\x00", b"\xff"]), rnd.random() < 0.3)
        cands = [v, v + b"\x00", v[:-1]]
        if v and v[-1] < 255:
            cands.append(v[:-1] + bytes([v[-1] + 1]))
        if v and v[-1] > 0:
            cands.append(v[:-1] + bytes([v[-1] - 1]))
        return sql_blob(rnd.choice(cands), rnd.random() < 0.3)
    if kind == "bool":
        return rnd.choice(["TRUE", "FALSE"])
    raise KeyError(kind)  # pragma: no cover


def _string_neighbours(v: str) -> list[str]:
    out = [v, v, v + "a", v[:-1], v + " ", v.upper(), v.lower()]
    if v:
        c = ord(v[-1])
        if c + 1 < 0xD800 or 0xE000 <= c + 1 <= 0x10FFFF:
            out.append(v[:-1] + chr(c + 1))
        if c > 1 and not (0xD800 <= c - 1 <= 0xDFFF):
            out.append(v[:-1] + chr(c - 1))
    return out


# --------------------------------------------------------------------------- atoms


def _ref(leaf: Leaf) -> str:
    return leaf.name


def _wide(leaf: Leaf) -> str:
    """The leaf for DuckDB arithmetic: integers widened so arithmetic never overflows."""
    return f"CAST({leaf.name} AS HUGEINT)" if leaf.kind == "int" else leaf.name


def atom_compare(rnd, case, leaf):
    op = rnd.choice(COMPARE_OPS)
    lit = literal(rnd, case, leaf)
    if rnd.random() < 0.3:
        return same(f"{lit} {FLIP[op]} {_ref(leaf)}", leaf.name)
    return same(f"{_ref(leaf)} {op} {lit}", leaf.name)


def atom_between(rnd, case, leaf):
    neg = "NOT " if rnd.random() < 0.35 else ""
    return same(f"{_ref(leaf)} {neg}BETWEEN {literal(rnd, case, leaf)} AND {literal(rnd, case, leaf)}", leaf.name)


def atom_in(rnd, case, leaf):
    neg = "NOT " if rnd.random() < 0.35 else ""
    n = rnd.choice([1, 1, 2, 3, 5]) if rnd.random() < 0.9 else rnd.randint(1000, 1200)
    items = [literal(rnd, case, leaf) for _ in range(min(n, 20))]
    if n > 20:
        items += [_filler(rnd, leaf, i) for i in range(n - 20)]
    if rnd.random() < 0.15:
        items.insert(rnd.randrange(len(items) + 1), "NULL")
    return same(f"{_ref(leaf)} {neg}IN ({', '.join(items)})", leaf.name)


def _filler(rnd, leaf: Leaf, i: int) -> str:
    """Cheap extra literals for long IN lists: spread over the type's range."""
    kind = leaf.kind
    if kind == "int":
        lo, hi = int_range(leaf.type)
        return str(rnd.randint(lo, hi))
    if kind == "float":
        return sql_double(rnd.uniform(-1e6, 1e6))
    if kind == "decimal":
        return sql_decimal(dec(rnd.randint(-10**6, 10**6), leaf.type.scale))
    if kind == "date":
        return sql_date(rnd.randint(-40000, 80000))
    if kind == "timestamp":
        return f"TIMESTAMP '{_dt_text(rnd.randint(-4 * 10**15, 4 * 10**15))}'"
    if kind == "string":
        return sql_string(f"fill{i}" + rnd.choice(ALPHABET))
    if kind == "binary":
        return sql_blob(i.to_bytes(2, "big"))
    return rnd.choice(["TRUE", "FALSE"])


def atom_is_nan(rnd, case, leaf):
    return same(rnd.choice([f"isnan({_ref(leaf)})", f"NOT isnan({_ref(leaf)})"]), leaf.name)


def atom_is_null(rnd, case, leaf):
    return same(f"{_ref(leaf)} IS {'NOT ' if rnd.random() < 0.5 else ''}NULL", leaf.name)


def atom_distinct(rnd, case, leaf):
    neg = "NOT " if rnd.random() < 0.5 else ""
    other = "NULL" if rnd.random() < 0.25 else literal(rnd, case, leaf)
    return same(f"{_ref(leaf)} IS {neg}DISTINCT FROM {other}", leaf.name)


GROUP = {"int": "num", "float": "num", "decimal": "num", "date": "time", "timestamp": "time",
         "string": "str", "binary": "bin", "bool": "bool"}


def atom_column_pair(rnd, case, leaf):
    peers = [o for o in case.leaves if not o.element and GROUP[o.kind] == GROUP[leaf.kind]]
    other = rnd.choice(peers)
    if rnd.random() < 0.25:
        neg = "NOT " if rnd.random() < 0.5 else ""
        op = f"IS {neg}DISTINCT FROM"
    else:
        op = rnd.choice(COMPARE_OPS)
    return column_pair(leaf, op, other)


def column_pair(leaf: Leaf, op: str, other: Leaf) -> Atom:
    """``leaf op other`` for two columns (``op`` also ``IS [NOT] DISTINCT FROM``)."""
    a, b = _ref(leaf), _ref(other)
    da, db = a, b
    temporal = {x.kind for x in (leaf, other)} <= {"date", "timestamp"}
    if temporal and leaf.type != other.type:
        # DuckDB casts one side to the other's type first (nanosecond timestamps only
        # explicitly), which fails past 2262 or for far dates: compare exact instants instead
        # (a zone-less value read in UTC, DuckDB's session zone here)
        da, db = _epoch_ns(leaf), _epoch_ns(other)
    return Atom(f"{a} {op} {b}", f"{da} {op} {db}", (leaf.name, other.name))


def _epoch_ns(leaf: Leaf) -> str:
    """DuckDB SQL for the instant of a date or timestamp column as HUGEINT nanoseconds."""
    if leaf.kind == "date":
        return f"CAST(datediff('day', DATE '1970-01-01', {leaf.name}) AS HUGEINT) * {86400 * 10**9}"
    if leaf.type.unit == "ns":
        return f"CAST(epoch_ns({leaf.name}) AS HUGEINT)"
    if leaf.type.tz is None and leaf.type.unit in ("s", "ms"):
        # through TIMESTAMP (microseconds, exact here): DuckDB 2's epoch_us of a TIMESTAMP_S
        # or _MS passes through nanoseconds and fails outside 1677-2262
        return f"CAST(epoch_us(CAST({leaf.name} AS TIMESTAMP)) AS HUGEINT) * 1000"
    return f"CAST(epoch_us({leaf.name}) AS HUGEINT) * 1000"


def atom_bool(rnd, case, leaf):
    col = _ref(leaf)
    text = rnd.choice([col, f"NOT {col}", f"{col} IS TRUE", f"{col} IS NOT TRUE", f"{col} IS FALSE",
                       f"{col} IS NOT FALSE", f"{col} = TRUE", f"{col} = FALSE", f"{col} != TRUE"])
    return same(text, leaf.name)


def atom_like(rnd, case, leaf):
    vals = data_values(case, leaf) or ["ab"]
    v = rnd.choice(vals)
    escape = rnd.random() < 0.3

    def lit_part(s: str) -> str:
        return "".join("!" + ch if ch in "%_!" else ch for ch in s) if escape else s

    k = rnd.randint(0, len(v))
    shape = rnd.choice(["prefix", "prefix", "exact", "contains", "suffix", "underscore", "raw"])
    if shape == "prefix":
        pat = lit_part(v[:k]) + "%"
    elif shape == "exact":
        pat = lit_part(v)
    elif shape == "contains":
        pat = "%" + lit_part(v[k // 2:k]) + "%"
    elif shape == "suffix":
        pat = "%" + lit_part(v[k:])
    elif shape == "underscore":
        pat = lit_part(v[:k]) + "_" * rnd.randint(1, 2) + rnd.choice(["", "%"])
    else:  # the data itself as a pattern: its own % and _ act as wildcards
        pat = v[:k] + rnd.choice(["", "%", "_"])
        escape = False
    op = ("NOT " if rnd.random() < 0.3 else "") + ("ILIKE" if rnd.random() < 0.25 else "LIKE")
    esc = " ESCAPE '!'" if escape else ""
    return same(f"{_ref(leaf)} {op} {sql_string(pat)}{esc}", leaf.name)


def atom_arith(rnd, case, leaf):
    vals = data_values(case, leaf) or [0]
    v = rnd.choice(vals)
    kind = leaf.kind
    shape = rnd.choice(["+", "-", "*", "neg"]) if kind != "decimal" else rnd.choice(["+", "-"])
    if kind == "int":
        lo, hi = int_range(leaf.type)
        c = rnd.choice([1, 2, 100, -3, hi, lo, hi - v if lo <= hi - v else 1]) if shape != "*" \
            else rnd.choice([-1, -2, 3, -1000, 2**31])
        f = {"+": lambda x: x + c, "-": lambda x: x - c, "*": lambda x: c * x, "neg": lambda x: -x}[shape]
        target = str(f(v) + rnd.choice([0, 0, 1, -1]))
        ctext = str(c)
    elif kind == "float":
        c = rnd.choice([1.0, 0.5, -3.25, 1e308, 1e-300, -1.0])
        f = {"+": lambda x: x + c, "-": lambda x: x - c, "*": lambda x: c * x, "neg": lambda x: -x}[shape]
        y = f(v)
        target = sql_double(rnd.choice([y, y, math.nextafter(y, math.inf), math.nextafter(y, -math.inf)]))
        ctext = sql_double(c)
    else:  # decimal
        c = rnd.choice([Decimal(1), Decimal("1.5"), Decimal("-0.25")])
        y = DEC.add(v, c) if shape == "+" else DEC.subtract(v, c)
        target = sql_decimal(DEC.add(y, rnd.choice([0, 0, dec(1, leaf.type.scale)])))
        ctext = sql_decimal(c)
    op = rnd.choice(COMPARE_OPS)

    def expr(col: str, duck: bool = False) -> str:
        if shape == "neg":
            # DuckDB rewrites `-x < c` to `x > -c`, which goes wrong for c = NaN: spell it 0 - x
            return f"(0 - {col})" if duck else f"-{col}"
        if shape == "*":
            return f"{ctext} * {col}"
        return f"{col} {shape} {ctext}"

    return Atom(f"{expr(_ref(leaf))} {op} {target}", f"{expr(_wide(leaf), duck=True)} {op} {target}", (leaf.name,))


def atom_cast(rnd, case, leaf):
    col = _ref(leaf)
    if leaf.kind == "int" and rnd.random() < 0.7:
        # u64 values above 2**63 do not fit a BIGINT (DuckDB raises): widen those to DOUBLE only
        to = "DOUBLE" if leaf.type == pa.uint64() else rnd.choice(["BIGINT", "DOUBLE"])
        return same(f"CAST({col} AS {to}) {rnd.choice(COMPARE_OPS)} {literal(rnd, case, leaf)}", leaf.name)
    if leaf.kind == "float" and rnd.random() < 0.7:
        return same(f"CAST({col} AS DOUBLE) {rnd.choice(COMPARE_OPS)} {literal(rnd, case, leaf)}", leaf.name)
    if leaf.kind == "date" and rnd.random() < 0.7:
        vals = data_values(case, leaf) or [0]
        us = (rnd.choice(vals) * 86400 + rnd.choice([0, 0, 1, -1, 43200])) * 10**6
        return same(f"CAST({col} AS TIMESTAMP) {rnd.choice(COMPARE_OPS)} TIMESTAMP '{_dt_text(us)}'", leaf.name)
    # number/date -> varchar: the engine cannot use bounds, it must keep
    vals = data_values(case, leaf) or [0]
    v = rnd.choice(vals)
    text = str(v) if leaf.kind != "date" else str(_dt.date(1970, 1, 1) + _dt.timedelta(days=v))
    return same(f"CAST({col} AS VARCHAR) {rnd.choice(['=', '<', '>='])} {sql_string(text)}", leaf.name)


def atom_unknown_function(rnd, case, leaf):
    col = _ref(leaf)
    if leaf.kind in ("int", "float", "decimal"):
        lit = literal(rnd, case, leaf)
        return Atom(f"abs({col}) > {lit}", f"abs({_wide(leaf)}) > {lit}", (leaf.name,))
    if leaf.kind == "string":
        return same(rnd.choice([f"length({col}) = {rnd.randint(0, 3)}", f"lower({col}) = {literal(rnd, case, leaf)}",
                                f"upper({col}) < {literal(rnd, case, leaf)}"]), leaf.name)
    return atom_compare(rnd, case, leaf)


def atom_list(rnd, case, leaf):
    if rnd.random() < 0.2:
        return atom_is_null(rnd, case, leaf)
    lit = literal(rnd, case, leaf)
    return Atom(f"array_contains({leaf.name}, {lit})", f"list_contains({leaf.name}, {lit})", (leaf.name,))


CONSTANTS = ["1 = 1", "1 = 2", "NULL", "TRUE", "FALSE", "NULL = 1", "1 < 2", "NOT NULL", "NULL IS NULL"]


def atom(rnd, case: Case) -> Atom:
    """One random atom over one (or two) leaves of ``case``, or a constant."""
    if rnd.random() < 0.05:
        return same(rnd.choice(CONSTANTS))
    leaf = rnd.choice(case.leaves)
    if leaf.element:
        return atom_list(rnd, case, leaf)
    choices = [atom_compare] * 6 + [atom_between, atom_in, atom_in, atom_is_null, atom_distinct,
                                    atom_column_pair]
    if leaf.kind == "bool":
        choices += [atom_bool] * 6
    if leaf.kind == "string":
        choices += [atom_like] * 5 + [atom_unknown_function]
    if leaf.kind in ("int", "float", "decimal"):
        choices += [atom_arith] * 3 + [atom_unknown_function]
    if leaf.kind == "float":
        choices += [atom_is_nan]
    if leaf.kind in ("int", "float", "date"):
        choices += [atom_cast] * 2
    return rnd.choice(choices)(rnd, case, leaf)


def random_predicate(rnd, case: Case, depth: int | None = None) -> Pred:
    """A random predicate: nested AND / OR / NOT / IS [NOT] TRUE|FALSE of depth up to ``depth``
    (default 0 to 3) over atoms of ``case``."""
    if depth is None:
        depth = rnd.choice([0, 1, 1, 2, 2, 3])
    if depth == 0 or rnd.random() < 0.25:
        return atom(rnd, case)
    r = rnd.random()
    if r < 0.35:
        return And(tuple(random_predicate(rnd, case, depth - 1) for _ in range(rnd.randint(2, 3))))
    if r < 0.7:
        return Or(tuple(random_predicate(rnd, case, depth - 1) for _ in range(rnd.randint(2, 3))))
    if r < 0.9:
        return Not(random_predicate(rnd, case, depth - 1))
    return IsBool(random_predicate(rnd, case, depth - 1), rnd.random() < 0.5, rnd.random() < 0.5)
