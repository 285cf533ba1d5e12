"""``pes.read`` against plain Spark: the same rows, and Spark scans exactly the kept files.

Random lakes (fixed seeds) written by pyarrow and by Spark, partitioned and not, with nested
columns and NULLs; paths with spaces, ``%``, ``=``, ``#`` and non-ASCII characters; files
added, changed and deleted after the statistics were collected."""

from __future__ import annotations

import datetime as dt
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from tests.spark.helpers import (arrow_frame, explained, matching_files, scanned_files,
                                 sorted_rows, write)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session

FILES = 16
ROWS = 40
WHERES = [
    "id BETWEEN 250 AND 260 OR s = 'k-7-3'",
    "v > 0.9 AND id >= 300",
    "st.a = 5",
    "ts >= timestamp'2024-01-10 00:00:00' AND ts < timestamp'2024-01-11 00:00:00'",
    "s LIKE 'k-12-%' OR id IN (5, 333, 634)",
    "v IS NULL AND NOT (id >= 200)",
]


def _table(k: int, rng) -> pa.Table:
    ids = np.sort(rng.integers(k * 40, k * 40 + 40, ROWS))
    v = rng.random(ROWS)
    v_mask = rng.random(ROWS) < 0.1
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=k)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array(np.where(rng.random(ROWS) < 0.05, np.nan, v), mask=v_mask),
        "s": pa.array([f"k-{k}-{i % 9}" if i % 7 else None for i in range(ROWS)]),
        "ts": pa.array([base + dt.timedelta(minutes=int(m)) for m in np.sort(rng.integers(0, 1400, ROWS))],
                       pa.timestamp("us", tz="UTC")),
        "st": pa.array([{"a": int(k % 8), "b": f"b{i}"} if i % 11 else None for i in range(ROWS)]),
        "tags": pa.array([[f"t{k}", f"u{i % 3}"] for i in range(ROWS)]),
    })


def _pyarrow_lake(root: str, partitioned: bool) -> str:
    rng = np.random.default_rng(7)
    for k in range(FILES):
        folder = os.path.join(root, f"grp={k % 4}") if partitioned else root
        write(os.path.join(folder, f"part-{k:03d}.parquet"), _table(k, rng))
    return root


def _spark_lake(spark, root: str, partitioned: bool) -> str:
    rng = np.random.default_rng(11)
    table = pa.concat_tables([_table(k, rng) for k in range(FILES)])
    df = arrow_frame(spark, table).repartitionByRange(FILES, "id") \
        .sortWithinPartitions("id")
    if partitioned:
        df = df.withColumn("grp", (df["id"] % 3).cast("int"))
        df.write.partitionBy("grp").parquet(root)
    else:
        df.write.parquet(root)
    return root


@pytest.fixture(scope="module", params=[("pyarrow", False), ("pyarrow", True),
                                        ("spark", False), ("spark", True)],
                ids=lambda p: f"{p[0]}-{'partitioned' if p[1] else 'flat'}")
def lake(request, spark, tmp_path_factory):
    writer, partitioned = request.param
    root = str(tmp_path_factory.mktemp(f"read_{writer}") / "lake")
    if writer == "pyarrow":
        _pyarrow_lake(root, partitioned)
    else:
        _spark_lake(spark, root, partitioned)
    return root, pe.collect_stats(root, granularity="row_group", progress=False), \
        spark.read.parquet(root)


@pytest.mark.parametrize("where", WHERES)
def test_read_equals_plain_spark_and_scans_only_kept_files(spark, lake, where):
    root, stats, plain_source = lake
    df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    plain = plain_source.where(where)
    plain_rows, plain_scanned = scanned_files(plain)
    assert sorted_rows(rows) == sorted_rows(plain_rows)
    assert df.columns == plain.columns, "partition columns survive, in Spark's order"
    assert scanned == summary.files_read, "Spark opened exactly the kept files"
    assert summary.files_total == plain_scanned == summary.files_read + summary.files_pruned
    assert len(explained(df)) <= 2 * len(explained(plain)), "the plan names no pruned file"


