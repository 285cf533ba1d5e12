"""SQL that the peers' own pruning tests write (issue #8), over statistics of real rows.

The cases follow DataFusion's row-group pruning tests (binary and fixed-size binary columns
compared with ``X'..'`` and ``CAST('..' AS BLOB)``, decimals against ``CAST(8 AS
DECIMAL(6,2))``) and PyIceberg's ``InclusiveMetricsEvaluator`` tests (``isnan`` / ``NOT
isnan`` against all-NaN, some-NaN, no-NaN, all-NULL columns and unknown NaN counts). Each
expected mask is checked twice: against the engine, and for soundness against DuckDB
evaluating the same SQL on the rows.
"""

from __future__ import annotations

import math
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

import prune_engine as pe
from tests.oracle.duck import load_table, portable_sql
from tests.oracle.stats import blank

NAN = math.nan
SERVICES = [[b"frontend one", b"frontend two"], [b"backend one", b"backend two"], [b"frontend six", None]]
ROWS = {
    "cid": ["c0", "c0", "c1", "c1", "c2", "c2"],
    "service_binary": pa.array([v for group in SERVICES for v in group], pa.binary()),
    "service_fixed": pa.array([b"fe01", b"fe02", b"be01", b"be02", b"fe06", None], pa.binary(4)),
    "price": pa.array([Decimal(v) for v in ("1.00", "2.50", "8.00", "9.99", "100.00", "5.00")],
                      pa.decimal128(6, 2)),
    "all_nans": [NAN] * 6,
    "some_nans": [1.0, NAN, 2.0, 3.0, NAN, None],
    "no_nans": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "all_nulls": pa.array([None] * 6, pa.float64()),
}
TABLE = pa.table(ROWS)
STATS = pe.stats_from_arrow(TABLE, container="cid")
# the same statistics without NaN counts (a source that does not record them)
NO_NAN_COUNTS = pe.StatsTable(STATS.to_arrow().drop_columns(["nan_count"]))

CASES = [
    # DataFusion: binary columns against hex and cast literals
    ("service_binary = X'6261636b656e64206f6e65'", [False, True, False], "b'backend one' is in the second only"),
    ("service_binary = CAST('backend one' AS BLOB)", [False, True, False], "CAST('..' AS BLOB) is its UTF-8"),
    ("service_binary = CAST('backend one' AS BINARY)", [False, True, False], "BINARY is BLOB"),
    ("service_binary IN (X'66726f6e74656e64206f6e65', X'7a')", [True, False, False], "b'frontend one'"),
    ("service_binary < X'6261636b656e64206f6e66'", [False, True, False], "below b'backend onf'"),
    ("service_binary NOT IN (X'66726f6e74656e64207369', X'00')", [True, True, True], "other values remain"),
    ("service_binary > X''", [True, True, True], "every value is above the empty bytes"),
    # fixed-size binary compares by bytes with literals of any length
    ("service_fixed = X'62653031'", [False, True, False], "b'be01'"),
    ("service_fixed > X'6665'", [True, False, True], "above b'fe' (a prefix of the first and third)"),
    ("service_fixed = X'626530'", [False, False, False], "3 bytes never equal 4"),
    ("service_fixed = CAST('fe06' AS BLOB)", [False, False, True], "b'fe06'"),
    # DataFusion: decimal columns against decimal casts
    ("price = CAST(8 AS DECIMAL(6,2))", [False, True, True], "8.00 in [8.00, 9.99] and in [5.00, 100.00]"),
    ("price > CAST(99.99 AS DECIMAL(6,2))", [False, False, True], "100.00"),
    ("price < 5", [True, False, False], "the third holds 5.00 and 100.00"),
    ("price IN (CAST(2.5 AS DECIMAL(4,1)), 9.99)", [True, True, True], "2.5 = 2.50; 9.99 in the others"),
    ("price IN (CAST(2.5 AS DECIMAL(4,1)), 3)", [True, False, False], "neither in [8, 9.99] nor [5, 100]"),
    ("price = 2.505", [False, False, False], "between two cents"),
    # PyIceberg: isnan and NOT isnan
    ("isnan(all_nans)", [True, True, True], "every value is NaN"),
    ("NOT isnan(all_nans)", [False, False, False], "no value is not NaN"),
    ("isnan(some_nans)", [True, False, True], "NaN in the first and third"),
    ("NOT isnan(some_nans)", [True, True, False], "the third holds NaN and NULL only"),
    ("isnan(no_nans)", [False, False, False], "nan_count is 0 everywhere"),
    ("NOT isnan(no_nans)", [True, True, True], "regular values everywhere"),
    ("isnan(all_nulls)", [False, False, False], "isnan(NULL) is NULL"),
    ("NOT isnan(all_nulls)", [False, False, False], "NOT isnan(NULL) is NULL"),
    ("all_nans IS NAN", [True, True, True], "the IS NAN spelling"),
    ("no_nans IS NOT NAN AND no_nans > 5", [False, False, True], "6.0 in the third"),
]


