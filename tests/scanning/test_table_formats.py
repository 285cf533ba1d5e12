"""``pe.scan`` given statistics of a Delta or Iceberg snapshot reads the table, not the folder:
only the snapshot's live files (a file a delete, an update, a compaction or an overwrite
removed stays on disk until VACUUM), Delta's partition values from its log, Iceberg position
deletes applied, and deletes it cannot apply refused with a one-line ``ScanError`` naming the
file. The oracle is each format's own reader (``DeltaTable.to_pyarrow_table``, PyIceberg's
``table.scan().to_arrow()``), filtered by DuckDB."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.scanning.table_formats import (commit_deletes, delta_add, delta_history,  # noqa: F401
                                          delta_table,
                                          iceberg_events, iceberg_rewritten, rows_where,
                                          sorted_rows, write_delta_log)

WHERES = ["x < 60", "x >= 100 AND x < 110", "s = 'updated'", "s IS NULL OR x > 400",
          "p = 'p1' AND x > 100", "x IN (0, 49, 50, 79, 500)", None]


def _one_line(error: Exception, path: str) -> None:
    text = str(error)
    assert "\n" not in text and len(text) < 400 and path in text, text


# ------------------------------------------------------------------------------ Delta


def test_a_scan_after_a_delta_delete_returns_the_tables_rows(tmp_path):
    """The issue's case: the delete rewrote the one file; the old one is still on disk."""
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(100), pa.int64())}))
    DeltaTable(root).delete("x < 50")
    assert len([n for n in os.listdir(root) if n.endswith(".parquet")]) == 2
    table, summary = pe.scan(root, where="x < 60", stats=pe.stats_from_delta(root),
                             return_summary=True)
    assert sorted(table.column("x").to_pylist()) == list(range(50, 60)), \
        "the deleted rows' file is not the table's: 10 rows, not 70"
    assert summary.files_total == 1
    assert pe.scan(root, stats=pe.stats_from_delta(root)).num_rows == 50


@pytest.mark.parametrize("where", WHERES)
def test_delta_scans_equal_deltalakes_read_after_deletes_updates_and_compaction(delta_table,
                                                                                where):
    from deltalake import DeltaTable

    expected = rows_where(DeltaTable(delta_table).to_pyarrow_table(), where)
    _assert_scans(delta_table, where, pe.stats_from_delta(delta_table), expected)


def _assert_scans(location: str, where: str, stats, expected: list[tuple]) -> None:
    """``scan``, ``scan_batches`` (a few rows a batch), top-k by x and a limit all give the
    rows ``expected`` (those of the table format's own reader)."""
    assert sorted_rows(pe.scan(location, where=where, stats=stats)) == expected
    batches = list(pe.scan_batches(location, where=where, stats=stats, batch_size=4))
    assert sorted(r for b in batches for r in sorted_rows(pa.Table.from_batches([b]))) == \
        expected
    top = pe.scan(location, where=where, stats=stats, order_by="x DESC", limit=3)
    assert top.column("x").to_pylist() == sorted((r[0] for r in expected), reverse=True)[:3]
    for limit in (3, len(expected) + 5):
        assert pe.scan(location, where=where, stats=stats, limit=limit).num_rows == \
            min(limit, len(expected))


def test_delta_partition_values_come_from_the_log_in_the_tables_types(tmp_path):
    """Partition values are the log's, typed by the table's schema (an int partition stays
    an int, a date a date), not guessed from folder names."""
    import datetime as dt

    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array([1, 2, 3], pa.int64()),
                                    "k": pa.array([7, 7, None], pa.int32()),
                                    "d": pa.array([dt.date(2024, 1, 2)] * 3)}),
                    partition_by=["k", "d"])
    stats = pe.stats_from_delta(root)
    table = pe.scan(root, where="k = 7", stats=stats)
    expected = DeltaTable(root).to_pyarrow_table()
    assert table.schema.field("k").type == expected.schema.field("k").type == pa.int32()
    assert table.schema.field("d").type == pa.date32()
    assert sorted(table.column("x").to_pylist()) == [1, 2]
    assert pe.scan(root, where="k IS NULL", stats=stats).column("x").to_pylist() == [3]


def test_delta_time_travel_reads_that_versions_files(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(10), pa.int64())}))
    DeltaTable(root).delete("x < 5")
    old = pe.stats_from_delta(root, version=0)
    assert sorted(pe.scan(root, where="x < 7", stats=old).column("x").to_pylist()) == \
        list(range(7))
    assert sorted(pe.scan(root, where="x < 7", stats=pe.stats_from_delta(root))
                  .column("x").to_pylist()) == [5, 6]


