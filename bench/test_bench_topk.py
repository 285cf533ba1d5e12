"""Beyond keep or skip (issue #23): ``ORDER BY ts DESC LIMIT 100`` and ``COUNT(*) WHERE ts >=
...`` answered from the statistics and the fewest containers, and the cost of
``pe.classify`` (none / some / all) against ``pe.prune`` (keep / skip).

Two lakes, written once per session into a temp dir (fixed seed), each of 2,000 Parquet files
(``TOPK_BENCH_FILES``; quick mode: 200) of ``ROWS_PER_FILE`` rows in row groups of
``ROW_GROUP_ROWS`` rows: ``ts`` (timestamp[us], no time zone), ``v`` (float64, normal, the same
in every file: unclustered) and ``s`` (8 random characters):

    clustered     file ``i`` holds ``ts`` in hour ``i`` from 2024-01-01, sorted (as a writer
                  that sorts or clusters on ``ts`` leaves it): every file and row group spans
                  a range of its own
    unclustered   ``ts`` drawn uniformly over the same hours in every file, unsorted: every
                  row group spans almost the whole range, the honest worst case (statistics
                  rule out next to nothing; top-k must read each row group that holds one of
                  the first 100 rows, about 100 of them)

The expected answers come from the generated values themselves (every engine's answer is
checked against them: the multiset of the 100 ``ts`` keys, and the count). Groups:

    topk order <lake> N files   ``SELECT * ORDER BY ts DESC LIMIT 100``: ``pe.scan(lake,
                                order_by="ts DESC", limit=100, stats=...)`` with file and with
                                row-group statistics collected beforehand, and without
                                (collected from the footers it reads anyway); DuckDB
                                (``read_parquet``: its TOP_N pushes a dynamic filter into the
                                scan); pyarrow.dataset (``to_table()`` then ``select_k``: it
                                reads everything); DataFusion (when installed: it orders the
                                files by their statistics and pushes a dynamic filter); plain
                                Spark (``spark.read.parquet(lake).orderBy(desc("ts"))
                                .limit(100)``) and ``pes.read(..., order_by=, limit=)``
    topk count <lake> N files   ``COUNT(*) WHERE ts >= <a value inside file N/2>``:
                                ``pe.aggregate(stats, "COUNT(*)", where, source=lake)``
                                (file and row-group statistics: the containers the statistics
                                cannot answer for are read, the others counted from
                                ``num_records``), DuckDB, pyarrow.dataset (``count_rows``),
                                DataFusion, plain Spark and ``pes.count``
    topk classify N containers  ``pe.prune`` and ``pe.classify`` over a statistics table of
                                1,000,000 containers (``TOPK_BENCH_CONTAINERS``; quick mode:
                                100,000) built in the layout directly: a ``ts`` leaf
                                (clustered: container ``i`` spans minute ``i``) and a float
                                leaf ``x`` with null and NaN counts (5% of the NaN counts
                                unknown), for a range on ``ts``, an AND of ``ts`` and ``x``,
                                ``ts IN`` 20 values, a range on a clustered ``url`` leaf
                                (57 bytes of prefix, not all ASCII), and ``x > 40`` alone
                                (unclustered: the kept containers are scattered over the
                                whole table, so the "all" test reads the other bound of every
                                one of them: the worst case); warm (the table's column views cached, as
                                ``bench/test_bench_prune.py`` times ``prune``)
    topk first call             a fresh process's import and first ``pe.scan`` top-k of the
                                clustered lake (statistics from its footers), numba cache
                                cold or warm (filled beforehand by a process that compiles
                                the kernels itself: the cold call's own fill goes on in the
                                background after it returns)

``extra_info`` of the order and count groups: ``engine``, ``lake``, ``files``,
``files_opened`` (files whose footer the query reads), ``files_read`` (files whose data it
reads), ``row_groups_read`` / ``row_groups_total`` and ``rows_scanned`` where the engine says,
and ``rows`` (rows returned, or the count). Taken from each engine's own account of the timed
query (or of one more run of it):

    pe.scan           its summary (``return_summary=True``): ``footers_read`` (with
                      statistics from ``collect_stats``, only the files it reads: the others'
                      schemas and row groups are recorded there), ``files_read``,
                      ``row_groups_read``;
                      ``kept_by_stats``: the containers ``pe.prune_topk`` keeps before reading
    pe.aggregate      ``containers_read``, and the distinct files of the containers read
                      (whose footers are the only ones it opens)
                      (``must_read``); its planner opens every listed file's footer
    DuckDB            ``EXPLAIN (ANALYZE, FORMAT JSON)`` (``engine_metrics.duckdb_scan``):
                      ``Total Files Read``, ``row_groups_scanned`` of ``total_row_groups_to_scan``
    pyarrow.dataset   top-k: every file and row group; count: every footer and the row groups
                      min/max keep (``engine_metrics.pyarrow_scan``)
    DataFusion        the scan's (``DataSourceExec``) metrics of the executed plan:
                      ``files_read`` the files with ``bytes_scanned`` > 0, ``rows_scanned`` its
                      output rows (whole row groups: filter pushdown into the decoder is off by
                      default), row groups = rows / ``ROW_GROUP_ROWS``
    Spark             the ``FileSourceScanExec`` metrics of the last timed run
                      (``pes.files_scanned``: ``number of files read``; ``number of output
                      rows``), row groups = rows / ``ROW_GROUP_ROWS`` (every row group holds as
                      many rows; the vectorized reader outputs whole row groups); ``pes.read``
                      and ``pes.count`` also their summary (``return_summary=True``):
                      ``files_read`` (the files left to Spark; ``pes.count`` runs its own job,
                      so its summary is all there is), ``prune_s``, ``from_statistics``

The issue's targets, in ``extra_info`` (``target``, ``meets_target``) and in the report: on
the clustered lake, top-k reads at most 2 files and the count only the 1-2 boundary files;
``pe.classify`` at most 1.5x ``pe.prune``'s time (``classify_over_prune``: the ratio of the two
benchmarks' medians; ``classify_over_prune_paired``: the median ratio of 11 back-to-back
pairs, less sensitive to a loaded machine). A target missed is reported, not failed; a wrong
answer fails.

Quick mode (``--bench-rounds`` given, as ``bench/run.py --quick`` does): 200 files, 100,000
containers. ``-k "not spark"`` leaves Spark out. Run::

    python -m pytest bench/test_bench_topk.py --benchmark-json=topk.json -q
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import engine_metrics
import prune_engine as pe
from first_call import first_call_seconds, measure
from sizes import lake_files

FULL_FILES = 2_000
QUICK_FILES = 200
FULL_CONTAINERS = 1_000_000
QUICK_CONTAINERS = 100_000
ROWS_PER_FILE = 2_000
ROW_GROUP_ROWS = 500
LIMIT = 100
ORDER = "ts DESC"
HOUR_US = 3_600 * 10**6
#: 2024-01-01 00:00:00 in microseconds since the epoch
BASE_US = int(np.datetime64("2024-01-01T00:00:00", "us").astype(np.int64))
EPOCH = dt.datetime(1970, 1, 1)
#: the issue's targets
TOPK_FILES_TARGET = 2
COUNT_FILES_TARGET = 2
CLASSIFY_RATIO_TARGET = 1.5
#: back-to-back prune / classify pairs of the paired ratio
PAIRS = 11
LAKES = ["clustered", "unclustered"]
_ALPHABET = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", np.uint8)
#: medians of this run: (group, predicate) -> seconds of pe.prune
_PRUNE: dict[tuple[str, str], float] = {}


def _num_files(config) -> int:
    return lake_files(config, "TOPK_BENCH_FILES", FULL_FILES, QUICK_FILES)


def _num_containers(config) -> int:
    return lake_files(config, "TOPK_BENCH_CONTAINERS", FULL_CONTAINERS, QUICK_CONTAINERS)


# -- the lakes -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Lake:
    """A written lake: its kind, directory and files, its row groups, the count's cutoff (in
    microseconds) and the expected answers: the first ``LIMIT`` keys of ``ORDER BY ts DESC``
    (int64 microseconds, descending) and ``COUNT(*) WHERE ts >= cutoff``."""

    kind: str
    root: str
    files: list[str]
    row_groups: int
    cutoff_us: int
    top_keys: list[int]
    count: int


def _cutoff_us(num_files: int) -> int:
    """A value inside file ``num_files // 2`` of the clustered lake (37% into its hour,
    whole seconds: inside its second row group, not on a row-group boundary)."""
    return BASE_US + (num_files // 2) * HOUR_US + 1_332 * 10**6


def write_lake(root: str, num_files: int, clustered: bool, seed: int = 0) -> Lake:
    """Write ``num_files`` files ``part-00000.parquet``... into ``root`` (which must exist)."""
    rng = np.random.default_rng(seed)
    files, keys = [], []
    cutoff = _cutoff_us(num_files)
    count = 0
    for i in range(num_files):
        n = ROWS_PER_FILE
        if clustered:
            ts = BASE_US + i * HOUR_US + np.sort(rng.integers(0, HOUR_US, n))
        else:
            ts = BASE_US + rng.integers(0, num_files * HOUR_US, n)
        s = _ALPHABET[rng.integers(0, len(_ALPHABET), (n, 8))].view("S8").ravel().astype(str)
        path = os.path.join(root, f"part-{i:05d}.parquet")
        pq.write_table(pa.table({"ts": pa.array(ts, pa.timestamp("us")),
                                 "v": rng.normal(size=n), "s": s}),
                       path, row_group_size=ROW_GROUP_ROWS)
        files.append(path)
        keys.append(np.sort(ts)[-LIMIT:])
        count += int((ts >= cutoff).sum())
    top = np.sort(np.concatenate(keys))[::-1][:LIMIT]
    return Lake("clustered" if clustered else "unclustered", root, files,
                num_files * (ROWS_PER_FILE // ROW_GROUP_ROWS), cutoff,
                [int(k) for k in top], count)


@pytest.fixture(scope="session")
def lakes(pytestconfig, tmp_path_factory) -> dict[str, Lake]:
    files = _num_files(pytestconfig)
    return {kind: write_lake(str(tmp_path_factory.mktemp(f"topk_{kind}")), files,
                             kind == "clustered", seed=i)
            for i, kind in enumerate(LAKES)}


@pytest.fixture(scope="session")
def lake_stats(lakes):
    """(lake kind, granularity) -> the lake's statistics from its footers."""
    return {(kind, g): pe.collect_stats(lake.root, granularity=g, progress=False)
            for kind, lake in lakes.items() for g in ("file", "row_group")}


