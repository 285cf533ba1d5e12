"""The one reader of date and timestamp text (``evaluate.domains.read_timestamp_text``), on both
paths that read such text: the pruning (``pe.prune``) and the scan's row filter (``RowFilter``).

The oracle is numpy's proleptic Gregorian calendar (``numpy.datetime64``, astronomical years:
44 BC is -0043) and pyarrow compute on the column's integers; DuckDB is a second oracle where
it reads the same SQL the same way."""

from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prune_engine as pe
from prune_engine.evaluate.domains import DAY_NS, parse_instant_ns, read_timestamp_text
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.rows import RowFilter
from tests.oracle.duck import DUCKDB_MAJOR, connect, load_table


def _numpy_iso(year: int, month: int, day: int) -> str:
    return f"{'-' if year < 0 else ''}{abs(year):04d}-{month:02d}-{day:02d}"


def _written(year: int, month: int, day: int) -> str:
    """The text of a date, in the engine's (DuckDB's) spelling: year 0 is 0001 (BC)."""
    if year >= 1:
        return f"{year:04d}-{month:02d}-{day:02d}"
    return f"{1 - year:04d}-{month:02d}-{day:02d} (BC)"


# ---------------------------------------------------------------------------- the reader

ZONES = {None: 0, "Z": 0, " UTC": 0, "+01": 60, "-0430": -270, "+05:45": 345, "-12:00": -720}


@given(year=st.integers(-300_000, 300_000), month=st.integers(1, 12), day=st.integers(1, 31),
       time=st.none() | st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
                                  st.text("0123456789", max_size=9)),
       zone=st.sampled_from(sorted(ZONES, key=str)), sep=st.sampled_from([" ", "T"]))
def test_reader_against_numpy(year, month, day, time, zone, sep):
    text = _written(year, month, day)
    try:
        days = int(np.datetime64(_numpy_iso(year, month, day), "D").astype(np.int64))
    except ValueError:  # no such day (Feb 29 of a common year, April 31)
        with pytest.raises(ValueError):
            read_timestamp_text(text)
        return
    nanos = 0
    if time is not None:
        h, m, s, digits = time
        text += f"{sep}{h:02d}:{m:02d}:{s:02d}" + (f".{digits}" if digits else "")
        nanos = (h * 3600 + m * 60 + s) * 10**9 + (int(digits.ljust(9, "0")) if digits else 0)
    if zone is not None:
        text += zone
    got = read_timestamp_text(text)
    assert (got.days, got.time_ns) == (days, None if time is None else nanos), text
    assert got.offset_s == (None if zone is None else ZONES[zone] * 60), text
    assert parse_instant_ns(text) == days * DAY_NS + nanos - ZONES[zone] * 60 * 10**9, text


@pytest.mark.parametrize("text", [
    "2024-02-30", "0002-02-29 (BC)", "12100-02-29", "2024-01-01 24:00", "2024-01-01 10",
    "2024-01-01 00:00:00.0000000001", "20240101", "2024-W01-1", "2024-01-01 10:00 Europe/Paris",
    "44 BC", "",
])
def test_reader_rejects(text):
    with pytest.raises(ValueError):
        read_timestamp_text(text)


# ---------------------------------------------------------------------------- both paths

def _ints(values, unit):
    return [None if v is None else int(np.datetime64(v, unit).astype(np.int64)) for v in values]


TABLE = pa.table({
    "id": list(range(6)),
    "us": pa.array(_ints(["-0043-03-15T10:00:00", "-0043-03-15T10:00:00.000001",
                          "12345-06-07T08:09:10.123456", "2024-01-01T00:00:00", None,
                          "2024-01-01T00:00:00.000001"], "us"), pa.timestamp("us")),
    "ns": pa.array([1704067200 * 10**9 + k if k is not None else None
                    for k in (0, 1, 2, 999, None, 10**9)], pa.timestamp("ns", "UTC")),
    "d": pa.array(_ints(["-0043-03-15", "-0043-03-16", "12345-06-07", "2024-01-01", None,
                         "-12345-01-01"], "D"), pa.date32()),
    "s": pa.array(_ints(["2024-01-01T00:00:00", "2024-01-01T00:00:01", "2024-01-01T00:00:02",
                         None, "200000-01-01T00:00:00", "-0043-03-15T10:00:00"], "s"),
                  pa.timestamp("s")),
    "ms": pa.array(_ints(["2024-03-01T03:00:00", "2024-03-01T03:30:00.500", None,
                          "2024-03-01T04:00:00", "2024-03-01T03:30:00.499",
                          "2024-03-01T03:30:00.501"], "ms"), pa.timestamp("ms", "UTC")),
})
STATS = pe.stats_from_arrow(TABLE.append_column("cid", pc.cast(TABLE.column("id"), pa.string())),
                            container="cid")
