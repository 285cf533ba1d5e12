"""Delta tables with hand-written logs, for the tests of ``stats_from_delta``, and the row-level
check of their statistics.

A table is written as Spark's Delta writer shapes one: data files written by pyarrow in the
type each was written in (INT96 timestamps where Spark writes them), and a log whose ``stats``
are JSON text as Spark renders it: a float as its shortest text (``3.4``, not the double the
float reads as), decimals exactly, timestamps cut to the millisecond with a zone (``Z``) and
timestamp_ntz without one. :class:`Raw` puts a number's text into the JSON verbatim.

The oracle is DuckDB on each file's rows, read in the table's current types (a float32 file of
a column widened to double reads as the doubles the floats are): a file holding a matching row
must be kept, and a file classified "all" must hold no row where the predicate is not TRUE.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tests.oracle.data import CID
from tests.oracle.classify import assert_sound


class Raw(str):
    """A JSON number written verbatim (its text is the point of the test)."""


def to_json(value) -> str:
    """JSON text of ``value``, with :class:`Raw` numbers as they are."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{to_json(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def field(name: str, typ, metadata: dict | None = None) -> dict:
    """A field of a Delta schema string (``typ`` a Delta type name or a struct dict)."""
    return {"name": name, "type": typ, "nullable": True, "metadata": metadata or {}}


def widened(*changes: tuple[str, str]) -> dict:
    """Field metadata recording type changes (``fromType``, ``toType``), as Spark writes it."""
    return {"delta.typeChanges": [{"fromType": a, "toType": b} for a, b in changes]}