def test_a_vacuumed_file_of_an_old_version_is_an_error_naming_it(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(10), pa.int64())}))
    DeltaTable(root).delete("x < 5")
    old = pe.stats_from_delta(root, version=0)
    DeltaTable(root).vacuum(retention_hours=0, enforce_retention_duration=False,
                            dry_run=False)
    with pytest.raises(pe.ScanError, match="is gone") as caught:
        pe.scan(root, where="x < 7", stats=old)
    _one_line(caught.value, old.column("path")[0].as_py())


def test_a_folder_inside_the_table_scans_the_live_files_under_it(delta_table):
    from deltalake import DeltaTable

    stats = pe.stats_from_delta(delta_table)
    if not os.path.isdir(os.path.join(delta_table, "p=p1")):
        with pytest.raises(pe.ScanError, match="none of the .* data files") as caught:
            pe.scan(os.path.join(delta_table, "_delta_log"), stats=stats)
        _one_line(caught.value, "_delta_log")
        return
    got = pe.scan(os.path.join(delta_table, "p=p1"), where="x > 100", stats=stats)
    assert sorted_rows(got) == rows_where(DeltaTable(delta_table).to_pyarrow_table(),
                                          "p = 'p1' AND x > 100")


def test_an_emptied_delta_table_scans_to_no_rows(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(10), pa.int64()), "s": ["a"] * 10}))
    DeltaTable(root).delete("x >= 0")
    table = pe.scan(root, where="x < 5", stats=pe.stats_from_delta(root))
    assert table.num_rows == 0 and table.column_names == ["x", "s"]


def test_files_with_deletion_vectors_are_refused_unless_pruned(tmp_path):
    """deltalake cannot read deletion vectors (nor can this scan): a file with one is read
    only if the predicate prunes it, else the scan says which file and why."""
    root = str(tmp_path / "t")
    write_delta_log(root, [delta_add(root, "a.parquet", list(range(10)), vector=False),
                           delta_add(root, "b.parquet", list(range(20, 30)), vector=True)])
    stats = pe.stats_from_delta(root)
    assert sorted(pe.scan(root, where="x < 5", stats=stats).column("x").to_pylist()) == \
        list(range(5)), "b.parquet is pruned: nothing of it is read"
    with pytest.raises(pe.ScanError, match="deletion vector") as caught:
        pe.scan(root, where="x > 5", stats=stats)
    _one_line(caught.value, "b.parquet")
    assert caught.value.path.endswith("b.parquet")


def test_statistics_without_the_deletion_vector_list_ask_the_tables_protocol(tmp_path):
    """Statistics made before the list was recorded: a table whose protocol allows deletion
    vectors is refused whole; one whose protocol does not is read."""
    root = str(tmp_path / "dv")
    write_delta_log(root, [delta_add(root, "a.parquet", list(range(10)), vector=False)])
    stats = pe.stats_from_delta(root)
    stats.metadata["delta"].pop("deletion_vectors", None)
    with pytest.raises(pe.ScanError, match="collect them again") as caught:
        pe.scan(root, where="x > 5", stats=stats)
    _one_line(caught.value, "a.parquet")
    plain = str(tmp_path / "plain")
    write_delta_log(plain, [delta_add(plain, "a.parquet", list(range(10)), vector=False)],
                    reader_version=1)
    stats = pe.stats_from_delta(plain)
    stats.metadata["delta"].pop("deletion_vectors", None)
    assert pe.scan(plain, where="x > 5", stats=stats).num_rows == 4


# ------------------------------------------------------------------------------ Iceberg


def _location(table) -> str:
    return table.location().removeprefix("file://")


@pytest.mark.parametrize("where", WHERES)
def test_iceberg_scans_equal_pyicebergs_read_after_deletes_and_overwrites(tmp_path, where):
    table = iceberg_rewritten(str(tmp_path))
    stats = pe.stats_from_iceberg(table)
    expected = rows_where(table.scan().to_arrow(), where)
    got = pe.scan(_location(table), where=where, stats=stats)
    assert sorted_rows(got) == expected
    assert sorted_rows(pe.scan(os.path.join(_location(table), "data"), where=where,
                               stats=stats)) == expected


def _data_files(table) -> list[str]:
    return [t.file.file_path for t in table.scan().plan_files()]


