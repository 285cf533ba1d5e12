"""stats_from_arrow against row-level oracles: DuckDB on the rows, and a plain-Python reference."""

from __future__ import annotations

import decimal
import math
import struct
import sys
import types

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats import layout
from tests.budget import examples
from tests.oracle.duck import load_table

NAN = float("nan")


def _plain(typ):
    """The type with timestamps as int64, so that nanoseconds survive ``to_pylist``."""
    if pa.types.is_timestamp(typ):
        return pa.int64()
    if pa.types.is_struct(typ):
        return pa.struct([pa.field(f.name, _plain(f.type)) for f in typ])
    return typ


def by_container(stats, column):
    """{container id: row of the stats column} (timestamps as int64 ticks)."""
    values = stats.column(column)
    values = values.cast(_plain(values.type))
    return dict(zip(stats.column("container").to_pylist(), values.to_pylist()))


def same_float(a, b):
    """Equal including the sign of zero; NaN never expected in a bound."""
    if a is None or b is None:
        return a is b
    return struct.pack("<d", a) == struct.pack("<d", b)


def reference(values, floats=False):
    """Plain-Python stats of one container's values: (min, max, null_count, nan_count)."""
    nulls = sum(v is None for v in values)
    nans = sum(1 for v in values if isinstance(v, float) and math.isnan(v))
    real = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not real:
        return None, None, nulls, nans if floats else None
    lo, hi = min(real), max(real)
    if floats and lo == 0:
        lo = -0.0 if any(v == 0 and math.copysign(1, v) < 0 for v in real) else 0.0
    if floats and hi == 0:
        hi = 0.0 if any(v == 0 and math.copysign(1, v) > 0 for v in real) else -0.0
    return lo, hi, nulls, nans if floats else None


# ---------------------------------------------------------------------------- flat columns

TS_UNITS = ["s", "ms", "us", "ns"]
ZONES = [None, "UTC", "America/New_York", "+05:30"]


def _flat_columns():
    """(arrow type, hypothesis strategy of a python value) per flat column kind."""
    ints = st.integers(-(2**63), 2**63 - 1)
    return {
        "i64": (pa.int64(), ints),
        "i8": (pa.int8(), st.integers(-128, 127)),
        "u64": (pa.uint64(), st.sampled_from([0, 1, 2**63 - 1, 2**63, 2**63 + 7, 2**64 - 1])
                | st.integers(0, 2**64 - 1)),
        "f64": (pa.float64(), st.sampled_from([0.0, -0.0, NAN, math.inf, -math.inf, 1.5])
                | st.floats(allow_nan=True)),
        "f32": (pa.float32(), st.sampled_from([0.0, -0.0, NAN, -1.0]) | st.floats(width=32)),
        "dec": (pa.decimal128(38, 10), st.decimals(min_value=-(10**27), max_value=10**27,
                                                     places=10, allow_nan=False)),
        "dec256": (pa.decimal256(76, 3), st.decimals(min_value=-(10**72), max_value=10**72,
                                                       places=3, allow_nan=False)),
        "date": (pa.date32(), st.dates()),
        "s": (pa.string(), st.text(max_size=6)),
        "ls": (pa.large_string(), st.sampled_from(["", "a", "ab", "\U0001f600", "\xff"])
               | st.text(max_size=3)),
        "bin": (pa.binary(), st.binary(max_size=4)),
        "b": (pa.bool_(), st.booleans()),
    }


FLAT = _flat_columns()


@st.composite
def flat_tables(draw):
    n = draw(st.integers(0, 25))
    names = draw(st.lists(st.sampled_from(sorted(FLAT)), min_size=1, max_size=5, unique=True))
    cols = {"c": draw(st.lists(st.sampled_from(["p", "q", "r", "7"]), min_size=n, max_size=n))}
    for name in names:
        typ, values = FLAT[name]
        cols[name] = pa.array(draw(st.lists(st.none() | values, min_size=n, max_size=n)), typ)
    unit, zone = draw(st.sampled_from(TS_UNITS)), draw(st.sampled_from(ZONES))
    ticks = st.integers(-(2**63), 2**63 - 1)
    cols["ts"] = pa.array(draw(st.lists(st.none() | ticks, min_size=n, max_size=n)),
                          pa.timestamp(unit, zone))
    return pa.table(cols)


