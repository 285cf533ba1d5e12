"""Each rewrite rule: ``input; expected`` pairs (SQL in, SQL of the rewritten tree out)."""

import pyarrow as pa
import pytest

from prune_engine.compiler import rules
from prune_engine.errors import TypeMismatchError
from prune_engine.expr import nodes as n
from prune_engine.expr.sql import parse_sql


def sql_of(rule, text):
    return str(rule(parse_sql(text)))


@pytest.mark.parametrize("text, expected", [
    ("d = DATE '2024-01-02'", "d = DATE '2024-01-02'"),
    ("d = CAST('2024-01-02 23:59:59' AS DATE)", "d = DATE '2024-01-02'"),
    ("x = CAST('5' AS BIGINT)", "x = 5"),
    ("x = -(5)", "x = -5"),
    ("x IN (CAST('1' AS INT), 2)", "x IN (1, 2)"),
])
def test_fold_literal_casts(text, expected):
    assert sql_of(rules.fold_literal_casts, text) == expected


@pytest.mark.parametrize("text, expected, why", [
    ("x = CAST(8 AS DECIMAL(6,2))", "x = 8.00", "exact decimal arithmetic, not pyarrow's cast rules"),
    ("x = CAST(1.005 AS DECIMAL(6,2))", "x = 1.01", "half away from zero (DuckDB, Spark, PostgreSQL)"),
    ("x = CAST(-1.005 AS DECIMAL(6,2))", "x = -1.01", "half away from zero"),
    ("x = CAST('7.125' AS DECIMAL(9,2))", "x = 7.13", "text reads as a decimal"),
    ("x = CAST(2.5e0 AS DECIMAL(6,2))", "x = 2.50", "a double on the scale's grid"),
    ("x = CAST(0.1e0 AS DECIMAL(6,2))", "x = CAST(0.1 AS DECIMAL(6,2))", "a double off the grid: engines differ"),
    ("x = CAST(12345 AS DECIMAL(6,2))", "x = CAST(12345 AS DECIMAL(6,2))", "beyond the type: an error or NULL"),
    ("x = CAST(2.5 AS INT)", "x = CAST(2.5 AS INTEGER)", "DuckDB rounds, Spark truncates"),
    ("x = CAST('1.5' AS INT)", "x = CAST('1.5' AS INTEGER)", "text of a fraction: engines differ"),
    ("x = CAST(300 AS TINYINT)", "x = CAST(300 AS TINYINT)", "out of range: an error, NULL or a wrap"),
    ("x = CAST(2.0 AS INT)", "x = 2", "a whole number"),
    ("d = DATE '5881580-07-10'", "d = DATE '5881580-07-10'", "years past 9999 (date32's end)"),
    ("d = DATE '0044-03-15 (BC)'", "d = DATE '0044-03-15 (BC)'", "DuckDB's BC dates"),
    ("d = CAST(TIMESTAMP '2200-01-01 23:59:59.999999' AS DATE)", "d = DATE '2200-01-01'",
     "the day, by exact integer division"),
    ("d = CAST(TIMESTAMP_NS '2200-01-01 23:59:59.999999999' AS DATE)",
     "d = CAST(TIMESTAMP_NS '2200-01-01 23:59:59.999999999' AS DATE)",
     "DuckDB rounds to the next microsecond: the next day"),
    ("t = TIMESTAMP_S '2000-01-01 00:00:00.7'", "t = CAST('2000-01-01 00:00:00.7' AS TIMESTAMP_S)",
     "finer than its type: DuckDB rounds, others truncate"),
    ("d = CAST('2024-01-02 00:30+01:00' AS DATE)", "d = DATE '2024-01-02'",
     "engines take the written date (2024-01-02), not the instant's date in UTC (2024-01-01)"),
    ("d = CAST('2024-01-02 23:30Z' AS DATE)", "d = DATE '2024-01-02'", "UTC: the same date"),
    ("d = CAST(TIMESTAMPTZ '2024-01-02 00:30+01:00' AS DATE)", "d = DATE '2024-01-01'",
     "a TIMESTAMPTZ's date is the instant's, in the session zone (UTC)"),
])
def test_literal_casts_are_exact_or_stay_unknown(text, expected, why):
    assert sql_of(rules.fold_literal_casts, text) == expected, why


def test_fold_literal_casts_rejects_a_bad_literal():
    with pytest.raises(TypeMismatchError, match="cannot cast"):
        rules.fold_literal_casts(n.Cast(n.Literal("abc"), pa.int64()))


@pytest.mark.parametrize("text, expected", [
    ("5 < x", "x > 5"),
    ("5 >= x", "x <= 5"),
    ("5 = x", "x = 5"),
    ("x < y", "x < y"),
    ("1 IS DISTINCT FROM x", "x IS DISTINCT FROM 1"),
])
def test_orient_comparisons(text, expected):
    assert sql_of(rules.orient_comparisons, text) == expected


