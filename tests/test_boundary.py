"""Soundness at the limits of every type (issue #8): boundary values as data and as literals,
through every operator, arithmetic with small and huge constants, casts, and comparisons of
two columns of different types, checked against DuckDB on the rows (integers widened to
HUGEINT, and also wrapped around the narrowest type an engine may compute in).

Deterministic: each case has its own fixed seed. ``make fuzz`` runs the same with fresh seeds.
"""

from __future__ import annotations

import random

import pytest

from tests.oracle.boundary import BOUNDARY_COLUMNS, BOUNDARY_PAIRS
from tests.oracle.check import Tally
from tests.oracle.duck import DuckOracle
from tests.oracle.run import run_boundary_round

ORACLE = DuckOracle()


def check_boundary(seed: str, *columns: str, budget: int = 600) -> Tally:
    tally = Tally(ORACLE)
    run_boundary_round(tally, random.Random(seed), *columns, budget=budget, label=f"seed={seed!r}")
    assert not tally.violations, f"{len(tally.violations)} violations\n\n" + "\n\n".join(tally.violations[:10])
    return tally


@pytest.mark.parametrize("column", BOUNDARY_COLUMNS)
def test_no_container_with_a_matching_row_is_pruned_at_the_type_limits(column):
    tally = check_boundary(f"boundary-{column}", column)
    tally.assert_answered(100)
    assert not tally.rejected, f"prune_engine refused predicates DuckDB runs: {dict(tally.rejected)}"


@pytest.mark.parametrize("pair", BOUNDARY_PAIRS, ids=["-".join(p) for p in BOUNDARY_PAIRS])
def test_columns_of_two_types_compare_soundly_at_their_limits(pair):
    tally = check_boundary(f"boundary-{pair[0]}-{pair[1]}", *pair)
    tally.assert_answered(100)
