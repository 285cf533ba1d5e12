"""Delta and Iceberg tables: statistics from the table's own metadata against reading the
footers, and the files an ``IN`` of 200 and 201 values keeps.

Two tables of the same data, built once per session into a temp dir (fixed seed): 2,000 data
files of 1,000 rows, file ``i`` holding the int64 keys ``k`` in ``[i*1000, i*1000+999]`` (a
clustered key: min/max prune it exactly) and ``s``, a 12-character string of a shuffled key
(unclustered). The build:

    Delta       pyarrow writes the 2,000 files, ``deltalake.convert_to_deltalake`` commits them
                (one commit, the statistics read from the files). ``write_deltalake`` cuts its
                files at DataFusion's 1,024-row batches, so its files cannot hold exactly the
                keys of one file here, and 2,000 appends are 2,000 commits.
    Iceberg     PyIceberg, a SQLite catalog in the temp dir; ``table.append`` of 500 files' rows
                at a time, with ``write.target-file-size-bytes`` set to 1,000 rows' Arrow bytes
                so that each append writes one data file per 1,000 rows (checked)

Groups:

    tables stats N files   ``pe.stats_from_delta(root)``, ``pe.stats_from_iceberg(table)`` and
                           ``pe.stats_from_iceberg(catalog, name)`` (the table loaded too)
                           against ``pe.collect_stats(<the table's data files>,
                           granularity="file")``: files per second and ``speedup_vs_footers``
                           (target >= 10x)
    tables IN n N files    ``k IN`` (n = 200 or 201 values from 5 files): the files kept by
                           pe.prune over each statistics table, by PyIceberg's
                           ``table.scan(row_filter=In("k", values)).plan_files()`` (which stops
                           using an ``IN`` of more than 200 literals) and by deltalake's
                           ``DeltaTable.file_uris(file_pruning_predicate=...)``; ``held`` is the
                           number of files holding one of the values

``extra_info`` holds ``files``, ``files_per_s``, ``speedup_vs_footers``, ``build_s`` (the
table's build time) and ``first_call_s`` (the engine's first call of the session, untimed by
the rounds: the warm ones), or ``kept``, ``held`` and ``values``. Quick mode (``--bench-rounds``
given) uses 200 files; ``TABLES_BENCH_FILES`` sets the count. Run::

    python -m pytest bench/test_bench_tables.py --benchmark-json=tables.json -q
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from sizes import lake_files

FULL_FILES = 2_000
QUICK_FILES = 200
ROWS_PER_FILE = 1_000
#: files per Iceberg append
APPEND_FILES = 500
#: the IN lists: sizes, and the number of files their values are drawn from
IN_SIZES = (200, 201)
IN_FILES = 5
#: the issue's target: table statistics at least this much faster than the footers
SPEEDUP_TARGET = 10.0
#: medians of this run: format -> seconds of collect_stats over the table's files
_FOOTERS: dict[str, float] = {}


def _num_files(config) -> int:
    return lake_files(config, "TABLES_BENCH_FILES", FULL_FILES, QUICK_FILES)


@dataclass(frozen=True)
class Tables:
    """The two tables: the Delta root and its data files, the Iceberg catalog, table and its
    data files, each table's build time, and ``index``: a data file's path -> its file number
    ``i`` (the keys it holds start at ``i * ROWS_PER_FILE``)."""

    files: int
    delta_root: str
    delta_files: list[str]
    catalog: object
    iceberg: object
    iceberg_files: list[str]
    build_s: dict[str, float]
    index: dict[str, int]


def _data(num_files: int) -> pa.Table:
    rng = np.random.default_rng(0)
    n = num_files * ROWS_PER_FILE
    shuffled = pc.cast(pa.array(rng.permutation(n)), pa.string())
    s = pc.binary_join_element_wise("s", pc.utf8_lpad(shuffled, 11, "0"), "")
    return pa.table({"k": pa.array(np.arange(n, dtype=np.int64)), "s": s})


def _local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


@pytest.fixture(scope="session")
def tables(pytestconfig, tmp_path_factory) -> Tables:
    from deltalake import convert_to_deltalake
    from pyiceberg.catalog.sql import SqlCatalog

    num_files = _num_files(pytestconfig)
    data = _data(num_files)
    base = tmp_path_factory.mktemp("tables")
    build = {}

    start = time.perf_counter()
    delta_root = str(base / "delta")
    os.mkdir(delta_root)
    for i in range(num_files):
        pq.write_table(data.slice(i * ROWS_PER_FILE, ROWS_PER_FILE),
                       os.path.join(delta_root, f"part-{i:05d}.parquet"))
    convert_to_deltalake(delta_root)
    build["delta"] = time.perf_counter() - start
    delta_files = sorted(os.path.join(d, f) for d, _, fs in os.walk(delta_root)
                         if "_delta_log" not in d for f in fs if f.endswith(".parquet"))

    start = time.perf_counter()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{base}")
    catalog.create_namespace("db")
    row_bytes = data.nbytes / data.num_rows
    table = catalog.create_table("db.events", schema=data.schema, properties={
        "write.target-file-size-bytes": str(int(round(ROWS_PER_FILE * row_bytes)))})
    for first in range(0, num_files, APPEND_FILES):
        table.append(data.slice(first * ROWS_PER_FILE, APPEND_FILES * ROWS_PER_FILE))
    build["iceberg"] = time.perf_counter() - start

    listing = table.inspect.files()
    iceberg_files = [_local(p) for p in listing.column("file_path").to_pylist()]
    counts = listing.column("record_count").to_pylist()
    lows = [m["k"]["lower_bound"] for m in listing.column("readable_metrics").to_pylist()]
    highs = [m["k"]["upper_bound"] for m in listing.column("readable_metrics").to_pylist()]
    assert len(iceberg_files) == num_files and set(counts) == {ROWS_PER_FILE}, \
        f"PyIceberg wrote {len(iceberg_files)} files of {sorted(set(counts))} rows"
    assert all(lo % ROWS_PER_FILE == 0 and hi == lo + ROWS_PER_FILE - 1
               for lo, hi in zip(lows, highs)), "an Iceberg file does not hold one key block"
    index = {p: lo // ROWS_PER_FILE for p, lo in zip(iceberg_files, lows)}
    index.update((p, int(os.path.basename(p)[5:10])) for p in delta_files)
    assert len(delta_files) == num_files
    print(f"\nbuilt {num_files} files: Delta {build['delta']:.2f} s, "
          f"Iceberg {build['iceberg']:.2f} s")
    return Tables(num_files, delta_root, delta_files, catalog, table, sorted(iceberg_files),
                  build, index)


def _record(benchmark, group: str, engine: str, **info):
    benchmark.group = group
    benchmark.extra_info.update({"engine": engine, **info})


def _files_of(tables: Tables, fmt: str) -> list[str]:
    return tables.delta_files if fmt == "delta" else tables.iceberg_files


# -- statistics: the table's metadata against the footers -------------------------------------

@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_stats_footers(benchmark, rounds, tables, fmt):
    """``pe.collect_stats`` of the table's data files at file granularity (the footers read)."""
    files = _files_of(tables, fmt)
    _record(benchmark, f"tables stats {tables.files} files", "collect_stats", format=fmt,
            files=len(files), build_s=tables.build_s[fmt])
    stats = benchmark.pedantic(lambda: pe.collect_stats(files, granularity="file",
                                                        progress=False),
                               rounds=rounds(3), iterations=1, warmup_rounds=1)
    assert stats.num_rows == tables.files
    median = benchmark.stats.stats.median
    benchmark.extra_info["files_per_s"] = tables.files / median
    _FOOTERS[fmt] = median


