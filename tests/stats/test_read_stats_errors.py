"""``pe.read_stats`` names the file and what is wrong with it, before reading any data."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.errors import StatsFileNotFoundError

STATS = pa.table({"container": ["a"], "num_records": [3], "min_values": [{"x": 1}],
                  "max_values": [{"x": 2}], "null_count": [{"x": 0}]})


def test_a_missing_file_is_a_file_not_found_error_naming_it(tmp_path):
    path = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError) as err:
        pe.read_stats(path)
    assert isinstance(err.value, StatsFileNotFoundError)
    assert isinstance(err.value, pe.StatsError), "one error family: also a StatsError"
    assert str(err.value) == f"{path}: no such statistics file", "says what and where"
    assert err.value.path == err.value.filename == str(path)
    assert err.value.containers == [str(path)]


def test_a_relative_missing_path_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StatsFileNotFoundError, match=r"^nope\.parquet: no such statistics file$"):
        pe.read_stats("nope.parquet")


def test_a_directory_is_not_read_as_a_dataset(tmp_path):
    pq.write_table(pa.table({"x": list(range(10))}), tmp_path / "data.parquet")
    with pytest.raises(pe.StatsError, match="a directory, not a statistics file"):
        pe.read_stats(tmp_path)


@pytest.mark.parametrize("content, message", [
    (b"", "not a readable statistics file"),
    (b"PAR1 garbage", "not a readable statistics file"),
])
def test_a_file_that_is_not_parquet(tmp_path, content, message):
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    with pytest.raises(pe.StatsError, match=message) as err:
        pe.read_stats(path)
    assert str(err.value).startswith(f"{path}: ")
    assert not isinstance(err.value, FileNotFoundError)


def test_parquet_data_is_refused_from_its_footer(tmp_path, monkeypatch):
    """A data file is recognised from its schema: its rows are never read."""
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"x": list(range(10))}), path)

    def no_read(*args, **kwargs):
        raise AssertionError("read_stats read the rows of a file that is no statistics file")

    monkeypatch.setattr(pq, "read_table", no_read)
    with pytest.raises(pe.StatsError, match="not a prune_engine statistics file"):
        pe.read_stats(path)


def test_saved_statistics_round_trip(tmp_path):
    path = tmp_path / "stats.parquet"
    pe.StatsTable(STATS, {"k": [1, 2]}).save(path)
    back = pe.read_stats(str(path))
    assert back.table.equals(STATS) and back.metadata == {"k": [1, 2]}
    assert back.table.schema.metadata is None, "the format keys are not left in the schema"
