"""The fast SQL reader against sqlglot's path: whatever text it accepts, it must read into the
very tree sqlglot's path builds (same node types, same literal types and digits); what it does
not understand it declines, and sqlglot's path reads it (errors included).

The corpora: the SQL front end's own mapping and error lists, the differential oracle's random
predicates (seeded), hand-picked edges of the subset (keywords, precedence, number forms,
quoting, operators next to operators), and hypothesis token soups (derandomized) that mix the
subset's tokens with the ones that must make it decline.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prune_engine.errors import SqlParseError
from prune_engine.expr import _fast_sql
from prune_engine.expr import nodes as n
from prune_engine.expr.sql import parse_sql, read_with_sqlglot
from tests.budget import examples
from tests.expr.test_sql import ERRORS, MAPPINGS, _predicate
from tests.oracle.data import random_case
from tests.oracle.predicates import random_predicate


def _shape(tree: n.Expr) -> list:
    """Every node of ``tree`` (parents first) as its type and fields, literals by the type and
    repr of their value (``==`` takes ``Decimal('1.50')`` for ``Decimal('1.5')``)."""
    out = []
    for node in tree.walk():
        if isinstance(node, n.Literal):
            out.append(("Literal", type(node.value).__name__, repr(node.value), str(node.type)))
        else:
            out.append((type(node).__name__,) + tuple(
                getattr(node, f) for f in n._field_names(type(node))
                if not isinstance(getattr(node, f), (n.Expr, tuple))))
            if isinstance(node, n.Column):
                out.append(node.path)
    return out


def _check(text: str) -> bool:
    """The fast reader declines ``text`` or reads sqlglot's tree; True when it accepted."""
    fast = _fast_sql.read(text)
    if fast is None:
        return False
    try:
        slow = read_with_sqlglot(text)
    except SqlParseError as e:  # pragma: no cover - the failure this test is about
        pytest.fail(f"the fast reader accepted {text!r}, which sqlglot's path rejects: {e}")
    assert fast == slow, f"{text!r}\n  fast: {fast}\n  sqlglot: {slow}"
    assert _shape(fast) == _shape(slow), f"{text!r}\n  fast: {fast!r}\n  sqlglot: {slow!r}"
    return True


# --- corpora -----------------------------------------------------------------------------