@pytest.mark.parametrize("engine", ["stats_from_delta", "stats_from_iceberg",
                                    "stats_from_iceberg(catalog)"])
def test_stats_table(benchmark, rounds, tables, engine):
    """The same statistics from the table's log (Delta) or manifests (Iceberg)."""
    fmt = "delta" if engine == "stats_from_delta" else "iceberg"
    run = {"stats_from_delta": lambda: pe.stats_from_delta(tables.delta_root),
           "stats_from_iceberg": lambda: pe.stats_from_iceberg(tables.iceberg),
           "stats_from_iceberg(catalog)":
               lambda: pe.stats_from_iceberg(tables.catalog, "db.events")}[engine]
    _record(benchmark, f"tables stats {tables.files} files", engine, format=fmt,
            files=tables.files, build_s=tables.build_s[fmt], target=SPEEDUP_TARGET)
    start = time.perf_counter()  # the first call of the session (it stands for the warm-up)
    run()
    benchmark.extra_info["first_call_s"] = time.perf_counter() - start
    stats = benchmark.pedantic(run, rounds=rounds(5), iterations=1, warmup_rounds=0)
    assert stats.num_rows == tables.files
    assert sorted(stats.column("path").to_pylist()) == sorted(_files_of(tables, fmt))
    median = benchmark.stats.stats.median
    benchmark.extra_info["files_per_s"] = tables.files / median
    if fmt in _FOOTERS:
        speedup = _FOOTERS[fmt] / median
        benchmark.extra_info.update(speedup_vs_footers=speedup,
                                    meets_target=bool(speedup >= SPEEDUP_TARGET))


