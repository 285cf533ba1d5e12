"""What the Spark tests share: running a DataFrame and counting the files Spark scanned,
plain-Spark oracles, lake writing."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark

TIME_ZONE = "America/Los_Angeles"
#: the major version of the installed pyspark (some syntax is Spark 4's only)
SPARK_MAJOR = int(pyspark.__version__.split(".")[0])


def scanned_files(df) -> tuple[list, int]:
    """``(rows, files scanned)`` of running ``df`` (:func:`prune_engine.spark.files_scanned`)."""
    import prune_engine.spark as pes

    rows = df.collect()
    return rows, pes.files_scanned(df)


def explained(df) -> str:
    """What ``df.explain()`` prints (classic and Connect)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain()
    return out.getvalue()


def matching_files(spark, source, where, fmt: str = "parquet") -> set[str]:
    """The files (as file keys) holding at least one row that plain Spark returns."""
    from prune_engine.spark._files import file_key
    from prune_engine.spark._session import functions

    F = functions(spark)

    df = spark.read.format(fmt).load(source).where(where)
    return {file_key(r[0]) for r in df.select(F.col("_metadata.file_path")).distinct().collect()}


def sorted_rows(rows) -> list:
    """Rows in a canonical order (None and NaN sort too)."""
    return sorted((tuple(_key(v) for v in r) for r in rows), key=repr)


def _key(v):
    if isinstance(v, float) and v != v:
        return "NaN"
    if hasattr(v, "asDict"):
        return tuple(_key(x) for x in v)
    if isinstance(v, list):
        return tuple(_key(x) for x in v)
    return v


def write(path, table: pa.Table, **kwargs) -> str:
    """Write ``table`` to ``path`` (folders made), return the path."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path, **kwargs)
    return str(path)


def arrow_frame(spark, table: pa.Table):
    """A DataFrame of ``table`` with its Arrow types (structs stay structs), on Spark 3.5 and 4."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if SPARK_MAJOR >= 4:
        return spark.createDataFrame(table)  # Spark 4 takes Arrow tables

    key = "spark.sql.execution.arrow.pyspark.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "true")
    try:
        return spark.createDataFrame(table.to_pandas(), schema=from_arrow_schema(table.schema))
    finally:
        spark.conf.set(key, before)
