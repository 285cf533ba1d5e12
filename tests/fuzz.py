"""Exploration with fresh randomness (``make fuzz``): the differential sweeps on new seeds.

CI runs fixed seeds only. This driver runs rounds of the random differential test (through
Parquet footers too) and of the boundary sweep, each seeded from one master seed and its round
number, until the time budget is spent, and prints every violation with the command that
replays exactly that round. Every find becomes a regression test (a one-container case in
``tests/test_differential_regressions.py``).

    python -m tests.fuzz --seed 123 --minutes 5     # explore
    python -m tests.fuzz --replay 123-17            # replay round 17 of seed 123

>>> kind_of(0), kind_of(2)
('random', 'boundary')
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from tests.oracle.boundary import BOUNDARY_COLUMNS, BOUNDARY_PAIRS
from tests.oracle.check import Tally
from tests.oracle.data import FAMILIES
from tests.oracle.duck import DuckOracle
from tests.oracle.run import run_boundary_round, run_round


def kind_of(index: int) -> str:
    """Every third round is a boundary round, the others random rounds."""
    return "boundary" if index % 3 == 2 else "random"


def run(tally: Tally, label: str) -> None:
    """Round ``label`` (``"<seed>-<index>"``), deterministic for its label."""
    index = int(label.rsplit("-", 1)[1])
    rnd = random.Random(label)
    if kind_of(index) == "boundary":
        target = rnd.choice([(c,) for c in BOUNDARY_COLUMNS] + BOUNDARY_PAIRS)
        run_boundary_round(tally, rnd, *target, budget=300, label=f"replay={label}")
    else:
        family = rnd.choice([*FAMILIES, "mixed"])
        run_round(tally, rnd, family=family, n_predicates=12, parquet=index % 2 == 0, label=f"replay={label}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="master seed (default: a fresh one)")
    parser.add_argument("--minutes", type=float, default=5.0, help="time budget")
    parser.add_argument("--replay", help="run one round again, by its label <seed>-<index>")
    args = parser.parse_args(argv)
    oracle = DuckOracle()
    if args.replay:
        labels = iter([args.replay])
    else:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
        print(f"fuzz seed {seed}: reproduce with  python -m tests.fuzz --seed {seed}", flush=True)
        labels = (f"{seed}-{i}" for i in range(10**9))
    deadline = time.monotonic() + 60 * args.minutes
    rounds = cases = failed = 0
    for label in labels:
        tally = Tally(oracle)
        run(tally, label)
        rounds, cases = rounds + 1, cases + tally.cases
        if tally.violations:
            failed += 1
            print(f"\nround {label}: {len(tally.violations)} violation(s); replay with  "
                  f"python -m tests.fuzz --replay {label}\n{tally.violations[0]}", flush=True)
        if time.monotonic() > deadline:
            break
    print(f"\n{rounds} rounds, {cases} (statistics, predicate) pairs checked, {failed} round(s) with violations")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
