"""``pes.read(..., order_by=, limit=)`` and ``pes.count`` against plain Spark.

Lakes written by Spark: clustered on ``id`` (so on ``ts`` and ``v`` too) and unclustered,
flat and Hive-partitioned, with NULLs in ``ts`` and ``v`` and NaN in ``v``, each in a few
files. The oracle is plain Spark: ``....where(w).orderBy(o).limit(k)`` gives the same sort
keys in the same order (rows that tie on every key may differ), ``....where(w).count()`` the
same count; the files Spark scans come from the plan's metrics."""

from __future__ import annotations

import math
import os

import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._session import functions
from tests.spark.helpers import scanned_files, write

pytestmark = pytest.mark.spark

FILES = 8
ROWS = 1200
#: 2024-01-01 00:00 UTC, one row every 10 minutes
EPOCH = 1704067200


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


def _frame(spark):
    """``id``; ``ts`` (NULL for 7 ids around 510); ``v`` = id / 4 (NaN for ids 900..905,
    NULL for a few ids); ``g`` = id % 5; ``s``."""
    return spark.range(ROWS).selectExpr(
        "id",
        f"CASE WHEN id BETWEEN 500 AND 520 AND id % 3 = 0 THEN NULL "
        f"ELSE timestamp_seconds({EPOCH} + id * 600) END AS ts",
        "CASE WHEN id BETWEEN 900 AND 905 THEN double('NaN') "
        "WHEN id % 97 = 11 THEN NULL ELSE id * 0.25 END AS v",
        "CAST(id % 5 AS INT) AS g",
        "concat('s', CAST(id % 13 AS STRING)) AS s")


def _write(spark, root: str, clustered: bool, partitioned: bool = False) -> str:
    df = _frame(spark)
    df = df.repartitionByRange(FILES, "id").sortWithinPartitions("id") if clustered \
        else df.repartitionByRange(FILES, (df["id"] * 7919) % ROWS)  # scattered ids
    key = "spark.sql.parquet.outputTimestampType"  # INT96 (the default) has no footer bounds
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        (df.write.partitionBy("g") if partitioned else df.write).parquet(root)
    finally:
        spark.conf.unset(key)
    return root


@pytest.fixture(scope="module")
def lakes(classic_spark, tmp_path_factory):
    """``{name: (root, footer statistics per row group)}``, written once for both sessions."""
    base = tmp_path_factory.mktemp("topk")
    out = {}
    for name, clustered, partitioned in [("clustered", True, False), ("unclustered", False, False),
                                         ("partitioned", True, True)]:
        root = _write(classic_spark, str(base / name), clustered, partitioned)
        out[name] = root, pe.collect_stats(root, granularity="row_group", progress=False)
    return out


def _norm(value):
    return "NaN" if isinstance(value, float) and math.isnan(value) else value


def _keys(rows, columns: list[str]) -> list[tuple]:
    return [tuple(_norm(r[c]) for c in columns) for r in rows]


def _plain_top(spark, root, where, order, limit):
    df = spark.read.parquet(root)
    df = df if where is None else df.where(where)
    return df.orderBy(*order).limit(limit)


def _spark_order(spark, order_by) -> list:
    """``order_by`` as plain Spark Columns (text with Spark SQL's defaults)."""
    F = functions(spark)
    out = []
    for item in order_by if isinstance(order_by, list) else [order_by]:
        if not isinstance(item, str):
            out.append(item)
            continue
        words = item.split()
        column = F.col(words[0])
        desc = len(words) > 1 and words[1].upper() == "DESC"
        nulls = " ".join(words[2:]).upper() if len(words) > 2 else ""
        first = nulls == "NULLS FIRST" if nulls else not desc
        out.append((column.desc_nulls_first() if first else column.desc_nulls_last()) if desc
                   else (column.asc_nulls_first() if first else column.asc_nulls_last()))
    return out


