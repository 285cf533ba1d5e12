"""The where read on a Spark Connect client (:mod:`prune_engine.spark._connect_where`): every
case of :mod:`tests.spark.test_where` on a Connect session, against plain Spark on the rows.

Soundness for every case and every kind of statistics (a file holding a row Spark returns is
kept), and, where the classic path prunes, pruning on Connect too, except the few cases in
``NOT_ON_CONNECT``. Columns built with Connect's ``functions``, ``F.expr``, errors, and
Spark's type coercion compared with the one emulated here."""

from __future__ import annotations

import datetime as dt
import itertools
import random

import pytest

import prune_engine as pe
from prune_engine.spark import _catalyst
from prune_engine.spark._connect_where import common_type
from prune_engine.spark._files import file_key
from tests.spark.helpers import matching_files
from tests.spark.test_where import (  # noqa: F401 - fixtures, shared with the classic test
    CASES,
    UTC,
    check_bad_wheres,
    check_case,
    exact_stats,
    lake,
    ngram_stats,
    oracle,
)

pytestmark = pytest.mark.spark

#: cases the classic path prunes on and the Connect path leaves to Spark, and why
NOT_ON_CONNECT = {
    # Spark's optimizer rewrites cast(ts as date) = d into a range of instants in the session
    # zone; a cast of a timestamp to a date outside UTC is not modelled here
    "cast(ts AS date) = date'2024-01-03'": "timestamp-to-date cast outside UTC",
}


@pytest.fixture(scope="module")
def base(connect, lake):
    """The lake as a Connect DataFrame (and the ``three`` view the subquery cases name)."""
    connect.range(3).createOrReplaceTempView("three")
    return connect.read.parquet(lake[0])


def _kept(base, where, stats) -> set[str]:
    expr = _catalyst.predicate(base, where, stats)
    mask = pe.prune(stats, expr).to_pylist()
    return {file_key(p) for p, m in zip(stats.column("path").to_pylist(), mask) if m}


@pytest.mark.parametrize("where, expect", CASES, ids=[c[0][:60] for c in CASES])
def test_where_is_read_on_connect_as_spark_reads_it(spark, base, lake, ngram_stats, exact_stats,
                                                    oracle, where, expect):
    matching = oracle[where] if where in oracle else matching_files(spark, lake[0], where)
    check_case(lambda stats: _kept(base, where, stats), matching,
               (lake[1], ngram_stats, exact_stats), where, expect,
               must_prune=where not in NOT_ON_CONNECT)


def test_connect_columns_are_read_as_spark_reads_them(spark, base, lake):
    from pyspark.sql import functions as CF
    from pyspark.sql.connect import functions as F

    root, stats, _ = lake
    cases = [
        (F.col("ts") > dt.datetime(2024, 11, 3, 9, 0, tzinfo=UTC),
         CF.col("ts") > dt.datetime(2024, 11, 3, 9, 0, tzinfo=UTC)),
        (F.col("b") == F.lit(bytearray(b"\xff\x03")), CF.col("b") == bytearray(b"\xff\x03")),
        ((F.col("l") > 30) & F.col("s").isin(["zz", "ab"]),
         (CF.col("l") > 30) & CF.col("s").isin(["zz", "ab"])),
        (F.col("st.we ird").startswith("a"), CF.col("st.we ird").startswith("a")),
        (F.col("dt").between(dt.date(2024, 3, 3), dt.date(2024, 3, 4)),
         CF.col("dt").between(dt.date(2024, 3, 3), dt.date(2024, 3, 4))),
        (F.col("d").isNull(), CF.col("d").isNull()),
        (F.col("st")["a"] > 9, CF.col("st")["a"] > 9),
        (~(F.col("i") != 7), ~(CF.col("i") != 7)),
        (F.col("dec") < F.lit(2).cast("decimal(5,1)"),
         CF.col("dec") < CF.lit(2).cast("decimal(5,1)")),
        (F.col("f") == F.lit(0.1), CF.col("f") == CF.lit(0.1)),
        (F.like(F.col("s"), F.lit("a!_b"), F.lit("!")),
         CF.like(CF.col("s"), CF.lit("a!_b"), CF.lit("!"))),
        (F.col("l") + 1 > 50, CF.col("l") + 1 > 50),
        (F.expr("ts >= timestamp'2024-03-10 02:30:00'") & (F.col("part") == 3),
         CF.expr("ts >= timestamp'2024-03-10 02:30:00'") & (CF.col("part") == 3)),
    ]
    for where, classic in cases:
        kept = _kept(base, where, stats)
        matching = matching_files(spark, root, classic)
        assert matching <= kept, f"{where}: pruned {sorted(matching - kept)}"
        assert len(kept) < 12, f"{where}: nothing pruned"


