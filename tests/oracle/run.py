"""One differential round: a random case, its statistics from every source, random predicates,
all checked against DuckDB. Shared by the hypothesis test and the seeded sweep.

>>> import random
>>> from tests.oracle.check import Tally
>>> from tests.oracle.duck import DuckOracle
>>> tally = Tally(DuckOracle())
>>> run_round(tally, random.Random(0), n_predicates=3)
>>> tally.cases > 0
True
"""

from __future__ import annotations

import pathlib
import tempfile

from .boundary import boundary_case, boundary_predicates
from .check import Tally
from .data import FAMILIES, random_case
from .predicates import random_predicate
from .stats import arrow_stats, blank, degrade, parquet_stats, reference_stats


def family_columns(rnd, family: str) -> list[str]:
    """2 to 4 top-level columns of one family (``"mixed"``: of any family)."""
    if family == "mixed":
        pool = [c for names in FAMILIES.values() for c in names]
    else:
        pool = FAMILIES[family]
    k = rnd.randint(min(2, len(pool)), min(4, len(pool)))
    return rnd.sample(pool, k)


def run_round(tally: Tally, rnd, *, family: str = "mixed", n_predicates: int = 10,
              max_containers: int = 8, max_rows: int = 12, parquet: bool = False,
              label: str = "") -> None:
    """Check ``n_predicates`` random predicates over one random case, against the statistics of
    every source: the exact reference, ``pe.stats_from_arrow``, (``parquet=True``) ``pe.collect_stats``
    over a Parquet file, and a sound degradation of each."""
    columns = family_columns(rnd, family) if family != "mixed" or rnd.random() < 0.5 else None
    case = random_case(rnd, columns, max_containers=max_containers, max_rows=max_rows)
    ref = reference_stats(case, rnd)
    arrow = arrow_stats(case)
    sources = {"reference": ref, "reference+degraded": degrade(ref, rnd),
               "stats_from_arrow": arrow, "stats_from_arrow+degraded": degrade(arrow, rnd)}
    preds = [random_predicate(rnd, case) for _ in range(n_predicates)]
    tally.check(case, sources, preds, label=label)
    if parquet:
        pq_stats, pq_case = _through_parquet(case)
        tally.check(pq_case, {"collect_stats": pq_stats, "collect_stats+degraded": degrade(pq_stats, rnd)},
                    preds, label=label)


def _through_parquet(case):
    """``collect_stats`` over ``case`` written to Parquet, and the case as the file holds it."""
    with tempfile.TemporaryDirectory() as tmp:
        return parquet_stats(case, pathlib.Path(tmp) / "data.parquet")


def run_boundary_round(tally: Tally, rnd, column: str, other: str | None = None, *, budget: int = 600,
                       label: str = "") -> None:
    """Check ``budget`` boundary predicates (:mod:`tests.oracle.boundary`) over one column of
    boundary values (or the comparisons of two), against exact statistics, the same with the
    min or the max unknown everywhere, ``pe.stats_from_arrow`` and ``pe.collect_stats`` over a
    Parquet file."""
    case = boundary_case(rnd, column, other)
    ref = reference_stats(case, rnd)
    sources = {"reference": ref, "reference-no-min": blank(ref, "min_values"),
               "reference-no-max": blank(ref, "max_values"), "stats_from_arrow": arrow_stats(case)}
    preds = boundary_predicates(rnd, case, budget)
    tally.check(case, sources, preds, label=label)
    pq_stats, pq_case = _through_parquet(case)
    tally.check(pq_case, {"collect_stats": pq_stats}, preds, label=label)
