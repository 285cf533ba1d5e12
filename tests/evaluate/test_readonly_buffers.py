"""Statistics whose Arrow buffers are read-only prune exactly like writable ones.

Arrow hands out read-only memory whenever the bytes belong to someone else: an IPC stream read
from ``bytes``, a memory-mapped file, the batches Spark returns through ``mapInArrow`` or
``toArrow``. numba kernels compiled for writable arrays refuse such views (found through the
Spark integration, when ``IN`` lists still ran as numba kernels), so every test path runs here
on a read-only copy.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import prune_engine as pe

QUERIES = [
    "x IN (3, 500, 999)", "x NOT IN (3)", "x = 5", "x BETWEEN 10 AND 20", "f > 0.5",
    "f IN (0.25, 0.75)", "url IN ('https://a/3/p3', 'zz')", "url NOT IN ('https://a/3/p3')",
    "url > 'https://a/5'", "url LIKE 'https://a/1%'", "url LIKE '%/p77%'", "url IS NULL",
]


def read_only(table: pa.Table) -> pa.Table:
    """``table`` read back from an IPC stream held in an immutable ``bytes`` object."""
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return ipc.open_stream(pa.py_buffer(bytes(sink.getvalue()))).read_all()


@pytest.fixture(scope="module")
def tables() -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(3)
    data = pa.table({
        "cid": np.repeat(np.arange(50), 20),
        "x": np.arange(1000, dtype=np.int64),
        "f": np.sort(rng.random(1000)),
        "url": pa.array([f"https://a/{i % 37}/p{i}" for i in range(1000)], mask=np.arange(1000) % 97 == 0),
    })
    stats = pe.stats_from_arrow(data, container="cid", ngram=["url"]).to_arrow()
    frozen = read_only(stats)
    buffer = frozen.column("num_records").chunk(0).buffers()[1]
    assert not np.frombuffer(buffer, dtype=np.int64).flags.writeable  # the premise
    return stats, frozen


@pytest.mark.parametrize("sql", QUERIES)
def test_read_only_statistics_prune_like_writable_ones(tables, sql):
    writable, frozen = tables
    expected = pe.prune(writable, sql)
    assert pe.prune(frozen, sql).equals(expected)


def test_the_queries_prune(tables):
    """The comparison above means something: most queries prune some containers."""
    pruning = [sql for sql in QUERIES if pe.prune(tables[0], sql).false_count]
    assert len(pruning) >= len(QUERIES) - 4, pruning