UNIT = {"us": "us", "ns": "ns", "d": "D", "s": "s", "ms": "ms"}
PC = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
      ">=": pc.greater_equal}

#: column, op, SQL literal, the instant in UTC (numpy ISO). A zone written in the text counts
#: where the text is read as a zoned timestamp (a TIMESTAMPTZ literal, untyped text against a
#: zoned column); read as a zone-less timestamp or a date, the written wall time counts
#: (DuckDB, PostgreSQL and Spark drop the zone there)
CASES = [
    ("us", "=", "'2024-01-01 00:00:00+01:00'", "2024-01-01T00:00:00"),
    ("us", ">=", "TIMESTAMP '2024-01-01 00:00:00.000001-05:00'", "2024-01-01T00:00:00.000001"),
    ("s", "=", "CAST('2024-01-01 00:00:01+09:00' AS TIMESTAMP)", "2024-01-01T00:00:01"),
    ("s", "<", "'2024-01-01 00:00:02-01:00'", "2024-01-01T00:00:02"),
    ("ms", "=", "TIMESTAMP '2024-03-01 03:30:00.5+02:00'", "2024-03-01T03:30:00.5"),
    ("ms", "<=", "CAST('2024-03-01 03:30:00.499-11:00' AS TIMESTAMP)", "2024-03-01T03:30:00.499"),
    ("us", "=", "'0044-03-15 (BC) 10:00:00'", "-0043-03-15T10:00:00"),
    ("us", "<=", "TIMESTAMP '0044-03-15 (BC) 10:00:00.000001'", "-0043-03-15T10:00:00.000001"),
    ("us", ">", "TIMESTAMPTZ '0044-03-15 (BC) 11:00:00+01:00'", "-0043-03-15T10:00:00"),
    ("us", "=", "'12345-06-07 08:09:10.123456'", "12345-06-07T08:09:10.123456"),
    ("us", "<", "TIMESTAMPTZ '12345-06-07T03:39:10.123456-04:30'", "12345-06-07T08:09:10.123456"),
    ("us", ">=", "'2024-01-01T00:00:00.000001Z'", "2024-01-01T00:00:00.000001"),
    ("us", "!=", "'2024-01-01 00:00:00.000000000'", "2024-01-01T00:00:00"),
    ("ns", "=", "'2024-01-01 00:00:00.000000001'", "2024-01-01T00:00:00.000000001"),
    ("ns", ">", "TIMESTAMP_NS '2024-01-01 00:00:00.000000002'", "2024-01-01T00:00:00.000000002"),
    ("ns", "<", "'2024-01-01 01:00:00.000000999+01:00'", "2024-01-01T00:00:00.000000999"),
    ("ns", "!=", "'2024-01-01 00:00:00.000000999 UTC'", "2024-01-01T00:00:00.000000999"),
    ("ns", "<=", "TIMESTAMPTZ '2024-01-01 00:00:01+00:00'", "2024-01-01T00:00:01"),
    ("d", "=", "DATE '0044-03-15 (BC)'", "-0043-03-15"),
    ("d", "<", "'12345-06-07'", "12345-06-07"),
    ("d", ">", "'12346-01-01 (BC)'", "-12345-01-01"),
    ("d", "<=", "CAST('0044-03-16 (BC)' AS DATE)", "-0043-03-16"),
    ("s", ">=", "'200000-01-01 00:00:00'", "200000-01-01T00:00:00"),
    ("s", "<", "TIMESTAMP_S '0044-03-15 (BC) 10:00:01'", "-0043-03-15T10:00:01"),
    ("s", "=", "'2024-01-01 00:00:01Z'", "2024-01-01T00:00:01"),
    ("ms", "=", "TIMESTAMPTZ '2024-03-01 03:00:00.5-00:30'", "2024-03-01T03:30:00.5"),
    ("ms", ">", "'2024-03-01 05:00:00.499+01:30'", "2024-03-01T03:30:00.499"),
]
#: untyped text with a zone against a zone-less timestamp: its wall time (DuckDB 2, PostgreSQL,
#: Spark) or its instant (DuckDB 1.x for TIMESTAMP_NS): the pruning keeps both readings
EITHER_READING = {"us = '2024-01-01 00:00:00+01:00'", "s < '2024-01-01 00:00:02-01:00'"}
#: what DuckDB does not compare
DUCK_DIFFERS = {
    "ns > TIMESTAMP_NS '2024-01-01 00:00:00.000000002'": "TIMESTAMPTZ_NS with TIMESTAMP_NS",
    **({"ns <= TIMESTAMPTZ '2024-01-01 00:00:01+00:00'": "1.x: TIMESTAMP_NS with TIMESTAMPTZ"}
       if DUCKDB_MAJOR < 2 else {}),
}


