"""What ``pes.read``, ``pes.join`` and ``pes.collect_stats`` accept as a source, and its files.

A source is one of:

- a path, or a list of paths, as ``spark.read.format(...).load`` takes them;
- the name of a table in the session's catalog (``"db.sales"``; a Hive-style partitioned
  table included), read as ``spark.table(name)``; a name that is also an existing local path
  is the path;
- a DataFrame that reads files (``spark.read.parquet(...)``, ``spark.table(...)``), used as
  it is.

Its *roots* are where its files live: the folders and files Spark lists (classic: the file
index's root paths; Connect: the paths the DataFrame was loaded from, or for a table the
folder holding every file Spark lists). Statistics collected for a source are collected from
its roots.
"""

from __future__ import annotations

import os

from prune_engine.errors import StatsError
from prune_engine.spark._files import file_key
from prune_engine.spark._session import is_connect, joined, jvm_class, jvm_lines

_NOT_FILES = "prune_engine.spark reads file sources only (spark.read...load, a table of files)"


def is_dataframe(source) -> bool:
    return hasattr(source, "sparkSession") and hasattr(source, "inputFiles")


def source_frame(spark, source, format: str = "parquet", options: dict | None = None,
                 schema=None):
    """The source as a Spark DataFrame (see the module doc)."""
    if is_dataframe(source):
        return source
    if is_table(spark, source):
        return spark.table(source)
    paths = [source] if isinstance(source, str) else [str(p) for p in source]

    def load(schema):
        reader = spark.read.format(format)
        if options:
            reader = reader.options(**options)
        if schema is not None:
            reader = reader.schema(schema)
        return reader.load(paths[0] if len(paths) == 1 else paths)

    if schema is not None:
        return load(schema)
    from prune_engine.spark._inferred import load_remembered

    return load_remembered(spark, format, paths, options, load)


def is_table(spark, source) -> bool:
    """Whether ``source`` names a table of the session catalog (and no local path)."""
    if not isinstance(source, str) or "/" in source or os.path.exists(source):
        return False
    try:
        return bool(spark.catalog.tableExists(source))
    except Exception:  # noqa: BLE001 - not a valid table name: a path
        return False


def listing(df, *, keep: bool = False) -> tuple[list[str], list[str]]:
    """The files Spark lists for a DataFrame read from files (:func:`listed_uris`), and its
    roots (file keys). ``keep=True``: the answer is kept on ``df`` and given again for it (a
    frame prune_engine opened and uses within one call; a frame of the caller is asked
    again, since a Connect one may list anew at every question)."""
    known = vars(df).get("_prune_engine_listing")
    if known is None:
        files = listed_uris(df)
        known = (files, roots(df, files))
        if keep:
            vars(df)["_prune_engine_listing"] = known
    return known


def roots(df, files: list[str] | None = None) -> list[str]:
    """The roots (file keys) of a DataFrame read from files (see the module doc); ``files``:
    its listed files when already asked for (a Connect table's roots come from them)."""
    if is_connect(df):
        loaded = _loaded_paths(df)
        if loaded:
            return [file_key(p) for p in loaded]
        return _common_root(listed_uris(df) if files is None else files)
    paths = file_relation(df).relation().location().rootPaths()
    return [file_key(str(paths.apply(i).toUri().toString())) for i in range(paths.size())]


def listed_uris(df) -> list[str]:
    """The files Spark lists for a DataFrame read from files, as Spark names them (URIs). On
    a classic session the list crosses from the JVM through a file (:func:`jvm_lines`), or as
    one string, or on Scala 2.12 (Spark 3.5) file by file."""
    if is_connect(df):
        return list(df.inputFiles())
    files = df._jdf.inputFiles()
    try:
        seq = jvm_class(df, "scala.collection.immutable.ArraySeq").unsafeWrapArray(files)
    except Exception:  # noqa: BLE001 - Scala 2.12 (Spark 3.5): one py4j call per file
        return list(files)
    lines = jvm_lines(df, seq, len(files))
    return lines if lines is not None else joined(df, seq)  # a name with a line break


def file_relation(df):
    """The file relation (Catalyst's LogicalRelation) under a DataFrame read by Spark."""
    plan = df._jdf.queryExecution().analyzed()
    while plan.getClass().getSimpleName() != "LogicalRelation":
        children = plan.children()
        if children.size() != 1:
            raise StatsError(_NOT_FILES)
        plan = children.apply(0)
    return plan


def source_roots(spark, source):
    """The source as ``pe.collect_stats`` reads it: the paths themselves, or a table's or
    DataFrame's roots."""
    if not is_dataframe(source) and not is_table(spark, source):
        return source
    return roots(source_frame(spark, source))


def _loaded_paths(df) -> list[str]:
    """The paths a Connect DataFrame was loaded from (its plan's ``read`` of a data source),
    or none (a table, or a plan that is not a plain read)."""
    plan = df._plan
    while plan is not None and type(plan).__name__ != "DataSource":
        plan = getattr(plan, "_child", None)
    return list(getattr(plan, "_paths", None) or [])


def _common_root(files: list[str]) -> list[str]:
    """The deepest folder holding every file (as a one-element list of file keys)."""
    if not files:
        raise StatsError(f"{_NOT_FILES}: Spark lists no files for this DataFrame")
    folders = [file_key(f).rsplit("/", 1)[0].split("/") for f in files]
    common = folders[0]
    for parts in folders[1:]:
        k = 0
        while k < min(len(common), len(parts)) and common[k] == parts[k]:
            k += 1
        common = common[:k]
    return ["/".join(common) or "/"]
