"""Spark SQL ``where`` text and Columns: the engine's reading of every construct it prunes on,
against Spark on the rows.

One lake of twelve small files, values chosen per file so that most constructs can prune,
with the traps in the data: DST gap and overlap instants, NaN, -0.0, +inf, strings that
sort by bytes (``Z`` < ``a`` < ``é`` < emoji), LIKE wildcards in the data, integers at the
int32 edge. For each ``where``, the oracle is plain Spark: every file holding a row Spark
returns must be kept (soundness); ``prunes`` says the translation is expected to prune some
file (so that a construct silently read as "unknown" is noticed)."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.spark import _catalyst
from prune_engine.spark._files import file_key
from prune_engine.spark._source import source_frame as load
from tests.spark.helpers import SPARK_MAJOR, matching_files, write

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
STRINGS = ["a_b", "a%b", "axb", "Z", "é", "\U0001f600", "a\\b", "line\nbreak", "abc", "ab",
           "", "zz"]
#: instants around Los Angeles' DST changes (2024-03-10 gap 02:00-03:00, 2024-11-03 overlap)
INSTANTS = [dt.datetime(2024, 3, 10, 9, 30, tzinfo=UTC), dt.datetime(2024, 3, 10, 10, 30, tzinfo=UTC),
            dt.datetime(2024, 11, 3, 8, 30, tzinfo=UTC), dt.datetime(2024, 11, 3, 9, 30, tzinfo=UTC)] + \
    [dt.datetime(2024, 1, k, 12, tzinfo=UTC) for k in range(1, 9)]


def _file(k: int) -> pa.Table:
    n = 3
    ints = [k * 5, k * 5 + 1, k * 5 + 4]
    i32 = [2_147_483_000, 2_147_483_647, 5] if k == 11 else ints
    doubles = [k * 1.0, k * 1.0 + 0.25, {4: float("nan"), 5: None, 6: -0.0, 7: float("inf")}.get(k, k + 0.5)]
    return pa.table({
        "i": pa.array(i32, pa.int32()),
        "l": pa.array(ints, pa.int64()),
        "f": pa.array([k * 0.5, 0.1 if k == 3 else k * 0.5 + 0.125, 1.5], pa.float32()),
        "d": pa.array(doubles, pa.float64()),
        "dec": pa.array([decimal.Decimal(k) + decimal.Decimal("0.50"), decimal.Decimal(k),
                         decimal.Decimal(k) + decimal.Decimal("0.25")], pa.decimal128(10, 2)),
        "s": pa.array([STRINGS[k], STRINGS[k] + "x", STRINGS[k]]),
        "b": pa.array([bytes([k * 20]), bytes([255, k]), bytes([k * 20, 1])]),
        "dt": pa.array([dt.date(2024, 3, 1) + dt.timedelta(days=k)] * n),
        "ts": pa.array([INSTANTS[k]] * n, pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([INSTANTS[k].replace(tzinfo=None)] * n, pa.timestamp("us")),
        "bo": pa.array([k % 2 == 0, k % 2 == 0, None if k == 5 else k % 2 == 0]),
        "st": pa.array([{"a": k, "we ird": STRINGS[k]}] * n),
        "arr": pa.array([[k, k + 100]] * n, pa.list_(pa.int64())),
    })


@pytest.fixture(scope="module")
def lake(tmp_path_factory, spark):
    root = str(tmp_path_factory.mktemp("where_lake"))
    for k in range(12):
        write(os.path.join(root, f"part={k % 4}", f"f{k:02d}.parquet"), _file(k))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    spark.range(3).createOrReplaceTempView("three")
    return root, stats, load(spark, root)


@pytest.fixture(scope="module")
def ngram_stats(lake):
    """Footer statistics with an n-gram index on ``s`` (for RLIKE and LIKE '%..%')."""
    return pe.collect_stats(lake[0], granularity="file", ngram=["s"], progress=False)


@pytest.fixture(scope="module")
def exact_stats(spark, lake):
    """Exact statistics of the same files (with NaN counts), from Spark's rows."""
    import prune_engine.spark as pes

    return pes.stats_from_dataframe(spark.read.parquet(lake[0]))