def test_unmodelled_connect_columns_keep_every_file(base, lake):
    from pyspark.sql.connect import functions as F

    stats = lake[1]
    for where in [F.upper(F.col("s")) == "ABC", F.col("s").ilike("A%"), F.rand() < 2,
                  F.when(F.col("l") > 5, True).otherwise(False), F.col("l") == F.col("i")]:
        assert len(_kept(base, where, stats)) == 12, where


def test_bad_where_is_a_clear_error_on_connect(base, lake):
    from pyspark.sql.connect import functions as F

    stats = lake[1]
    check_bad_wheres(base, stats)
    with pytest.raises(pe.UnknownColumnError) as e:
        _catalyst.predicate(base, F.col("nope") > 5, stats)
    assert e.value.column == "nope"


def test_a_constant_spark_fails_on_prunes_nothing(base, lake):
    """ANSI: '1.5' cast to an integer is an error when the query runs; nothing is pruned."""
    stats = lake[1]
    assert len(_kept(base, "i = '1.5'", stats)) == 12
    assert len(_kept(base, "i = '7'", stats)) < 12


def test_integers_as_written_need_no_spark_call(base, lake, monkeypatch):
    """A where whose constants are all decimal integers is read without evaluating them in
    Spark (one round trip less per read), and prunes as when Spark evaluates them."""
    stats = lake[1]
    where = "l > 25 OR l IN (3, -47) OR i = 7 OR l BETWEEN 9223372036854775800 AND 2"
    evaluated = _kept(base, where + " OR l = CAST('13' AS BIGINT)", stats)

    def no_call(*args, **kwargs):
        raise AssertionError("the constants were sent to Spark")

    monkeypatch.setattr(type(base.sparkSession), "range", no_call)
    kept = _kept(base, where, stats)
    assert 0 < len(kept) < 12
    assert kept <= evaluated


#: constants whose value may be known as written: integers, timestamp_seconds, dates and
#: times without a zone (as strings, typed literals and casts), at every column type
_AS_WRITTEN = [
    "ts >= timestamp_seconds(1709251200) AND ts < timestamp_seconds(1710000000)",
    "ts > timestamp_seconds(-5) OR ntz > timestamp_seconds(1709251200)",
    "ts >= timestamp'2024-03-02 10:00:00' AND ts < timestamp'2024-11-03 08:30:00.5'",
    "ts = '2024-03-10 02:30:00' OR ts = '2024-11-03 01:30:00' OR ts >= '2024-03-05'",
    "ntz >= timestamp'2024-03-10 02:30:00' OR ntz < '2024-03-02'",
    "dt >= date'2024-03-05' AND dt <= '2024-03-07' OR dt = timestamp'2024-03-09'",
    "dt = CAST('2024-03-04 10:00:00' AS DATE) OR ts = CAST('2024-03-04 10:00:00' AS DATE)",
    "dt > timestamp'2024-03-04 10:00:00' OR ts < date'2024-03-02'",
    "ts > '2024-13-01' OR dt = '2024-02-30' OR l = 9223372036854775807",
]


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "UTC"])
@pytest.mark.parametrize("where", _AS_WRITTEN)
def test_constants_known_as_written_are_what_spark_evaluates(connect, base, lake, monkeypatch,
                                                             zone, where):
    """A constant read without Spark (an integer, ``timestamp_seconds`` of one, a plain date
    or a date and time in a UTC session) has the value Spark gives it, whatever the type it
    is compared at; in another zone a time of day is left to Spark."""
    from prune_engine.spark import _connect_where

    stats = lake[1]
    before = connect.conf.get("spark.sql.session.timeZone")
    connect.conf.set("spark.sql.session.timeZone", zone)
    try:
        known = str(_catalyst.predicate(base, where, stats))
        monkeypatch.setattr(_connect_where._Known, "at", lambda self, *a: None)
        assert known == str(_catalyst.predicate(base, where, stats))
    finally:
        connect.conf.set("spark.sql.session.timeZone", before)