def _plain_schema(schema):
    return pa.schema([pa.field(f.name, _plain(f.type)) for f in schema])


@settings(max_examples=examples(60), deadline=None)
@given(flat_tables())
def test_flat_columns_match_python_reference(table):
    stats = pe.stats_from_arrow(table, container="c")
    first_seen = list(dict.fromkeys(table.column("c").to_pylist()))
    assert stats.column("container").to_pylist() == first_seen, "ids in first-seen order"
    mins, maxs = by_container(stats, "min_values"), by_container(stats, "max_values")
    nulls, counts = by_container(stats, "null_count"), by_container(stats, "num_records")
    nans = by_container(stats, "nan_count") if "nan_count" in stats.table.column_names else {}
    rows = table.cast(_plain_schema(table.schema)).to_pylist()
    for cid in first_seen:
        mine = [r for r in rows if r["c"] == cid]
        assert counts[cid] == len(mine)
        for name in table.column_names[1:]:
            is_float = pa.types.is_floating(table.schema.field(name).type)
            lo, hi, nc, nanc = reference([r[name] for r in mine], is_float)
            assert nulls[cid][name] == nc, f"null_count of {name} in {cid}"
            if is_float:
                assert same_float(mins[cid][name], lo), f"min of {name} in {cid}: sign and NaN"
                assert same_float(maxs[cid][name], hi), f"max of {name} in {cid}"
                assert nans[cid][name] == nanc, f"nan_count of {name} in {cid}"
            else:
                assert (mins[cid][name], maxs[cid][name]) == (lo, hi), f"bounds of {name}"
    assert stats.schema.field("min_values").type == pa.struct(
        [table.schema.field(n) for n in table.column_names[1:]]), "bounds keep the data types"


@settings(max_examples=examples(25), deadline=None)
@given(flat_tables())
def test_flat_columns_match_duckdb(table):
    table = table.drop_columns([n for n in table.column_names if n == "dec256"])  # > DuckDB's 38
    stats = pe.stats_from_arrow(table, container="c")
    names = table.column_names[1:]
    parts = []
    for n in names:
        real = f"NOT isnan(\"{n}\")" if pa.types.is_floating(table.schema.field(n).type) else "true"
        parts.append(f'min("{n}") FILTER (WHERE {real}) AS "min_{n}", '
                     f'max("{n}") FILTER (WHERE {real}) AS "max_{n}", '
                     f'count(*) - count("{n}") AS "nc_{n}"')
    con = duckdb.connect()
    load_table(con, "t", table.cast(_plain_schema(table.schema)))  # DuckDB's timestamps are µs
    oracle = con.sql(f"SELECT c, count(*) AS n, {', '.join(parts)} FROM t GROUP BY c")
    oracle = oracle.to_arrow_table()
    mins, maxs = by_container(stats, "min_values"), by_container(stats, "max_values")
    nulls, counts = by_container(stats, "null_count"), by_container(stats, "num_records")
    for row in range(oracle.num_rows):
        cid = oracle.column("c")[row].as_py()
        assert counts[cid] == oracle.column("n")[row].as_py()
        for n in names:
            typ = _plain(table.schema.field(n).type)
            expect_lo = oracle.column(f"min_{n}").cast(typ)[row].as_py()
            expect_hi = oracle.column(f"max_{n}").cast(typ)[row].as_py()
            assert mins[cid][n] == expect_lo, f"min of {n} in {cid} (DuckDB {expect_lo})"
            assert maxs[cid][n] == expect_hi, f"max of {n} in {cid} (DuckDB {expect_hi})"
            assert nulls[cid][n] == oracle.column(f"nc_{n}")[row].as_py()


def test_signed_zero_bounds_are_true_ieee_bounds():
    stats = pe.stats_from_arrow([pa.table({"f": [0.0, -0.0]}), pa.table({"f": [-0.0, 0.0]}),
                                 pa.table({"f": [0.0]}), pa.table({"f": [-0.0]}),
                                 pa.table({"f": pa.array([-0.0, 2.0], pa.float32())})])
    lo = [r["f"] for r in stats.column("min_values").to_pylist()]
    hi = [r["f"] for r in stats.column("max_values").to_pylist()]
    assert [math.copysign(1, v) for v in lo] == [-1, -1, 1, -1, -1], "min is -0.0 iff -0.0 present"
    assert [math.copysign(1, v) for v in hi[:4]] == [1, 1, 1, -1], "max is +0.0 iff +0.0 present"
    assert stats.schema.field("min_values").type.field("f").type == pa.float64(), "widened to f64"


