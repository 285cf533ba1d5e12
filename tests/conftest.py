"""Hypothesis profiles: the same commit gives the same examples on every machine.

- ``ci`` (the default, what ``make test`` runs): derandomized (examples derived from each test
  itself), no example database, no deadline. The seeded sweeps are fixed as well.
- ``fuzz`` (``make fuzz``): fresh randomness and :data:`tests.budget.SCALE` times the examples;
  the Makefile passes ``--hypothesis-seed`` and prints it, so that a find reproduces.
"""

from __future__ import annotations

import os

from hypothesis import settings

from tests.spark_sessions import classic_spark, connect, session, spark  # noqa: F401 - fixtures

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("fuzz", derandomize=False, database=None, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
