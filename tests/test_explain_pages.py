"""``pe.explain(..., pages=True)``: the row ranges of each row group, from the page index.

The files are written by pyarrow with its page index (``write_page_index=True``) and small
pages, so each column chunk has dozens of pages; the oracle is DuckDB on the rows.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe

PREDICATES = [
    "a = 5",                               # one page of one row group
    "a = 5 OR b = 1707",                   # OR across two sorted columns: pages of two groups
    "a BETWEEN 990 AND 1010",              # spans a row-group boundary
    "a > 100 AND b < 300",                 # AND across columns
    "NOT (a >= 10)",                       # NOT pushed down first
    "s = 'k07'",                           # a clustered string
    "a < 0",                               # nothing: every row group pruned
    "a = 5 OR s LIKE 'k1%'",
    "c IS NULL",                           # nulls in runs
    "a % 7 = 3",                           # unknown to the statistics: every row kept
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain_pages")
    rng = np.random.default_rng(35)
    for f in range(2):
        n = 2000
        a = np.arange(f * n, (f + 1) * n, dtype=np.int64)
        c = pa.array(a, mask=(a // 50) % 5 == 0)
        table = pa.table({"a": a, "b": a + 700 * (1 - 2 * f) + rng.integers(0, 3, n),
                          "s": [f"k{(i // 100) % 20:02d}" for i in range(n)], "c": c})
        pq.write_table(table, root / f"part-{f}.parquet", row_group_size=500,
                       write_page_index=True, data_page_size=256, write_batch_size=40)
    return root


def ranges_by_group(table: pa.Table, file: str = "file") -> dict:
    """``{(path, row_group): [(row_start, row_count), ...]}`` of a ranges table."""
    out: dict = {}
    for r in table.to_pylist():
        out.setdefault((r[file], r["row_group"]), []).append((r["row_start"], r["row_count"]))
    return out


@pytest.mark.parametrize("sql", PREDICATES)
def test_ranges_equal_prune_rows_and_hold_every_match(folder, sql):
    stats = pe.collect_stats(folder)
    table = pe.explain(stats, sql, pages=True)
    assert table.column_names[-2:] == ["rows_selected", "row_ranges"]
    assert table.schema.field("rows_selected").type == pa.int64()
    paths = stats.table.column("path").to_pylist()
    groups = stats.table.column("row_group").to_pylist()
    expected = ranges_by_group(pe.prune_rows(folder, sql, stats=stats))
    for path, group, keep, selected, ranges in zip(
            paths, groups, *(table.column(c).to_pylist()
                             for c in ("keep", "rows_selected", "row_ranges"))):
        got = [(r["row_start"], r["row_count"]) for r in ranges]
        assert got == expected.get((path, group), []), f"{path}#{group}: as pe.prune_rows"
        assert selected == sum(c for _, c in got), "rows_selected is the ranges' rows"
        if not keep:
            assert selected == 0 and got == [], "a pruned row group selects no row"
    # every row where DuckDB finds the predicate TRUE is in a range of its row group
    for path in sorted({*paths}):
        rows = duckdb.sql(f"SELECT file_row_number FROM read_parquet('{path}', "
                          f"file_row_number = true) WHERE {sql}").fetchall()
        sizes = [pq.ParquetFile(path).metadata.row_group(g).num_rows
                 for g in range(pq.ParquetFile(path).metadata.num_row_groups)]
        first = np.concatenate(([0], np.cumsum(sizes)))
        for (row,) in rows:
            g = int(np.searchsorted(first, row, side="right") - 1)
            within = row - first[g]
            i = next(i for i, (p, q) in enumerate(zip(paths, groups)) if p == path and q == g)
            assert any(r["row_start"] <= within < r["row_start"] + r["row_count"]
                       for r in table.column("row_ranges")[i].as_py()), \
                f"{sql}: row {within} of {path}#{g} matches, so a range must hold it"


def test_pages_prune_inside_row_groups(folder):
    """The point of it: a point lookup selects one page, not the row group's 500 rows."""
    table = pe.explain(pe.collect_stats(folder), "a = 5 OR b = 1707", pages=True)
    selected = [s for s, k in zip(table.column("rows_selected").to_pylist(),
                                  table.column("keep").to_pylist()) if k]
    assert selected and all(0 < s < 100 for s in selected), selected


def test_file_granularity_and_no_path_give_null(folder):
    """A container that is not a row group has no row ranges: null, not 0 (unknown)."""
    stats = pe.collect_stats(folder, granularity="file")
    table = pe.explain(stats, "a = 5", pages=True)
    assert table.column("rows_selected").null_count == table.num_rows
    assert table.column("row_ranges").null_count == table.num_rows
    plain = pa.table({"container": ["x"], "num_records": [10], "min_values": [{"a": 0}],
                      "max_values": [{"a": 9}], "null_count": [{"a": 0}]})
    table = pe.explain(plain, "a = 5", pages=True)
    assert table.column("rows_selected").to_pylist() == [None]
    assert table.column("row_ranges").to_pylist() == [None]


def test_a_row_group_the_file_lacks_is_null(folder):
    """Statistics that name a row group the file does not have: unknown (null), not 0."""
    stats = pe.collect_stats(folder).table
    extra = stats.slice(0, 1).set_column(
        stats.column_names.index("row_group"), "row_group", pa.array([99], pa.int32()))
    extra = extra.set_column(0, "container", pa.array(["ghost"]))
    table = pe.explain(pa.concat_tables([stats, extra]), "a = 5", pages=True)
    assert table.column("keep").to_pylist()[-1] is True
    assert table.column("rows_selected").to_pylist()[-1] is None


def test_without_pages_the_table_is_unchanged(folder):
    stats = pe.collect_stats(folder)
    table = pe.explain(stats, "a = 5")
    assert table.column_names == ["container", "keep", "reason", "kept_because", "answer"]
    assert pe.explain(stats, "a = 5", pages=True).drop_columns(
        ["rows_selected", "row_ranges"]).equals(table)


def test_a_file_without_a_page_index_selects_whole_row_groups(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"a": range(1000)}), path, row_group_size=500)
    table = pe.explain(pe.collect_stats(path), "a = 5", pages=True)
    assert table.column("rows_selected").to_pylist() == [500, 0]
    assert table.column("row_ranges").to_pylist()[0] == [{"row_start": 0, "row_count": 500}]
