"""Bloom filters written by Spark itself (parquet-mr's split-block filters), read by
``pe.collect_stats`` and ``pes.collect_stats``, probed by ``pe.prune``, ``pes.read`` and
``pes.join``, checked against plain Spark.

One lake, written by Spark with its default settings (snappy, ``_SUCCESS``, ``.crc`` files,
INT96 timestamps) plus Bloom filters on an integer key ``k`` and a string key ``s``: keys in
hashed order, so every file's min/max spans nearly the whole key range and only the Bloom
filters can prune a point lookup. Files hold several row groups (a small
``parquet.block.size``), so a file's entry is the union of its row groups' filters."""

from __future__ import annotations

import glob
import os

import numpy as np
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._files import file_key
from prune_engine.stats import _thrift
from prune_engine.stats.parquet import read_footer
from tests.spark.helpers import matching_files, scanned_files, sorted_rows

pytestmark = pytest.mark.spark

FILES = 30
ROWS = 30_000
MOD = 100_003  # a prime: k = id * 7919 % MOD is distinct for every id < MOD
NULL_EVERY = 997  # k is NULL where id % NULL_EVERY == 0
FALSE_POSITIVES = 3  # files a lookup may keep beyond those holding the key (fpp ~1% a file)


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("parquet_bloom") / "lake")
    df = spark.range(ROWS).select(
        F.when(F.col("id") % NULL_EVERY == 0, None)
         .otherwise(F.col("id") * 7919 % MOD).alias("k"),
        F.substring(F.sha2(F.col("id").cast("string"), 256), 1, 16).alias("s"),
        F.timestamp_seconds(F.lit(1_704_067_200) + F.col("id") * 60).alias("ts"),
        (F.col("id") % 13).alias("v"),
    ).repartition(FILES)
    writer = df.write.option("parquet.block.size", 12_000)  # a few row groups a file
    for column in ("k", "s"):
        writer = writer.option(f"parquet.bloom.filter.enabled#{column}", "true") \
            .option(f"parquet.bloom.filter.expected.ndv#{column}", "2000")
    # Spark's default timestamp type, whatever an earlier module set on the shared session
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key)
    spark.conf.set(key, "INT96")
    try:
        writer.parquet(root)
    finally:
        spark.conf.set(key, before)
    return root


@pytest.fixture(scope="module")
def stats(lake):
    return pe.collect_stats(lake, granularity="file", bloom=True, progress=False)


@pytest.fixture(scope="module")
def where_is(spark, lake) -> dict:
    """Plain Spark's answer to "which files hold this key": ``{("k", 5): {file key}, ...}``,
    from every row's ``_metadata.file_path``."""
    out: dict = {}
    rows = spark.read.parquet(lake).select("k", "s", F.col("_metadata.file_path")).collect()
    for k, s, path in rows:
        out.setdefault(("k", k), set()).add(file_key(path))
        out.setdefault(("s", s), set()).add(file_key(path))
    return out


@pytest.fixture(scope="module")
def keys(where_is) -> dict:
    """Present and absent keys (fixed seed), absent ones inside every file's min/max."""
    rng = np.random.default_rng(5)
    ints = sorted(v for c, v in where_is if c == "k" and v is not None)
    strings = sorted(v for c, v in where_is if c == "s")
    middle = [v for v in ints if 5_000 < v < MOD - 5_000]
    absent_ints = sorted(set(range(5_000, MOD - 5_000)) - set(ints))
    known = set(strings)
    absent_strings = []
    while len(absent_strings) < 20:
        text = "".join(rng.choice(list("0123456789abcdef"), 16))
        if text not in known and "1" < text < "f":
            absent_strings.append(text)
    return {
        "int": [int(v) for v in rng.choice(middle, 25, replace=False)],
        "absent_int": [int(v) for v in rng.choice(absent_ints, 25, replace=False)],
        "str": [str(v) for v in rng.choice(strings, 25, replace=False)],
        "absent_str": absent_strings,
    }


def _files(stats, mask) -> set[str]:
    paths, kept = stats.files_kept(np.asarray(mask.to_numpy(zero_copy_only=False), bool))
    return {file_key(p) for p, k in zip(paths, kept) if k}


def _lit(value) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


def test_spark_wrote_bloom_filters_for_k_and_s_only(lake):
    names = os.listdir(lake)
    assert "_SUCCESS" in names and any(n.endswith(".crc") for n in names)
    files = sorted(glob.glob(os.path.join(lake, "*.snappy.parquet")))
    assert len(files) == FILES
    groups = 0
    for path in files:
        meta = pq.ParquetFile(path).metadata
        columns = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
        assert meta.schema.column(columns["ts"]).physical_type == "INT96"
        groups += meta.num_row_groups
        # the footer's bloom_filter_offset of each chunk (pyarrow 18 does not expose it)
        footer = read_footer(path, path)
        names = [leaf.name for leaf in footer.plan.leaves]
        offsets = footer.rows[:, _thrift.S_BLOOM_OFF].reshape(-1, len(names))
        has = {name: offsets[:, j] >= 0 for j, name in enumerate(names)}
        assert has["k"].all() and has["s"].all(), path
        assert not has["ts"].any() and not has["v"].any(), path
    assert groups > FILES, "files hold several row groups: a file's filter is their union"


