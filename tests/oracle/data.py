"""Random Arrow tables split into containers (row groups), for the differential soundness test.

A :class:`Case` is one random table: a few columns drawn from a catalog of every type the
engine supports (integers of every width and sign, floats with NaN / -0.0 / +-inf, decimals of
small and large precision, dates, timestamps of every unit with and without time zone, strings
with ``%``, ``_``, non-ASCII and 80+ characters, binary, bool, nested struct leaves and list
elements), split into containers of random sizes. Containers are deliberately awkward: empty,
all-null in a column, NaN-only, a single repeated value, or a narrow window of values, so that
their statistics sit on the boundaries the engine must get right.

Everything is drawn from one ``random.Random``-like object, so the same code serves a seeded
sweep (``random.Random(seed)``) and hypothesis (``st.randoms(use_true_random=False)``, which
shrinks).

>>> import random
>>> case = random_case(random.Random(3))
>>> case.table.num_rows == sum(case.sizes)
True
>>> CID in case.table.column_names
True
"""

from __future__ import annotations

import decimal
import math
import struct as _struct
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

#: the column of the data table that names each row's container
CID = "__cid"


@dataclass(frozen=True)
class Leaf:
    """One stats leaf: a top-level column, a struct leaf (``st.b.c``) or a list element.

    ``kind`` groups types that share literal rendering and neighbours: ``int``, ``float``,
    ``decimal``, ``date``, ``timestamp``, ``string``, ``binary``, ``bool``.
    """

    path: tuple[str, ...]
    kind: str
    type: pa.DataType
    element: bool = False  # True for the elements of a list column

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass
class Case:
    """A random table split into containers, with each leaf's values kept as Python values.

    ``values[leaf.name]`` holds one storage value per table row (``None`` where the leaf is null,
    including under a null parent struct); for a list leaf it holds, per row, ``None`` (null
    list) or the list of elements. Storage values are ints for dates (days) and timestamps
    (ticks of the unit, UTC), ``Decimal`` for decimals, and plain Python values otherwise.
    """

    table: pa.Table
    leaves: list[Leaf]
    cids: list[str]
    sizes: list[int]
    values: dict[str, list] = field(default_factory=dict)

    def rows_of(self, index: int) -> range:
        start = sum(self.sizes[:index])
        return range(start, start + self.sizes[index])

    def leaf(self, name: str) -> Leaf:
        return next(leaf for leaf in self.leaves if leaf.name == name)


# --------------------------------------------------------------------------- the type catalog

INT_TYPES = {
    "i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "i64": pa.int64(),
    "u8": pa.uint8(), "u16": pa.uint16(), "u32": pa.uint32(), "u64": pa.uint64(),
}
FLOAT_TYPES = {"f32": pa.float32(), "f64": pa.float64()}
DECIMAL_TYPES = {"d9": pa.decimal128(9, 2), "d18": pa.decimal128(18, 4), "d38": pa.decimal128(38, 10)}
TIMESTAMP_TYPES = {
    "ts_s": pa.timestamp("s"), "ts_ms": pa.timestamp("ms"), "ts_us": pa.timestamp("us"),
    "ts_ns": pa.timestamp("ns"), "tz_s": pa.timestamp("s", tz="UTC"),
    "tz_ms": pa.timestamp("ms", tz="Europe/Paris"), "tz_us": pa.timestamp("us", tz="+05:30"),
    "tz_ns": pa.timestamp("ns", tz="UTC"),
}
OTHER_TYPES = {"dt": ("date", pa.date32()), "s": ("string", pa.string()), "s2": ("string", pa.string()),
               "bin": ("binary", pa.binary()), "b": ("bool", pa.bool_())}

#: top-level columns by family; a struct ("st") and two lists ("tags", "nums") are nested
FAMILIES = {
    "int": list(INT_TYPES),
    "float": list(FLOAT_TYPES),
    "decimal": list(DECIMAL_TYPES),
    "temporal": ["dt", *TIMESTAMP_TYPES],
    "text": ["s", "s2", "bin"],
    "nested": ["b", "st", "tags", "nums"],
}
ALL_COLUMNS = [name for names in FAMILIES.values() for name in names]

ST_TYPE = pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string())]))])


def leaves_of(column: str) -> list[Leaf]:
    """The stats leaves a top-level catalog column contributes."""
    if column in INT_TYPES:
        return [Leaf((column,), "int", INT_TYPES[column])]
    if column in FLOAT_TYPES:
        return [Leaf((column,), "float", FLOAT_TYPES[column])]
    if column in DECIMAL_TYPES:
        return [Leaf((column,), "decimal", DECIMAL_TYPES[column])]
    if column in TIMESTAMP_TYPES:
        return [Leaf((column,), "timestamp", TIMESTAMP_TYPES[column])]
    if column in OTHER_TYPES:
        kind, typ = OTHER_TYPES[column]
        return [Leaf((column,), kind, typ)]
    if column == "st":
        return [Leaf(("st", "a"), "int", pa.int32()), Leaf(("st", "b", "c"), "string", pa.string())]
    if column == "tags":
        return [Leaf(("tags",), "string", pa.string(), element=True)]
    if column == "nums":
        return [Leaf(("nums",), "int", pa.int32(), element=True)]
    raise KeyError(column)


