"""Speed of ``pe.collect_stats`` over many Parquet footers (issue #3, Speed).

One group, ``collect 2000 files``, over one lake of 2,000 files x 4 row groups x 30 columns
(10 int64, 10 float64, 10 string; written once per session, a few hundred MB of temp space):

    collect_stats   pe.collect_stats(root, granularity="row_group"): footers read in threads,
                    statistics typed and assembled into the stats table
    collect_file    the same at file granularity (row groups aggregated)
    collect_1thread collect_stats with threads=1 (a like-for-like peer of the loop below)
    read_metadata   a plain Python loop of pyarrow.parquet.read_metadata (footers parsed, no
                    statistic touched): the floor of any reader built on pyarrow's metadata
    duckdb          DuckDB's parquet_metadata() over the same glob, fetched as Arrow

``extra_info["files_per_s"]`` is the throughput; ``COLLECT_BENCH_FILES`` shrinks the lake for a
quick look. A second group, ``collect first call``, times a fresh process's first
``collect_stats`` on one file with numba's cache cold (the footer kernels compile) and warm.
Run::

    python -m pytest bench/test_bench_collect.py --benchmark-json=collect.json -q
"""

from __future__ import annotations

import os

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from first_call import measure

NUM_FILES = int(os.environ.get("COLLECT_BENCH_FILES", 2_000))
ROW_GROUPS = 4
ROWS_PER_GROUP = 64
COLUMNS = 30


@pytest.fixture(scope="session")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("collect_lake")
    rng = np.random.default_rng(0)
    n = ROW_GROUPS * ROWS_PER_GROUP
    for k in range(NUM_FILES):
        cols = {}
        for c in range(COLUMNS):
            if c % 3 == 0:
                cols[f"i{c}"] = rng.integers(0, 10**6, n)
            elif c % 3 == 1:
                cols[f"f{c}"] = rng.random(n)
            else:
                cols[f"s{c}"] = pa.array([f"v{v:07d}" for v in rng.integers(0, 10**6, n)])
        part = root / f"part={k % 10}"
        part.mkdir(exist_ok=True)
        pq.write_table(pa.table(cols), str(part / f"f{k:05d}.parquet"),
                       row_group_size=ROWS_PER_GROUP)
    return str(root)


def _files(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


def _run(benchmark, rounds, fn, engine):
    benchmark.group = f"collect {NUM_FILES} files"
    benchmark.extra_info["engine"] = engine
    result = benchmark.pedantic(fn, rounds=rounds(3), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_per_s"] = NUM_FILES / benchmark.stats.stats.median
    return result


def test_collect_stats(benchmark, rounds, lake):
    stats = _run(benchmark, rounds, lambda: pe.collect_stats(lake, progress=False), "collect_stats")
    assert stats.num_rows == NUM_FILES * ROW_GROUPS


def test_collect_stats_file_granularity(benchmark, rounds, lake):
    stats = _run(benchmark, rounds,
                 lambda: pe.collect_stats(lake, granularity="file", progress=False), "collect_file")
    assert stats.num_rows == NUM_FILES


def test_collect_stats_one_thread(benchmark, rounds, lake):
    stats = _run(benchmark, rounds, lambda: pe.collect_stats(lake, progress=False, threads=1),
                 "collect_1thread")
    assert stats.num_rows == NUM_FILES * ROW_GROUPS


def test_read_metadata_loop(benchmark, rounds, lake):
    files = _files(lake)
    metas = _run(benchmark, rounds, lambda: [pq.read_metadata(p) for p in files], "read_metadata")
    assert len(metas) == NUM_FILES


def test_duckdb_parquet_metadata(benchmark, rounds, lake):
    glob = os.path.join(lake, "*", "*.parquet")
    con = duckdb.connect()
    table = _run(benchmark, rounds, lambda: con.sql(
        f"SELECT * FROM parquet_metadata('{glob}')").to_arrow_table(), "duckdb")
    assert table.num_rows == NUM_FILES * ROW_GROUPS * COLUMNS


FIRST_CALL = """
import os, tempfile, time, pyarrow as pa, pyarrow.parquet as pq
files = FILES
root = tempfile.mkdtemp()
for k in range(files):
    pq.write_table(pa.table({"x": [k, k + 1], "s": ["a", "b"], "f": [0.5, 1.5]}),
                   os.path.join(root, f"f{k:04d}.parquet"))
t = time.perf_counter()
import prune_engine as pe
pe.collect_stats(root, progress=False)
print(time.perf_counter() - t)
"""


@pytest.mark.parametrize("files", [1, 300])
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_first_call(benchmark, cache, files, tmp_path_factory):
    """Import and the first collect_stats in a fresh process: with a cold numba cache the
    footer kernels' Python twins answer while numba compiles beside (prune_engine._warm)."""
    benchmark.group = "collect first call"
    measure(benchmark, FIRST_CALL.replace("FILES", str(files)), cache,
            f"import + collect_stats of {files} file{'s' if files > 1 else ''}",
            tmp_path_factory.getbasetemp() / f"numba_cache_collect_{files}")
