"""``pe.prune_rows`` on Parquet files written with a page index, against DuckDB on the rows.

The files are shaped like pyarrow's writer output with ``write_page_index=True``: several row
groups, many small pages, a sorted int64 key, a sorted zoned timestamp, a clustered string, a
random float with NaN and nulls, and a nullable random int.
"""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.oracle.duck import connect, load_table

ROWS = 4000
GROUP = 1000


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    rng = np.random.default_rng(3)
    key = np.arange(ROWS, dtype=np.int64) * 3
    ts = pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=int(i))
                   for i in range(ROWS)], pa.timestamp("us", tz="Europe/Paris"))
    words = np.array(["apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi"])
    city = words[np.minimum(np.arange(ROWS) // 500 + rng.integers(0, 2, ROWS), 7)]
    amount = rng.normal(100, 30, ROWS)
    amount[rng.random(ROWS) < 0.02] = np.nan
    amount_mask = rng.random(ROWS) < 0.05
    noise = rng.integers(0, 50, ROWS)
    table = pa.table({"key": key, "ts": ts, "city": pa.array(city),
                      "amount": pa.array(amount, mask=amount_mask),
                      "noise": pa.array(noise, mask=rng.random(ROWS) < 0.1)})
    folder = tmp_path_factory.mktemp("pages")
    path = str(folder / "part-0.parquet")
    pq.write_table(table, path, row_group_size=GROUP, write_page_index=True,
                   data_page_size=256, write_batch_size=64)
    return path, table


def selected(ranges: pa.Table) -> np.ndarray:
    """A boolean per row of the file: in a selected range."""
    mask = np.zeros(ROWS, bool)
    for r in ranges.to_pylist():
        first = r["row_group"] * GROUP + r["row_start"]
        mask[first:first + r["row_count"]] = True
    return mask


def true_rows(table: pa.Table, sql: str) -> np.ndarray:
    con = connect()
    try:
        load_table(con, "t", table.append_column("__i", pa.array(np.arange(ROWS))))
        rows = con.execute(f"SELECT __i FROM t WHERE {sql}").fetchall()
    finally:
        con.close()
    return np.array([r[0] for r in rows], np.int64)


def random_sql(rnd: random.Random) -> str:
    def atom():
        kind = rnd.randrange(6)
        op = rnd.choice(["=", "!=", "<", "<=", ">", ">="])
        if kind == 0:
            return f"key {op} {rnd.randrange(-5, ROWS * 3 + 5)}"
        if kind == 1:
            minute = rnd.randrange(-10, ROWS + 10)
            t = dt.datetime(2024, 1, 1) + dt.timedelta(minutes=minute)
            return f"ts {op} TIMESTAMPTZ '{t.isoformat(sep=' ')}+00:00'"
        if kind == 2:
            return rnd.choice([f"city {op} '{rnd.choice(['apple', 'cherry', 'fig', 'kiwi', 'b', 'zz'])}'",
                               f"city LIKE '{rnd.choice(['ch', 'gr', 'k', 'x'])}%'"])
        if kind == 3:
            return rnd.choice([f"amount {op} {rnd.uniform(0, 200):.3f}", "amount IS NULL",
                               "isnan(amount)", f"amount {op} 'NaN'::DOUBLE"])
        if kind == 4:
            return rnd.choice([f"noise {op} {rnd.randrange(-2, 52)}", "noise IS NULL",
                               "noise IS NOT NULL", f"noise IN (3, {rnd.randrange(50)}, NULL)"])
        return rnd.choice(["key > noise", f"key + 1 = {rnd.randrange(ROWS * 3)}"])

    def tree(depth):
        if depth == 0 or rnd.random() < 0.3:
            return atom()
        parts = [tree(depth - 1) for _ in range(rnd.randint(2, 3))]
        r = rnd.random()
        if r < 0.4:
            return "(" + " AND ".join(parts) + ")"
        if r < 0.8:
            return "(" + " OR ".join(parts) + ")"
        return f"NOT {parts[0]}"

    return tree(rnd.choice([1, 2, 3]))


def test_every_true_row_lies_in_a_selected_range(lake):
    path, table = lake
    rnd = random.Random(35)
    stats = pe.collect_stats(path)
    pruned_rows = 0
    for _ in range(60):
        sql = random_sql(rnd)
        try:
            ranges = pe.prune_rows(path, sql, stats=stats)
        except pe.PruneEngineError:
            continue
        keep = selected(ranges)
        rows = true_rows(table, sql)
        missing = rows[~keep[rows]]
        assert len(missing) == 0, f"unsound: rows {missing[:5].tolist()} match {sql!r} but are not selected"
        pruned_rows += int((~keep).sum())
    assert pruned_rows > ROWS * 10, "the ranges should drop many rows over 60 predicates"


def test_point_lookup_and_or_across_sorted_columns(lake):
    path, table = lake
    ranges = pe.prune_rows(path, "key = 3003")
    assert ranges.column("row_group").to_pylist() == [1], "one row group holds key 3003 (row 1001)"
    assert sum(ranges.column("row_count").to_pylist()) <= 2 * 64, "at most two pages of the key"
    assert selected(ranges)[1001]
    sql = "key = 15 OR ts = TIMESTAMPTZ '2024-01-03 10:00:00+00:00'"  # rows 5 and 3480
    ranges = pe.prune_rows(path, sql)
    keep = selected(ranges)
    assert keep[5] and keep[3480]
    assert keep.sum() < 400, f"an OR across two sorted columns should select a few pages, not {keep.sum()} rows"
    assert ranges.column("row_group").to_pylist() == [0, 3], "row groups 1 and 2 hold neither"


def test_not_over_two_columns_is_pushed_down(lake):
    path, table = lake
    sql = "NOT (key >= 30 AND ts < TIMESTAMPTZ '2024-01-03 17:00:00+00:00')"  # key < 30 OR ts >= ...
    keep = selected(pe.prune_rows(path, sql))
    rows = true_rows(table, sql)
    assert keep[rows].all()
    assert keep.sum() < ROWS // 2, "NOT pushed down prunes the middle of the file"