# --------------------------------------------------------------------------- value pools

#: exact decimal arithmetic for 38-digit values (the default context rounds to 28 digits)
DEC = decimal.Context(prec=100)


def dec(units: int, scale: int) -> Decimal:
    """The decimal ``units * 10**-scale``, exactly.

    >>> dec(-1234, 2)
    Decimal('-12.34')
    """
    return Decimal(units).scaleb(-scale, context=DEC)


def int_range(typ: pa.DataType) -> tuple[int, int]:
    bits = typ.bit_width
    if pa.types.is_unsigned_integer(typ):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def to_f32(x: float) -> float:
    """Round a double to the nearest float32 (as a Python float); overflow becomes +-inf."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return _struct.unpack("f", _struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


F32_MAX = to_f32(3.4028234663852886e38)

#: string alphabet: SQL wildcards, the escape character we use, case pairs, multi-byte UTF-8
ALPHABET = ["a", "b", "z", "A", "%", "_", "!", " ", "é", "É", "ß", "日", "😀", "\u007f", "~"]
BYTES = [0x00, 0x01, 0x61, 0x62, 0x7F, 0x80, 0xFF]


def _random_string(rnd, long: bool = False) -> str:
    if long:
        stem = "x" * 40 + rnd.choice(["", "é", "😀"]) * rnd.randint(0, 3) + "y" * 40
        return stem + "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 4)))
    return "".join(rnd.choice(ALPHABET) for _ in range(rnd.choice([0, 1, 1, 2, 2, 3, 4, 5])))


def anchor_pool(rnd, leaf: Leaf) -> list:
    """Sorted distinct values a column draws from: type edges plus random values."""
    kind, typ = leaf.kind, leaf.type
    pool: list = []
    if kind == "int":
        lo, hi = int_range(typ)
        edges = [lo, lo + 1, -1, 0, 1, 2, 3, 5, 100, hi - 1, hi, 2**63 - 1, 2**63, 2**63 + 7]
        pool = [v for v in edges if lo <= v <= hi and rnd.random() < 0.6]
        pool += [rnd.randint(lo, hi) for _ in range(3)]
        pool += [rnd.randint(max(lo, -50), min(hi, 50)) for _ in range(4)]
    elif kind == "float":
        specials = [0.0, -0.0, 1.5, -2.25, 0.1, 1e308, -1e308, 5e-324, 3.0e38, -7.0, 1e16 + 1]
        pool = [v for v in specials if rnd.random() < 0.5]
        pool += [rnd.uniform(-100, 100) for _ in range(3)]
        pool += [float(rnd.randint(-20, 20)) for _ in range(3)]
        pool += [rnd.choice([-1, 1]) * 10 ** rnd.uniform(-30, 30) for _ in range(2)]
        if typ == pa.float32():
            pool = [to_f32(v) for v in pool]
            pool += [F32_MAX, -F32_MAX, to_f32(0.1)]
    elif kind == "decimal":
        units = 10 ** min(typ.precision, 36) - 1
        ints = [0, 1, -1, 5, 250, units, -units, units - 1]
        ints = [v for v in ints if rnd.random() < 0.6]
        ints += [rnd.randint(-units, units) for _ in range(3)] + [rnd.randint(-2000, 2000) for _ in range(3)]
        pool = [dec(v, typ.scale) for v in ints]
    elif kind == "date":
        pool = [0, -1, 1, 365, 18262, -25567] + [rnd.randint(-40000, 80000) for _ in range(5)]
    elif kind == "timestamp":
        per_sec = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[typ.unit]
        secs = [0, -1, 1, 86400, 1577836800] + [rnd.randint(-4 * 10**9, 4 * 10**9) for _ in range(5)]
        pool = [s * per_sec + (rnd.randint(0, per_sec - 1) if rnd.random() < 0.5 else 0) for s in secs]
        pool += [p + d for p in pool[:3] for d in (-1, 1)]
    elif kind == "string":
        pool = ["", "a", "ab", "b", "a%", "a_b", "A", "é", "日本", "😀", "abc", "z"]
        pool = [v for v in pool if rnd.random() < 0.5] + [_random_string(rnd) for _ in range(4)]
        if rnd.random() < 0.4:
            pool += [_random_string(rnd, long=True) for _ in range(3)]
    elif kind == "binary":
        pool = [b"", b"a", b"ab", b"\x00", b"\xff", b"\xff\xff", b"\x80"]
        pool = [v for v in pool if rnd.random() < 0.5]
        pool += [bytes(rnd.choice(BYTES) for _ in range(rnd.randint(0, 4))) for _ in range(4)]
        if rnd.random() < 0.3:
            pool.append(b"\x61" * 40 + bytes([rnd.choice(BYTES)]))
    elif kind == "bool":
        pool = [False, True]
    else:  # pragma: no cover - catalog and pool are defined together
        raise KeyError(kind)
    return sorted(set(pool))


# --------------------------------------------------------------------------- containers

def _leaf_values(rnd, pool: list, leaf: Leaf, n: int, mode: str) -> list:
    """``n`` values of one leaf in one container, following the container's ``mode``."""
    if mode == "allnull":
        return [None] * n
    if mode == "nan" and leaf.kind == "float":
        return [math.nan] * n
    if mode == "single":
        v = rnd.choice(pool)
        return [v] * n
    lo = rnd.randrange(len(pool))
    hi = min(len(pool), lo + rnd.choice([1, 2, 3, len(pool)]))
    window = pool[lo:hi]
    p_null = rnd.choice([0.0, 0.0, 0.2, 0.5])
    p_nan = rnd.choice([0.0, 0.0, 0.2]) if leaf.kind == "float" else 0.0
    out = []
    for _ in range(n):
        r = rnd.random()
        if r < p_null:
            out.append(None)
        elif r < p_null + p_nan:
            out.append(math.nan)
        else:
            v = rnd.choice(window)
            if leaf.kind == "float" and v == 0:
                v = rnd.choice([0.0, -0.0])  # both zeros, so bounds meet -0.0 == 0.0
            out.append(v)
    return out


