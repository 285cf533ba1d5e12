"""prune_engine on Spark: statistics jobs in, keep-masks out as file filtering and join pruning.

The contract:

- **Sessions and sources.** Classic and Spark Connect sessions alike
  (:mod:`prune_engine.spark._session`). A source is a path, a list of paths, a ``file://``
  URI, a table of the session catalog, or a DataFrame that reads files
  (:mod:`prune_engine.spark._source`).
- **What is read.** Statistics come from Parquet footers read by the executors
  (:func:`collect_stats`, the same table as ``pe.collect_stats``; ``compute_missing=True``
  computes what the footers lack, such as Spark's INT96 timestamps; files pyarrow cannot
  open are listed and aggregated through Spark, :mod:`prune_engine.spark._through_spark`),
  from an exact aggregation of any file-based DataFrame (:func:`stats_from_dataframe`), from
  any statistics table, or, given none, from statistics saved for the source and refreshed
  for new, changed and gone files (:mod:`prune_engine.spark._saved`). A ``where`` is Spark SQL text or a
  pyspark ``Column``, read with Spark's meaning in the session's settings (time zone, ANSI
  mode): by Spark's own analyzer on a classic session (:mod:`prune_engine.spark._catalyst`),
  on the client with Spark typing every constant on a Connect session
  (:mod:`prune_engine.spark._connect_where`); what the engine would read differently from
  Spark is "unknown" and keeps.
- **What is kept, and why.** A file is skipped only when the statistics prove that no row of
  it matches (every container pruned by ``pe.prune``), the file is still there, and its size
  and modification time (and a local file's inode and ctime) are those recorded. Files the statistics do not know, and files that
  changed, are read (the latter with a warning); a file the statistics name that is gone is
  an error, or skipped with a warning (``missing="skip"``).
- **What it equals.** :func:`read` equals ``spark.read.format(...).load(source).where(where)``
  and :func:`join` equals the plain Spark join over the whole fact source, row for row: Spark
  reads the kept files as it reads the source (same format, options, schema and partition
  columns; :mod:`prune_engine.spark._kept`), so the skipped files never reach a task and
  ``explain`` prints a plan as short as plain Spark's, and the ``where`` and the join run
  as ordinary Spark operations on the rest.
  ``read(..., order_by=..., limit=k)`` equals ``....orderBy(...).limit(k)`` up to rows that
  tie on every sort key, reading only the files that can hold the first ``k`` rows
  (:mod:`prune_engine.spark._limit`). :func:`count` equals ``....where(where).count()``,
  taking the rows of files every row of which matches from their statistics and reading
  only the others (:mod:`prune_engine.spark._count`). Answers that rest on rows being read
  (a top-k threshold, a count) take statistics only from files that are there, unchanged
  and listed by Spark (:mod:`prune_engine.spark._checked`).
  :func:`prune_dataframe` equals ``pe.prune`` per container, computed by the executors.

Every job prune_engine runs is named ``prune_engine: ...`` in the Spark UI, on classic and
Connect sessions (:mod:`prune_engine.spark._jobs`); :func:`read`, :func:`count` and
:func:`join` make a :class:`PruneSummary` (files before and after, bytes skipped, driver time
spent pruning), log it on the ``prune_engine.spark`` logger, return it with
``return_summary=True``, and name the jobs they run after it (``count``'s own read
included); ``with summary.describing(spark):`` names the caller's jobs of the result so.
:func:`files_scanned` reads how many files Spark's scans opened in a DataFrame's last run.

pyspark (the ``spark`` extra) is imported only when a function here runs, so importing this
module is cheap::

    import prune_engine.spark as pes

    stats = pes.collect_stats(spark, "lake/", granularity="file")
    df = pes.read(spark, "lake/", "ts >= timestamp'2024-03-20' AND country = 'IS'", stats=stats)
    latest = pes.read(spark, "lake/", "country = 'IS'", order_by="ts DESC", limit=100,
                      stats=stats)
    n = pes.count(spark, "lake/", "ts >= timestamp'2024-03-20'", stats=stats)
    sales = pes.join(spark, "sales/", stores.where("region = 'north'"),
                     on=[("store_id", "id")], fact_stats=stats)
"""

from __future__ import annotations

from prune_engine._lazy import lazy_loader as _lazy_loader

__all__ = [
    # statistics
    "collect_stats", "stats_from_dataframe",
    # pruned reads, top-k, counts and joins
    "read", "count", "join", "keys_predicate", "PruneSummary", "JoinKeys",
    # statistics too large for the driver
    "prune_dataframe",
    # what Spark did
    "files_scanned",
]

_LAZY = {
    "collect_stats": "prune_engine.spark._collect",
    "stats_from_dataframe": "prune_engine.spark._aggregate",
    "read": "prune_engine.spark._read",
    "PruneSummary": "prune_engine.spark._read",
    "count": "prune_engine.spark._count",
    "join": "prune_engine.spark._join",
    "keys_predicate": "prune_engine.spark._join",
    "JoinKeys": "prune_engine.spark._join",
    "prune_dataframe": "prune_engine.spark._frame",
    "files_scanned": "prune_engine.spark._metrics",
}


__getattr__ = _lazy_loader(__name__, _LAZY)


def __dir__():
    return sorted(list(globals()) + __all__)