EDGES = [
    # the long chains programs write, and their pieces
    "x = 1 OR x = 2 OR x = 3", "x <> 1 AND x <> 2", "c1 > 1 AND c2 < 2 OR c3 >= 3 AND c4 <= 4",
    # numbers: exactness and every written form
    "x = 1", "x = 007", "x = 1.50", "x = .5", "x = 0.0", "x = 1e3", "x = 1E3", "x = 1e+3", "x = 2e-1",
    "x = .5e1", "x = 1.5e3", "x = 12345678901234567890123", "x = 1e400",
    "x = 1.00000000000000000000000000000000000001", "x = 1.0000000000000000000000000000000000001",
    "x = -5", "x = - 5", "x = -1.5", "x = -0.0", "x = - - 3", "x = - -3", "-x < 3", "- - x > 1",
    "x = 1.", "x = 1.e3", "x = 1_000", "x = 0x10", "x = 1abc", "x = 1.5.3",
    # strings
    "s = 'it''s'", "s = ''", "s = 'a\\b'", "s = 'línea\nnueva'", "s = 'a' 'b'", "s = 'abc",
    "s = E'x'", "s = X'6162'",
    # names: nesting, quoting, case, keywords
    "X = 1", "Mixed_Case >= 1", "a.b.c.d.e.f = 1", '"a""b" = 1', '"Mixed.Case" = 1', "`a.b`.c = 1",
    '"order" = 1', "order = 1", "t.order = 1", "st.date = 1", "date = 1", "case = 1", "map = 1",
    "if = 1", "any = 1", "nan = 1", "x IS NAN", "similar = 1", "symmetric = 1",
    "x BETWEEN symmetric AND 5", "x BETWEEN SYMMETRIC 5 AND 1", "__prune_engine_chunk_0__ = 1",
    "a . b = 1", "a.`b` = 1", '"" = 1', "x$y = 1", "año = 1",
    # comparisons and their operators
    "x == 1", "x != 1", "x <> 1", "x <=> 1", "x<>1", "x=-5", "x>=-5", "x<-5", "x = y = z",
    "x < y = z", "1 = 1", "NULL = 1", "x = NULL", "TRUE", "NULL", "b", "(b)", "((x > 1))",
    "x -> 1", "x --> 1", "x = 1 -- note", "x = 1 /* note */", "x = 1;", "x = 1; y = 2",
    "x + 1 > 2", "x * 2 > 1", "x / 2 > 1", "x % 2 = 0", "x || 'a' = 'b'", "x::INT = 1",
    # IS
    "x IS NULL", "x IS NOT NULL", "NOT x IS NULL", "NOT (x IS NULL)", "x IS TRUE", "x IS NOT FALSE",
    "x IS DISTINCT FROM y", "x IS NOT DISTINCT FROM NULL", "NOT x IS DISTINCT FROM y",
    "x IS DISTINCT FROM y = 1", "x IS NULL = FALSE", "x = 1 IS NULL", "x IS NULL IS NULL",
    "x NOT NULL", "x ISNULL", "x NOTNULL",
    # IN, BETWEEN, LIKE, RLIKE
    "x IN (1)", "x IN (1, 2, NULL, -3)", "x NOT IN ('a', 'b')", "x IN (1, y)", "x IN (-y)",
    "x IN ()", "x IN (1,)", "x IN 1", "NOT x IN (1)", "x NOT IN (1) NOT IN (2)",
    "x BETWEEN 1 AND 5", "x NOT BETWEEN 1 AND 5", "x BETWEEN 1 AND 5 AND y", "x BETWEEN 1.5 AND 2e0",
    "x BETWEEN y AND 5 OR x BETWEEN -1 AND -2", "x BETWEEN 1 AND 5 = TRUE",
    "s LIKE 'ab%'", "s NOT LIKE 'a_c'", "s ILIKE 'AB%'", "s NOT ILIKE '%x'", "s LIKE 'a!%%' ESCAPE '!'",
    "s NOT ILIKE 'a!_%' ESCAPE '!'", "s LIKE y", "s LIKE 'a' ESCAPE y", "NOT s LIKE 'a'",
    "s RLIKE '^a.c'", "s REGEXP 'b'", "s NOT RLIKE 'x'", "NOT s REGEXP 'x'", "s RLIKE 'x' ESCAPE '!'",
    "s GLOB 'a*'", "s SIMILAR TO 'a'", "s ~ 'a'",
    # connectives, NOT and parentheses
    "x = 1 AND y = 2 AND (s = 'a' AND b)", "x = 1 OR (y = 2 OR b)", "x = 1 AND (y = 2 OR b)",
    "NOT x = 1", "NOT (NOT b)", "NOT NOT b", "NOT NOT x IS NULL", "NOT (a AND b) AND c",
    "a AND NOT b OR c", "NOT (a) AND b", "(a OR b) AND (c OR d)", "((a AND b) AND c) OR d",
    "NOT NULL", "NOT TRUE", "NOT -x", "(x) = 1", "NOT (x) = 1", "(x = 1", "x = 1)", "()", "",
    "   ", "x > AND 5", "AND x", "x AND", "x OR OR y", "NOT", "x = 1 y",
]


def _oracle_predicates(seed: int = 22, cases: int = 40, per_case: int = 10) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(cases):
        case = random_case(rnd)
        out.extend(random_predicate(rnd, case).sql() for _ in range(per_case))
    return out


def _nested(depth: int) -> str:
    sql = "x > 150"
    for i in range(1, depth):
        sql = f"(x <> {i} AND {sql})" if i % 2 else f"(y = {i % 50 - 25} OR NOT {sql})"
    return sql


