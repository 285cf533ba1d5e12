"""Parquet Bloom filters as statistics: files kept, probe speed, collect speed, and the engines
that probe them at scan time.

One lake (``bloom_lake.py``), written once per session into a temp dir with a fixed seed: 2,000
Parquet files of 1,000 to 5,000 rows, an unsorted int64 key ``k`` and an unsorted 16-character
string key ``s``, a Bloom filter per column written by pyarrow (``ndv`` = the file's rows, FPP
1%). Min/max statistics prune nothing here (every file spans the key range); the Bloom filters
are collected with ``pe.collect_stats(lake, granularity="file", bloom=True)``. Groups:

    bloom kept        pe.prune of ``k = v`` (``s = v``) for 20 present and 20 absent keys, of
                      ``IN`` of 20 (a star join's dimension keys) and 100 present keys, and of
                      ``IN`` of 1,000 keys (the time of the
                      last: target <= 5 ms at 2,000 files), with the Bloom column and, as the
                      ``minmax`` engine, without it; ``compiled`` is ``pe.compile(...).evaluate``
    bloom shapes      on a second lake (a fifth of the files): ``= v`` and ``IN`` of 1,000 items
                      on strings with a long common prefix (URLs), non-ASCII, low cardinality
                      and a skewed (Zipf) column
    bloom collect     collect_stats with bloom=True (target >= 5,000 files/s) and without
    bloom lookup      ``count(*) WHERE k = v`` end to end: pe.scan (statistics collected
                      beforehand) against DuckDB (probes the Bloom filters while scanning),
                      pyarrow.dataset (min/max only) and DataFusion (when installed)
    bloom string lookup
                      the same for ``s = v``
    bloom first call  a fresh process's import and first Bloom probe, numba cache cold or warm
    bloom spark ...   a second lake written by Spark (parquet-java's filters, ``SPARK_ROWS``
                      rows per file) on one local[2] session: ``pes.collect_stats(spark, lake,
                      bloom=True)`` and the files it keeps; ``k = v`` (group ``bloom spark
                      lookup``) and ``s = v`` (``bloom spark lookup s = v``) end to end, plain
                      ``spark.read.parquet(lake).where(...)`` (parquet-java probes the filters
                      of the row groups it opens) against ``pes.read`` (files ruled out first)

``extra_info`` holds the files kept (``kept``; ``kept_mean``/``kept_max`` over several keys),
their bound (``bound``: 1 + 2 x FPP x files for ``=``; the expected count plus 2 x FPP x files
for ``IN``, see ``bloom_lake.in_bound``), the false-positive rate measured on absent keys
(``fpp_measured``), ``files_per_s``, ``bloom_bytes`` and ``footer_bytes`` (the sum of the
footer lengths), and a peer's time as a multiple of pe.scan's in the same run (``vs_pe_scan``).

Files and row groups each engine opens for a lookup (issue #20), in ``extra_info`` of the
lookups (``files_opened``, ``row_groups_read``, ``row_groups_total``) and in a table printed at
the end of the run (``engine_metrics.py``). ``files_opened``: files whose footer the query reads;
``row_groups_read``: row groups whose data it reads; ``row_groups_total``: from the footers (every
file of both lakes is one row group). Taken from each engine's own account of the timed query,
or of one more run of it:

    pe.scan           its summary (``return_summary=True``): ``files_total`` (its planner reads
                      every listed file's footer, statistics given or not), ``row_groups_read``
                      (file statistics keep a file's row groups whole)
    DuckDB            ``EXPLAIN (ANALYZE, FORMAT JSON)``: the parquet scan's ``Total Files
                      Read`` and ``row_groups_scanned`` of ``total_row_groups_to_scan``
    pyarrow.dataset   every fragment's footer; the row groups min/max keep
                      (``fragment.split_by_row_group(filter)``, the test ``count_rows`` applies)
    DataFusion        the scan's (``DataSourceExec``) metrics of the executed plan
                      (``df.execution_plan()`` after the run, what ``EXPLAIN ANALYZE`` prints):
                      the distinct files of its per-file metrics (footers read, or found in the
                      session's metadata cache after the first run); row groups: matched by
                      ``row_groups_pruned_statistics``, less those ``row_groups_pruned_bloom_
                      filter`` pruned (total - matched); ``rows_scanned`` (the scan's output
                      rows) and ``bytes_scanned`` besides
    Spark             the ``FileSourceScanExec`` metrics of the last timed run: ``number of files
                      read`` (each task opens its files' footers); row groups: ``number of output
                      rows`` over ``SPARK_ROWS`` (Spark has no row-group metric; the vectorized
                      reader outputs every row of the row groups parquet-java's RowGroupFilter
                      keeps, as record-level filtering is off by default, and every row group of
                      the Spark lake holds ``SPARK_ROWS`` rows: checked)

Quick mode (``--bench-rounds`` given, as ``bench/run.py --quick`` does) uses 200 files;
``BLOOM_BENCH_FILES`` sets the count (both lakes). ``-k "not spark"`` leaves Spark out. Run::

    python -m pytest bench/test_bench_bloom.py --benchmark-json=bloom.json -q
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import bloom_lake
import engine_metrics
import prune_engine as pe
from bloom_lake import FPP
from first_call import measure
from sizes import lake_files

FULL_FILES = 2_000
QUICK_FILES = 200
#: point lookups per column (present keys, and absent ones)
LOOKUPS = 20
#: the issue's targets
IN_1000_TARGET_S = 5e-3
COLLECT_TARGET_FILES_PER_S = 5_000
#: medians of this run, for the peers' ratios: group -> seconds of pe.scan
_BASE: dict[str, float] = {}


def _num_files(config) -> int:
    return lake_files(config, "BLOOM_BENCH_FILES", FULL_FILES, QUICK_FILES)


@pytest.fixture(scope="session")
def lake(pytestconfig, tmp_path_factory) -> bloom_lake.Lake:
    root = tmp_path_factory.mktemp("bloom_lake")
    return bloom_lake.write_lake(str(root), _num_files(pytestconfig))


@pytest.fixture(scope="session")
def stats(lake):
    """The lake's file statistics with the Bloom filters of ``k`` and ``s``."""
    return pe.collect_stats(lake.root, granularity="file", bloom=True, progress=False)


