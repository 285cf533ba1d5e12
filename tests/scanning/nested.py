"""Random nested data, projections and predicates for the scan tests, with their oracles.

- :func:`nested_table`: a seeded table with a struct in a struct, a list of structs, a map, a
  list of strings and float edge values (NaN, -0.0, +-inf), nulls at every level, empty lists.
- :func:`predicate`: a random predicate as a pair (prune_engine SQL, DuckDB SQL); element
  predicates are written for DuckDB in their documented form
  ``len(list_filter(coalesce(list, []), lambda o: ...)) > 0``.
- :func:`select_rows`: plain Python selection of paths from ``to_pylist()`` rows, the oracle of
  the projection (the scan must equal reading everything, then selecting).
"""

from __future__ import annotations

import datetime as dt
import math
import random

import pyarrow as pa

ORDER = pa.struct([("price", pa.float64()), ("qty", pa.int32()), ("sku", pa.string())])
T = pa.struct([("c", pa.float64()), ("d", pa.date32())])
S = pa.struct([("a", pa.int64()), ("b", pa.string()), ("t", T)])
SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("x", pa.float64()),
    ("s", S),
    ("orders", pa.list_(pa.field("element", ORDER))),
    ("attrs", pa.map_(pa.string(), pa.int64())),
    ("tags", pa.list_(pa.field("element", pa.string()))),
])
FLOATS = [float("nan"), -0.0, 0.0, 1.5, -2.25, float("inf"), float("-inf"), 3.0, 100.5]
WORDS = ["a", "ab", "abc", "b", "ba", "a%b", "a_b", "é", "zz", ""]
DAY0 = dt.date(2024, 1, 1)


def _maybe(rnd: random.Random, p: float, make):
    return None if rnd.random() < p else make()


def _order(rnd: random.Random):
    return _maybe(rnd, 0.1, lambda: {
        "price": _maybe(rnd, 0.15, lambda: rnd.choice(FLOATS)),
        "qty": _maybe(rnd, 0.15, lambda: rnd.randint(-3, 12)),
        "sku": _maybe(rnd, 0.15, lambda: rnd.choice(WORDS)),
    })


def nested_table(rnd: random.Random, n: int, start: int = 0) -> pa.Table:
    """``n`` rows with ids ``start...``; every level may be null."""
    rows = {"id": [], "x": [], "s": [], "orders": [], "attrs": [], "tags": []}
    for i in range(n):
        rows["id"].append(start + i)
        rows["x"].append(_maybe(rnd, 0.15, lambda: rnd.choice(FLOATS)))
        rows["s"].append(_maybe(rnd, 0.12, lambda: {
            "a": _maybe(rnd, 0.15, lambda: rnd.randint(-5, 20)),
            "b": _maybe(rnd, 0.15, lambda: rnd.choice(WORDS)),
            "t": _maybe(rnd, 0.2, lambda: {
                "c": _maybe(rnd, 0.2, lambda: rnd.choice(FLOATS)),
                "d": _maybe(rnd, 0.2, lambda: DAY0 + dt.timedelta(days=rnd.randint(0, 30))),
            }),
        }))
        rows["orders"].append(_maybe(rnd, 0.12, lambda: [_order(rnd) for _ in
                                                        range(rnd.choice([0, 1, 2, 3, 5]))]))
        rows["attrs"].append(_maybe(rnd, 0.12, lambda: [
            (k, _maybe(rnd, 0.2, lambda: rnd.randint(0, 9)))
            for k in rnd.sample(["k1", "k2", "k3", "k4"], rnd.randint(0, 3))]))
        rows["tags"].append(_maybe(rnd, 0.12, lambda: [
            _maybe(rnd, 0.15, lambda: rnd.choice(WORDS)) for _ in range(rnd.randint(0, 3))]))
    return pa.Table.from_pydict(rows, schema=SCHEMA)


# ------------------------------------------------------------------------------ predicates

def _float_sql(v: float) -> str:
    if math.isnan(v):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(v):
        return f"CAST('{'-' if v < 0 else ''}Infinity' AS DOUBLE)"
    return repr(v)


