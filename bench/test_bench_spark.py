"""Speed of prune_engine on Spark (issue #9, Speed), side by side with plain Spark.

One generated lake (written once per session into a temp dir, never committed): 2,000 Parquet
files, not partitioned, clustered on a timestamp (file k holds hour k) and a key (file k holds
keys 500k .. 500k+499), and a dimension table of one row per key with a region. One local[2]
session runs both sides; its defaults are kept (Parquet filter pushdown, adaptive execution,
dynamic partition pruning and the runtime Bloom filter all on). Groups:

    spark filter      a selective filter (1% of the files match), end to end to the collected
                      rows: plain Spark (``spark.read.parquet(...).where(...)``, its own Parquet
                      pushdown) against ``pes.read`` (statistics collected beforehand)
    spark join        a star join whose dimension filter selects 1% of the fact files through a
                      non-partition key: the plain join against ``pes.join``
    spark collect     statistics of the 2,000 files: ``pe.collect_stats`` (local threads)
                      against ``pes.collect_stats`` (a Spark job; footers read by executors)
    spark first call  ``pes.prune_dataframe``'s first job in a fresh session whose Python
                      workers already run (an identity ``mapInArrow`` job before it): the
                      workers import prune_engine and load (warm numba cache) or compile
                      (cold cache) the kernels, two at once; the second job is the warm cost

``extra_info`` holds the files Spark scanned (``files_scanned``, from the scan nodes'
``numFiles`` metric), the kept count and the driver time spent pruning (``prune_s``).
``bench/report.py`` prints the table and checks the issue's targets. ``SPARK_BENCH_FILES`` shrinks
the lake (the filter and the join still select 1% of it) and ``--bench-rounds`` the rounds. Run::

    python -m pytest bench/test_bench_spark.py --benchmark-json=spark.json -q
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe

NUM_FILES = int(os.environ.get("SPARK_BENCH_FILES", 2_000))
ROWS = 500
#: timed runs per Spark scenario (the machine is shared: medians of five)
ROUNDS = 5
START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def _hour(k: int) -> str:
    return f"timestamp'{START + dt.timedelta(hours=k):%Y-%m-%d %H:%M:%S}+00:00'"


#: the hours of 1% of the files, from file 30% of the way in (2,000 files: files 600..619,
#: 2024-01-26 00:00 to 20:00)
FILTER = (f"ts >= {_hour(NUM_FILES * 3 // 10)} "
          f"AND ts < {_hour(NUM_FILES * 3 // 10 + max(1, NUM_FILES // 100))} AND amount > 10")
#: the dimension rows of 'north' hold the keys of every 100th file: 1% of the fact files
NORTH_FILES = list(range(7, NUM_FILES, 100))


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("spark_lake")
    fact = root / "fact"
    fact.mkdir()
    rng = np.random.default_rng(0)
    countries = np.array(["DE", "FR", "US", "IS", "BR", "JP"])
    for k in range(NUM_FILES):
        offsets = np.sort(rng.integers(0, 3_600_000_000, ROWS))  # microseconds within hour k
        ts = pa.array(np.datetime64(START.replace(tzinfo=None), "us") + np.timedelta64(k, "h")
                      + offsets.astype("timedelta64[us]"), pa.timestamp("us", tz="UTC"))
        table = pa.table({
            "ts": ts,
            "key": pa.array(np.sort(rng.integers(k * 500, k * 500 + 500, ROWS)), pa.int64()),
            "amount": pa.array(np.round(rng.gamma(2.0, 40.0, ROWS), 2)),
            "country": pa.array(countries[rng.integers(0, len(countries), ROWS)]),
            "url": pa.array([f"https://shop.example/p/{v}" for v in rng.integers(0, 10_000, ROWS)]),
        })
        pq.write_table(table, str(fact / f"part-{k:05d}.parquet"))
    keys = np.arange(NUM_FILES * 500)
    north = np.isin(keys // 500, NORTH_FILES)
    dim = pa.table({"key": pa.array(keys, pa.int64()),
                    "region": pa.array(np.where(north, "north", "south")),
                    "manager": pa.array([f"m{k % 97}" for k in keys])})
    pq.write_table(dim, str(root / "stores.parquet"))
    stats = pe.collect_stats(str(fact), granularity="file", progress=False)
    return str(fact), str(root / "stores.parquet"), stats


def _record(benchmark, group: str, engine: str, **info):
    benchmark.group = group
    benchmark.extra_info.update({"group": group, "engine": engine, **info})


def test_filter_plain_spark(benchmark, rounds, spark, lake):
    import prune_engine.spark as pes

    fact, _, _ = lake
    _record(benchmark, "spark filter", "plain")
    df = benchmark.pedantic(lambda: _run(spark.read.parquet(fact).where(FILTER)),
                            rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df)
    benchmark.extra_info["rows"] = df.count()


def test_filter_prune_engine(benchmark, rounds, spark, lake):
    import prune_engine.spark as pes

    fact, _, stats = lake
    _record(benchmark, "spark filter", "prune_engine")
    summaries = []

    def run():
        df, summary = pes.read(spark, fact, FILTER, stats=stats, return_summary=True)
        summaries.append(summary)
        return _run(df)

    df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    _summarize(benchmark, df, summaries)


def test_join_plain_spark(benchmark, rounds, spark, lake):
    import prune_engine.spark as pes

    fact, stores, _ = lake
    _record(benchmark, "spark join", "plain",
            dpp=spark.conf.get("spark.sql.optimizer.dynamicPartitionPruning.enabled"),
            runtime_bloom=spark.conf.get("spark.sql.optimizer.runtime.bloomFilter.enabled"))

    def run():
        facts = spark.read.parquet(fact)
        dim = spark.read.parquet(stores).where("region = 'north'")
        return _run(facts.join(dim, facts["key"] == dim["key"]))

    df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df) - 1  # the dimension's file


def test_join_prune_engine(benchmark, rounds, spark, lake):
    import prune_engine.spark as pes

    fact, stores, stats = lake
    _record(benchmark, "spark join", "prune_engine")
    summaries = []

    def run():
        dim = spark.read.parquet(stores).where("region = 'north'")
        df, summary = pes.join(spark, fact, dim, on=[("key", "key")], fact_stats=stats,
                               return_summary=True)
        summaries.append(summary)
        return _run(df)

    df = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    _summarize(benchmark, df, summaries, dimension_files=1)
    benchmark.extra_info["keys_s"] = float(np.median([s.join_keys["seconds"] for s in summaries]))


def _run(df):
    df.collect()
    return df


def _summarize(benchmark, df, summaries, dimension_files: int = 0):
    import prune_engine.spark as pes

    benchmark.extra_info.update({
        "files_scanned": pes.files_scanned(df) - dimension_files,
        "kept": summaries[-1].files_read,
        "files_total": summaries[-1].files_total,
        "prune_s": float(np.median([s.prune_seconds for s in summaries])),
        "rows": df.count(),
    })


def test_collect_local(benchmark, rounds, lake):
    _record(benchmark, "spark collect", "pe.collect_stats")
    stats = benchmark.pedantic(lambda: pe.collect_stats(lake[0], granularity="file",
                                                        progress=False),
                               rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    assert stats.num_rows == NUM_FILES


def test_collect_spark_job(benchmark, rounds, spark, lake):
    import prune_engine.spark as pes

    _record(benchmark, "spark collect", "pes.collect_stats")
    stats = benchmark.pedantic(lambda: pes.collect_stats(spark, lake[0], granularity="file"),
                               rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    assert stats.table.equals(lake[2].table)


_FIRST_CALL = r"""
import os, sys, time
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
import prune_engine.spark as pes
frame = spark.read.parquet(sys.argv[1]).repartition(2)
frame.select("container").collect()  # the JVM's own first job
t = time.perf_counter()
frame.mapInArrow(lambda batches: batches, frame.schema).count()  # Python workers start
python_job = time.perf_counter() - t
expr = "key IN (7, 9, 7007, 500000, 999999) AND url LIKE '%/p/42%'"
times = []
for _ in range(2):
    t = time.perf_counter()
    kept = sum(r.keep for r in pes.prune_dataframe(frame, expr).select("keep").collect())
    times.append(time.perf_counter() - t)
