"""``pes.join`` against the plain Spark join: the same rows, the fact files Spark scans are
exactly the kept ones, and joins that must keep every fact row are not pruned."""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._join import PRUNABLE
from tests.spark.helpers import scanned_files, sorted_rows, write

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session

FILES = 10


@pytest.fixture(scope="module")
def fact(tmp_path_factory):
    """Sales files clustered on ``store_id`` (file k holds one sale of each store k*100 ..
    k*100+99), partitioned by ``grp``."""
    root = str(tmp_path_factory.mktemp("fact") / "sales")
    rng = np.random.default_rng(21)
    for k in range(FILES):
        n = 100
        stores = np.arange(k * 100, k * 100 + 100)
        table = pa.table({
            "store_id": pa.array(stores, pa.int64()),
            "sku": pa.array([f"sku-{k}-{i % 6}" for i in range(n)]),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(k % 5))] * n),
            "amount": pa.array(rng.random(n)),
        })
        write(os.path.join(root, f"grp={k % 3}", f"part-{k}.parquet"), table)
    return root, pe.collect_stats(root, granularity="file", progress=False)


@pytest.fixture(scope="module")
def stores(spark):
    rows = [(i, "north" if i in (7, 205, 206, 730) else "south", f"s{i}",
             dt.date(2024, 1, 1) + dt.timedelta(days=(i // 100) % 5), i // 100 % 3)
            for i in range(0, 1000, 1)]
    rows.append((None, "north", "no id", None, None))
    return spark.createDataFrame(rows, "id long, region string, name string, day date, grp int")


def _plain(spark, fact_root, dim, pairs, how):
    plain_fact = spark.read.parquet(fact_root)
    cond = None
    for f, d in pairs:
        c = plain_fact[f] == dim[d]
        cond = c if cond is None else cond & c
    return plain_fact.join(dim, cond, how)


def _check(spark, fact, dim, pairs, how, **kwargs):
    """Our join and the plain one give the same rows; Spark scans exactly the kept fact files
    (adaptive execution off while counting: it may drop a finished scan from the final plan
    when a side turns out empty)."""
    root, stats = fact
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        df, summary = pes.join(spark, root, dim, pairs, how, fact_stats=stats,
                               return_summary=True, **kwargs)
        rows, scanned = scanned_files(df)
        plain_rows, plain_scanned = scanned_files(_plain(spark, root, dim, pairs, how))
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    assert sorted_rows(rows) == sorted_rows(plain_rows)
    # the dimension has no files: every scanned file is a fact's (plain Spark prunes
    # partitions itself when the dimension is a local table, as on Spark Connect: dynamic
    # partition pruning)
    assert plain_scanned <= FILES
    pruned = how.lower().replace("_", "") in PRUNABLE
    assert scanned == (summary.files_read if pruned else FILES)
    return summary, rows


@pytest.mark.parametrize("how", ["inner", "left_semi", "right_outer", "cross"])
def test_pruning_joins_equal_plain_spark_and_scan_kept_files(spark, fact, stores, how):
    dim = stores.where("region = 'north'")
    summary, _ = _check(spark, fact, dim, [("store_id", "id")], how)
    assert summary.files_read == 3, "stores 7, 205/206 and 730 live in three files"
    assert summary.join_keys["store_id"] == {"test": "in", "keys": 4}


@pytest.mark.parametrize("how", ["left_outer", "full_outer", "left_anti"])
def test_joins_that_keep_every_fact_row_are_not_pruned(spark, fact, stores, how):
    summary, _ = _check(spark, fact, stores.where("region = 'north'"), [("store_id", "id")], how)
    assert summary.files_pruned == 0 and summary.files_read == 0 and not summary.join_keys


def test_joins_that_are_not_pruned_say_why(spark, fact, stores):
    _, summary = pes.join(spark, fact[0], stores, [("store_id", "id")], "left_outer",
                          fact_stats=fact[1], return_summary=True)
    assert str(summary) == ("prune_engine: not pruned: a left_outer join keeps every fact row, "
                            "with a partner or not")


@pytest.mark.parametrize("how", ["inner", "left_semi", "right_outer", "left_outer"])
def test_keys_named_alike_keep_one_column_as_in_spark(spark, fact, stores, how):
    """``on="store_id"`` (or a list of names) is Spark's ``join(other, "store_id")``: one
    ``store_id`` in the result, which ``select("store_id")`` reads without ambiguity."""
    dim = stores.where("region = 'north'").withColumnRenamed("id", "store_id")
    root, stats = fact
    for on in ("store_id", ["store_id"]):
        df = pes.join(spark, root, dim, on, how, fact_stats=stats)
        plain = spark.read.parquet(root).join(dim, on, how)
        assert df.columns == plain.columns and df.columns.count("store_id") == 1
        assert sorted_rows(df.select("store_id").collect()) == \
            sorted_rows(plain.select("store_id").collect())


def test_multi_column_keys_prune_column_by_column(spark, fact, stores):
    dim = stores.where("id IN (7, 730) OR id BETWEEN 210 AND 219")
    summary, rows = _check(spark, fact, dim, [("store_id", "id"), ("day", "day")], "inner")
    assert summary.files_read == 3 and rows
    assert summary.join_keys["day"]["test"] == "in"


def test_keys_on_a_partition_column_and_a_string_column(spark, fact, stores):
    summary, _ = _check(spark, fact, stores.where("id = 205"), [("grp", "grp")], "inner")
    assert 0 < summary.files_read < FILES
    skus = spark.createDataFrame([("sku-4-2",), ("sku-8-5",), (None,)], "code string")
    summary, rows = _check(spark, fact, skus, [("sku", "code")], "left_semi")
    assert summary.files_read == 2 and rows


def test_many_keys_prune_by_range_and_bloom_filter(spark, fact, stores):
    """Above ``max_keys`` the keys become a range (which covers files 2..7 here) and a Bloom
    filter probed over each file's store range (which leaves files 2 and 7)."""
    dim = stores.where("id BETWEEN 200 AND 209 OR id BETWEEN 700 AND 709")
    summary, _ = _check(spark, fact, dim, [("store_id", "id")], "inner", max_keys=5)
    assert summary.join_keys["store_id"]["test"] == "range+bloom"
    assert summary.files_read == 2


def test_a_key_pair_spark_compares_through_a_cast_is_not_used(spark, fact):
    dim = spark.createDataFrame([("7",), ("205",)], "id string")
    summary, _ = _check(spark, fact, dim, [("store_id", "id")], "inner")
    assert summary.join_keys["store_id"]["test"] == "none" and summary.files_pruned == 0


def test_an_empty_dimension_prunes_every_fact_file(spark, fact, stores):
    summary, rows = _check(spark, fact, stores.where("id < 0"), [("store_id", "id")], "inner")
    assert rows == [] and summary.files_read == 0


def test_keys_predicate_feeds_the_engine(spark, fact, stores):
    _, stats = fact
    keys = pes.keys_predicate(stores.where("region = 'north'"), [("store_id", "id")])
    assert str(keys.expr) == "store_id IN (7, 205, 206, 730)" or sorted(
        v.value for v in keys.expr.values) == [7, 205, 206, 730]
    assert sum(pe.prune(stats, keys.expr).to_pylist()) == 3
    assert keys.bloom_keep(stats) is None


def test_join_with_a_fact_where(spark, fact, stores):
    dim = stores.where("region = 'north'")
    root, stats = fact
    df, summary = pes.join(spark, root, dim, [("store_id", "id")], fact_stats=stats,
                           where="amount > 0.5 AND grp = 1", return_summary=True)
    plain_fact = spark.read.parquet(root).where("amount > 0.5 AND grp = 1")
    plain = plain_fact.join(dim, plain_fact["store_id"] == dim["id"])
    assert sorted_rows(df.collect()) == sorted_rows(plain.collect())
    assert summary.files_read == 1, "only store 730's file is in grp 1"


def test_bad_join_arguments_are_clear_errors(spark, fact, stores):
    with pytest.raises(ValueError, match="unknown join type"):
        pes.join(spark, fact[0], stores, [("store_id", "id")], "sideways", fact_stats=fact[1])
    with pytest.raises(ValueError, match="pairs"):
        pes.join(spark, fact[0], stores, [("store_id",)], fact_stats=fact[1])


def test_a_column_condition_and_a_fact_dataframe(spark, fact, stores):
    """``on=fact["k"] == dim["id"]`` (Spark's join condition) over a fact DataFrame: the
    plain join's rows and columns, only the kept files scanned."""
    from prune_engine.spark._session import functions

    root, stats = fact
    dim = stores.where("region = 'north'")
    base = spark.read.parquet(root)
    for on in [base["store_id"] == dim["id"], (dim["id"] == base["store_id"]) & (base["day"] == dim["day"]),
               functions(spark).col("store_id") == stores["id"]]:
        df, summary = pes.join(spark, base, dim, on, fact_stats=stats, return_summary=True)
        rows, scanned = scanned_files(df)
        plain = base.join(dim, on)
        assert df.columns == plain.columns
        assert sorted_rows(rows) == sorted_rows(plain.collect())
        assert summary.files_read == 3 and scanned <= 3
    for bad in [base["store_id"] > dim["id"], (base["store_id"] == dim["id"]) | (base["grp"] == dim["grp"]),
                base["store_id"] == base["grp"]]:
        with pytest.raises(ValueError, match="on= takes a Column of equalities"):
            pes.join(spark, base, dim, bad, fact_stats=stats)
    with pytest.raises(Exception, match="(?i)ambiguous|both sides"):  # grp: a column of both
        pes.join(spark, base, dim, functions(spark).col("grp") == dim["id"], fact_stats=stats)
