"""Bad input: one clear error each, never a silent wrong mask."""

import warnings

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.stats import layout
from tests.statsbuild import make_stats

GOOD = make_stats(x=[(0, 4, 0), (6, 9, 1)], s=[("a", "b", 0), ("c", "d", 0)], num_records=[10, 10])


def test_malformed_sql_reports_the_position():
    with pytest.raises(pe.SqlParseError) as err:
        pe.prune(GOOD, "x > AND 5")
    assert (err.value.line, err.value.col) >= (1, 1)
    assert "line 1" in str(err.value)


def test_unknown_column_lists_the_known_ones():
    with pytest.raises(pe.UnknownColumnError) as err:
        pe.prune(GOOD, "y > 1")
    assert err.value.column == "y"
    assert err.value.known == ["x", "s"]
    assert "x, s" in str(err.value)


def test_unknown_column_inside_an_unknown_function_is_still_an_error():
    with pytest.raises(pe.UnknownColumnError):
        pe.prune(GOOD, "abs(nope) > 1")


def test_type_mismatch():
    with pytest.raises(pe.TypeMismatchError):
        pe.prune(GOOD, "s > 5")
    with pytest.raises(pe.TypeMismatchError):
        pe.prune(GOOD, "x = 'abc'")
    with pytest.raises(pe.TypeMismatchError):
        pe.prune(GOOD, "x < s")


def test_every_error_is_a_prune_engine_error():
    for bad in ("x >", "zz = 1", "s > 5"):
        with pytest.raises(pe.PruneEngineError):
            pe.prune(GOOD, bad)


def _with(table, name, array):
    return table.set_column(table.schema.get_field_index(name), name, array)


@pytest.mark.parametrize("drop", [layout.NUM_RECORDS, layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT])
def test_missing_stats_column(drop):
    with pytest.raises(pe.StatsError) as err:
        pe.prune(GOOD.drop_columns([drop]), "x > 1")
    assert err.value.column == drop


def test_mistyped_stats_columns():
    with pytest.raises(pe.StatsError, match="integer"):
        pe.prune(_with(GOOD, layout.NUM_RECORDS, pa.array(["1", "2"])), "x > 1")
    with pytest.raises(pe.StatsError, match="struct"):
        pe.prune(_with(GOOD, layout.MIN_VALUES, pa.array([1, 2])), "x > 1")
    bad_max = pa.array([{"x": 1.0, "s": "b"}, {"x": 9.0, "s": "d"}])
    with pytest.raises(pe.StatsError, match="max_values.x"):
        pe.prune(_with(GOOD, layout.MAX_VALUES, bad_max), "x > 1")


@pytest.mark.parametrize("defect, column", [
    ({"num_records": [-1, 10]}, "num_records"),
    ({"null_count": [-2, 1]}, "null_count.x"),
    ({"null_count": [11, 1]}, "null_count.x"),
    ({"min_max": (5, 4)}, "min_values.x"),
])
def test_impossible_values_raise_or_keep(defect, column):
    nr = defect.get("num_records", [10, 10])
    nc = defect.get("null_count", [0, 1])
    lo, hi = defect.get("min_max", (0, 4))
    t = make_stats(x=[(lo, hi, nc[0]), (6, 9, nc[1])], num_records=nr)
    with pytest.raises(pe.StatsError) as err:
        pe.prune(t, "x > 100")
    assert err.value.column == column
    assert err.value.containers == ["c0"]
    with pytest.warns(UserWarning, match="1 container"):
        mask = pe.prune(t, "x > 100", on_invalid="keep")
    assert mask.to_pylist() == [True, False], "the bad container is kept, the good one pruned"


@pytest.mark.parametrize("nulls, nans, typ, why", [
    (0, 11, pa.float64(), "more NaNs than records"),
    (6, 6, pa.float64(), "more NULLs and NaNs together than records"),
    (0, -1, pa.float64(), "a negative NaN count"),
    (0, 2, pa.int64(), "NaNs in a column that cannot hold NaN"),
])
def test_impossible_nan_counts_raise_or_keep(nulls, nans, typ, why):
    struct = pa.struct([("f", typ)])
    t = pa.table({"container": ["a", "b"], "num_records": [10, 10],
                  "min_values": pa.array([{"f": 1}, {"f": 1}], struct),
                  "max_values": pa.array([{"f": 5}, {"f": 5}], struct),
                  "null_count": [{"f": nulls}, {"f": 0}], "nan_count": [{"f": nans}, {"f": 0}]})
    with pytest.raises(pe.StatsError) as err:
        pe.prune(t, "f > 100")
    assert (err.value.column, err.value.containers) == ("nan_count.f", ["a"]), why
    with pytest.warns(UserWarning, match="1 container"):
        assert pe.prune(t, "f > 100", on_invalid="keep").to_pylist() == [True, False], why


def test_possible_nan_counts_are_no_error():
    t = pa.table({"container": ["a"], "num_records": [10], "min_values": [{"f": 1.0}], "max_values": [{"f": 5.0}],
                  "null_count": [{"f": 4}], "nan_count": [{"f": 6}]})
    assert pe.prune(t, "f > 100").to_pylist() == [True], "4 NULLs and 6 NaNs fill 10 rows; NaN > 100"
    assert pe.prune(t, "f < 100").to_pylist() == [False], "no regular value is left"


def test_on_invalid_keep_then_raise_on_the_same_stats_table():
    t = pe.StatsTable(make_stats(x=[(5, 4, 0)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert pe.prune(t, "x > 100", on_invalid="keep").to_pylist() == [True]
    with pytest.raises(pe.StatsError):
        pe.prune(t, "x > 100")


def test_not_a_table():
    with pytest.raises(TypeError):
        pe.prune({"x": 1}, "x > 1")
