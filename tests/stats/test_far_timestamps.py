"""Timestamps that leave the nanosecond range (it ends in 2262): Spark's INT96 columns and
far-future sentinels such as ``9999-12-30`` get statistics in microseconds, as Spark reads
them, from footers, from ``compute_missing=True``, from ``stats_from_arrow`` and across files
of different units; checked with ``prune``, ``classify`` and ``explain`` against DuckDB
reading the rows of each container from the file (:mod:`tests.stats.container_oracle`)."""

from __future__ import annotations

import datetime as dt
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.stats import thrift_codec as tc
from tests.stats.container_oracle import check_sound

FAR = dt.datetime(9999, 12, 30)
FIRST = dt.datetime(1, 1, 1)

#: the predicates of the issue (a row of 9999-12-30 lost to each on the old code), and more
FAR_PREDICATES = [
    "ts = TIMESTAMP '9999-12-30 00:00:00'",
    "ts >= TIMESTAMP '9999-01-01'",
    "ts > TIMESTAMP '2262-04-12'",
    "ts != TIMESTAMP '9999-12-30'",
    "ts IN (TIMESTAMP '9999-12-30', TIMESTAMP '2020-01-01')",
    "ts < TIMESTAMP '0002-01-01'",
    "ts = TIMESTAMP '0001-01-01'",
    "ts <= TIMESTAMP '1677-09-21'",
    "ts BETWEEN TIMESTAMP '2019-12-31' AND TIMESTAMP '2020-01-02'",
    "ts IS NULL",
    "ts IS NOT NULL",
    "NOT (ts < TIMESTAMP '9999-12-30')",
]


def _int96_file(path: str, values: list, row_group_size: int = 2) -> str:
    """Spark's default timestamp column, as pyarrow writes INT96 (from microseconds: pyarrow
    needs a unit that holds the year 9999)."""
    pq.write_table(pa.table({"ts": pa.array(values, pa.timestamp("us")),
                             "k": list(range(len(values)))}),
                   path, use_deprecated_int96_timestamps=True, row_group_size=row_group_size)
    assert pq.ParquetFile(path).schema.column(0).physical_type == "INT96"
    return path


def _spark31_shape(data: bytes) -> bytes:
    """``data`` (a pyarrow file) with the footer of a Spark 3.1 file: no ``ARROW:schema``,
    created by parquet-mr 1.10.1, Spark's own key-value entries."""
    spark_schema = (b'{"type":"struct","fields":[{"name":"ts","type":"timestamp","nullable":'
                    b'true,"metadata":{}},{"name":"k","type":"long","nullable":true,'
                    b'"metadata":{}}]}')

    def change(tree):
        tc.get(tree, 5).value.items = [
            [tc.Field(1, tc.BINARY, b"org.apache.spark.version"),
             tc.Field(2, tc.BINARY, b"3.1.2")],
            [tc.Field(1, tc.BINARY, b"org.apache.spark.sql.parquet.row.metadata"),
             tc.Field(2, tc.BINARY, spark_schema)]]
        tc.get(tree, 6).value = (b"parquet-mr version 1.10.1 "
                                 b"(build a89df8f9932b6ef6633d06069e50c9b7970bebd1)")
    return tc.edited(data, change)


@pytest.mark.parametrize("granularity", ["row_group", "file"])
@pytest.mark.parametrize("compute_missing", [False, True])
def test_int96_far_dates_are_kept_and_typed_in_microseconds(tmp_path, granularity,
                                                            compute_missing):
    """INT96 has no footer bounds: every predicate keeps the row of 9999-12-30 (the old code
    typed the column nanoseconds, where the literal folds to FALSE, and pruned it); computed
    bounds prune where they prove it."""
    path = _int96_file(str(tmp_path / "spark.parquet"),
                       [FAR, dt.datetime(2020, 1, 1), FIRST, None,
                        dt.datetime(2020, 6, 1), dt.datetime(2021, 1, 1)])
    stats = pe.collect_stats(path, granularity=granularity, compute_missing=compute_missing,
                             progress=False)
    assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
    expect = {}
    if compute_missing and granularity == "row_group":
        # rg 0 holds 2020 and 9999, rg 1 the year 1 (before 1900: unknown), rg 2 2020-2021
        assert stats.column("max_values").to_pylist()[0]["ts"] == FAR
        expect = {"ts > TIMESTAMP '2262-04-12'": [True, True, False],
                  "ts = TIMESTAMP '9999-12-30 00:00:00'": [True, True, False]}
    check_sound(stats, FAR_PREDICATES, expect_pruned=expect)
    kinds = pe.classify(stats, "ts != TIMESTAMP '9999-12-30'").to_pylist()
    assert kinds[0] != "all", "the container holding 9999-12-30 is not 'all' for !="