def _random_datetime(rng: random.Random) -> str:
    """A date or date and time as written in SQL, valid or not, at the types' edges too."""
    year = rng.choice(["0001", "1582", "1900", "1969", "1970", "2024", "9999", "0000"])
    month, day = rng.choice(["01", "02", "12", "13", "00"]), rng.choice(["01", "28", "29", "31", "32"])
    text = f"{year}-{month}-{day}"
    if rng.random() < 0.6:
        text += f" {rng.choice(['00', '23', '24'])}:{rng.choice(['00', '59'])}:" \
                f"{rng.choice(['00', '59', '60'])}"
        if rng.random() < 0.5:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 6)))
    return text


def _reading(base, where, stats) -> str:
    """The engine's reading of ``where``, or the error Spark gives it (an invalid literal)."""
    try:
        return str(_catalyst.predicate(base, where, stats))
    except pe.PruneEngineError as e:
        return f"error: {type(e).__name__}"


def test_random_constants_known_as_written_are_what_spark_evaluates(connect, base, lake,
                                                                    monkeypatch):
    from prune_engine.spark import _connect_where

    rng = random.Random(23)
    stats = lake[1]
    before = connect.conf.get("spark.sql.session.timeZone")
    read = 0
    try:
        for zone in ("UTC", "America/Los_Angeles"):
            connect.conf.set("spark.sql.session.timeZone", zone)
            for _ in range(12):
                column = rng.choice(["ts", "ntz", "dt"])
                literal = rng.choice(["'{}'", "timestamp'{}'", "date'{}'",
                                      "CAST('{}' AS DATE)"]).format(_random_datetime(rng))
                seconds = rng.choice([0, -1, 1709373600, 253402300799, 9223372036854])
                where = f"{column} >= {literal} OR ts < timestamp_seconds({seconds})"
                with monkeypatch.context() as m:
                    known = _reading(base, where, stats)
                    m.setattr(_connect_where._Known, "at", lambda self, *a: None)
                    assert known == _reading(base, where, stats), (zone, where)
                read += not known.startswith("error")
    finally:
        connect.conf.set("spark.sql.session.timeZone", before)
    assert read >= 8, "most wheres are valid"


@pytest.mark.parametrize("zone, where", [
    ("UTC", "ts >= timestamp'2024-03-02 10:00:00' AND dt < '2024-03-09' AND l > 3"),
    ("America/Los_Angeles", "ts >= timestamp_seconds(1709373600) AND dt < date'2024-03-09'"),
])
def test_constants_as_written_need_no_spark_call(connect, base, lake, monkeypatch, zone, where):
    stats = lake[1]
    before = connect.conf.get("spark.sql.session.timeZone")
    connect.conf.set("spark.sql.session.timeZone", zone)

    def no_call(*args, **kwargs):
        raise AssertionError("the constants were sent to Spark")

    try:
        monkeypatch.setattr(type(base.sparkSession), "range", no_call)
        assert 0 < len(_kept(base, where, stats)) < 12
    finally:
        connect.conf.set("spark.sql.session.timeZone", before)


_TYPES = ["tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)",
          "decimal(38,0)", "decimal(5,4)", "string", "date", "timestamp", "timestamp_ntz",
          "boolean", "binary"]