@pytest.fixture(scope="module")
def oracle(spark, lake):
    """For every case Spark can run inside an aggregate: the files with a matching row, all
    from one scan (a CASE WHEN per case, grouped by file)."""
    from pyspark.sql import functions as F

    wheres = [w for w, _ in CASES if "SELECT" not in w and "rand(" not in w]
    df = spark.read.parquet(lake[0])
    path = F.col("_metadata.file_path")
    rows = df.groupBy(path.alias("file")).agg(
        *[F.max(F.when(F.expr(w), 1)).alias(f"c{i}") for i, w in enumerate(wheres)]).collect()
    return {w: {file_key(r["file"]) for r in rows if r[f"c{i}"]} for i, w in enumerate(wheres)}


def _kept_files(lake, where, stats=None) -> set[str]:
    root, footer_stats, base = lake
    stats = footer_stats if stats is None else stats
    expr = _catalyst.predicate(base, where, stats)
    mask = pe.prune(stats, expr).to_pylist()
    return {file_key(p) for p, m in zip(stats.column("path").to_pylist(), mask) if m}


PRUNES, EXACT, NGRAM, ANY = "prunes", "exact stats prune", "n-grams prune", "may keep all"
#: (where, what pruning to expect): PRUNES: footer statistics prune some file; EXACT: exact
#: statistics do (NaN counts); NGRAM: footer statistics with an n-gram index on ``s`` do;
#: ANY: nothing expected. Soundness is checked for all three kinds of statistics.
CASES = [
    # comparisons, IN, NULL-safe equality, NOT
    ("l > 25", PRUNES), ("l = 10", PRUNES), ("10 < l", PRUNES), ("l BETWEEN 5 AND 15", PRUNES),
    ("l IN (3, 47)", PRUNES), ("l NOT IN (1, 2)", ANY), ("l <=> 7", PRUNES),
    ("l <=> NULL", PRUNES), ("NOT (l < 30)", PRUNES), ("l != 5", ANY), ("l = NULL", PRUNES),
    ("l IN (NULL, 3)", PRUNES), ("l NOT IN (NULL, 3)", PRUNES),
    ("l IN (1,2,3,4,5,6,7,8,9,10,11,12)", PRUNES),
    ("l NOT IN (0,1,2,3,4,5,6,7,8,9)", PRUNES),  # covers the ranges [0, 4] and [5, 9]
    # literal typing: Spark coerces, the engine compares Spark's typed values
    ("i = '7'", PRUNES), ("i = 7L", PRUNES), ("i > 52.5", PRUNES), ("i = 1.5", PRUNES), ("l > 1e1", PRUNES),
    ("i IN (1, 2.0D)", PRUNES), ("l < 20.000000000000000001", PRUNES), ("i >= 9.99999e0", PRUNES),
    # floats: NaN = NaN and above +inf, -0.0 = 0.0, float32 literals
    ("d = double('NaN')", EXACT), ("d > double('Infinity')", EXACT), ("d >= double('NaN')", EXACT),
    ("d < 0.0", PRUNES), ("d = -0.0", PRUNES), ("d = 0.0", PRUNES), ("f = 0.1", PRUNES),
    ("f = 0.1f", PRUNES), ("f > 1.5", EXACT), ("d = double('Infinity')", PRUNES),
    ("isnan(d)", ANY),
    # decimals
    ("dec = 1.5", PRUNES), ("dec > 1.555", PRUNES), ("dec = 1.50BD", PRUNES), ("dec < 2", PRUNES),
    # strings by bytes, LIKE with Spark's default escape, rlike, ilike (left to Spark)
    ("s = 'é'", PRUNES), ("s > 'zz'", PRUNES), ("s < 'Z'", PRUNES), ("s >= '\U0001f600'", PRUNES),
    (r"s LIKE 'a\\_b'", PRUNES), (r"s LIKE 'a\_b%'", PRUNES), ("s LIKE 'a!_b' ESCAPE '!'", PRUNES),
    ("s LIKE 'a_b'", PRUNES), ("s LIKE 'a%'", PRUNES), ("s LIKE '%break'", NGRAM), ("s LIKE '%a\\%b%'", NGRAM),
    ("startswith(s, 'ab')", PRUNES), ("s RLIKE '^ab'", PRUNES), ("s RLIKE 'a.b$'", ANY),
    # Java's '$' is not RE2's: only the anchored prefix is read, and not under NOT
    ("s RLIKE '^ab$'", PRUNES), ("NOT s RLIKE '^ab$'", ANY), ("s RLIKE '^a.b$'", PRUNES),
    ("s RLIKE '^(abc|zz)'", NGRAM), ("s RLIKE '(a|b)[\\d]c'", ANY), ("s ILIKE 'A%'", ANY), ("s = 'line\\nbreak'", PRUNES),
    ("s IN ('a','b','c','d','e','f','g','h','i','j','é')", PRUNES), ("s = ''", PRUNES),
    *([("s = 'A' COLLATE UTF8_LCASE", ANY)] if SPARK_MAJOR >= 4 else []), ("upper(s) = 'ABC'", ANY),
    # backtick identifiers and struct fields
    ("`st`.`we ird` = 'Z'", PRUNES), ("st.a > 9", PRUNES), ("`l` = 3", PRUNES),
    # dates: literals, strings Spark casts to dates
    ("dt = date'2024-03-10'", PRUNES), ("dt > '2024-03-10'", PRUNES), ("dt = '2024-03-05 10:00'", PRUNES),
    ("dt >= date'2024-3-8'", PRUNES), ("dt < '2024'", PRUNES),
    ("dt IN (date'2024-03-01', date'2024-03-02', date'2024-03-03', date'2024-03-04', "
     "date'2024-03-05', date'2024-03-06', date'2024-03-07', date'2024-03-08', "
     "date'2024-03-09', date'2024-03-10', date'2099-01-01')", PRUNES),
    # timestamps in the session zone (Los Angeles), across DST; NTZ; Spark's own rewrites
    ("ts >= timestamp'2024-03-10 02:30:00'", PRUNES), ("ts = timestamp'2024-11-03 01:30:00'", PRUNES),
    ("ts = timestamp'2024-03-10 01:30:00'", PRUNES), ("ts > '2024-03-10'", PRUNES),
    ("ts < timestamp'2024-03-10 00:00:00+00:00'", PRUNES), ("ts = timestamp'2024-01-03 04:00'", PRUNES),
    ("cast(ts AS date) = date'2024-01-03'", PRUNES), ("ntz > timestamp_ntz'2024-03-10 00:00:00'", PRUNES),
    ("ntz = timestamp_ntz'2024-11-03 08:30:00'", PRUNES), ("ntz > timestamp'2024-03-10 00:00:00'", ANY),
    ("ts IN (timestamp'2024-01-01 04:00', timestamp'2024-01-02 04:00', timestamp'2024-01-03 04:00', "
     "timestamp'2024-01-04 04:00', timestamp'2024-01-05 04:00', timestamp'2024-01-06 04:00', "
     "timestamp'2024-01-07 04:00', timestamp'2024-01-08 04:00', timestamp'2024-01-09 04:00', "
     "timestamp'2024-01-10 04:00', timestamp'2024-01-11 04:00')", PRUNES),
    ("date_trunc('hour', ts) = timestamp'2024-01-01 04:00'", ANY),
    # arithmetic (ANSI, Spark 4's default: overflow is an error, so values are exact)
    ("l + 1 > 50", PRUNES), ("l * 2 < 10", PRUNES), ("-l < -40", PRUNES), ("d + 0.5 > 10.0", EXACT),
    ("l % 2 = 1", ANY),
    # booleans, binary, arrays, partitions
    ("bo", PRUNES), ("NOT bo", PRUNES), ("bo IS NULL", PRUNES), ("bo = false", PRUNES),
    ("b = X'00'", PRUNES), ("b < X'05'", PRUNES), ("array_contains(arr, 105)", PRUNES),
    ("part = 3", PRUNES), ("part > 1 AND l < 20", PRUNES), ("part IN (1, 2)", PRUNES),
    # combinations, unknown functions, subqueries
    ("(l > 40 OR s = 'é') AND NOT (d IS NULL)", PRUNES), ("length(s) = 3", ANY),
    ("rand() < 2", ANY), ("l IN (SELECT id FROM three)", ANY),
    ("l > 50 AND length(s) > 0", PRUNES), ("NOT (l > 50 AND length(s) > 0)", ANY),
    ("l > (SELECT max(id) FROM three) + 50", ANY),
]