def _check_top(spark, root, stats, where, order_by, limit, key_columns):
    """pes.read's top rows against plain Spark's; returns (files scanned, plain's, summary)."""
    df, summary = pes.read(spark, root, where, stats=stats, order_by=order_by, limit=limit,
                           return_summary=True)
    rows, scanned = scanned_files(df)
    plain_rows, plain_scanned = scanned_files(
        _plain_top(spark, root, where, _spark_order(spark, order_by), limit))
    assert _keys(rows, key_columns) == _keys(plain_rows, key_columns), (where, order_by)
    assert len(rows) == len(plain_rows)
    if where is not None:
        assert all(r["id"] is not None for r in rows)
    assert scanned == summary.files_read <= plain_scanned
    return scanned, plain_scanned, summary


# (where, order_by, limit, sort key columns, most files a clustered lake reads)
TOP_CASES = [
    (None, "ts DESC", 100, ["ts"], 2),
    ("id < 1000", "ts DESC", 50, ["ts"], 2),
    (None, "ts", 30, ["ts"], 2),  # ASC: NULLS FIRST, Spark's default; the NULLs lead
    ("id >= 300", "ts ASC NULLS LAST", 40, ["ts"], 2),
    (None, "ts DESC NULLS FIRST", 20, ["ts"], 2),
    ("g = 2", "id DESC", 10, ["id"], FILES),  # no file is all g = 2: nothing beyond the where
    (None, ["id DESC", "ts"], 25, ["id", "ts"], 2),  # pruned by the first key
    ("s = 's3' OR id > 1100", "v DESC", 15, ["v"], FILES),  # NaN may be anywhere (footers)
]


@pytest.mark.parametrize("case", TOP_CASES, ids=lambda c: f"{c[0]}|{c[1]}|{c[2]}")
def test_topk_on_a_clustered_lake_reads_only_the_files_of_the_first_rows(spark, lakes, case):
    where, order_by, limit, columns, most = case
    root, stats = lakes["clustered"]
    scanned, plain_scanned, summary = _check_top(spark, root, stats, where, order_by, limit,
                                                 columns)
    assert plain_scanned == FILES
    assert scanned <= most, summary
    assert "LIMIT" in summary.limit


@pytest.mark.parametrize("case", TOP_CASES[:4] + TOP_CASES[6:], ids=lambda c: f"{c[1]}|{c[2]}")
def test_topk_on_an_unclustered_lake_equals_plain_spark(spark, lakes, case):
    where, order_by, limit, columns, _ = case
    root, stats = lakes["unclustered"]
    _check_top(spark, root, stats, where, order_by, limit, columns)


def test_topk_on_a_partitioned_lake_by_a_data_and_a_partition_column(spark, lakes):
    root, stats = lakes["partitioned"]
    scanned, plain_scanned, _ = _check_top(spark, root, stats, "g IN (1, 4)", "ts DESC", 30,
                                           ["ts"])
    assert scanned <= 2 * 2 < plain_scanned, "the last id range of each of the two partitions"
    _check_top(spark, root, stats, None, "g DESC", 30, ["g"])  # not in the footers: unpruned


def test_topk_with_a_pyspark_column(spark, lakes):
    root, stats = lakes["clustered"]
    F = functions(spark)
    scanned, _, summary = _check_top(spark, root, stats, None, F.col("ts").desc(), 100, ["ts"])
    assert scanned <= 2 and "DESC NULLS LAST" in summary.limit
    scanned, _, summary = _check_top(spark, root, stats, None, F.col("TS"), 30, ["ts"])
    assert scanned <= 2 and "ASC NULLS FIRST" in summary.limit, "a column: Spark's ASC"
    order = [(F.col("id") % 7).desc(), F.col("id")]  # an expression: sorted, not pruned
    df, summary = pes.read(spark, root, "id > 5", stats=stats, order_by=order, limit=10,
                           return_summary=True)
    plain = spark.read.parquet(root).where("id > 5").orderBy(*order).limit(10)
    assert [r.id for r in df.collect()] == [r.id for r in plain.collect()]
    assert "not pruned" in summary.limit


