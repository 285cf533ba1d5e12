"""prune_engine on a lake Spark wrote with its defaults, on classic and Connect sessions
(issue #21, Speed), side by side with plain Spark.

The lake: ``spark.range(...)`` written by Spark itself (INT96 timestamps, snappy, ``_SUCCESS``
and ``.crc`` files), 2,000 files clustered on ``id`` and ``ts`` (file k holds ids
k*500 .. k*500+499 and hour k), and a dimension of one row per id. One local[2] JVM serves a
classic session and, through its Spark Connect plugin, a Connect session; both run every
scenario. Groups:

    lake filter ts      1% of the files match a window of ``ts`` (INT96: the footers have no
                        bounds; the statistics come from ``collect_stats(compute_missing=True)``)
    lake filter id      1% of the files match a range of ``id``
    lake join           a star join whose dimension filter keeps 1% of the fact files
    lake saved stats    ``pes.read(..., stats=None)`` after the first call: the time spent
                        bringing the saved statistics up to date (nothing changed)
    lake through Spark, filter id
                        the id filter on the same files behind a ``viewfs://`` mount, which
                        pyarrow cannot open: Spark lists the files, and the statistics are
                        aggregated from the rows by Spark (``_through_spark``)

Besides plain Spark over the whole lake, each filter and the join also run as plain Spark
handed the very files prune_engine keeps (``plain, kept files only``): the floor of any
file-skipping layer in front of Spark, so the report can say how close to it prune_engine is.

Each scenario is timed end to end to the collected rows; ``extra_info`` holds the files Spark
scanned and the session kind. ``SPARK_LAKE_BENCH_FILES`` shrinks the lake. Run::

    python -m pytest bench/test_bench_spark_lake.py --benchmark-json=lake.json -q
"""

from __future__ import annotations

import glob
import os
import socket
import sys
import tempfile

import pytest

NUM_FILES = int(os.environ.get("SPARK_LAKE_BENCH_FILES", 2_000))
ROWS = 500
ROUNDS = 5
#: 1% of the files, from 30% of the way in
FIRST = NUM_FILES * 3 // 10
COUNT = max(1, NUM_FILES // 100)
TS_FILTER = (f"ts >= timestamp_seconds({1704067200 + FIRST * 3600}) AND "
             f"ts < timestamp_seconds({1704067200 + (FIRST + COUNT) * 3600})")
ID_FILTER = f"id >= {FIRST * ROWS} AND id < {(FIRST + COUNT) * ROWS}"
NORTH = list(range(7, NUM_FILES, 100))


#: the floor: plain Spark handed the very files prune_engine reads (what no file-skipping layer
#: in front of Spark can beat: Spark still lists, plans and reads those files)
KEPT = "plain, kept files only"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sessions():
    """A classic local[2] session serving Spark Connect, and a Connect client of it."""
    from pyspark.sql import SparkSession

    import pyspark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not glob.glob(os.path.join(jars, "spark-connect_*.jar")):
        pytest.skip("this pyspark ships no Spark Connect server")
    port = _port()
    classic = (SparkSession.builder.master("local[2]").appName("prune_engine-bench-lake")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.memory", "2g")
               .config("spark.prune_engine.statsDir", tempfile.mkdtemp(prefix="pe-bench-stats-"))
               .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
               .config("spark.connect.grpc.binding.address", "127.0.0.1")
               .config("spark.connect.grpc.binding.port", str(port)).getOrCreate())
    classic.sparkContext.setLogLevel("ERROR")
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    connect = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
    yield {"classic": classic, "connect": connect}
    connect.stop()
    classic.stop()


@pytest.fixture(scope="module")
def lake(sessions, tmp_path_factory):
    """The lake as Spark writes it by default, its statistics, and the dimension."""
    import prune_engine.spark as pes

    spark = sessions["classic"]
    root = tmp_path_factory.mktemp("spark_lake")
    fact, dim = str(root / "fact"), str(root / "dim")
    spark.range(NUM_FILES * ROWS).selectExpr(
        "id", f"timestamp_seconds(1704067200 + div(id, {ROWS}) * 3600 + id % {ROWS}) AS ts",
        "id % 97 * 1.5 AS amount", "concat('c', id % 13) AS country") \
        .repartitionByRange(NUM_FILES, "id").write.parquet(fact)
    spark.range(NUM_FILES * ROWS).selectExpr(
        "id AS key", f"CASE WHEN div(id, {ROWS}) IN ({','.join(map(str, NORTH))}) "
        "THEN 'north' ELSE 'south' END AS region").coalesce(1).write.parquet(dim)
    stats = pes.collect_stats(spark, fact, granularity="file", compute_missing=True)
    assert stats.metadata["computed"]["columns"] == ["ts"], "INT96: bounds computed"
    return fact, dim, stats


def _record(benchmark, group: str, engine: str, kind: str, **info):
    benchmark.group = group
    benchmark.extra_info.update({"group": group, "engine": engine, "session": kind, **info})


def _collect(df):
    df.collect()
    return df


@pytest.mark.parametrize("kind", ["classic", "connect"])
@pytest.mark.parametrize("column", ["ts", "id"])
@pytest.mark.parametrize("engine", ["plain", KEPT, "prune_engine"])
def test_filter(benchmark, rounds, sessions, lake, kind, column, engine):
    import prune_engine.spark as pes

    spark, (fact, _, stats) = sessions[kind], lake
    where = TS_FILTER if column == "ts" else ID_FILTER
    _record(benchmark, f"lake filter {column}", engine, kind)
    if engine == "plain":
        run = lambda: _collect(spark.read.parquet(fact).where(where))  # noqa: E731
    elif engine == KEPT:
        kept = pes.read(spark, fact, where, stats=stats).inputFiles()
        schema = spark.read.parquet(fact).schema
        run = lambda: _collect(spark.read.schema(schema).parquet(*kept).where(where))  # noqa: E731
    else:
        run = lambda: _collect(pes.read(spark, fact, where, stats=stats))  # noqa: E731
    df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df)