def test_all_nan_all_null_and_empty_containers():
    f = pa.float64()
    stats = pe.stats_from_arrow(
        [pa.table({"f": pa.array([NAN, NAN], f), "s": ["a", None]}),
         pa.table({"f": pa.array([None, None], f), "s": pa.array([None, None], pa.string())}),
         pa.table({"f": pa.array([], f), "s": pa.array([], pa.string())})],
        container=["nan", "null", "empty"])
    assert stats.column("num_records").to_pylist() == [2, 2, 0]
    assert stats.column("min_values").to_pylist() == [
        {"f": None, "s": "a"}, {"f": None, "s": None}, {"f": None, "s": None}
    ], "all-NaN and all-null bounds are null, not NaN"
    assert stats.column("null_count").to_pylist() == [{"f": 0, "s": 1}, {"f": 2, "s": 2},
                                                      {"f": 0, "s": 0}]
    assert stats.column("nan_count").to_pylist() == [{"f": 2}, {"f": 0}, {"f": 0}]
    assert stats.schema.field("nan_count").type == pa.struct([("f", pa.int64())]), "float only"


def test_no_nan_count_without_float_leaves():
    stats = pe.stats_from_arrow(pa.table({"c": [1, 2], "x": [1, 2]}), container="c")
    assert "nan_count" not in stats.table.column_names
    assert stats.column("container").to_pylist() == ["1", "2"], "ids are strings"


def test_uint64_and_decimal_extremes():
    big = [2**64 - 1, 2**63, None]
    d = decimal.Decimal("-" + "9" * 70 + ".123456")
    table = pa.table({"u": pa.array(big, pa.uint64()),
                      "d": pa.array([d, d.copy_negate(), None], pa.decimal256(76, 6))})
    stats = pe.stats_from_arrow(table)
    assert stats.column("min_values").to_pylist() == [{"u": 2**63, "d": d}]
    assert stats.column("max_values").to_pylist() == [{"u": 2**64 - 1, "d": d.copy_negate()}]


@pytest.mark.parametrize("unit", TS_UNITS)
@pytest.mark.parametrize("zone", ZONES)
def test_timestamps_keep_unit_and_zone(unit, zone):
    typ = pa.timestamp(unit, zone)
    stats = pe.stats_from_arrow(pa.table({"t": pa.array([5, -3, None], typ)}))
    assert stats.schema.field("max_values").type.field("t").type == typ
    assert stats.column("min_values").combine_chunks().field("t").cast(pa.int64()).to_pylist() == [-3]


# ---------------------------------------------------------------------------- nested columns

NESTED_TYPE = pa.struct([
    ("x", pa.int32()),
    ("inner", pa.struct([("s", pa.string()), ("f", pa.float64())])),
])


def nested_reference(rows, path):
    """Values of a nested leaf per row: a null parent makes the leaf null."""
    out = []
    for row in rows:
        v = row
        for key in path:
            v = None if v is None else v[key]
        out.append(v)
    return out


@st.composite
def nested_tables(draw):
    n = draw(st.integers(0, 15))
    ints = st.none() | st.integers(-5, 5)
    floats = st.none() | st.sampled_from([NAN, -0.0, 0.0, 1.0, -2.5])
    strs = st.none() | st.text(alphabet="ab\xe9", max_size=2)
    inner = st.none() | st.fixed_dictionaries({"s": strs, "f": floats})
    rec = st.none() | st.fixed_dictionaries({"x": ints, "inner": inner})
    lists = st.none() | st.lists(ints, max_size=3)
    maps = st.none() | st.lists(st.tuples(st.text(alphabet="kz", min_size=1, max_size=2), floats),
                                max_size=3)
    structs_in_list = st.none() | st.lists(st.none() | st.fixed_dictionaries({"a": ints}),
                                           max_size=3)

    def column(strategy, typ):
        return pa.array(draw(st.lists(strategy, min_size=n, max_size=n)), typ)

    return pa.table({
        "c": column(st.sampled_from(["a", "b", "c"]), pa.string()),
        "st": column(rec, NESTED_TYPE),
        "l": column(lists, pa.large_list(pa.int64())),
        "m": column(maps, pa.map_(pa.string(), pa.float64())),
        "ls": column(structs_in_list, pa.list_(pa.struct([("a", pa.int64())]))),
    })


