"""The demo lake and the two demos behind ``prune-engine demo`` and ``prune-engine spark-demo``.

:func:`make_lake` writes a small generated lake: Hive-partitioned Parquet files of web-shop
events, with a nested ``client`` struct and a list of ``items`` (the notebooks and the tests use
it too, with smaller sizes). The demo writes it, collects its statistics, runs a few queries,
and reports per query how many row groups were pruned and why; then it reads the result with
``pe.scan`` (only the kept row groups, only the nested leaves it selects) and checks that it
holds exactly the rows DuckDB finds in a full scan.

The Spark demo runs one pipeline on the same generated lake in a local Spark session: the
statistics collected by a Spark job, a pruned read and a pruned join, each with the files
Spark scanned with and without prune_engine and a check that the rows are the same.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DEMO_QUERIES = [
    "ts >= TIMESTAMP '2024-03-20 00:00:00' AND ts < TIMESTAMP '2024-03-21 00:00:00'",
    "country = 'IS' AND amount > 900",
    "user_id IN (17, 4242, 99991)",
    "url LIKE 'https://shop.example/checkout/%'",
    "url LIKE '%/gift-card/%'",
    "NOT (status IS NOT NULL) OR latency_ms > 4.5e3",
    "day = DATE '2024-03-05'",
    "client.app_version >= 519 AND client.os = 'ios'",
]
#: what the demo reads of each query's result: nested leaves, the struct shape kept
DEMO_COLUMNS = ["ts", "user_id", "client.os", "items.price"]

_PATHS = ["home", "search", "product/shoes", "product/hats", "cart", "checkout/pay", "checkout/done",
          "account/orders", "help/returns", "gift-card/redeem"]
_COUNTRIES = np.array(["DE", "FR", "US", "IS", "BR", "JP", "IN", "NG"])
_OS = np.array(["android", "ios", "web"])


def make_lake(root: Path, days: int = 20, files_per_day: int = 2, rows_per_file: int = 20_000,
              row_group_size: int = 5_000, seed: int = 7) -> list[Path]:
    """Write a deterministic lake under ``root/day=YYYY-MM-DD/part-N.parquet``."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2024-03-01T00:00:00", "us")
    written = []
    for d in range(days):
        day = start + np.timedelta64(d, "D")
        folder = root / f"day={str(day)[:10]}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(files_per_day):
            n = rows_per_file
            offsets = np.sort(rng.integers(0, 86_400_000_000 // files_per_day, n)) + f * (86_400_000_000 // files_per_day)
            ts = pa.array(day + offsets.astype("timedelta64[us]"), pa.timestamp("us", tz="UTC"))
            # users cluster by file; countries are mostly sorted within a file
            users = rng.integers(0, 5_000, n) + (d * files_per_day + f) * 2_500
            country = np.sort(rng.choice(_COUNTRIES, n, p=[.3, .2, .2, .01, .09, .1, .05, .05]))
            page = rng.choice(len(_PATHS), n, p=[.3, .2, .1, .1, .1, .06, .05, .05, .039, .001])
            if d % 3:
                page = np.where(page == len(_PATHS) - 1, 0, page)  # gift cards on some days only
            urls = [f"https://shop.example/{_PATHS[p]}/{u % 97}" for p, u in zip(page, users)]
            status = pa.array(rng.choice([200, 200, 200, 404, 500], n).astype(np.int16),
                              mask=rng.random(n) < 0.001)
            # one app release a day: versions grow with the day, so they prune
            client = pa.StructArray.from_arrays([
                pa.array(rng.choice(_OS, n)),
                pa.array((500 + d + rng.integers(-1, 1, n)).astype(np.int32)),
            ], names=["os", "app_version"])
            counts = rng.integers(0, 4, n)
            offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
            items = pa.ListArray.from_arrays(offsets, pa.StructArray.from_arrays([
                pa.array(rng.integers(0, 1000, int(offsets[-1]))),
                pa.array(np.round(rng.gamma(2.0, 25.0, int(offsets[-1])), 2)),
            ], names=["sku", "price"]))
            table = pa.table({
                "ts": ts,
                "user_id": pa.array(users, pa.int64()),
                "country": pa.array(country),
                "url": pa.array(urls),
                "amount": pa.array(np.round(rng.gamma(2.0, 80.0, n), 2)),
                "latency_ms": pa.array(rng.lognormal(4.0, 0.6, n)),
                "status": status,
                "client": client,
                "items": items,
            })
            path = folder / f"part-{f}.parquet"
            pq.write_table(table, path, row_group_size=row_group_size)
            written.append(path)
    return written


@contextlib.contextmanager
def _lake_dir(root: Path | None):
    """``root``, or a temporary directory removed afterwards."""
    if root is not None:
        yield root
        return
    with tempfile.TemporaryDirectory(prefix="prune_engine_demo_") as tmp:
        yield Path(tmp)


def run_demo(root: Path | None = None, out=sys.stdout) -> None:
    with _lake_dir(root) as lake:
        _run_demo(lake, out)


def _run_demo(root: Path, out) -> None:
    import prune_engine as pe

    write = lambda s="": print(s, file=out)  # noqa: E731
    t0 = time.perf_counter()
    files = make_lake(root)
    write(f"generated lake: {len(files)} Parquet files, "
          f"{sum(pq.ParquetFile(f).metadata.num_row_groups for f in files)} row groups "
          f"({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    stats = pe.collect_stats(root, granularity="row_group", ngram=["url"], progress=False)
    write(f"statistics: {stats.num_rows} containers, from the footers (+ an n-gram index on url) "
          f"in {time.perf_counter() - t0:.2f} s")
    write("")
    for query in DEMO_QUERIES:
        t0 = time.perf_counter()
        report = pe.explain(stats, query)
        elapsed = (time.perf_counter() - t0) * 1e3
        keep = report.column("keep").to_numpy(zero_copy_only=False)
        reasons = report.column("reason").to_pylist()
        write(f"query: {query}")
        write(f"  kept {int(keep.sum())} of {len(keep)} row groups "
              f"({100 * (1 - keep.mean()):.0f}% pruned) in {elapsed:.2f} ms")
        counts: dict[str, int] = {}
        for r in reasons:
            if r is not None:
                counts[r] = counts.get(r, 0) + 1
        for reason, count in sorted(counts.items(), key=lambda kv: -kv[1])[:3]:
            write(f"    {count:4d} pruned because {reason}")
        t0 = time.perf_counter()
        result = pe.scan(root, where=query, columns=DEMO_COLUMNS, stats=stats)
        elapsed = time.perf_counter() - t0
        full = _matching_rows(stats, query)
        verdict = "same rows as a full scan" if full == result.num_rows else "MISMATCH: rows lost"
        write(f"  pe.scan read {int(keep.sum())} row groups, columns {', '.join(DEMO_COLUMNS)}: "
              f"{result.num_rows} rows in {elapsed * 1e3:.0f} ms; DuckDB over every row "
              f"group: {full}: {verdict}")
        if result.num_rows:
            first = result.slice(0, 1).to_pylist()[0]
            write(f"    first row: client={first['client']}, items={first['items']}")
        write("")
        if full != result.num_rows:
            raise SystemExit("the demo found a wrong prune")


SPARK_READ = ("ts >= timestamp'2024-03-20 06:00:00' AND ts < timestamp'2024-03-20 09:00:00' "
              "AND country = 'IS'")
#: users of one campaign: their ids cluster in a few files (see ``make_lake``)
SPARK_CAMPAIGN = [1_000, 1_001, 60_250, 60_251, 91_000]


def run_spark_demo(root: Path | None = None, out=sys.stdout) -> None:
    """The Spark pipeline on the generated lake (see the module doc). Without pyspark, or
    without a Java that can start Spark, a
    :class:`~prune_engine.errors.MissingDependencyError` that says what to install."""
    _spark_session_class()  # before a temporary lake is made
    with _lake_dir(root) as lake:
        _run_spark_demo(lake, out)


def _spark_session_class():
    """pyspark's ``SparkSession``, or a :class:`~prune_engine.errors.MissingDependencyError`
    saying how to install it."""
    from prune_engine.errors import MissingDependencyError

    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise MissingDependencyError(
            f"the Spark demo needs pyspark, which cannot be imported ({e}): pip install "
            "'prune_engine[spark]' (and Java 17)", package="pyspark") from None
    return SparkSession


def _local_session(SparkSession):
    """A ``local[2]`` session for the demo; a Spark that cannot start (no Java, a Java that is
    too old) is a :class:`~prune_engine.errors.MissingDependencyError` in one line."""
    from prune_engine.errors import MissingDependencyError

    try:
        return (SparkSession.builder.master("local[2]").appName("prune_engine-demo")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    except Exception as e:  # pyspark raises its own types (PySparkRuntimeError, Py4JError)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise MissingDependencyError(f"cannot start a local Spark session: {first} (the Spark "
                                     "demo needs Java 17: java on PATH or JAVA_HOME)",
                                     package="java") from None


def _run_spark_demo(root: Path, out) -> None:
    import os

    SparkSession = _spark_session_class()  # before the lake is written: fail fast

    import prune_engine.spark as pes

    write = lambda s="": print(s, file=out)  # noqa: E731
    make_lake(root)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's workers: this Python
    t0 = time.perf_counter()
    spark = _local_session(SparkSession)
    spark.sparkContext.setLogLevel("ERROR")
    write(f"local Spark {spark.version} session ({time.perf_counter() - t0:.1f} s)")
    try:
        t0 = time.perf_counter()
        stats = pes.collect_stats(spark, str(root), granularity="file", ngram=["url"])
        write(f"statistics of {stats.num_rows} files, footers and n-gram index read by Spark's "
              f"executors, in {time.perf_counter() - t0:.1f} s")
        write("")
        plain = spark.read.parquet(str(root)).where(SPARK_READ)
        pruned, summary = pes.read(spark, str(root), SPARK_READ, stats=stats, return_summary=True)
        _spark_step(write, f"read: {SPARK_READ}", plain, pruned, summary)
        campaign = spark.createDataFrame([(u, "spring") for u in SPARK_CAMPAIGN],
                                         "user_id long, campaign string")
        events = spark.read.parquet(str(root))
        plain = events.join(campaign, events["user_id"] == campaign["user_id"])
        pruned, summary = pes.join(spark, str(root), campaign, on=[("user_id", "user_id")],
                                   fact_stats=stats, return_summary=True)
        _spark_step(write, f"join: events with the {len(SPARK_CAMPAIGN)} users of a campaign "
                           "(user_id is no partition column)", plain, pruned, summary)
    finally:
        spark.stop()


@dataclass
class SparkComparison:
    """One query run twice in Spark: plainly and with prune_engine (:func:`compare_with_plain`)."""

    files_plain: int
    files_pruned: int
    rows_plain: int
    rows_pruned: int
    same_rows: bool
    plain_seconds: float
    pruned_seconds: float


def compare_with_plain(plain, pruned) -> SparkComparison:
    """Collect the plain and the pruned DataFrame; the files each scan opened, their rows
    (compared as sorted lists: the pruned read must find exactly the plain read's rows) and
    their times."""
    import prune_engine.spark as pes

    t0 = time.perf_counter()
    plain_rows = plain.collect()
    plain_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = pruned.collect()
    pruned_s = time.perf_counter() - t0
    same = sorted(map(repr, rows)) == sorted(map(repr, plain_rows))
    return SparkComparison(pes.files_scanned(plain), pes.files_scanned(pruned), len(plain_rows),
                           len(rows), same, plain_s, pruned_s)


def _spark_step(write, title: str, plain, pruned, summary) -> None:
    run = compare_with_plain(plain, pruned)
    write(title)
    write(f"  plain Spark:       {run.files_plain:4d} files scanned, "
          f"{run.rows_plain} rows, {run.plain_seconds:.2f} s")
    write(f"  with prune_engine: {run.files_pruned:4d} files scanned, {run.rows_pruned} rows, "
          f"{run.pruned_seconds:.2f} s (+ {summary.prune_seconds * 1e3:.0f} ms pruning on the "
          "driver)")
    write(f"  {'same rows as plain Spark' if run.same_rows else 'MISMATCH: rows differ'}")
    write("")
    if not run.same_rows:
        raise SystemExit("the Spark demo found a wrong prune")


def _matching_rows(stats, query: str) -> int:
    """Rows matching ``query`` in every row group (by DuckDB)."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    files: dict[str, pq.ParquetFile] = {}
    full = 0
    for path, rg in zip(stats.table.column("path").to_pylist(),
                        stats.table.column("row_group").to_pylist()):
        pf = files.setdefault(path, pq.ParquetFile(path))
        part = pf.read_row_group(rg)
        day = np.datetime64(Path(path).parent.name.split("=", 1)[1], "D")
        part = part.append_column("day", pa.array(np.full(part.num_rows, day), pa.date32()))
        con.register("rg", part)
        count = con.execute(f"SELECT count(*) FROM rg WHERE {query}").fetchall()[0][0]
        con.unregister("rg")
        full += count
    return full