def spark_text(value, typ: pa.DataType, zoned: bool = True):
    """A statistic as Spark's writer renders it into the log's JSON."""
    if pa.types.is_float32(typ):
        return Raw(str(np.float32(value)))  # the float's shortest text
    if pa.types.is_floating(typ):
        return Raw(repr(float(value)))
    if pa.types.is_decimal(typ):
        return Raw(str(value))
    if pa.types.is_timestamp(typ):
        value = value.replace(microsecond=value.microsecond // 1000 * 1000, tzinfo=None)
        text = value.isoformat(timespec="milliseconds")
        return text + "Z" if zoned else text
    if pa.types.is_date(typ):
        return value.isoformat()
    return value


def spark_stats(data: pa.Table, zoned: dict | None = None) -> dict:
    """The ``stats`` object Spark writes for ``data`` (``zoned``: per timestamp column name,
    whether it is a zoned ``timestamp``; default yes)."""
    mins, maxs, nulls = {}, {}, {}
    for name in data.column_names:
        _leaf_stats(name, data.column(name).combine_chunks(), zoned or {}, mins, maxs, nulls)
    return {"numRecords": data.num_rows, "minValues": mins, "maxValues": maxs,
            "nullCount": nulls}


def _leaf_stats(name: str, column: pa.Array, zoned: dict, mins: dict, maxs: dict,
                nulls: dict) -> None:
    if pa.types.is_struct(column.type):
        inner = [{}, {}, {}]
        for f, child in zip(column.type, column.flatten()):
            _leaf_stats(f.name, child, zoned, *inner)
        for out, got in zip((mins, maxs, nulls), inner):
            if got:
                out[name] = got
        return
    nulls[name] = column.null_count
    values = [v for v in column.to_pylist()
              if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if values and not pa.types.is_binary(column.type):
        mins[name] = spark_text(min(values), column.type, zoned.get(name, True))
        maxs[name] = spark_text(max(values), column.type, zoned.get(name, True))


def write_table(root, fields: list[dict], files: list[dict], partition_columns=(),
                configuration: dict | None = None, features=()) -> str:
    """A Delta table at ``root`` whose version 0 adds ``files``: each a dict with ``name``,
    ``data`` (written as is; ``int96`` True writes its timestamps as Spark 3 does), ``stats``
    (an object, its JSON text, None, or anything else to put there as is), and optional
    ``partition`` and ``add`` (more fields of the add action). ``features``: reader-writer table features (protocol 3 / 7)."""
    root = str(root)
    os.makedirs(os.path.join(root, "_delta_log"), exist_ok=True)
    actions = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                             "readerFeatures": list(features),
                             "writerFeatures": list(features)}} if features else
               {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
               {"metaData": {"id": "00000000-0000-0000-0000-000000000034",
                             "format": {"provider": "parquet", "options": {}},
                             "schemaString": json.dumps({"type": "struct", "fields": fields}),
                             "partitionColumns": list(partition_columns),
                             "configuration": configuration or {}, "createdTime": 0}}]
    for f in files:
        path = os.path.join(root, f["name"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(f["data"], path, use_deprecated_int96_timestamps=f.get("int96", False))
        stats = f.get("stats")
        add = {"path": f["name"], "partitionValues": f.get("partition", {}),
               "size": os.path.getsize(path), "modificationTime": 0, "dataChange": True,
               **({} if stats is None else
                  {"stats": to_json(stats) if isinstance(stats, dict) else stats}),
               **f.get("add", {})}
        actions.append({"add": add})
    with open(os.path.join(root, "_delta_log", "00000000000000000000.json"), "w") as out:
        out.write("\n".join(to_json(a) if isinstance(a, dict) else a for a in actions) + "\n")
    return root


def table_rows(stats, schema: pa.Schema, physical: dict | None = None) -> pa.Table:
    """Each file's rows in the table's current ``schema`` (columns found by their physical
    name, ``physical``: logical → physical; partition values from the statistics), tagged
    with the file's container id. INT96 timestamps are read in microseconds, as Spark does."""
    physical = physical or {}
    parts = stats.column("partition_values").to_pylist() \
        if "partition_values" in stats.table.column_names else [{}] * stats.num_rows
    pieces = []
    for cid, path, part in zip(stats.column("container").to_pylist(),
                               stats.column("path").to_pylist(), parts):
        data = pq.read_table(path, coerce_int96_timestamp_unit="us")
        columns = {}
        for f in schema:
            if f.name in part:
                columns[f.name] = pa.array([part[f.name]] * data.num_rows, f.type)
            else:
                columns[f.name] = _renamed(data.column(physical.get(f.name, f.name)), f.type,
                                           physical)
        columns[CID] = pa.array([cid] * data.num_rows, pa.string())
        pieces.append(pa.table(columns))
    return pa.concat_tables(pieces)


def _renamed(column, typ: pa.DataType, physical: dict):
    """A written column in the current type: struct children found by physical name."""
    if not pa.types.is_struct(typ):
        return column.cast(typ)
    column = column.combine_chunks()
    children = [_renamed(column.field(physical.get(f.name, f.name)), f.type, physical)
                for f in typ]
    return pa.StructArray.from_arrays(children, fields=list(typ), mask=column.is_null())


def check(stats, rows: pa.Table, predicates: list[str]) -> list[str]:
    """Every file holding a matching row is kept and every file classified "all" holds only
    matching rows (DuckDB on ``rows``); returns, per predicate, the classes joined by commas."""
    return [",".join(classes) for classes in assert_sound(stats, rows, predicates)]


def sql(value) -> str:
    """A DuckDB (and prune_engine) literal of ``value``."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return f"TIMESTAMPTZ '{value.replace(tzinfo=None).isoformat(' ')}+00:00'"
        return f"TIMESTAMP '{value.isoformat(' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, Decimal):
        return str(value) if "E" not in str(value) else format(value, "f")
    return repr(float(value)) if isinstance(value, float) else str(value)


def comparisons(name: str, values) -> list[str]:
    """``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` with each of ``values``, and IN of them."""
    out = [f"{name} {op} {sql(v)}" for v in values for op in ("=", "!=", "<", "<=", ">", ">=")]
    return out + [f"{name} IN ({', '.join(sql(v) for v in values[:3])})"] if values else out