def test_spark_31_file_shape(tmp_path):
    """The shape of delta-rs's ``table_with_edge_timestamps``: a Spark 3.1 file (parquet-mr,
    INT96, no Arrow schema) holding 9999-12-30 and 0001-01-01."""
    source = _int96_file(str(tmp_path / "src.parquet"), [FAR, FIRST, dt.datetime(2021, 3, 4)],
                         row_group_size=3)
    path = str(tmp_path / "part-00000-spark31.snappy.parquet")
    with open(source, "rb") as f:
        data = _spark31_shape(f.read())
    with open(path, "wb") as f:
        f.write(data)
    os.remove(source)
    meta = pq.read_metadata(path)
    assert meta.created_by.startswith("parquet-mr version 1.10.1")
    assert b"ARROW:schema" not in (meta.metadata or {})
    for compute_missing in (False, True):
        stats = pe.collect_stats(path, compute_missing=compute_missing, progress=False)
        assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
        check_sound(stats, FAR_PREDICATES)
        assert pe.prune(stats, "ts = TIMESTAMP '9999-12-30 00:00:00'").to_pylist() == [True]
        table = pe.explain(stats, "ts >= TIMESTAMP '9999-01-01'")
        assert table.column("keep").to_pylist() == [True]


def test_a_lake_of_nanosecond_and_int96_files_is_held_in_microseconds(tmp_path):
    """Files of one lake giving nanoseconds and microseconds (INT96) for one column: the
    statistics are microseconds (the old code made them nanoseconds, where 9999-12-30 folds
    to FALSE and prunes the INT96 file holding it)."""
    root = tmp_path / "lake"
    root.mkdir()
    base = 1_577_836_800_000_000_000  # 2020-01-01 in nanoseconds
    pq.write_table(pa.table({"ts": pa.array([base + 1_000, base + 5_000, None],
                                            pa.timestamp("ns")), "k": [1, 2, 3]}),
                   root / "a.parquet")
    _int96_file(str(root / "b.parquet"), [FAR, dt.datetime(2020, 1, 1), None])
    for compute_missing in (False, True):
        stats = pe.collect_stats(str(root), granularity="file", compute_missing=compute_missing,
                                 progress=False)
        assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
        check_sound(stats, FAR_PREDICATES, expect_pruned={
            "ts = TIMESTAMP '9999-12-30 00:00:00'": [False, True]})
    assert stats.column("max_values").to_pylist()[1]["ts"] == FAR


def test_nanosecond_bounds_round_outward_in_a_microsecond_lake(tmp_path):
    """In a lake held in microseconds, a nanosecond file's min is rounded down and its max
    up, so each stays a true bound (a truncated max would lose the rows above it)."""
    root = tmp_path / "lake"
    root.mkdir()
    base = 1_577_836_800_000_000_000
    pq.write_table(pa.table({"ts": pa.array([base + 999, base + 5_001], pa.timestamp("ns"))}),
                   root / "a.parquet")
    _int96_file(str(root / "b.parquet"), [dt.datetime(2020, 1, 1)])
    stats = pe.collect_stats(str(root), granularity="file", progress=False)
    bounds = [(lo["ts"], hi["ts"]) for lo, hi in zip(stats.column("min_values").to_pylist(),
                                                     stats.column("max_values").to_pylist())]
    assert bounds[0] == (dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 0, 0, 0, 6)), \
        "999 ns floors to 0 us; 5001 ns ceils to 6 us"
    check_sound(stats, ["ts > TIMESTAMP '2020-01-01 00:00:00.000005'",
                        "ts < TIMESTAMP '2020-01-01 00:00:00.000001'",
                        "ts >= TIMESTAMP '2020-01-01 00:00:00.000006'",
                        "ts >= TIMESTAMP '2020-01-01 00:00:00.000007'",
                        "ts <= TIMESTAMP '2020-01-01 00:00:00'"],
                expect_pruned={"ts >= TIMESTAMP '2020-01-01 00:00:00.000007'": [False, True],
                               "ts > TIMESTAMP '2020-01-01 00:00:00.000005'": [True, True]})


