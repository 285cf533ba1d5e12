"""The page index as Spark writes it (parquet-java's ColumnIndex and OffsetIndex, on by
default), read by ``page_stats``, turned into row ranges by ``pe.prune_rows`` and read by
``pe.scan``, checked row by row against DuckDB.

Two copies of one table, written by Spark with small pages (``parquet.page.row.count.limit``,
``parquet.page.size``) and a few row groups a file (``parquet.block.size``), so that each
column chunk has dozens of pages: a sorted int64 key ``k``, a sorted timestamp ``ts``, a
clustered string ``s``, a nullable ``n`` with runs of nulls, and a struct ``st``. The first
copy writes ``ts`` as TIMESTAMP_MICROS, so its pages have bounds; the second in Spark's
default INT96, whose bounds (none in the footer, none in the page index worth reading) are
unknown: every predicate on it must stay sound, and prune no page by ``ts``.
"""

from __future__ import annotations

import datetime as dt
import glob
import os

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import prune_engine as pe
from prune_engine.stats.page_index import page_stats
from tests.oracle.duck import connect
from tests.scanning.page_reads import whole_flat_reads

pytestmark = pytest.mark.spark

ROWS = 40_000
START = 1_704_067_200  # 2024-01-01 00:00:00 UTC; ts = START + 60 * id seconds
PAGE_ROWS = 400  # parquet.page.row.count.limit: each chunk of ~10,000 rows has ~25 pages
COLUMNS = ["k", "ts", "s", "n", "st"]


def _write(spark, root: str, timestamp_type: str) -> str:
    df = (spark.range(ROWS).repartitionByRange(2, "id").sortWithinPartitions("id").select(
        (F.col("id") * 3).alias("k"),
        F.timestamp_seconds(F.lit(START) + F.col("id") * 60).alias("ts"),
        F.concat(F.lit("c"), F.lpad((F.col("id") / 1500).cast("long").cast("string"), 3, "0"))
         .alias("s"),
        F.when((F.col("id") / 700).cast("long") % 4 == 0, None)
         .otherwise(F.col("id") % 1000).alias("n"),
        F.struct((F.col("id") / 50).cast("long").alias("x"),
                 F.concat(F.lit("y"), (F.col("id") % 7).cast("string")).alias("y")).alias("st")))
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key)
    spark.conf.set(key, timestamp_type)
    try:
        (df.write.option("parquet.block.size", 160_000)
         .option("parquet.page.size", 2048)
         .option("parquet.page.row.count.limit", PAGE_ROWS)
         .option("parquet.page.size.row.check.min", 50)
         .option("parquet.page.size.row.check.max", 100)
         .parquet(root))
    finally:
        spark.conf.set(key, before)
    return root


@pytest.fixture(scope="module")
def micros(spark, tmp_path_factory) -> str:
    return _write(spark, str(tmp_path_factory.mktemp("spark_pages") / "micros"),
                  "TIMESTAMP_MICROS")


@pytest.fixture(scope="module")
def int96(spark, tmp_path_factory) -> str:
    return _write(spark, str(tmp_path_factory.mktemp("spark_pages") / "int96"), "INT96")


def files(folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(folder, "*.parquet")))


def _ts(minutes: int) -> str:
    t = dt.datetime(2024, 1, 1) + dt.timedelta(minutes=int(minutes))
    return f"TIMESTAMP '{t:%Y-%m-%d %H:%M:%S}'"