def test_topk_nan_leads_descending_and_trails_ascending(spark, lakes):
    """With NaN counts known (Spark's exact statistics), NaN rows lead ``v DESC``, as in
    Spark: the file holding them and the one holding the largest numbers are read."""
    root, _ = lakes["clustered"]
    stats = pes.stats_from_dataframe(spark.read.parquet(root))
    scanned, _, _ = _check_top(spark, root, stats, None, "v DESC", 10, ["v"])
    assert scanned <= 2
    df = pes.read(spark, root, stats=stats, order_by="v DESC", limit=10)
    assert [_norm(r.v) for r in df.collect()][:6] == ["NaN"] * 6
    scanned, _, _ = _check_top(spark, root, stats, "id >= 600", "v ASC NULLS LAST", 10, ["v"])
    assert scanned <= 2
    scanned, _, _ = _check_top(spark, root, stats, None, "v ASC NULLS LAST", 10, ["v"])
    assert scanned <= 1


def test_limit_alone_reads_the_fewest_files_that_hold_enough_matching_rows(spark, lakes):
    root, stats = lakes["clustered"]
    plain = spark.read.parquet(root)
    for where, limit, most in [("id >= 300", 50, 1), (None, 200, 2), ("g = 2", 20, FILES),
                               ("id >= 1190", 50, 1)]:
        df, summary = pes.read(spark, root, where, stats=stats, limit=limit,
                               return_summary=True)
        rows, scanned = scanned_files(df)
        expected = min(limit, (plain if where is None else plain.where(where)).count())
        assert len(rows) == expected, where
        if where is not None:
            ids = {r.id for r in plain.where(where).select("id").collect()}
            assert {r.id for r in rows} <= ids, "every row matches"
        assert scanned == summary.files_read <= most, (where, summary)


def test_a_where_left_to_spark_is_unknown_not_true(spark, lakes):
    """A subquery (on a classic session the optimized plan is a join, not a filter) is left
    to Spark: nothing is counted from the statistics or cut by the top-k on its account."""
    root, stats = lakes["clustered"]
    where = "id IN (SELECT id * 100 FROM range(5))"
    n, summary = pes.count(spark, root, where, stats=stats, return_summary=True)
    assert n == _plain_count(spark, root, where) == 5
    assert summary.from_statistics == 0
    _check_top(spark, root, stats, where, "ts DESC", 3, ["ts"])


def test_order_by_is_validated(spark, lakes):
    root, stats = lakes["clustered"]
    with pytest.raises(pe.PruneEngineError, match="order_by takes"):
        pes.read(spark, root, stats=stats, order_by="ts DESC, id", limit=3)
    with pytest.raises(ValueError, match="limit must be"):
        pes.read(spark, root, stats=stats, order_by="ts", limit=-1)
    with pytest.raises(pe.UnknownColumnError, match="nope"):
        pes.read(spark, root, stats=stats, order_by="nope DESC", limit=3)


def _plain_count(spark, root, where) -> int:
    df = spark.read.parquet(root)
    return (df if where is None else df.where(where)).count()


# (where, most files Spark reads on the clustered lake, on the partitioned lake)
COUNT_CASES = [
    (None, 0, 0),
    ("id >= 310", 1, 5),
    ("id BETWEEN 310 AND 1000", 2, 10),
    ("ts >= timestamp'2024-01-03 00:00:00'", 2, 10),  # plus the file with NULL ts
    ("g = 2", FILES, 0),  # a partition column: whole files on the partitioned lake
    ("g = 2 AND id < 400", FILES, 3),
    ("v > 100", FILES, 40),  # NaN > 100 in Spark; footers do not count NaN: read
    ("s = 's3' AND id < 100", 1, 5),
]


