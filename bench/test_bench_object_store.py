"""Statistics of a lake on an object store (issue #22, Speed): files per second from an S3 API
served on localhost (moto's server, started and stopped here), side by side with the peer a
user would pick (pyarrow reading each footer with ``pq.read_metadata``, in threads).

The lake: ``OBJECT_BENCH_FILES`` Parquet files (default 500; 8 columns, 2 row groups each)
uploaded once per session. Groups:

    object store collect    ``pe.collect_stats("s3://...")`` with 16 threads (a store has
                            latency: more threads than cores), against ``pq.read_metadata``
                            of every file in 16 threads (footers only, no statistics table)

A local server answers in well under a millisecond, so these numbers are a floor for the
per-request cost; against a real store's 10-50 ms per request, the requests per footer
(one ranged read for a footer under 64 KiB, besides the open) decide. Run::

    python -m pytest bench/test_bench_object_store.py --benchmark-json=s3.json -q
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import prune_engine as pe

NUM_FILES = int(os.environ.get("OBJECT_BENCH_FILES", 500))
THREADS = 16
ROUNDS = 5


@pytest.fixture(scope="module")
def store():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    fs = pafs.S3FileSystem(access_key="bench", secret_key="bench", region="us-east-1",
                           scheme="http", endpoint_override=f"{host}:{port}",
                           allow_bucket_creation=True)
    fs.create_dir("bench")
    rng = np.random.default_rng(3)
    for k in range(NUM_FILES):
        table = pa.table({f"c{j}": pa.array(rng.integers(0, 1000, 200) + k * 1000)
                          for j in range(8)})
        pq.write_table(table, f"bench/lake/part-{k:05d}.parquet", filesystem=fs,
                       row_group_size=100)
    yield fs
    server.stop()


def _record(benchmark, engine: str) -> None:
    benchmark.group = "object store collect"
    benchmark.extra_info.update({"group": benchmark.group, "engine": engine,
                                 "files": NUM_FILES, "threads": THREADS})


def test_collect_stats_from_s3(benchmark, rounds, store):
    _record(benchmark, "pe.collect_stats")
    stats = benchmark.pedantic(
        lambda: pe.collect_stats("bench/lake", granularity="file", filesystem=store,
                                 threads=THREADS, progress=False),
        rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    assert stats.num_rows == NUM_FILES
    benchmark.extra_info["files_per_s"] = NUM_FILES / benchmark.stats.stats.median


def test_read_metadata_from_s3(benchmark, rounds, store):
    _record(benchmark, "pq.read_metadata")
    paths = [i.path for i in store.get_file_info(pafs.FileSelector("bench/lake"))]

    def run():
        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(lambda p: pq.read_metadata(p, filesystem=store), paths))

    metas = benchmark.pedantic(run, rounds=rounds(ROUNDS), iterations=1, warmup_rounds=1)
    assert len(metas) == NUM_FILES
    benchmark.extra_info["files_per_s"] = NUM_FILES / benchmark.stats.stats.median