@pytest.mark.parametrize("text", EDGES)
def test_edges(text):
    _check(text)


@pytest.mark.parametrize("text", [m[0] for m in MAPPINGS] + [e[0] for e in ERRORS])
def test_sql_front_end_corpus(text):
    _check(text)


def test_oracle_predicates():
    texts = _oracle_predicates()
    accepted = sum(_check(t) for t in texts)
    # (the rest hold typed literals, casts, functions, arithmetic, (...) IS TRUE: sqlglot's)
    assert accepted > len(texts) // 5, "the reader should take a good share of the oracle's predicates"


def test_the_subset_is_read_fast():
    """The shapes programs write are accepted (not silently left to sqlglot)."""
    for text in ["x = 1 OR x = 2", "x <> 1 AND x <> 2", "c7 > 7 AND c8 < 8", "NOT (x IN (1, 2))",
                 "x BETWEEN 1 AND 5", "s LIKE 'a%' ESCAPE '!'", "x IS NOT DISTINCT FROM y",
                 "a.b = 'x' OR NOT \"q\" IS NULL", "x = -1.5e3", _nested(50)]:
        assert _check(text), text


def test_long_and_deep_texts():
    chain = " OR ".join(f"x = {i}" for i in range(2_000))
    assert _check(chain) and len(_fast_sql.read(chain).args) == 2_000
    assert _check(_nested(300))  # (sqlglot's path reads it in chunks)
    deep = "(" * 1_000 + "x > 150" + ")" * 1_000
    assert _fast_sql.read(deep) == parse_sql("x > 150") == read_with_sqlglot(deep)
    alternating = _nested(1_000)
    assert _fast_sql.read(alternating) == read_with_sqlglot(alternating)


def _whole_text_tokens(text: str):
    """The tokens of ``text`` read in one pass over the whole text (the reference of the
    piece-by-piece reading), or None where a character declines."""
    found = []
    for token, other in _fast_sql._TOKEN.findall(text):
        if other:
            return None
        found.append(_fast_sql._classify(token))
    return found + [("end", None)]


@pytest.mark.parametrize("text", [
    "x>5 AND  (y = 1\tOR\nz<=-2)", "x = 1  OR x=2 OR x = 3 ", " x = 007 ",
    "a.b.c = 1.5e3 AND NOT (d IS NULL)",
    "x = - - 1", "x = -- 1", "x = \u00b2", "x = 1\u00a0", "x=1 AND y<>1 AND x=1", "", "   ", "x IN (1,2, 3)",
    "x = 5 AND s = 'a b' AND t = \"c d\" = 1", "`a b` = 1 OR x = 2"])
def test_tokens_piece_by_piece_as_in_one_pass(text):
    """Text without quotes is tokenized piece by piece between spaces: the same tokens (kinds
    and values) as one pass over the whole text, and the same characters decline."""
    _fast_sql.read("x = 1")  # (loads the keyword tables)
    expected = _whole_text_tokens(text)
    if expected is None:
        with pytest.raises(_fast_sql._Decline):
            _fast_sql._tokens(text)
        return
    kinds, values = _fast_sql._tokens(text)
    assert kinds == [k for k, _ in expected], text
    assert [repr(v) for v in values] == [repr(v) for _, v in expected], text


def test_errors_come_from_sqlglots_path():
    for text, line, col in ERRORS:
        assert _fast_sql.read(text) is None, text
        with pytest.raises(SqlParseError) as info:
            parse_sql(text)
        assert (info.value.line, info.value.col) == (line, col)


def test_other_dialects_are_read_by_sqlglot(monkeypatch):
    monkeypatch.setattr(_fast_sql, "read", lambda text: pytest.fail("read for a dialect"))
    assert parse_sql('x = "v"', dialect="spark") == n.Compare("=", n.Column("x"), n.Literal("v"))


