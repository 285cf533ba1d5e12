"""``pe.scan`` against DuckDB and against pyarrow reading everything, then selecting.

Seeded random nested data (a struct in a struct, a list of structs, a map, a list of strings,
NaN / -0.0 / inf, nulls at every level, empty lists) in several Parquet files of several row
groups; random predicates (AND / OR / NOT over comparisons, LIKE, IN, IS DISTINCT FROM, element
predicates, array_contains) and random projections. For each: the rows ``pe.scan`` returns are
exactly the rows DuckDB's WHERE keeps (so pruning lost nothing and the row filter has SQL's
semantics), and their values are the full rows' values at the selected paths.
"""

from __future__ import annotations

import random

import duckdb
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.scanning.nested import PROJECTIONS, normalize, predicate, select_rows, write_files


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("scan_lake")
    paths = write_files(root, random.Random(11), files=3, rows=60, row_group_size=15)
    full = pq.read_table(paths)
    stats = pe.collect_stats(paths, progress=False)
    return paths, full, stats


_DUCK: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _close_duckdb():
    """Close the cached connections with the module (an open DuckDB 1.x database holds ~19 GB
    of address space, and a process holding a few cannot fork)."""
    yield
    for con in _DUCK.values():
        con.close()
    _DUCK.clear()


def _duck_ids(paths, duck_sql: str) -> list[int]:
    """DuckDB's answer over the rows loaded into a table: its Parquet reader pushes filters on
    struct fields into the scan and then drops NaN rows (``s.t.c > 'Infinity'`` misses a NaN
    that DuckDB itself orders above infinity), so the oracle filters a table instead."""
    key = tuple(paths)
    if key not in _DUCK:
        con = duckdb.connect()
        files = ", ".join(f"'{p}'" for p in paths)
        con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet([{files}])")
        _DUCK[key] = con
    return [r[0] for r in _DUCK[key].execute(
        f"SELECT id FROM t WHERE {duck_sql} ORDER BY id").fetchall()]


@pytest.mark.parametrize("seed", range(12))
def test_rows_equal_duckdb(lake, seed):
    paths, _, stats = lake
    rnd = random.Random(seed)
    for _ in range(15):
        pe_sql, duck_sql = predicate(rnd)
        expected = _duck_ids(paths, duck_sql)
        got = pe.scan(paths, where=pe_sql, columns=["id"], stats=stats).column("id").to_pylist()
        assert got == expected, f"where {pe_sql}\n  DuckDB: {duck_sql}"


@pytest.mark.parametrize("seed", range(6))
def test_rows_equal_duckdb_with_collected_stats(lake, seed):
    """Without ``stats=``: the scan collects the statistics of the predicate's columns."""
    paths, _, _ = lake
    rnd = random.Random(100 + seed)
    for _ in range(4):
        pe_sql, duck_sql = predicate(rnd)
        got = pe.scan(paths, where=pe_sql, columns=["id"]).column("id").to_pylist()
        assert got == _duck_ids(paths, duck_sql), pe_sql


@pytest.mark.parametrize("seed", range(10))
def test_projection_equals_full_read_then_select(lake, seed):
    paths, full, stats = lake
    rnd = random.Random(1000 + seed)
    chosen = rnd.sample(PROJECTIONS, rnd.randint(1, 4))
    pe_sql, duck_sql = predicate(rnd)
    ids = set(_duck_ids(paths, duck_sql))
    rows = [r for r in full.to_pylist() if r["id"] in ids]
    expected = select_rows(rows, full.schema, chosen)
    got = pe.scan(paths, where=pe_sql, columns=chosen, stats=stats)
    tops = list(dict.fromkeys(c.split(".")[0] for c in chosen))
    assert got.column_names == tops, chosen
    assert [normalize(r) for r in got.to_pylist()] == [normalize(r) for r in expected], \
        f"columns={chosen} where {pe_sql}"


@pytest.mark.parametrize("seed", range(4))
def test_flatten_equals_each_path_alone(lake, seed):
    """``flatten=True``: one column per path, the same values as the nested result's leaf."""
    paths, full, _ = lake
    rnd = random.Random(2000 + seed)
    chosen = rnd.sample(PROJECTIONS, 3)
    flat = pe.scan(paths, columns=chosen, flatten=True)
    assert flat.column_names == [c.replace(".", "_") for c in chosen]
    for path, name in zip(chosen, flat.column_names):
        alone = pe.scan(paths, columns=[path])
        expected = [_leaf_values(v, path.split(".")[1:]) for v in
                    alone.column(0).to_pylist()]
        assert [normalize(v) for v in flat.column(name).to_pylist()] == \
            [normalize(v) for v in expected], path


def _leaf_values(value, rest):
    if value is None or not rest:
        return value
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):
            return [k if rest[0] == "key" else _leaf_values(v, rest[1:]) for k, v in value]
        return [_leaf_values(v, rest) for v in value]
    return _leaf_values(value[rest[0]], rest[1:])


def test_scan_batches_equal_scan(lake):
    paths, _, stats = lake
    where = "s.a > 3 OR orders.qty >= 10"
    table = pe.scan(paths, where=where, columns=["id", "orders.sku"], stats=stats)
    batches = list(pe.scan_batches(paths, where=where, columns=["id", "orders.sku"],
                                   stats=stats, batch_size=7))
    assert all(0 < b.num_rows <= 7 for b in batches), "batches of at most batch_size rows"
    assert all(b.schema == table.schema for b in batches)
    assert sum((b.to_pylist() for b in batches), []) == table.to_pylist()


def test_no_match_is_an_empty_table_of_the_output_schema(lake):
    paths, _, stats = lake
    got = pe.scan(paths, where="id < -100", columns=["s.t.c", "orders.price"], stats=stats)
    assert got.num_rows == 0
    assert got.schema.names == ["s", "orders"]
    assert str(got.schema.field("orders").type) == "list<element: struct<price: double>>"


def test_threads_do_not_change_the_result(lake):
    paths, _, stats = lake
    one = pe.scan(paths, where="x > 0 OR attrs.value = 3", stats=stats, threads=1)
    many = pe.scan(paths, where="x > 0 OR attrs.value = 3", stats=stats, threads=4)
    assert one.schema == many.schema
    assert normalize(one.to_pylist()) == normalize(many.to_pylist())  # NaN != NaN in equals()
