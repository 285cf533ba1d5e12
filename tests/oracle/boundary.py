"""Boundary values of every type, used both as data and as literals (issue #8).

The random differential test draws values near its own data; this module goes where engines
disagree or overflow: each type's minimum and maximum and the values next to them, 0, -0.0,
+-inf, NaN, the smallest subnormal, 2^53 +- 1 (where doubles stop holding every integer),
2^63 - 1 / 2^63 / 2^64 - 1 for unsigned 64-bit, the largest decimal of each precision, the
ends of each timestamp unit's range (nanoseconds end in 2262), the ends of date32, and strings
and bytes at the ends of the byte order.

- :func:`boundary_values`: the sorted data values of a leaf (NaN apart);
- :func:`boundary_case`: one column of those values split into awkward containers (each value
  alone, each adjacent pair, everything, with nulls, all-null, NaN-only, empty);
- :func:`boundary_predicates`: atoms over every operator with boundary literals: comparisons
  on either side, ``[NOT] BETWEEN``, ``[NOT] IN``, ``IS [NOT] NULL``, ``isnan``, negation,
  ``+ - *`` with small and huge constants, and casts.

DuckDB is the oracle. It computes integer arithmetic on HUGEINT (the mathematical value), and
:class:`~tests.oracle.predicates.Atom` carries a second spelling, ``wrap``, that wraps the
result around the narrowest type an engine may compute in (the column's own type when the
constant fits it: ``i8 + 1`` is TINYINT in DuckDB; Spark's non-ANSI mode and Polars wrap). A
prune must hold under both.

>>> import random
>>> case = boundary_case(random.Random(0), "u64")
>>> max(v for v in case.values["u64"] if v is not None) == 2**64 - 1
True
>>> preds = boundary_predicates(random.Random(0), case, budget=50)
>>> len(preds)
50
"""

from __future__ import annotations

import math

import pyarrow as pa

from prune_engine.evaluate.domains import civil_from_days

from .data import (CID, DEC, DECIMAL_TYPES, F32_MAX, FLOAT_TYPES, INT_TYPES, TIMESTAMP_TYPES, Case, Leaf,
                   dec, int_range, to_f32)
from .predicates import (COMPARE_OPS, FLIP, Atom, Not, Pred, column_pair, same, sql_blob, sql_decimal,
                         sql_double, sql_string)
from .stats import storage_type

#: one more family of column types, beyond the random test's catalog
EXTRA_TYPES = {"fsb": ("binary", pa.binary(4)), "dt": ("date", pa.date32()), "s": ("string", pa.string()),
               "bin": ("binary", pa.binary()), "b": ("bool", pa.bool_())}

#: every column the boundary sweep covers
BOUNDARY_COLUMNS = [*INT_TYPES, *FLOAT_TYPES, *DECIMAL_TYPES, *TIMESTAMP_TYPES, *EXTRA_TYPES]
#: column pairs compared with each other: where engines convert one side to the other's type
BOUNDARY_PAIRS = [("i64", "f64"), ("u64", "f64"), ("i64", "u64"), ("i32", "f32"), ("u64", "f32"), ("i8", "u8"),
                  ("f32", "f64"), ("i64", "d18"), ("d18", "d38"), ("d9", "d18"), ("ts_ns", "ts_us"),
                  ("ts_s", "ts_ms"), ("tz_ms", "ts_ms"), ("tz_us", "ts_us"), ("dt", "ts_s"), ("dt", "tz_ns"),
                  ("bin", "fsb")]

