"""Masks of every rule on hand-built statistics; each assertion says why."""

import datetime as dt
import decimal
import math

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.stats import layout
from tests.statsbuild import make_stats

# three containers: x in [0, 4], [6, 9] (one null), all NULL (10 of 10)
X = make_stats(x=[(0, 4, 0), (6, 9, 1), (None, None, 10)], num_records=[10, 10, 10])


def keep(stats, expr):
    return pe.prune(stats, expr).to_pylist()


@pytest.mark.parametrize("expr, expected, why", [
    ("x = 5", [False, False, False], "5 lies in neither range; all-NULL matches nothing"),
    ("x = 4", [True, False, False], "4 = max of the first"),
    ("5 = x", [False, False, False], "literal on the left"),
    ("x != 4", [True, True, False], "[0,4] holds other values"),
    ("x <> 4", [True, True, False], "<> is !="),
    ("x < 6", [True, False, False], "min 6 is not < 6"),
    ("x <= 6", [True, True, False], "min 6 <= 6"),
    ("x > 4", [False, True, False], "max 4 is not > 4"),
    ("x >= 4", [True, True, False], "max 4 >= 4"),
    ("6 > x", [True, False, False], "flipped: x < 6"),
    ("x BETWEEN 5 AND 5", [False, False, False], "between the ranges"),
    ("x NOT BETWEEN 0 AND 9", [False, False, False], "both ranges inside [0, 9]"),
    ("x NOT BETWEEN 1 AND 9", [True, False, False], "0 < 1"),
    ("x IS NULL", [False, True, True], "null counts 0, 1, 10"),
    ("x IS NOT NULL", [True, True, False], "all-NULL has no value"),
    ("NOT (x < 5)", [False, True, False], "NOT (x < 5) is x >= 5"),
    ("x IN (5, 10)", [False, False, False], "no member in a range"),
    ("x IN (5, 7)", [False, True, False], "7 in [6, 9]"),
    ("x IN (NULL, 3)", [True, False, False], "NULL in IN never matches; 3 does"),
    ("x NOT IN (1, 2)", [True, True, False], "ranges hold other values"),
    ("x NOT IN (1, NULL)", [False, False, False], "NOT IN with a NULL is never TRUE"),
    ("x IS DISTINCT FROM 5", [True, True, True], "NULL is distinct from 5"),
    ("x IS NOT DISTINCT FROM 5", [False, False, False], "5 is in no range, NULL is not 5"),
    ("x IS NOT DISTINCT FROM NULL", [False, True, True], "= IS NULL"),
    ("x = NULL", [False, False, False], "= NULL is NULL"),
    ("x > 1 + 2", [True, True, False], "folded: x > 3"),
    ("x = 2.5", [False, False, False], "an integer column never equals 2.5"),
    ("x > 4.5", [False, True, False], "x > 4.5 is x >= 5"),
    ("x < 0.5", [True, False, False], "x < 0.5 is x <= 0"),
    ("x > 1e300", [False, False, False], "above every int64"),
    ("x < CAST('NaN' AS DOUBLE)", [True, True, False], "NaN sorts above every number"),
    ("abs(x) > 100", [True, True, True], "unknown function keeps"),
    ("NOT abs(x) > 100", [True, True, True], "unknown under NOT keeps"),
    ("x + 1 > 9", [False, True, False], "max + 1 = 10 > 9"),
    ("x - 1 < 0", [True, False, False], "min - 1 = -1 < 0"),
    ("2 * x >= 18", [False, True, False], "2 * 9 = 18"),
    ("-x > -1", [True, False, False], "-x in [-4, 0]"),
    ("10 - x < 2", [False, True, False], "10 - x in [1, 4] for the second"),
    ("CAST(x AS DOUBLE) > 4.5", [False, True, False], "order-preserving cast"),
    ("CAST(x AS VARCHAR) = '5'", [True, True, True], "number to string does not preserve order"),
    ("1 = 1", [True, True, True], "TRUE"),
    ("1 = 0 OR x = 100", [False, False, False], "FALSE OR ..."),
    ("NULL AND x > 1", [False, False, False], "NULL AND ... is never TRUE"),
    ("(x > 1) IS NOT TRUE", [True, True, True], "x <= 1, or NULL"),
    ("(x > 5) IS TRUE", [False, True, False], "x > 5"),
    ("(x > 5) IS FALSE", [True, False, False], "x <= 5"),
])
def test_integer_rules(expr, expected, why):
    assert keep(X, expr) == expected, why