def test_spark_collection_equals_local_collection(spark, lake, stats):
    remote = pes.collect_stats(spark, lake, granularity="file", bloom=True)
    assert remote.table.column("container").to_pylist() == \
        stats.table.column("container").to_pylist()
    assert len(stats.table) == FILES
    blooms = stats.table.column("bloom_filter").combine_chunks()
    assert remote.table.column("bloom_filter").combine_chunks().equals(blooms)
    assert remote.table.equals(stats.table)
    for name in ("k", "s"):
        assert blooms.field(name).null_count == 0, f"every file has a filter of {name}"
    names = [blooms.type.field(i).name for i in range(blooms.type.num_fields)]
    assert "ts" not in names, "INT96 has no filter to probe"
    if "v" in names:  # a column without filters: unknown in every file
        assert blooms.field("v").null_count == FILES
    row = spark.read.parquet(lake).where("k IS NOT NULL").limit(1).collect()[0]
    for expr in [f"k = {row.k}", f"s = '{row.s}'", f"k IN ({row.k}, -3, 17)"]:
        assert pe.prune(remote, expr).equals(pe.prune(stats, expr)), expr


def test_spark_reads_dictionaries_as_value_sets(spark, lake):
    """``v`` (13 values) is dictionary-encoded by parquet-java: its pages are exact sets."""
    local = pe.collect_stats(lake, granularity="row_group", dictionaries=["v"], progress=False)
    remote = pes.collect_stats(spark, lake, granularity="row_group", dictionaries=["v"])
    assert remote.table.equals(local.table)
    sets = local.table.column("value_set").combine_chunks().field("v")
    assert sets.null_count == 0, "every chunk of v is dictionary-encoded"
    frame = spark.read.parquet(lake).select("v", F.col("_metadata.file_path").alias("f"))
    held = {r.f for r in frame.where("v != 3").select("f").distinct().collect()}
    kept = pe.prune(local, "v != 3").to_pylist()
    paths = local.table.column("path").to_pylist()
    assert {file_key(p) for p, k in zip(paths, kept) if k} >= {file_key(p) for p in held}
    everything = ", ".join(str(i) for i in range(13))
    assert not any(pe.prune(local, f"v NOT IN ({everything})").to_pylist()), \
        "every value of every chunk is excluded: min/max alone cannot tell (0..12 is a range)"


def test_min_max_alone_keeps_every_file(lake, keys):
    plain = pe.collect_stats(lake, granularity="file", progress=False)
    assert "bloom_filter" not in plain.table.column_names
    for value in keys["int"][:5] + keys["absent_int"][:5] + keys["str"][:5]:
        column = "s" if isinstance(value, str) else "k"
        assert sum(pe.prune(plain, f"{column} = {_lit(value)}").to_pylist()) == FILES


@pytest.mark.parametrize("granularity", ["file", "row_group"])
def test_point_lookups_and_in_lists_are_sound_and_prune(lake, stats, where_is, keys,
                                                        granularity):
    """Every file plain Spark finds a match in is kept; a present key keeps its file and at
    most a few false positives; an absent key keeps at most a few."""
    if granularity == "row_group":
        stats = pe.collect_stats(lake, granularity="row_group", bloom=True, progress=False)
    extra = 0
    cases = []
    for column, present, absent in [("k", keys["int"], keys["absent_int"]),
                                    ("s", keys["str"], keys["absent_str"])]:
        cases += [(f"{column} = {_lit(v)}", [(column, v)]) for v in present + absent]
        for i in range(0, 20, 4):
            values = present[i:i + 3] + absent[i:i + 2]
            cases.append((f"{column} IN ({', '.join(_lit(v) for v in values)})",
                          [(column, v) for v in values]))
        cases.append((f"{column} IN ({', '.join(_lit(v) for v in absent[:10])})",
                      [(column, v) for v in absent[:10]]))
    for expr, probes in cases:
        expected = set().union(*(where_is.get(p, set()) for p in probes))
        kept = _files(stats, pe.prune(stats, expr))
        assert expected <= kept, f"{expr}: a file holding a match was pruned"
        assert len(kept) <= len(expected) + FALSE_POSITIVES, f"{expr}: kept {len(kept)}"
        extra += len(kept - expected)
    # ~1% false positives a file: 30 files x (100 probes, plus those of IN lists)
    assert extra <= 0.03 * FILES * len(cases) + 5


