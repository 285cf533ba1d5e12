"""The row filter's SQL semantics where pyarrow's differ, and its refusals.

Each case: a predicate, the rows it must keep (by id). The expected sets are what DuckDB keeps
on the same rows (checked here too), except where noted."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import prune_engine as pe
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.rows import RowFilter
from tests.oracle.duck import connect, load_table

NAN, INF = float("nan"), float("inf")
TABLE = pa.table({
    "id": pa.array([0, 1, 2, 3, 4, 5], pa.int64()),
    "f": pa.array([NAN, -0.0, 0.0, INF, None, 1.5]),
    "i": pa.array([1, 2, 3, None, 5, -1], pa.int32()),
    "u": pa.array([0, 1, 2, 3, 4, 2**64 - 1], pa.uint64()),
    "d": pa.array([decimal.Decimal("1.10"), None, decimal.Decimal("2.50"),
                   decimal.Decimal("-3.00"), decimal.Decimal("0.00"),
                   decimal.Decimal("9.99")], pa.decimal128(5, 2)),
    "s": pa.array(["ab", "a%b", "A\nb", None, "é", ""]),
    "b": pa.array([True, False, None, True, None, False]),
    "ts": pa.array([dt.datetime(2024, 3, 1, h) for h in range(6)], pa.timestamp("ms", "UTC")),
    "naive": pa.array([dt.datetime(2024, 3, 1, h) for h in range(6)], pa.timestamp("us")),
    "day": pa.array([dt.date(2024, 3, d) for d in range(1, 7)], pa.date32()),
})

CASES = [
    ("f = CAST('NaN' AS DOUBLE)", [0]),  # NaN = NaN (IEEE: false)
    ("f > CAST('Infinity' AS DOUBLE)", [0]),  # NaN above +inf
    ("f >= 1e308", [0, 3, ]),
    ("f < CAST('NaN' AS DOUBLE)", [1, 2, 3, 5]),
    ("f != CAST('NaN' AS DOUBLE)", [1, 2, 3, 5]),
    ("f = 0.0", [1, 2]),  # -0.0 = 0.0
    ("f = -0.0", [1, 2]),
    ("f IN (CAST('NaN' AS DOUBLE), 0.0)", [0, 1, 2]),
    ("f IN (1.5, NULL)", [5]),
    ("NOT (f IN (1.5, NULL))", []),  # NULL unless found
    ("f NOT IN (0.0)", [0, 3, 5]),
    ("f IS NOT DISTINCT FROM CAST('NaN' AS DOUBLE)", [0]),
    ("f IS DISTINCT FROM NULL", [0, 1, 2, 3, 5]),
    ("i = 2.5", []),  # an integer never equals a fraction
    ("i > 2.5", [2, 4]),
    ("i <= 2.5", [0, 1, 5]),
    ("i != 2.5", [0, 1, 2, 4, 5]),
    ("u > -1", [0, 1, 2, 3, 4, 5]),
    ("u = 18446744073709551615", [5]),
    ("d > 2.5", [5]),
    ("d = 2.5", [2]),
    ("d < 1", [3, 4]),
    ("d > 1.05e0", [0, 2, 5]),  # DECIMAL against DOUBLE compares as DOUBLE
    ("s LIKE 'a%'", [0, 1]),
    ("s LIKE 'a\\%b' ESCAPE '\\'", [1]),
    ("s LIKE 'A_b'", [2]),  # _ matches a newline
    ("s LIKE '_'", [4]),  # one character, two bytes
    ("s ILIKE 'a%'", [0, 1, 2]),
    ("s NOT LIKE 'a%'", [2, 4, 5]),
    ("s LIKE ''", [5]),
    ("regexp_matches(s, 'b$')", [0, 1, 2]),
    ("s < 'b'", [0, 1, 2, 5]),
    ("s > 'z'", [4]),  # UTF-8 bytes: é after z
    ("b", [0, 3]),
    ("NOT b", [1, 5]),
    ("b IS NOT TRUE", [1, 2, 4, 5]),
    ("b IS FALSE", [1, 5]),
    ("b = FALSE OR i > 4", [1, 4, 5]),
    ("NOT (i > 1 AND b)", [0, 1, 5]),
    ("i + 1 > 3", [2, 4]),
    ("-i > 0", [5]),
    ("i * 2 = 10", [4]),
    ("CAST(i AS BIGINT) = 3", [2]),
    ("ts >= TIMESTAMP '2024-03-01 03:00:00'", [3, 4, 5]),  # naive literal: UTC
    ("ts >= TIMESTAMPTZ '2024-03-01 03:00:00+01:00'", [2, 3, 4, 5]),
    ("naive < TIMESTAMP '2024-03-01 02:00:00'", [0, 1]),
    ("ts = naive", [0, 1, 2, 3, 4, 5]),
    ("day = DATE '2024-03-04'", [3]),
    ("day >= '2024-03-05'", [4, 5]),
    ("day <= ts", [0]),  # a date is its midnight
    ("ts >= '2024-03-01 03:00:00.000000000'", [3, 4, 5]),  # nanosecond digits on the ms grid
    ("naive >= TIMESTAMPTZ '2024-03-01 04:00:00+02:00'", [2, 3, 4, 5]),
    ("day = '2024-3-4'", [3]),
    ("day > DATE '0044-03-15 (BC)'", [0, 1, 2, 3, 4, 5]),
    ("id BETWEEN 2 AND 3", [2, 3]),
    ("NULL", []),
    ("TRUE", [0, 1, 2, 3, 4, 5]),
]


def _ids(where: str) -> list[int]:
    mask = RowFilter(to_expr(where), TABLE.schema).mask(TABLE.to_batches()[0])
    return TABLE.filter(mask).column("id").to_pylist()


@pytest.mark.parametrize("where, expected", CASES, ids=[c[0] for c in CASES])
def test_sql_semantics(where, expected):
    assert _ids(where) == expected, f"{where} should keep {expected}"


DUCK_DIFFERS = {
    "ts = naive",  # DuckDB casts TIMESTAMP to TIMESTAMPTZ in the session zone; here UTC
    "regexp_matches(s, 'b$')",  # same RE2; kept out only because DuckDB names it so
}


@pytest.mark.parametrize("where, expected", [c for c in CASES if c[0] not in DUCK_DIFFERS],
                         ids=[c[0] for c in CASES if c[0] not in DUCK_DIFFERS])
def test_cases_agree_with_duckdb(where, expected):
    con = connect()
    load_table(con, "t", TABLE)
    got = [r[0] for r in con.execute(f"SELECT id FROM t WHERE {where} ORDER BY id").fetchall()]
    assert got == expected, f"DuckDB keeps {got} for {where}"


def test_builder_and_pyarrow_expressions_mean_the_same():
    assert _ids(pe.col("f") > 1.0) == _ids("f > 1.0")
    assert RowFilter(to_expr(pc.field("i") > 2), TABLE.schema).mask(TABLE).to_pylist() == \
        [False, False, True, False, True, False]


@pytest.mark.parametrize("where, error, match", [
    ("lower(s) = 'ab'", pe.ScanError, "cannot evaluate lower"),
    ("CAST(f AS INTEGER) = 1", pe.ScanError, "engines disagree"),
    ("CAST(s AS DATE) = DATE '2024-01-01'", pe.ScanError, "engines disagree"),
    ("i = 'x'", pe.TypeMismatchError, "cannot compare int32"),
    ("i", pe.TypeMismatchError, "not a boolean"),
    ("nope > 1", pe.ColumnPathError, "unknown column path 'nope'"),
    ("i LIKE 'a%'", pe.TypeMismatchError, "need a string column"),
    # DuckDB rounds TIMESTAMP_S text, Spark truncates: no exact answer
    ("naive = TIMESTAMP_S '2024-03-01 00:00:00.5'", pe.ScanError, r"finer than timestamp\[s\]"),
    ("ts > '2024-03-01 00:00:00.0005'", pe.ScanError, r"finer than timestamp\[ms\]"),
    ("naive < TIMESTAMP_NS '2300-01-01'", pe.ScanError, r"beyond the range of timestamp\[ns\]"),
    ("day = '2024-03-04 10:00'", pe.ScanError, "is not a date"),
])
def test_what_the_filter_cannot_evaluate_is_an_error(where, error, match):
    with pytest.raises(error, match=match):
        RowFilter(to_expr(where), TABLE.schema).mask(TABLE)


def test_overflow_is_an_error_not_a_wrap_around():
    with pytest.raises(pe.ScanError, match="overflow"):
        _ids("i * 9223372036854775807 > 0")


NESTED = pa.table({
    "id": [0, 1, 2, 3],
    "orders": pa.array([[{"p": 5, "q": 1}, {"p": 50, "q": 9}], [], None, [None, {"p": 7, "q": 7}]]),
    "tags": pa.array([["a", None], None, [], ["b"]]),
    "other": pa.array([[{"z": 1}], [], None, []]),
})


@pytest.mark.parametrize("where, expected", [
    ("orders.p > 10", [0]),  # some element
    ("NOT (orders.p > 10)", [0, 3]),  # some element <= 10 (NOT pushed down first)
    ("(NOT (orders.p > 10)) IS TRUE", [0, 3]),  # also inside IS TRUE
    ("NOT ((orders.p > 10) IS NOT TRUE)", [0]),
    ("orders.p > 10 AND orders.q < 5", [0]),  # two different elements may meet the two
    ("orders.p = orders.q", [3]),  # the same element
    ("orders.p IS NULL", [3]),  # a null element has a null field
    ("orders.p > id", [0, 3]),  # row columns meet every element of their row
    ("array_contains(tags, 'a')", [0]),
    ("NOT array_contains(tags, 'a')", [2, 3]),  # DuckDB's list_contains: NULL for a NULL list
    ("array_contains(orders.p, 7)", [3]),
    ("tags IS NULL", [1]),
])
def test_element_predicates_are_existential(where, expected):
    mask = RowFilter(to_expr(where), NESTED.schema).mask(NESTED)
    assert NESTED.filter(mask).column("id").to_pylist() == expected, where


@pytest.mark.parametrize("where, match", [
    ("orders.p = other.z", "elements of different lists"),
    ("tags = 'a'", "is a list"),
    ("orders > 1", "is a list"),
    ("array_contains(id, 1)", "needs a list"),
])
def test_element_errors(where, match):
    with pytest.raises(pe.PruneEngineError, match=match):
        RowFilter(to_expr(where), NESTED.schema)
