"""``pes.read`` and ``pes.count`` given statistics of a column-mapped Delta table: Spark's
Parquet reader sees physical names (``col-<uuid>``), no partition value (the files sit in
folders of random prefixes) and the types the files were written in; the DataFrame has the
table's columns (logical names, its types, partition values from the log) and the rows
deltalake reads, filtered by Spark with the ``where`` on the table's names. Classic and
Connect."""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from tests.scanning.column_mapping import (WIDENED_WHERES, deltalake_rows, mapped_history,
                                           row_key, widened_spark_table)
from prune_engine.spark._session import functions
from tests.scanning.lakes import duck_table

pytestmark = pytest.mark.spark

WHERES = ["x2 < 8", "s.alpha > 15 OR y IS NOT NULL", "part = 'p1' AND x2 > 10",
          "y = 'updated'", "f = 3.4000000953674316", "n > 2147483647", None]
COLUMNS = ["x2", "s", "f", "n", "l", "part", "y"]


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


@pytest.fixture(scope="module", params=[("name", True), ("id", False)],
                ids=["name-partitioned", "id-flat"])
def mapped(request, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("mapped") / "t")
    mapped_history(root, *request.param)
    return root, deltalake_rows(root)


def _spark_rows(df, columns) -> list[str]:
    return sorted(row_key({c: r[c] for c in columns})
                  for r in (row.asDict(recursive=True) for row in df.collect()))


def _expected(rows: pa.Table, where, columns) -> list[str]:
    return sorted(row_key({c: r[c] for c in columns})
                  for r in duck_table(rows, where, None, None).to_pylist())


@pytest.mark.parametrize("where", WHERES)
def test_read_and_count_of_a_mapped_table_equal_deltalakes_rows(spark, mapped, where):
    root, rows = mapped
    stats = pe.stats_from_delta(root)
    df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
    assert df.columns == [f.name for f in rows.schema], \
        "the table's logical names, in its order (the dropped column 'gone' is not there)"
    assert _spark_rows(df, COLUMNS) == _expected(rows, where, COLUMNS)
    assert summary.not_in_snapshot > 0, "the files the delete and update removed"
    assert pes.count(spark, root, where, stats=stats) == \
        duck_table(rows, where, None, None).num_rows


def test_the_where_prunes_on_the_tables_names(spark, mapped):
    """The where names logical columns (a renamed one, a nested one, the partition column):
    Spark reads it against the table's schema, so the statistics prune on it."""
    root, rows = mapped
    stats = pe.stats_from_delta(root)
    for where in ["x2 > 1000", "s.alpha > 1000", "part = 'p9'", "n < -5"]:
        df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
        assert summary.files_read == 0, f"{where}: no live file can hold a row"
        assert df.count() == 0
        assert pes.count(spark, root, where, stats=stats, return_summary=True)[1] \
            .files_read == 0
    df, summary = pes.read(spark, root, "x2 >= 28", stats=stats, return_summary=True)
    assert summary.files_read < stats.num_rows or stats.num_rows == 1
    assert _spark_rows(df, COLUMNS) == _expected(rows, "x2 >= 28", COLUMNS)
    top = pes.read(spark, root, "f > 3", stats=stats, order_by="n DESC", limit=3)
    assert [r["n"] for r in top.collect()] == sorted(
        (r["n"] for r in rows.to_pylist() if r["f"] > 3), reverse=True)[:3]


@pytest.mark.parametrize("where", WIDENED_WHERES)
def test_a_widened_spark_table_reads_in_the_tables_types(spark, tmp_path_factory, where):
    """Spark's reader reads a float file of a double column as the doubles the floats are
    (3.4f is 3.4000000953674316), an int file of a long column as longs, a date file of a
    timestamp_ntz column as midnights."""
    root, rows = widened_spark_table(str(tmp_path_factory.mktemp("widened") / "t"))
    stats = pe.stats_from_delta(root)
    df = pes.read(spark, root, where, stats=stats)
    assert df.columns == rows.column_names
    assert _spark_rows(df, rows.column_names) == _expected(rows, where, rows.column_names)
    assert pes.count(spark, root, where, stats=stats) == \
        duck_table(rows, where, None, None).num_rows


def test_typed_partition_values_come_from_the_log(spark, tmp_path):
    """Partition columns of a mapped table are in no file and no folder name: each row gets
    its file's value from the log, in the column's type (an int, a date, a timestamp, a
    decimal, a null partition)."""
    import datetime as dt
    from decimal import Decimal

    from deltalake import write_deltalake

    root = str(tmp_path / "t")
    data = pa.table({
        "x": pa.array(range(6), pa.int64()),
        "k": pa.array([7, 7, None, 8, 8, 8], pa.int32()),
        "d": pa.array([dt.date(2024, 1, 2)] * 3 + [dt.date(1999, 12, 31)] * 3),
        "ts": pa.array([dt.datetime(2024, 3, 1, 12, 30, 15, 250000)] * 2 +
                       [dt.datetime(1970, 1, 1)] * 4, pa.timestamp("us", "UTC")),
        "dec": pa.array([Decimal("1.50"), Decimal("2.25")] * 3, pa.decimal128(5, 2))})
    write_deltalake(root, data, partition_by=["k", "d", "ts", "dec"],
                    configuration={"delta.columnMapping.mode": "name"})
    rows = deltalake_rows(root)
    rows = rows.set_column(rows.column_names.index("ts"), "ts_us",
                           rows.column("ts").cast(pa.int64()))
    stats = pe.stats_from_delta(root)
    columns = ["x", "k", "d", "ts_us", "dec"]
    F = functions(spark)
    instant = "ts = TIMESTAMP '2024-03-01 12:30:15.25 UTC'"
    for where in ["k = 7", "k IS NULL", "d < DATE '2000-01-01'", "dec > 2", instant, None]:
        got = pes.read(spark, root, where, stats=stats)
        assert got.columns == ["x", "k", "d", "ts", "dec"]
        got = got.withColumn("ts_us", F.unix_micros("ts"))
        duck = "ts_us = 1709296215250000" if where == instant else where
        assert _spark_rows(got, columns) == _expected(rows, duck, columns), where
