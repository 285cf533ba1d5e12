"""Page-level pruning (issue #35, "Speed and reach"): a point lookup read through the page
index against pyarrow.dataset and DuckDB, and the row ranges of an OR across two columns.

One Parquet file written once per session by pyarrow with its page index
(``write_page_index=True``): 8 row groups of ``ROWS / 8`` rows, a sorted int64 ``key``, a sorted
timestamp ``ts``, a clustered string ``name`` and a random float64 ``value``, with about 100
pages per column chunk (``write_batch_size`` = rows per page, ``data_page_size=1``: every batch
its own page).

Group ``pages point lookup, <layout>``: ``key = K`` (one row, in row group 3), every column, on
two copies of the file: dictionaries on every column (pyarrow's default: a page of the unique
columns then needs its chunk's 1 MiB dictionary page) and on ``name`` only:

    ds.filter   pyarrow.dataset(path).to_table(filter=ds.field("key") == K)
    duckdb      SELECT * FROM read_parquet(path) WHERE key = K, fetched as Arrow
    pe.scan        pe.scan(path, where="key = K")
    pe.scan+stats  the same, given the file's saved statistics

``extra_info["bytes_read"]``: what each read from disk, counted in a separate run through the
counting filesystem (``counting_fs.py``), ``leaf_bytes``: the compressed size of the row
group's column chunks; ``pe.scan`` (run last) also records ``bytes_vs_dataset`` and
``time_vs_dataset``, its bytes and median time over ``ds.filter``'s (targets: at most 1/40 and
1/10, met only where ``pe.scan`` reads the selected pages alone).

Group ``pages OR two columns``: ``pe.prune_rows(path, "key = A OR ts = T")``, A and T in
different row groups: ``rows_selected`` against ``row_group_rows`` (the rows of the row groups
that may hold a match, what a row-group prune reads) and ``pages_selected`` against
``row_group_pages`` of ``key`` (DataFusion's page filter keeps every page for an OR across
columns). ``PAGES_BENCH_ROWS`` shrinks the file (``bench/run.py --quick``). Run::

    python -m pytest bench/test_bench_pages.py --benchmark-json=pages.json -q
    python bench/report.py pages.json
"""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import duckdb
import prune_engine as pe
from counting_fs import bytes_read
from prune_engine.stats.page_index import page_stats
from wide import leaf_bytes

