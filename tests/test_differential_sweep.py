"""The large seeded differential sweep (issue #2), run in CI: thousands of random
(data, predicate) cases, with statistics from the exact reference, ``pe.stats_from_arrow``,
``pe.collect_stats`` over Parquet row groups, and sound degradations of each. Every container
DuckDB finds a matching row in must be kept; a fair share of the others must be pruned.

Deterministic: the seeds are fixed, so a failure reproduces with its seed
(``run_round(Tally(DuckOracle()), random.Random(seed), parquet=True)``).
"""

from __future__ import annotations

import random

import pytest

from tests.oracle.check import Tally
from tests.oracle.data import FAMILIES
from tests.oracle.duck import DuckOracle
from tests.oracle.run import run_round

ROUNDS = 700
PREDICATES_PER_ROUND = 12
FAMILY_ORDER = [*FAMILIES, "mixed", "mixed"]


@pytest.mark.slow
def test_seeded_sweep():
    tally = Tally(DuckOracle())
    for seed in range(ROUNDS):
        family = FAMILY_ORDER[seed % len(FAMILY_ORDER)]
        run_round(tally, random.Random(seed), family=family, n_predicates=PREDICATES_PER_ROUND,
                  parquet=True, label=f"seed={seed} family={family}")
    summary = _summary(tally)
    print(summary)
    assert not tally.violations, f"{len(tally.violations)} violations\n\n" + "\n\n".join(tally.violations[:40])
    assert tally.cases > 20_000, summary
    rejected = sum(tally.rejected.values())
    assert rejected < 0.05 * tally.cases, f"prune_engine refused too many predicates DuckDB runs\n{summary}"
    for source in ("reference", "stats_from_arrow", "collect_stats"):
        rate = tally.pruned[source] / tally.prunable[source]
        assert rate > 0.2, f"{source}: pruned only {rate:.0%} of the containers without a match\n{summary}"


def _summary(tally: Tally) -> str:
    lines = [f"checked {tally.cases} (statistics, predicate) pairs; DuckDB rejected {tally.duck_rejected} predicates"]
    for source in sorted(tally.prunable):
        lines.append(f"  {source:28s} pruned {tally.pruned[source]:6d} of {tally.prunable[source]:6d} "
                     f"containers without a match ({tally.pruned[source] / max(tally.prunable[source], 1):.0%})")
    for message, count in tally.rejected.most_common(10):
        lines.append(f"  refused x{count}: {message}\n      e.g. {tally.rejected_examples[message][:200]}")
    return "\n".join(lines)