def test_mixed_predicates_are_sound_against_spark(spark, lake, stats, keys):
    a, b = keys["int"][:2]
    s, absent = keys["str"][0], keys["absent_int"][0]
    for expr in [f"k = {a} OR s = '{s}'",
                 f"k IN ({a}, {b}) AND s = '{s}'",
                 f"k = {a} AND v = 3",
                 f"k = {a} OR v = 3",
                 f"NOT (k = {absent})",
                 f"k IN ({a}, NULL)",
                 "k IS NULL",
                 f"k IS NULL OR k = {b}",
                 f"k = {absent} OR s = '{keys['absent_str'][0]}'"]:
        expected = matching_files(spark, lake, expr)
        kept = _files(stats, pe.prune(stats, expr))
        assert expected <= kept, f"{expr}: a file holding a match was pruned"
    reasons = pe.explain(stats, f"k = {absent}").column("reason").to_pylist()
    assert all(r is not None and r.endswith("(Bloom filter of k)") for r in reasons), reasons[:3]


@pytest.mark.parametrize("column", ["k", "s"])
def test_read_equals_plain_spark_and_scans_few_files(spark, lake, stats, keys, column):
    values = keys["int" if column == "k" else "str"][:3]
    for value in values:
        where = f"{column} = {_lit(value)}"
        df, summary = pes.read(spark, lake, where, stats=stats, return_summary=True)
        rows, scanned = scanned_files(df)
        plain = spark.read.parquet(lake).where(where).collect()
        assert sorted_rows(rows) == sorted_rows(plain) and len(plain) == 1
        assert summary.files_total == FILES
        assert 1 <= scanned == summary.files_read <= 3, where


@pytest.mark.parametrize("column", ["k", "s"])
def test_join_equals_plain_spark_and_scans_few_fact_files(spark, lake, stats, keys,
                                                          where_is, column):
    """A dimension of ten present keys, an absent one and a NULL: the IN list of its keys
    probes the fact files' Bloom filters."""
    kind = "long" if column == "k" else "string"
    present = keys["int" if column == "k" else "str"][5:15]
    absent = keys["absent_int" if column == "k" else "absent_str"][0]
    rows = [(v, f"tag{i}") for i, v in enumerate(present + [absent, None])]
    dim = spark.createDataFrame(rows, f"dk {kind}, tag string")
    holding = set().union(*(where_is[(column, v)] for v in present))
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # keep every scan in the plan
    try:
        df, summary = pes.join(spark, lake, dim, on=[(column, "dk")], fact_stats=stats,
                               return_summary=True)
        got, scanned = scanned_files(df)
        fact = spark.read.parquet(lake)
        plain = fact.join(dim, fact[column] == dim["dk"]).collect()
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    assert sorted_rows(got) == sorted_rows(plain) and len(plain) == len(present)
    assert summary.join_keys[column]["test"] == "in"
    assert scanned == summary.files_read
    assert len(holding) <= scanned <= len(holding) + FALSE_POSITIVES


def test_int96_timestamps_are_never_pruned(spark, lake, stats, keys):
    """Spark writes timestamps as INT96 (no statistics, no usable filter): a predicate on
    ``ts`` keeps every file, and ANDed with a key it prunes on the key alone."""
    plain = spark.read.parquet(lake)
    row = plain.where("k IS NOT NULL").orderBy("k").select(
        "k", F.date_format("ts", "yyyy-MM-dd HH:mm:ss").alias("t")).limit(1).collect()[0]
    other = plain.where(f"k = {keys['int'][0]}").select(
        F.date_format("ts", "yyyy-MM-dd HH:mm:ss")).collect()[0][0]
    for where in [f"ts = TIMESTAMP '{row.t}'",
                  f"ts IN (TIMESTAMP '{row.t}', TIMESTAMP '{other}')",
                  f"ts = TIMESTAMP '{row.t}' AND k = {row.k}",
                  f"ts = TIMESTAMP '{row.t}' OR k = {keys['absent_int'][0]}"]:
        expected = matching_files(spark, lake, where)
        assert expected, where
        kept = _files(stats, pe.prune(stats, where))
        assert expected <= kept, f"{where}: a file holding a match was pruned"
        df, summary = pes.read(spark, lake, where, stats=stats, return_summary=True)
        rows, scanned = scanned_files(df)
        assert sorted_rows(rows) == sorted_rows(plain.where(where).collect()), where
        assert scanned == summary.files_read
        if " AND k = " in where:
            assert summary.files_read <= 1 + FALSE_POSITIVES
        else:
            assert summary.files_pruned == 0, f"{where}: INT96 proves nothing"