def _oracle(col: str, op: str, iso: str) -> list[int]:
    k = int(np.datetime64(iso, UNIT[col]).astype(np.int64))
    values = TABLE.column(col).cast(pa.int32() if col == "d" else pa.int64())
    return TABLE.filter(pc.fill_null(PC[op](values, k), False)).column("id").to_pylist()


def _scan(where) -> list[int]:
    mask = RowFilter(to_expr(where), TABLE.schema).mask(TABLE)
    return TABLE.filter(mask).column("id").to_pylist()


def _pruned(where) -> list[int]:
    """The rows (one container each) ``pe.prune`` keeps."""
    return [int(c) for c, k in zip(STATS.column("container").to_pylist(),
                                   pe.prune(STATS, where).to_pylist()) if k]


@pytest.fixture(scope="module")
def duck():
    con = connect()
    load_table(con, "t", TABLE)
    yield con
    con.close()


@pytest.mark.parametrize("col, op, literal, iso", CASES,
                         ids=[f"{c[0]} {c[1]} {c[2]}" for c in CASES])
def test_both_paths_read_the_text_alike(col, op, literal, iso, duck):
    where = f"{col} {op} {literal}"
    expected = _oracle(col, op, iso)
    assert _scan(where) == expected, "the row filter"
    if where in EITHER_READING:
        assert set(expected) <= set(_pruned(where)), "pe.prune keeps both readings"
    else:
        assert _pruned(where) == expected, "pe.prune (one row per container: exact)"
    if where not in DUCK_DIFFERS:
        got = [r[0] for r in duck.execute(f"SELECT id FROM t WHERE {where} ORDER BY id").fetchall()]
        assert got == expected, "DuckDB"


def test_a_nanosecond_pyarrow_literal_keeps_its_nanoseconds():
    """A pyarrow expression's nanosecond scalar becomes timestamp text (the SQL front end's
    form); the row filter used to cut it to microseconds."""
    scalar = pa.scalar(1704067200 * 10**9 + 1, pa.timestamp("ns", "UTC"))
    for op, fn in (("=", pc.equal), ("<=", pc.less_equal), (">", pc.greater)):
        expected = TABLE.filter(pc.fill_null(fn(TABLE.column("ns"), scalar), False)) \
            .column("id").to_pylist()
        expr = fn(pc.field("ns"), scalar)
        assert _scan(expr) == expected == _pruned(expr), op


@pytest.mark.parametrize("where, match, either", [
    # beyond the unit's range: DuckDB fails; the pruning knows every value is below
    ("ns < '3000-01-01'", r"beyond the range of timestamp\[ns\]", [("ns", "<", "2262-04-11")]),
    ("ns = TIMESTAMP_NS '2300-01-01'", r"beyond the range of timestamp\[ns\]", []),
    # finer than the unit: DuckDB rounds TIMESTAMP_S, others truncate; the pruning keeps both
    ("s = TIMESTAMP_S '2024-01-01 00:00:00.7'", r"finer than timestamp\[s\]",
     [("s", "=", "2024-01-01T00:00:00"), ("s", "=", "2024-01-01T00:00:01")]),
    ("ms > '2024-03-01 03:30:00.4995'", r"finer than timestamp\[ms\]",
     [("ms", ">", "2024-03-01T03:30:00.499"), ("ms", ">", "2024-03-01T03:30:00.500")]),
    ("us <= '2024-01-01 00:00:00.0000001'", r"finer than timestamp\[us\]",
     [("us", "<=", "2024-01-01T00:00:00"), ("us", "<=", "2024-01-01T00:00:00.000001")]),
    ("d = '2024-01-01 10:00'", "is not a date", [("d", "=", "2024-01-01")]),
    # engines cast text to a date by its written date, the zone aside (DuckDB, Spark)
    ("d = CAST('2024-01-01 00:30+01:00' AS DATE)", "is not a date", [("d", "=", "2024-01-01")]),
    ("d = CAST('2024-01-01 23:30-01:00' AS DATE)", "is not a date", [("d", "=", "2024-01-01")]),
])
def test_text_the_row_filter_cannot_read_exactly(where, match, either):
    """The row filter refuses (before a wrong answer); the pruning keeps every row that any
    engine's reading of the text could keep."""
    with pytest.raises(pe.ScanError, match=match):
        _scan(where)
    kept = set(_pruned(where))
    for col, op, iso in either:
        assert set(_oracle(col, op, iso)) <= kept, (col, op, iso)


