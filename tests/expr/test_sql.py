"""The SQL front end: each mapping as an exact tree, error positions, and a DuckDB differential
test (the original SQL and the SQL rendering of the parsed tree select the same rows)."""

from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prune_engine.errors import PruneEngineError, SqlParseError
from prune_engine.expr.nodes import (
    NULL, And, Arith, Cast, Column, Compare, Func, InList, IsBool, IsDistinct, IsNan, IsNull, Like, Literal,
    Negate, Not, Or, RegexpLike,
)
from prune_engine.expr.sql import parse_sql
from tests.budget import examples
from tests.oracle.duck import DUCKDB_MAJOR, load_table

x, y, s, b = Column(("x",)), Column(("y",)), Column(("s",)), Column(("b",))


def lit(v):
    return Literal(v)


MAPPINGS = [
    # literals: exact numbers, strings, booleans, NULL
    ("x = 1", Compare("=", x, lit(1))),
    ("x = 12345678901234567890123", Compare("=", x, lit(12345678901234567890123))),
    ("x = 1.50", Compare("=", x, lit(Decimal("1.50")))),
    ("x = .5", Compare("=", x, lit(Decimal("0.5")))),
    ("x = 1e3", Compare("=", x, lit(1000.0))),
    ("x = -5", Compare("=", x, lit(-5))),
    ("x = -1.5", Compare("=", x, lit(Decimal("-1.5")))),
    ("x = -2e-1", Compare("=", x, lit(-0.2))),
    ("x = 1.00000000000000000000000000000000000001", Compare("=", x, lit(1.0))),  # 39 digits: DuckDB's DOUBLE
    ("x = 1.0000000000000000000000000000000000001", Compare("=", x, lit(Decimal("1.0000000000000000000000000000000000001")))),
    ("b = X'6162'", Compare("=", b, lit(b"ab"))),
    ("b = x''", Compare("=", b, lit(b""))),
    ("s = 'it''s'", Compare("=", s, lit("it's"))),
    ("s = 'línea\nnueva'", Compare("=", s, lit("línea\nnueva"))),
    ("b = TRUE", Compare("=", b, lit(True))),
    ("b = false", Compare("=", b, lit(False))),
    ("x = NULL", Compare("=", x, NULL)),
    # typed literals and casts stay casts
    ("d = DATE '2020-01-02'", Compare("=", Column(("d",)), Cast(lit("2020-01-02"), pa.date32()))),
    ("t < TIMESTAMP '2020-01-02 03:04:05'",
     Compare("<", Column(("t",)), Cast(lit("2020-01-02 03:04:05"), pa.timestamp("us")))),
    ("t < TIMESTAMPTZ '2020-01-02 03:04:05+01'",
     Compare("<", Column(("t",)), Cast(lit("2020-01-02 03:04:05+01"), pa.timestamp("us", "UTC")))),
    ("f > CAST('NaN' AS DOUBLE)", Compare(">", Column(("f",)), Cast(lit("NaN"), pa.float64()))),
    ("f < CAST('-inf' AS FLOAT)", Compare("<", Column(("f",)), Cast(lit("-inf"), pa.float32()))),
    # columns: nesting, quoting, case
    ("a.b.c.d.e = 1", Compare("=", Column(("a", "b", "c", "d", "e")), lit(1))),
    ("st.a > 1", Compare(">", Column(("st", "a")), lit(1))),
    ('"Mixed.Case" = 1', Compare("=", Column(("Mixed.Case",)), lit(1))),
    ("`a.b`.c = 1", Compare("=", Column(("a.b", "c")), lit(1))),
    ('"order" = 1 AND "x""y" = 2',
     And((Compare("=", Column(("order",)), lit(1)), Compare("=", Column(('x"y',)), lit(2))))),
    # comparisons keep their sides
    ("5 < x", Compare("<", lit(5), x)),
    ("x <> 1", Compare("!=", x, lit(1))),
    ("x != y", Compare("!=", x, y)),
    ("x <= 1", Compare("<=", x, lit(1))),
    ("x >= 1", Compare(">=", x, lit(1))),
    ("x == 1", Compare("=", x, lit(1))),
    ("x <=> 1", IsDistinct(x, lit(1), negated=True)),
    ("x IS NOT DISTINCT FROM NULL", IsDistinct(x, NULL, negated=True)),
    ("x IS DISTINCT FROM y", IsDistinct(x, y)),
    ("NOT x IS DISTINCT FROM y", IsDistinct(x, y, negated=True)),
    # connectives: flattened, parentheses dropped, NOT kept
    ("x = 1 AND y = 2 AND (s = 'a' AND b)",
     And((Compare("=", x, lit(1)), Compare("=", y, lit(2)), Compare("=", s, lit("a")), b))),
    ("x = 1 OR (y = 2 OR b)", Or((Compare("=", x, lit(1)), Compare("=", y, lit(2)), b))),
    ("x = 1 AND (y = 2 OR b)", And((Compare("=", x, lit(1)), Or((Compare("=", y, lit(2)), b))))),
    ("NOT x = 1", Not(Compare("=", x, lit(1)))),
    ("NOT (NOT b)", Not(Not(b))),
    # IS [NOT] NULL / TRUE / FALSE
    ("isnan(x)", IsNan(x)),
    ("is_nan(x)", IsNan(x)),
    ("NOT isnan(x)", IsNan(x, negated=True)),
    ("x IS NAN", IsNan(x)),
    ("x IS NOT NAN", IsNan(x, negated=True)),
    ("x IS NULL", IsNull(x)),
    ("x IS NOT NULL", IsNull(x, negated=True)),
    ("NOT (x IS NULL)", IsNull(x, negated=True)),
    ("b IS TRUE", IsBool(b, True)),
    ("b IS NOT FALSE", IsBool(b, False, negated=True)),
    # BETWEEN
    ("x BETWEEN 1 AND 5", And((Compare(">=", x, lit(1)), Compare("<=", x, lit(5))))),
    ("x NOT BETWEEN 1 AND 5", Not(And((Compare(">=", x, lit(1)), Compare("<=", x, lit(5)))))),
    ("x BETWEEN SYMMETRIC 5 AND 1", Func("between", (x, lit(5), lit(1)))),
    # IN
    ("x IN (1, 2, NULL, -3)", InList(x, (lit(1), lit(2), NULL, lit(-3)))),
    ("x NOT IN ('a', 'b')", InList(x, (lit("a"), lit("b")), negated=True)),
    ("x IN (1, y)", Func("in", (x, lit(1), y))),
    ("x IN (SELECT a FROM t)", Func("in", ())),
    ("x NOT IN (SELECT a FROM t)", Not(Func("in", ()))),
    # LIKE / ILIKE / ESCAPE
    ("s LIKE 'ab%'", Like(s, "ab%")),
    ("s NOT LIKE 'a_c'", Like(s, "a_c", negated=True)),
    ("s ILIKE 'AB%'", Like(s, "AB%", case_insensitive=True)),
    ("s NOT ILIKE '%x'", Like(s, "%x", case_insensitive=True, negated=True)),
    ("s LIKE 'a!%%' ESCAPE '!'", Like(s, "a!%%", "!")),
    ("s NOT ILIKE 'a!_%' ESCAPE '!'", Like(s, "a!_%", "!", True, True)),
    ("s LIKE y", Func("like", (s, y))),
    ("s NOT LIKE y", Not(Func("like", (s, y)))),
    ("starts_with(s, '5%_')", Like(s, "5\\%\\_%", "\\")),
    # regular expressions
    ("s RLIKE '^a.c'", RegexpLike(s, "^a.c")),
    ("s REGEXP 'b'", RegexpLike(s, "b")),
    ("regexp_like(s, 'b+')", RegexpLike(s, "b+")),
    ("regexp_matches(s, 'b+')", RegexpLike(s, "b+")),
    ("NOT s RLIKE 'x'", RegexpLike(s, "x", negated=True)),
    ("regexp_like(s, y)", Func("regexp_like", (s, y))),
    ("regexp_like(s, 'b', 'i')", Func("regexp_like", (s, lit("b"), lit("i")))),
    # arithmetic and casts
    ("x + 1 > y * 2 - 3", Compare(">", Arith("+", x, lit(1)), Arith("-", Arith("*", y, lit(2)), lit(3)))),
    ("-x < 3", Compare("<", Negate(x), lit(3))),
    ("-(x) < - - 3", Compare("<", Negate(x), lit(3))),
    ("CAST(x AS BIGINT) = 1", Compare("=", Cast(x, pa.int64()), lit(1))),
    ("x::LONG = 1", Compare("=", Cast(x, pa.int64()), lit(1))),
    ("TRY_CAST(x AS INTEGER) = 1", Compare("=", Cast(x, pa.int32()), lit(1))),
    ("CAST(x AS DECIMAL(10, 2)) = 1", Compare("=", Cast(x, pa.decimal128(10, 2)), lit(1))),
    ("CAST(x AS DECIMAL(40, 2)) = 1", Compare("=", Cast(x, pa.decimal256(40, 2)), lit(1))),
    ("CAST(x AS DECIMAL) = 1", Compare("=", Cast(x, pa.decimal128(18, 3)), lit(1))),
    ("CAST(x AS INT[]) = 1", Compare("=", Func("cast", (x,)), lit(1))),
    ("CAST(x AS TIME) = 1", Compare("=", Func("cast", (x,)), lit(1))),
    # list membership
    ("array_contains(a, 1)", Func("array_contains", (Column(("a",)), lit(1)))),
    ("list_contains(a, 'v')", Func("array_contains", (Column(("a",)), lit("v")))),
    ("list_has(a, x)", Func("array_contains", (Column(("a",)), x))),
    ("array_has(st.l, 2)", Func("array_contains", (Column(("st", "l")), lit(2)))),
    # everything else: an opaque function, never an error
    ("x / 2 > 1", Compare(">", Func("div", (x, lit(2))), lit(1))),
    ("x % 2 = 0", Compare("=", Func("mod", (x, lit(2))), lit(0))),
    ("coalesce(x, 0) = 1", Compare("=", Func("coalesce", (x, lit(0))), lit(1))),
    ("MY_UDF(x, 'a')", Func("my_udf", (x, lit("a")))),
    ("count(*) > 1", Compare(">", Func("count", ()), lit(1))),
    ("x > (SELECT max(y) FROM t)", Compare(">", x, Func("subquery", ()))),
    ("CASE WHEN b THEN x ELSE y END = 1",
     Compare("=", Func("case", (Func("if", (b, x)), y)), lit(1))),
]