def _ts_sql(us: int, ntz: bool = False) -> str:
    """``TIMESTAMP '2024-01-02 03:04:05'`` (Spark: ``TIMESTAMP_NTZ``, the type of a
    timestamp without time zone in Parquet)."""
    value = np.datetime64(us // 10**6, "s") if us % 10**6 == 0 else np.datetime64(us, "us")
    text = str(value).replace("T", " ")
    return f"TIMESTAMP{'_NTZ' if ntz else ''} '{text}'"


def _where(lake: Lake, ntz: bool = False) -> str:
    return f"ts >= {_ts_sql(lake.cutoff_us, ntz)}"


def _keys(values) -> list[int]:
    """A result's ``ts`` keys as int64 microseconds, descending (Arrow arrays or datetimes)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        out = pc.cast(values, pa.int64()).to_pylist()
    else:
        out = [(v - EPOCH) // dt.timedelta(microseconds=1) for v in values]
    return sorted(out, reverse=True)


def _check_top(lake: Lake, keys: list[int], engine: str) -> None:
    assert keys == lake.top_keys, (
        f"{engine}: the {LIMIT} keys of ORDER BY ts DESC differ from the data's "
        f"({len(set(keys) ^ set(lake.top_keys))} differ)")


def _row_groups_of(rows: int | None) -> int | None:
    """Whole row groups behind ``rows`` scanned rows (every row group holds
    ``ROW_GROUP_ROWS``); None when they are not whole."""
    if rows is None or rows % ROW_GROUP_ROWS:
        return None
    return rows // ROW_GROUP_ROWS


def _group(kind: str, lake: Lake) -> str:
    return f"topk {kind} {lake.kind} {len(lake.files)} files"


def _record(benchmark, group: str, engine: str, lake: Lake, query: str, **info):
    benchmark.group = group
    benchmark.extra_info.update({"engine": engine, "lake": lake.kind, "scenario": query,
                                 "files": len(lake.files),
                                 "row_groups_total": lake.row_groups, **info})


def _target(benchmark, lake: Lake, target: int) -> None:
    """The issue's files target, on the clustered lake only (the unclustered one shows what
    the statistics cannot do)."""
    if lake.kind == "clustered" and benchmark.extra_info.get("files_read") is not None:
        benchmark.extra_info.update(target_files=target,
                                    meets_target=benchmark.extra_info["files_read"] <= target)


def _note(benchmark, lake: Lake) -> None:
    """The row of the table printed at the end of the suite (``engine_metrics``)."""
    engine_metrics.note(benchmark, f"{lake.kind} ({len(lake.files):,} files)")


def _time(benchmark, rounds, fn, n: int = 5):
    return benchmark.pedantic(fn, rounds=rounds(n), iterations=1, warmup_rounds=1)


# -- ORDER BY ts DESC LIMIT 100 ---------------------------------------------------------------

TOPK_QUERY = f"ORDER BY {ORDER} LIMIT {LIMIT}"


@pytest.mark.parametrize("granularity", ["row_group", "file", "footers"])
@pytest.mark.parametrize("kind", LAKES)
def test_topk_pe_scan(benchmark, rounds, lakes, lake_stats, kind, granularity):
    """``pe.scan(lake, order_by="ts DESC", limit=100, stats=...)``: with row-group or file
    statistics collected beforehand, or none (``footers``: collected by the scan from the
    footers its planner reads anyway)."""
    lake = lakes[kind]
    stats = None if granularity == "footers" else lake_stats[kind, granularity]
    engine = {"row_group": "pe.scan (row-group stats)", "file": "pe.scan (file stats)",
              "footers": "pe.scan (stats from footers)"}[granularity]
    summaries = []

    def run():
        table, summary = pe.scan(lake.root, stats=stats, order_by=ORDER, limit=LIMIT,
                                 return_summary=True)
        summaries.append(summary)
        return table

    _record(benchmark, _group("order", lake), engine, lake, TOPK_QUERY, granularity=granularity)
    table = _time(benchmark, rounds, run)
    _check_top(lake, _keys(table.column("ts")), engine)
    s = summaries[-1]
    benchmark.extra_info.update(rows=table.num_rows, files_opened=s.footers_read,
                                files_read=s.files_read, row_groups_read=s.row_groups_read,
                                row_groups_total=s.row_groups_total)
    if stats is not None:
        kept = pe.prune_topk(stats, None, order_by=ORDER, limit=LIMIT)
        # (not "containers": report.py reads that key as a keep-mask result's)
        benchmark.extra_info.update(kept_by_stats=int(pc.sum(kept).as_py() or 0),
                                    stats_containers=stats.num_rows)
    _target(benchmark, lake, TOPK_FILES_TARGET)
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_topk_duckdb(benchmark, rounds, lakes, kind):
    """DuckDB: ``SELECT * FROM read_parquet('<lake>/*.parquet') ORDER BY ts DESC LIMIT 100``;
    files and row groups from ``EXPLAIN (ANALYZE, FORMAT JSON)`` of the same query."""
    import duckdb

    lake = lakes[kind]
    con = duckdb.connect()
    sql = (f"SELECT * FROM read_parquet('{os.path.join(lake.root, '*.parquet')}') "
           f"{TOPK_QUERY}")
    _record(benchmark, _group("order", lake), "duckdb", lake, TOPK_QUERY,
            threads=con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    table = _time(benchmark, rounds, lambda: con.sql(sql).to_arrow_table())
    _check_top(lake, _keys(table.column("ts")), "duckdb")
    counts = engine_metrics.duckdb_scan(con, sql)
    assert counts.pop("row_groups_to_scan") == lake.row_groups
    benchmark.extra_info.update(rows=table.num_rows, **counts)
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_topk_pyarrow_dataset(benchmark, rounds, lakes, kind):
    """pyarrow.dataset: ``dataset.to_table()`` then the top-k kernel (``select_k_unstable``):
    every file and row group is read."""
    lake = lakes[kind]
    dataset = ds.dataset(lake.root, format="parquet")

    def run():
        table = dataset.to_table()
        return table.take(pc.select_k_unstable(table, LIMIT, [("ts", "descending")]))

    _record(benchmark, _group("order", lake), "pyarrow.dataset", lake, TOPK_QUERY)
    table = _time(benchmark, rounds, run)
    _check_top(lake, _keys(table.column("ts")), "pyarrow.dataset")
    files = len(list(dataset.get_fragments()))
    benchmark.extra_info.update(rows=table.num_rows, files_opened=files, files_read=files,
                                row_groups_read=lake.row_groups,
                                rows_scanned=len(lake.files) * ROWS_PER_FILE)
    _note(benchmark, lake)


def _datafusion_read(df) -> dict:
    """Files whose data the parquet scans of ``df`` read (``bytes_scanned`` > 0), the rows
    they output and the whole row groups behind them (after ``to_arrow_table``)."""
    files, rows = set(), 0
    stack = [df.execution_plan()]
    while stack:
        node = stack.pop()
        stack.extend(node.children())
        if not node.display().startswith("DataSourceExec"):
            continue
        metrics = node.metrics()
        for m in metrics.metrics():
            if m.name == "bytes_scanned" and (m.value or 0) > 0 and "filename" in m.labels():
                files.add(m.labels()["filename"])
        rows += metrics.output_rows or 0
    return {"files_read": len(files), "rows_scanned": rows,
            "row_groups_read": _row_groups_of(rows)}


def _datafusion(lake: Lake):
    import datafusion

    ctx = datafusion.SessionContext()
    ctx.register_parquet("lake", lake.root)
    return ctx


@pytest.mark.parametrize("kind", LAKES)
def test_topk_datafusion(benchmark, rounds, lakes, kind):
    """DataFusion: ``SELECT * FROM lake ORDER BY ts DESC LIMIT 100`` (the table registered
    once); what its scan read, from the metrics of one more run."""
    lake = lakes[kind]
    ctx = _datafusion(lake)
    sql = f"SELECT * FROM lake {TOPK_QUERY}"
    _record(benchmark, _group("order", lake), "datafusion", lake, TOPK_QUERY)
    table = _time(benchmark, rounds, lambda: ctx.sql(sql).to_arrow_table())
    _check_top(lake, _keys(table.column("ts")), "datafusion")
    df = ctx.sql(sql)
    df.to_arrow_table()
    benchmark.extra_info.update(rows=table.num_rows, **_datafusion_read(df))
    _note(benchmark, lake)


def _spark_read(benchmark, df) -> None:
    """Files and rows Spark's scans read in ``df``'s last run."""
    import prune_engine.spark as pes

    counts = engine_metrics.spark_scan(df)
    benchmark.extra_info.update(files_opened=pes.files_scanned(df),
                                rows_scanned=counts["rows_scanned"],
                                row_groups_read=_row_groups_of(counts["rows_scanned"]))


def _spark_top(benchmark, rounds, lake, engine: str, build) -> dict:
    """Time ``build(result)`` (a Spark DataFrame of the top rows; it may note more in
    ``result``) collected, check its keys and record the files Spark read; ``result`` with
    the collected ``rows``."""
    result = {}

    def run():
        df = build(result)
        result["rows"] = df.collect()
        return df

    df = _time(benchmark, rounds, run, n=3)
    _check_top(lake, _keys([r["ts"] for r in result["rows"]]), engine)
    benchmark.extra_info["rows"] = len(result["rows"])
    _spark_read(benchmark, df)
    return result


@pytest.mark.parametrize("kind", LAKES)
def test_topk_spark_plain(benchmark, rounds, spark, lakes, kind):
    """Plain Spark: ``spark.read.parquet(lake).orderBy(desc("ts")).limit(100)``, collected."""
    from pyspark.sql import functions as F

    lake = lakes[kind]
    _record(benchmark, _group("order", lake), "spark plain", lake, TOPK_QUERY)
    _spark_top(benchmark, rounds, lake, "spark plain",
               lambda result: spark.read.parquet(lake.root).orderBy(F.desc("ts")).limit(LIMIT))
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_topk_spark_pes(benchmark, rounds, spark, lakes, lake_stats, kind):
    """``pes.read(spark, lake, None, stats=..., order_by="ts DESC", limit=100)``: the files
    that cannot hold one of the first 100 rows never reach Spark."""
    import prune_engine.spark as pes

    lake = lakes[kind]
    stats = lake_stats[kind, "file"]
    _record(benchmark, _group("order", lake), "pes.read", lake, TOPK_QUERY)

    def build(result):
        df, result["summary"] = pes.read(spark, lake.root, None, stats=stats, order_by=ORDER,
                                         limit=LIMIT, return_summary=True)
        return df

    summary = _spark_top(benchmark, rounds, lake, "pes.read", build)["summary"]
    benchmark.extra_info.update(files_read=summary.files_read, prune_s=summary.prune_seconds,
                                limit_pruning=str(getattr(summary, "limit", "")))
    _target(benchmark, lake, TOPK_FILES_TARGET)
    _note(benchmark, lake)


# -- COUNT(*) WHERE ts >= ... ----------------------------------------------------------------

def _count_query(lake: Lake) -> str:
    return f"COUNT(*) WHERE {_where(lake)}"


@pytest.mark.parametrize("granularity", ["row_group", "file"])
@pytest.mark.parametrize("kind", LAKES)
def test_count_pe_aggregate(benchmark, rounds, lakes, lake_stats, kind, granularity):
    """``pe.aggregate(stats, "COUNT(*)", where=..., source=lake)``: containers where every
    row matches count from ``num_records``; only the others are read."""
    lake = lakes[kind]
    stats = lake_stats[kind, granularity]
    where = _where(lake)
    engine = f"pe.aggregate ({'row-group' if granularity == 'row_group' else 'file'} stats)"
    _record(benchmark, _group("count", lake), engine, lake, _count_query(lake),
            granularity=granularity, stats_containers=stats.num_rows)
    result = _time(benchmark, rounds,
                   lambda: pe.aggregate(stats, "COUNT(*)", where=where, source=lake.files))
    assert result.exact and result.values["COUNT(*)"] == lake.count, \
        f"{engine}: {result.values} != {lake.count}"
    read = np.asarray(result.must_read.to_numpy(zero_copy_only=False), bool)
    paths = stats.table.column("path").to_numpy(zero_copy_only=False)[read]
    files = len(set(paths))
    benchmark.extra_info.update(rows=lake.count, containers_read=result.containers_read,
                                files_opened=files, files_read=files,
                                row_groups_read=(result.containers_read
                                                 if granularity == "row_group" else
                                                 files * (ROWS_PER_FILE // ROW_GROUP_ROWS)))
    _target(benchmark, lake, COUNT_FILES_TARGET)
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_count_duckdb(benchmark, rounds, lakes, kind):
    import duckdb

    lake = lakes[kind]
    con = duckdb.connect()
    sql = (f"SELECT count(*) FROM read_parquet('{os.path.join(lake.root, '*.parquet')}') "
           f"WHERE {_where(lake)}")
    _record(benchmark, _group("count", lake), "duckdb", lake, _count_query(lake),
            threads=con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    count = _time(benchmark, rounds, lambda: con.execute(sql).fetchall()[0][0])
    assert count == lake.count
    counts = engine_metrics.duckdb_scan(con, sql)
    assert counts.pop("row_groups_to_scan") == lake.row_groups
    benchmark.extra_info.update(rows=count, **counts)
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_count_pyarrow_dataset(benchmark, rounds, lakes, kind):
    """``dataset.count_rows(filter=ts >= ...)``: every footer, the row groups min/max keep."""
    lake = lakes[kind]
    dataset = ds.dataset(lake.root, format="parquet")
    expr = ds.field("ts") >= pa.scalar(lake.cutoff_us, pa.timestamp("us"))
    _record(benchmark, _group("count", lake), "pyarrow.dataset", lake, _count_query(lake))
    count = _time(benchmark, rounds, lambda: dataset.count_rows(filter=expr))
    assert count == lake.count
    benchmark.extra_info.update(rows=count, **engine_metrics.pyarrow_scan(dataset, expr))
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_count_datafusion(benchmark, rounds, lakes, kind):
    lake = lakes[kind]
    ctx = _datafusion(lake)
    sql = f"SELECT count(*) FROM lake WHERE {_where(lake)}"
    _record(benchmark, _group("count", lake), "datafusion", lake, _count_query(lake))
    count = _time(benchmark, rounds,
                  lambda: ctx.sql(sql).to_arrow_table().column(0)[0].as_py())
    assert count == lake.count
    df = ctx.sql(sql)
    df.to_arrow_table()
    benchmark.extra_info.update(rows=count, **_datafusion_read(df))
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_count_spark_plain(benchmark, rounds, spark, lakes, kind):
    """Plain Spark: ``spark.read.parquet(lake).where(ts >= TIMESTAMP_NTZ ...)``, counted (as
    one aggregate row, so that the scan's metrics stay with the DataFrame)."""
    lake = lakes[kind]
    _record(benchmark, _group("count", lake), "spark plain", lake, _count_query(lake))
    result = {}

    def run():
        df = spark.read.parquet(lake.root).where(_where(lake, ntz=True)).groupBy().count()
        result["count"] = df.collect()[0][0]
        return df

    df = _time(benchmark, rounds, run, n=3)
    assert result["count"] == lake.count
    benchmark.extra_info["rows"] = result["count"]
    _spark_read(benchmark, df)
    _note(benchmark, lake)


@pytest.mark.parametrize("kind", LAKES)
def test_count_spark_pes(benchmark, rounds, spark, lakes, lake_stats, kind):
    """``pes.count(spark, lake, where, stats=...)``: the files every row of which matches
    (or none does) counted from the statistics, Spark counting the others (``files_read``
    from its summary: Spark opens those files only)."""
    import prune_engine.spark as pes

    lake = lakes[kind]
    stats = lake_stats[kind, "file"]
    _record(benchmark, _group("count", lake), "pes.count", lake, _count_query(lake))
    count, summary = _time(benchmark, rounds,
                           lambda: pes.count(spark, lake.root, _where(lake, ntz=True),
                                             stats=stats, return_summary=True), n=3)
    assert count == lake.count
    benchmark.extra_info.update(
        rows=count, files_opened=summary.files_read, files_read=summary.files_read,
        from_statistics=summary.from_statistics, prune_s=summary.prune_seconds)
    _target(benchmark, lake, COUNT_FILES_TARGET)
    _note(benchmark, lake)


@pytest.fixture(scope="module", autouse=True)
def _files_and_row_groups_table(request):
    """At the end of the suite, the files and row groups each engine opened, in a table."""
    yield
    engine_metrics.print_table(request.config, "Top-k and COUNT: files and row groups read")
    engine_metrics.ROWS.clear()


# -- classify against prune over 1M containers -----------------------------------------------

MINUTE_US = 60 * 10**6


#: URL-like strings: a long shared prefix with characters outside ASCII
URL_PREFIX = "https://www.example.com/catalogue/категория/продукт/"


def classify_stats(n: int, seed: int = 0) -> pa.Table:
    """``n`` containers in the statistics layout: ``ts`` (container ``i`` spans minute ``i``
    from 2024-01-01) and ``x`` (float64, ranges of width up to 50 in [-100, 150]), 1,000
    records each; ``x`` has up to 4 nulls and a NaN count (2 in 3 zero, 5% unknown);
    ``url`` (clustered like ``ts``) is :data:`URL_PREFIX` and the container's number."""
    rng = np.random.default_rng(seed)
    lo = BASE_US + np.arange(n, dtype=np.int64) * MINUTE_US
    x_lo = rng.uniform(-100, 100, n)
    x_hi = x_lo + rng.uniform(0, 50, n)
    ts_type = pa.timestamp("us")

    number = pc.utf8_lpad(pc.cast(pa.array(np.arange(n)), pa.string()), 8, "0")
    url = pc.binary_join_element_wise(URL_PREFIX, number, "")

    def bounds(ts, x, u):
        return pa.StructArray.from_arrays([pa.array(ts, ts_type), pa.array(x), u],
                                          ["ts", "x", "url"])

    nans = np.where(rng.random(n) < 2 / 3, 0, rng.integers(1, 4, n))
    return pa.table({
        "container": pc.binary_join_element_wise(
            "c", pc.utf8_lpad(pc.cast(pa.array(np.arange(n)), pa.string()), 7, "0"), ""),
        "num_records": pa.array(np.full(n, 1_000, np.int64)),
        "min_values": bounds(lo, x_lo, url),
        "max_values": bounds(lo + MINUTE_US - 1, x_hi, pc.binary_join_element_wise(url, "z", "")),
        "null_count": pa.StructArray.from_arrays(
            [pa.array(np.zeros(n, np.int64)), pa.array(rng.integers(0, 5, n)),
             pa.array(np.zeros(n, np.int64))], ["ts", "x", "url"]),
        "nan_count": pa.StructArray.from_arrays(
            [pa.array(nans, pa.int64(), mask=rng.random(n) < 0.05)], ["x"]),
    })


def classify_predicates(n: int) -> dict[str, str]:
    """The predicates: a range on ``ts`` (a tenth of the containers, from the middle, both
    ends inside a container), an AND with a range on ``x``, ``ts IN`` 20 values, and a range
    on the unclustered ``x`` alone, and a range on the clustered ``url``."""
    a = BASE_US + (n // 2) * MINUTE_US + MINUTE_US // 3
    b = a + (n // 10) * MINUTE_US
    values = ", ".join(_ts_sql(BASE_US + i * (n // 20) * MINUTE_US + 7 * 10**6)
                       for i in range(20))
    return {"ts range": f"ts >= {_ts_sql(a)} AND ts < {_ts_sql(b)}",
            "ts AND x": f"ts >= {_ts_sql(a)} AND x > 40.0",
            "ts IN 20": f"ts IN ({values})",
            "x unclustered": "x > 40.0",
            "url range": f"url >= '{URL_PREFIX}{n // 2:08d}' AND url < '{URL_PREFIX}{n // 2 + n // 10:08d}'"}


@pytest.fixture(scope="module")
def classify_table(pytestconfig):
    return classify_stats(_num_containers(pytestconfig))


CLASSIFY_CASES = [(p, e) for p in ("ts range", "ts AND x", "ts IN 20", "x unclustered", "url range")
                  for e in ("pe.prune", "pe.classify")]


def _paired_ratio(table: pa.Table, expr: str) -> float:
    """The median over ``PAIRS`` back-to-back calls of classify's time over prune's."""
    import time

    ratios = []
    for _ in range(PAIRS):
        start = time.perf_counter()
        pe.prune(table, expr)
        mid = time.perf_counter()
        pe.classify(table, expr)
        ratios.append((time.perf_counter() - mid) / (mid - start))
    return float(np.median(ratios))


@pytest.mark.parametrize(("predicate", "engine"), CLASSIFY_CASES,
                         ids=[f"{p}-{e}" for p, e in CLASSIFY_CASES])
def test_classify_vs_prune(benchmark, classify_table, predicate, engine):
    """``pe.prune`` and ``pe.classify`` of one predicate over the table (warm); classify's
    answer checked against prune's (``!= "none"`` is the keep-mask); the ratio of their
    times (target <= 1.5)."""
    n = classify_table.num_rows
    expr = classify_predicates(n)[predicate]
    group = f"topk classify {n} containers"
    benchmark.group = group
    benchmark.extra_info.update(engine=engine, scenario=predicate, predicate=expr,
                                stats_containers=n)
    keep = np.asarray(pe.prune(classify_table, expr).to_numpy(zero_copy_only=False), bool)
    kinds = pe.classify(classify_table, expr)
    kind = np.asarray(kinds.dictionary.take(kinds.indices).to_numpy(zero_copy_only=False))
    assert np.array_equal(kind != "none", keep), "classify != 'none' is not prune's mask"
    counts = {k: int((kind == k).sum()) for k in ("none", "some", "all")}
    benchmark.extra_info.update(**{f"n_{k}": v for k, v in counts.items()})
    fn = pe.prune if engine == "pe.prune" else pe.classify
    benchmark(fn, classify_table, expr)
    median = benchmark.stats.stats.median
    if engine == "pe.prune":
        _PRUNE[group, predicate] = median
        return
    paired = _paired_ratio(classify_table, expr)
    benchmark.extra_info.update(classify_over_prune_paired=paired,
                                target_ratio=CLASSIFY_RATIO_TARGET)
    if (group, predicate) in _PRUNE:
        ratio = median / _PRUNE[group, predicate]
        benchmark.extra_info.update(prune_s=_PRUNE[group, predicate], classify_over_prune=ratio,
                                    meets_target=bool(ratio <= CLASSIFY_RATIO_TARGET))


# -- first call ----------------------------------------------------------------------------------

FIRST_CALL = f"""
import os, time
t = time.perf_counter()
import prune_engine as pe
table, summary = pe.scan(os.environ["TOPK_BENCH_LAKE"], order_by="{ORDER}", limit={LIMIT},
                         return_summary=True)
assert table.num_rows == {LIMIT} and summary.files_read <= {TOPK_FILES_TARGET}, summary
print(time.perf_counter() - t)
"""


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_first_call(benchmark, cache, lakes, tmp_path_factory):
    """A fresh process: import and the first ``pe.scan`` top-k of the clustered lake
    (statistics from the footers it reads), numba cache cold or warm."""
    lake = lakes["clustered"]
    benchmark.group = "topk first call"
    cache_dir = tmp_path_factory.getbasetemp() / "numba_cache_topk"
    env = {"TOPK_BENCH_LAKE": lake.root}
    if cache == "warm":
        # the cold call's numba cache may still be filling: its kernels compile in a child
        # process while Python twins answer (prune_engine/_warm.py), so a call right after it
        # would time that compile; fill the cache first in a process that compiles them itself
        first_call_seconds(FIRST_CALL, str(cache_dir), env={**env, "PRUNE_ENGINE_WARM": "0"})
    measure(benchmark, FIRST_CALL, cache,
            f"import + first pe.scan top-k (ORDER BY ts DESC LIMIT {LIMIT}, "
            f"{len(lake.files):,} files)",
            cache_dir, env=env)
    benchmark.extra_info["files"] = len(lake.files)