def test_unknown_statistics_keep():
    t = make_stats(x=[(None, 4, 0), (6, None, None), None], num_records=[10, None, 10])
    assert keep(t, "x > 5") == [False, True, True], "min unknown still has max 4; others unknown"
    assert keep(t, "x < 5") == [True, False, True], "min 6 proves the second; third unknown"
    assert keep(t, "x IS NULL") == [False, True, True], "null_count unknown keeps"


def test_a_null_stats_struct_means_every_field_unknown():
    # the children under a null struct hold values (here 0 and 1): they must not be read
    inner = pa.StructArray.from_arrays([pa.array([0, 0])], names=["x"], mask=pa.array([False, True]))
    hi = pa.StructArray.from_arrays([pa.array([1, 1])], names=["x"], mask=pa.array([False, True]))
    nulls = pa.StructArray.from_arrays([pa.array([0, 0])], names=["x"])
    t = pa.table({"container": ["a", "b"], "num_records": [5, 5], "min_values": inner,
                  "max_values": hi, "null_count": nulls})
    assert keep(t, "x > 3") == [False, True], "the second's min/max are unknown"


def test_empty_containers_match_nothing_not_even_unknown():
    t = make_stats(x=[(None, None, 0), (1, 2, 0)], num_records=[0, 5])
    assert keep(t, "x IS NULL") == [False, False]
    assert keep(t, "abs(x) = 1") == [False, True], "unknown keeps, but not an empty container"


def test_all_null_matches_only_is_null():
    t = make_stats(x=[(None, None, 7)], num_records=[7])
    assert keep(t, "x IS NULL") == [True]
    for e in ("x = 1", "x != 1", "x IN (1)", "x NOT IN (1)", "x > 0", "x IS NOT NULL"):
        assert keep(t, e) == [False], e


FLOATS = make_stats(
    f=[(0.0, 1.0, 0), (-0.0, 0.0, 0), (None, None, 0), (2.0, 3.0, 0), (-math.inf, math.inf, 0)],
    num_records=[5, 5, 5, 5, 5],
    nan_count={"f": [0, 0, 5, None, 0]},
)


@pytest.mark.parametrize("expr, expected, why", [
    ("f = 0", [True, True, False, False, True], "-0.0 = 0.0; the third is all NaN"),
    ("f = -0.0", [True, True, False, False, True], "-0.0 = 0.0"),
    ("f > 5", [False, False, True, True, True], "NaN > 5; nan_count unknown on the 4th"),
    ("f < 5", [True, True, False, True, True], "NaN is not < 5"),
    ("f = CAST('NaN' AS DOUBLE)", [False, False, True, True, False], "NaN = NaN"),
    ("f != CAST('NaN' AS DOUBLE)", [True, True, False, True, True], "only non-NaN values differ"),
    ("f >= CAST('NaN' AS DOUBLE)", [False, False, True, True, False], "only NaN >= NaN"),
    ("f < CAST('NaN' AS DOUBLE)", [True, True, False, True, True], "every regular value < NaN"),
    ("f != 0", [True, False, True, True, True], "[-0.0, 0.0] is all zeros"),
    ("f IN (0.5, 7)", [True, False, False, False, True], "0.5 in [0, 1]"),
    ("f IN (CAST('NaN' AS DOUBLE))", [False, False, True, True, False], "NaN IN (NaN)"),
    ("f > CAST('Infinity' AS DOUBLE)", [False, False, True, True, False], "only NaN is above +inf"),
])
def test_float_rules(expr, expected, why):
    assert keep(FLOATS, expr) == expected, why


@pytest.mark.parametrize("expr, expected, why", [
    ("isnan(f)", [False, False, True, True, False], "nan_count 0, 0, 5 of 5, unknown, 0"),
    ("f IS NAN", [False, False, True, True, False], "Oracle's spelling of isnan"),
    ("NOT isnan(f)", [True, True, False, True, True], "the third holds only NaN"),
    ("f IS NOT NAN", [True, True, False, True, True], "the third holds only NaN"),
    ("NOT (isnan(f) OR f > 2)", [True, True, False, True, True], "NOT pushed through isnan"),
])
def test_isnan(expr, expected, why):
    assert keep(FLOATS, expr) == expected, why