@pytest.fixture(scope="session")
def minmax_stats(lake):
    """The same without Bloom filters: min/max and counts alone."""
    return pe.collect_stats(lake.root, granularity="file", progress=False)


def _sql(values) -> str:
    return ", ".join(f"'{v}'" if isinstance(v, str) else str(int(v)) for v in values)


def _kept(stats, expr: str) -> np.ndarray:
    mask = pe.prune(stats, expr)
    return np.asarray(mask.to_numpy(zero_copy_only=False), bool)


def _record(benchmark, group: str, engine: str, **info):
    benchmark.group = group
    benchmark.extra_info.update({"engine": engine, **info})


def _samples(lake, column: str) -> np.ndarray:
    return lake.k_samples if column == "k" else lake.s_samples


# -- files kept -----------------------------------------------------------------------------

@pytest.mark.parametrize("column", ["k", "s"])
def test_point_lookup(benchmark, lake, stats, minmax_stats, column):
    """``column = v``: files kept with the Bloom filters (20 present keys, from 20 files; 20
    absent keys) against min/max alone. Timed: one present key."""
    files = len(lake.files)
    rng = np.random.default_rng(2)
    which = rng.choice(files, min(LOOKUPS, files), replace=False)
    present = [_samples(lake, column)[i, 0] for i in which]
    absent = (bloom_lake.absent_k if column == "k" else bloom_lake.absent_s)(LOOKUPS)
    kept, minmax_kept = [], []
    for i, v in zip(which, present):
        mask = _kept(stats, f"{column} = {_sql([v])}")
        assert mask[i], f"file {i} holds {column} = {v!r} but was pruned"
        kept.append(int(mask.sum()))
        minmax_kept.append(int(_kept(minmax_stats, f"{column} = {_sql([v])}").sum()))
    false_pos = [int(_kept(stats, f"{column} = {_sql([v])}").sum()) for v in absent]
    bound = 1 + 2 * FPP * files
    _record(benchmark, f"bloom kept {files} files", "pe.prune", scenario=f"{column} = v",
            files=files, kept_mean=float(np.mean(kept)), kept_max=max(kept),
            kept_minmax_mean=float(np.mean(minmax_kept)), kept_minmax_max=max(minmax_kept),
            bound=bound,
            absent_kept_mean=float(np.mean(false_pos)),
            fpp_measured=float(np.sum(false_pos)) / (len(absent) * files))
    expr = f"{column} = {_sql([present[0]])}"
    benchmark(pe.prune, stats, expr)
    assert np.mean(kept) <= bound
    # the Bloom probe ANDs min/max: never more than min/max alone, which keeps most files
    assert all(b <= m for b, m in zip(kept, minmax_kept))


