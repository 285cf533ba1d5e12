"""``python -m tests.corrupt``: the corrupt-input fuzzer's command (see :mod:`tests.corrupt`)."""

from __future__ import annotations

import argparse
import random
import sys

from tests.corrupt import driver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.corrupt",
        description="Mutate real inputs (Parquet footers, Bloom filters, dictionary pages, "
                    "Iceberg metadata, saved statistics, n-gram indexes) and run the library on "
                    "them in child processes; report crashes, hangs, foreign exceptions and bad "
                    "refusal messages.")
    parser.add_argument("--seed", type=int, default=None, help="master seed (default: a fresh one)")
    parser.add_argument("--minutes", type=float, default=5.0, help="time budget (default 5)")
    parser.add_argument("--count", type=int, default=None,
                        help="run this many mutants instead of a time budget")
    parser.add_argument("--jobs", type=int, default=2, help="child processes at a time (default 2)")
    parser.add_argument("--batch", type=int, default=200, help="mutants per child (default 200)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds one mutant may take before it is a hang (default 30)")
    parser.add_argument("--replay", metavar="SEED-INDEX",
                        help="run one mutant again, with the tracebacks of its stages")
    parser.add_argument("--after", metavar="SEED-INDEX",
                        help="with --replay: if the mutant alone finds nothing, run it after "
                             "the mutants from this one on, in one process (as printed)")
    args = parser.parse_args(argv)
    if args.replay:
        return 1 if driver.replay(args.replay, args.after, args.timeout) else 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    budget = f"--count {args.count}" if args.count is not None else f"--minutes {args.minutes:g}"
    again = f"python -m tests.corrupt --seed {seed} {budget}"
    print(f"corrupt-input fuzz, seed {seed}: reproduce with  {again}", flush=True)
    tally = driver.fuzz(seed, count=args.count,
                        minutes=None if args.count is not None else args.minutes,
                        jobs=args.jobs, batch=args.batch, timeout=args.timeout,
                        report=lambda line: print(line, flush=True))
    print(tally.summary())
    print(f"seed {seed}: reproduce the run with  {again}; one mutant with  "
          f"python -m tests.corrupt --replay {seed}-INDEX")
    return 1 if tally.findings else 0


if __name__ == "__main__":
    sys.exit(main())