def test_isnan_of_a_type_without_nan():
    assert keep(X, "isnan(x)") == [False, False, False], "an integer is never NaN"
    assert keep(X, "NOT isnan(x)") == [True, True, False], "every value is regular; all-NULL matches nothing"
    strings = make_stats(s=[("a", "b", 0)])
    assert keep(strings, "isnan(s)") == [True], "Spark casts the text 'NaN' to a NaN: unknown"


def test_arithmetic_that_may_leave_its_type_keeps():
    # i64 at its minimum, an ordinary range, a range with an unknown min, one near the maximum
    t = make_stats(i=[(-(2**63), -(2**63), 0), (0, 10, 0), (None, 10, 0), (2**63 - 9, 2**63 - 1, 0)],
                   types={"i": pa.int64()})
    assert keep(t, "i - 1 < -9223372036854775807") == [True, False, True, False], \
        "-2**63 - 1 leaves int64; an unknown min may lie anywhere below 10"
    assert keep(t, "-i > 0") == [True, False, True, False], "-(-2**63) = 2**63 leaves int64"
    assert keep(t, "i + 2 < 0") == [True, False, True, True], "-2**63 + 2 < 0; 2**63 + 1 wraps to a negative"
    small = make_stats(b=[(0, 127, 0), (0, 100, 0)], types={"b": pa.int8()})
    assert keep(small, "b + 2 <= 0") == [True, False], "TINYINT + 2 is TINYINT in DuckDB: 129 wraps (or fails)"
    assert keep(small, "b + 1000 > 1127") == [False, False], "1000 needs SMALLINT: 127 + 1000 fits it"
    unsigned = make_stats(u=[(0, 5, 0), (3, 5, 0)], types={"u": pa.uint8()})
    assert keep(unsigned, "u - 2 > 200") == [True, False], "0 - 2 leaves UTINYINT (254 when it wraps)"


def test_casts_that_may_leave_the_target_type_keep():
    t = make_stats(i=[(-1, 5, 0), (0, 5, 0)], types={"i": pa.int32()})
    assert keep(t, "CAST(i AS UBIGINT) > 32768") == [True, False], "-1 as UBIGINT wraps to 2**64 - 1 (or fails)"
    assert keep(t, "CAST(i AS TINYINT) > 5") == [False, False], "[-1, 5] fits TINYINT"


def test_integers_against_float32_compare_as_float32():
    t = make_stats(i=[(2**24 + 1, 2**24 + 1, 0)], f=[(2.0**24, 2.0**24, 0)],
                   types={"i": pa.int32(), "f": pa.float32()}, nan_count={"f": [0]})
    assert keep(t, "i = f") == [True], "DuckDB and Spark compare INT with FLOAT as FLOAT: 2**24 + 1 rounds to 2**24"
    assert keep(t, "i = CAST(16777216 AS FLOAT)") == [True], "the same against a FLOAT literal"
    assert keep(t, "i = CAST(5 AS FLOAT)") == [False], "below 2**24 every integer is a FLOAT"


def test_double_literals_near_2_53_against_integers():
    t = make_stats(i=[(2**53 + 1, 2**53 + 1, 0)], types={"i": pa.int64()})
    assert keep(t, "i = 9007199254740992e0") == [True], "2**53 + 1 as a double is 2**53"
    assert keep(t, "i = 9007199254740993.0") == [True], "an exact decimal literal: exactly equal"
    assert keep(t, "i = 9007199254740992.0") == [False], "an exact decimal literal: one below"
    assert keep(t, "i < 9007199254740990e0") == [False], "far enough below to be exact"


def test_nan_bounds_are_unknown_and_float32_literals_are_fuzzy():
    t = make_stats(f=[(math.nan, 1.0, 0), (0.1, 0.1, 0)], types={"f": pa.float32()}, nan_count={"f": [0, 0]})
    assert keep(t, "f < -5") == [True, False], "a NaN min is unknown"
    # the float32 value nearest 0.1 is 0.100000001...; engines may compare in double or single
    assert keep(t, "f = 0.1") == [True, True]
    assert keep(t, "f <= 0.1") == [True, True]
    assert keep(t, "f < 0.1") == [True, False], "0.1f is above 0.1, and rounds to itself"


def test_unsigned_64_above_2_63():
    big = 2**63 + 10
    t = make_stats(u=[(big, 2**64 - 1, 0), (0, 5, 0)], types={"u": pa.uint64()})
    assert keep(t, f"u > {2**63}") == [True, False]
    assert keep(t, f"u = {big}") == [True, False]
    assert keep(t, "u < -1") == [False, False], "no unsigned value is negative"
    assert keep(t, "u >= -1") == [True, True]
    assert keep(t, f"u IN ({big}, 3)") == [True, True]
    assert keep(t, f"u > {2**64}") == [False, False]


