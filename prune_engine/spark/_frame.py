"""``prune_dataframe``: the keep-mask of a statistics table held by Spark, computed by Spark.

For statistics too large for the driver (tens of millions of containers), the statistics stay
a Spark DataFrame (e.g. ``spark.read.parquet`` of a saved statistics table) and each executor
runs ``pe.compile`` once per task and ``plan.evaluate`` on every Arrow batch it holds, through
``mapInArrow``. The result is the DataFrame with a non-null boolean ``keep`` column: per row,
exactly what ``pe.prune`` gives for that container (evaluation is per container, so slicing
the table into batches changes nothing).

Spark's types lose what the statistics layout says in Arrow field metadata (which fields
describe list or map elements) and some types (``uint64`` reads back as ``decimal(20,0)``).
So every batch is first cast to the statistics' Arrow schema: ``schema=`` when given, else
the schema stored in the DataFrame's first Parquet file (``StatsTable.save`` writes it), else
the Arrow form of Spark's schema. The predicate is compiled once on the driver first, so
that a bad predicate fails before any job runs.

The first call in a fresh executor process loads (or, with a cold cache, compiles) the numba
kernels; see :mod:`prune_engine.spark._jobs` for the shared cache.
"""

from __future__ import annotations

import pyarrow as pa

from prune_engine.spark._jobs import numba_cache_dir, use_numba_cache
from prune_engine.spark._workers import check_workers

KEEP = "keep"


def prune_dataframe(stats_df, expr, *, schema: pa.Schema | None = None,
                    on_invalid: str = "raise"):
    """``stats_df`` with a boolean ``keep`` column: ``pe.prune`` of each container, computed
    in the executors (see the module doc).

    ``expr`` is any predicate ``pe.prune`` accepts (SQL text in the engine's dialect, a
    builder expression, a ``pyarrow.compute.Expression``). ``schema``: the statistics' Arrow
    schema, when the DataFrame does not come from a saved statistics file. ``on_invalid``:
    as for ``pe.prune``.

    Example::

        import prune_engine.spark as pes
        keep = pes.prune_dataframe(spark.read.parquet("stats/"), "x > 5")
        keep.where("keep").select("path").distinct()
    """
    import prune_engine as pe
    from pyspark.sql.types import BooleanType, StructField, StructType

    arrow_schema = schema if schema is not None else stats_schema(stats_df)
    pe.compile(expr, arrow_schema)  # a bad predicate fails here, not in a task
    check_workers(stats_df.sparkSession)  # so do workers that cannot run the task
    out = StructType(list(stats_df.schema.fields) + [StructField(KEEP, BooleanType(), False)])
    return stats_df.mapInArrow(_keep_task(expr, arrow_schema, on_invalid, numba_cache_dir()),
                               out)


def stats_schema(stats_df) -> pa.Schema:
    """The Arrow schema of a statistics DataFrame: the one stored in its first Parquet file,
    else Spark's schema in Arrow form."""
    import pyarrow.parquet as pq

    from prune_engine.spark._files import file_key

    try:
        files = stats_df.inputFiles()
    except Exception:  # noqa: BLE001 - not a file-based DataFrame
        files = []
    if files:
        key = file_key(files[0])
        try:
            if "://" in key:
                import pyarrow.fs as pafs

                fs, path = pafs.FileSystem.from_uri(key)
                return pq.read_schema(path, filesystem=fs)
            return pq.read_schema(key)
        except (OSError, pa.ArrowException):
            pass
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(stats_df.schema)


def _keep_task(expr, schema: pa.Schema, on_invalid: str, cache_dir: str | None):
    def run(batches):
        use_numba_cache(cache_dir)
        import prune_engine as pe

        plan = None
        for batch in batches:
            table = conform(batch, schema)
            if plan is None:
                plan = pe.compile(expr, table.schema)
            yield batch.append_column(KEEP, plan.evaluate(table, on_invalid=on_invalid))
    return run


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """``batch`` as a table in the statistics' ``schema`` (types and field metadata), for
    the columns both have."""
    fields = [f for f in schema if f.name in batch.schema.names]
    arrays = [batch.column(f.name).cast(f.type) for f in fields]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=schema.metadata))