def predicates(seed: int = 35, count: int = 40) -> list[str]:
    """A fixed list of varied predicates, then random ones over every column (seeded)."""
    fixed = [
        "k = 3000", "k = 3001", "k BETWEEN 60000 AND 60090", "k < 30", "k >= 119990",
        f"ts = {_ts(20_000)}", f"ts < {_ts(100)}", f"ts BETWEEN {_ts(5_000)} AND {_ts(5_030)}",
        "s = 'c007'", "s LIKE 'c01%'", "s > 'c025'", "s IN ('c003', 'c020')",
        "n IS NULL", "n IS NOT NULL AND k < 3000", "n = 999", "n > 990 AND k > 100000",
        "st.x = 400", "st.x BETWEEN 10 AND 12", "st.y = 'y3' AND k < 600",
        "k = 3000 OR ts = " + _ts(30_000), "k = 3 OR s = 'c020'", "NOT (k >= 300)",
        "NOT (k < 119000 OR n IS NULL)", "k * 2 + 1 = 6001 AND k < 9000", "k = 3000 AND n = 0",
        "(k < 300 OR k > 119700) AND n IS NOT NULL", "s = 'zzz'", "k < 0",
        f"ts > {_ts(39_990)} OR st.x = 3", "k IN (6, 60006, 119997)",
    ]
    rng = np.random.default_rng(seed)
    atoms = [
        lambda: f"k {rng.choice(['=', '<', '>', '<=', '>='])} {int(rng.integers(0, 3 * ROWS))}",
        lambda: f"k BETWEEN {(a := int(rng.integers(0, 3 * ROWS)))} AND {a + int(rng.integers(0, 900))}",
        lambda: f"ts {rng.choice(['=', '<', '>='])} {_ts(rng.integers(0, ROWS))}",
        lambda: f"s = 'c{int(rng.integers(0, 28)):03d}'",
        lambda: f"n = {int(rng.integers(0, 1000))}",
        lambda: rng.choice(["n IS NULL", "n IS NOT NULL"]),
        lambda: f"st.x = {int(rng.integers(0, ROWS // 50))}",
    ]
    out = list(fixed)
    while len(out) < len(fixed) + count:
        parts = [atoms[int(rng.integers(0, len(atoms)))]() for _ in range(int(rng.integers(1, 4)))]
        text = parts[0]
        for p in parts[1:]:
            text = f"({text}) {rng.choice(['AND', 'OR'])} {p}"
        out.append(f"NOT ({text})" if rng.random() < 0.15 else text)
    return out


PREDICATES = predicates()


def matching_rows(path: str, sql: str) -> list[tuple[int, int]]:
    """(row group, row within it) of each row of ``path`` where DuckDB finds ``sql`` TRUE."""
    meta = pq.ParquetFile(path).metadata
    first = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    rows = connect().sql(f"SELECT file_row_number FROM read_parquet('{path}', "
                         f"file_row_number = true) WHERE {sql}").fetchall()
    g = np.searchsorted(first, [r for (r,) in rows], side="right") - 1
    return [(int(gi), int(r) - int(first[gi])) for gi, (r,) in zip(g, rows)]


def check_sound(folder: str, sql: str) -> tuple[int, int]:
    """Every row DuckDB finds TRUE lies in a range of ``pe.prune_rows``; the rows selected
    and the rows of the files."""
    ranges = pe.prune_rows(folder, sql)
    by_group: dict = {}
    for r in ranges.to_pylist():
        by_group.setdefault((r["file"], r["row_group"]), []).append(
            (r["row_start"], r["row_start"] + r["row_count"]))
    for path in files(folder):
        for g, row in matching_rows(path, sql):
            assert any(a <= row < b for a, b in by_group.get((path, g), [])), \
                f"{sql}: row {row} of {os.path.basename(path)}#{g} matches, yet no range holds it"
    return int(pc.sum(ranges.column("row_count")).as_py() or 0), ROWS


def scan_equals_duckdb(folder: str, sql: str) -> None:
    got = pe.scan(folder, where=sql, columns=COLUMNS).to_pylist()
    want = connect().sql(f"SELECT {', '.join(COLUMNS)} FROM read_parquet('{folder}/*.parquet') "
                         f"WHERE {sql}").to_arrow_table().to_pylist()
    key = lambda r: r["k"]  # noqa: E731 - k is unique
    assert sorted(got, key=key) == sorted(want, key=key), f"{sql}: pe.scan differs from DuckDB"