def _str_sql(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


OPS = ["=", "!=", "<", "<=", ">", ">="]
COMPLEMENT = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _exists(lst: str, var: str, body: str) -> str:
    return f"len(list_filter(coalesce({lst}, []), lambda {var}: {body})) > 0"


def atom(rnd: random.Random) -> tuple[str, str, str]:
    """One predicate as (prune_engine SQL, DuckDB SQL, DuckDB SQL of its negation).

    The negation of an element predicate is the existential test of the complemented
    predicate (NOT is pushed down first, see ``prune_engine.scanning.rows``)."""
    op = rnd.choice(OPS)
    cop = COMPLEMENT[op]
    kind = rnd.randrange(16)
    if kind == 9:
        v = _float_sql(rnd.choice(FLOATS))
        return (f"orders.price {op} {v}", _exists("orders", "o", f"o.price {op} {v}"),
                _exists("orders", "o", f"o.price {cop} {v}"))
    if kind == 10:
        v = rnd.randint(-3, 12)
        return (f"orders.qty {op} {v}", _exists("orders", "o", f"o.qty {op} {v}"),
                _exists("orders", "o", f"o.qty {cop} {v}"))
    if kind == 11:
        v = _str_sql(rnd.choice(WORDS))
        sku, qty = (_exists("orders", "o", f"o.sku {op} {v}"),
                    _exists("orders", "o", "o.qty > 2"))
        return (f"orders.sku {op} {v} AND orders.qty > 2", f"{sku} AND {qty}",
                f"{_exists('orders', 'o', f'o.sku {cop} {v}')} OR "
                f"{_exists('orders', 'o', 'o.qty <= 2')}")
    if kind == 12:
        v = _str_sql(rnd.choice(["k1", "k2", "k3", "k9"]))
        return (f"attrs.key {op} {v}", _exists("map_keys(attrs)", "k", f"k {op} {v}"),
                _exists("map_keys(attrs)", "k", f"k {cop} {v}"))
    if kind == 13:
        v = rnd.randint(0, 9)
        return (f"attrs.value {op} {v}", _exists("map_values(attrs)", "v", f"v {op} {v}"),
                _exists("map_values(attrs)", "v", f"v {cop} {v}"))
    if kind == 15:
        return ("orders.price IS NULL", _exists("orders", "o", "o.price IS NULL"),
                _exists("orders", "o", "o.price IS NOT NULL"))
    text = _row_atom(rnd, kind, op)
    duck = text[1] if isinstance(text, tuple) else text
    pe_text = text[0] if isinstance(text, tuple) else text
    return pe_text, duck, f"NOT ({duck})"


def _row_atom(rnd: random.Random, kind: int, op: str):
    if kind == 0:
        return f"id {op} {rnd.randint(-2, 60)}"
    if kind == 1:
        return f"x {op} {_float_sql(rnd.choice(FLOATS))}"
    if kind == 2:
        return f"s.a {op} {rnd.randint(-5, 20)}"
    if kind == 3:
        pattern = rnd.choice(["a%", "%b", "a_b", "%", "_", "a\\%b", "é%", ""])
        esc = " ESCAPE '\\'" if "\\" in pattern else ""
        neg = rnd.choice(["", "NOT "])
        return f"s.b {neg}LIKE {_str_sql(pattern)}{esc}"
    if kind == 4:
        return f"s.t.c {op} {_float_sql(rnd.choice(FLOATS))}"
    if kind == 5:
        day = DAY0 + dt.timedelta(days=rnd.randint(0, 30))
        return f"s.t.d {op} DATE '{day.isoformat()}'"
    if kind == 6:
        col = rnd.choice(["s", "s.t", "s.a", "x", "orders", "attrs", "tags"])
        return f"{col} IS {rnd.choice(['', 'NOT '])}NULL"
    if kind == 7:
        vals = rnd.sample([_float_sql(v) for v in FLOATS] + ["NULL"], rnd.randint(1, 4))
        return f"x {rnd.choice(['', 'NOT '])}IN ({', '.join(vals)})"
    if kind == 8:
        v = _float_sql(rnd.choice(FLOATS))
        return f"x IS {rnd.choice(['', 'NOT '])}DISTINCT FROM {v}"
    v = _str_sql(rnd.choice(WORDS))  # kind 14
    return f"array_contains(tags, {v})", f"list_contains(tags, {v})"


def predicate(rnd: random.Random, depth: int = 2) -> tuple[str, str]:
    """A random AND / OR / NOT tree of atoms: (prune_engine SQL, DuckDB SQL)."""
    pe_sql, duck, _ = _tree(rnd, depth)
    return pe_sql, duck


def _tree(rnd: random.Random, depth: int) -> tuple[str, str, str]:
    if depth == 0 or rnd.random() < 0.4:
        return atom(rnd)
    k = rnd.randrange(3)
    if k == 2:
        pe_sql, duck, neg = _tree(rnd, depth - 1)
        return f"NOT ({pe_sql})", neg, duck
    (lp, ld, ln), (rp, rd, rn) = _tree(rnd, depth - 1), _tree(rnd, depth - 1)
    if k == 0:
        return f"({lp}) AND ({rp})", f"({ld}) AND ({rd})", f"({ln}) OR ({rn})"
    return f"({lp}) OR ({rp})", f"({ld}) OR ({rd})", f"({ln}) AND ({rn})"


# ------------------------------------------------------------------------------ projections

PROJECTIONS = [
    "id", "x", "s", "s.a", "s.t", "s.t.c", "s.t.d", "s.b", "orders", "orders.price",
    "orders.sku", "attrs", "attrs.key", "attrs.value", "tags",
]


def _select_value(value, t: pa.DataType, rest: tuple[str, ...]):
    """The part of one Python value at the (remaining) path, in the scan's shape."""
    if value is None or not rest:
        return value
    if pa.types.is_list(t):
        return [_select_value(v, t.value_type, rest) for v in value]
    if pa.types.is_map(t):
        if rest[0] == "key":
            return [(k, None) for k, _ in value]
        return [(k, _select_value(v, t.item_type, rest[1:])) for k, v in value]
    name = rest[0]
    return {name: _select_value(value[name], t.field(name).type, rest[1:])}


def _merge(a, b):
    """Two selections of one value, merged (children in schema order are fixed later)."""
    if a is None or b is None:
        return a if b is None else b
    if isinstance(a, dict):
        return {**a, **{k: _merge(a.get(k), v) if k in a else v for k, v in b.items()}}
    if isinstance(a, list) and a and isinstance(a[0], tuple):
        return [(k, va if vb is None else vb) for (k, va), (_, vb) in zip(a, b)]
    if isinstance(a, list):
        return [_merge(x, y) for x, y in zip(a, b)]
    return a


def select_rows(rows: list[dict], schema: pa.Schema, paths: list[str]) -> list[dict]:
    """Each row reduced to the selected paths (dotted, no quoting needed here)."""
    out = []
    for row in rows:
        result: dict = {}
        for path in paths:
            parts = tuple(path.split("."))
            top = parts[0]
            part = _select_value(row[top], schema.field(top).type, parts[1:])
            result[top] = _merge(result[top], part) if top in result else part
        out.append(result)
    return out


def normalize(value):
    """Comparable form: NaN as a marker, -0.0 kept apart from 0.0, dict keys sorted."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, dict):
        return tuple(sorted((k, normalize(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    return value


def write_files(root, rnd: random.Random, files: int = 3, rows: int = 60,
                row_group_size: int = 15) -> list[str]:
    """Parquet files of :func:`nested_table`, ids ascending across files."""
    import pyarrow.parquet as pq

    paths = []
    for k in range(files):
        table = nested_table(rnd, rows, start=k * rows)
        path = str(root / f"part-{k}.parquet")
        pq.write_table(table, path, row_group_size=row_group_size)
        paths.append(path)
    return paths