print(python_job, times[0], times[1], kept)
spark.stop()
"""


def _fresh_session(benchmark, code: str, argument: str, cache: str,
                   fill: str | None = None) -> list[float]:
    """Run ``code`` (a fresh Spark session's script printing its numbers) once, timed, with
    an empty numba cache ("cold") or one its own earlier run filled ("warm"; ``fill``: code
    that fills it with what that run may not have waited for)."""
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYSPARK_PYTHON=sys.executable)
        if cache == "warm":
            subprocess.run([sys.executable, "-c", code, argument], env=env, check=True,
                           capture_output=True)
            if fill:
                subprocess.run([sys.executable, "-c", fill], env=env, check=True,
                               capture_output=True)

        def run():
            out = subprocess.run([sys.executable, "-c", code, argument], env=env, check=True,
                                 capture_output=True, text=True)
            return [float(v) for v in out.stdout.split()]

        return benchmark.pedantic(run, rounds=1, iterations=1)


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_executor_first_call(benchmark, lake, tmp_path_factory, cache):
    """A fresh session's first ``prune_dataframe`` job: two executor processes import
    prune_engine and compile (cold) or load (warm) the numba kernels at the same time."""
    fact, _, _ = lake
    stats_path = str(tmp_path_factory.mktemp("first_call") / "stats.parquet")
    pe.collect_stats(fact, granularity="file", ngram=["url"], progress=False).save(stats_path)
    _record(benchmark, "spark first call", cache)
    python_job, first, second, kept = _fresh_session(benchmark, _FIRST_CALL, stats_path, cache)
    benchmark.extra_info.update({"python_job_s": python_job, "first_job_s": first,
                                 "second_job_s": second, "kept": int(kept)})


_FIRST_COLLECT = r"""
import sys, time
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
import prune_engine.spark as pes
spark.range(2).repartition(2).mapInArrow(lambda b: b, "id long").count()  # workers start
times = []
for _ in range(2):
    t = time.perf_counter()
    stats = pes.collect_stats(spark, sys.argv[1], granularity="file")
    times.append(time.perf_counter() - t)
print(times[0], times[1], stats.num_rows)
spark.stop()
"""


#: fills numba's cache with the footer kernels: the earlier run's executors compile them in a
#: child process that ``spark.stop()`` ends before it writes the cache (its jobs take seconds)
_FILL_FOOTER_KERNELS = ("from prune_engine.stats.parquet import FOOTER_KERNELS as K; "
                        "assert K.wait(600) and K._cached(__import__('prune_engine.stats._thrift', "
                        "fromlist=['_']))")


@pytest.mark.parametrize("files", [300, NUM_FILES])
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_executor_first_collect(benchmark, lake, cache, files):
    """A fresh session's first statistics job of 300 files (the first-call suite's local
    lake size) or of the 2,000 (its Python workers already started): the executors decode
    with the footer kernels' Python twins while numba compiles beside them (cold), or load
    the kernels from the cache (warm)."""
    fact, _, _ = lake
    _record(benchmark, "spark first collect", cache)
    source = fact if files == NUM_FILES else os.path.join(fact, "part-00[0-2]*.parquet")
    first, second, collected = _fresh_session(benchmark, _FIRST_COLLECT, source, cache,
                                              fill=_FILL_FOOTER_KERNELS)
    assert int(collected) == min(files, NUM_FILES)
    benchmark.extra_info.update({"first_job_s": first, "second_job_s": second,
                                 "files": int(collected)})
