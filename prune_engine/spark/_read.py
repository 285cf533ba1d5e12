"""``read``: a Spark DataFrame over the files whose statistics may hold a matching row.

What happens, all on the driver before Spark plans the scan:

1. the source is opened as Spark opens it (``spark.read.format(...).load(source)``: Spark's
   listing, schema and partition columns; a Parquet source of paths with the schema Spark
   inferred at an earlier call, when the files it lists, the options and the settings are
   the same: :mod:`prune_engine.spark._inferred`);
2. the ``where`` is read by Spark itself and mapped onto the engine
   (:mod:`prune_engine.spark._catalyst`), and ``pe.prune`` gives each container's keep-mask;
   with ``limit=k`` (and ``order_by=``), only the containers that can hold the rows of
   ``LIMIT k`` are kept (:mod:`prune_engine.spark._limit`);
3. a file is pruned when all of its containers are, it is still there, and its size and
   modification time are the ones the statistics recorded (a changed file is read, with a
   warning; a file the statistics name that is gone holds no rows of the source as it is
   now, so it is skipped, with a warning, as plain Spark skips it; ``missing="raise"`` makes
   it an error instead; :mod:`prune_engine.spark._checked`);
4. Spark gets the source without the pruned files: a read of the kept files in the source's
   format, options and schema (:mod:`prune_engine.spark._kept`: its plan, and so
   ``df.explain()``, is as short as plain Spark's however many files are pruned), or where
   that read cannot be built as Spark built the source, a filter on ``_metadata.file_path``
   that Spark applies while listing; either way the pruned files never reach a task. Then
   ``where``, ``order_by`` and ``limit`` are applied as ordinary Spark operations.

So the result is ``spark.read.format(...).load(source).where(where)`` minus the rows of files
proven to hold none: always the same rows.

Statistics of a table format's snapshot (``pe.stats_from_delta``, ``pe.stats_from_iceberg``:
:mod:`prune_engine.stats.snapshot`) name the snapshot's live files, and Spark then reads those
only: a file in the table's folder that the snapshot does not hold (removed by a delete, an
update, a compaction or an overwrite, still on disk until ``VACUUM`` or snapshot expiry) is
excluded as a pruned file is, so the rows are the snapshot's. A column-mapped Delta table
is read in its own columns (logical names, its types, partition values from its log), not
its files' physical ones, and an Iceberg table whose schema is known in its schema at the
snapshot (its files matched by field id, read in groups of one naming: a renamed column
under its new name, a dropped one gone, an added one null in older files, a promoted one
in its new type), with the ``where`` and ``order_by`` naming the table's columns
(:mod:`._mapped`). Spark's Parquet reader cannot
apply deletes that leave a file in place (Delta deletion vectors, Iceberg delete files): a
read that would need a file with such deletes (one the ``where`` does not prune) is refused
with a :class:`~prune_engine.ScanError` naming it, and so is one that needs a live file that
is gone (vacuumed), before Spark runs anything. With ``order_by`` and ``limit`` it is
``....where(where).orderBy(...).limit(k)`` over the kept files, whose sort keys are those of
plain Spark's first ``k`` rows (rows that tie on every sort key may be others, as they may
between two runs of plain Spark). A file the statistics do not know (added after
collection, or not a ``*.parquet`` name) is never excluded, so it is read.

The :class:`PruneSummary` is logged at INFO on ``prune_engine.spark``, returned with
``return_summary=True``, and names the Spark jobs prune_engine runs for the call (the Spark
UI's job description); :meth:`PruneSummary.describing` names the caller's own jobs of the
result with it.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa

from prune_engine.errors import ScanError
from prune_engine.expr import nodes as n
from prune_engine.stats.snapshot import location_key, read_position_deletes, table_snapshot
from prune_engine.stats.table import StatsTable, as_stats_table
from prune_engine.spark._checked import CheckedFiles, Missing, check_files, container_files
from prune_engine.spark._files import file_key
from prune_engine.spark._kept import kept_frame
from prune_engine.spark._mapped import MappedRead, mapped_read
from prune_engine.spark._source import is_dataframe, source_frame

if TYPE_CHECKING:
    from pyspark.sql import Column

log = logging.getLogger("prune_engine.spark")


@dataclass
class PruneSummary:
    """What prune_engine did for one ``read``, ``join`` or ``count``.

    ``files_total``: files Spark lists for the source; ``files_pruned``: files excluded
    before Spark plans the scan; ``files_read`` the rest. ``bytes_skipped``: their sizes.
    ``not_in_snapshot``: of the pruned, the files Spark lists that the table-format
    snapshot of the statistics does not hold (removed from the table, still on disk).
    ``changed`` / ``missing``: files read because they changed since the statistics were
    collected, and files the statistics name that are gone. ``prune_seconds``: driver time
    in prune_engine (reading the ``where``, ``pe.prune``, checking files, building the
    filter). ``predicate``: what the engine pruned with; ``limit``: for a ``read`` with
    ``limit=``, how the order and limit pruned (``'ORDER BY "ts" DESC NULLS LAST LIMIT
    100'``), or why they could not; ``from_statistics``: for ``count``, the rows counted from the statistics
    of files not read; ``join_keys``: per fact column, how the join keys were tested
    (``join`` only); ``not_pruned``: why nothing was tried (a join type that keeps every
    fact row), else empty. ``statistics``: for a call given no statistics, how the saved
    ones were refreshed (files reused, changed, new, gone, and the seconds it took;
    :mod:`._saved`).
    """

    files_total: int = 0
    files_pruned: int = 0
    files_read: int = 0
    bytes_skipped: int = 0
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    prune_seconds: float = 0.0
    predicate: str = ""
    limit: str = ""
    from_statistics: int = 0
    not_in_snapshot: int = 0
    join_keys: dict[str, Any] = field(default_factory=dict)
    not_pruned: str = ""
    statistics: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.not_pruned:
            return self.headline()
        return f"{self.headline()}, in {self.prune_seconds * 1e3:.0f} ms"

    def headline(self) -> str:
        """What was pruned, in one line without the time it took (the description of the
        Spark jobs that read the result)."""
        if self.not_pruned:
            return f"prune_engine: not pruned: {self.not_pruned}"
        return (f"prune_engine: {self.files_pruned} of {self.files_total} files pruned "
                f"({self.bytes_skipped / 1e6:.1f} MB skipped), {self.files_read} to read")

    def describing(self, spark):
        """A context manager that names the Spark jobs run inside it with
        :meth:`headline` (the Spark UI's job description), restoring the previous
        description after it; on Spark Connect through the session's
        ``spark.job.description`` setting (:mod:`prune_engine.spark._jobs`).

        Example::

            df, summary = pes.read(spark, "lake/", "id = 42", stats=stats,
                                   return_summary=True)
            with summary.describing(spark):
                rows = df.collect()   # its jobs: "prune_engine: 1997 of 2000 files pruned ..."
        """
        from prune_engine.spark._jobs import job_description

        return job_description(spark, self.headline())


def read(spark, source, where=None, stats: StatsTable | pa.Table | None = None, *,
         order_by: "str | Column | Sequence[str | Column] | None" = None,
         limit: int | None = None,
         format: str = "parquet", options: dict[str, str] | None = None, schema=None,
         missing: Missing = "skip", return_summary: bool = False):
    """``spark.read.format(format).load(source).where(where)``, with the files that cannot
    hold a matching row pruned on the driver first (see the module doc); with ``order_by``
    and ``limit``, ``....orderBy(order_by).limit(limit)`` read from only the files that can
    hold its rows.

    ``where``: Spark SQL text (read by Spark: backticks, ``<=>``, ``rlike``,
    ``timestamp'...'`` in the session time zone, ...) or a pyspark ``Column``; None: every
    row. ``stats``: statistics of the source's files (``pe.collect_stats``, :func:`collect_stats`,
    :func:`stats_from_dataframe`, or a saved table; ``pe.stats_from_delta`` /
    ``pe.stats_from_iceberg`` of a table whose folder is the source: then only the snapshot's
    live files are read, see the module doc); ``None`` uses the statistics saved for
    this source, refreshed for new, changed and gone files (the first call collects and saves
    them with a Spark job; see :mod:`prune_engine.spark._saved`). ``options``/``schema`` go to Spark's reader.

    ``order_by``: Spark SQL's ``"column [ASC|DESC] [NULLS FIRST|LAST]"`` with Spark's defaults
    (``ASC`` puts NULLs first, ``DESC`` last; NaN is above every number), a pyspark
    ``Column`` (``F.col("ts").desc()``), or a list of them (:mod:`prune_engine.spark._order`).
    ``limit``: the number of rows, as ``DataFrame.limit``. Together they read only the files
    that can hold the first ``limit`` rows (``pe.prune_topk`` on the first sort key, when it
    is a column the statistics describe); ``limit`` alone reads, when the files every row of
    which matches hold ``limit`` rows, only the fewest of them; ``order_by`` alone sorts and
    prunes nothing more (:mod:`prune_engine.spark._limit`).

    ``missing``: a file the statistics name that is gone (an overwrite since they were
    collected) is skipped with a warning (``"skip"``, the default: plain Spark does not read
    it either), or raises :class:`~prune_engine.StatsError` (``"raise"``). ``return_summary=True`` returns
    ``(DataFrame, PruneSummary)``; the summary is also logged at INFO on
    ``prune_engine.spark``, and ``with summary.describing(spark):`` names the Spark jobs
    that read the result after it (the Spark UI's job description).

    Example::

        import prune_engine.spark as pes
        df = pes.read(spark, "lake/", "ts >= timestamp'2024-03-20' AND country = 'IS'",
                      stats=stats)
        latest = pes.read(spark, "lake/", "country = 'IS'", order_by="ts DESC", limit=100,
                          stats=stats)      # the files holding the 100 latest rows
    """
    from prune_engine.spark._limit import check_limit, limit_keep
    from prune_engine.spark._order import sort_items

    check_limit(limit)
    mapped = mapped_read(spark, source, as_stats_table(stats) if stats is not None else None,
                         format, options, schema)
    base = mapped.source(spark, source, options, schema) if mapped else \
        source_frame(spark, source, format, options, schema)
    summary = PruneSummary()
    stats = statistics(spark, source, stats, summary, base)
    started = time.perf_counter()
    table = mapped.stand_in(spark) if mapped else base  # what the where and order name
    expr = where_predicate(table, where, stats)
    items = sort_items(table, order_by) if order_by is not None else []
    files = check_files(base, stats, missing)
    keep = None
    if limit is not None:
        keep, summary.limit = limit_keep(table, stats, expr, items, limit, files)
    pruned, summary = prune_files(base, stats, expr, files, keep=keep, started=started,
                                  summary=summary,
                                  lineage=names_source(source, where, order_by), mapped=mapped)
    result = pruned if where is None else pruned.where(where)
    if items:
        result = result.orderBy(*[i.column for i in items])
    if limit is not None:
        result = result.limit(limit)
    return (result, summary) if return_summary else result


def outside_snapshot(stats: StatsTable, files: CheckedFiles, mask: np.ndarray) -> list[str]:
    """For statistics of a table format's snapshot: the files Spark lists that the snapshot
    does not hold (keys), to exclude from the read, after refusing (:class:`ScanError`) a
    read that needs a live file Spark cannot read the snapshot's rows of: ``mask`` (per
    container, what the ``where`` keeps) keeps a container of a file with deletes Spark
    cannot apply, or of a live file that is gone. [] for other statistics."""
    snap = table_snapshot(stats)
    if snap is None:
        return []
    paths, _ = container_files(stats)
    kept = files.kept(mask)
    gone = set(files.gone)
    needed = [(p, k) for p, k, keep, inside in zip(paths, files.keys, kept, files.inside)
              if keep and inside]
    for path, key in needed:
        why = snap.refusal(path) or ("the file is gone (a VACUUM or snapshot expiry removed "
                                     "it)" if key in gone else None)
        if why is not None:
            _refuse(snap.format, path, why)
    deletes = {location_key(p): snap.position_deletes(p) for p, _ in needed}
    deletes = {k: v for k, v in deletes.items() if v}
    if deletes:
        found = read_position_deletes({d for v in deletes.values() for d in v},
                                      list(deletes))
        for path, _ in needed:
            if location_key(path) in found:
                _refuse(snap.format, path, "Iceberg position deletes delete rows of it")
    live = set(files.keys)
    return [k for k in dict.fromkeys(file_key(u) for u in files.listed) if k not in live]


def _refuse(kind: str, path: str, why: str) -> None:
    reader = "spark.read.format('delta')" if kind == "delta" else "an Iceberg catalog"
    raise ScanError(f"{path}: Spark's Parquet reader cannot tell which of its rows the {kind} "
                    f"snapshot holds: {why}; read the table through {reader}", path)


def names_source(source, *columns) -> bool:
    """Whether the caller's Columns may name the source DataFrame itself (so the pruned
    frame must keep its plan): the source is a DataFrame and some of ``columns`` (or of a
    list among them) is a Column."""
    from prune_engine.spark._condition import is_column

    flat = [c for x in columns for c in (x if isinstance(x, (list, tuple)) else [x])]
    return is_dataframe(source) and any(is_column(c) for c in flat)


def statistics(spark, source, stats, summary: PruneSummary, base=None) -> StatsTable:
    """``stats`` as a :class:`StatsTable`; None: the statistics saved for ``source``,
    refreshed (``summary.statistics`` says how; ``base``: the source opened already)."""
    if stats is not None:
        return as_stats_table(stats)
    from prune_engine.spark._saved import saved_stats

    stats = saved_stats(spark, source, base)
    summary.statistics = stats.metadata["refresh"]
    return stats


def where_predicate(base, where, stats) -> n.Expr:
    """The engine's reading of ``base.where(where)`` (:mod:`._catalyst`); TRUE for None."""
    from prune_engine.spark._catalyst import predicate

    return n.TRUE if where is None else predicate(base, where, stats)