def test_the_emulated_coercion_is_sparks(spark):
    """For column pairs of every type, the common type of a comparison is Spark's (from the
    analyzed plan of the classic session), or not modelled. Spark 4 (ANSI) and legacy."""
    import json

    from pyspark.sql.types import _parse_datatype_json_value

    ansi = spark.conf.get("spark.sql.ansi.enabled")
    try:
        for mode in ("true", "false"):
            spark.conf.set("spark.sql.ansi.enabled", mode)
            df = spark.range(1).selectExpr(*[f"cast(null as {t}) as c{i}"
                                             for i, t in enumerate(_TYPES)])
            types = [f.dataType.jsonValue() for f in df.schema.fields]
            for (i, a), (j, b) in itertools.permutations(enumerate(types), 2):
                ours = common_type([a, b], mode == "true")
                if ours is None:
                    continue
                try:
                    cond = df.where(f"c{i} = c{j}")._jdf.queryExecution().analyzed().condition()
                except Exception:  # noqa: BLE001 - Spark refuses the comparison
                    pytest.fail(f"{a} = {b}: Spark refuses, modelled as {ours}")
                theirs = json.loads(cond.left().dataType().json())
                assert _parse_datatype_json_value(theirs) == _parse_datatype_json_value(ours), \
                    f"ANSI {mode}: {a} = {b}: Spark compares as {theirs}, modelled as {ours}"
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)


def test_random_wheres_are_sound_on_connect(spark, base, lake):
    """Random conjunctions and disjunctions of comparisons with constants of several types:
    never a file with a matching row pruned."""
    rnd = random.Random(7)
    columns = ["i", "l", "f", "d", "dec", "dt", "ts", "ntz", "s", "part"]
    constants = ["7", "52.5", "1e1", "7L", "0.1f", "1.5D", "'12'", "NULL", "2.25BD",
                 "date'2024-03-05'", "timestamp'2024-03-10 02:30:00'", "'2024-03-06'",
                 "double('NaN')", "-0.0D", "'ab'", "3S"]
    wheres = []
    while len(wheres) < 40:
        parts = []
        for _ in range(rnd.randint(1, 3)):
            c, k = rnd.choice(columns), rnd.choice(constants)
            op = rnd.choice(["=", "<", "<=", ">", ">=", "<=>", "!="])
            parts.append(f"{c} {op} {k}")
        where = rnd.choice([" AND ", " OR "]).join(parts)
        try:  # only the wheres plain Spark runs
            matching = matching_files(spark, lake[0], where)
        except Exception:  # noqa: BLE001 - Spark rejects the types or fails a cast
            continue
        wheres.append((where, matching))
    for where, matching in wheres:
        kept = _kept(base, where, lake[1])
        assert matching <= kept, f"{where}: pruned {sorted(matching - kept)}"


def test_a_classic_column_on_connect_is_a_type_error(base, lake):
    from pyspark.sql import functions as CF

    with pytest.raises(TypeError, match="connect"):
        _catalyst.predicate(base, CF.col("l") > 5, lake[1])


def test_double_quoted_identifiers_are_left_to_spark(connect, base, lake):
    """With ``spark.sql.ansi.doubleQuotedIdentifiers``, ``"l"`` is a column (sqlglot would
    read a string): the where is not read, nothing is pruned, Spark runs it."""
    key = "spark.sql.ansi.doubleQuotedIdentifiers"
    connect.conf.set(key, "true")
    try:
        assert len(_kept(base, '"l" > 25', lake[1])) == 12
    finally:
        connect.conf.unset(key)
    assert len(_kept(base, "l > 25", lake[1])) < 12


def test_settings_come_in_one_request_with_their_defaults(connect, classic_spark):
    """``settings``: the values ``conf.get`` gives, on Connect in one request; a setting this
    Spark does not have is None."""
    from prune_engine.spark._session import settings

    keys = ["spark.sql.session.timeZone", "spark.sql.caseSensitive", "spark.sql.ansi.enabled"]
    for session in (connect, classic_spark):
        assert settings(session, keys) == {k: session.conf.get(k) for k in keys}
        assert settings(session, keys + ["spark.sql.no.such.setting"])[
            "spark.sql.no.such.setting"] is None
