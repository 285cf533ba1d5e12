"""Test helpers for the differential soundness test of prune_engine against a row-level oracle.

- :mod:`tests.oracle.data`: random Arrow tables of every supported type, split into containers;
- :mod:`tests.oracle.stats`: their statistics (computed here, by ``pe.stats_from_arrow``, and through
  Parquet row groups by ``pe.collect_stats``), and sound degradations of them;
- :mod:`tests.oracle.predicates`: random predicates as SQL text for prune_engine and for DuckDB;
- :mod:`tests.oracle.duck`: DuckDB evaluating a predicate on the actual rows;
- :mod:`tests.oracle.check`: the soundness check and self-contained failure reports;
- :mod:`tests.oracle.classify`: the same check both ways for ``pe.classify`` ("none" and "all").

The rule checked: a container that holds a row on which the predicate is TRUE is never pruned.
"""