@pytest.mark.parametrize("how", ["inner", "left_semi"])
def test_join_equals_plain_spark_on_the_lake(spark, lake, how):
    """A dimension of a few ids (and a NULL key) against the lake's ``id`` (nested columns
    and NULLs ride along): the same rows as the plain join, only the kept files scanned."""
    root, stats, plain_source = lake
    dim = spark.createDataFrame([(5, "a"), (333, "b"), (634, "c"), (None, "d")],
                                "key long, tag string")
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # keep every scan in the final plan
    try:
        df, summary = pes.join(spark, root, dim, [("id", "key")], how, fact_stats=stats,
                               return_summary=True)
        rows, scanned = scanned_files(df)
        plain = plain_source.join(dim, plain_source["id"] == dim["key"], how)
        plain_rows = plain.collect()
        assert len(explained(df)) <= 2 * len(explained(plain)), "the plan names no pruned file"
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    assert sorted_rows(rows) == sorted_rows(plain_rows)
    assert scanned == summary.files_read < summary.files_total / 2


def test_read_prunes_on_partition_and_data_columns(spark, lake):
    root, stats, _ = lake
    df, summary = pes.read(spark, root, "id < 40", stats=stats, return_summary=True)
    assert summary.files_read < summary.files_total / 2
    assert summary.bytes_skipped > 0 and summary.prune_seconds > 0
    assert "id < 40" in summary.predicate