ROWS = int(os.environ.get("PAGES_BENCH_ROWS", 2_000_000))
ROW_GROUPS = 8
PAGES_PER_CHUNK = 100
GROUP_ROWS = ROWS // ROW_GROUPS
PAGE_ROWS = GROUP_ROWS // PAGES_PER_CHUNK
COLUMNS = ["key", "ts", "name", "value"]
START = dt.datetime(2024, 1, 1)
KEY = 2 * (3 * GROUP_ROWS + GROUP_ROWS // 2 + 7)  # key = 2 * row: one row of row group 3


#: the dictionaries of the point lookup's files: pyarrow's default (every column: the unique
#: ``key``, ``ts`` and ``value`` fill a 1 MiB dictionary page per chunk, which a page of them
#: needs before the writer falls back to plain pages), and only the clustered ``name``
LAYOUTS = {"dictionary on every column": True, "dictionary on name": ["name"]}


def _write(path: str, use_dictionary) -> str:
    rng = np.random.default_rng(35)
    row = np.arange(ROWS, dtype=np.int64)
    table = pa.table({
        "key": row * 2,
        "ts": pa.array(np.datetime64(START, "us") + row * 1_000_000, pa.timestamp("us")),
        "name": pa.array([f"name-{v:06d}" for v in (row // 5_000).tolist()]),
        "value": rng.random(ROWS)})
    pq.write_table(table, path, row_group_size=GROUP_ROWS, write_page_index=True,
                   data_page_size=1, write_batch_size=PAGE_ROWS, use_dictionary=use_dictionary)
    return path


@pytest.fixture(scope="session")
def pages_files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("pages_bench")
    return {layout: _write(str(folder / f"pages-{i}.parquet"), use)
            for i, (layout, use) in enumerate(LAYOUTS.items())}


@pytest.fixture(scope="session")
def pages_file(pages_files) -> str:
    return pages_files["dictionary on every column"]


#: each file's saved statistics, collected once (what a user with saved statistics passes)
_STATS: dict[str, pe.StatsTable] = {}


def _pe_scan(path, fs=None):
    source = path if fs is None else ds.dataset(path, filesystem=fs, format="parquet")
    return pe.scan(source, where=f"key = {KEY}", columns=COLUMNS)


def _pe_scan_saved(path, fs=None):
    local = path.removeprefix("count://")
    if local not in _STATS:
        _STATS[local] = pe.collect_stats(local, progress=False)
    source = path if fs is None else ds.dataset(path, filesystem=fs, format="parquet")
    return pe.scan(source, where=f"key = {KEY}", columns=COLUMNS, stats=_STATS[local])


def _ds_filter(path, fs=None):
    return ds.dataset(path, filesystem=fs, format="parquet").to_table(
        columns=COLUMNS, filter=ds.field("key") == KEY)


def _duckdb(path, con=None):
    con = con or duckdb.connect()
    return con.sql(f"SELECT {', '.join(COLUMNS)} FROM read_parquet('{path}') "
                   f"WHERE key = {KEY}").to_arrow_table()


#: pe.scan collects the statistics of ``key`` itself (its footer read counted); pe.scan+stats is
#: given them, saved. The pe.scan runs come last: their ratios are to ds.filter's
LOOKUP = {"ds.filter": _ds_filter, "duckdb": _duckdb, "pe.scan": _pe_scan,
          "pe.scan+stats": _pe_scan_saved}

#: per layout, ds.filter's median seconds and bytes read in this run, for pe.scan's ratios
_BASE: dict[str, dict[str, float]] = {}




@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("engine", list(LOOKUP))
def test_point_lookup(benchmark, rounds, pages_files, layout, engine):
    fn = LOOKUP[engine]
    pages_file = pages_files[layout]
    benchmark.group = f"pages point lookup, {layout}"
    benchmark.extra_info.update(engine=engine, layout=layout)
    table = benchmark.pedantic(fn, (pages_file,), rounds=rounds(5), iterations=1,
                               warmup_rounds=1)
    assert table.num_rows == 1 and table.column("key").to_pylist() == [KEY]
    read = bytes_read(engine, fn, pages_file)
    benchmark.extra_info.update(bytes_read=read, rows=table.num_rows, file_rows=ROWS,
                                pages_per_chunk=PAGES_PER_CHUNK,
                                leaf_bytes=leaf_bytes(pages_file, COLUMNS, row_groups=[3]))
    if benchmark.stats is None:  # --benchmark-disable: no time to compare
        return
    seconds = benchmark.stats.stats.median
    if engine == "ds.filter":
        _BASE[layout] = {"seconds": seconds, "bytes": read}
    elif engine.startswith("pe.scan") and layout in _BASE:
        benchmark.extra_info["bytes_vs_dataset"] = read / _BASE[layout]["bytes"]
        benchmark.extra_info["time_vs_dataset"] = seconds / _BASE[layout]["seconds"]


A = 2 * (GROUP_ROWS + 123)  # a key of row group 1
T = 6 * GROUP_ROWS + 4_567  # the ts of a row of row group 6 (seconds after START)
OR_WHERE = (f"key = {A} OR ts = TIMESTAMP "
            f"'{START + dt.timedelta(seconds=T):%Y-%m-%d %H:%M:%S}'")


def test_or_two_columns(benchmark, rounds, pages_file):
    benchmark.group = "pages OR two columns"
    benchmark.extra_info["engine"] = "pe.prune_rows"
    stats = pe.collect_stats(pages_file, progress=False)
    ranges = benchmark.pedantic(lambda: pe.prune_rows(pages_file, OR_WHERE, stats=stats),
                                rounds=rounds(5), iterations=1, warmup_rounds=1)
    assert sorted(set(ranges.column("row_group").to_pylist())) == [1, 6]
    keys = page_stats(pages_file, columns=["key"]).columns["key"]
    start = keys.column("row_start").to_numpy()
    end = start + keys.column("row_count").to_numpy()
    group = keys.column("row_group").to_numpy()
    pages = 0
    for r in ranges.to_pylist():
        a, b = r["row_start"], r["row_start"] + r["row_count"]
        pages += int(((group == r["row_group"]) & (start < b) & (end > a)).sum())
    selected = int(pc.sum(ranges.column("row_count")).as_py())
    benchmark.extra_info.update(
        where=OR_WHERE, rows_selected=selected, row_group_rows=2 * GROUP_ROWS,
        pages_selected=pages, row_group_pages=2 * PAGES_PER_CHUNK,
        rows_fraction=selected / (2 * GROUP_ROWS))
    assert selected <= 2 * PAGE_ROWS, "one page of key, one of ts: the OR prunes pages"
