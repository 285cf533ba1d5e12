"""``StatsTable``: a thin wrapper over a ``pa.Table`` in the statistics layout.

A plain ``pa.Table`` is always accepted wherever a ``StatsTable`` is; the wrapper adds
``save()`` and keeps the per-column numpy views that evaluation builds, so that a second
``prune()`` over the same statistics does not rebuild them.

>>> import pyarrow as pa, prune_engine as pe
>>> t = pa.table({"container": ["a"], "num_records": [3]})
>>> pe.StatsTable(t).num_rows
1
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: per live pa.Table: the derived arrays that evaluation cached for it (tables are immutable,
#: so a second prune() over the same table reuses them); entries leave with their table
_TABLE_CACHES: dict[int, tuple[weakref.ref, dict]] = {}


class StatsTable:
    """Statistics for ``num_rows`` containers, one row each (see :mod:`prune_engine.stats.layout`)."""

    def __init__(self, table: pa.Table, metadata: dict[str, Any] | None = None):
        if isinstance(table, StatsTable):
            metadata = {**table.metadata, **(metadata or {})}
            table = table.table
        if not isinstance(table, pa.Table):
            raise TypeError(f"StatsTable wraps a pyarrow.Table, not {type(table).__name__}")
        self.table = table
        #: facts about how the table was made, e.g. ``{"skipped_files": [...]}``
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._cache: dict = {}

    @property
    def schema(self) -> pa.Schema:
        return self.table.schema

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def __len__(self) -> int:
        return self.table.num_rows

    def column(self, name: str) -> pa.ChunkedArray:
        return self.table.column(name)

    def to_arrow(self) -> pa.Table:
        return self.table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)

    def files_kept(self, mask) -> tuple[list[str], np.ndarray]:
        """Each distinct file of the statistics (its ``path``, or the container id when there is
        no ``path`` column), in the order first listed, and whether ``mask`` keeps any of its
        containers.

        >>> t = pa.table({"container": ["b#0", "a#0", "b#1"], "path": ["b", "a", "b"]})
        >>> files, kept = StatsTable(t).files_kept(np.array([False, False, True]))
        >>> files, kept.tolist()
        (['b', 'a'], [True, False])
        """
        from prune_engine.errors import StatsError
        from prune_engine.stats import layout

        name = layout.PATH if layout.PATH in self.table.column_names else layout.CONTAINER
        paths = self.table.column(name).combine_chunks()
        if paths.null_count:
            raise StatsError(f"the statistics' {name!r} column has nulls: every container needs "
                             "the file it lives in", column=name)
        distinct = pc.unique(paths)  # in the order of first appearance
        index = pc.index_in(paths, value_set=distinct).to_numpy(zero_copy_only=False)
        kept = np.bincount(index, weights=np.asarray(mask), minlength=len(distinct)) > 0
        return distinct.to_pylist(), kept

    def save(self, path, filesystem=None) -> None:
        """Write the statistics to a Parquet file with the format version in its metadata
        (``path``: a local path, a URI, or a path on ``filesystem``; see ``read_stats``)."""
        from prune_engine.stats.io import save_stats

        save_stats(self, path, filesystem)

    def __repr__(self) -> str:
        return f"StatsTable({self.num_rows} containers, columns={self.table.column_names})"


def as_stats_table(stats) -> StatsTable:
    """Accept a ``StatsTable`` or a ``pa.Table`` (or anything with an Arrow C stream)."""
    if isinstance(stats, StatsTable):
        return stats
    if isinstance(stats, pa.Table):
        wrapper = StatsTable(stats)
        key = id(stats)
        hit = _TABLE_CACHES.get(key)
        if hit is not None and hit[0]() is stats:
            wrapper._cache = hit[1]
        else:
            ref = weakref.ref(stats, lambda _, k=key: _TABLE_CACHES.pop(k, None))
            _TABLE_CACHES[key] = (ref, wrapper._cache)
        return wrapper
    if hasattr(stats, "__arrow_c_stream__"):
        return StatsTable(pa.table(stats))
    raise TypeError(f"statistics must be a pyarrow.Table or StatsTable, not {type(stats).__name__}")
