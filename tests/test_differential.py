"""Differential soundness test: prune_engine against DuckDB on the actual rows (issue #2).

Random tables of every supported type are split into containers; their statistics come from
an exact reference, from ``pe.stats_from_arrow``, and from sound degradations of both; random
predicates (nested AND / OR / NOT over every operator) are evaluated by DuckDB row by row. A
container holding a matching row must never be pruned. Hypothesis drives the randomness (and
shrinks a failure); the failure message is a self-contained minimal reproduction.

The large seeded sweep, also through Parquet row groups, is ``test_differential_sweep.py``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.oracle.check import Tally
from tests.oracle.data import FAMILIES
from tests.oracle.duck import DuckOracle
from tests.oracle.run import run_round

ORACLE = DuckOracle()


@pytest.mark.parametrize("family", [*FAMILIES, "mixed"])
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_no_container_with_a_matching_row_is_pruned(family, rnd):
    tally = Tally(ORACLE)
    run_round(tally, rnd, family=family, n_predicates=8, max_containers=6, max_rows=6)
    assert not tally.violations, "\n\n".join(tally.violations)


def test_engine_prunes_a_reasonable_share():
    """A "keep everything" engine is sound but useless: with exact statistics, a fair share of
    the containers without a matching row must be pruned (a seeded, deterministic run)."""
    tally = Tally(ORACLE)
    for seed in range(25):
        run_round(tally, random.Random(seed), n_predicates=10, label=f"seed={seed}")
    assert not tally.violations, "\n\n".join(tally.violations)
    rate = tally.pruned["reference"] / tally.prunable["reference"]
    assert tally.prunable["reference"] > 500, "too few prunable containers to judge the engine"
    assert rate > 0.2, f"pruned only {rate:.0%} of the containers that hold no matching row"