@pytest.mark.parametrize("name", ["clustered", "partitioned"])
@pytest.mark.parametrize("case", COUNT_CASES, ids=lambda c: str(c[0]))
def test_count_equals_plain_spark_and_reads_only_boundary_files(spark, lakes, name, case):
    where, flat_most, partitioned_most = case
    root, stats = lakes[name]
    got, summary = pes.count(spark, root, where, stats=stats, return_summary=True)
    assert got == _plain_count(spark, root, where)
    most = partitioned_most if name == "partitioned" else flat_most
    assert summary.files_read <= most, summary
    assert summary.files_read + summary.files_pruned == summary.files_total
    if summary.files_read == 0:
        assert summary.from_statistics == got, "answered from the statistics alone"


def test_count_on_an_unclustered_lake_and_with_a_column(spark, lakes):
    root, stats = lakes["unclustered"]
    for where in [None, "id >= 310", "ts IS NULL"]:
        assert pes.count(spark, root, where, stats=stats) == _plain_count(spark, root, where)
    F = functions(spark)
    assert pes.count(spark, root, F.col("g") == 3, stats=stats) == \
        spark.read.parquet(root).where("g = 3").count()


def test_count_without_statistics_collects_them_and_answers_from_them(spark, lakes):
    root, _ = lakes["clustered"]
    n, summary = pes.count(spark, root, return_summary=True)
    assert n == ROWS and summary.files_read == 0 and summary.from_statistics == ROWS


def test_count_reads_new_and_changed_files_and_skips_gone_ones(spark, tmp_path):
    root = str(tmp_path / "lake")
    for k in range(4):
        write(os.path.join(root, f"f{k}.parquet"), pa.table({"x": list(range(k * 10, k * 10 + 5))}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    write(os.path.join(root, "new.parquet"), pa.table({"x": [1, 2, 40]}))
    write(os.path.join(root, "f1.parquet"), pa.table({"x": [11, 12, 13, 14, 15, 16]}))
    os.remove(os.path.join(root, "f2.parquet"))
    with pytest.warns(UserWarning, match="no longer exist"):
        n, summary = pes.count(spark, root, "x >= 0", stats=stats, return_summary=True)
    assert n == _plain_count(spark, root, "x >= 0") == 19
    assert summary.from_statistics == 10, "f0 and f3, unchanged"
    assert summary.files_read == 2, "the new and the changed file"
    with pytest.warns(UserWarning, match="no longer exist"):
        df, summary = pes.read(spark, root, "x >= 0", stats=stats, order_by="x DESC", limit=2,
                               return_summary=True)
    assert [r.x for r in df.collect()] == [40, 34]


def test_count_and_topk_trust_only_the_files_spark_lists(spark, tmp_path):
    """Files the statistics describe but Spark does not list (a reader option filters them
    out) are no evidence: neither counted nor allowed to set a top-k threshold."""
    root = str(tmp_path / "lake")
    for k in range(4):
        write(os.path.join(root, f"f{k}.parquet"), pa.table({"x": list(range(k * 10, k * 10 + 5))}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    options = {"pathGlobFilter": "f[01].parquet"}
    plain = spark.read.options(**options).parquet(root)
    n, summary = pes.count(spark, root, stats=stats, options=options, return_summary=True)
    assert n == plain.count() == 10 and summary.files_read == 0
    df = pes.read(spark, root, stats=stats, options=options, order_by="x DESC", limit=3)
    assert [r.x for r in df.collect()] == [14, 13, 12]


def test_count_with_odd_file_names_answers_from_statistics(spark, tmp_path):
    """Spark's listing names files as URIs (percent-encoded); they are matched to the
    statistics' paths, so no file is read for want of a match."""
    root = str(tmp_path / "lake dir")
    for i, value in enumerate(["a b", "x%y", "k=v", "é-ü", "#hash"]):
        write(os.path.join(root, f"p={value}", f"f {i} {value}.parquet"),
              pa.table({"i": [i * 10, i * 10 + 5]}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    n, summary = pes.count(spark, root, "i >= 10", stats=stats, return_summary=True)
    assert n == spark.read.parquet(root).where("i >= 10").count() == 8
    assert summary.files_read == 0 and summary.from_statistics == 8
