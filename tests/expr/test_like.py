"""LIKE escapes, shared by every front end: ``like_escape`` against DuckDB, ``dangling_escape``
and how ``parse_like`` uses it, and the front ends that need no SQL parser (builder, pyarrow,
Spark) not loading sqlglot."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.errors import PatternError
from prune_engine.expr.like import dangling_escape, like_escape, parse_like
from tests.budget import examples
from tests.oracle.duck import connect


@pytest.fixture(scope="module")
def duck():
    con = connect()
    yield con
    con.close()  # an open DuckDB 1.x database holds ~19 GB of address space


@pytest.mark.parametrize("text", ["a%b", "a_b", "a\\b", "%%", "plain", "ñ_%\\"])
def test_like_escape_matches_only_the_text(duck, text):
    pattern = like_escape(text)
    probes = [text, text + "x", "x" + text, text.replace("%", "z").replace("_", "z"), ""]
    got = [duck.execute("SELECT ? LIKE ? ESCAPE '\\'", [p, pattern]).fetchall()[0][0] for p in probes]
    assert got == [p == text for p in probes]


@pytest.mark.parametrize(("pattern", "escape", "dangles"), [
    ("", "!", False), ("!", "!", True), ("a!", "!", True), ("a!!", "!", False), ("a!!!", "!", True),
    ("!%", "!", False), ("a!%!", "!", True), ("a\\", "\\", True), ("a\\", "!", False),
    ("a!", None, False), ("a!", "", False),
])
def test_dangling_escape(pattern, escape, dangles):
    assert dangling_escape(pattern, escape) is dangles
    if dangles:
        with pytest.raises(PatternError, match="ends with its escape character"):
            parse_like(pattern, escape)
    else:
        parse_like(pattern, escape)


@settings(max_examples=examples(200), deadline=None)
@given(pattern=st.text(alphabet="a!%_", max_size=8))
def test_dangling_escape_is_an_odd_run_of_final_escapes(pattern):
    # escapes pair from the left, each with the next character: whatever precedes the final run
    # of escape characters, the run dangles exactly when its length is odd
    run = len(pattern) - len(pattern.rstrip("!"))
    assert dangling_escape(pattern, "!") is (run % 2 == 1)


_NO_SQLGLOT = textwrap.dedent("""
    import sys

    import pyarrow as pa
    import pyarrow.compute as pc

    import prune_engine as pe
    import prune_engine.spark._catalyst  # the Spark front end reads Catalyst, not SQL text

    stats = pa.table({
        "container": ["a", "b"],
        "num_records": [10, 10],
        "min_values": [{"x": 0, "s": "a"}, {"x": 6, "s": "m"}],
        "max_values": [{"x": 4, "s": "c"}, {"x": 9, "s": "z"}],
        "null_count": [{"x": 0, "s": 0}, {"x": 0, "s": 0}],
    })
    expr = (pe.col("x") > pe.lit(5)) & pe.col("s").like("n!%%", "!")
    assert pe.prune(stats, expr).to_pylist() == [False, True]
    assert pe.explain(stats, expr).column("keep").to_pylist() == [False, True]
    assert pe.prune(stats, pc.field("x") > 5).to_pylist() == [False, True]
    assert "sqlglot" not in sys.modules and "prune_engine.expr.sql" not in sys.modules

    assert pe.prune(stats, "x > 5 AND s LIKE 'n!%%' ESCAPE '!'").to_pylist() == [False, True]
    assert "sqlglot" in sys.modules
    print("ok")
""")


def test_builder_predicates_do_not_load_sqlglot():
    # a fresh interpreter: this test process has long since imported the SQL front end
    done = subprocess.run([sys.executable, "-c", _NO_SQLGLOT], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
