"""prune_engine.stats.unify: the type a drifting column takes; arrays and tables brought to it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.unify import concat_stats, conform, unify_types


@pytest.mark.parametrize("a, b, expected", [
    (pa.int32(), pa.int32(), pa.int32()),
    (pa.null(), pa.string(), pa.string()),
    (pa.int8(), pa.int64(), pa.int64()),
    (pa.uint16(), pa.uint8(), pa.uint16()),
    (pa.uint8(), pa.int16(), pa.int16()),
    (pa.int32(), pa.uint32(), pa.int64()),
    (pa.float32(), pa.float64(), pa.float64()),
    (pa.string(), pa.large_string(), pa.large_string()),
    (pa.large_binary(), pa.binary(), pa.large_binary()),
    (pa.decimal128(5, 2), pa.decimal128(10, 0), pa.decimal128(12, 2)),
    (pa.decimal128(38, 0), pa.decimal128(38, 10), pa.decimal256(48, 10)),
    (pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("us")),
    (pa.timestamp("ns", "UTC"), pa.timestamp("s", "UTC"), pa.timestamp("ns", "UTC")),
])
def test_widening_is_symmetric(a, b, expected):
    assert unify_types(a, b, "") == expected
    assert unify_types(b, a, "") == expected


@pytest.mark.parametrize("a, b", [
    (pa.uint64(), pa.int64()),
    (pa.int64(), pa.float64()),
    (pa.string(), pa.binary()),
    (pa.timestamp("ms"), pa.timestamp("ms", "UTC")),
    (pa.decimal256(76, 0), pa.decimal256(76, 1)),
])
def test_a_change_that_loses_values_is_an_error(a, b):
    with pytest.raises(StatsError, match="changes type across files") as info:
        unify_types(a, b, "s.x.")
    assert info.value.column == "s.x"


def test_structs_gain_fields_and_widen_them_keeping_metadata():
    meta = {b"k": b"v"}
    a = pa.struct([pa.field("x", pa.int32(), metadata=meta), ("y", pa.string())])
    b = pa.struct([("z", pa.float64()), ("x", pa.int64())])
    merged = unify_types(a, b, "")
    assert merged == pa.struct([("x", pa.int64()), ("y", pa.string()), ("z", pa.float64())])
    assert merged.field("x").metadata == meta


def test_a_list_in_some_files_only_is_an_error():
    element = pa.field("x", pa.int32(), metadata={layout.ELEMENT_KEY: b"list"})
    with pytest.raises(StatsError, match="column s.x: a list/map in some files, not in others"):
        unify_types(pa.struct([element]), pa.struct([("x", pa.int64())]), "s.")
    with pytest.raises(StatsError, match="column x: a list/map in some files, not in others"):
        unify_types(pa.struct([("x", pa.int32())]), pa.struct([element]), "")  # equal but for the mark


def test_conform_fills_missing_fields_with_unknown_and_keeps_nulls():
    array = pa.array([{"a": 1, "s": {"p": 2}}, None],
                     pa.struct([("a", pa.int32()), ("s", pa.struct([("p", pa.int8())]))]))
    inner = pa.struct([("p", pa.int64()), ("q", pa.string())])
    target = pa.struct([("a", pa.int64()), ("s", inner), ("b", pa.float64())])
    out = conform(array, target)
    assert out.type == target
    assert out.to_pylist() == [{"a": 1, "s": {"p": 2, "q": None}, "b": None}, None]
    same = pa.array([1], pa.int64())
    assert conform(same, pa.int64()) is same


def test_concat_stats_unifies_stat_structs_and_columns():
    a = pa.table({"container": ["a"],
                  layout.MIN_VALUES: pa.array([{"x": 1}], pa.struct([("x", pa.int32())]))})
    b = pa.table({"container": ["b"], "extra": [True],
                  layout.MIN_VALUES: pa.array([{"x": 2**40, "y": "s"}])})
    out = concat_stats([a, None, b])
    assert out.schema.field(layout.MIN_VALUES).type == pa.struct([("x", pa.int64()),
                                                                  ("y", pa.string())])
    assert out.column(layout.MIN_VALUES).to_pylist() == [{"x": 1, "y": None},
                                                          {"x": 2**40, "y": "s"}]
    assert out.column("extra").to_pylist() == [None, True], "a column a table lacks: unknown"
    assert concat_stats([]).num_rows == 0


def test_concat_stats_names_the_column_of_a_conflict():
    a = pa.table({layout.MAX_VALUES: pa.array([{"x": 1}])})
    b = pa.table({layout.MAX_VALUES: pa.array([{"x": "one"}])})
    with pytest.raises(StatsError, match="column x changes type"):
        concat_stats([a, b])
    with pytest.raises(StatsError, match="column other.x changes type"):
        concat_stats([a.rename_columns(["other"]), b.rename_columns(["other"])])


# ------------------------------------------------------------------------------ bounds


@pytest.mark.parametrize("a, b, expected", [
    (pa.timestamp("ns"), pa.timestamp("us"), pa.timestamp("us")),
    (pa.timestamp("ns", "UTC"), pa.timestamp("s", "UTC"), pa.timestamp("us", "UTC")),
    (pa.timestamp("ns"), pa.timestamp("ns"), pa.timestamp("ns")),
    (pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("us")),
])
def test_statistics_of_nanoseconds_and_another_unit_are_microseconds(a, b, expected):
    """A lake whose files give nanoseconds and another unit (INT96 read as microseconds, a
    far-future sentinel) holds the column's bounds in microseconds: every date fits."""
    assert unify_types(a, b, "", bounds=True) == expected
    assert unify_types(b, a, "", bounds=True) == expected


