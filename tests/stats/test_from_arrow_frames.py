"""``stats_from_arrow`` takes pandas and polars frames as it takes Arrow tables, and says
clearly what it takes when given something else."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

import prune_engine as pe

DATA = {"part": ["a", "b", "a", "b"], "x": [3, 8, 1, 9], "s": ["p", "q", "r", "s"]}


def expected(**kwargs) -> pe.StatsTable:
    return pe.stats_from_arrow(pa.table(DATA), **kwargs)


def test_pandas_frame_as_a_table():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(DATA, index=[10, 11, 12, 13])
    got = pe.stats_from_arrow(frame, container="part")
    assert got.table.equals(expected(container="part").table), \
        "the same statistics as from the Arrow table; the index is not a column"
    assert pe.prune(got, "x > 8").to_pylist() == [False, True], "max 3 in a, 9 in b"
    assert pe.stats_from_arrow(frame).num_rows == 1, "no container column: one container"


def test_pandas_frames_one_per_container():
    pd = pytest.importorskip("pandas")
    frames = [pd.DataFrame({"x": [1.5, float("nan")]}), pd.DataFrame({"x": [7.0]})]
    got = pe.stats_from_arrow(frames, container=["first", "second"])
    assert got.column("container").to_pylist() == ["first", "second"]
    assert got.column("max_values").to_pylist() == [{"x": 1.5}, {"x": 7.0}]


def test_polars_frame_as_a_table():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(DATA)
    got = pe.stats_from_arrow(frame, container="part", ngram="s")
    assert got.column("min_values").to_pylist() == \
        expected(container="part").column("min_values").to_pylist()
    assert pe.prune(got, "x < 2 AND s LIKE 'r%'").to_pylist() == [True, False]
    assert pe.stats_from_arrow([frame, frame]).num_rows == 2


def test_polars_lazy_frame_says_collect():
    pl = pytest.importorskip("polars")
    with pytest.raises(pe.StatsError, match=r"LazyFrame has no data yet: pass frame.collect\(\)"):
        pe.stats_from_arrow(pl.DataFrame(DATA).lazy())


@pytest.mark.parametrize("data, named", [("abc", "str"), (5, "int"), ({"x": [1]}, "dict")])
def test_other_data_is_a_clear_error(data, named):
    with pytest.raises(pe.StatsError) as err:
        pe.stats_from_arrow(data)
    assert str(err.value) == ("data must be a pyarrow Table or RecordBatch, or a pandas or "
                              "polars DataFrame, or an iterable of them (one per container), "
                              f"not {named}")


def test_a_bad_item_is_named_by_position():
    with pytest.raises(pe.StatsError, match=r"^container #1 must be a pyarrow Table .* not int$"):
        pe.stats_from_arrow([pa.table({"x": [1]}), 2])


def test_container_column_needs_one_table():
    with pytest.raises(pe.StatsError, match=r"container= names a column, so data must be one "
                                            r"pyarrow Table or RecordBatch \(or one pandas or "
                                            r"polars DataFrame\), not list"):
        pe.stats_from_arrow([pa.table(DATA)], container="part")


def test_polars_is_not_imported_for_arrow_data():
    """Only a frame of a library already loaded can be one of its frames. (pyarrow itself
    loads pandas when it converts Python values, so only polars can be watched.)"""
    code = ("import sys, pyarrow as pa, prune_engine as pe; "
            "pe.stats_from_arrow(pa.table({'x': [1]})); "
            "pe.stats_from_arrow([pa.table({'x': [1]})]); "
            "print('polars' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