def test_small_integers_fold_out_of_range_literals():
    t = make_stats(i=[(-128, 127, 0)], types={"i": pa.int8()})
    assert keep(t, "i > 1000") == [False]
    assert keep(t, "i < 1000") == [True]
    assert keep(t, "i != 1000") == [True]
    assert keep(t, "i + 1 > 127") == [True], "overflow of int8 bounds: unknown keeps"


@pytest.mark.parametrize("typ", [pa.decimal128(9, 2), pa.decimal128(38, 10), pa.decimal256(50, 4)])
def test_decimals(typ):
    d = decimal.Decimal
    t = make_stats(m=[(d("1.50"), d("2.25"), 0), (d("-3.00"), d("-1.00"), 0)], types={"m": typ})
    assert keep(t, "m = 1.5") == [True, False]
    assert keep(t, "m > 2.25") == [False, False]
    assert keep(t, "m >= 2.25") == [True, False]
    assert keep(t, "m < -2.999") == [False, True]
    assert keep(t, "m = 2.01") == [True, False]
    if typ.scale == 2:
        assert keep(t, "m = 1.505") == [False, False], "1.505 lies between two cents"
    assert keep(t, "m IN (2, -5)") == [True, False]


def test_dates_and_timestamps_with_zones():
    t = make_stats(
        d=[(dt.date(2024, 1, 1), dt.date(2024, 1, 31), 0), (dt.date(2024, 2, 1), dt.date(2024, 2, 29), 0)],
        ts=[(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc), 0),
            (dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 3, tzinfo=dt.timezone.utc), 0)],
        types={"ts": pa.timestamp("ms", "Europe/Paris")},
    )
    assert keep(t, "d = DATE '2024-02-10'") == [False, True]
    assert keep(t, "d > '2024-01-31'") == [False, True]
    assert keep(t, "d >= TIMESTAMP '2024-01-31 00:00:01'") == [False, True], "a date >= a later instant of its day"
    assert keep(t, "ts > TIMESTAMP '2024-01-01 12:00:00'") == [False, True], "naive literal read as UTC"
    assert keep(t, "ts > TIMESTAMPTZ '2024-01-01 13:00:00+02:00'") == [True, True], "11:00 UTC"
    assert keep(t, "ts = TIMESTAMP '2024-01-01 12:00:00.0005'") == [False, False], "between two milliseconds"
    assert keep(t, "ts = '2024-01-01 12:00:00.0005'") == [True, False], "text is cast to ms: 12:00:00.000 or .001"
    assert keep(t, "ts = TIMESTAMP_MS '2024-01-01 12:00:00.0005'") == [True, True], "finer than its type: unknown"
    assert keep(t, "CAST(d AS TIMESTAMP) >= TIMESTAMP '2024-02-29 12:00'") == [False, False], "midnight < noon"
    assert keep(t, "CAST(d AS TIMESTAMP) >= TIMESTAMP '2024-02-28 12:00'") == [False, True]


def test_strings_prefix_like_and_escape():
    t = make_stats(s=[("abc", "abd", 0), ("b", "c", 0), ("a_x", "a_z", 0), ("é", "ü", 0)])
    assert keep(t, "s LIKE 'ab%'") == [True, False, False, False]
    assert keep(t, "s LIKE 'abz%'") == [False, False, False, False]
    assert keep(t, "s LIKE 'a!_%' ESCAPE '!'") == [False, False, True, False], "escaped _ is a literal"
    assert keep(t, "s LIKE 'a_%'") == [True, False, True, False], "_ is any character"
    assert keep(t, "s LIKE 'c'") == [False, True, False, False], "no wildcard: equality"
    assert keep(t, "s LIKE '%c'") == [True, True, True, True], "no prefix: keep"
    assert keep(t, "s LIKE 'ö%'") == [False, False, False, True], "UTF-8 code point order"
    assert keep(t, "s NOT LIKE 'ab%'") == [False, True, True, True], "every value of [abc, abd] starts with ab"
    assert keep(t, "s ILIKE 'zz%'") == [True, True, True, True], "ILIKE keeps without an index"
    with pytest.raises(pe.PatternError):
        pe.prune(t, "s LIKE 'a!' ESCAPE '!'")