@pytest.mark.parametrize("text, expected", [
    ("x = 1 OR x = 2", "x IN (1, 2)"),
    ("x = 1 OR y = 2 OR x = 3", "x IN (1, 3) OR y = 2"),
    ("x <> 1 AND x <> 2 AND y > 0", "x NOT IN (1, 2) AND y > 0"),
    ("x = 1 OR x = 1", "x IN (1)"),
    ("x = 1 AND x = 2", "x = 1 AND x = 2"),  # AND of equalities: no set test
    ("x <> 1 OR x <> 2", "x != 1 OR x != 2"),
    ("x = 1 OR x = 'a'", "x = 1 OR x = 'a'"),  # constants of two kinds stay apart
    ("x = 1 OR x = NULL", "x = 1 OR x = NULL"),
    ("x = 1 OR x = 2.5 OR x = 3", "x IN (1, 3) OR x = 2.5"),
    ("NOT (x = 1 OR x = 2)", "NOT (x IN (1, 2))"),
])
def test_fold_in_lists(text, expected):
    assert sql_of(rules.fold_in_lists, text) == expected


@pytest.mark.parametrize("text, expected", [
    # NOT pushed down with its SQL meaning (three-valued: NULL stays NULL)
    ("NOT (x < 5)", "x >= 5"),
    ("NOT (x = 5 AND y = 1)", "x != 5 OR y != 1"),
    ("NOT (x = 5 OR NOT y = 1)", "x != 5 AND y = 1"),
    ("NOT x IS NULL", "x IS NOT NULL"),
    ("NOT x IN (1, 2)", "x NOT IN (1, 2)"),
    ("NOT s LIKE 'a%'", "s NOT LIKE 'a%'"),
    ("NOT NOT b", "b = TRUE"),
    ("b", "b = TRUE"),
    ("NOT b", "b = FALSE"),
    ("NOT abs(x) > 1", "abs(x) <= 1"),
    ("NOT my_udf(x)", "NOT my_udf(x)"),
    # IS [NOT] TRUE / FALSE
    ("b IS TRUE", "b = TRUE"),
    ("b IS FALSE", "b = FALSE"),
    ("b IS NOT TRUE", "b = FALSE OR b IS NULL"),
    ("b IS NOT FALSE", "b = TRUE OR b IS NULL"),
    ("(x > 1) IS NOT TRUE", "x <= 1 OR x IS NULL"),
    ("NOT ((x > 1) IS NOT TRUE)", "x > 1"),
    ("(x > y) IS NOT FALSE", "x > y OR x IS NULL OR y IS NULL"),
    # IS [NOT] DISTINCT FROM
    ("x IS DISTINCT FROM 1", "x != 1 OR x IS NULL"),
    ("x IS NOT DISTINCT FROM 1", "x = 1 OR (x IS NULL AND FALSE)"),
    ("x IS DISTINCT FROM NULL", "x IS NOT NULL"),
    ("x IS NOT DISTINCT FROM NULL", "x IS NULL"),
    ("NOT (x IS DISTINCT FROM y)", "x = y OR (x IS NULL AND y IS NULL)"),
])
def test_push_not(text, expected):
    assert sql_of(rules.push_not, text) == expected


@pytest.mark.parametrize("text, negate, expected", [
    ("x < 5", True, "x >= 5"),
    ("x < 5", False, "x < 5"),
    ("b", True, "b = FALSE"),
    ("b", False, "b"),
    ("TRUE", True, "FALSE"),
    ("NULL", True, "NULL"),
    ("x IS NULL", True, "x IS NOT NULL"),
    ("x IN (1, NULL)", True, "x NOT IN (1, NULL)"),
    ("s LIKE 'a%'", True, "s NOT LIKE 'a%'"),
    ("regexp_matches(s, 'a')", True, "NOT regexp_matches(s, 'a')"),
    ("isnan(f)", True, "NOT isnan(f)"),
    ("b IS TRUE", True, "b IS NOT TRUE"),
    ("x IS DISTINCT FROM y", True, "x IS NOT DISTINCT FROM y"),
    ("my_udf(x)", True, "NOT my_udf(x)"),
])
def test_complement_is_exact_and_one_level(text, negate, expected):
    assert str(rules.complement(parse_sql(text), negate)) == expected


def test_push_not_takes_a_leaf_rule():
    """The walk is shared: a leaf rule sees each predicate with its polarity; None leaves it
    to the exact complement (the row filter's rule is ``scanning.rows.row_leaf``)."""
    seen = []

    def leaf(e, negate):
        seen.append((str(e), negate))
        return n.Func("kept", (e,)) if isinstance(e, n.IsBool) else None

    x5, b_true, y_null = parse_sql("x < 5"), parse_sql("b IS TRUE"), parse_sql("y IS NULL")
    out = rules.push_not(n.Not(n.Or((n.And((x5, n.Not(b_true))), y_null))), leaf=leaf)
    assert str(out) == "(x >= 5 OR kept(b IS TRUE)) AND y IS NOT NULL"
    assert seen == [("x < 5", True), ("b IS TRUE", False), ("y IS NULL", True)]