@settings(max_examples=examples(300), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_predicate)
def test_structured_predicates(text):
    _check(text)


_SOUP = st.sampled_from([
    "x", "y", "s", "b", "a.b", '"Q"', "`t`", "X", "1", "-", "- ", "2.5", ".5", "1e3", "0", "'a'",
    "''", "'it''s'", "NULL", "TRUE", "FALSE", "AND", "OR", "NOT", "IS", "IN", "BETWEEN", "LIKE",
    "ILIKE", "RLIKE", "REGEXP", "ESCAPE", "'!'", "DISTINCT", "FROM", "(", ")", ",", "=", "==",
    "!=", "<>", "<", "<=", ">", ">=", "<=>", "+", "*", "/", "::", "INT", "CASE", "MAP", "SYMMETRIC",
    "abs(", "NAN", "DATE", "--", ";",
])


@settings(max_examples=examples(600), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(_SOUP, min_size=1, max_size=12), glue=st.sampled_from([" ", ""]))
def test_token_soup(parts, glue):
    _check(glue.join(parts))


@settings(max_examples=examples(300), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_predicate_shaped_soup(data):
    """Predicates of the subset's shapes, with an odd token swapped in now and then."""
    atoms = st.one_of(
        st.tuples(_SOUP, st.sampled_from(["=", "<>", "<", ">=", "<=>", "IS", "IS NOT", "IN", "NOT IN",
                                           "LIKE", "NOT BETWEEN", "BETWEEN"]), _SOUP, _SOUP, _SOUP),
    ).map(lambda t: " ".join(t[:3]) if t[1] not in ("IN", "NOT IN", "BETWEEN", "NOT BETWEEN")
          else f"{t[0]} {t[1]} ({t[2]}, {t[3]})" if "IN" in t[1] else f"{t[0]} {t[1]} {t[2]} AND {t[3]}")
    text = data.draw(st.recursive(atoms, lambda kids: st.one_of(
        st.tuples(kids, st.sampled_from([" AND ", " OR "]), kids).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
        kids.map(lambda k: f"NOT {k}")), max_leaves=5))
    _check(text)


def test_shared_and_separate_columns_hash_and_compare_alike():
    """The fast reader shares one node per column name; sqlglot's path makes one per mention.
    Equal trees hash alike either way (flat nodes hash without the cache, deep ones with it)."""
    text = " AND ".join(f"(x = {i} OR y IN ({', '.join(str(j) for j in range(i % 12 + 1))}, -1))"
                        for i in range(50))
    fast, slow = _fast_sql.read(text), read_with_sqlglot(text)
    assert fast.args[0].args[0].left is fast.args[1].args[0].left
    assert fast.args[0].args[0].left is not slow.args[0].args[0].left
    assert fast == slow and hash(fast) == hash(slow)
    assert hash(fast.args[3]) == hash(slow.args[3]) and fast.args[3] == slow.args[3]
    assert fast != read_with_sqlglot(text.replace("-1", "-3")) and hash(fast) != hash(
        read_with_sqlglot(text.replace("-1", "-3")))


def test_long_in_lists_compare_as_their_literals_do():
    """Tuples of untyped integer literals (join keys) are compared by their values at once;
    any other literal among them (a bool, a float, a typed integer) is compared as before."""
    col = n.Column(("id",))

    def in_list(*tail, head=1000):
        return n.InList(col, tuple(n.Literal(i) for i in range(head)) + tail)

    assert in_list() == in_list() and hash(in_list()) == hash(in_list())
    assert in_list(n.Literal(5)) != in_list(n.Literal(6))
    assert in_list(n.Literal(1)) != in_list(n.Literal(True))
    assert in_list(n.Literal(1)) != in_list(n.Literal(1.0))
    assert in_list(n.Literal(1)) != in_list(n.Literal(1, pa.int32()))
    assert in_list(n.Literal(1, pa.int32())) == in_list(n.Literal(1, pa.int32()))
    assert in_list(head=3) != in_list(head=4)
