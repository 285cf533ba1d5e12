"""``pes.prune_dataframe`` equals ``pe.prune``, container by container, whatever the batches."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from tests.spark.helpers import write

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session

PREDICATES = [
    "id < 150",
    "u > 18000000000000000000",
    "url LIKE '%/7/%'",
    "array_contains(tags, 't3')",
    "tags IS NULL",
    "st.a = 5 OR id IS NULL",
    "day = DATE '2024-01-02'",
    "NOT (id BETWEEN 100 AND 700)",
    "id IN (3, 170, 555, 901)",
    "url IN ('https://x.example/4/7', 'https://x.example/9/33')",
]


@pytest.fixture(scope="module")
def saved_stats(tmp_path_factory):
    """Row-group statistics with what Spark's types lose: list element statistics (field
    metadata), uint64, an n-gram index; saved as Parquet like any statistics table."""
    root = str(tmp_path_factory.mktemp("frame_lake"))
    rng = np.random.default_rng(9)
    for k in range(12):
        n = 40
        table = pa.table({
            "id": pa.array(rng.integers(k * 80, k * 80 + 80, n), mask=rng.random(n) < 0.05),
            "u": pa.array(rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2), pa.uint64()),
            "url": pa.array([f"https://x.example/{k}/{i}" for i in range(n)]),
            "tags": pa.array([[f"t{k}", "all"] if i % 5 else None for i in range(n)]),
            "st": pa.array([{"a": int(k)}] * n),
        })
        write(os.path.join(root, f"day=2024-01-{k % 3 + 1:02d}", f"f{k}.parquet"), table,
              row_group_size=10)
    stats = pe.collect_stats(root, granularity="row_group", ngram=["url"], progress=False)
    path = os.path.join(str(tmp_path_factory.mktemp("frame_stats")), "stats.parquet")
    stats.save(path)
    return stats, path


@pytest.mark.parametrize("expr", PREDICATES)
def test_prune_dataframe_equals_prune(spark, saved_stats, expr):
    stats, path = saved_stats
    df = spark.read.parquet(path)
    keep = pes.prune_dataframe(df, expr).select("container", "keep").collect()
    got = {r.container: r.keep for r in keep}
    want = dict(zip(stats.column("container").to_pylist(), pe.prune(stats, expr).to_pylist()))
    assert got == want
    assert 0 < sum(want.values()) < len(want) or expr in ("tags IS NULL",), "a useful case"


def test_prune_dataframe_in_many_small_batches_with_an_explicit_schema(spark, saved_stats):
    stats, path = saved_stats
    expr = pe.col("id") < 300
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "7")
    try:
        df = spark.read.parquet(path).repartition(3)
        out = pes.prune_dataframe(df, expr, schema=stats.schema).collect()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    want = dict(zip(stats.column("container").to_pylist(), pe.prune(stats, expr).to_pylist()))
    assert {r.container: r.keep for r in out} == want


def test_prune_dataframe_checks_the_predicate_before_any_job(spark, saved_stats):
    with pytest.raises(pe.UnknownColumnError):
        pes.prune_dataframe(spark.read.parquet(saved_stats[1]), "nope > 1")
