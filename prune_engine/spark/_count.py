"""``count``: ``COUNT(*)`` of a source's rows matching a ``where``, from the statistics where
they suffice, and from Spark reading the fewest files where they do not.

Per container, ``pe.aggregate(stats, "COUNT(*)", where)`` (through ``pe.classify``) tells
what must be read: a container no row of which matches adds nothing; one every row of which
matches adds its ``num_records``; the rest (some rows may match, or the row count is
unknown) must be read. Spark reads whole files, so a file with one container to read is read
whole, and its other containers are counted by Spark, not by the statistics. Then:

- the files the statistics answer for are excluded from Spark's read as in ``pes.read``
  (:func:`._read.prune_files`), and their ``"all"`` containers' rows are added up;
- Spark counts ``where`` over what is left: the files to read, files the statistics do not
  know, files changed since the statistics were collected; when nothing is left, no Spark
  job runs.

The source is opened as ``pes.read`` opens it, so partition columns, the schema and reader
options are Spark's; the ``where`` is read with Spark's meaning (:mod:`._catalyst`). Only
files that vouch for their rows count from statistics (:mod:`._checked`: there, unchanged,
listed by Spark now): the result is the count plain Spark gives,
``spark.read.format(...).load(source).where(where).count()``. Given statistics of a table
format's snapshot, the count is the snapshot's, as for ``pes.read`` (:mod:`._read`): only its
live files are read or counted, and a count that needs a file with deletes (whose
``num_records`` counts deleted rows, and which Spark cannot apply) is refused; a
column-mapped Delta table and an Iceberg table are counted in their own columns (the
``where`` names them), as ``pes.read`` reads them (:mod:`._mapped`).
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa

from prune_engine.errors import PruneEngineError
from prune_engine.stats.table import StatsTable, as_stats_table
from prune_engine.spark._checked import Missing, check_files
from prune_engine.spark._mapped import mapped_read
from prune_engine.spark._read import (PruneSummary, names_source, prune_files, statistics,
                                     where_predicate)
from prune_engine.spark._source import source_frame


def count(spark, source, where=None, stats: StatsTable | pa.Table | None = None, *,
          format: str = "parquet", options: dict[str, str] | None = None, schema=None,
          missing: Missing = "skip", return_summary: bool = False):
    """The number of rows of ``spark.read.format(format).load(source).where(where)``: from
    the statistics for the files every row of which matches (or none does), and from Spark
    reading only the others (see the module doc).

    ``where``: Spark SQL text or a pyspark ``Column`` (None: every row); ``stats``,
    ``format``, ``options``, ``schema`` and ``missing``: as for :func:`read`.
    ``return_summary=True`` returns ``(count, PruneSummary)``: ``files_read`` files were
    read by Spark (0: answered from the statistics alone), ``from_statistics`` rows were
    counted from them.

    Example::

        import prune_engine.spark as pes
        n = pes.count(spark, "lake/", "ts >= timestamp'2024-03-20'", stats=stats)
        n, summary = pes.count(spark, "lake/", stats=stats, return_summary=True)
        summary.files_read      # 0: every row counted from num_records
    """
    import prune_engine as pe

    mapped = mapped_read(spark, source, as_stats_table(stats) if stats is not None else None,
                         format, options, schema)
    base = mapped.source(spark, source, options, schema) if mapped else \
        source_frame(spark, source, format, options, schema)
    summary = PruneSummary()
    stats = statistics(spark, source, stats, summary, base)
    started = time.perf_counter()
    expr = where_predicate(mapped.stand_in(spark) if mapped else base, where, stats)
    files = check_files(base, stats, missing)
    vouching = files.vouching()
    subset = StatsTable(stats.table.filter(pa.array(vouching)), stats.metadata)
    must_read = np.asarray(pe.aggregate(subset, "COUNT(*)", expr).must_read
                           .to_numpy(zero_copy_only=False), dtype=bool)
    read = np.zeros(stats.num_rows, bool)
    read[vouching] = must_read
    answered = vouching & ~files.kept(read)[files.index]  # Spark reads a file whole
    counted = pe.aggregate(StatsTable(stats.table.filter(pa.array(answered)), stats.metadata),
                           "COUNT(*)", expr)
    if not counted.exact:  # cannot be: none of these containers needs reading
        raise PruneEngineError("internal: COUNT(*) of the containers answered from the "
                               "statistics is not exact")
    summary.from_statistics = int(counted.values["COUNT(*)"])
    frame, summary = prune_files(base, stats, expr, files, keep=~answered, started=started,
                                 summary=summary, lineage=names_source(source, where),
                                 mapped=mapped)
    rows = 0
    if summary.files_read:
        filtered = frame if where is None else frame.where(where)
        with summary.describing(spark):
            rows = filtered.count()
    total = summary.from_statistics + rows
    return (total, summary) if return_summary else total
