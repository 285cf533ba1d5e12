"""``pe.scan(limit=k)``, ``pe.scan(order_by=..., limit=k)`` and ``pe.prune_topk`` against
DuckDB's ``ORDER BY ... LIMIT k`` on the rows (issue #23).

Random files of several row groups (integers at their limits, floats with NaN, -0.0 and
infinities, strings, zoned timestamps, NULLs, empty and all-NULL row groups), statistics per
row group and per file, random predicates and orders: the scan's rows must match the
predicate, and their sort keys must be DuckDB's first ``k`` (ties: the same keys, in order).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prune_engine as pe
from tests.budget import examples
from tests.scanning.lakes import PREDICATES, TYPES, duck, duck_table, sort_key, lake

@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False))
def test_top_k_equals_order_by_limit(rnd, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("topk")
    paths = lake(rnd, tmp, clustered=rnd.random() < 0.5)
    where = rnd.choice(PREDICATES)
    column = rnd.choice(list(TYPES))
    order = f"{column} {rnd.choice(['ASC', 'DESC'])} NULLS {rnd.choice(['FIRST', 'LAST'])}"
    k = rnd.randint(0, 30)
    granularity = rnd.choice(["row_group", "file"])
    stats = pe.collect_stats(paths, granularity=granularity, progress=False)
    got = pe.scan(paths, where=where, order_by=order, limit=k, stats=stats,
                  threads=rnd.choice([1, 3]))
    want = duck(paths, where, order, k)
    assert [sort_key(v) for v in got.column(column).to_pylist()] == \
        [sort_key(v) for v in want.column(column).to_pylist()], (where, order, k, granularity)
    everything = duck(paths, where, None, None).to_pylist()
    for row in got.to_pylist():  # every row returned matches (ties may differ)
        assert any(all(sort_key(row[c]) == sort_key(r[c]) for c in TYPES) for r in everything)
    # the keep-mask alone: the first k rows of the kept containers have the same keys
    keep = pe.prune_topk(stats, where, order_by=order, limit=k).to_pylist()
    pieces = []
    for path, rg, kept in zip(stats.column("path").to_pylist(),
                              stats.column("row_group").to_pylist(), keep):
        if kept:
            f = pq.ParquetFile(path)
            pieces.append(f.read() if rg is None else f.read_row_group(rg))
    again = duck_table(pa.concat_tables(pieces) if pieces else want.schema.empty_table(),
                        where, order, k)
    assert [sort_key(v) for v in again.column(column).to_pylist()] == \
        [sort_key(v) for v in want.column(column).to_pylist()], ("prune_topk", where, order, k)


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False))
def test_limit_returns_k_matching_rows(rnd, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("limit")
    paths = lake(rnd, tmp, clustered=False)
    where = rnd.choice(PREDICATES)
    k = rnd.randint(0, 40)
    stats = pe.collect_stats(paths, granularity=rnd.choice(["row_group", "file"]),
                             progress=False)
    got = pe.scan(paths, where=where, limit=k, stats=stats)
    everything = duck(paths, where, None, None).to_pylist()
    assert got.num_rows == min(k, len(everything)), (where, got.to_pylist(), everything)
    pool = [tuple(sort_key(r[c]) for c in TYPES) for r in everything]
    for row in got.to_pylist():
        key = tuple(sort_key(row[c]) for c in TYPES)
        assert key in pool, (where, row)
        pool.remove(key)


def test_clustered_lake_reads_one_file(tmp_path):
    """2 files of 4 row groups each, clustered on ts: the top 5 are in the last row group."""
    paths = []
    for i in range(4):
        path = str(tmp_path / f"p{i}.parquet")
        pq.write_table(pa.table({"ts": list(range(i * 100, i * 100 + 100)),
                                 "v": [float(x) for x in range(100)]}), path,
                       row_group_size=25)
        paths.append(path)
    stats = pe.collect_stats(paths, progress=False)
    table, summary = pe.scan(paths, order_by="ts DESC", limit=5, stats=stats,
                             return_summary=True)
    assert table.column("ts").to_pylist() == [399, 398, 397, 396, 395]
    assert (summary.files_read, summary.row_groups_read) == (1, 1)
    # the statistics alone: every row matches, so the last row group's 25 rows suffice
    assert pe.prune_topk(stats, None, order_by="ts DESC", limit=5).to_pylist() == \
        [False] * 15 + [True]
    assert sum(pe.prune_topk(stats, "v >= 0", order_by="ts ASC", limit=30).to_pylist()) == 2
    # LIMIT without order: one row group where every row matches is enough
    table, summary = pe.scan(paths, where="ts >= 150", limit=10, stats=stats,
                             return_summary=True)
    assert table.num_rows == 10 and summary.row_groups_read == 1
    assert all(t >= 150 for t in table.column("ts").to_pylist())


def test_rows_of_entire_containers_are_not_filtered(tmp_path, monkeypatch):
    from prune_engine.scanning import api

    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": list(range(40))}), path, row_group_size=10)
    calls = []
    original = api._Plan._mask
    monkeypatch.setattr(api._Plan, "_mask", lambda self, t: calls.append(t.num_rows)
                        or original(self, t))
    table = pe.scan(path, where="x >= 15")
    assert table.column("x").to_pylist() == list(range(15, 40))
    assert calls == [10]  # only the row group 10..19 is filtered; 20..39 match entirely


def test_errors(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": [1, 2], "l": [[1], [2]]}), path)
    with pytest.raises(pe.ScanError, match="limit"):
        pe.scan(path, order_by="x")
    with pytest.raises(pe.ScanError, match="limit"):
        pe.scan(path, limit=-1)
    with pytest.raises(pe.PruneEngineError, match="order_by"):
        pe.scan(path, order_by="x SIDEWAYS", limit=1)
    with pytest.raises(pe.ColumnPathError):
        pe.scan(path, order_by="l", limit=1)
    with pytest.raises(pe.UnknownColumnError, match="nope"):
        pe.prune_topk(pe.collect_stats(path, progress=False), None, order_by="nope",
                      limit=1)
    assert pe.scan(path, order_by="x DESC", limit=0).num_rows == 0


def test_recorded_footers_are_not_opened(tmp_path, monkeypatch):
    """Statistics from collect_stats record each file's schema and row groups: a scan with
    them opens the footers of the files it reads only, unless a file changed since."""
    import os

    paths = []
    for i in range(6):
        path = str(tmp_path / f"p{i}.parquet")
        pq.write_table(pa.table({"ts": list(range(i * 10, i * 10 + 10)),
                                 **({"extra": ["e"] * 10} if i == 0 else {})}), path,
                       row_group_size=5)
        paths.append(path)
    stats = pe.collect_stats(paths, progress=False)
    from prune_engine.scanning import api

    opened = []
    real = api.read_footer
    monkeypatch.setattr(api, "read_footer", lambda where, fs=None: opened.append(where)
                        or real(where, fs))
    table, summary = pe.scan(paths, where="ts >= 55", stats=stats, return_summary=True)
    assert table.column("ts").to_pylist() == list(range(55, 60))
    assert table.column_names == ["ts", "extra"]  # the schema of every file, p0's too
    assert opened == [] and summary.row_groups_total == 12 and summary.row_groups_read == 1
    top = pe.scan(paths, order_by="ts DESC", limit=3, stats=stats)
    assert top.column("ts").to_pylist() == [59, 58, 57] and opened == []
    # a rewritten file is not trusted: its footer is read again, its rows all read
    pq.write_table(pa.table({"ts": [100, 101]}), paths[2])
    os.utime(paths[2], ns=(1, 1))
    table = pe.scan(paths, where="ts >= 55", stats=stats)
    assert sorted(table.column("ts").to_pylist()) == [55, 56, 57, 58, 59, 100, 101]
    assert opened == [paths[2]]
    # a rewrite the identity cannot see (as an object store's same size and time): the
    # footer check stops the scan instead of reading with the recorded schema
    stats = pe.collect_stats(paths, progress=False)
    pq.write_table(pa.table({"ts": [50.5] * 10}), paths[5], row_group_size=5)
    stats.metadata["files"][paths[5]] = \
        pe.collect_stats([paths[5]], progress=False).metadata["files"][paths[5]]
    with pytest.raises(pe.ScanError, match="rewritten in place"):
        pe.scan(paths, where="ts >= 55", stats=stats)
