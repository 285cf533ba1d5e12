"""Speed of decoding the Parquet page index over a lake (issue #35, "decoding the page index of
a 2,000-file lake >= 2,000 files per second").

One group, ``page index 2000 files``, over one lake of 2,000 files x 2 row groups x 3 columns
(a sorted int64, a clustered string, a float), written by pyarrow with ``write_page_index=True``
and small pages (about 20 pages per column chunk):

    page_stats      prune_engine.stats.page_index.page_stats(root): each file's footer and
                    page-index byte range read, decoded (numba, warm) and laid out as one
                    statistics table per column, one row per page
    read_metadata   a plain Python loop of pyarrow.parquet.read_metadata (footers only; pyarrow
                    cannot read the page index from Python): the floor of a pyarrow reader

``extra_info["files_per_s"]`` is the throughput; ``PAGE_INDEX_BENCH_FILES`` shrinks the lake
for a quick look. A second group, ``page index first call``, times a fresh process's first
``page_stats`` of one file with numba's cache cold (the kernels compile while their Python
twins answer) and warm. Run::

    python -m pytest bench/test_bench_page_index.py --benchmark-json=page_index.json -q
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from first_call import measure
from prune_engine.stats.page_index import PAGE_KERNELS, page_stats

NUM_FILES = int(os.environ.get("PAGE_INDEX_BENCH_FILES", 2_000))
ROW_GROUPS = 2
ROWS_PER_GROUP = 2_000
PAGE_ROWS = 100


@pytest.fixture(scope="session")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("page_index_lake")
    rng = np.random.default_rng(0)
    n = ROW_GROUPS * ROWS_PER_GROUP
    for k in range(NUM_FILES):
        key = np.sort(rng.integers(0, 10**9, n))
        table = pa.table({"key": key,
                          "name": pa.array([f"n{v // 97:08d}" for v in key.tolist()]),
                          "value": rng.random(n)})
        pq.write_table(table, str(root / f"f{k:05d}.parquet"), row_group_size=ROWS_PER_GROUP,
                       write_page_index=True, data_page_size=1, write_batch_size=PAGE_ROWS)
    return str(root)


def _run(benchmark, rounds, fn, engine):
    benchmark.group = f"page index {NUM_FILES} files"
    benchmark.extra_info["engine"] = engine
    result = benchmark.pedantic(fn, rounds=rounds(3), iterations=1, warmup_rounds=1)
    benchmark.extra_info["files_per_s"] = NUM_FILES / benchmark.stats.stats.median
    return result


def test_page_stats(benchmark, rounds, lake):
    PAGE_KERNELS.wait()  # warm: compile time is the first-call group's
    pages = _run(benchmark, rounds, lambda: page_stats(lake), "page_stats")
    assert pages.groups.num_rows == NUM_FILES * ROW_GROUPS
    per_chunk = ROWS_PER_GROUP // PAGE_ROWS
    assert pages.columns["key"].num_rows == NUM_FILES * ROW_GROUPS * per_chunk


def test_read_metadata_loop(benchmark, rounds, lake):
    files = sorted(os.path.join(lake, f) for f in os.listdir(lake))
    metas = _run(benchmark, rounds, lambda: [pq.read_metadata(p) for p in files],
                 "read_metadata")
    assert len(metas) == NUM_FILES


FIRST_CALL = """
import os, tempfile, time, pyarrow as pa, pyarrow.parquet as pq
root = tempfile.mkdtemp()
pq.write_table(pa.table({"x": list(range(1000))}), os.path.join(root, "f.parquet"),
               write_page_index=True, data_page_size=1, write_batch_size=100)
t = time.perf_counter()
from prune_engine.stats.page_index import page_stats
page_stats(root)
print(time.perf_counter() - t)
"""


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_first_call(benchmark, cache, tmp_path_factory):
    """Import and the first page_stats in a fresh process: with a cold numba cache the
    kernels' Python twins answer while numba compiles beside (prune_engine._warm)."""
    benchmark.group = "page index first call"
    measure(benchmark, FIRST_CALL, cache, "import + page_stats of 1 file",
            tmp_path_factory.getbasetemp() / "numba_cache_page_index")