@pytest.mark.parametrize("kind", ["classic", "connect"])
@pytest.mark.parametrize("engine", ["plain", KEPT, "prune_engine"])
def test_join(benchmark, rounds, sessions, lake, kind, engine):
    import prune_engine.spark as pes

    spark, (fact, dim_path, stats) = sessions[kind], lake
    _record(benchmark, "lake join", engine, kind)
    if engine == KEPT:
        dim = spark.read.parquet(dim_path).where("region = 'north'")
        kept = [f for f in pes.join(spark, fact, dim, on=[("id", "key")],
                                    fact_stats=stats).inputFiles() if "/dim/" not in f]
        schema = spark.read.parquet(fact).schema

    def run():
        dim = spark.read.parquet(dim_path).where("region = 'north'")
        if engine == "plain":
            facts = spark.read.parquet(fact)
            return _collect(facts.join(dim, facts["id"] == dim["key"]))
        if engine == KEPT:
            facts = spark.read.schema(schema).parquet(*kept)
            return _collect(facts.join(dim, facts["id"] == dim["key"]))
        return _collect(pes.join(spark, fact, dim, on=[("id", "key")], fact_stats=stats))

    df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df) - 1  # the dimension's file


@pytest.mark.parametrize("kind", ["classic", "connect"])
def test_saved_stats(benchmark, rounds, sessions, lake, kind):
    """The refresh of saved statistics when nothing changed (the first call collects)."""
    from prune_engine.spark._saved import saved_stats

    spark, (fact, _, _) = sessions[kind], lake
    _record(benchmark, "lake saved stats", "prune_engine", kind)
    saved_stats(spark, fact)  # the first call: collected and saved
    stats = benchmark.pedantic(lambda: saved_stats(spark, fact), rounds=rounds(ROUNDS),
                               iterations=1, warmup_rounds=1)
    assert stats.metadata["refresh"]["reused"] == NUM_FILES
    benchmark.extra_info["files"] = NUM_FILES


#: the mount table the viewfs scenario reads the lake through
MOUNT = "pebench"


@pytest.fixture(scope="module")
def mounted(sessions, lake):
    """The fact folder behind ``viewfs://pebench/lake`` in both sessions, and its statistics
    aggregated by Spark (pyarrow cannot open ``viewfs://``)."""
    import prune_engine.spark as pes

    key = f"fs.viewfs.mounttable.{MOUNT}.link./lake"
    for spark in sessions.values():
        spark.conf.set(key, "file://" + lake[0])
    uri = f"viewfs://{MOUNT}/lake"
    yield uri, pes.collect_stats(sessions["classic"], uri, granularity="file")
    for spark in sessions.values():
        spark.conf.unset(key)


@pytest.mark.parametrize("kind", ["classic", "connect"])
@pytest.mark.parametrize("engine", ["plain", "prune_engine"])
def test_filter_through_spark(benchmark, rounds, sessions, mounted, kind, engine):
    """Spark lists a viewfs mount of the local disk asking each file's block locations in a
    call of its own (3 ms a file: 6 s for the lake; a mount of HDFS gets them with the
    listing), which would swamp both sides; so both list without them here
    (``spark.sql.sources.ignoreDataLocality``)."""
    import prune_engine.spark as pes
    from prune_engine.spark._session import setting

    spark, (uri, stats) = sessions[kind], mounted
    _record(benchmark, "lake through Spark, filter id", engine, kind)
    if engine == "plain":
        run = lambda: _collect(spark.read.parquet(uri).where(ID_FILTER))  # noqa: E731
    else:
        run = lambda: _collect(pes.read(spark, uri, ID_FILTER, stats=stats))  # noqa: E731
    with setting(spark, {"spark.sql.sources.ignoreDataLocality": "true"}):
        df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df)
