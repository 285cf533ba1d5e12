"""``pes.read`` and ``pes.count`` given statistics of a Delta or Iceberg snapshot: Spark reads
the snapshot's live files only (the files a delete, an update, a compaction or an overwrite
removed stay in the folder until VACUUM), and a read that needs a file with deletes Spark's
Parquet reader cannot apply is refused with a one-line ``ScanError`` naming it. Against the
formats' own readers (deltalake, PyIceberg) filtered by DuckDB, on classic and Connect."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from tests.scanning.table_formats import (commit_deletes, delta_add, delta_history,  # noqa: F401
                                          delta_table,
                                          iceberg_events, iceberg_rewritten, rows_where,
                                          write_delta_log)
from tests.spark.helpers import scanned_files

pytestmark = pytest.mark.spark

WHERES = ["x < 60", "s = 'updated' OR x > 400", "p = 'p1' AND x >= 100", None]


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


def _rows(df) -> list[tuple]:
    return sorted((r["x"], r["s"], r["p"]) for r in df.collect())


@pytest.mark.parametrize("where", WHERES)
def test_read_and_count_of_a_delta_snapshot_equal_deltalakes_rows(spark, delta_table, where):
    from deltalake import DeltaTable

    stats = pe.stats_from_delta(delta_table)
    expected = rows_where(DeltaTable(delta_table).to_pyarrow_table(), where)
    df, summary = pes.read(spark, delta_table, where, stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    assert sorted((r["x"], r["s"], r["p"]) for r in rows) == expected
    assert summary.not_in_snapshot == summary.files_total - stats.num_rows > 0, \
        "the removed files are in the folder, not in the read"
    assert scanned <= stats.num_rows
    assert pes.count(spark, delta_table, where, stats=stats) == len(expected)


def test_a_vacuumed_live_file_is_an_error_not_a_loss(spark, tmp_path):
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(10), pa.int64()), "s": ["a"] * 10,
                                    "p": ["p0"] * 10}))
    write_deltalake(root, pa.table({"x": pa.array(range(10, 20), pa.int64()), "s": ["b"] * 10,
                                    "p": ["p0"] * 10}), mode="append")
    old = pe.stats_from_delta(root)
    DeltaTable(root).delete("x < 5")
    DeltaTable(root).vacuum(retention_hours=0, enforce_retention_duration=False,
                            dry_run=False)
    with pytest.warns(UserWarning, match="no longer exist"):
        kept = _rows(pes.read(spark, root, "x > 15", stats=old))
    assert kept == [(x, "b", "p0") for x in range(16, 20)], "the vacuumed file is not needed"
    with pytest.raises(pe.ScanError, match="gone") as caught:
        with pytest.warns(UserWarning, match="no longer exist"):
            pes.read(spark, root, "x < 3", stats=old)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_deletion_vectors_are_refused_unless_pruned(spark, tmp_path):
    root = str(tmp_path / "t")
    write_delta_log(root, [delta_add(root, "a.parquet", list(range(10)), vector=False),
                           delta_add(root, "b.parquet", list(range(20, 30)), vector=True)])
    stats = pe.stats_from_delta(root)
    assert sorted(r["x"] for r in pes.read(spark, root, "x < 5", stats=stats).collect()) == \
        list(range(5))
    assert pes.count(spark, root, "x < 5", stats=stats) == 5
    for call in (pes.read, pes.count):
        with pytest.raises(pe.ScanError, match="deletion vector") as caught:
            call(spark, root, "x > 5", stats=stats)
        text = str(caught.value)
        assert "b.parquet" in text and "\n" not in text and len(text) < 400
    with pytest.raises(pe.ScanError, match="deletion vector"):  # every row "all": counted
        pes.count(spark, root, "x >= 20", stats=stats)  # from num_records, which overcounts


@pytest.mark.parametrize("where", WHERES)
def test_read_and_count_of_an_iceberg_snapshot_equal_pyicebergs_rows(spark, tmp_path, where):
    table = iceberg_rewritten(str(tmp_path))
    stats = pe.stats_from_iceberg(table)
    data = os.path.join(table.location().removeprefix("file://"), "data")
    expected = rows_where(table.scan().to_arrow(), where)
    assert _rows(pes.read(spark, data, where, stats=stats)) == expected
    assert pes.count(spark, data, where, stats=stats) == len(expected)


def test_iceberg_deletes_are_refused_where_they_touch_a_file_read(spark, tmp_path):
    catalog, table = iceberg_events(str(tmp_path))
    files = [t.file.file_path for t in table.scan().plan_files()]
    low = min(files, key=lambda f: pq.read_table(f.removeprefix("file://"))
              .column("x").to_pylist()[0])
    commit_deletes(table, pa.table({"file_path": [low], "pos": pa.array([3], pa.int64())}),
                   str(tmp_path / "deletes.parquet"))
    table = catalog.load_table("db.events")
    stats = pe.stats_from_iceberg(table)
    data = os.path.join(table.location().removeprefix("file://"), "data")
    expected = rows_where(table.scan().to_arrow(), "x >= 50")
    assert _rows(pes.read(spark, data, "x >= 50", stats=stats)) == expected
    for call in (pes.read, pes.count):
        with pytest.raises(pe.ScanError, match="position deletes") as caught:
            call(spark, data, "x < 10", stats=stats)
        assert low.removeprefix("file://") in str(caught.value)
    commit_deletes(table, pa.table({"x": pa.array([100], pa.int64())}),
                   str(tmp_path / "eq.parquet"), equality_ids=[1])
    stats = pe.stats_from_iceberg(catalog.load_table("db.events"))
    with pytest.raises(pe.ScanError, match="equality"):
        pes.read(spark, data, "x >= 50", stats=stats)


def test_a_categorical_column_reads_as_plain_spark_reads_it(spark, tmp_path):
    """pandas writes a Categorical as a dictionary column; another file of the lake holds
    the same column as plain strings."""
    import pandas as pd

    root = tmp_path / "lake"
    root.mkdir()
    colors = ["green", "red", None, "blue", "green", "grün"]
    pd.DataFrame({"cat": pd.Categorical(colors), "x": range(6)}).to_parquet(
        root / "a.parquet")
    pq.write_table(pa.table({"cat": ["red", "green", None], "x": [10, 11, 12]}),
                   str(root / "b.parquet"))
    assert pa.types.is_dictionary(pq.read_schema(root / "a.parquet").field("cat").type)
    stats = pe.collect_stats(str(root), progress=False)
    for where in ["cat = 'green'", "cat IN ('red', 'blue') OR cat IS NULL", "cat > 'gr'",
                  "cat LIKE 'g%'", "NOT cat = 'green'"]:
        plain = sorted(r["x"] for r in spark.read.parquet(str(root)).where(where).collect())
        assert sorted(r["x"] for r in pes.read(spark, str(root), where, stats=stats)
                      .collect()) == plain, where
        assert pes.count(spark, str(root), where, stats=stats) == len(plain), where