def test_stats_from_arrow_holds_far_dates(tmp_path):
    """Arrow data in microseconds (a pyarrow table, a pandas frame of far datetimes) keeps
    its unit: exact bounds, far dates prune and keep rightly."""
    frame = pd.DataFrame({"ts": [FAR, dt.datetime(2020, 1, 1), FIRST, None],
                          "part": ["far", "now", "first", "now"]})
    stats = pe.stats_from_arrow(frame, container="part")
    assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
    assert pe.prune(stats, "ts = TIMESTAMP '9999-12-30 00:00:00'").to_pylist() == \
        [True, False, False]
    assert pe.classify(stats, "ts != TIMESTAMP '9999-12-30'").to_pylist() == \
        ["none", "some", "all"], "'now' holds a NULL: some"
    assert pe.prune(stats, "ts < TIMESTAMP '0002-01-01'").to_pylist() == [False, False, True]


def test_computed_nanosecond_bounds_round_outward_in_a_microsecond_lake(tmp_path):
    """``compute_missing`` fills a nanosecond file's bounds into microsecond statistics: the
    min rounded down, the max up (pyarrow's scalar conversion would truncate the max)."""
    root = tmp_path / "lake"
    root.mkdir()
    base = 1_577_836_800_000_000_000
    pq.write_table(pa.table({"ts": pa.array([base + 1, base + 1_999], pa.timestamp("ns"))}),
                   root / "a.parquet", write_statistics=False)
    _int96_file(str(root / "b.parquet"), [dt.datetime(2020, 1, 1, 0, 0, 0, 3)])
    stats = pe.collect_stats(str(root), granularity="file", compute_missing=True,
                             progress=False)
    assert [r["ts"] for r in stats.column("max_values").to_pylist()] == \
        [dt.datetime(2020, 1, 1, 0, 0, 0, 2), dt.datetime(2020, 1, 1, 0, 0, 0, 3)]
    assert stats.column("min_values").to_pylist()[0]["ts"] == dt.datetime(2020, 1, 1)
    check_sound(stats, ["ts > TIMESTAMP '2020-01-01 00:00:00.000001'",
                        "ts >= TIMESTAMP '2020-01-01 00:00:00.000002'",
                        "ts < TIMESTAMP '2020-01-01 00:00:00.000001'"],
                expect_pruned={"ts >= TIMESTAMP '2020-01-01 00:00:00.000002'": [True, True]})


def test_a_literal_between_two_microseconds_keeps_the_nanosecond_file(tmp_path):
    """Microsecond statistics of a lake of nanosecond and INT96 files stand for finer
    values: ``=`` / ``IN`` with a literal between two microseconds keep the file holding it,
    and ``!=`` / ``NOT IN`` never call it "all" (the bind folded ``=`` to FALSE)."""
    root = tmp_path / "lake"
    root.mkdir()
    pq.write_table(pa.table({"ts": pa.array([1_577_836_800_000_000_500, None],
                                            pa.timestamp("ns"))}), root / "a.parquet")
    _int96_file(str(root / "b.parquet"), [dt.datetime(2020, 1, 1), dt.datetime(2021, 1, 1)])
    stats = pe.collect_stats(str(root), granularity="file", progress=False)
    lit = "TIMESTAMP_NS '2020-01-01 00:00:00.0000005'"
    for where in (f"ts = {lit}", f"ts IN ({lit}, TIMESTAMP '2022-01-01')"):
        assert pe.prune(stats, where).to_pylist()[0], where
    for where in (f"ts != {lit}", f"ts NOT IN ({lit})"):
        assert pe.classify(stats, where).to_pylist()[0] != "all", where
    far = "TIMESTAMP_NS '2021-06-01 00:00:00.0000005'"
    assert pe.prune(stats, f"ts = {far}").to_pylist() == [False, True], \
        "a container that cannot hold the literal's neighbours is still pruned"