def _check_leaf(stats, cid, values, stat_path, label, is_float=False):
    mins, maxs = by_container(stats, "min_values")[cid], by_container(stats, "max_values")[cid]
    nulls = by_container(stats, "null_count")[cid]
    lo, hi, nc, nanc = reference(values, is_float)

    def get(row):
        for key in stat_path:
            row = row[key]
        return row

    if is_float:
        assert same_float(get(mins), lo) and same_float(get(maxs), hi), label
        assert get(by_container(stats, "nan_count")[cid]) == nanc, label
    else:
        assert (get(mins), get(maxs)) == (lo, hi), label
    assert get(nulls) == nc, label


@settings(max_examples=examples(60), deadline=None)
@given(nested_tables())
def test_nested_structs_lists_and_maps_match_python_reference(table):
    stats = pe.stats_from_arrow(table, container="c")
    rows = table.to_pylist()
    for cid in dict.fromkeys(table.column("c").to_pylist()):
        mine = [r for r in rows if r["c"] == cid]
        st_rows = [r["st"] for r in mine]
        for path in [("x",), ("inner", "s"), ("inner", "f")]:
            _check_leaf(stats, cid, nested_reference(st_rows, path), ("st",) + path, path,
                        is_float=path[-1] == "f")
        elems = [e for r in mine for e in (r["l"] or [])]
        _check_leaf(stats, cid, elems, ("l",), "list elements")
        entries = [e for r in mine for e in (r["m"] or [])]
        _check_leaf(stats, cid, [k for k, _ in entries], ("m", "key"), "map keys")
        _check_leaf(stats, cid, [v for _, v in entries], ("m", "value"), "map values", True)
        structs = [e for r in mine for e in (r["ls"] or [])]
        _check_leaf(stats, cid, nested_reference(structs, ("a",)), ("ls", "a"), "list<struct>")


def test_element_fields_are_marked():
    table = pa.table({"l": pa.array([[1]], pa.list_(pa.int8())),
                      "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int32())),
                      "st": pa.array([{"tags": ["x"]}])})
    stats = pe.stats_from_arrow(table)
    for column in ("min_values", "max_values", "null_count"):
        typ = stats.schema.field(column).type
        assert layout.is_element_field(typ.field("l")), column
        assert typ.field("l").metadata[layout.ELEMENT_KEY] == b"list"
        assert typ.field("m").metadata[layout.ELEMENT_KEY] == b"map"
        assert layout.is_element_field(typ.field("st").type.field("tags")), "nested list"
    mins = stats.schema.field("min_values").type
    assert mins.field("l").type == pa.int8()
    assert mins.field("m").type == pa.struct([("key", pa.string()), ("value", pa.int32())])


def test_list_of_lists_has_unknown_element_null_count():
    table = pa.table({"ll": pa.array([[[1, None], None], [[5]]], pa.list_(pa.list_(pa.int8())))})
    stats = pe.stats_from_arrow(table)
    assert stats.column("min_values").to_pylist() == [{"ll": 1}]
    assert stats.column("max_values").to_pylist() == [{"ll": 5}]
    assert stats.column("null_count").to_pylist() == [{"ll": None}], "a null inner list is hidden"


# ---------------------------------------------------------------------------- inputs and errors


def test_iterable_of_batches_and_given_ids():
    batches = [pa.record_batch({"x": [1, 2]}), pa.record_batch({"x": pa.array([], pa.int64())}),
               pa.record_batch({"x": [None]})]
    stats = pe.stats_from_arrow(iter(batches), container=["f1", "f2", "f3"])
    assert isinstance(stats, pe.StatsTable)
    assert stats.column("container").to_pylist() == ["f1", "f2", "f3"]
    assert stats.column("num_records").to_pylist() == [2, 0, 1]
    assert stats.column("null_count").to_pylist() == [{"x": 0}, {"x": 0}, {"x": 1}]
    default = pe.stats_from_arrow(batches)
    assert default.column("container").to_pylist() == ["0", "1", "2"]


def test_schema_drift_between_containers_is_unified():
    stats = pe.stats_from_arrow([pa.table({"x": pa.array([1], pa.int32())}),
                                 pa.table({"x": pa.array([2**40], pa.int64()), "y": ["s"]})])
    assert stats.schema.field("max_values").type.field("x").type == pa.int64()
    assert stats.column("null_count").to_pylist() == [{"x": 0, "y": 1}, {"x": 0, "y": 0}]


