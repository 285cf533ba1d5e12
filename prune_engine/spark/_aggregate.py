"""``stats_from_dataframe``: exact statistics of any file-based DataFrame, per source file.

One Spark aggregation over the rows, grouped by the file each row comes from
(``_metadata.file_path``; ``input_file_name()`` where the metadata column is not reachable):
per file the row count, its size and modification time, and per column (struct fields
flattened) the minimum and maximum of the non-null, non-NaN values, the NULL count, and for
float columns the NaN count. The result is a statistics table in the engine's layout, one
container per file (``container`` and ``path`` the local path, or the URI for remote files),
so CSV, JSON or any query over files can be pruned like Parquet footers.

Spark's ``min``/``max`` order strings and binary by bytes, as the engine does. Columns the
layout cannot describe exactly are left out (unknown): lists, maps, intervals, and strings
with a collation other than Spark's binary default.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable
from prune_engine.spark._arrow import to_arrow
from prune_engine.spark._files import file_key
from prune_engine.spark._jobs import job_description
from prune_engine.spark._session import functions

_EXACT_TYPES = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType",
                "DecimalType", "StringType", "BinaryType", "BooleanType", "DateType",
                "TimestampType", "TimestampNTZType")
_PATH, _SIZE, _MTIME, _ROWS = "__pe_path", "__pe_size", "__pe_mtime", "__pe_rows"


def stats_from_dataframe(df, columns: Sequence[str] | None = None) -> StatsTable:
    """Exact statistics of ``df``'s rows, one container per source file (see the module doc).

    ``columns`` limits the columns described (top-level names or dotted struct paths).

    Example::

        import prune_engine.spark as pes
        stats = pes.stats_from_dataframe(spark.read.json("events/"))
        df = pes.read(spark, "events/", "user_id = 42", stats=stats, format="json")
    """
    F = functions(df)
    leaves = _leaves(df.schema, columns)
    framed, has_identity = _with_file(df)
    aggs = [F.count(F.lit(1)).alias(_ROWS)]
    if has_identity:
        aggs += [F.first(_SIZE).alias(_SIZE), F.first(_MTIME).alias(_MTIME)]
    for i, (path, type_name) in enumerate(leaves):
        c = F.col(".".join(f"`{p.replace('`', '``')}`" for p in path))
        floating = type_name in ("FloatType", "DoubleType")
        value = F.when(~F.isnan(c), c) if floating else c
        aggs += [F.min(value).alias(f"min{i}"), F.max(value).alias(f"max{i}"),
                 (F.count(F.lit(1)) - F.count(c)).alias(f"nulls{i}")]
        if floating:
            aggs.append(F.sum(F.when(F.isnan(c), 1).otherwise(0)).cast("long").alias(f"nans{i}"))
    grouped = framed.groupBy(_PATH).agg(*aggs)
    with job_description(df.sparkSession, f"prune_engine: statistics of {len(leaves)} "
                                          "columns per file"):
        table = to_arrow(grouped)
    return _assemble(table, leaves, has_identity)


def _leaves(schema, columns) -> list[tuple[tuple[str, ...], str]]:
    """The (path, Spark type name) of every column the layout describes exactly."""
    from pyspark.sql.types import StringType, StructType

    out = []

    def walk(struct, prefix):
        for f in struct.fields:
            path = prefix + (f.name,)
            kind = type(f.dataType).__name__
            if isinstance(f.dataType, StructType):
                walk(f.dataType, path)
            elif kind in _EXACT_TYPES:
                if isinstance(f.dataType, StringType) and \
                        getattr(f.dataType, "collation", "UTF8_BINARY") != "UTF8_BINARY":
                    continue
                out.append((path, kind))
    walk(schema, ())
    if columns is not None:
        wanted = [columns] if isinstance(columns, str) else list(columns)
        names = {".".join(p) for p, _ in out} | {p[0] for p, _ in out}
        for name in wanted:
            if name not in names:
                raise StatsError(f"columns= names {name!r}, which the DataFrame has not (as a "
                                 f"column it can describe); columns: {', '.join(sorted(names))}",
                                 column=name)
        out = [(p, k) for p, k in out if ".".join(p) in wanted or p[0] in wanted]
    return out


def _with_file(df):
    """``df`` with the source file of each row (and its size and modification time)."""
    F = functions(df)
    try:
        meta = df.metadataColumn("_metadata") if hasattr(df, "metadataColumn") \
            else F.col("_metadata")
        framed = df.select("*", meta["file_path"].alias(_PATH), meta["file_size"].alias(_SIZE),
                           meta["file_modification_time"].alias(_MTIME))
        framed.schema  # resolves now: fails where no file metadata reaches the rows
        return framed, True
    except Exception:  # noqa: BLE001 - no _metadata column here: the older function
        return df.select("*", F.input_file_name().alias(_PATH)), False


def _nest(leaves, arrays: list[pa.Array], n: int) -> pa.StructArray:
    """A struct mirroring the leaves' nesting, from one array per leaf."""
    tree: dict = {}
    for (path, _), array in zip(leaves, arrays):
        node = tree
        for p in path[:-1]:
            node = node.setdefault(p, {})
        node[path[-1]] = array

    def build(node) -> pa.StructArray:
        names = list(node)
        children = [build(v) if isinstance(v, dict) else v for v in node.values()]
        if not children:
            return pa.array([{}] * n, pa.struct([]))
        return pa.StructArray.from_arrays(children, names=names)
    return build(tree)


def _assemble(table: pa.Table, leaves, has_identity: bool) -> StatsTable:
    uris = table.column(_PATH).to_pylist()
    if any(not u for u in uris):
        raise StatsError("stats_from_dataframe needs rows that come from files (a DataFrame "
                         "read by spark.read, filtered or projected); these rows have no file")
    keys = [file_key(u) for u in uris]
    order = np.argsort(np.array(keys, dtype=object), kind="stable")
    table = table.take(pa.array(order))
    keys = [keys[i] for i in order]
    n = table.num_rows
    col = lambda name: table.column(name).combine_chunks()  # noqa: E731
    columns = {
        layout.CONTAINER: pa.array(keys, pa.string()),
        layout.PATH: pa.array(keys, pa.string()),
        layout.NUM_RECORDS: col(_ROWS).cast(pa.int64()),
        layout.MIN_VALUES: _nest(leaves, [col(f"min{i}") for i in range(len(leaves))], n),
        layout.MAX_VALUES: _nest(leaves, [col(f"max{i}") for i in range(len(leaves))], n),
        layout.NULL_COUNT: _nest(leaves, [col(f"nulls{i}").cast(pa.int64())
                                          for i in range(len(leaves))], n),
    }
    floats = [(i, leaf) for i, leaf in enumerate(leaves) if leaf[1] in ("FloatType", "DoubleType")]
    if floats:
        columns[layout.NAN_COUNT] = _nest([leaf for _, leaf in floats],
                                          [col(f"nans{i}") for i, _ in floats], n)
    files = {}
    if has_identity:
        sizes = col(_SIZE).to_pylist()
        mtimes = col(_MTIME).cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()
        files = {k: [s, None if m is None else m * 1000] for k, s, m in zip(keys, sizes, mtimes)}
    return StatsTable(pa.table(columns), {"files": files})