def duck_matches(sql: str) -> list[bool]:
    con = duckdb.connect()
    load_table(con, "t", TABLE)
    duck_sql = sql.replace(" IS NOT NAN", " IS NOT NULL AND NOT isnan(no_nans)").replace("all_nans IS NAN", "isnan(all_nans)")
    rows = dict(con.execute(f"SELECT cid, count(*) FILTER (WHERE {portable_sql(duck_sql)}) FROM t GROUP BY cid")
                .fetchall())
    return [rows[c] > 0 for c in ("c0", "c1", "c2")]


@pytest.mark.parametrize("sql, expected, why", CASES, ids=[c[0] for c in CASES])
def test_peer_case(sql, expected, why):
    check_case(STATS, sql, expected, why)


def check_case(stats, sql: str, expected: list[bool], why: str) -> None:
    """The expected mask keeps every container DuckDB finds a match in, and pe.prune gives it."""
    truth = duck_matches(sql)
    assert all(k or not t for k, t in zip(expected, truth)), f"expected mask is unsound: DuckDB finds {truth}"
    assert pe.prune(stats, sql).to_pylist() == expected, why


def test_without_nan_counts_isnan_keeps():
    """PyIceberg keeps a file whose NaN count is unknown; so do we (NaN may be present)."""
    assert pe.prune(NO_NAN_COUNTS, "isnan(no_nans)").to_pylist() == [True, True, True]
    assert pe.prune(NO_NAN_COUNTS, "NOT isnan(all_nans)").to_pylist() == [True, True, True]


# the same statistics with every null count unknown: what the other counts imply still prunes
NO_NULL_COUNTS = pe.StatsTable(blank(STATS.to_arrow(), "null_count"))
IMPLIED = [
    ("NOT isnan(all_nans)", [False, False, False], "NaNs fill every container: no other value"),
    ("all_nans IS NULL", [False, False, False], "NaNs fill every container: no NULL"),
    ("all_nans < 0 OR all_nans IN (1, 2)", [False, False, False], "no ordinary value to compare"),
    ("all_nans >= 0", [True, True, True], "NaN sorts above every number"),
    ("isnan(all_nans)", [True, True, True], "every value is NaN"),
    ("all_nans IS NOT NULL", [True, True, True], "NaN is not NULL"),
    ("NOT isnan(some_nans)", [True, True, True], "the third may hold an ordinary value"),
    ("some_nans IS NULL", [True, True, True], "a NULL may hide in any of them"),
]


@pytest.mark.parametrize("sql, expected, why", IMPLIED, ids=[c[0] for c in IMPLIED])
def test_counts_imply_the_missing_null_count(sql, expected, why):
    """nulls + NaNs <= records: ``nan_count == num_records`` proves that a container holds no
    NULL and no ordinary value, with the null count unknown (PyIceberg's ``test_not_nan``)."""
    check_case(NO_NULL_COUNTS, sql, expected, why)
