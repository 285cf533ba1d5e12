"""prune_engine: decide which files and Parquet row groups a query can skip, before reading them.

>>> import pyarrow as pa, prune_engine as pe
>>> stats = pa.table({
...     "container": ["a", "b"],
...     "num_records": [10, 10],
...     "min_values": [{"x": 0}, {"x": 6}],
...     "max_values": [{"x": 4}, {"x": 9}],
...     "null_count": [{"x": 0}, {"x": 0}],
... })
>>> pe.prune(stats, "x > 5").to_pylist()
[False, True]

A predicate (:data:`Predicate`) is SQL WHERE text, a builder expression (``pe.col("x") > 5``)
or a ``pyarrow.compute.Expression``; the package ships its annotations (``py.typed``) for
type checkers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prune_engine._lazy import lazy_loader as _lazy_loader
from prune_engine.errors import (
    ColumnPathError,
    IndexCorruptError,
    NgramError,
    PatternError,
    PruneEngineError,
    ScanError,
    SqlParseError,
    StatsError,
    TypeMismatchError,
    UnknownColumnError,
)
from prune_engine.expr.builder import col, lit
from prune_engine.api import Predicate, Source, classify, compile, prune, prune_topk
from prune_engine.compiler.plan import PruningProgram
from prune_engine.stats.table import StatsTable

__version__ = "0.1.0"

__all__ = [
    # pruning
    "prune", "classify", "prune_topk", "compile", "explain", "PruningProgram", "prune_rows",
    # expressions, and the types the API accepts
    "col", "lit", "Predicate", "Source",
    # reading, and answers from the statistics
    "scan", "scan_batches", "aggregate",
    # statistics
    "StatsTable", "collect_stats", "stats_from_arrow", "read_stats", "update_stats",
    "stats_from_delta", "stats_from_iceberg",
    # errors
    "PruneEngineError", "SqlParseError", "UnknownColumnError", "TypeMismatchError",
    "StatsError", "IndexCorruptError", "PatternError", "NgramError", "ColumnPathError",
    "ScanError",
]

if TYPE_CHECKING:  # what the lazy names below are, for type checkers (never run)
    from prune_engine.answers import aggregate
    from prune_engine.row_ranges import explain, prune_rows
    from prune_engine.scanning.api import scan, scan_batches
    from prune_engine.stats.collect import collect_stats, update_stats
    from prune_engine.stats.delta import stats_from_delta
    from prune_engine.stats.from_arrow import stats_from_arrow
    from prune_engine.stats.iceberg import stats_from_iceberg
    from prune_engine.stats.io import read_stats

# heavier entry points load on first use, so that `import prune_engine` stays fast
_LAZY = {
    "aggregate": "prune_engine.answers",
    "prune_rows": "prune_engine.row_ranges",
    "explain": "prune_engine.row_ranges",
    "collect_stats": "prune_engine.stats.collect",
    "update_stats": "prune_engine.stats.collect",
    "stats_from_arrow": "prune_engine.stats.from_arrow",
    "read_stats": "prune_engine.stats.io",
    "stats_from_delta": "prune_engine.stats.delta",
    "stats_from_iceberg": "prune_engine.stats.iceberg",
    "scan": "prune_engine.scanning.api",
    "scan_batches": "prune_engine.scanning.api",
}

__getattr__ = _lazy_loader(__name__, _LAZY)
