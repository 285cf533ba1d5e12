"""Speed and bytes read of ``pe.scan`` against the readers a user would pick instead (issue #11).

One Parquet file of about 150 MB, written once per session into a temp dir: ``id`` (int64,
ascending), ``s`` (a struct of 20 random int64 children ``c00``..``c19``) and ``orders`` (a list
of ``struct<sku: int64, price: double>``, 0-3 per row); 100 row groups.

Group ``scan one leaf``: read ``s.c07`` alone.

    pe.scan         pe.scan(path, columns=["s.c07"])
    ds.field        pyarrow.dataset scanner, columns={"c07": ds.field("s", "c07")}
    read_table      pyarrow.parquet.read_table(path, columns=["s.c07"])
    duckdb          SELECT s.c07 FROM read_parquet(path), fetched as Arrow

Group ``scan list leaf``: read ``orders.price`` (the ``price`` of every element), by pe.scan
and DuckDB (``list_transform(orders, o -> o.price)``); pyarrow's dataset scanner cannot follow
a path through a list.

Group ``scan pruned 1%``: ``id BETWEEN a AND b`` matching one row group of the 100, selecting
``id`` and ``s.c07``.

    pe.scan         with the statistics collected beforehand (stats=)
    pe.scan+stats   collecting the statistics of ``id`` itself (footer read included)
    ds.filter       pyarrow.dataset with filter=(ds.field("id") >= a) & (... <= b)
    duckdb          ... WHERE id BETWEEN a AND b

``extra_info["bytes_read"]`` is what each engine read from disk, counted in a separate run
through a counting filesystem (``counting_fs.py``; DuckDB through an fsspec filesystem), and
``extra_info["leaf_bytes"]`` the compressed size of the selected leaves' column chunks.
``SCAN_BENCH_ROWS`` shrinks the file for a quick look. Run::

    python -m pytest bench/test_bench_scan.py --benchmark-json=scan.json -q
    python bench/report.py scan.json
"""

from __future__ import annotations

import os

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import duckdb
import prune_engine as pe
from counting_fs import bytes_read
from wide import leaf_bytes, write_wide

ROWS = int(os.environ.get("SCAN_BENCH_ROWS", 800_000))
ROW_GROUPS = 100
CHILDREN = 20
LEAF = "c07"


@pytest.fixture(scope="session")
def wide(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("scan_bench") / "wide.parquet")
    write_wide(path, ROWS, ROW_GROUPS, CHILDREN)
    return path


# each engine: (timed function of (path, fs) -> Arrow table, bytes-read function)
def _pe_leaf(path, fs=None):
    source = path if fs is None else ds.dataset(path, filesystem=fs, format="parquet")
    return pe.scan(source, columns=[f"s.{LEAF}"])


def _ds_field(path, fs=None):
    return ds.dataset(path, filesystem=fs, format="parquet").to_table(
        columns={LEAF: ds.field("s", LEAF)})


def _read_table(path, fs=None):
    return pq.read_table(path, filesystem=fs, columns=[f"s.{LEAF}"])


def _duck(sql: str):
    def run(path, counter_con=None):
        con = counter_con or duckdb.connect()
        return con.sql(sql.format(path=path)).to_arrow_table()
    return run


ONE_LEAF = {
    "pe.scan": _pe_leaf,
    "ds.field": _ds_field,
    "read_table": _read_table,
    "duckdb": _duck(f"SELECT s.{LEAF} FROM read_parquet('{{path}}')"),
}




def _run(benchmark, rounds, group: str, engine: str, fn, path: str, leaf_bytes: int):
    benchmark.group = group
    benchmark.extra_info["engine"] = engine
    table = benchmark.pedantic(fn, (path,), rounds=rounds(3), iterations=1, warmup_rounds=1)
    read = bytes_read(engine, fn, path)
    benchmark.extra_info["bytes_read"] = read
    benchmark.extra_info["leaf_bytes"] = leaf_bytes
    benchmark.extra_info["rows"] = table.num_rows
    return table


@pytest.mark.parametrize("engine", list(ONE_LEAF))
def test_one_leaf(benchmark, rounds, wide, engine):
    table = _run(benchmark, rounds, "scan one leaf", engine, ONE_LEAF[engine], wide,
                 leaf_bytes(wide, [f"s.{LEAF}"]))
    assert table.num_rows == ROWS


LIST_LEAF = {
    "pe.scan": lambda path, fs=None: pe.scan(
        path if fs is None else ds.dataset(path, filesystem=fs, format="parquet"),
        columns=["orders.price"]),
    "duckdb": _duck("SELECT list_transform(orders, lambda o: o.price) AS price "
                    "FROM read_parquet('{path}')"),
}


@pytest.mark.parametrize("engine", list(LIST_LEAF))
def test_list_leaf(benchmark, rounds, wide, engine):
    table = _run(benchmark, rounds, "scan list leaf", engine, LIST_LEAF[engine], wide,
                 leaf_bytes(wide, ["orders.list.element.price"]))
    assert table.num_rows == ROWS


LOW = (ROWS // ROW_GROUPS) * 37
HIGH = LOW + ROWS // ROW_GROUPS - 1
WHERE = f"id BETWEEN {LOW} AND {HIGH}"


@pytest.fixture(scope="session")
def wide_stats(wide):
    return pe.collect_stats(wide, progress=False)


def _pruned(stats=None):
    def run(path, fs=None):
        source = path if fs is None else ds.dataset(path, filesystem=fs, format="parquet")
        return pe.scan(source, where=WHERE, columns=["id", f"s.{LEAF}"], stats=stats)
    return run


def _ds_filter(path, fs=None):
    return ds.dataset(path, filesystem=fs, format="parquet").to_table(
        columns={"id": ds.field("id"), LEAF: ds.field("s", LEAF)},
        filter=(ds.field("id") >= LOW) & (ds.field("id") <= HIGH))


@pytest.mark.parametrize("engine", ["pe.scan", "pe.scan+stats", "ds.filter", "duckdb"])
def test_pruned_one_percent(benchmark, rounds, wide, wide_stats, engine):
    fn = {"pe.scan": _pruned(wide_stats), "pe.scan+stats": _pruned(), "ds.filter": _ds_filter,
          "duckdb": _duck(f"SELECT id, s.{LEAF} FROM read_parquet('{{path}}') "
                          f"WHERE {WHERE}")}[engine]
    table = _run(benchmark, rounds, "scan pruned 1%", engine, fn, wide,
                 leaf_bytes(wide, ["id", f"s.{LEAF}"], row_groups=[37]))
    assert table.num_rows == ROWS // ROW_GROUPS