def test_paths_with_spaces_percent_equals_and_non_ascii(spark, tmp_path):
    """Spark writes URL-encoded ``_metadata.file_path``; the files excluded must be exactly
    the ones Spark would have opened, or pruning would do nothing (or worse)."""
    root = str(tmp_path / "lake dir")
    names = ["a b", "x%y", "k=v", "é-ü", "#hash", "50%=ö ÿ", "plain", "tab\tq", "?[]{}",
             "*\\,%20"]
    for i, value in enumerate(names):
        folder = os.path.join(root, f"p={value}")
        write(os.path.join(folder, f"f {i} {value}.parquet"), pa.table({"i": [i * 10, i * 10 + 5]}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    for where in ["i = 30", "i > 52", f"p = '{names[5]}'", "p LIKE 'a%'", "p = 'tab\tq'"]:
        df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
        rows, scanned = scanned_files(df)
        plain = spark.read.parquet(root).where(where)
        assert sorted_rows(rows) == sorted_rows(plain.collect())
        assert scanned == summary.files_read == len(matching_files(spark, root, where)), where
        assert len(explained(df)) <= 2 * len(explained(plain)), "read as paths, not patterns"


def test_explain_is_as_short_as_plain_sparks_however_many_files_are_pruned(spark, tmp_path):
    """The plan holds Spark's file index of the kept files, not a list of the pruned ones:
    ``explain`` prints within 2x of plain Spark's whether 3 or 297 of 300 files are kept
    (it printed every pruned path, 100 characters each)."""
    root = str(tmp_path / "many")
    for k in range(300):
        write(os.path.join(root, f"part-{k:04d}.parquet"), pa.table({"x": [k * 10, k * 10 + 9]}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    for where, read in [("x < 30", 3), ("x >= 30", 297)]:
        df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
        plain = spark.read.parquet(root).where(where)
        assert summary.files_read == read and summary.files_pruned == 300 - read
        assert len(explained(df)) <= 2 * len(explained(plain)), explained(df)[:500]
        rows, scanned = scanned_files(df)
        assert sorted_rows(rows) == sorted_rows(plain.collect()) and scanned == read
    df = pes.read(spark, root, "x < 0", stats=stats)
    assert df.collect() == [] and len(explained(df)) <= 2 * len(explained(plain))


def test_spark_written_partition_values_with_special_characters(spark, tmp_path):
    root = str(tmp_path / "spark")
    values = ["a b", "x%y", "k=v", "é", "a/b", "", None]
    df = spark.createDataFrame([(v, i) for i, v in enumerate(values)], "p string, i long")
    df.repartition(len(values), "p").write.partitionBy("p").parquet(root)
    stats = pe.collect_stats(root, granularity="file", progress=False)
    for where in ["p = 'a/b'", "p = 'x%y'", "p IS NULL", "i = 3"]:
        df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
        rows, scanned = scanned_files(df)
        assert sorted_rows(rows) == sorted_rows(spark.read.parquet(root).where(where).collect())
        assert scanned == summary.files_read == len(matching_files(spark, root, where)), where


def _small_lake(root: str) -> None:
    for k in range(4):
        write(os.path.join(root, f"f{k}.parquet"), pa.table({"x": [k * 10, k * 10 + 5]}))


def test_a_file_added_after_collection_is_read(spark, tmp_path):
    root = str(tmp_path)
    _small_lake(root)
    stats = pe.collect_stats(root, granularity="file", progress=False)
    write(os.path.join(root, "new.parquet"), pa.table({"x": [1, 2]}))
    df, summary = pes.read(spark, root, "x < 3", stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    assert sorted(r.x for r in rows) == [0, 1, 2], "the new file's rows are there"
    assert scanned == summary.files_read == 2 and summary.files_total == 5


def test_a_changed_file_is_read_with_a_warning(spark, tmp_path):
    root = str(tmp_path)
    _small_lake(root)
    stats = pe.collect_stats(root, granularity="file", progress=False)
    path = os.path.join(root, "f3.parquet")
    time.sleep(0.01)
    write(path, pa.table({"x": [1, 2, 3]}))  # was 30, 35: the statistics would prune it
    with pytest.warns(UserWarning, match="changed since the statistics"):
        df, summary = pes.read(spark, root, "x < 3", stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    assert sorted(r.x for r in rows) == [0, 1, 2]
    assert summary.changed == [path] and scanned == 2


def test_a_deleted_file_is_skipped_as_in_spark_or_an_error_on_request(spark, tmp_path):
    root = str(tmp_path)
    _small_lake(root)
    stats = pe.collect_stats(root, granularity="file", progress=False)
    gone = os.path.join(root, "f2.parquet")
    os.remove(gone)
    with pytest.raises(pe.StatsError, match="no longer exist") as e:
        pes.read(spark, root, "x < 3", stats=stats, missing="raise")
    assert e.value.containers == [gone]
    with pytest.warns(UserWarning, match="no longer exist"):
        df, summary = pes.read(spark, root, "x < 3", stats=stats, return_summary=True)
    assert sorted(r.x for r in df.collect()) == [0]
    assert summary.missing == [gone] and summary.files_total == 3


def test_statistics_from_before_an_overwrite_read_what_spark_reads(spark, tmp_path):
    """After ``mode("overwrite")`` every file the statistics name is gone and the new ones
    are unknown: nothing is pruned wrongly, and the rows are plain Spark's."""
    root = str(tmp_path / "t")
    spark.range(20).selectExpr("id AS x").repartition(4).write.parquet(root)
    stats = pes.collect_stats(spark, root, "file")
    spark.range(100, 130).selectExpr("id AS x").repartition(3).write.mode("overwrite").parquet(root)
    with pytest.warns(UserWarning, match="no longer exist"):
        df, summary = pes.read(spark, root, "x >= 110", stats=stats, return_summary=True)
    assert sorted(r.x for r in df.collect()) == list(range(110, 130))
    assert len(summary.missing) == 4 and summary.files_read == 3


def test_read_without_statistics_collects_them(spark, tmp_path):
    root = str(tmp_path)
    _small_lake(root)
    df, summary = pes.read(spark, root, "x >= 30", return_summary=True)
    assert [r.x for r in df.collect()] == [30, 35] and summary.files_read == 1


def test_read_json_with_statistics_from_spark_rows(spark, tmp_path):
    """Statistics of any file format, from an aggregation over Spark's rows."""
    root = str(tmp_path)
    for k in range(5):
        with open(os.path.join(root, f"part-{k}.json"), "w") as f:
            for i in range(3):
                f.write(f'{{"id": {k * 10 + i}, "name": "n{k}"}}\n')
    stats = pes.stats_from_dataframe(spark.read.json(root))
    df, summary = pes.read(spark, root, "id = 21", stats=stats, format="json",
                           return_summary=True)
    rows, scanned = scanned_files(df)
    assert [(r.id, r.name) for r in rows] == [(21, "n2")]
    assert scanned == summary.files_read == 1


def _table_name(spark, stem: str) -> str:
    """A table name per kind of session (both write to the one catalog)."""
    from prune_engine.spark._session import is_connect

    return f"{stem}_{'connect' if is_connect(spark) else 'classic'}"


@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
def test_a_catalog_table_is_a_source(spark, partitioned):
    """``"db.table"`` of the session catalog: statistics collected from the table's files,
    the same rows as ``spark.table(name).where(...)``, only the kept files scanned, a plan
    as short as plain Spark's (on Connect, the table's format read from ``DESCRIBE``)."""
    name = _table_name(spark, f"sales_{'p' if partitioned else 'f'}")
    spark.sql("CREATE DATABASE IF NOT EXISTS pe_db")
    df = spark.range(80).selectExpr("id AS x", "CAST(id % 2 AS INT) AS g", "id * 0.5 AS v") \
        .repartitionByRange(4, "x")
    writer = df.write.mode("overwrite").format("parquet")
    (writer.partitionBy("g") if partitioned else writer).saveAsTable(f"pe_db.{name}")
    stats = pes.collect_stats(spark, f"pe_db.{name}", granularity="file")
    assert stats.num_rows == (8 if partitioned else 4)
    for where in ["x < 5", "x >= 60 AND g = 1", "v = 10.0"]:
        out, summary = pes.read(spark, f"pe_db.{name}", where, stats=stats, return_summary=True)
        rows, scanned = scanned_files(out)
        plain = spark.table(f"pe_db.{name}").where(where)
        assert sorted_rows(rows) == sorted_rows(plain.collect())
        assert scanned == summary.files_read < summary.files_total, where
        assert len(explained(out)) <= 2 * len(explained(plain)), where
    out, summary = pes.read(spark, f"pe_db.{name}", "x < 5", return_summary=True)
    assert sorted(r.x for r in out.collect()) == list(range(5)), "statistics collected now"
    assert summary.files_read < summary.files_total


def test_a_dataframe_over_files_is_a_source(spark, lake):
    root, stats, _ = lake
    base = spark.read.parquet(root)
    where = WHERES[0]
    out, summary = pes.read(spark, base, where, stats=stats, return_summary=True)
    rows, scanned = scanned_files(out)
    assert sorted_rows(rows) == sorted_rows(base.where(where).collect())
    assert scanned == summary.files_read < summary.files_total
    # a Column taken from the source DataFrame names its plan: the pruned frame keeps it
    column = (base["id"] >= 300) & (base["v"] > 0.9)
    out, summary = pes.read(spark, base, column, stats=stats, order_by=[base["id"].desc()],
                            return_summary=True)
    rows, scanned = scanned_files(out)
    assert sorted_rows(rows) == sorted_rows(base.where(column).collect())
    assert [r.id for r in rows] == sorted((r.id for r in rows), reverse=True)
    assert scanned == summary.files_read < summary.files_total
    with pytest.raises(pe.StatsError, match="file sources only"):
        pes.read(spark, spark.range(3), "id > 1", stats=stats)


def test_spark_written_int96_timestamps_prune_after_compute_missing(spark, tmp_path):
    """Spark's default ``outputTimestampType`` is INT96, whose footers carry no bounds: a
    filter on the timestamp reads every file until ``compute_missing=True`` computes them in
    the statistics job. Rows as plain Spark's, in the session's time zone."""
    root = str(tmp_path / "events")
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "INT96")
    try:
        spark.range(0, 600).selectExpr(
            "id", "timestamp_seconds(1704067200 + id * 3600) AS ts") \
            .repartitionByRange(6, "id").write.parquet(root)
    finally:
        spark.conf.set(key, before) if before is not None else spark.conf.unset(key)
    where = "ts >= timestamp'2024-01-20 00:00:00' AND ts < timestamp'2024-01-21 00:00:00'"
    plain = sorted_rows(spark.read.parquet(root).where(where).collect())
    assert plain, "the window holds rows"
    footers = pes.collect_stats(spark, root, "file")
    _, summary = pes.read(spark, root, where, stats=footers, return_summary=True)
    assert summary.files_pruned == 0, "INT96: no footer bounds"
    stats = pes.collect_stats(spark, root, "file", compute_missing=True)
    assert stats.metadata["computed"]["columns"] == ["ts"]
    df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    assert sorted_rows(rows) == plain
    assert scanned == summary.files_read <= 2 < summary.files_total


def test_a_rewrite_with_the_same_size_and_the_old_mtime_is_detected(spark, tmp_path):
    """A file rewritten in place, same byte size, modification time set back: its ctime
    changed, so it is read (it would be pruned on its old statistics)."""
    root = str(tmp_path)
    _small_lake(root)
    path = os.path.join(root, "f3.parquet")
    stats = pe.collect_stats(root, granularity="file", progress=False)
    before = os.stat(path)
    write(path, pa.table({"x": [1, 2]}))  # was 30, 35: same size, rows now match x < 3
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.warns(UserWarning, match="changed since the statistics"):
        df, summary = pes.read(spark, root, "x < 3", stats=stats, return_summary=True)
    assert sorted(r.x for r in df.collect()) == [0, 1, 2]
    assert summary.changed == [path]


def test_saved_statistics_are_reused_and_refreshed(spark, tmp_path):
    """``stats=None``: the first read collects and saves; the next reuses every unchanged
    file's statistics and collects only new and changed files; gone files are dropped."""
    root = str(tmp_path / "lake")
    _small_lake(root)
    plain = lambda where: sorted(r.x for r in spark.read.parquet(root).where(where).collect())  # noqa: E731
    df, first = pes.read(spark, root, "x < 3", return_summary=True)
    assert sorted(r.x for r in df.collect()) == plain("x < 3")
    assert first.statistics["new"] == 4 and first.files_read == 1
    df, second = pes.read(spark, root, "x >= 30", return_summary=True)
    assert sorted(r.x for r in df.collect()) == plain("x >= 30")
    assert {k: second.statistics[k] for k in ("reused", "changed", "new", "gone")} == \
        {"reused": 4, "changed": 0, "new": 0, "gone": 0}
    time.sleep(0.01)
    write(os.path.join(root, "f1.parquet"), pa.table({"x": [31, 32, 33]}))  # changed
    write(os.path.join(root, "new.parquet"), pa.table({"x": [40]}))
    os.remove(os.path.join(root, "f0.parquet"))
    df, third = pes.read(spark, root, "x >= 30", return_summary=True)
    assert sorted(r.x for r in df.collect()) == plain("x >= 30") == [30, 31, 32, 33, 35, 40]
    assert {k: third.statistics[k] for k in ("reused", "changed", "new", "gone")} == \
        {"reused": 2, "changed": 1, "new": 1, "gone": 1}
    assert third.files_read == 3 and not third.missing, "f2 pruned, f0 gone from the statistics"
    from prune_engine.spark._saved import stats_dir

    assert os.listdir(stats_dir(spark)), "saved where the session's statsDir says"


def test_a_file_uri_is_a_source(spark, tmp_path):
    """``file://`` URIs (Spark's form of a local path) for the source and the statistics."""
    root = str(tmp_path / "lake dir")
    _small_lake(root)
    uri = "file://" + root  # as Spark takes it: Hadoop reads the path literally
    stats = pes.collect_stats(spark, uri, "file")
    assert stats.table.equals(pe.collect_stats(uri, granularity="file", progress=False).table)
    df, summary = pes.read(spark, uri, "x >= 30", stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    assert sorted(r.x for r in rows) == [30, 35] and scanned == summary.files_read == 1


def _jobs_since(classic_spark, first: int) -> list[tuple[int, str | None]]:
    """``(job id, description)`` of the jobs from id ``first`` on, from Spark's status
    store (what the Spark UI shows)."""
    sc = classic_spark._jsc.sc()
    sc.listenerBus().waitUntilEmpty()
    jobs = sc.statusStore().jobsList(None)
    out = []
    for i in range(jobs.size()):
        job = jobs.apply(i)
        if job.jobId() >= first:
            text = job.description()
            out.append((job.jobId(), text.get() if text.isDefined() else None))
    return sorted(out)


def _next_job(classic_spark) -> int:
    jobs = _jobs_since(classic_spark, 0)
    return jobs[-1][0] + 1 if jobs else 0


def test_the_summary_names_the_jobs_that_read_the_result(spark, classic_spark, tmp_path):
    """Without logging set up, the summary is in the Spark UI: ``count`` names its read
    after it, ``summary.describing(spark)`` names the caller's jobs of the result, and the
    caller's own description comes back afterwards."""
    from prune_engine.spark._session import is_connect

    root = str(tmp_path)
    _small_lake(root)
    stats = pe.collect_stats(root, granularity="file", progress=False)
    df, summary = pes.read(spark, root, "x >= 30", stats=stats, return_summary=True)
    assert summary.headline() == ("prune_engine: 3 of 4 files pruned (0.0 MB skipped), "
                                  "1 to read")
    if is_connect(spark):
        mine = lambda: spark.conf.get("spark.job.description", None)  # noqa: E731
        spark.conf.set("spark.job.description", "the caller's")
    else:
        mine = lambda: spark.sparkContext.getLocalProperty("spark.job.description")  # noqa: E731
        spark.sparkContext.setJobDescription("the caller's")
    try:
        first = _next_job(classic_spark)
        with summary.describing(spark):
            assert sorted(r.x for r in df.collect()) == [30, 35]
        jobs = _jobs_since(classic_spark, first)
        assert jobs and {d for _, d in jobs} == {summary.headline()}, jobs
        assert mine() == "the caller's", "the caller's description is restored"
        first = _next_job(classic_spark)
        n, counted = pes.count(spark, root, "x = 31", stats=stats, return_summary=True)
        assert n == 0 and counted.files_read == 1
        jobs = _jobs_since(classic_spark, first)
        assert jobs[-1][1] == counted.headline(), "count's read of the kept file"
        assert mine() == "the caller's"
    finally:
        if is_connect(spark):
            spark.conf.unset("spark.job.description")
        else:
            spark.sparkContext.setJobDescription(None)


def test_a_sources_reader_options_are_read_back_whole(classic_spark, tmp_path):
    """The kept files are read with the source's options, read from its plan in one round
    trip each for keys and values, or entry by entry where one holds the separator."""
    from prune_engine.spark._kept import reader_of
    from prune_engine.spark._session import joined

    spark = classic_spark  # (py4j: a classic session's plan)
    path = str(tmp_path / "t.parquet")
    spark.range(3).write.parquet(path)
    df = spark.read.option("mergeSchema", "false").option("odd", "a\u0000b, c=d").parquet(path)
    assert reader_of(df) == ("parquet", {"mergeschema": "false", "odd": "a\u0000b, c=d"})
    assert reader_of(spark.read.parquet(path)) == ("parquet", {})
    options = spark.read.option("a", "1").parquet(path)
    relation = options._jdf.queryExecution().analyzed().relation()
    assert sorted(joined(spark, relation.options().keys())) == ["a", "path"]
    assert joined(spark, relation.options().keys().take(0)) == []


def test_the_listing_crosses_from_the_jvm_whole(classic_spark, tmp_path, monkeypatch):
    """Spark's listing crosses from the JVM through a file, one name a line (Spark's URIs
    percent-encode a line break in a name), the same names as Spark's."""
    import pyspark

    from prune_engine.spark import _source

    spark, ways = classic_spark, []
    real = _source.jvm_lines
    monkeypatch.setattr(_source, "jvm_lines", lambda *a: ways.append(real(*a)) or ways[-1])
    for folder, names in (("plain", ["a.parquet", "ü %20 [x].parquet"]),
                          ("odd", ["a.parquet", "with a\nline break.parquet"])):
        for name in names:
            (tmp_path / folder).mkdir(exist_ok=True)
            pq.write_table(pa.table({"x": [1]}), str(tmp_path / folder / name))
        df = spark.read.parquet(str(tmp_path / folder))
        assert sorted(_source.listed_uris(df)) == sorted(df._jdf.inputFiles())
    scala_213 = int(pyspark.__version__.split(".")[0]) >= 4  # Spark 3.5: Scala 2.12
    assert len(ways) == (2 if scala_213 else 0) and all(w is not None for w in ways), \
        "through the file (Scala 2.13; Scala 2.12: one py4j call per file)"
