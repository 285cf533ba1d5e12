"""End to end: collect_stats on random lakes, then prune, against DuckDB on the rows.

A container (file or row group) that holds a row matching the predicate must be kept.
"""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings, strategies as st

import prune_engine as pe
from tests.budget import examples
from tests.oracle.duck import load_table

NAN = float("nan")

PREDICATES = [
    "x > {i}", "x = {i}", "x <= {i}", "x BETWEEN {i} AND {j}", "NOT (x < {i})", "x IS NULL",
    "x IS NOT NULL", "x IN ({i}, {j})", "x <> {i}",
    "f > 0", "f = 0", "f < -1", "f IS NULL", "f >= {i}",
    "s = '{w}'", "s > '{w}'", "s LIKE '{w}%'", "s IS NULL", "s < '{w}'",
    "year = {y}", "year > {y}", "region = 'eu'", "region IS NULL",
    "x > {i} AND s < '{w}'", "x = {i} OR f = 0", "NOT (s = '{w}' OR x > {j})",
]
WORDS = ["", "a", "ab", "b", "\xe9", "zz"]


@st.composite
def lakes(draw):
    files = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, 12))
        ints = st.none() | st.integers(-5, 5)
        floats = st.none() | st.sampled_from([NAN, -0.0, 0.0, 1.0, -2.0])
        words = st.none() | st.sampled_from(WORDS)
        table = pa.table({
            "x": pa.array(draw(st.lists(ints, min_size=n, max_size=n)), pa.int64()),
            "f": pa.array(draw(st.lists(floats, min_size=n, max_size=n)), pa.float64()),
            "s": pa.array(draw(st.lists(words, min_size=n, max_size=n)), pa.string()),
        })
        files.append((draw(st.sampled_from([2023, 2024])),
                      draw(st.sampled_from(["eu", "us", "__HIVE_DEFAULT_PARTITION__"])), table,
                      draw(st.integers(1, 5)), draw(st.booleans())))
    preds = draw(st.lists(st.builds(
        lambda t, i, j, w, y: t.format(i=i, j=j, w=w, y=y), st.sampled_from(PREDICATES),
        st.integers(-6, 6), st.integers(-6, 6), st.sampled_from(WORDS), st.sampled_from(
            [2023, 2024])), min_size=3, max_size=6))
    return files, preds


def _rows_by_container(stats) -> pa.Table:
    """The actual rows of every container, with its id and partition columns."""
    pieces = []
    parts = stats.column("partition_values").to_pylist()
    for cid, path, rg, part in zip(stats.column("container").to_pylist(),
                                   stats.column("path").to_pylist(),
                                   stats.column("row_group").to_pylist(), parts):
        pf = pq.ParquetFile(path)
        data = pf.read() if rg is None else pf.read_row_group(rg)
        n = data.num_rows
        data = data.append_column("container", pa.array([cid] * n, pa.string()))
        data = data.append_column("year", pa.array([part["year"]] * n, pa.int64()))
        data = data.append_column("region", pa.array([part["region"]] * n, pa.string()))
        pieces.append(data)
    return pa.concat_tables(pieces)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lakes())
def test_collect_then_prune_never_drops_a_matching_container(tmp_path_factory, case):
    files, predicates = case
    root = str(tmp_path_factory.mktemp("lake"))
    for k, (year, region, table, rg_size, stats_on) in enumerate(files):
        folder = os.path.join(root, f"year={year}", f"region={region}")
        os.makedirs(folder, exist_ok=True)
        pq.write_table(table, os.path.join(folder, f"part-{k}.parquet"),
                       row_group_size=rg_size, write_statistics=stats_on)
    con = duckdb.connect()
    for granularity, compute in [(g, c) for g in ("row_group", "file") for c in (False, True)]:
        stats = pe.collect_stats(root, granularity=granularity, compute_missing=compute,
                                 progress=False)
        if stats.num_rows == 0:
            continue
        data = _rows_by_container(stats)
        load_table(con, "t", data)
        for predicate in predicates:
            mask = pe.prune(stats, predicate)
            assert len(mask) == stats.num_rows and mask.null_count == 0
            matching = {r[0] for r in con.sql(
                f"SELECT DISTINCT container FROM t WHERE {predicate}").fetchall()}
            kept = {c for c, k in zip(stats.column("container").to_pylist(), mask.to_pylist())
                    if k}
            assert matching <= kept, (f"unsound prune for {predicate!r} ({granularity}, "
                                      f"compute_missing={compute}): "
                                      f"{sorted(matching - kept)}")