def test_bounds_round_outward_and_sets_stay_exact():
    from prune_engine.stats.unify import cast_bounds

    ns = pa.array([-1_001, -1_000, 0, 999, 1_000, 1_001, None], pa.timestamp("ns"))
    us = pa.timestamp("us")
    assert cast_bounds(ns, us, lower=True).cast(pa.int64()).to_pylist() == \
        [-2, -1, 0, 0, 1, 1, None]
    assert cast_bounds(ns, us, lower=False).cast(pa.int64()).to_pylist() == \
        [-1, -1, 0, 1, 1, 2, None]
    seconds = pa.array([2**62, 5], pa.timestamp("s"))
    assert cast_bounds(seconds, us, lower=True).cast(pa.int64()).to_pylist() == \
        [None, 5_000_000], "out of the range: unknown"
    a = pa.table({"container": ["a", "b"], "min_values": pa.array(
        [{"t": 1_500}, {"t": None}], pa.struct([("t", pa.timestamp("ns"))])),
        "max_values": pa.array([{"t": 2_500}, {"t": 7}],
                               pa.struct([("t", pa.timestamp("ns"))])),
        "value_set": pa.array([{"t": [1_500, 2_500]}, {"t": [2_000]}],
                              pa.struct([("t", pa.list_(pa.timestamp("ns")))]))})
    b = pa.table({"container": ["c"], "min_values": pa.array(
        [{"t": 3}], pa.struct([("t", pa.timestamp("us"))])),
        "max_values": pa.array([{"t": 4}], pa.struct([("t", pa.timestamp("us"))]))})
    merged = concat_stats([a, b])
    ticks = pa.struct([("t", pa.int64())])
    assert merged.column("min_values").cast(ticks).to_pylist() == [{"t": 1}, {"t": None},
                                                                     {"t": 3}]
    assert merged.column("max_values").cast(ticks).to_pylist() == [{"t": 3}, {"t": 1},
                                                                     {"t": 4}]
    sets = merged.column("value_set").cast(pa.struct([("t", pa.list_(pa.int64()))])).to_pylist()
    assert sets == [{"t": None}, {"t": [2]}, None], \
        "1500 ns is no microsecond: that set is unknown; 2000 ns is 2 us"
