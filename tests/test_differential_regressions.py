"""Regressions found by the differential soundness test, as exact one-container statistics.

Each case is the minimal reproduction the sweep printed: a hand-built statistics row, a
predicate, and the truth from the rows (checked here with DuckDB on the same rows, so the
expected answer is not an opinion). Every container below holds a matching row, so it must be
kept; and ``pe.prune`` must never let a third-party exception escape.
"""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

import prune_engine as pe


def one_container(name: str, typ: pa.DataType, rows: list) -> tuple[pa.Table, pa.Table]:
    """Exact statistics of one container holding ``rows`` of column ``name``, and the rows."""
    data = pa.table({name: pa.array(rows, typ)})
    present = [v for v in rows if v is not None]
    struct = pa.struct([(name, typ)])
    stats = pa.table({
        "container": ["c0"],
        "num_records": pa.array([len(rows)], pa.int64()),
        "min_values": pa.array([{name: min(present) if present else None}], struct),
        "max_values": pa.array([{name: max(present) if present else None}], struct),
        "null_count": pa.array([{name: len(rows) - len(present)}], pa.struct([(name, pa.int64())])),
    })
    return stats, data


def duck_matches(data: pa.Table, duck_sql: str) -> bool:
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.register("t", data)
    return con.execute(f"SELECT count(*) FROM t WHERE {duck_sql}").fetchone()[0] > 0


D38 = pa.decimal128(38, 10)

# (id, column, type, rows, prune_engine SQL, DuckDB SQL or None when the same)
UNSOUND = [
    # binary literals '\x..'::BLOB must be decoded (DuckDB reads \xNN as one byte)
    ("blob-literal-eq", "bin", pa.binary(), [b"ab"], "bin = '\\x61\\x62'::BLOB", None),
    ("blob-literal-le", "bin", pa.binary(), [b"ab"], "bin <= '\\x61\\x62'::BLOB", None),
    ("blob-literal-ff", "bin", pa.binary(), [b"\xff\xff"], "'\\xff\\xff'::BLOB = bin", None),
    ("blob-literal-in", "bin", pa.binary(), [b"\xff"], "bin IN (''::BLOB, '\\xff'::BLOB)", None),
    # 38-digit decimals: literals and bounds must not be rounded to 28 significant digits
    ("decimal38-eq", "d", D38, [Decimal("99999999999999999999999999.9999999998")],
     "d = 99999999999999999999999999.9999999998", None),
    ("decimal38-between", "d", D38, [Decimal("99999999999999999999999999.9999999998")],
     "d BETWEEN 99999999999999999999999999.9999999997 AND 99999999999999999999999999.9999999998", None),
    ("decimal38-lt-finer-literal", "d", D38, [Decimal("-91814434765118041620205815.9477519071")],
     "d < -91814434765118041620205815.94775190705", None),
    ("decimal38-ge-max", "d", D38, [Decimal("99999999999999999999999999.9999999999")],
     "99999999999999999999999999.9999999999 <= d", None),
    # integer arithmetic is exact (as DuckDB computes it without overflow), not wrapped or rounded
    ("i64-add-near-min", "i", pa.int64(), [-(2**63)], "i + -3 < -9223372036854775810",
     "CAST(i AS HUGEINT) + -3 < -9223372036854775810"),
    ("u64-add-beyond-u64", "u", pa.uint64(), [3, 5, 6], "u + 18446744073709551615 >= 18446744073709551619",
     "CAST(u AS HUGEINT) + 18446744073709551615 >= 18446744073709551619"),
    ("u64-times-negative", "u", pa.uint64(), [39, 18319541594168148646],
     "-1000 * u <= -9223372036854775815000", "-1000 * CAST(u AS HUGEINT) <= -9223372036854775815000"),
    ("i64-minus-int64-min", "i", pa.int64(), [2**63 - 1], "i - -9223372036854775808 >= 9223372036854775813",
     "CAST(i AS HUGEINT) - -9223372036854775808 >= 9223372036854775813"),
    # a DOUBLE among the operands makes DuckDB (and Spark) compare everything as DOUBLE
    ("double-in-list-coerces-int64", "i", pa.int64(), [7246393565535786212],
     "i IN (7246393565535786211, CAST('-16.0' AS DOUBLE))", None),
    ("double-bound-coerces-decimal", "d", pa.decimal128(18, 4), [Decimal("-2361793096981.1590")],
     "d BETWEEN -2361793096981.15895 AND CAST('0.0783' AS DOUBLE)", None),
]


@pytest.mark.parametrize("name,typ,rows,sql,duck_sql", [c[1:] for c in UNSOUND], ids=[c[0] for c in UNSOUND])
def test_container_with_a_matching_row_is_kept(name, typ, rows, sql, duck_sql):
    stats, data = one_container(name, typ, rows)
    assert duck_matches(data, duck_sql or sql), "the oracle must see a matching row"
    assert pe.prune(stats, sql).to_pylist() == [True], f"unsound: a row of {rows} matches {sql}"


# predicates DuckDB runs; prune_engine may refuse them, but only with its own error
# (id, column, type, rows, SQL, whether a row matches)
NO_THIRD_PARTY = [
    ("decimal38-literal-at-type-limit", "d", D38, [Decimal("-91814434765118041620205815.9477519071")],
     "d = 9999999999999999999999999999.9999999999", False),
    ("int64-arith-constant-beyond-int64", "i", pa.int64(), [-5, 5],
     "i + 9223372036854775824 != 9223372036854775807", True),
    ("uint64-in-list-above-int64", "u", pa.uint64(), [3, 13002992876341832764],
     "u IN (13002992876341832764)", True),
]


@pytest.mark.parametrize("name,typ,rows,sql,matches", [c[1:] for c in NO_THIRD_PARTY],
                         ids=[c[0] for c in NO_THIRD_PARTY])
def test_only_prune_engine_errors_escape(name, typ, rows, sql, matches):
    stats, _ = one_container(name, typ, rows)
    try:
        mask = pe.prune(stats, sql)
    except pe.PruneEngineError:
        return
    assert isinstance(mask, pa.BooleanArray) and len(mask) == 1 and mask.null_count == 0
    if matches:
        assert mask.to_pylist() == [True], f"a row of {rows} matches {sql}"
