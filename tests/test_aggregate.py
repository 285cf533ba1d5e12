"""``pe.aggregate`` against DuckDB's ``SELECT COUNT(*), COUNT(x), MIN(x), MAX(x) ... WHERE``
on the rows (issue #23): an answer the statistics give alone must be DuckDB's; with the source,
every answer must be, and only the containers ``must_read`` names are read.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prune_engine as pe
from prune_engine.answers import parse
from tests.budget import examples
from tests.scanning.lakes import PREDICATES, TYPES, duck, lake, sort_key

ITEMS = "COUNT(*), COUNT(i), MIN(i), MAX(i), COUNT(f), MIN(f), MAX(f), MIN(t), MAX(s)"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return sort_key(a) == sort_key(b)


def _truth(paths, where) -> dict:
    rows = duck(paths, where, None, None)
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.register("rows", rows)
    con.execute("CREATE TEMP TABLE t AS SELECT * FROM rows")
    values = con.execute(f"SELECT {ITEMS} FROM t").fetchone()
    return dict(zip([i.text for i in parse(ITEMS)], values))


@settings(max_examples=examples(50), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False))
def test_answers_equal_duckdb(rnd, tmp_path_factory):
    paths = lake(rnd, tmp_path_factory.mktemp("agg"), clustered=rnd.random() < 0.5)
    where = rnd.choice(PREDICATES)
    stats = pe.collect_stats(paths, granularity=rnd.choice(["row_group", "file"]),
                             progress=False)
    truth = _truth(paths, where)
    alone = pe.aggregate(stats, ITEMS, where=where)
    for text, value in alone.values.items():
        if alone.exact or value is not None:
            assert _same(value, truth[text]), (text, value, truth[text], where)
    read = pe.aggregate(stats, ITEMS, where=where, source=paths)
    assert read.exact
    assert read.containers_read == sum(alone.must_read.to_pylist())
    for text, value in read.values.items():
        assert _same(value, truth[text]), (text, value, truth[text], where)


def test_count_on_clustered_data_reads_the_boundary_only(tmp_path):
    paths = []
    for i in range(10):
        path = str(tmp_path / f"p{i}.parquet")
        pq.write_table(pa.table({"ts": np.arange(i * 100, i * 100 + 100)}), path)
        paths.append(path)
    stats = pe.collect_stats(paths, granularity="file", progress=False)
    alone = pe.aggregate(stats, "COUNT(*), MIN(ts), MAX(ts)", where="ts >= 450")
    assert not alone.exact and alone.must_read.to_pylist() == [False] * 4 + [True] + [False] * 5
    read = pe.aggregate(stats, "COUNT(*), MIN(ts), MAX(ts)", where="ts >= 450", source=paths)
    assert read.values == {"COUNT(*)": 550, "MIN(ts)": 450, "MAX(ts)": 999}
    assert read.containers_read == 1
    assert pe.aggregate(stats, "COUNT(*)", where="ts >= 500").values == {"COUNT(*)": 500}
    assert read.to_table().to_pylist() == [{"COUNT(*)": 550, "MIN(ts)": 450, "MAX(ts)": 999}]


def test_nan_and_truncated_bounds():
    stats = pa.table({
        "container": ["a", "b"], "num_records": [3, 3],
        "min_values": [{"f": 1.0, "s": "ab"}, {"f": 2.0, "s": "b"}],
        "max_values": [{"f": 5.0, "s": "az"}, {"f": 9.0, "s": "c"}],
        "null_count": [{"f": 0, "s": 0}, {"f": 0, "s": 0}],
        "nan_count": [{"f": 0}, {"f": 1}],
    })
    assert math.isnan(pe.aggregate(stats, "MAX(f)").values["MAX(f)"])
    assert pe.aggregate(stats, "MIN(f)").values == {"MIN(f)": 1.0}
    f64 = pa.struct([("f", pa.float64())])
    only_nan = pa.table({"container": ["a"], "num_records": [2],
                         "min_values": pa.array([{"f": None}], f64),
                         "max_values": pa.array([{"f": None}], f64), "null_count": [{"f": 0}],
                         "nan_count": [{"f": 2}]})
    r = pe.aggregate(only_nan, "MIN(f), MAX(f), COUNT(f)")
    assert r.exact and math.isnan(r.values["MIN(f)"]) and math.isnan(r.values["MAX(f)"])
    assert r.values["COUNT(f)"] == 2
    unknown = stats.set_column(5, "nan_count", pa.array([{"f": 0}, {"f": None}]))
    r = pe.aggregate(unknown, "MAX(f), MIN(f)")
    assert r.values["MAX(f)"] is None and r.must_read.to_pylist() == [False, True]
    # string bounds may be truncated: the containers that may hold the minimum are read
    r = pe.aggregate(stats, "MIN(s)")
    assert not r.exact and r.must_read.to_pylist() == [True, False]
    with pytest.raises(pe.UnknownColumnError):
        pe.aggregate(stats, "MIN(nope)")
    with pytest.raises(pe.PruneEngineError, match="COUNT"):
        pe.aggregate(stats, "SUM(f)")
    with pytest.raises(pe.PruneEngineError, match="COUNT"):
        pe.aggregate(stats, "COUNT(DISTINCT f)")