def test_spark_writes_a_page_index_with_dozens_of_pages(micros):
    assert len(files(micros)) == 2
    for path in files(micros):
        meta = pq.ParquetFile(path).metadata
        assert meta.num_row_groups >= 2, "several row groups a file"
        assert all(meta.row_group(g).column(c).has_column_index and
                   meta.row_group(g).column(c).has_offset_index
                   for g in range(meta.num_row_groups) for c in range(meta.num_columns))
    pages = page_stats(micros)
    for leaf in ("k", "ts", "s", "n", "st.x", "st.y"):
        per_chunk = pages.columns[leaf].group_by(["path", "row_group"]).aggregate(
            [("row_start", "count")]).column("row_start_count").to_pylist()
        assert min(per_chunk) >= 12, f"{leaf}: dozens of pages a chunk, got {per_chunk}"


@pytest.mark.parametrize("leaf", ["k", "ts", "s", "n", "st.x", "st.y"])
def test_page_bounds_hold_their_rows(micros, leaf):
    """Each page's min, max and null count, against the rows it spans (read by pyarrow)."""
    pages = page_stats(micros, columns=[leaf]).columns[leaf]
    path_of = leaf.split(".")
    known = 0
    for page in pages.to_pylist():
        rows = pq.ParquetFile(page["path"]).read_row_group(page["row_group"], columns=[leaf[:2]
                                                          if leaf.startswith("st") else leaf])
        values = rows.column(0)
        if len(path_of) == 2:
            values = pc.struct_field(values, path_of[1])
        values = values.slice(page["row_start"], page["row_count"])
        lo, hi, nulls = (page[c] for c in ("min_values", "max_values", "null_count"))
        for p in path_of:
            lo, hi, nulls = (None if v is None else v[p] for v in (lo, hi, nulls))
        if nulls is not None:
            assert nulls == values.null_count, f"{leaf}: null count of {page['container']}"
        if lo is None or hi is None:
            continue
        known += 1
        found = pc.min_max(values).as_py()
        assert lo <= found["min"] and found["max"] <= hi, f"{leaf}: {page['container']}"
    assert known > 0.5 * pages.num_rows, f"{leaf}: most pages have bounds"


def test_prune_rows_and_scan_equal_duckdb_on_random_predicates(micros):
    selective = []
    for sql in PREDICATES:
        selected, total = check_sound(micros, sql)
        scan_equals_duckdb(micros, sql)
        selective.append((sql, selected))
    point = dict(selective)
    for sql in ("k = 3000", f"ts = {_ts(20_000)}", "st.x = 400", "k = 3000 OR ts = " + _ts(30_000),
                "k = 3 OR s = 'c020'"):
        assert point[sql] <= 4 * PAGE_ROWS + 1500, f"{sql}: pages pruned, {point[sql]} rows left"
    assert sum(s < ROWS // 10 for _, s in selective) >= 20, "pages prune for many predicates"


def test_int96_timestamps_have_no_page_bounds_and_stay_sound(int96):
    meta = pq.ParquetFile(files(int96)[0]).metadata
    assert meta.schema.column(1).physical_type == "INT96"
    ts_pages = page_stats(int96, columns=["ts"]).columns["ts"]
    assert ts_pages.column("min_values").null_count == ts_pages.num_rows or \
        pc.struct_field(ts_pages.column("min_values"), "ts").null_count == ts_pages.num_rows, \
        "INT96 bounds are unknown"
    for sql in [p for p in PREDICATES if "ts" in p][:12] + ["k = 3000", "s = 'c007'"]:
        selected, _ = check_sound(int96, sql)
        scan_equals_duckdb(int96, sql)
        if sql.startswith("ts = "):
            assert selected == ROWS, f"{sql}: nothing known of ts, every row kept"


def test_scan_reads_spark_files_from_their_pages(micros, monkeypatch):
    """Spark's files are read from their pages: a lookup reads the pages of its ranges (its
    page headers as parquet-java writes them parse and agree with the index), no flat column
    whole, and gives DuckDB's rows."""
    flat_whole = whole_flat_reads(monkeypatch)
    for sql in ("k = 3000", "k BETWEEN 100 AND 180 OR s = 'c020'", f"ts = {_ts(20_000)}"):
        scan_equals_duckdb(micros, sql)
    assert not flat_whole, f"flat columns of Spark's files read whole: {flat_whole}"