#: DuckDB's microsecond timestamps end here (its infinity is one above); below its low end
#: DuckDB fails on zone-less timestamps, so the low end used is DuckDB's
US_MAX = 2**63 - 2
US_MIN_DUCK = -9223372022400 * 10**6
PER_SEC = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def leaf_of(column: str) -> Leaf:
    if column in INT_TYPES:
        return Leaf((column,), "int", INT_TYPES[column])
    if column in FLOAT_TYPES:
        return Leaf((column,), "float", FLOAT_TYPES[column])
    if column in DECIMAL_TYPES:
        return Leaf((column,), "decimal", DECIMAL_TYPES[column])
    if column in TIMESTAMP_TYPES:
        return Leaf((column,), "timestamp", TIMESTAMP_TYPES[column])
    kind, typ = EXTRA_TYPES[column]
    return Leaf((column,), kind, typ)


# --------------------------------------------------------------------------- values

#: the limits of every integer type and their neighbours (where one type's cast overflows), and
#: where floats stop holding every integer (2**24 for FLOAT, 2**53 for DOUBLE)
_INT_EDGES = sorted({v + d for t in INT_TYPES.values() for v in int_range(t) for d in (-1, 0, 1)}
                    | {-2, -1, 0, 1, 2, 2**24 - 1, 2**24 + 1, 2**53 - 1, 2**53, 2**53 + 1,
                       -(2**53) - 1, -(2**53), -(2**53) + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1})


def _f64_edges() -> list[float]:
    tiny, big = 5e-324, 1.7976931348623157e308
    pos = [tiny, 2.2250738585072014e-308, 0.1, 1.0, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64,
           math.nextafter(big, 0), big, math.inf]
    return sorted({*pos, *(-x for x in pos), 0.0, -1.5})


def _f32_edges() -> list[float]:
    tiny = to_f32(1.401298464324817e-45)
    pos = [tiny, to_f32(1.1754943508222875e-38), to_f32(0.1), 1.0, 2.0**24, 2.0**24 + 2, 2.0**63,
           to_f32(math.nextafter(F32_MAX, 0) - 1e31), F32_MAX, math.inf]
    return sorted({*pos, *(-x for x in pos), 0.0, -1.5})


