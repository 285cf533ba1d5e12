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
"""

from __future__ import annotations

import sys as _sys
import types as _types

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
from prune_engine.api import compile, explain, prune
from prune_engine.compile.plan import PruningProgram
from prune_engine.stats.table import StatsTable

__version__ = "0.1.0"

__all__ = [
    # pruning
    "prune", "compile", "explain", "PruningProgram",
    # expressions
    "col", "lit",
    # reading
    "scan", "scan_batches",
    # statistics
    "StatsTable", "collect_stats", "stats_from_arrow", "read_stats", "update_stats",
    # errors
    "PruneEngineError", "SqlParseError", "UnknownColumnError", "TypeMismatchError",
    "StatsError", "IndexCorruptError", "PatternError", "NgramError", "ColumnPathError",
    "ScanError",
]

# heavier entry points load on first use, so that `import prune_engine` stays fast
_LAZY = {
    "collect_stats": "prune_engine.stats.collect",
    "update_stats": "prune_engine.stats.collect",
    "stats_from_arrow": "prune_engine.stats.from_arrow",
    "read_stats": "prune_engine.stats.io",
    "scan": "prune_engine.scan.api",
    "scan_batches": "prune_engine.scan.api",
}


class _Package(_types.ModuleType):
    """``prune_engine.scan`` is also the package of the scan path; importing it must not
    rebind ``pe.scan`` (the function) to the package, as the import system would."""

    def __setattr__(self, name, value):
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__getattr__ = _lazy_loader(__name__, _LAZY)