@pytest.mark.parametrize("text, expected", [
    ("TRUE AND x > 1", "x > 1"),
    ("FALSE AND x > 1", "FALSE"),
    ("NULL AND x > 1", "FALSE"),
    ("NULL OR x > 1", "x > 1"),
    ("TRUE OR x > 1", "TRUE"),
    ("1 = 1 AND x > 1", "x > 1"),
    ("1 = 2 OR x > 1", "x > 1"),
    ("x > 1 AND (y > 2 AND x > 1)", "x > 1 AND y > 2"),
    ("NULL IS NULL", "TRUE"),
    ("x = 1 OR (y = 2 OR z = 3)", "x = 1 OR y = 2 OR z = 3"),
])
def test_simplify(text, expected):
    assert str(rules.simplify(rules.push_not(parse_sql(text)))) == expected


def test_may_be_null_is_unknown_for_functions_and_null_literals():
    assert rules.may_be_null(parse_sql("abs(x) > 1")) == n.TRUE
    assert rules.may_be_null(parse_sql("x IN (1, NULL)")) == n.TRUE
    assert str(rules.may_be_null(parse_sql("x + y > 1"))) == "x IS NULL OR y IS NULL"


@pytest.mark.parametrize("text, expected", [
    ("NOT (x < 5 OR y IS NULL) AND 5 <= z", "x >= 5 AND y IS NOT NULL AND z >= 5"),
    ("NOT (x BETWEEN 1 AND 3)", "x < 1 OR x > 3"),
    ("x + 1 > 2 + 3", "(x + 1) > 5"),
])
def test_rewrite_runs_every_rule(text, expected):
    assert str(rules.rewrite(parse_sql(text))) == expected


def test_push_not_keeps_an_unchanged_chain_and_flips_a_negated_one():
    chain = parse_sql("x > 1 AND y < 2 AND z IS NULL")
    assert rules.push_not(chain) is chain, "nothing to push: the very node, not a copy"
    # NOT over OR is an AND, even where every part is its own complement (NOT NULL is NULL)
    flipped = rules.push_not(n.Not(n.Or((n.NULL, n.NULL))))
    assert type(flipped) is n.And and flipped.args == (n.NULL, n.NULL)
    assert str(rules.push_not(n.Not(n.And((n.Column("b"), n.NULL))))) == "b = FALSE OR NULL"


def test_fold_in_lists_keeps_order_and_kinds_apart():
    tree = parse_sql("x = 1 OR y > 0 OR x = 2 OR x = 'a' OR x = 1 OR st.a = 3 OR x = 'b' OR st.a = 4")
    assert str(rules.fold_in_lists(tree)) == "x IN (1, 2) OR y > 0 OR x IN ('a', 'b') OR st.a IN (3, 4)"
    assert rules.fold_in_lists(parse_sql("x <> 1 AND x = 2")) == parse_sql("x <> 1 AND x = 2")


SETTLED = [n.Compare(op, n.Column(path), lit) for op in n.COMPARE_OPS for path in (("x",), ("st", "a"))
           for lit in (n.Literal(5), n.Literal(2.5), n.Literal(float("nan")), n.Literal("a"), n.NULL,
                       n.TRUE, n.Literal(7, pa.int8()), n.Literal("2024-01-01", pa.date32()))]


@pytest.mark.parametrize("node", SETTLED, ids=str)
def test_every_rule_leaves_a_settled_comparison_as_it_is(node):
    """bottom_up does not show the rules a comparison of a column with a literal (settled):
    each rule's node step, NOT push-down and the whole rewrite leave one as it is."""
    assert rules.settled(node)
    for step in (rules._fold_literal_cast, rules._fold_arithmetic, rules._orient_comparison,
                 rules._fold_in_list, rules._simplify_node, rules._local_steps):
        assert step(node) is node, step.__name__
    assert rules.push_not(node) is node and rules.rewrite(node) is node
    assert not rules.settled(n.Compare("<", n.Literal(5), n.Column("x")))
    assert not rules.settled(n.Compare("<", n.Column("x"), n.Column("y")))


def test_simplify_junction_drops_constants_and_repeats_in_order():
    x, y = parse_sql("x > 1"), parse_sql("y < 2")
    assert str(rules._simplify_junction(n.And((x, n.TRUE, y, parse_sql("x > 1"), y)))) == "x > 1 AND y < 2"
    assert rules._simplify_junction(n.Or((x, n.NULL, y, n.FALSE))) == n.Or((x, y))
    assert rules._simplify_junction(n.And((x, n.NULL))) == n.FALSE, "NULL AND p is never TRUE"
    assert rules._simplify_junction(n.Or((x, n.Literal("a")))) is x, "a non-boolean literal: NULL-like"
    chain = n.And((x, y))
    assert rules._simplify_junction(chain) is chain, "nothing dropped: the very node"
    unhashable = n.Compare("=", n.Column("x"), n.Literal([1]))
    assert rules._simplify_junction(n.Or((unhashable, x, n.Compare("=", n.Column("x"), n.Literal([1]))))) \
        == n.Or((unhashable, x)), "unhashable literals: compared one by one"