LEAF_MODES = ["normal", "normal", "normal", "single", "allnull", "nan"]


def random_case(rnd, columns: list[str] | None = None, max_containers: int = 8,
                max_rows: int = 12) -> Case:
    """A random table of a few catalog columns, split into random containers.

    ``columns`` fixes the top-level columns (default: 2 to 5 drawn from :data:`ALL_COLUMNS`).
    """
    if columns is None:
        columns = rnd.sample(ALL_COLUMNS, rnd.randint(2, 5))
    leaves = [leaf for c in columns for leaf in leaves_of(c)]
    pools = {leaf.name: anchor_pool(rnd, leaf) for leaf in leaves}
    n_containers = rnd.randint(1, max_containers)
    sizes = [0 if rnd.random() < 0.12 else rnd.randint(1, max_rows) for _ in range(n_containers)]
    cids = [f"c{i:03d}" for i in range(n_containers)]

    values: dict[str, list] = {leaf.name: [] for leaf in leaves}
    struct_parent: list = []  # per row: None (st null), "b_null", or "ok"
    for n in sizes:
        for leaf in leaves:
            mode = rnd.choice(LEAF_MODES)
            if leaf.element:
                values[leaf.name].extend(_list_values(rnd, pools[leaf.name], leaf, n, mode))
            else:
                values[leaf.name].extend(_leaf_values(rnd, pools[leaf.name], leaf, n, mode))
        if "st" in columns:
            p_parent = rnd.choice([0.0, 0.0, 0.3, 1.0])
            struct_parent.extend(
                None if rnd.random() < p_parent else ("b_null" if rnd.random() < 0.2 else "ok")
                for _ in range(n))

    arrays = {}
    for c in columns:
        if c == "st":
            a, cc = values["st.a"], values["st.b.c"]
            rows = []
            for i, parent in enumerate(struct_parent):
                if parent is None:
                    rows.append(None)
                    a[i] = cc[i] = None
                elif parent == "b_null":
                    rows.append({"a": a[i], "b": None})
                    cc[i] = None
                else:
                    rows.append({"a": a[i], "b": {"c": cc[i]}})
            arrays[c] = pa.array(rows, ST_TYPE)
        else:
            leaf = leaves_of(c)[0]
            vals = values[leaf.name]
            typ = pa.list_(leaf.type) if leaf.element else leaf.type
            arrays[c] = pa.array(vals, typ)
    arrays[CID] = pa.array([cid for cid, n in zip(cids, sizes) for _ in range(n)], pa.string())
    table = pa.table(arrays)
    return Case(table=table, leaves=leaves, cids=cids, sizes=sizes, values=values)


def _list_values(rnd, pool: list, leaf: Leaf, n: int, mode: str) -> list:
    """``n`` rows of a list column: null lists, empty lists, lists with (null) elements."""
    if mode == "allnull":
        return [None if rnd.random() < 0.5 else [] for _ in range(n)]
    out = []
    for _ in range(n):
        r = rnd.random()
        if r < 0.15:
            out.append(None)
        elif r < 0.25:
            out.append([])
        else:
            k = rnd.randint(1, 3)
            elems = _leaf_values(rnd, pool, leaf, k, "single" if mode == "single" else "normal")
            out.append(elems)
    return out