@pytest.mark.parametrize("where, expect", CASES, ids=[c[0][:60] for c in CASES])
def test_where_is_read_as_spark_reads_it(spark, lake, ngram_stats, exact_stats, oracle, where,
                                         expect):
    matching = oracle[where] if where in oracle else matching_files(spark, lake[0], where)
    check_case(lambda stats: _kept_files(lake, where, stats), matching,
               (lake[1], ngram_stats, exact_stats), where, expect)


def check_case(kept_with, matching: set, stats: tuple, where: str, expect: str,
               must_prune: bool = True) -> None:
    """Soundness of ``where`` with each kind of statistics (footers, n-grams, exact), and
    the pruning ``expect`` says (unless ``must_prune`` is off); ``kept_with(stats)`` gives
    the files kept."""
    kept = {}
    for kind, table in zip((PRUNES, NGRAM, EXACT), stats):
        kept[kind] = kept_with(table)
        assert matching <= kept[kind], \
            f"{kind}: files with matching rows pruned: {sorted(matching - kept[kind])}"
    if expect != ANY and must_prune:
        assert len(kept[expect]) < 12, f"expected {expect}: {where!r}"


def test_columns_are_read_as_spark_reads_them(spark, lake):
    from pyspark.sql import functions as F

    root = lake[0]
    cases = [
        F.col("ts") > dt.datetime(2024, 11, 3, 9, 0, tzinfo=UTC),
        F.col("b") == bytearray(b"\xff\x03"),
        (F.col("l") > 30) & F.col("s").isin(["zz", "ab"]),
        F.col("st.we ird").startswith("a"),
        F.col("dt").between(dt.date(2024, 3, 3), dt.date(2024, 3, 4)),
        F.col("d").isNull(),
    ]
    for where in cases:
        kept = _kept_files(lake, where)
        matching = matching_files(spark, root, where)
        assert matching <= kept, f"{where}: pruned {sorted(matching - kept)}"
        assert len(kept) < 12, f"{where}: nothing pruned"


