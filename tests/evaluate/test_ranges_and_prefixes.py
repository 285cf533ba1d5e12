"""Two min/max rules: a ``NOT IN`` that covers a container's whole integer range, and the
anchored prefix of a regular expression.

- ``x NOT IN (S)`` is FALSE for every row of a container whose ``[min, max]`` holds only
  integers (dates, timestamps, small decimals: values on a grid) that are all in ``S``.
- ``regexp_matches(s, '^abc...')`` needs a value starting with ``abc``: a prefix range.

Both are checked against DuckDB on the rows (one container per group of rows, with NULLs, the
types' limits and neighbours), and shown to prune where the old rules kept. The prefix reader
is also checked against Python's ``re`` on random patterns (its reading must be a necessary
condition of a match) and against Spark's ``RLIKE`` in ``tests/spark/test_where.py``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import re

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.expr.regex import anchored_prefix
from tests.oracle.duck import DuckOracle
from tests.oracle.data import CID

# ------------------------------------------------------------------------------ NOT IN ranges

#: (type, values on its grid as Python objects, SQL literal of a value)
GRIDS = {
    "int8": (pa.int8(), list(range(-128, -118)) + list(range(118, 128)), str),
    "int64": (pa.int64(), [-(2**63) + i for i in range(6)] + list(range(-3, 4))
              + [2**63 - 1 - i for i in range(6)], str),
    "uint64": (pa.uint64(), list(range(6)) + [2**64 - 1 - i for i in range(6)], str),
    "date": (pa.date32(), [dt.date(2024, 2, 26) + dt.timedelta(days=i) for i in range(8)],
             lambda d: f"DATE '{d.isoformat()}'"),
    "decimal": (pa.decimal128(9, 2), [decimal.Decimal(i) / 100 for i in range(-4, 5)],
                lambda d: f"CAST('{d}' AS DECIMAL(9, 2))"),
}


def _containers(rnd: random.Random, values: list, n: int) -> list[list]:
    """``n`` containers, each a run of neighbouring grid values (some with NULLs, one all
    NULL, one empty)."""
    out = [[None, None], []]
    for _ in range(n):
        start = rnd.randrange(len(values))
        run = values[start:start + rnd.randint(1, 4)]
        out.append(run + ([None] if rnd.random() < 0.3 else []))
    return out


@pytest.mark.parametrize("name", list(GRIDS))
def test_not_in_covering_the_range_is_sound_and_prunes(name):
    typ, values, literal = GRIDS[name]
    rnd = random.Random(name)
    groups = _containers(rnd, values, 40)
    table = pa.table({"x": pa.array([v for g in groups for v in g], typ),
                      CID: pa.array([str(i) for i, g in enumerate(groups) for _ in g])})
    stats = pe.stats_from_arrow([pa.table({"x": pa.array(g, typ)}) for g in groups])
    cases = []
    for _ in range(60):
        start = rnd.randrange(len(values))
        members = values[start:start + rnd.randint(1, 6)]
        if rnd.random() < 0.3 and len(members) > 2:  # a gap: covers less
            members = members[:1] + members[2:]
        items = ", ".join(literal(v) for v in members)
        cases.append((f"x NOT IN ({items})", [literal(v) for v in members]))
    answers = DuckOracle().matching(table, [sql for sql, _ in cases])
    pruned_by_range = 0
    for (sql, members), matching in zip(cases, answers):
        assert matching is not None, sql
        mask = pe.prune(stats, sql).to_pylist()
        kept = {str(i) for i, k in enumerate(mask) if k}
        assert matching <= kept, (sql, sorted(matching - kept))
        # the old rule pruned only single-valued containers: count what the range adds
        pruned_by_range += sum(1 for i, g in enumerate(groups) if not mask[i]
                               and len({v for v in g if v is not None}) > 1)
    assert pruned_by_range > 0


def test_not_in_with_a_gap_keeps():
    stats = pe.stats_from_arrow([pa.table({"x": pa.array([1, 4], pa.int64())})])
    assert pe.prune(stats, "x NOT IN (1, 2, 3, 4)").to_pylist() == [False]
    assert pe.prune(stats, "x NOT IN (1, 2, 4)").to_pylist() == [True], "3 may be there"
    floats = pe.stats_from_arrow([pa.table({"x": pa.array([1.0, 2.0])})])
    assert pe.prune(floats, "x NOT IN (1.0, 2.0)").to_pylist() == [True], "1.5 may be there"


# ------------------------------------------------------------------------------ regex prefixes


@pytest.mark.parametrize("pattern, prefix", [
    ("^user_0000[0-9]$", "user_0000"), ("^abc", "abc"), ("abc", ""), ("^", ""),
    ("^ab*c", "a"), ("^ab?c", "a"), ("^ab{0,2}", "a"), ("^ab+c", "ab"), ("^a\\.b", "a.b"),
    ("^a\\.?b", "a"), ("^a\\db", "a"), ("^a\\Qx\\E", "a"), ("^ab|cd", ""), ("^(ab)", ""),
    ("(?i)^ab", ""), ("^ab(?i)c", ""), ("^a.b", "a"), ("^日本[a-z]", "日本"), ("^a\\", "a"),
    ("^a$b", "a"), ("^a[bc]", "a"), ("^a\\\\b", "a\\b"),
])
def test_anchored_prefix(pattern, prefix):
    assert anchored_prefix(pattern) == prefix


def test_anchored_prefix_is_necessary_for_random_patterns():
    """Every string ``re`` (a search, as RE2 and Java for these constructs) finds a match in
    starts with the prefix."""
    rnd = random.Random(3)
    atoms = ["a", "b", "ab", ".", "[ab]", "\\.", "\\d", "x", "(a|b)", "|", "$", "^"]
    quants = ["", "", "", "*", "+", "?", "{0,2}", "{1}"]
    words = ["", "a", "b", "ab", "ba", "aab", "a.b", "xab", "a1", "bb", ".", "abab", "1"]
    for _ in range(3000):
        pattern = "^" * (rnd.random() < 0.8) + "".join(
            rnd.choice(atoms) + rnd.choice(quants) for _ in range(rnd.randint(1, 4)))
        try:
            compiled = re.compile(pattern)
        except re.error:
            continue
        prefix = anchored_prefix(pattern)
        for word in words:
            if compiled.search(word):
                assert word.startswith(prefix), (pattern, word, prefix)


def test_regex_prefix_is_sound_and_prunes():
    rnd = random.Random(11)
    groups = [[f"{rnd.choice(['user', 'usr', 'admin'])}_{rnd.randint(0, 30):04d}{c}"
               for c in rnd.sample("abc", 2)] + ([None] if i % 4 == 0 else [])
              for i in range(40)] + [[None]]
    table = pa.table({"s": pa.array([v for g in groups for v in g], pa.string()),
                      CID: pa.array([str(i) for i, g in enumerate(groups) for _ in g])})
    stats = pe.stats_from_arrow([pa.table({"s": pa.array(g, pa.string())}) for g in groups])
    patterns = ["^user_00[0-1][0-9]", "^usr_", "^admin_0007", "^user_0003a$", "^us.r",
                "^user_001?", "^zzz", "^user_\\d+", "user_0001", "^admin|^user"]
    cases = [f"regexp_matches(s, '{p}')" for p in patterns]
    cases += [f"NOT regexp_matches(s, '{p}')" for p in patterns]
    answers = DuckOracle().matching(table, cases)
    pruned = 0
    for sql, matching in zip(cases, answers):
        assert matching is not None, sql
        mask = pe.prune(stats, sql).to_pylist()
        kept = {str(i) for i, k in enumerate(mask) if k}
        assert matching <= kept, (sql, sorted(matching - kept))
        pruned += mask.count(False)
    assert pruned > 0
    reason = pe.explain(stats, "regexp_matches(s, '^zzz')").column("reason").to_pylist()
    assert reason[0] == "regexp_matches(s, '^zzz')"