def test_dictionary_column_uses_value_type():
    stats = pe.stats_from_arrow(pa.table({"d": pa.array(["b", "a", None]).dictionary_encode()}))
    assert stats.column("min_values").to_pylist() == [{"d": "a"}]
    assert stats.schema.field("min_values").type.field("d").type == pa.string()


def test_chunked_input():
    table = pa.concat_tables([pa.table({"c": ["a"], "x": [5]}), pa.table({"c": ["a"], "x": [2]})])
    assert pe.stats_from_arrow(table, container="c").column("min_values").to_pylist() == [{"x": 2}]


@pytest.mark.parametrize("call, message", [
    (lambda: pe.stats_from_arrow(pa.table({"x": [1]}), container="nope"), "'nope'"),
    (lambda: pe.stats_from_arrow(pa.table({"c": ["a", None]}), container="c"), "null"),
    (lambda: pe.stats_from_arrow([pa.table({"x": [1]})], container=["a", "b"]), "2 ids for 1"),
    (lambda: pe.stats_from_arrow([pa.table({"x": [1]})] * 2, container=["a", "a"]), "unique"),
    (lambda: pe.stats_from_arrow([pa.table({"x": [1]}), pa.table({"x": ["s"]})]), "unified"),
    (lambda: pe.stats_from_arrow(5), "iterable"),
    (lambda: pe.stats_from_arrow([{"x": 1}]), "container #0"),
    (lambda: pe.stats_from_arrow([pa.table({"x": [1]})], container="x"), "one pyarrow Table"),
    (lambda: pe.stats_from_arrow(pa.table({"x": [1]}), ngram=["y"]), "'y'"),
    (lambda: pe.stats_from_arrow(pa.table({"x": [1]}), ngram="x"), "string column"),
    (lambda: pe.stats_from_arrow(pa.table({"x": ["a"]}), ngram="x", gram_size=0), "gram_size"),
])
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(pe.StatsError, match=message):
        call()


def test_ngram_index_is_built_per_container(monkeypatch):
    calls = []

    def build_index_column(values, group_offsets, *, gram_size=3, case_insensitive=False,
                           progress=False):
        calls.append((values.to_pylist(), group_offsets.tolist(), gram_size, case_insensitive))
        bounds = group_offsets.tolist()
        return pa.array(["|".join(values.to_pylist()[a:b]).encode()
                         for a, b in zip(bounds, bounds[1:])], pa.binary())

    fake = types.ModuleType("prune_engine.ngram.build")
    fake.build_index_column = build_index_column
    monkeypatch.setitem(sys.modules, "prune_engine.ngram.build", fake)
    table = pa.table({"c": ["a", "b", "a", "c"], "s": ["x1", "y1", "x2", "z"], "n": [1, 2, 3, 4]})
    stats = pe.stats_from_arrow(table, container="c", ngram=["s"], gram_size=2,
                                ngram_case_insensitive=True)
    assert calls == [(["x1", "x2", "y1", "z"], [0, 2, 3, 4], 2, True)], "values ordered by container"
    assert stats.column("ngram_index").to_pylist() == [{"s": b"x1|x2"}, {"s": b"y1"}, {"s": b"z"}]
    assert stats.schema.field("ngram_index").type == pa.struct([("s", pa.binary())])


def test_bounds_are_true_bounds_on_random_floats():
    rng = np.random.default_rng(0)
    values = rng.choice([NAN, -0.0, 0.0, -1e300, 1e-300, np.inf, -np.inf], size=500)
    groups = rng.integers(0, 20, size=500)
    table = pa.table({"c": groups, "f": values})
    stats = pe.stats_from_arrow(table, container="c")
    lo = dict(zip(stats.column("container").to_pylist(), stats.column("min_values").to_pylist()))
    hi = dict(zip(stats.column("container").to_pylist(), stats.column("max_values").to_pylist()))
    for g, v in zip(groups, values):
        if not math.isnan(v):
            assert lo[str(g)]["f"] <= v <= hi[str(g)]["f"]
            if v == 0 and math.copysign(1, v) < 0:
                assert math.copysign(1, lo[str(g)]["f"]) < 0, "a -0.0 value needs a -0.0 min"