@pytest.fixture
def deleted(tmp_path):
    """An Iceberg table of three files of four row groups each, and position deletes
    (committed as a writer commits them) of rows in several row groups of two files, the
    largest values among them."""
    catalog, table = iceberg_events(str(tmp_path), row_group_size=10)
    files = _data_files(table)
    assert all(pq.ParquetFile(f.removeprefix("file://")).num_row_groups == 4 for f in files)
    by_max = sorted(files, key=lambda f: max(pq.read_table(f.removeprefix("file://"))
                                             .column("x").to_pylist()))
    rows = pa.table({"file_path": [by_max[2]] * 4 + [by_max[0]] * 3,
                     "pos": pa.array([39, 38, 0, 15, 9, 10, 11], pa.int64())})
    commit_deletes(table, rows, str(tmp_path / "deletes-1.parquet"))
    return catalog.load_table("db.events")


@pytest.mark.parametrize("where", WHERES + ["x >= 0"])
def test_iceberg_position_deletes_are_applied(deleted, where):
    stats = pe.stats_from_iceberg(deleted)
    assert [d["content"] for d in stats.metadata["iceberg"]["deletes"]] == ["position"]
    arrow = deleted.scan().to_arrow()
    assert arrow.num_rows == 120 - 7
    expected = rows_where(arrow, where)
    # batches of a row group at a time: positions count from the file's first row, not the
    # group's; the file of the largest values is "all" for x >= 0, but its deleted rows 38 and
    # 39 (x = 118, 119) are not there: top-k must not count them
    _assert_scans(_location(deleted), where, stats, expected)


def test_equality_deletes_are_refused_unless_pruned(tmp_path):
    catalog, table = iceberg_events(str(tmp_path))
    commit_deletes(table, pa.table({"x": pa.array([5], pa.int64())}),
                   str(tmp_path / "eq.parquet"), equality_ids=[1])
    table = catalog.load_table("db.events")
    stats = pe.stats_from_iceberg(table)
    with pytest.raises(pe.ScanError, match="equality delete") as caught:
        pe.scan(_location(table), where="x < 3", stats=stats)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400
    assert caught.value.path is not None and caught.value.path in str(caught.value)


def test_statistics_that_count_delete_files_without_listing_them_are_refused(tmp_path):
    catalog, table = iceberg_events(str(tmp_path))
    stats = pe.stats_from_iceberg(table)
    stats.metadata["iceberg"].pop("deletes", None)
    assert pe.scan(_location(table), where="x < 3", stats=stats).num_rows == 3  # 0 deletes
    stats.metadata["iceberg"]["delete_files"] = 2
    with pytest.raises(pe.ScanError, match="do not list the snapshot's delete files"):
        pe.scan(_location(table), where="x < 3", stats=stats)


def test_a_position_delete_file_that_cannot_be_read_is_a_scan_error(deleted, tmp_path):
    stats = pe.stats_from_iceberg(deleted)
    path = stats.metadata["iceberg"]["deletes"][0]["path"]
    with open(path, "r+b") as f:
        f.truncate(20)
    with pytest.raises(pe.ScanError, match="position delete file") as caught:
        pe.scan(_location(deleted), where="x >= 0", stats=stats)
    _one_line(caught.value, path)
    pq.write_table(pa.table({"file_path": ["x"], "pos": pa.array([-1], pa.int64())}), path)
    with pytest.raises(pe.ScanError, match="negative position"):
        pe.scan(_location(deleted), where="x >= 0", stats=stats)


def test_deletes_of_files_the_predicate_prunes_are_not_read(deleted):
    """A file pruned needs nothing: its deletes are not read (a corrupt delete file of it
    does not stop the scan)."""
    stats = pe.stats_from_iceberg(deleted)
    entry = dict(stats.metadata["iceberg"]["deletes"][0])
    files = sorted(stats.column("path").to_pylist(),
                   key=lambda f: max(pq.read_table(f).column("x").to_pylist()))
    entry.update(path=entry["path"] + ".gone", referenced_data_file=files[2])
    stats.metadata["iceberg"]["deletes"] = [entry]
    assert sorted(pe.scan(_location(deleted), where="x < 45", stats=stats)
                  .column("x").to_pylist()) == list(range(45))
    with pytest.raises(pe.ScanError, match=".gone"):
        pe.scan(_location(deleted), where="x > 100", stats=stats)


def test_positions_are_dropped_across_row_groups_in_read_order():
    """The live rows of row groups read in any order, the file's positions counted from its
    first row."""
    from prune_engine.scanning.api import _live_rows

    import io

    buf = io.BytesIO()
    pq.write_table(pa.table({"x": np.arange(25)}), buf, row_group_size=10)
    meta = pq.ParquetFile(buf).metadata
    data = pq.ParquetFile(buf).read_row_groups([2, 0])
    live = _live_rows(data, meta, [2, 0], np.array([0, 9, 10, 24]), "f")
    assert live.column("x").to_pylist() == list(range(20, 24)) + list(range(1, 9))
