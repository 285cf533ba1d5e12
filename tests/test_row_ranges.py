"""Row ranges from a predicate (``prune_engine.row_ranges``), from page statistics built here.

The page statistics are built by :func:`page_stats_of` from the rows themselves (exact min, max
and null count per page, through ``pe.stats_from_arrow`` on each page's slice), with page
boundaries that differ per column, in the layout of ``prune_engine.stats.page_index.PageStats``.
Soundness is checked against DuckDB on the rows: every row where the predicate is TRUE lies in
a selected range.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_engine as pe
from prune_engine.row_ranges import (
    combine_ranges, considered_groups, intersect_ranges, normalize_ranges, ranges_from_pages,
    row_ranges, subtract_ranges, union_ranges,
)
from tests.oracle.data import CID, random_case
from tests.oracle.duck import DuckOracle
from tests.oracle.predicates import random_predicate

SPAN = 40  # the algebra's rows: 0 .. SPAN - 1


# --- the range algebra against boolean masks ------------------------------------------------------
def mask_of(starts, ends) -> np.ndarray:
    mask = np.zeros(SPAN, bool)
    for s, e in zip(starts, ends):
        mask[s:e] = True
    return mask


def assert_normal(r) -> None:
    """Sorted, non-empty, disjoint and not adjacent (merged)."""
    starts, ends = r
    assert starts.dtype == np.int64 and ends.dtype == np.int64
    assert (ends > starts).all(), "no empty range"
    assert (starts[1:] > ends[:-1]).all(), "sorted, disjoint, adjacent ranges merged"


raw_ranges = st.lists(st.tuples(st.integers(0, SPAN), st.integers(0, 8)), max_size=8).map(
    lambda pairs: ([s for s, _ in pairs], [min(s + k, SPAN) for s, k in pairs]))


def normal(pairs):
    return normalize_ranges(*pairs)


@given(raw_ranges)
def test_normalize_gives_the_same_rows_merged(a):
    out = normalize_ranges(*a)
    assert_normal(out)
    assert (mask_of(*out) == mask_of(*a)).all()


@given(raw_ranges, raw_ranges)
def test_intersection_union_and_difference_equal_the_masks(a, b):
    a, b = normal(a), normal(b)
    ma, mb = mask_of(*a), mask_of(*b)
    for got, want in ((intersect_ranges(a, b), ma & mb), (union_ranges(a, b), ma | mb),
                      (subtract_ranges(a, b), ma & ~mb)):
        assert_normal(got)
        assert (mask_of(*got) == want).all()


@given(st.lists(raw_ranges, min_size=1, max_size=5))
def test_n_ary_and_or_equal_the_masks(parts):
    parts = [normal(p) for p in parts]
    masks = [mask_of(*p) for p in parts]
    got_and, got_or = combine_ranges(parts, "and"), combine_ranges(parts, "or")
    assert (mask_of(*got_and) == np.logical_and.reduce(masks)).all()
    assert (mask_of(*got_or) == np.logical_or.reduce(masks)).all()
    assert_normal(got_and)
    assert_normal(got_or)


@given(st.lists(st.tuples(st.integers(1, 6), st.booleans()), max_size=10))
def test_ranges_from_pages_are_the_kept_pages_rows(pages):
    counts = np.array([c for c, _ in pages], np.int64)
    keep = np.array([k for _, k in pages], bool)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(pages) else counts
    got = ranges_from_pages(starts, counts, keep)
    assert_normal(got)
    want = np.zeros(int(counts.sum()) + 1, bool)
    for s, c, k in zip(starts, counts, keep):
        want[s:s + c] = k
    have = np.zeros_like(want)
    for s, e in zip(*got):
        have[s:e] = True
    assert (have == want).all()


def test_empty_inputs_give_no_ranges():
    empty = (np.empty(0, np.int64), np.empty(0, np.int64))
    assert len(intersect_ranges(empty, ([0], [5]))[0]) == 0
    assert union_ranges(empty, empty)[0].tolist() == []
    with pytest.raises(ValueError):
        combine_ranges([empty], "xor")


# --- page statistics built from the rows ---------------------------------------------------------
def _page_table(rows: pa.Table, top: str, cuts: list[list[int]], path: str) -> pa.Table:
    """The pages of one column: row group ``g`` cut into pages of ``cuts[g]`` rows."""
    slices, meta = [], []
    for g, (group, sizes) in enumerate(zip(rows, cuts)):
        start = 0
        for size in sizes:
            slices.append(group.select([top]).slice(start, size))
            meta.append((g, start, size))
            start += size
    stats = pe.stats_from_arrow(slices).to_arrow()
    return pa.table({
        "container": [f"{path}#{g}@{s}" for g, s, _ in meta],
        "path": pa.array([path] * len(meta), pa.string()),
        "row_group": pa.array([g for g, _, _ in meta], pa.int32()),
        "row_start": pa.array([s for _, s, _ in meta], pa.int64()),
        "row_count": pa.array([c for _, _, c in meta], pa.int64()),
        "num_records": pa.array([c for _, _, c in meta], pa.int64()),
        # (the page index holds no NaN count: left out, NaN may be anywhere)
        "min_values": stats.column("min_values"), "max_values": stats.column("max_values"),
        "null_count": stats.column("null_count"),
    })


def random_cuts(rnd, n: int) -> list[int]:
    """Page sizes summing to ``n`` (one empty page for an empty row group)."""
    if n == 0:
        return [0]
    points = sorted(rnd.sample(range(1, n), min(n - 1, rnd.randint(0, 5)))) if n > 1 else []
    edges = [0, *points, n]
    return [b - a for a, b in zip(edges, edges[1:])]


def page_stats_of(groups: list[pa.Table], leaves: dict[str, list[list[int]]], path: str = "f"):
    """A ``PageStats``-shaped object (``groups``, ``columns``) of one file whose row groups are
    ``groups``: ``leaves`` maps each leaf (dotted) to its page sizes per row group."""
    columns = {leaf: _page_table(groups, leaf.split(".")[0], cuts, path) for leaf, cuts in leaves.items()}
    table = pa.table({"path": pa.array([path] * len(groups), pa.string()),
                      "row_group": pa.array(range(len(groups)), pa.int32()),
                      "num_rows": pa.array([g.num_rows for g in groups], pa.int64())})
    return SimpleNamespace(groups=table, columns=columns)


def selected_mask(ranges: pa.Table, groups: list[pa.Table]) -> list[np.ndarray]:
    """Per row group, a boolean per row: in a selected range."""
    out = [np.zeros(g.num_rows, bool) for g in groups]
    for r in ranges.to_pylist():
        out[r["row_group"]][r["row_start"]:r["row_start"] + r["row_count"]] = True
    return out


def assert_well_formed(ranges: pa.Table, groups: list[pa.Table]) -> None:
    assert ranges.schema == pa.schema([("file", pa.string()), ("row_group", pa.int32()),
                                       ("row_start", pa.int64()), ("row_count", pa.int64())])
    rows = ranges.to_pylist()
    for r in rows:
        assert r["row_count"] > 0 and 0 <= r["row_start"]
        assert r["row_start"] + r["row_count"] <= groups[r["row_group"]].num_rows
    for a, b in zip(rows, rows[1:]):
        assert (a["file"], a["row_group"]) <= (b["file"], b["row_group"]), "sorted by row group"
        if (a["file"], a["row_group"]) == (b["file"], b["row_group"]):
            assert a["row_start"] + a["row_count"] < b["row_start"], "disjoint, adjacent merged"


# --- soundness against DuckDB on the rows ---------------------------------------------------------
SORTABLE = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "d9", "d18", "dt",
            "ts_s", "ts_ms", "ts_us", "ts_ns", "tz_s", "tz_ms", "tz_us", "tz_ns", "s", "s2", "bin")


def random_groups(rnd) -> tuple[list[pa.Table], object]:
    """A random case split into row groups, each sorted by one of its columns (or not)."""
    case = random_case(rnd, max_containers=4, max_rows=30)
    data = case.table
    groups = []
    for cid in case.cids:
        group = data.filter(pc.equal(data.column(CID), cid)).drop_columns([CID])
        sortable = [c for c in group.column_names if c in SORTABLE]
        if sortable and rnd.random() < 0.7:
            group = group.sort_by([(rnd.choice(sortable), rnd.choice(["ascending", "descending"]))])
        groups.append(group)
    return groups, case


def check_sound(groups: list[pa.Table], leaves: dict, predicates: list[tuple[str, str]]) -> int:
    """Every row where a predicate is TRUE (DuckDB) is in a selected range; the ranges are well
    formed. Returns how many rows the ranges dropped, over every predicate."""
    pages = page_stats_of(groups, leaves)
    rows = pa.concat_tables(groups).append_column(
        CID, pa.array([f"{g}:{i}" for g, t in enumerate(groups) for i in range(t.num_rows)]))
    truth = DuckOracle().matching(rows, [duck for _, duck in predicates])
    row_stats = pe.stats_from_arrow(groups)  # (containers "0", "1", ...: the row groups in order)
    row_stats = row_stats.to_arrow().append_column("path", pa.array(["f"] * len(groups))) \
        .append_column("row_group", pa.array(range(len(groups)), pa.int32()))
    dropped = 0
    for (sql, duck), matching in zip(predicates, truth):
        if matching is None:
            continue  # (DuckDB rejects it: no oracle)
        try:
            keep = pe.prune(row_stats, sql)
        except pe.PruneEngineError:
            continue  # (the engine rejects it as prune does: not this module's concern)
        ranges = row_ranges(pages, sql, considered_groups(pages.groups, row_stats, keep))
        assert_well_formed(ranges, groups)
        selected = selected_mask(ranges, groups)
        for row in matching:
            g, i = map(int, row.split(":"))
            assert selected[g][i], (f"unsound: row {i} of row group {g} matches {sql!r} (DuckDB) "
                                    f"but no selected range holds it: {ranges.to_pylist()}")
        dropped += sum(int((~s).sum()) for s in selected)
    return dropped


@settings(max_examples=60)
@given(st.randoms(use_true_random=False))
def test_every_true_row_is_in_a_selected_range(rnd):
    groups, case = random_groups(rnd)
    leaves = {leaf.name: [random_cuts(rnd, g.num_rows) for g in groups] for leaf in case.leaves}
    predicates = []
    for _ in range(8):
        p = random_predicate(rnd, case)
        predicates.append((p.sql("pe"), p.sql("duck")))
    check_sound(groups, leaves, predicates)


def test_the_sweep_prunes_rows_somewhere():
    """The soundness sweep is not vacuous: on sorted row groups some rows are dropped."""
    rnd = random.Random(11)
    dropped = 0
    for _ in range(15):
        groups, case = random_groups(rnd)
        leaves = {leaf.name: [random_cuts(rnd, g.num_rows) for g in groups] for leaf in case.leaves}
        preds = [random_predicate(rnd, case, depth=1) for _ in range(6)]
        dropped += check_sound(groups, leaves, [(p.sql("pe"), p.sql("duck")) for p in preds])
    assert dropped > 0, "no predicate dropped a single row: the ranges prune nothing"


# --- what the ranges must prune -------------------------------------------------------------------
def two_sorted_columns():
    """One row group of 100 rows: ``a`` sorted in pages of 10 rows, ``b`` sorted (descending) in
    pages of 25 rows, ``c`` random."""
    rng = np.random.default_rng(5)
    group = pa.table({"a": pa.array(np.arange(100), pa.int64()),
                      "b": pa.array(np.arange(100)[::-1] // 2, pa.int64()),
                      "c": pa.array(rng.integers(0, 100, 100), pa.int64())})
    return [group], {"a": [[10] * 10], "b": [[25] * 4], "c": [[50, 50]]}


def test_or_across_two_sorted_columns_selects_only_their_pages():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, leaves)
    ranges = row_ranges(pages, "a = 5 OR b = 7")
    # a = 5: the page of rows 0..9; b = 7: rows 84, 85 in the page of rows 75..99
    assert ranges.select(["row_start", "row_count"]).to_pylist() == [
        {"row_start": 0, "row_count": 10}, {"row_start": 75, "row_count": 25}], \
        "OR across columns should union the two pages, not keep the whole row group"
    check_sound(groups, leaves, [("a = 5 OR b = 7",) * 2])


def test_and_across_columns_intersects():
    groups, leaves = two_sorted_columns()
    ranges = row_ranges(page_stats_of(groups, leaves), "a >= 35 AND b >= 40")
    # a >= 35: rows 30..99; b >= 40: rows 0..24 (b's first page holds 49..37: may be >= 40)
    assert ranges.num_rows == 0, "should select nothing: b >= 40 only in rows 0..24, a >= 35 only from row 30"
    ranges = row_ranges(page_stats_of(groups, leaves), "a >= 15 AND b >= 30")
    assert ranges.select(["row_start", "row_count"]).to_pylist() == [{"row_start": 10, "row_count": 40}], \
        "a >= 15: rows 10..99; b >= 30: rows 0..49"


def test_not_is_pushed_down_before_the_ranges():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, leaves)
    sql = "NOT (a > 5 AND b < 48)"  # = a <= 5 OR b >= 48: rows 0..9 of a; b's first page 0..24
    ranges = row_ranges(pages, sql)
    assert ranges.select(["row_start", "row_count"]).to_pylist() == [{"row_start": 0, "row_count": 25}], \
        "NOT pushed down: a <= 5 (rows 0..9) OR b >= 48 (rows 0..24)"
    check_sound(groups, leaves, [(sql, sql), ("NOT (a > 5 OR c < 0)", "NOT (a > 5 OR c < 0)")])


def test_what_cannot_be_decided_per_column_keeps_every_row():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, leaves)
    for sql in ("a = b", "a + b = 7", "f(a) = 1", "TRUE"):
        ranges = row_ranges(pages, sql)
        assert ranges.select(["row_start", "row_count"]).to_pylist() == [
            {"row_start": 0, "row_count": 100}], f"{sql!r} should keep the whole row group"
    assert row_ranges(pages, "FALSE").num_rows == 0
    assert row_ranges(pages, "a = 5 AND NULL").num_rows == 0, "NULL is never TRUE"


def test_a_column_without_pages_or_with_unknown_pages_keeps_every_row():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, {"a": leaves["a"]})
    assert row_ranges(pages, "b = 7").column("row_count").to_pylist() == [100]
    assert row_ranges(pages, "a = 5 OR b = 7").column("row_count").to_pylist() == [100]
    assert row_ranges(pages, "a = 5 AND b = 7").column("row_count").to_pylist() == [10]
    unknown = pages.columns["a"].set_column(
        pages.columns["a"].schema.get_field_index("max_values"), "max_values",
        pa.nulls(10, pages.columns["a"].schema.field("max_values").type))
    pages.columns["a"] = unknown  # every page: max unknown
    assert row_ranges(pages, "a > 50").column("row_count").to_pylist() == [100]
    assert row_ranges(pages, "a < 50").column("row_count").to_pylist() == [50], \
        "the mins still prune a < 50"


def test_rows_the_pages_do_not_cover_are_kept():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, leaves)
    a = pages.columns["a"]
    pages.columns["a"] = a.filter(pa.array([i != 7 for i in range(a.num_rows)]))  # rows 70..79 lost
    ranges = row_ranges(pages, "a = 5")
    assert ranges.select(["row_start", "row_count"]).to_pylist() == [
        {"row_start": 0, "row_count": 10}, {"row_start": 70, "row_count": 10}], \
        "rows without a page are unknown: kept"


def test_row_groups_pruned_by_their_statistics_select_nothing_and_ranges_stay_in_their_group():
    rows = pa.table({"a": pa.array(np.arange(60), pa.int64())})
    groups = [rows.slice(0, 20), rows.slice(20, 20), rows.slice(40, 20)]
    pages = page_stats_of(groups, {"a": [[10, 10], [5, 15], [20]]})
    ranges = row_ranges(pages, "a >= 15 AND a < 45")
    assert ranges.to_pylist() == [
        {"file": "f", "row_group": 0, "row_start": 10, "row_count": 10},
        {"file": "f", "row_group": 1, "row_start": 0, "row_count": 20},
        {"file": "f", "row_group": 2, "row_start": 0, "row_count": 20}], \
        "adjacent ranges of two row groups stay apart"
    stats = pa.table({"container": ["f#0", "f#1", "g"], "path": ["f", "f", "g"],
                      "row_group": pa.array([0, 1, None], pa.int32()), "num_records": [20, 20, 5],
                      "min_values": [{"a": 0}, {"a": 20}, {"a": 0}],
                      "max_values": [{"a": 19}, {"a": 39}, {"a": 0}],
                      "null_count": [{"a": 0}, {"a": 0}, {"a": 0}]})
    keep = pe.prune(stats, "a >= 25")
    considered = considered_groups(pages.groups, stats, keep)
    assert considered.tolist() == [False, True, True], "group 2 has no statistics: considered"
    assert row_ranges(pages, "a >= 25", considered).column("row_group").to_pylist() == [1, 2]
    file_level = pa.table({"container": ["f"], "path": ["f"], "row_group": pa.nulls(1, pa.int32()),
                           "num_records": [60], "min_values": [{"a": 0}], "max_values": [{"a": 59}],
                           "null_count": [{"a": 0}]})
    assert considered_groups(pages.groups, file_level, pe.prune(file_level, "a > 100")).tolist() == \
        [False, False, False], "a file-level row that is pruned prunes every row group of the file"


def test_deep_predicates_do_not_recurse():
    groups, leaves = two_sorted_columns()
    pages = page_stats_of(groups, leaves)
    sql = " OR ".join(f"(a = {i} AND b = {49 - i // 2})" for i in range(0, 400, 7))
    assert row_ranges(pages, sql).num_rows >= 1
    deep = "a = 1"
    for i in range(1500):
        deep = f"(b = {i % 50} {'AND' if i % 2 else 'OR'} {deep})"
    check_sound(groups, leaves, [(deep, deep)])
