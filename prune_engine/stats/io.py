"""Saved statistics tables: one Parquet file, with the format version in its metadata.

The schema metadata carries :data:`~prune_engine.stats.layout.FORMAT_VERSION_KEY` and the
``StatsTable.metadata`` (as JSON: skipped files, file sizes and times for ``update_stats``).
Reading a file without the key, with a newer version, or that is not Parquet at all is a
:class:`~prune_engine.StatsError` naming the file.

>>> import os, tempfile, pyarrow as pa, prune_engine as pe
>>> path = os.path.join(tempfile.mkdtemp(), "stats.parquet")
>>> pe.StatsTable(pa.table({"container": ["a"], "num_records": [3]}), {"k": 1}).save(path)
>>> back = pe.read_stats(path)
>>> back.column("num_records").to_pylist(), back.metadata
([3], {'k': 1})
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

from prune_engine.errors import StatsError, StatsFileNotFoundError
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable, as_stats_table

__all__ = ["save_stats", "read_stats"]

METADATA_KEY = b"prune_engine.metadata"


def save_stats(stats, path, filesystem=None) -> None:
    """Write ``stats`` (a ``StatsTable`` or ``pa.Table``) to the Parquet file ``path`` (a
    local path, a URI, or a path on ``filesystem``, as :func:`read_stats` takes them)."""
    stats = as_stats_table(stats)
    try:
        extra = json.dumps(stats.metadata).encode()
    except (TypeError, ValueError) as e:
        raise StatsError(f"the statistics metadata cannot be saved as JSON: {e}") from None
    table = stats.table.replace_schema_metadata({
        **(stats.table.schema.metadata or {}),
        layout.FORMAT_VERSION_KEY: str(layout.FORMAT_VERSION).encode(),
        METADATA_KEY: extra,
    })
    where, fs = _where(path, filesystem)
    try:
        pq.write_table(table, where, filesystem=fs)
    except (OSError, pa.ArrowException) as e:
        raise StatsError(f"{os.fspath(path)}: cannot write the statistics: {e}") from None


def read_stats(path: str | os.PathLike[str], filesystem=None) -> StatsTable:
    """Read the statistics table that ``StatsTable.save`` (or ``prune-engine stats -o``) wrote
    to ``path``: a local path, a ``file://`` URI, a URI of any filesystem pyarrow or fsspec
    resolves (``s3://bucket/stats.parquet``), or a path on ``filesystem`` (a pyarrow or
    fsspec filesystem).

    Anything else is a clear error naming ``path``: a missing file is a
    :class:`~prune_engine.errors.StatsFileNotFoundError` (both a ``StatsError`` and a
    ``FileNotFoundError``); a directory, a file that is not Parquet, a Parquet file that is
    not a statistics file, or one written by a newer prune_engine (a higher format version)
    is a :class:`~prune_engine.StatsError`, raised before any data is read.

    >>> import os, tempfile, pyarrow as pa, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "stats.parquet")
    >>> pe.StatsTable(pa.table({"container": ["a"], "num_records": [3]})).save(path)
    >>> pe.read_stats(path).num_rows
    1
    >>> pe.read_stats(os.path.join(os.path.dirname(path), "nope.parquet"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    prune_engine.errors.StatsFileNotFoundError: .../nope.parquet: no such statistics file
    """
    name = os.fspath(path)
    where, fs = _where(name, filesystem)
    if fs is None and os.path.isdir(where):
        raise StatsError(f"{name}: a directory, not a statistics file (prune-engine stats -o "
                         "writes one file)", containers=[name])
    try:
        schema = pq.read_schema(where, filesystem=fs)
    except FileNotFoundError:
        raise StatsFileNotFoundError(name) from None
    except (OSError, pa.ArrowException) as e:
        raise StatsError(f"{name}: not a readable statistics file: {e}", containers=[name]) \
            from None
    meta = dict(schema.metadata or {})
    raw = meta.pop(layout.FORMAT_VERSION_KEY, None)
    if raw is None:
        raise StatsError(f"{name}: not a prune_engine statistics file (no format version in its "
                         "metadata)", containers=[name])
    try:
        version = int(raw.decode())
    except (UnicodeDecodeError, ValueError):
        raise StatsError(f"{name}: corrupt statistics format version {raw!r}",
                         containers=[name]) from None
    if version > layout.FORMAT_VERSION:
        raise StatsError(f"{name}: statistics format version {version} is newer than this "
                         f"prune_engine reads ({layout.FORMAT_VERSION}); upgrade prune_engine",
                         containers=[name])
    if version < 1:
        raise StatsError(f"{name}: invalid statistics format version {version}",
                         containers=[name])
    try:
        extra = json.loads(meta.pop(METADATA_KEY, b"{}"))
    except ValueError:
        raise StatsError(f"{name}: corrupt statistics metadata", containers=[name]) from None
    try:
        table = pq.read_table(where, filesystem=fs)
    except FileNotFoundError:  # removed since its schema was read
        raise StatsFileNotFoundError(name) from None
    except (OSError, pa.ArrowException) as e:
        raise StatsError(f"{name}: not a readable statistics file: {e}", containers=[name]) \
            from None
    meta = dict(table.schema.metadata or {})
    meta.pop(layout.FORMAT_VERSION_KEY, None)
    meta.pop(METADATA_KEY, None)
    meta.pop(b"ARROW:schema", None)
    return StatsTable(table.replace_schema_metadata(meta or None), extra)


def _where(path, filesystem):
    """``(path, pyarrow filesystem or None)`` of a statistics file (see :func:`read_stats`)."""
    from prune_engine.stats.filesystems import resolve
    from prune_engine.stats.listing import local_path

    location, where = resolve(os.fspath(path), filesystem)
    if location is None:
        return local_path(where), None
    return where, location.filesystem