@pytest.mark.parametrize("where", ["us = '2024-01-01 10'", "ns > '2024-01-01 00:00:00.0000000001'",
                                   "d = '20240101'"])
def test_text_that_is_no_timestamp_is_rejected_by_both(where):
    with pytest.raises(pe.ScanError, match="is not a"):
        _scan(where)
    with pytest.raises(pe.TypeMismatchError):
        pe.prune(STATS, where)


# ------------------------------------------------------------- written zones, every reading

_WALL = [dt.datetime(2024, 1, 1, h, m) for h in (8, 9, 10, 11) for m in (0, 30)] + \
    [dt.datetime(2023, 12, 31, 23, 30), dt.datetime(2024, 1, 1, 0, 30)]
_DAYS = [dt.date(2023, 12, 31), dt.date(2024, 1, 1), dt.date(2024, 1, 2)]
ZONED = pa.table({
    "id": list(range(len(_WALL))),
    "naive_us": pa.array(_WALL, pa.timestamp("us")),
    "naive_ns": pa.array(_WALL, pa.timestamp("ns")),
    "naive_s": pa.array(_WALL, pa.timestamp("s")),
    "utc_us": pa.array(_WALL, pa.timestamp("us", "UTC")),
    "day": pa.array([_DAYS[i % 3] for i in range(len(_WALL))], pa.date32()),
})
ZONED_STATS = pe.stats_from_arrow(ZONED.append_column("cid", pc.cast(ZONED.column("id"), pa.string())),
                                  container="cid")
_ZONED_TEXT = ["'2024-01-01 10:00:00+01:00'", "'2024-01-01 09:30:00-01:00'", "'2024-01-01 00:30+01:00'",
               "'2024-01-02 00:30:00+02:00'", "'2024-01-01 23:30:00-01:00'", "'2024-01-01 10:00:00'"]
_FORMS = ["{}", "TIMESTAMP {}", "TIMESTAMPTZ {}", "CAST({} AS TIMESTAMP)", "CAST({} AS TIMESTAMPTZ)",
          "CAST({} AS DATE)"]


def test_written_zones_in_every_literal_form_against_every_column_type():
    """Timestamp text with a zone, untyped, typed and cast, against zone-less, zoned and date
    columns: the pruning keeps every row DuckDB matches, and the row filter gives DuckDB's rows
    (or refuses). DuckDB drops a zone where the text is read as a zone-less type; DuckDB 1.x
    reads untyped text against a TIMESTAMP_NS column as the instant (the pruning keeps both
    readings, the row filter reads the wall time, as DuckDB 2, PostgreSQL and Spark)."""
    con = connect()
    load_table(con, "z", ZONED)
    asked = 0
    try:
        for col in ZONED.column_names[1:]:
            for form in _FORMS:
                for text in _ZONED_TEXT:
                    for op in ("=", "!=", "<", "<=", ">", ">="):
                        where = f"{col} {op} {form.format(text)}"
                        try:
                            want = [r[0] for r in con.execute(
                                f"SELECT id FROM z WHERE {where} ORDER BY id").fetchall()]
                        except duckdb.Error:
                            continue  # DuckDB compares no such pair
                        asked += 1
                        kept = pe.prune(ZONED_STATS, where).to_pylist()
                        assert all(kept[i] for i in want), f"{where}: DuckDB matches {want}"
                        if DUCKDB_MAJOR < 2 and col == "naive_ns" and form == "{}":
                            continue  # DuckDB 1.x reads the instant (see the doc above)
                        try:
                            mask = RowFilter(to_expr(where), ZONED.schema).mask(ZONED)
                        except pe.ScanError:
                            continue
                        assert ZONED.filter(mask).column("id").to_pylist() == want, where
    finally:
        con.close()
    assert asked > 800, asked  # DuckDB 2 answers 1,414, DuckDB 1.x 836