def _timestamp_edges(unit: str) -> list[int]:
    per = PER_SEC[unit]
    if unit == "ns":
        lo, hi = -(2**63), 2**63 - 1
    else:
        lo, hi = -(-US_MIN_DUCK // (10**6 // per)), US_MAX * per // 10**6
    year1 = -62135596800 * per  # 0001-01-01
    ns_end = (2**63 - 1) // (10**9 // per)  # the last instant nanoseconds reach (2262)
    edges = {lo, lo + 1, year1 - 1, year1, -1, 0, 1, ns_end - 1, ns_end, ns_end + 1, hi - 1, hi}
    return sorted(v for v in edges if lo <= v <= hi)


def boundary_values(leaf: Leaf) -> list:
    """Sorted distinct storage values of ``leaf`` at the edges of its type (NaN not included)."""
    kind, typ = leaf.kind, leaf.type
    if kind == "int":
        lo, hi = int_range(typ)
        return [v for v in _INT_EDGES if lo <= v <= hi]
    if kind == "float":
        return _f32_edges() if typ == pa.float32() else _f64_edges()
    if kind == "decimal":
        top = 10**typ.precision - 1
        units = {top, top - 1, 10 ** (typ.precision - 1), 10**typ.scale, 10**typ.scale + 1, 1, 0}
        units = {u for u in units if u <= top}  # (1 and its neighbour leave a decimal(p, p))
        units |= {-u for u in units}
        return sorted(dec(u, typ.scale) for u in units)
    if kind == "date":
        return sorted({-(2**31), -(2**31) + 1, -719162, -106752, -1, 0, 1, 106751, 2932896, 2**31 - 2, 2**31 - 1})
    if kind == "timestamp":
        return _timestamp_edges(typ.unit)
    if kind == "string":
        return sorted({"", "\x00", "\x01", "a", "a\x00", "ab", "\x7f", "\u0080", "é", "\uffff", "\U00010000",
                       "\U0010ffff", "\U0010ffff\U0010ffff", "https://shop.example/a", "https://shop.example/b",
                       "x" * 40, "x" * 40 + "y"})
    if kind == "binary":
        if pa.types.is_fixed_size_binary(typ):
            w = typ.byte_width
            return sorted({b"\x00" * w, b"\x00" * (w - 1) + b"\x01", b"abcd"[:w].ljust(w, b"\x00"),
                           b"\x7f" + b"\xff" * (w - 1), b"\x80" + b"\x00" * (w - 1), b"\xff" * (w - 1) + b"\xfe",
                           b"\xff" * w})
        return sorted({b"", b"\x00", b"\x00\x00", b"a", b"\x7f", b"\x80", b"\xff", b"\xff\xff", b"\xff" * 9})
    if kind == "bool":
        return [False, True]
    raise KeyError(kind)


# --------------------------------------------------------------------------- containers


def _layouts(rnd, pool: list, float_: bool) -> list[list]:
    """Container contents: each value alone, adjacent pairs, all values, nulls, NaN, empty."""
    out: list[list] = [[v] for v in pool]
    out += [[a, b] for a, b in zip(pool, pool[1:])]
    out += [list(pool), [], [None], [None, None], [pool[0], None], [pool[-1], None]]
    if float_:
        out += [[math.nan], [math.nan, None], [math.nan, pool[0]], [math.nan, pool[-1]], [-0.0], [-0.0, 0.0],
                [0.0, math.nan]]
    for _ in range(4):  # a few random windows
        i = rnd.randrange(len(pool))
        out.append(pool[i:i + rnd.randint(2, 4)] + ([None] if rnd.random() < 0.5 else []))
    return out


def boundary_case(rnd, column: str | Leaf, other: str | None = None,
                  pool: list | None = None) -> Case:
    """One column of boundary values split into containers (see :func:`_layouts`), or, with
    ``other``, two columns whose rows pair boundary values of each (:func:`_pair_layouts`).
    ``column`` is a catalog name or a :class:`Leaf` of any type the catalog's kinds cover;
    ``pool`` replaces its boundary values (a writer's narrower range)."""
    leaves = [column if isinstance(column, Leaf) else leaf_of(column)] + \
        ([leaf_of(other)] if other else [])
    pools = [boundary_values(leaf) for leaf in leaves]
    if pool is not None:
        pools[0] = pool
    if other is None:
        contents = [[(v,) for v in rows] for rows in _layouts(rnd, pools[0], leaves[0].kind == "float")]
    else:  # DuckDB's infinities have no epoch to compare across types by
        contents = _pair_layouts(rnd, *([v for v in pool if v not in _DUCKDB_INFINITIES.get(leaf.kind, ())]
                                        for leaf, pool in zip(leaves, pools)))
    cids = [f"c{i:03d}" for i in range(len(contents))]
    rows = [row for part in contents for row in part]
    values = {leaf.name: [row[i] for row in rows] for i, leaf in enumerate(leaves)}
    arrays = {leaf.name: pa.array(values[leaf.name], storage_type(leaf.type)).cast(leaf.type) for leaf in leaves}
    arrays[CID] = pa.array([c for c, part in zip(cids, contents) for _ in part], pa.string())
    return Case(table=pa.table(arrays), leaves=leaves, cids=cids, sizes=[len(p) for p in contents],
                values=values)


#: storage values DuckDB reads as +-infinity (dates; nanosecond timestamps)
_DUCKDB_INFINITIES = {"date": (2**31 - 1, -(2**31) + 1), "timestamp": (2**63 - 1, -(2**63) + 1)}


def _pair_layouts(rnd, pool_a: list, pool_b: list) -> list[list[tuple]]:
    """Containers of rows ``(a, b)``: every value of each pool once, beside a random value of
    the other; a few random multi-row containers; nulls on either side; empty."""
    out = [[(a, rnd.choice(pool_b))] for a in pool_a] + [[(rnd.choice(pool_a), b)] for b in pool_b]
    for _ in range(len(pool_a) // 2):
        out.append([(rnd.choice(pool_a), rnd.choice(pool_b)) for _ in range(rnd.randint(2, 3))])
    out += [[], [(None, rnd.choice(pool_b))], [(rnd.choice(pool_a), None)], [(None, None)]]
    return out


# --------------------------------------------------------------------------- literals


def date_text(days: int) -> str | None:
    """ISO text of a date (years 1 and later, more than four digits past 9999), else None."""
    y, m, d = civil_from_days(days)
    return f"{y:04d}-{m:02d}-{d:02d}" if y >= 1 else None


def timestamp_text(ticks: int, per_sec: int) -> str | None:
    """ISO text of ``ticks`` (``per_sec`` per second) after the epoch, with every digit kept."""
    secs, frac = divmod(ticks, per_sec)
    days, rem = divmod(secs, 86400)
    day = date_text(days)
    if day is None:
        return None
    text = f"{day} {rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}"
    width = len(str(per_sec)) - 1
    return text + (f".{frac:0{width}d}" if width else "")


def literal_values(leaf: Leaf) -> list[str]:
    """SQL literals for comparing with ``leaf``: its boundary values, the values next to them,
    values beyond the type, and literals of other types (a double against an integer column)."""
    kind, typ = leaf.kind, leaf.type
    pool = boundary_values(leaf)
    if kind == "int":
        lo, hi = int_range(typ)
        ints = sorted({*pool, lo - 1, hi + 1, 2**64, -(2**63) - 1, 2**127})
        out = [str(v) for v in ints]
        out += [sql_double(float(v)) for v in pool if abs(v) >= 2**52]  # rounded to a double
        out += [f"'{v}'" for v in pool[::3]] + ["'12.5'", "'-0.5'", "'127.5'"]  # text, cast by the engine
        out += ["CAST(16777216 AS FLOAT)", "CAST(16777218 AS FLOAT)", "CAST(5 AS FLOAT)"]  # compared as FLOAT
        out += ["9007199254740993.0", "9007199254740992.5", "-9223372036854775808.5", "0.5", "-0.5",
                "18446744073709551615.0", "9007199254740993e0", "1e19", "-1e19", sql_double(math.nan),
                sql_double(math.inf), sql_double(-math.inf)]
        return out
    if kind == "float":
        f32 = typ == pa.float32()
        near = [math.nextafter(v, d) for v in pool for d in (math.inf, -math.inf) if math.isfinite(v)]
        vals = sorted({*pool, *near, math.nan})
        out = [sql_double(v) for v in vals]
        out += ["0", "-0.0", "0.1", "1", "9007199254740993", "16777217", "1e39", "-1e39",
                "340282346638528859811704183484516925440.0", "179769313486231570000000000000000000000e270"]
        if f32:
            out += ["CAST('0.1' AS FLOAT)", "CAST('3.4028235e38' AS FLOAT)", "CAST('1e-45' AS FLOAT)"]
        return out
    if kind == "decimal":
        ulp = dec(1, typ.scale)
        out = {sql_decimal(v) for v in pool}
        half = DEC.divide(ulp, 2)
        out |= {sql_decimal(DEC.add(v, half)) for v in pool} | {sql_decimal(DEC.subtract(v, half)) for v in pool[:3]}
        top = dec(10**typ.precision - 1, typ.scale)
        out |= {f"'{sql_decimal(DEC.add(v, half))}'" for v in pool[::2]}  # text, cast by the engine
        out |= {sql_decimal(DEC.add(top, ulp)), sql_decimal(DEC.minus(DEC.add(top, ulp))), sql_double(float(top)), "0", "1",
                f"CAST({pool[-1]} AS DECIMAL({typ.precision}, {typ.scale}))", "CAST(8 AS DECIMAL(6,2))",
                f"CAST(1 AS DECIMAL({typ.precision}, 0))"}
        return sorted(out)
    if kind == "date":
        texts = [date_text(v + d) for v in pool for d in (-1, 0, 1)]
        out = [f"DATE '{t}'" for t in texts if t is not None]
        out += ["'1970-01-01 12:00'", "'1969-12-31 23:59:59.9999999'", "DATE '1970-01-01 23:59:59.9999999'",
                "CAST(TIMESTAMP_NS '1969-12-31 23:59:59.999999999' AS DATE)"]
        out += ["TIMESTAMP '1970-01-01 12:00:00'", "TIMESTAMP '2262-04-11 23:47:16.854775'",
                "TIMESTAMP '1677-09-21 00:12:43.145224'", "TIMESTAMPTZ '1970-01-01 00:00:00+14:00'"]
        return out
    if kind == "timestamp":
        per = PER_SEC[typ.unit]
        texts = [timestamp_text(v + d, per) for v in pool for d in (-1, 0, 1)]
        name = {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[typ.unit]
        out = [f"{name} '{t}'" for t in texts if t is not None]
        out += [f"'{t}'" for t in texts[::4] if t is not None]  # text, cast by the engine
        out += ["'1970-01-01 00:00:00.7'", "'1969-12-31 23:59:59.5'", "TIMESTAMP_S '1970-01-01 00:00:00.7'",
                "TIMESTAMP_MS '1970-01-01 00:00:00.0005'", "TIMESTAMP '1970-01-01 00:00:00.0000007'"]
        out += ["DATE '2262-04-11'", "DATE '2262-04-12'", "DATE '1677-09-21'", "DATE '0001-01-01'",
                "TIMESTAMP '2262-04-11 23:47:16.854775'", "TIMESTAMP '2262-04-11 23:47:16.854776'",
                "TIMESTAMPTZ '2262-04-12 01:00:00+02:00'", "TIMESTAMP '294247-01-10 04:00:54.775806'"]
        return out
    if kind == "string":
        near = [v + "\x00" for v in pool] + [v[:-1] for v in pool if v]
        return [sql_string(v) for v in sorted({*pool, *near})]
    if kind == "binary":
        near = [v + b"\x00" for v in pool] + [v[:-1] for v in pool if v]
        vals = sorted({*pool, *near})
        return [sql_blob(v) for v in vals] + [sql_blob(v, hex_form=True) for v in vals[::2]]
    if kind == "bool":
        return ["TRUE", "FALSE"]
    raise KeyError(kind)


# --------------------------------------------------------------------------- atoms


def _narrow_type(leaf: Leaf, constants: list[int]) -> tuple[int, int]:
    """The range of the narrowest integer type an engine may compute ``leaf op constants`` in:
    the column's type when every constant fits it, else the smallest type holding both."""
    lo, hi = int_range(leaf.type)
    if all(lo <= c <= hi for c in constants):
        return lo, hi
    lo, hi = min([lo, *constants]), max([hi, *constants])
    for bits in (8, 16, 32, 64, 128):
        for tlo, thi in ((-(2 ** (bits - 1)), 2 ** (bits - 1) - 1), (0, 2**bits - 1)):
            if tlo <= lo and hi <= thi:
                return tlo, thi
    return -(2**127), 2**127 - 1


def wrap_sql(expr: str, lo: int, hi: int) -> str:
    """DuckDB SQL wrapping the HUGEINT ``expr`` around the range ``[lo, hi]`` (two's complement);
    a 128-bit range is HUGEINT's own (its span is no HUGEINT literal)."""
    span = hi - lo + 1
    if span > 2**64:
        return expr
    return f"(((({expr}) - ({lo})) % {span} + {span}) % {span} + ({lo}))"


def _arith_atoms(leaf: Leaf, pool: list, rnd) -> list[Atom]:
    """``x + c``, ``x - c``, ``c * x``, ``c - x``, ``-x`` compared with the images of boundary
    values (and their neighbours); integer columns also get the wrapped spelling."""
    name = leaf.name
    out: list[Atom] = []
    if leaf.kind == "int":
        lo, hi = int_range(leaf.type)
        consts = [1, -1, 2, -2, 1000, -1000, 2**31, -(2**31), 2**62, -(2**62), hi, lo, 2**63 - 1, -(2**63)]
        wide = f"CAST({name} AS HUGEINT)"
        shapes = [("+", lambda v, c: v + c), ("-", lambda v, c: v - c), ("*", lambda v, c: c * v),
                  ("r-", lambda v, c: c - v), ("neg", lambda v, c: -v)]
        for shape, fn in shapes:
            for c in (consts if shape != "neg" else [0]):
                if shape == "*" and abs(c) > 2**62:
                    continue  # keep products inside HUGEINT
                text = {"+": f"{name} + {c}", "-": f"{name} - {c}", "*": f"{c} * {name}",
                        "r-": f"{c} - {name}", "neg": f"-{name}"}[shape]
                duck = {"+": f"{wide} + {c}", "-": f"{wide} - {c}", "*": f"{c} * {wide}",
                        "r-": f"{c} - {wide}", "neg": f"(0 - {wide})"}[shape]
                tlo, thi = _narrow_type(leaf, [] if shape == "neg" else [c])
                wrapped = wrap_sql(duck, tlo, thi)
                targets = {fn(v, c) + d for v in rnd.sample(pool, min(4, len(pool))) for d in (-1, 0, 1)}
                targets.add(rnd.choice([tlo, thi]))
                for t in sorted(targets):
                    op = rnd.choice(COMPARE_OPS)
                    out.append(Atom(f"{text} {op} {t}", f"{duck} {op} {t}", (name,), wrap=f"{wrapped} {op} {t}"))
    elif leaf.kind == "float" and leaf.type == pa.float64():
        consts = [1.0, -1.0, 0.5, 1e308, -1e308, 5e-324, 2.0**53]
        for c in consts:
            for v in rnd.sample(pool, 4):
                for text, y in ((f"{name} + {sql_double(c)}", v + c), (f"{sql_double(c)} * {name}", v * c),
                                (f"-{name}", -v), (f"{name} - {sql_double(c)}", v - c)):
                    if math.isfinite(y):  # DuckDB fails on a double overflow
                        duck = text.replace(f"-{name}", f"(0 - {name})") if text == f"-{name}" else text
                        op = rnd.choice(COMPARE_OPS)
                        out.append(Atom(f"{text} {op} {sql_double(y)}", f"{duck} {op} {sql_double(y)}", (name,)))
    return out


_INT_SQL = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INTEGER": pa.int32(), "BIGINT": pa.int64(),
            "UTINYINT": pa.uint8(), "USMALLINT": pa.uint16(), "UINTEGER": pa.uint32(), "UBIGINT": pa.uint64()}


def _cast_atoms(leaf: Leaf, lits: list[str], rnd) -> list[Atom]:
    """Casts of the column compared with literals. Narrowing integer casts fail in DuckDB,
    give NULL under TRY_CAST and wrap in Spark's non-ANSI mode: all three are allowed."""
    name = leaf.name
    out: list[Atom] = []
    if leaf.kind == "int":
        for sql_type, typ in _INT_SQL.items():
            tlo, thi = int_range(typ)
            target = Leaf((name,), "int", typ)
            for lit in rnd.sample(literal_values(target), 3):
                op = rnd.choice(COMPARE_OPS)
                pe = f"CAST({name} AS {sql_type}) {op} {lit}"
                duck = f"TRY_CAST({name} AS {sql_type}) {op} {lit}"
                wrapped = f"CAST({wrap_sql(f'CAST({name} AS HUGEINT)', tlo, thi)} AS {sql_type}) {op} {lit}"
                out.append(Atom(pe, duck, (name,), wrap=wrapped))
        for lit in rnd.sample(lits, 4):
            op = rnd.choice(COMPARE_OPS)
            out.append(same(f"CAST({name} AS DOUBLE) {op} {lit}", name))
            out.append(same(f"CAST({name} AS FLOAT) {op} {lit}", name))
    elif leaf.kind == "float":
        for lit in rnd.sample(lits, 6):
            op = rnd.choice(COMPARE_OPS)
            out.append(same(f"CAST({name} AS DOUBLE) {op} {lit}", name))
            out.append(Atom(f"CAST({name} AS FLOAT) {op} {lit}", f"TRY_CAST({name} AS FLOAT) {op} {lit}", (name,)))
    elif leaf.kind == "date":
        for t in ("TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_S"):
            for lit in ("TIMESTAMP '1970-01-01 00:00:00'", "TIMESTAMP '2262-04-11 00:00:00'",
                        "TIMESTAMP '0001-01-01 00:00:00'", "TIMESTAMP '1677-09-22 00:00:00'"):
                op = rnd.choice(COMPARE_OPS)
                out.append(Atom(f"CAST({name} AS {t}) {op} {lit}", f"TRY_CAST({name} AS {t}) {op} {lit}", (name,)))
    elif leaf.kind == "timestamp":
        for t, lit in (("DATE", "DATE '2262-04-11'"), ("DATE", "DATE '1970-01-01'"),
                       ("TIMESTAMP_NS", "TIMESTAMP '2262-04-11 23:47:16.854775'"),
                       ("TIMESTAMP", "TIMESTAMP '1677-09-21 00:12:43.145224'"),
                       ("TIMESTAMP_S", "TIMESTAMP '1970-01-01 00:00:00'")):
            op = rnd.choice(COMPARE_OPS)
            out.append(Atom(f"CAST({name} AS {t}) {op} {lit}", f"TRY_CAST({name} AS {t}) {op} {lit}", (name,)))
    return out


def pair_predicates(rnd, case: Case) -> list[Pred]:
    """Every comparison of the two columns of a pair case, both ways round, some negated."""
    a, b = case.leaves
    atoms = [column_pair(x, op, y) for x, y in ((a, b), (b, a))
             for op in [*COMPARE_OPS, "IS DISTINCT FROM", "IS NOT DISTINCT FROM"]]
    return atoms + [Not(p) for p in atoms]


def boundary_predicates(rnd, case: Case, budget: int = 600) -> list[Pred]:
    """Atoms (and some negated atoms) over every operator with boundary literals, ``budget`` of
    them drawn from the full enumeration (deterministic for a seeded ``rnd``)."""
    if len(case.leaves) == 2:
        return pair_predicates(rnd, case)
    leaf = case.leaves[0]
    name = leaf.name
    lits = literal_values(leaf)
    pool = boundary_values(leaf)
    atoms: list[Pred] = []
    for lit in lits:
        for op in COMPARE_OPS:
            atoms.append(same(f"{name} {op} {lit}", name))
            atoms.append(same(f"{lit} {FLIP[op]} {name}", name))
    for _ in range(len(lits)):
        a, b = rnd.choice(lits), rnd.choice(lits)
        atoms.append(same(f"{name} {rnd.choice(['', 'NOT '])}BETWEEN {a} AND {b}", name))
        items = rnd.sample(lits, min(len(lits), rnd.choice([1, 2, 3, 5])))
        if rnd.random() < 0.2:
            items.append("NULL")
        atoms.append(same(f"{name} {rnd.choice(['', 'NOT '])}IN ({', '.join(items)})", name))
    atoms += [same(f"{name} IS NULL", name), same(f"{name} IS NOT NULL", name)]
    if leaf.kind == "float":
        atoms += [same(f"isnan({name})", name), same(f"NOT isnan({name})", name)]
    atoms += _arith_atoms(leaf, pool, rnd)
    atoms += _cast_atoms(leaf, lits, rnd)
    picked = rnd.sample(atoms, min(budget, len(atoms)))
    return [Not(a) if rnd.random() < 0.15 else a for a in picked]
