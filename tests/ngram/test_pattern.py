"""Pattern -> gram query: the LIKE reading, the regex reading, and the case fold vs DuckDB."""

from __future__ import annotations

import itertools

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.ngram.fold import fold_sources, fold_table, fold_text
from prune_engine.ngram.format import END_MARK as E
from prune_engine.ngram.format import START_MARK as S
from prune_engine.expr import like
from prune_engine.ngram.pattern import TRUE, dnf, equals_query, like_query, regex_query
from prune_engine.ngram.reference import evaluate
from tests.budget import examples


def g(text: str, start: bool = False, end: bool = False) -> tuple:
    return ("gram", ((S,) if start else ()) + tuple(map(ord, text)) + ((E,) if end else ()))


def test_fold_table_is_duckdb_lower_on_every_code_point():
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    chars = pa.table({"s": pa.array([chr(c) for c in cps])})
    con = duckdb.connect()
    lowered = con.sql("SELECT lower(s) AS l FROM chars").to_arrow_table().column("l").to_pylist()
    fold = fold_table()
    mine = [chr(fold[c]) if c < len(fold) else chr(c) for c in cps]
    diff = [(hex(c), a, b) for c, a, b in zip(cps, mine, lowered) if a != b]
    assert not diff, f"fold disagrees with DuckDB lower() on {len(diff)} code points: {diff[:10]}"
    assert not {ord("%"), ord("_")} & fold_sources(), "a fold must not create LIKE wildcards"


def test_fold_has_no_context_rules():
    assert fold_text("ΟΔΟΣ") == "οδοσ", "no final sigma (DuckDB folds code point by code point)"
    assert fold_text("İ") == "i", "U+0130 folds to one code point, as in DuckDB"


@pytest.mark.parametrize("pattern,escape,tokens", [
    ("a%b_c", None, ("a", "%", "b", "_", "c")),
    ("a\\%b", None, ("a\\", "%", "b")),           # no default escape character
    ("a\\%b", "\\", ("a%b",)),
    ("!!!_", "!", ("!_",)),
    ("a", "", ("a",)),                              # an empty escape is no escape
])
def test_like_is_read_as_sql_reads_it(pattern, escape, tokens):
    assert like.parse_like(pattern, escape) == tokens


@pytest.mark.parametrize("pattern,expected", [
    ("abc%", ("and", (g("ab", start=True), g("abc")))),
    ("%xyz", ("and", (g("xyz"), g("yz", end=True)))),
    ("abc", ("and", (g("ab", start=True), g("abc"), g("bc", end=True)))),
    ("%a%b%", TRUE),                                # no run of n code points: keep
    ("ab_cd%", g("ab", start=True)),                # '_' breaks the run: "ab_" is not a gram
    ("%abc%def%", ("and", (g("abc"), g("def")))),
    ("%", TRUE),
    ("", TRUE),
])
def test_like_query_uses_only_literal_runs(pattern, expected):
    assert like_query(pattern, 3) == expected, "the paimon design treated _ as a literal"


def test_ilike_query_uses_folded_pattern_and_keeps_cased_escape():
    assert like_query("%ABC%", 3, case_insensitive=True) == g("abc")
    assert like_query("%AB!%C%", 3, escape="a", case_insensitive=True) == TRUE


def test_equals_query_is_or_of_anchored_values():
    assert equals_query(["ab", None], 3) == ("and", (g("ab", start=True), g("ab", end=True)))
    assert equals_query([None], 3) is None
    assert equals_query(["a", "bcd"], 3)[0] == "or"


@pytest.mark.parametrize("pattern,expected", [
    ("abc", g("abc")),
    ("^abc", ("and", (g("ab", start=True), g("abc")))),
    ("a[bc]d", ("or", (g("abd"), g("acd")))),
    ("(abc|xyz)", ("or", (g("abc"), g("xyz")))),
    ("abc.*xyz", ("and", (g("abc"), g("xyz")))),
    ("ab+c", TRUE),                                 # b+ is not exact: no 3-gram survives
    ("abcd?e", ("or", (("and", (g("abc"), g("bce"))), ("and", (g("abc"), g("bcd"), g("cde")))))),
    ("(?i)abc", TRUE),                              # flags change what literals mean
    ("a{,2}bc", TRUE),                              # RE2 reads '{' literally here; we do not guess
    ("\\x{4e2d}文x", g("中文x")),
    ("[a-z]bc", TRUE),                              # a big class is any character
    ("a\\bbc", g("abc")),                           # zero-width tests only narrow matches
    ("$^abc", TRUE),                                # markers out of place: keep
    ("(abc", TRUE),                                 # malformed: keep
])
def test_regex_query(pattern, expected):
    got = regex_query(pattern, 3)
    if got[0] in ("or", "and") and expected[0] == got[0]:
        assert set(map(str, got[1])) == set(map(str, expected[1])), got
    else:
        assert got == expected


GRAMS = [("gram", (c,)) for c in range(4)]
queries = st.recursive(st.sampled_from(GRAMS + [TRUE]),
                       lambda sub: st.tuples(st.sampled_from(["and", "or"]),
                                             st.lists(sub, min_size=1, max_size=3).map(tuple)),
                       max_leaves=12)


@settings(max_examples=examples(100))
@given(queries, st.integers(1, 8))
def test_dnf_is_implied_by_the_query_and_equal_within_its_budget(query, max_terms):
    """For every set of present grams: the query true => some term true (never prunes a match);
    and with a budget large enough for every product, the two agree."""
    def holds(terms, present):
        return any(all(gram in present for gram in term) for term in terms)

    small, full = dnf(query, max_terms), dnf(query, 10 ** 6)
    for bits in itertools.product([False, True], repeat=len(GRAMS)):
        present = {gram[1] for gram, on in zip(GRAMS, bits) if on}
        truth = evaluate(query, lambda gram: gram in present)
        assert holds(full, present) == truth, f"{query} -> {full}"
        assert holds(small, present) or not truth, f"{query} -> {small} (budget {max_terms})"


def test_dnf_keeps_a_long_or_and_leaves_out_a_factor_past_the_budget():
    in_list = ("or", tuple(("gram", (c,)) for c in range(300)))
    assert len(dnf(in_list, max_terms=4)) == 300, "an OR is as long as the query: never cut"
    pairs = [("or", (("gram", (10 + 2 * i,)), ("gram", (11 + 2 * i,)))) for i in range(4)]
    assert len(dnf(("and", tuple(pairs)), max_terms=4)) == 4, "2 x 2, then two factors left out"