@pytest.mark.parametrize("text, expected", MAPPINGS, ids=[m[0] for m in MAPPINGS])
def test_mapping(text, expected):
    assert parse_sql(text) == expected


ERRORS = [
    # (text, line, col): sqlglot's position for syntax errors, the opening quote for
    # unterminated strings, the start of the offending statement or alias otherwise
    ("x > AND 5", 1, 7),
    ("x = (1", 1, 6),
    ("x = 1)", 1, 6),
    ("x IN (1,", 1, 8),
    ("x = 1 AND\n  y BETWEEN 1", 2, 13),
    ("CAST(x AS )", 1, 11),
    ("x = 'abc", 1, 5),
    ("x = 1 AND\n y = \"ab", 2, 6),
    ("x = 1 /* no end", 1, 7),
    ("x = 0x10", 1, 5),
    ("b = X'616'", 1, 5),
    ("b = X'zz'", 1, 5),
    ("x = 1 AND (y = 2 z)", 1, 18),
    ("SELECT x FROM t", 1, 1),
    ("  x = 1; y = 2", 1, 10),
    ("", 1, 1),
    ("   ", 1, 1),
]


@pytest.mark.parametrize("text, line, col", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_position(text, line, col):
    with pytest.raises(SqlParseError) as info:
        parse_sql(text)
    err = info.value
    assert (err.line, err.col) == (line, col), str(err)
    assert err.sql == text
    assert isinstance(err, PruneEngineError)


def test_error_message_shows_the_fault():
    with pytest.raises(SqlParseError, match=r"line 1, column 7") as info:
        parse_sql("x > AND 5")
    assert "x > AND 5\n" in str(info.value) and str(info.value).rstrip().endswith("^")


def test_non_text_is_a_type_error():
    with pytest.raises(TypeError, match="str"):
        parse_sql(5)


def test_unknown_dialect_is_named():
    with pytest.raises(PruneEngineError, match="no_such_sql"):
        parse_sql("x = 1", dialect="no_such_sql")


def test_spark_dialect():
    # Spark: double quotes are strings, a bare DECIMAL is DECIMAL(10, 0), TIMESTAMP is an instant
    assert parse_sql('`a.b`.c = "v"', dialect="spark") == Compare("=", Column(("a.b", "c")), lit("v"))
    assert parse_sql("CAST(x AS DECIMAL) = 1", dialect="spark") == \
        Compare("=", Cast(x, pa.decimal128(10, 0)), lit(1))
    assert parse_sql("t > TIMESTAMP '2020-01-01'", dialect="spark") == \
        Compare(">", Column(("t",)), Cast(lit("2020-01-01"), pa.timestamp("us", "UTC")))
    assert parse_sql("array_contains(a, 1) AND s RLIKE 'x'", dialect="spark") == \
        And((Func("array_contains", (Column(("a",)), lit(1))), RegexpLike(s, "x")))


def test_long_chains_do_not_recurse():
    n = 3000
    tree = parse_sql(" AND ".join(f"c{i} = {i}" for i in range(n)))
    assert isinstance(tree, And) and len(tree.args) == n
    assert tree.args[-1] == Compare("=", Column((f"c{n - 1}",)), lit(n - 1))
    tree = parse_sql(" OR ".join(f"c{i} = {i}" for i in range(n)))
    assert isinstance(tree, Or) and len(tree.args) == n


# ------------------------------------------------------------------------------------------
# differential: DuckDB runs the original SQL and the rendering of our tree on the same rows

TABLE = pa.table({
    "x": pa.array([None, -3, 0, 1, 2, 5, 7, 10, 2**40, -(2**40)], pa.int64()),
    "y": pa.array([1, None, 0, 2, 2, -5, 8, 10, 0, 3], pa.int64()),
    "f": pa.array([float("nan"), -0.0, 0.0, 1.5, None, float("inf"), -float("inf"), 2.25, 1e300, -1.5]),
    "s": pa.array(["", "a%c", "A_C", "abc", None, "ab!c", "ñu", "Abc", "zz", "a\nb"]),
    "b": pa.array([True, False, None, True, False, None, True, True, False, False]),
})

_int_lit = st.sampled_from(["0", "1", "2", "-3", "5", "10", "1099511627776", "NULL", "2.5", "-1e1"])
_float_lit = st.sampled_from(["0", "-0.0", "1.5", "2.25", "1e300", "CAST('NaN' AS DOUBLE)",
                              "CAST('inf' AS DOUBLE)", "NULL"])
_str_lit = st.sampled_from(["''", "'abc'", "'a%c'", "'ñu'", "'zz'", "'A_C'", "NULL"])
_pattern = st.sampled_from(["'a%'", "'%c'", "'_b_'", "'a!%c'", "'%'", "'ab!_c'", "'ñ%'", "''"])
_op = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])


