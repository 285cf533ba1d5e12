"""Spark's ``RLIKE`` (Java regexes) against the engine's RE2 reading of the same pattern.

Each string is its own container with an n-gram index; a pattern the engine is allowed to read
(:func:`engine_reads_alike`) must keep every string Java finds a match in (Spark decides, on
the rows). The patterns Java reads differently from RE2 are refused."""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.spark._java_regex import engine_reads_alike

STRINGS = ["abc", "abc\n", "xabcx", "a.c", "a]c", "[ab]c", "ac", "a\u2028", "ABC", "bc",
           "tab\tx", "a$b", "\U0001f600ab", "ab" * 5, "", "q{2}", "aab", "a\u0085",
           "http://shop.example/cart/12", "c[", "a&&b", "a\x0bb", "a\nb"]

READ_ALIKE = [
    "^abc", "abc", "a.c", "a\\.c", "(ab|bc)c?", "[ab]c", "a+b", "a{2}b", "a{1,3}?b",
    "\\Qa.c\\E", "\\x61bc", "\\x{1F600}ab", "^https?://shop\\.example/(cart|checkout)/\\d+",
    "(?:ab)+", "(?<g>ab)c", "a\\]c", "[\\[]ab", "\\tx", "\\Aabc", "abc\\z", "\\babc\\b",
    "q\\{2\\}", "a\\$b", "[a-c]{2}", "\\p{L}bc", "a\\nb",
]
REFUSED = [
    "abc$", "a$", "[a[b]]c", "[a-z&&[^b]]c", "\\va", "a\\vb", "\\ha", "a\\Rb", "abc\\Z",
    "(?i)abc", "(?=a)abc", "(?<=a)bc", "(?<!x>y)bc", "a++b", "a{2}+b", "\\1", "\\0141",
    "[]a]c", "[^]a]c", "\\ea", "\\cAb", "\\u0061bc", "\\Nb", "[\\Qa\\E]b", "(?x) a b c",
    "(?>ab)c", "[\\b]a",
]


def test_patterns_java_and_re2_read_differently_are_refused():
    assert all(engine_reads_alike(p) for p in READ_ALIKE)
    assert not any(engine_reads_alike(p) for p in REFUSED)


@pytest.mark.spark
def test_the_engine_keeps_every_string_java_matches(spark):
    stats = pe.stats_from_arrow(pa.table({"s": STRINGS, "c": [str(i) for i in range(len(STRINGS))]}),
                                container="c", ngram=["s"], gram_size=3)
    df = spark.createDataFrame([(i, s) for i, s in enumerate(STRINGS)], "i int, s string")
    patterns = READ_ALIKE  # the refused ones never reach the engine (some are not even Java)
    df.createOrReplaceTempView("strings")
    java = spark.sql("SELECT i, " + ", ".join(
        f"s RLIKE {_sql_string(p)} AS m{k}" for k, p in enumerate(patterns)) +
        " FROM strings").collect()
    pruned_something = 0
    for k, pattern in enumerate(patterns):
        keep = pe.prune(stats, pe.col("s").rlike(pattern)).to_pylist()
        for row in java:
            if row[f"m{k}"]:
                assert keep[row.i], f"{pattern!r} matches {STRINGS[row.i]!r} in Java"
        pruned_something += not all(keep)
    assert pruned_something > len(READ_ALIKE) // 2, "the engine prunes with most patterns"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


@pytest.mark.spark
def test_why_some_patterns_are_refused(spark):
    """Read as RE2, these would prune strings Java matches: ``$`` before a final newline,
    and a nested class (a union in Java, a literal ``[`` then ``]`` in RE2)."""
    stats = pe.stats_from_arrow(pa.table({"s": ["abc\n", "bc"], "c": ["0", "1"]}),
                                container="c", ngram=["s"], gram_size=3)
    for pattern, text in [("abc$", "abc\n"), ("[a[b]]c", "bc")]:
        assert spark.sql(f"SELECT {_sql_string(text)} RLIKE {_sql_string(pattern)}").first()[0]
        keep = dict(zip(["abc\n", "bc"], pe.prune(stats, pe.col("s").rlike(pattern)).to_pylist()))
        assert keep[text] is False, "the engine's RE2 reading would prune Java's match"
        assert not engine_reads_alike(pattern)