def test_legacy_integer_arithmetic_wraps_and_is_not_pruned_on(spark, lake):
    """With ANSI off, ``i + 2147483647`` wraps for i > 0: Spark's rows are negative."""
    root = lake[0]
    where = "i + 2147483647 < 0"
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        kept = _kept_files(lake, where)
        matching = matching_files(spark, root, where)
        assert matching, "Spark finds the wrapped rows"
        assert matching <= kept
        assert len(_kept_files(lake, "-i > 0")) == 12, "legacy negation is left to Spark"
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)
    assert len(_kept_files(lake, "l + 1 > 50")) < 12, "ANSI arithmetic prunes again"


def test_a_where_spark_fails_on_fails_as_in_spark(spark, lake):
    """ANSI: casting '1.5' to an integer is an error; prune_engine prunes nothing and Spark
    reports the error when the query runs, as it would without prune_engine."""
    import prune_engine.spark as pes

    root, stats, _ = lake
    with pytest.raises(Exception) as plain:
        spark.read.parquet(root).where("i = '1.5'").collect()
    with pytest.raises(Exception) as ours:
        pes.read(spark, root, "i = '1.5'", stats=stats).collect()
    assert type(ours.value) is type(plain.value)
    assert "CAST_INVALID_INPUT" in str(ours.value)


def test_bad_where_is_a_clear_error(spark, lake):
    root, stats, base = lake
    check_bad_wheres(base, stats)


def check_bad_wheres(base, stats) -> None:
    """Bad SQL, an unknown column, and a where that is neither text nor a Column: clear
    errors (Spark's position; the column named)."""
    with pytest.raises(pe.SqlParseError) as e:
        _catalyst.predicate(base, "l > AND 5", stats)
    assert (e.value.line, e.value.col) == (1, 9), "Spark's position: the stray '5'"
    with pytest.raises(pe.UnknownColumnError) as e:
        _catalyst.predicate(base, "nope > 5", stats)
    assert e.value.column == "nope" and "l" in e.value.known
    with pytest.raises(TypeError):
        _catalyst.predicate(base, 5, stats)


def test_a_column_spark_reads_from_the_folder_name_is_not_pruned_on_file_values(spark, tmp_path):
    """A file holding a column named like its partition folder: Spark shows the folder's
    value, the statistics describe the file's column; they disagree, so no pruning on it."""
    root = str(tmp_path)
    write(os.path.join(root, "x=5", "a.parquet"), pa.table({"x": [1, 2], "y": [1, 2]}))
    write(os.path.join(root, "x=6", "b.parquet"), pa.table({"x": [6, 6], "y": [3, 4]}))
    stats = pe.collect_stats(root, granularity="file", progress=False)
    base = load(spark, root)
    expr = _catalyst.predicate(base, "x = 5", stats)
    kept = pe.prune(stats, expr).to_pylist()
    assert matching_files(spark, root, "x = 5") == {file_key(os.path.join(root, "x=5", "a.parquet"))}
    assert kept == [True, True], "x is unknown: its statistics are not the folder values"
    assert np.array(pe.prune(stats, _catalyst.predicate(base, "y > 2", stats))).tolist() == [False, True]
