"""The scan path: prune, then read only the kept row groups and only the needed nested leaves.

``pe.scan`` / ``pe.scan_batches`` (:mod:`prune_engine.scanning.api`) on top of: column paths
(:mod:`.paths`), the unified schema and each file's column chunks (:mod:`.schema`), arrays in
the selected shape (:mod:`.shape`), the row-level filter (:mod:`.rows`) and the pruning of
nested predicates (:mod:`.pruning`). This module imports nothing, so that ``import
prune_engine`` stays fast.
"""