# -- IN of 200 and 201 values: files kept ---------------------------------------------------------

def _values(num_files: int, n: int) -> list[int]:
    """``n`` distinct keys of ``IN_FILES`` files (the 200 are the 201 but the last)."""
    rng = np.random.default_rng(1)
    chosen = rng.choice(num_files, min(IN_FILES, num_files), replace=False)
    keys = (chosen[:, None] * ROWS_PER_FILE + np.arange(ROWS_PER_FILE)).ravel()
    values = rng.choice(keys, max(IN_SIZES), replace=False)
    return [int(v) for v in values[:n]]


@pytest.fixture(scope="session")
def table_stats(tables):
    return {"delta": pe.stats_from_delta(tables.delta_root),
            "iceberg": pe.stats_from_iceberg(tables.iceberg),
            "footers": pe.collect_stats(tables.delta_files, granularity="file", progress=False)}


def _kept_by_mask(tables: Tables, stats, mask) -> set[int]:
    keep = np.asarray(mask.to_numpy(zero_copy_only=False), bool)
    paths = stats.column("path").to_pylist()
    return {tables.index[p] for p, kept in zip(paths, keep) if kept}


IN_ENGINES = ["pe.prune iceberg", "pe.prune delta", "pe.prune footers", "pyiceberg plan_files",
              "deltalake file_uris"]


@pytest.mark.parametrize("engine", IN_ENGINES)
@pytest.mark.parametrize("n", IN_SIZES)
def test_in(benchmark, rounds, tables, table_stats, n, engine):
    """``k IN`` (n values from 5 files): files kept, and the time of the call that decides."""
    from deltalake import DeltaTable
    from pyiceberg.expressions import In

    values = _values(tables.files, n)
    held = {v // ROWS_PER_FILE for v in values}
    expr = f"k IN ({', '.join(map(str, values))})"
    _record(benchmark, f"tables IN {n} {tables.files} files", engine, files=tables.files,
            values=n, held=len(held))
    if engine.startswith("pe.prune"):
        stats = table_stats[engine.split()[1]]
        kept = _kept_by_mask(tables, stats, benchmark(pe.prune, stats, expr))
        assert kept == held, f"{engine} kept {sorted(kept)}, the values are in {sorted(held)}"
    elif engine == "pyiceberg plan_files":
        tasks = benchmark.pedantic(
            lambda: list(tables.iceberg.scan(row_filter=In("k", values)).plan_files()),
            rounds=rounds(5), iterations=1, warmup_rounds=1)
        kept = {tables.index[_local(t.file.file_path)] for t in tasks}
        benchmark.extra_info["gives_up"] = len(kept) == tables.files
    else:
        delta = DeltaTable(tables.delta_root)
        uris = benchmark.pedantic(lambda: delta.file_uris(file_pruning_predicate=expr),
                                  rounds=rounds(5), iterations=1, warmup_rounds=1)
        kept = {tables.index[_local(u)] for u in uris}
    benchmark.extra_info["kept"] = len(kept)
    assert held <= kept, f"{engine} pruned a file holding a value: {sorted(held - kept)}"
