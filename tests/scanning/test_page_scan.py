"""``pe.scan`` with a page index: only the pages of the rows that may match are read.

Files written by pyarrow with the page index and small pages (about 60 per column chunk), in
several row groups: a sorted int64 key, a sorted zoned timestamp, a clustered string (with
and without dictionary encoding), nullable columns, floats with NaN, a struct and a list;
codecs snappy / zstd / none, data pages v1 and v2. For random predicates the rows
``pe.scan`` / ``pe.scan_batches`` / a top-k return equal DuckDB's on the rows; the page path
is shown to be taken (no flat leaf read whole), and a point lookup on the sorted key reads a
small fraction of the bytes a file without page index needs.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_engine as pe
from prune_engine.scanning import pages as page_reading
from tests.oracle.duck import load_table
from tests.scanning.page_reads import whole_flat_reads

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from counting_fs import CountingFileSystem  # noqa: E402

ROWS, GROUP = 12_000, 3_000
BASE = np.datetime64("2024-01-01T00:00:00", "us")


def _table(rows: int = ROWS) -> pa.Table:
    rng = np.random.default_rng(7)
    k = np.arange(rows, dtype=np.int64)
    f = rng.normal(size=rows)
    f[rng.random(rows) < 0.05] = np.nan
    n = pa.array(np.where(k % 9 == 0, 0, k // 40), pa.int64(), mask=(k // 300) % 4 == 1)
    return pa.table({
        "k": k,
        "ts": pa.array(BASE + k * np.timedelta64(90, "s")).cast(
            pa.timestamp("us", "Europe/Paris")),
        "s": pa.array([f"v{i // 400:03d}" for i in range(rows)]),
        "d": pa.array([None if i % 13 == 0 else f"w{(i * 7) // 500:04d}" for i in range(rows)]),
        "n": n,
        "f": f,
        "st": pa.array([None if i % 17 == 0 else {"a": i // 10, "b": None if i % 5 == 0
                                                  else f"b{i // 100}"} for i in range(rows)]),
        "l": pa.array([None if i % 11 == 0 else [i % 50, i // 100] for i in range(rows)]),
    })


def _write(path, table: pa.Table, page_index: bool = True, row_group_size: int = GROUP,
           batch: int = 50, **options) -> str:
    pq.write_table(table, path, row_group_size=row_group_size, write_page_index=page_index,
                   data_page_size=256, write_batch_size=batch, **options)
    return str(path)


LAYOUTS = {
    "snappy-v1-dict": dict(compression="snappy", data_page_version="1.0"),
    "zstd-v2-plain": dict(compression="zstd", data_page_version="2.0", use_dictionary=False),
    "none-v2-dict": dict(compression="none", data_page_version="2.0",
                         use_dictionary=["s", "d"]),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("page_scan")
    table = _table()
    return {name: _write(root / f"{name}.parquet", table, **opts)
            for name, opts in LAYOUTS.items()}


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    load_table(con, "t", _table())
    yield con
    con.close()


def _ts(seconds: int) -> str:
    stamp = (BASE + np.timedelta64(int(seconds), "s")).astype("datetime64[s]")
    return f"TIMESTAMPTZ '{str(stamp).replace('T', ' ')}+00:00'"


def _leaf(draw) -> str:
    kind = draw(st.sampled_from(["k", "k", "ts", "s", "d", "n", "f", "st.a", "st.b", "null"]))
    op = draw(st.sampled_from(["=", "<", "<=", ">", ">=", "!="]))
    if kind == "k":
        return f"k {op} {draw(st.integers(-5, ROWS + 5))}"
    if kind == "ts":
        return f"ts {op} {_ts(draw(st.integers(0, ROWS * 90)))}"
    if kind == "s":
        return f"s {op} 'v{draw(st.integers(0, ROWS // 400)):03d}'"
    if kind == "d":
        return f"d {op} 'w{draw(st.integers(0, ROWS * 7 // 500)):04d}'"
    if kind == "n":
        return f"n {op} {draw(st.integers(0, ROWS // 40))}"
    if kind == "f":
        value = draw(st.sampled_from(["0.5", "-1.0", "2.0", "CAST('NaN' AS DOUBLE)"]))
        return f"f {op} {value}"
    if kind == "st.a":
        return f"st.a {op} {draw(st.integers(0, ROWS // 10))}"
    if kind == "st.b":
        return f"st.b {op} 'b{draw(st.integers(0, ROWS // 100))}'"
    column = draw(st.sampled_from(["n", "d", "st.b", "st"]))
    return f"{column} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"


@st.composite
def predicates(draw, depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return _leaf(draw)
    joiner = draw(st.sampled_from([" AND ", " OR "]))
    parts = [draw(predicates(depth - 1)) for _ in range(draw(st.integers(2, 3)))]
    text = "(" + joiner.join(parts) + ")"
    return f"NOT {text}" if draw(st.integers(0, 4)) == 0 else text


PROJECTIONS = [None, ["k"], ["st.b", "s"], ["l", "f", "ts"], ["st"]]


def _normal(rows: list[dict]) -> list[dict]:
    """Rows comparable with ``==`` (NaN made a string)."""
    def fix(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return [fix(r) for r in rows]


_READ: dict = {}


def _expected(duck, where: str, columns, path: str) -> list[dict]:
    """DuckDB's matching rows (by key: row ``k`` is the file's row ``k``), with the columns
    of a whole read of ``path`` without predicate (no page is skipped there)."""
    ids = [r[0] for r in duck.execute(f"SELECT k FROM t WHERE {where} ORDER BY k").fetchall()]
    key = path, str(columns)
    if key not in _READ:
        _READ[key] = pe.scan(path, columns=columns)
    return _normal(_READ[key].take(pa.array(ids, pa.int64())).to_pylist())


@pytest.fixture
def no_whole_flat_reads(monkeypatch):
    """Fail if a flat leaf is read whole (its pages not used) on a page-index file."""
    return whole_flat_reads(monkeypatch)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@settings(max_examples=25)
@given(where=predicates(), columns=st.sampled_from(PROJECTIONS))
def test_scan_equals_duckdb(files, duck, layout, where, columns):
    got = pe.scan(files[layout], where=where, columns=columns)
    assert _normal(got.to_pylist()) == _expected(duck, where, columns, files[layout]), \
        f"{where!r} on {layout}, columns {columns}: the rows read from the pages differ"


@pytest.mark.parametrize("layout", list(LAYOUTS))
@settings(max_examples=10)
@given(where=predicates(), batch=st.sampled_from([7, 100, 5000]))
def test_scan_batches_equal_duckdb(files, duck, layout, where, batch):
    batches = list(pe.scan_batches(files[layout], where=where, batch_size=batch))
    assert all(0 < b.num_rows <= batch for b in batches)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    assert _normal(rows) == _expected(duck, where, None, files[layout]), \
        f"{where!r} on {layout} (batches)"


@pytest.mark.parametrize("layout", list(LAYOUTS))
@settings(max_examples=10)
@given(where=predicates(), desc=st.booleans(), limit=st.sampled_from([1, 5, 40]))
def test_top_k_equals_duckdb(files, duck, layout, where, desc, limit):
    order = "DESC" if desc else "ASC"
    got = pe.scan(files[layout], where=where, order_by=f"k {order}", limit=limit)
    ids = [r[0] for r in duck.execute(
        f"SELECT k FROM t WHERE {where} ORDER BY k {order} LIMIT {limit}").fetchall()]
    assert got.column("k").to_pylist() == ids, f"{where!r} ORDER BY k {order} LIMIT {limit}"
    limited = pe.scan(files[layout], where=where, limit=limit).column("k").to_pylist()
    matching = {r[0] for r in duck.execute(f"SELECT k FROM t WHERE {where}").fetchall()}
    assert len(limited) == min(limit, len(matching)) and set(limited) <= matching


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("where", [
    "k = 4321", "k BETWEEN 100 AND 180 OR k = 9000", "s = 'v010'",
    f"ts >= {_ts(5000 * 90)} AND ts < {_ts(5030 * 90)}", "st.a = 77 OR n = 120",
    "NOT (k >= 50 AND k < 11950)"])
def test_pages_are_used_and_rows_equal(files, duck, layout, where, no_whole_flat_reads):
    got = pe.scan(files[layout], where=where)
    assert _normal(got.to_pylist()) == _expected(duck, where, None, files[layout]), where
    assert not no_whole_flat_reads, f"{where!r}: flat leaves read whole: {no_whole_flat_reads}"


def _bytes_read(path: str, where: str, columns) -> tuple[int, pa.Table]:
    fs = CountingFileSystem()
    table = pe.scan(path, where=where, columns=columns, filesystem=fs, threads=1)
    return fs.bytes_read, table


def test_point_lookup_reads_few_bytes(tmp_path, no_whole_flat_reads, monkeypatch):
    """A point lookup on the sorted key reads the footers, the page index and about one
    page per column of the row group the statistics keep: a small part of what a file
    without page index reads (that row group's column chunks whole), the same rows. (Of the
    bytes read with the page index, most are the footers and the index itself.)"""
    table = _table(200_000).drop_columns(["l", "st"])
    options = dict(row_group_size=100_000, batch=500, use_dictionary=["s", "d"])
    indexed = _write(tmp_path / "indexed.parquet", table, **options)
    plain = _write(tmp_path / "plain.parquet", table, page_index=False, **options)
    where, columns = "k = 123457", ["k", "ts", "s", "f"]
    read = page_reading._read
    pages: list[int] = []
    monkeypatch.setattr(page_reading, "_read",
                        lambda source, at, size: pages.append(size) or read(source, at, size))
    with_index, rows = _bytes_read(indexed, where, columns)
    without, plain_rows = _bytes_read(plain, where, columns)
    assert rows.column("k").to_pylist() == [123457] and rows.equals(plain_rows)
    assert with_index * 5 < without, \
        f"the page index should cut the bytes read: {with_index} vs {without} without it"
    assert with_index * 10 < os.path.getsize(indexed)
    assert 0 < sum(pages) < 4_000 * len(columns), \
        f"about one page (500 rows) per column: {pages} (the dictionary of s included)"
    assert not no_whole_flat_reads


def test_file_without_page_index_reads_as_before(tmp_path, monkeypatch):
    """No page index: the page reader is never asked (the chunks are read whole)."""
    path = _write(tmp_path / "plain.parquet", _table(), page_index=False)

    def refuse(*args, **kwargs):
        raise AssertionError("the page reader should not run on a file without page index")

    monkeypatch.setattr(page_reading, "_selected", refuse)
    got = pe.scan(path, where="k = 5 OR s = 'v020'")
    assert got.column("k").to_pylist() == [5] + list(range(8000, 8400))


def test_a_lying_page_index_falls_back_to_whole_reads(tmp_path, monkeypatch, duck):
    """Page row counts that disagree with the pages' headers are not decoded into shifted
    rows: the chunk is read whole, and the rows are still DuckDB's."""
    path = _write(tmp_path / "a.parquet", _table(), compression="snappy")
    places = page_reading.page_places

    def shifted(footer):
        """Every other page boundary one row later: each page's row count one more or one
        fewer than its header says."""
        p = places(footer)
        for c in np.flatnonzero(p.count > 2):
            k = slice(p.first[c], p.first[c] + p.count[c])
            first, rows = p.first_row[k], p.row_count[k]
            first[1::2] += 1
            rows[:-1] = first[1:] - first[:-1]
            rows[-1] = int(footer.num_rows[0]) - first[-1]
        return p

    monkeypatch.setattr(page_reading, "page_places", shifted)
    where = "k BETWEEN 4000 AND 4100 OR st.b = 'b77'"
    got = pe.scan(path, where=where)
    assert _normal(got.to_pylist()) == _expected(duck, where, None, path)