@st.composite
def _atom(draw):
    kind = draw(st.integers(0, 11))
    col = draw(st.sampled_from(["x", "y"]))
    if kind == 0:
        left, right = col, draw(_int_lit)
        if draw(st.booleans()):
            left, right = right, left
        return f"{left} {draw(_op)} {right}"
    if kind == 1:
        return f"f {draw(_op)} {draw(_float_lit)}"
    if kind == 2:
        return f"s {draw(_op)} {draw(_str_lit)}"
    if kind == 3:
        lo, hi = draw(_int_lit), draw(_int_lit)
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}BETWEEN {lo} AND {hi}"
    if kind == 4:
        items = ", ".join(draw(st.lists(_int_lit, min_size=1, max_size=4)))
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}IN ({items})"
    if kind == 5:
        return f"{draw(st.sampled_from(['x', 'f', 's', 'b']))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 6:
        return f"b IS {draw(st.sampled_from(['', 'NOT ']))}{draw(st.sampled_from(['TRUE', 'FALSE']))}"
    if kind == 7:
        op = draw(st.sampled_from(["IS DISTINCT FROM", "IS NOT DISTINCT FROM"]))
        return f"{col} {op} {draw(st.sampled_from(['NULL', '2', 'y']))}"
    if kind == 8:
        op = draw(st.sampled_from(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"]))
        esc = draw(st.sampled_from(["", " ESCAPE '!'"]))
        return f"s {op} {draw(_pattern)}{esc}"
    if kind == 9:
        regex = draw(st.sampled_from(["'^a'", "'c$'", "'b'", "'^$'", "'[ñz]'"]))
        # DuckDB 1.x reads ``~`` as a full match, 2.x (and the engine) as regexp_matches
        return draw(st.sampled_from([f"regexp_matches(s, {regex})"]
                                    + ([f"s ~ {regex}"] if DUCKDB_MAJOR >= 2 else [])))
    if kind == 10:
        arith = draw(st.sampled_from(["x + 1", "x - y", "-x", "x * 2", "- - x", "y * -1"]))
        return f"{arith} {draw(_op)} {draw(_int_lit)}"
    return draw(st.sampled_from(["b", "starts_with(s, 'a')", "starts_with(s, 'a%')",
                                 "CAST(x AS DOUBLE) > 1.5", "x::VARCHAR = '5'", "CAST(y AS INTEGER) = 2"]))


def _combine(children):
    return st.one_of(
        st.tuples(children, children, st.sampled_from([" AND ", " OR "])).map(lambda t: f"({t[0]}{t[2]}{t[1]})"),
        children.map(lambda c: f"NOT ({c})"),
    )


_predicate = st.recursive(_atom(), _combine, max_leaves=6)


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect()
    load_table(con, "t", TABLE)
    # our nodes render regexp_like(); DuckDB calls the same search regexp_matches()
    con.execute("CREATE MACRO regexp_like(s, p) AS regexp_matches(s, p)")
    yield con
    con.close()  # an open DuckDB 1.x database holds ~19 GB of address space


def _rows(con, where):
    return con.execute(f"SELECT list(i ORDER BY i) FROM (SELECT row_number() OVER () AS i, * FROM t) "
                       f"WHERE {where}").fetchone()[0] or []


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_predicate)
def test_differential_against_duckdb(duck, text):
    tree = parse_sql(text)
    assert _rows(duck, str(tree)) == _rows(duck, text), f"{text}\n  parsed as: {tree}"