def prune_files(base, stats, expr, files: CheckedFiles, *, keep: np.ndarray | None = None,
                started: float | None = None, summary: PruneSummary | None = None,
                lineage: bool = False, mapped: "MappedRead | None" = None):
    """``base`` without the files whose containers ``expr`` prunes (and, when given, ``keep``
    does not keep), as ``(DataFrame, PruneSummary)``; ``files``: the statistics' files as
    :func:`~prune_engine.spark._checked.check_files` found them; ``lineage``: the caller's
    Columns name ``base`` itself (:func:`~prune_engine.spark._kept.kept_frame`); ``mapped``:
    the files are read as the table's rows (:mod:`._mapped`; ``base`` is then the source it
    opened). The shared last step of ``read``, ``join`` and ``count``."""
    import prune_engine as pe

    started = time.perf_counter() if started is None else started
    summary = summary or PruneSummary()
    mask = np.asarray(pe.prune(stats, expr).to_numpy(zero_copy_only=False), dtype=bool)
    dead = outside_snapshot(stats, files, mask)
    if keep is not None:
        mask &= keep
    summary.predicate = str(expr)
    summary.files_total = len(files.listed)
    summary.missing = list(files.gone)
    pruned, summary.changed = files.excluded(files.kept(mask))
    summary.not_in_snapshot = len(dead)
    pruned += dead
    if summary.changed:
        warnings.warn(f"{len(summary.changed)} file(s) changed since the statistics were "
                      f"collected and are read: {', '.join(summary.changed[:5])}",
                      stacklevel=3)
    summary.files_pruned = len(pruned)
    summary.files_read = summary.files_total - len(pruned)
    summary.bytes_skipped = int(sum(files.sizes.get(f, 0) for f in pruned))
    with summary.describing(base.sparkSession):  # Spark may list the kept files in a job
        frame = mapped.table_frame if mapped is not None else kept_frame
        result = frame(base, pruned, files.listed, files.roots, lineage=lineage)
    summary.prune_seconds = time.perf_counter() - started
    log.info("%s", summary)
    return result, summary