def test_truncated_string_bounds_stay_bounds():
    # true values 'abcdef'..'abcxyz' stored truncated: min 'abc', max 'abd' (incremented)
    t = make_stats(s=[("abc", "abd", 0)])
    assert keep(t, "s = 'abcxyz'") == [True]
    assert keep(t, "s LIKE 'abcd%'") == [True]
    assert keep(t, "s > 'abcz'") == [True]
    assert keep(t, "s > 'abd'") == [False]


def test_binary_and_bool():
    t = make_stats(bn=[(b"\x00", b"\x10", 0), (b"\xf0", b"\xff", 0)], b=[(False, False, 0), (False, True, 0)])
    assert keep(t, "bn > '\\x20'::BLOB") == [False, True]
    assert keep(t, "b") == [False, True]
    assert keep(t, "NOT b") == [True, True]
    assert keep(t, "b IS NOT FALSE") == [False, True]


def test_column_against_column():
    t = make_stats(a=[(0, 5, 0), (10, 20, 0)], b=[(6, 9, 0), (0, 30, 0)],
                   f=[(0.0, 1.0, 0), (0.0, 1.0, 0)], nan_count={"f": [0, 0]})
    assert keep(t, "a < b") == [True, True]
    assert keep(t, "a > b") == [False, True], "max a 5 <= min b 6"
    assert keep(t, "a = b") == [False, True], "ranges [0,5] and [6,9] do not overlap"
    assert keep(t, "a > f") == [True, True]
    assert keep(t, "a < f") == [True, False], "min a 10 > max f 1"


def test_nested_struct_leaves_and_list_elements():
    mn = pa.array([{"st": {"a": 1}, "tags": "b"}, {"st": {"a": 7}, "tags": "x"}],
                  pa.struct([("st", pa.struct([("a", pa.int64())])), layout.element_field("tags", pa.string())]))
    mx = pa.array([{"st": {"a": 3}, "tags": "d"}, {"st": {"a": 9}, "tags": "z"}], mn.type)
    nc = pa.array([{"st": {"a": 0}, "tags": 0}] * 2,
                  pa.struct([("st", pa.struct([("a", pa.int64())])), ("tags", pa.int64())]))
    t = pa.table({"container": ["p", "q"], "num_records": [3, 3], "min_values": mn, "max_values": mx, "null_count": nc})
    assert keep(t, "st.a > 5") == [False, True]
    assert keep(t, "array_contains(tags, 'c')") == [True, False]
    assert keep(t, "NOT array_contains(tags, 'c')") == [True, True], "NOT of element membership: unknown"
    with pytest.raises(pe.TypeMismatchError, match="array_contains"):
        pe.prune(t, "tags = 'c'")


def test_in_list_of_thousands_is_a_set_test():
    t = make_stats(x=[(0, 4, 0), (6, 9, 0), (10_000, 20_000, 0)])
    values = ", ".join(str(v) for v in range(7, 10_000, 10))  # 7, 17, ..., 9997
    assert keep(t, f"x IN ({values})") == [False, True, False]
    plan = pe.compile(f"x IN ({values})", t.schema)
    assert type(plan.check).__name__ == "InSet"


def test_chunked_statistics_columns():
    t = pa.concat_tables([X.slice(0, 1), X.slice(1, 2)])
    assert t.column("min_values").num_chunks == 2
    assert keep(t, "x > 5") == keep(X, "x > 5")


def test_plan_reuse_and_explain():
    plan = pe.compile("x > 5 AND x IS NOT NULL", X.schema)
    st = pe.StatsTable(X)
    first = plan.evaluate(st)
    assert plan.evaluate(st).equals(first)
    assert first.null_count == 0 and first.type == pa.bool_()
    ex = pe.explain(X, "x > 5 AND x < 8")
    assert ex.column("keep").to_pylist() == [False, True, False]
    assert ex.column("reason").to_pylist() == ["x > 5", None, "x > 5"]
    ex = pe.explain(X, "x = 100 OR x = 200")
    assert ex.column("reason").to_pylist()[0] == "x IN (100, 200)"  # (folded: one set test)


def test_three_front_ends_agree():
    import pyarrow.compute as pc

    sql = keep(X, "x > 5 OR x IS NULL")
    assert keep(X, (pe.col("x") > 5) | pe.col("x").is_null()) == sql
    assert keep(X, (pc.field("x") > 5) | pc.field("x").is_null()) == sql
