"""Saved statistics that keep themselves fresh: what ``pes.read`` and ``pes.join`` use when
they are given no statistics.

The first call collects the source's statistics with a Spark job (per file, computing what
the footers lack, as ``collect_stats(..., compute_missing=True)``) and saves them; every later
call lists the source, reuses the saved rows of the files that are unchanged, collects only
new and changed files, drops the rows of files that are gone, and saves the result again
(``refresh`` of :mod:`prune_engine.stats.collect`, with the Spark job as the collector). A
file is unchanged when its size and modification time, and for a local file its inode and
status-change time, for an S3 object its ETag where boto3 lists it
(:mod:`~prune_engine.stats.etags`), are the ones recorded; any other object store's object or
an HDFS file rewritten with the same size and modification time is not detected. Files
pyarrow cannot reach are listed, and their statistics computed, by Spark
(:mod:`~prune_engine.spark._through_spark`).

Where: one Parquet file per source (named by a hash of its roots) in the folder that the
session's ``spark.prune_engine.statsDir`` gives, else the ``PRUNE_ENGINE_STATS_DIR``
environment variable, else ``~/.cache/prune_engine/stats`` (``$XDG_CACHE_HOME`` honoured). A
saved file that cannot be read is collected again, with a warning. Writes are atomic (a
temporary file renamed), so concurrent readers see the old or the new statistics.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
import warnings

from prune_engine.spark._collect import collect_options
from prune_engine.stats.table import StatsTable

log = logging.getLogger("prune_engine.spark")

CONF = "spark.prune_engine.statsDir"
ENV = "PRUNE_ENGINE_STATS_DIR"
#: the statistics collected for a source given no statistics
OPTIONS = collect_options("file", compute_missing=True)


def stats_dir(spark) -> str:
    """The folder of saved statistics (see the module doc)."""
    chosen = spark.conf.get(CONF, None) or os.environ.get(ENV)
    if chosen:
        return chosen
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "prune_engine", "stats")


def saved_stats(spark, source, base=None) -> StatsTable:
    """The statistics of ``source`` (``base``: its DataFrame, when opened already), saved and
    refreshed (see the module doc);
    ``metadata["refresh"]`` counts the files reused, changed, new and gone, and
    ``metadata["refresh"]["seconds"]`` the time spent."""
    from prune_engine.stats.collect import refresh
    from prune_engine.stats.listing import list_source, partition_types

    from prune_engine.spark._collect import collect_files
    from prune_engine.spark._hadoop import session_filesystems
    from prune_engine.spark._source import is_dataframe, source_frame, source_roots
    from prune_engine.spark._through_spark import or_through_spark

    started = time.perf_counter()
    roots = source_roots(spark, source)
    session_filesystems(spark, roots)

    def by_pyarrow():
        listing = list_source(roots)
        types = partition_types(listing.files, listing.typed)
        return listing, lambda files: collect_files(spark, files, types, OPTIONS), False

    def by_spark():
        ours = base is not None and not is_dataframe(source)  # not a frame of the caller
        return (*_spark_listing(spark, base if base is not None else source_frame(spark, source),
                                ours), True)

    listing, collect, through_spark = or_through_spark(roots, by_pyarrow, by_spark)
    path = _path(spark, roots, through_spark)
    saved = _load(path)

    if saved is None:
        stats = collect(listing.files)
        stats.metadata["refresh"] = {"reused": 0, "changed": 0, "new": len(listing.files),
                                     "gone": 0}
    else:
        stats = refresh(saved, listing, collect)
    counts = stats.metadata["refresh"]
    if saved is None or counts["changed"] or counts["new"] or counts["gone"]:
        _save(stats, path)
    counts["seconds"] = time.perf_counter() - started
    log.info("prune_engine: statistics of %s: %d files reused, %d changed, %d new, %d gone "
             "(%.0f ms)", roots, counts["reused"], counts["changed"], counts["new"],
             counts["gone"], counts["seconds"] * 1e3)
    return stats


def _spark_listing(spark, base, ours: bool):
    """The listing of a source pyarrow cannot reach (``base``: its DataFrame), and the
    collector of its files, both through Spark (:mod:`~prune_engine.spark._through_spark`).
    ``ours``: ``base`` was opened for this call, so the listing and the files' identities
    stay on it for the freshness check that follows."""
    from prune_engine.stats.listing import Listing, SourceFile

    from prune_engine.spark._files import file_key
    from prune_engine.spark._kept import kept_frame
    from prune_engine.spark._inferred import IDENTITIES
    from prune_engine.spark._source import listing
    from prune_engine.spark._through_spark import collect_through_spark, spark_identities

    listed, roots = listing(base, keep=ours)
    now = spark_identities(spark, roots)
    if ours:
        vars(base)[IDENTITIES] = now
    keys = sorted({file_key(u) for u in listed} & set(now))
    files = Listing([SourceFile(k, size=now[k][0], mtime_ns=now[k][1] * 1_000_000)
                     for k in keys])

    def collect(fresh) -> StatsTable:
        wanted = {f.path for f in fresh}
        frame = kept_frame(base, [k for k in keys if k not in wanted], listed, roots)
        return collect_through_spark(frame, roots, OPTIONS, {k: now[k] for k in wanted})

    return files, collect


def _path(spark, roots, through_spark: bool = False) -> str:
    """Where the statistics of ``roots`` are saved: one file for those read from footers, one
    for those Spark aggregated (the two are never merged)."""
    from prune_engine.spark._files import file_key

    names = [roots] if isinstance(roots, str) else list(roots)
    described = {"roots": sorted(file_key(str(r)) for r in names), "options": OPTIONS}
    if through_spark:
        described["through_spark"] = True
    key = json.dumps(described, sort_keys=True)
    return os.path.join(stats_dir(spark), hashlib.sha256(key.encode()).hexdigest()[:32] + ".parquet")


def _load(path: str) -> StatsTable | None:
    from prune_engine.stats.io import read_stats

    if not os.path.exists(path):
        return None
    try:
        stats = read_stats(path)
        if (stats.metadata.get("collect") or {}).get("compute_missing") is not True:
            raise ValueError("statistics saved with other options")
        return stats
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file: collect again
        warnings.warn(f"saved statistics {path} cannot be used ({e}); collecting them again",
                      stacklevel=4)
        return None


def _save(stats: StatsTable, path: str) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        stats.save(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
