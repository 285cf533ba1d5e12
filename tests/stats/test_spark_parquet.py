"""Footer statistics of files written by Spark (parquet-java): truncated string statistics,
INT96 timestamps, Spark's nested layout. On the shared local session."""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import os

import pyarrow as pa
import pytest

import prune_engine as pe
from tests.spark_sessions import session_conf
from tests.stats.stats_oracle import check_against_duckdb, check_against_rows, rows
from tests.stats.thrift_codec import assert_kernel_matches, footer_of

pytestmark = pytest.mark.spark

LONG = ["apple-" + "a" * 30, "banana-" + "z" * 30, "cherry\u00e9" * 5, None, "\U0001f600" * 12]


@pytest.fixture(scope="module")
def spark(classic_spark):
    """The shared session, in UTC and writing TIMESTAMP_MICROS for this module's duration."""
    yield from session_conf(classic_spark, {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})


def _frame(spark):
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("s", T.StringType()),
        T.StructField("i", T.LongType()),
        T.StructField("d", T.DecimalType(30, 4)),
        T.StructField("t", T.TimestampType()),
        T.StructField("f", T.DoubleType()),
        T.StructField("st", T.StructType([T.StructField("a", T.IntegerType()),
                                          T.StructField("b", T.StringType())])),
        T.StructField("arr", T.ArrayType(T.StringType())),
        T.StructField("m", T.MapType(T.StringType(), T.LongType())),
    ])
    base = dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=dt.timezone.utc)
    data = [(s, k * 7 - 10, decimal.Decimal(k) / 3 if k % 3 else None,
             base + dt.timedelta(days=k), [0.0, -0.0, 1.5, float("nan"), None][k % 5],
             None if k == 2 else (k, s), [s, "x" * 20] if k % 2 else None, {f"k{k}": k})
            for k, s in enumerate(LONG * 4)]
    data = [(r[0], r[1], decimal.Decimal(r[2]).quantize(decimal.Decimal("0.0001"))
             if r[2] is not None else None, *r[3:]) for r in data]
    return spark.createDataFrame(data, schema).coalesce(2)


def _files(folder):
    return sorted(glob.glob(os.path.join(folder, "*.parquet")))


def test_truncated_string_statistics_stay_true_bounds(spark, tmp_path):
    out = str(tmp_path / "trunc")
    _frame(spark).write.option("parquet.statistics.truncate.length", 8).parquet(out)
    files = _files(out)
    assert files, "Spark wrote parquet files"
    stats = pe.collect_stats(out, progress=False)
    truncated = 0
    for path in files:
        mine = pe.collect_stats(path, progress=False)
        check_against_rows(path, mine)
        check_against_duckdb(path, mine, exact=True)
        with open(path, "rb") as f:
            assert_kernel_matches(footer_of(f.read()))
        for lo, hi in zip(rows(mine, "min_values"), rows(mine, "max_values")):
            if hi["s"] is not None:
                truncated += len(hi["s"].encode()) <= 8
    assert truncated, "the footers hold truncated (prefix, incremented) string bounds"
    assert stats.num_rows >= len(files)
    assert stats.schema.field("min_values").type.field("t").type == pa.timestamp("us", "UTC"), \
        "isAdjustedToUTC micros: UTC"
    assert any(r["t"] is not None for r in rows(stats, "min_values")), "micros have bounds"


def test_int96_timestamps_are_unknown(spark, tmp_path):
    out = str(tmp_path / "int96")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    try:
        _frame(spark).select("t", "i").write.parquet(out)
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    for path in _files(out):
        stats = pe.collect_stats(path, progress=False)
        assert all(r["t"] is None for r in rows(stats, "min_values")), "INT96: unknown"
        assert all(r["i"] is not None for r in rows(stats, "min_values"))
        check_against_rows(path, stats)
        check_against_duckdb(path, stats, exact=False)
        with open(path, "rb") as f:
            assert_kernel_matches(footer_of(f.read()))
