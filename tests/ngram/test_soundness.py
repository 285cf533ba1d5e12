"""Differential soundness: the index never prunes a container that DuckDB finds a match in.

For random containers of awkward strings (non-ASCII, ``%``/``_``/``\\`` in the data, empty
strings, nulls) and random patterns (LIKE with and without ESCAPE, ILIKE, regex, IN), DuckDB
evaluates the pattern on every row; a container with a matching row must be kept. Both
representations are checked (exact sets, and Bloom filters, including tiny ones that answer
"maybe" often), and for gram sizes 2..4. The sweeps also count prunes, so a probe that always
answers "keep" fails.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.ngram.ngram_cases import Duck, flatten, random_containers, random_like, random_regex
from prune_engine.ngram.build import build_index
from prune_engine.errors import PatternError
from prune_engine.errors import NgramError
from prune_engine.ngram.probe import equals_may_match, like_may_match, regex_may_match

DUCK = Duck()
MODES = [("exact", 0.01, 3), ("bloom", 0.01, 3), ("bloom", 0.3, 3), ("exact", 0.01, 2),
         ("auto", 0.01, 4)]


def _ends_with_escape(pattern: str, escape: str | None) -> bool:
    """Does the pattern end with an escape that escapes nothing? We reject such a pattern up
    front (as SQL does); DuckDB raises only when a row's match gets that far, so on some data
    it returns no rows instead."""
    if not escape:
        return False
    trailing = len(pattern) - len(pattern.rstrip(escape))
    return trailing % 2 == 1


def _check_case(rng, mode, fpp, n) -> tuple[int, int]:
    """One random case: (containers pruned, containers checked); asserts soundness."""
    containers = random_containers(rng)
    values, offsets = flatten(containers)
    index = build_index(values, offsets, gram_size=n, case_insensitive=True, fpp=fpp, mode=mode)
    pruned = checked = 0
    for kind in ("like", "ilike", "regex", "in"):
        if kind == "regex":
            pattern, escape = random_regex(rng, containers), None
            mask = regex_may_match(index, pattern)
        elif kind == "in":
            pool = [v for rows in containers for v in rows] + ["zz", "ab"]
            pattern, escape = rng.sample(pool, rng.randint(0, min(3, len(pool)))), None
            mask = equals_may_match(index, pattern)
        else:
            pattern, escape = random_like(rng, containers)
            try:
                mask = like_may_match(index, pattern, escape, kind == "ilike")
            except (NgramError, PatternError):
                assert _ends_with_escape(pattern, escape) or DUCK.matching(
                    containers, kind, pattern, escape) is None, (
                    f"rejected {pattern!r} ESCAPE {escape!r} that DuckDB accepts")
                continue
        truth = DUCK.matching(containers, kind, pattern, escape)
        if truth is None:
            continue  # DuckDB rejects the pattern: no row can be returned
        unsound = np.nonzero(truth & ~mask)[0]
        assert not len(unsound), (
            f"{kind} {pattern!r} escape={escape!r} mode={mode} n={n}: pruned container "
            f"{unsound[0]} = {containers[unsound[0]]!r} that holds a match")
        pruned += int((~mask).sum())
        checked += len(containers)
    return pruned, checked


@pytest.mark.parametrize("mode,fpp,n", MODES, ids=[f"{m}-fpp{f}-n{n}" for m, f, n in MODES])
def test_seeded_sweep_never_prunes_a_match(mode, fpp, n):
    pruned = checked = 0
    for seed in range(150):
        p, c = _check_case(random.Random(seed), mode, fpp, n)
        pruned += p
        checked += c
    assert pruned > checked * 0.05, f"the index pruned only {pruned} of {checked}: not probing"


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), mode=st.sampled_from(MODES))
def test_hypothesis_never_prunes_a_match(rng, mode):
    _check_case(rng, *mode)