@pytest.mark.parametrize("keys", [20, 100])
@pytest.mark.parametrize("column", ["k", "s"])
def test_in_keys(benchmark, lake, stats, minmax_stats, column, keys):
    """``column IN (20 or 100 present keys)`` (20: the keys of a star join's dimension, which
    ``pes.join`` turns into such an ``IN``), one key from each of as many files (all files
    when fewer): files kept against the expected count."""
    files = len(lake.files)
    n = min(keys, files)
    which = np.random.default_rng(3).choice(files, n, replace=False)
    values = [_samples(lake, column)[i, 1] for i in which]
    expr = f"{column} IN ({_sql(values)})"
    mask = _kept(stats, expr)
    assert mask[which].all(), "a file holding one of the keys was pruned"
    expected = bloom_lake.in_bound(files, n, len(values))
    bound = expected + 2 * FPP * files
    _record(benchmark, f"bloom kept {files} files", "pe.prune", scenario=f"{column} IN {keys}",
            files=files, kept=int(mask.sum()), kept_minmax=int(_kept(minmax_stats, expr).sum()),
            expected=expected, bound=bound)
    benchmark(pe.prune, stats, expr)
    assert mask.sum() <= bound


def _in_1000(lake, column: str) -> tuple[str, np.ndarray]:
    """``column IN`` 1,000 present keys: from 1,000 files, or every sample of each file when
    fewer (200 files: 5 keys of each)."""
    files = len(lake.files)
    samples = _samples(lake, column)
    per_file = -(-1000 // files)
    values = samples[:, :per_file].ravel()[:1000]
    held = np.unique(np.arange(files).repeat(per_file)[:1000])
    return f"{column} IN ({_sql(values)})", held


@pytest.mark.parametrize("engine", ["pe.prune", "compiled", "minmax"])
@pytest.mark.parametrize("column", ["k", "s"])
def test_in_1000(benchmark, lake, stats, minmax_stats, column, engine):
    """The time of ``column IN (1,000 keys)`` over the lake's file statistics, with the Bloom
    probes (target <= 5 ms at 2,000 files), compiled once beforehand, and min/max alone."""
    files = len(lake.files)
    expr, held = _in_1000(lake, column)
    table = minmax_stats if engine == "minmax" else stats
    if engine == "compiled":
        program = pe.compile(expr, stats.schema)
        run = lambda: program.evaluate(table)  # noqa: E731
    else:
        run = lambda: pe.prune(table, expr)  # noqa: E731
    mask = np.asarray(run().to_numpy(zero_copy_only=False), bool)
    assert mask[held].all(), "a file holding one of the keys was pruned"
    _record(benchmark, f"bloom IN 1000 {files} files", engine, scenario=f"{column} IN 1000",
            files=files, kept=int(mask.sum()), expected=bloom_lake.in_bound(
                files, len(held), 1000) if engine != "minmax" else files,
            target_s=IN_1000_TARGET_S)
    benchmark(run)
    benchmark.extra_info["meets_target"] = bool(benchmark.stats.stats.median <= IN_1000_TARGET_S)


# -- data shapes other than random keys -----------------------------------------------------------

#: string columns of other shapes: (file, rng, rows) -> values
SHAPES = {
    "url": lambda f, rng, n: [f"https://shop.example.com/products/category-{(f * 7) % 13}/"
                              f"item-{x:012d}" for x in rng.integers(0, 10**12, n)],
    "non_ascii": lambda f, rng, n: [f"日本語-ключ-{x:010d}-é"
                                    for x in rng.integers(0, 10**10, n)],
    "low_card": lambda f, rng, n: [f"status-{x}" for x in rng.integers(0, 8, n)],
    "skew": lambda f, rng, n: [f"user-{x:08d}" for x in np.minimum(rng.zipf(1.3, n), 10**7)],
}


@pytest.fixture(scope="session")
def shapes_lake(pytestconfig, tmp_path_factory):
    """A lake of the :data:`SHAPES` columns (a fifth of the main lake's files, 2,000 rows each,
    pyarrow filters at FPP 1%): its statistics with and without the filters, and the first
    value of each file per column."""
    root = tmp_path_factory.mktemp("bloom_shapes")
    rng = np.random.default_rng(7)
    files = max(20, _num_files(pytestconfig) // 5)
    firsts: dict[str, list] = {k: [] for k in SHAPES}
    for f in range(files):
        cols = {k: make(f, rng, 2_000) for k, make in SHAPES.items()}
        for k in SHAPES:
            firsts[k].append(cols[k][0])
        pq.write_table(pa.table(cols), root / f"f{f:04d}.parquet",
                       bloom_filter_options={k: {"ndv": 2_000, "fpp": FPP} for k in SHAPES})
    stats = pe.collect_stats(str(root), granularity="file", bloom=True, progress=False)
    minmax = pe.collect_stats(str(root), granularity="file", progress=False)
    return stats, minmax, firsts


@pytest.mark.parametrize("column", list(SHAPES))
def test_shapes(benchmark, shapes_lake, column):
    """``column = v`` (files kept, against min/max alone; an absent value's false positives)
    and the time of ``IN`` of 1,000 items (100 distinct values) on strings with a long common
    prefix, non-ASCII, low cardinality (every file holds every value) and skew."""
    stats, minmax, firsts = shapes_lake
    values = firsts[column]
    v = values[len(values) // 3]
    kept = _kept(stats, f"{column} = {_sql([v])}")
    assert kept[len(values) // 3], "the file holding the value was pruned"
    expr = f"{column} IN ({_sql(values[::max(1, len(values) // 100)][:100] * 10)})"
    _record(benchmark, "bloom shapes", "pe.prune", scenario=f"{column} IN 1000 items",
            files=len(values), kept=int(kept.sum()),
            kept_minmax=int(_kept(minmax, f"{column} = {_sql([v])}").sum()),
            absent_kept=int(_kept(stats, f"{column} = {_sql([v + 'x'])}").sum()))
    benchmark(pe.prune, stats, expr)


# -- collect ------------------------------------------------------------------------------------

@pytest.mark.parametrize("bloom", [True, False], ids=["bloom", "no_bloom"])
def test_collect(benchmark, rounds, lake, bloom):
    """``pe.collect_stats(lake, granularity="file", bloom=...)``: files per second, and the
    Bloom bytes read next to the footers' bytes."""
    files = len(lake.files)
    _record(benchmark, f"bloom collect {files} files",
            "collect bloom" if bloom else "collect", files=files,
            footer_bytes=bloom_lake.footer_bytes(lake.files),
            target_files_per_s=COLLECT_TARGET_FILES_PER_S)
    kwargs = {"bloom": True} if bloom else {}
    stats = benchmark.pedantic(lambda: pe.collect_stats(lake.root, granularity="file",
                                                        progress=False, **kwargs),
                               rounds=rounds(5), iterations=1, warmup_rounds=1)
    assert stats.num_rows == files
    per_s = files / benchmark.stats.stats.median
    benchmark.extra_info["files_per_s"] = per_s
    if bloom:
        bloom_bytes = stats.metadata["bloom"]["bytes_read"]
        benchmark.extra_info.update(
            bloom_bytes=bloom_bytes, bloom_bytes_per_file=bloom_bytes / files,
            bloom_problems=len(stats.metadata["bloom"].get("problems", [])),
            meets_target=bool(per_s >= COLLECT_TARGET_FILES_PER_S))


# -- point lookup end to end, against the engines that probe Bloom filters while scanning ------

def _lookup(lake, column: str):
    """The key of ``column = v``, one of the third file's samples."""
    value = _samples(lake, column)[len(lake.files) // 3, 2]
    return int(value) if column == "k" else str(value)


def _lookup_group(lake, column: str) -> str:
    # ``s = v`` in a group of its own: report.py's lookup table compares the engines of one
    # group with the group's first pe.scan, and knows the ``k = v`` group alone
    return f"bloom {'lookup' if column == 'k' else 'string lookup'} {len(lake.files)} files"


@pytest.fixture(scope="session")
def lake_row_groups(lake) -> int:
    return engine_metrics.row_groups(lake.files)[0]


def _peer(benchmark, rounds, lake, column, engine: str, fn, what: str = "rows", **info):
    group = _lookup_group(lake, column)
    _record(benchmark, group, engine, scenario=f"{column} = v", files=len(lake.files), **info)
    count = benchmark.pedantic(fn, rounds=rounds(5), iterations=1, warmup_rounds=1)
    assert count >= 1
    benchmark.extra_info[what] = int(count)
    seconds = benchmark.stats.stats.median
    if engine == "pe.scan":
        _BASE[group] = seconds
    elif group in _BASE:
        benchmark.extra_info["vs_pe_scan"] = seconds / _BASE[group]


def _opened(benchmark, lake_name: str, row_groups_total: int, **counts):
    """Record the files and row groups an engine opened (``engine_metrics``) for the table
    printed at the end."""
    benchmark.extra_info.update(counts, row_groups_total=row_groups_total)
    assert counts["row_groups_read"] >= 1, "the row group holding the key was skipped"
    engine_metrics.note(benchmark, lake_name)


@pytest.mark.parametrize("column", ["k", "s"])
def test_lookup_pe_scan(benchmark, rounds, lake, stats, column):
    """pe.scan with the statistics collected beforehand: ``files_opened`` is the footers it
    reads (those of the files it reads: the statistics record the others' schemas and row
    groups), ``row_groups_read`` the kept files' row groups (file statistics keep a file
    whole), from the scan's summary."""
    expr = f"{column} = {_sql([_lookup(lake, column)])}"
    summaries = []

    def run():
        table, summary = pe.scan(lake.root, expr, columns=[column], stats=stats,
                                 return_summary=True)
        summaries.append(summary)
        return table.num_rows

    _peer(benchmark, rounds, lake, column, "pe.scan", run)
    s = summaries[-1]
    benchmark.extra_info["files_read"] = s.files_read
    _opened(benchmark, "pyarrow-written", s.row_groups_total, files_opened=s.footers_read,
            row_groups_read=s.row_groups_read)


@pytest.mark.parametrize("column", ["k", "s"])
def test_lookup_pe_prune(benchmark, rounds, lake, stats, column):
    """The pruning alone (what pe.scan spends before reading the kept files)."""
    expr = f"{column} = {_sql([_lookup(lake, column)])}"
    _peer(benchmark, rounds, lake, column, "pe.prune only",
          lambda: int(_kept(stats, expr).sum()), what="kept")


@pytest.mark.parametrize("column", ["k", "s"])
def test_lookup_duckdb(benchmark, rounds, lake, lake_row_groups, column):
    """DuckDB; its files and row groups from ``EXPLAIN (ANALYZE, FORMAT JSON)`` of the same
    query (``Total Files Read``, ``row_groups_scanned``)."""
    import duckdb

    con = duckdb.connect()
    glob = os.path.join(lake.root, "*.parquet")
    sql = (f"SELECT count(*) FROM read_parquet('{glob}') "
           f"WHERE {column} = {_sql([_lookup(lake, column)])}")
    _peer(benchmark, rounds, lake, column, "duckdb", lambda: con.execute(sql).fetchone()[0],
          threads=con.execute("SELECT current_setting('threads')").fetchone()[0])
    counts = engine_metrics.duckdb_scan(con, sql)
    assert counts.pop("row_groups_to_scan") == lake_row_groups
    _opened(benchmark, "pyarrow-written", lake_row_groups, **counts)


@pytest.mark.parametrize("column", ["k", "s"])
def test_lookup_pyarrow_dataset(benchmark, rounds, lake, lake_row_groups, column):
    """pyarrow.dataset (min/max alone): every footer, and the row groups min/max keep."""
    dataset = ds.dataset(lake.root, format="parquet")
    value = _lookup(lake, column)
    expr = ds.field(column) == (pa.scalar(value, pa.int64()) if column == "k" else value)
    _peer(benchmark, rounds, lake, column, "pyarrow.dataset",
          lambda: dataset.count_rows(filter=expr))
    _opened(benchmark, "pyarrow-written", lake_row_groups,
            **engine_metrics.pyarrow_scan(dataset, expr))


@pytest.mark.parametrize("column", ["k", "s"])
def test_lookup_datafusion(benchmark, rounds, lake, lake_row_groups, column):
    """DataFusion (Bloom filters on read); its files and row groups from the metrics of the
    scan (``DataSourceExec``) of one more run, as ``EXPLAIN ANALYZE`` prints them."""
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext()
    ctx.register_parquet("lake", lake.root)
    sql = f"SELECT count(*) FROM lake WHERE {column} = {_sql([_lookup(lake, column)])}"
    bloom = ctx.sql("SELECT value FROM information_schema.df_settings WHERE name = "
                    "'datafusion.execution.parquet.bloom_filter_on_read'").to_pylist() \
        if _has_information_schema(ctx) else []
    _peer(benchmark, rounds, lake, column, "datafusion",
          lambda: ctx.sql(sql).to_arrow_table().column(0)[0].as_py(),
          bloom_filter_on_read=bloom[0]["value"] if bloom else "default")
    df = ctx.sql(sql)
    df.to_arrow_table()
    counts = engine_metrics.datafusion_scan(df)
    assert counts["row_groups_examined"] == lake_row_groups
    _opened(benchmark, "pyarrow-written", lake_row_groups, **counts)


def _has_information_schema(ctx) -> bool:
    try:
        ctx.sql("SELECT 1 FROM information_schema.df_settings LIMIT 1").collect()
        return True
    except Exception:  # information_schema off in this version's defaults
        return False


@pytest.fixture(scope="module", autouse=True)
def _files_and_row_groups_table(request):
    """At the end of the suite, the files and row groups each engine opened, in a table."""
    yield
    engine_metrics.print_table(request.config, "Bloom lookups: files and row groups opened")
    engine_metrics.ROWS.clear()


# -- first call ----------------------------------------------------------------------------------

FIRST_CALL = """
import time
import numpy as np, pyarrow as pa
t = time.perf_counter()
from prune_engine.bloom.encoding import hashes, plain_bytes
from prune_engine.bloom.format import encode_entry
from prune_engine.bloom.probe import bit_masks, may_contain
words = np.zeros(8, np.uint32)
for i, m in enumerate(bit_masks(hashes(plain_bytes(42, pa.int64(), "int64")))[1][0]):
    words[i] |= m
index = pa.array([encode_entry("int64", [words]), None])
assert may_contain(index, [42, 7], pa.int64()).tolist() == [True, True]
print(time.perf_counter() - t)
"""


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_first_call(benchmark, cache, tmp_path_factory):
    benchmark.group = "bloom first call"
    measure(benchmark, FIRST_CALL, cache, "import + first Bloom probe (numba kernel)",
            tmp_path_factory.getbasetemp() / "numba_cache_bloom")


# -- Spark: a lake written by Spark (parquet-java's Bloom filters) ------------------------------

SPARK_ROWS = 3_000


@pytest.fixture(scope="module")
def spark_lake(pytestconfig, tmp_path_factory, spark):
    """``_num_files`` files of ``SPARK_ROWS`` rows written by Spark, with parquet-java's Bloom
    filters on ``k`` (a 64-bit hash of the row number: unsorted) and ``s`` (16 hex
    characters of a SHA-256); one present key of each."""
    files = _num_files(pytestconfig)
    root = str(tmp_path_factory.mktemp("bloom_spark_lake") / "lake")
    frame = spark.range(0, files * SPARK_ROWS, numPartitions=files).selectExpr(
        "xxhash64(id, 7) AS k", "substr(sha2(cast(id AS string), 256), 1, 16) AS s")
    writer = frame.write
    for col in ("k", "s"):
        writer = (writer.option(f"parquet.bloom.filter.enabled#{col}", "true")
                  .option(f"parquet.bloom.filter.expected.ndv#{col}", str(SPARK_ROWS))
                  .option(f"parquet.bloom.filter.fpp#{col}", str(FPP)))
    writer.parquet(root)
    paths = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".parquet"))
    some = pq.read_table(paths[len(paths) // 3]).slice(5, 1).to_pylist()[0]
    return root, paths, some["k"], some["s"]


def test_spark_collect(benchmark, rounds, spark, spark_lake):
    """``pes.collect_stats(spark, lake, granularity="file", bloom=True)`` (footers and
    filters read by the executors) on the Spark-written lake; files kept by ``k = v``."""
    import prune_engine.spark as pes

    root, paths, key, skey = spark_lake
    files = len(paths)
    _record(benchmark, f"bloom spark {files} files", "pes.collect_stats", files=files)
    stats = benchmark.pedantic(lambda: pes.collect_stats(spark, root, granularity="file",
                                                         bloom=True),
                               rounds=rounds(3), iterations=1, warmup_rounds=1)
    local = pe.collect_stats(root, granularity="file", bloom=True, progress=False)
    assert stats.num_rows == files
    kept = {c: int(_kept(stats, f"{c} = {_sql([v])}").sum()) for c, v in (("k", key), ("s", skey))}
    benchmark.extra_info.update(
        files_per_s=files / benchmark.stats.stats.median,
        bloom_bytes=stats.metadata["bloom"]["bytes_read"],
        local_bloom_bytes=local.metadata["bloom"]["bytes_read"],
        footer_bytes=bloom_lake.footer_bytes(paths), kept_k=kept["k"], kept_s=kept["s"],
        local_kept_k=int(_kept(local, f"k = {key}").sum()))
    assert stats.metadata["bloom"]["bytes_read"] > 0, "no Bloom filter read from Spark's files"
    assert 1 <= kept["k"] <= 1 + 2 * FPP * files


@pytest.fixture(scope="module")
def spark_stats(spark_lake):
    return pe.collect_stats(spark_lake[0], granularity="file", bloom=True, progress=False)


@pytest.fixture(scope="module")
def spark_row_groups(spark_lake) -> int:
    """The Spark lake's row groups, each of ``SPARK_ROWS`` rows (what makes the row groups
    Spark reads exact: the rows its scan outputs over ``SPARK_ROWS``)."""
    total, sizes = engine_metrics.row_groups(spark_lake[1])
    assert sizes == {SPARK_ROWS}, f"row groups of {sizes} rows, not all {SPARK_ROWS}"
    return total


def _spark_lookup(spark_lake, column: str) -> tuple[str, str]:
    """``column = v`` on the Spark lake (a present key) and its benchmark group."""
    root, paths, key, skey = spark_lake
    expr = f"k = {key}" if column == "k" else f"s = {_sql([skey])}"
    # k = v keeps the group name of the runs before s = v was added
    group = f"bloom spark lookup{'' if column == 'k' else ' s = v'} {len(paths)} files"
    return expr, group


def _spark_opened(benchmark, df, row_groups_total: int) -> None:
    """``files_opened``: the scan's ``number of files read``; ``row_groups_read``: its
    ``number of output rows`` over ``SPARK_ROWS`` (the vectorized reader outputs every row of
    the row groups parquet-java's RowGroupFilter keeps: statistics, dictionaries and Bloom
    filters; record-level filtering is off by default), for the last timed run."""
    counts = engine_metrics.spark_scan(df)
    assert counts["rows_scanned"] % SPARK_ROWS == 0, counts
    _opened(benchmark, "Spark-written", row_groups_total, **counts,
            row_groups_read=counts["rows_scanned"] // SPARK_ROWS)


@pytest.mark.parametrize("column", ["k", "s"])
def test_spark_lookup_plain(benchmark, rounds, spark, spark_lake, spark_row_groups, column):
    """Plain Spark: ``spark.read.parquet(lake).where("k = v")``, parquet-java probing the
    Bloom filters of each row group it opens (``files_scanned``: files the scan listed)."""
    import prune_engine.spark as pes

    root, paths, _, _ = spark_lake
    expr, group = _spark_lookup(spark_lake, column)
    _record(benchmark, group, "plain", scenario=f"{column} = v", files=len(paths))

    def run():
        df = spark.read.parquet(root).where(expr)
        df.collect()
        return df

    df = benchmark.pedantic(run, rounds=rounds(5), iterations=1, warmup_rounds=1)
    _BASE[group] = benchmark.stats.stats.median
    benchmark.extra_info["files_scanned"] = pes.files_scanned(df)
    _spark_opened(benchmark, df, spark_row_groups)
    benchmark.extra_info["rows"] = df.count()


@pytest.mark.parametrize("column", ["k", "s"])
def test_spark_lookup_pes(benchmark, rounds, spark, spark_lake, spark_stats, spark_row_groups,
                          column):
    """``pes.read(spark, lake, "k = v", stats=...)``: the files the Bloom filters rule out are
    never listed to Spark."""
    import prune_engine.spark as pes

    root, paths, _, _ = spark_lake
    expr, group = _spark_lookup(spark_lake, column)
    _record(benchmark, group, "prune_engine", scenario=f"{column} = v", files=len(paths))
    summaries = []

    def run():
        df, summary = pes.read(spark, root, expr, stats=spark_stats, return_summary=True)
        summaries.append(summary)
        df.collect()
        return df

    df = benchmark.pedantic(run, rounds=rounds(5), iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(
        files_scanned=pes.files_scanned(df), kept=summaries[-1].files_read,
        prune_s=float(np.median([s.prune_seconds for s in summaries])))
    _spark_opened(benchmark, df, spark_row_groups)
    benchmark.extra_info["rows"] = df.count()
    if group in _BASE:
        benchmark.extra_info["plain_over_prune_engine"] = _BASE[group] / benchmark.stats.stats.median
