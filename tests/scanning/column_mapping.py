"""Column-mapped Delta tables for the scan and Spark tests, and their rows as deltalake reads
them.

deltalake writes a table with ``delta.columnMapping.mode`` ``name`` or ``id`` (every field,
nested ones too, stored under a physical name ``col-<uuid>`` and a field id), appends to it,
deletes and updates rows, but has no rename, add or drop of a column for such a table, nor
type widening: those are schema changes that rewrite no data file, so :func:`evolve`
commits them as Delta writers (Spark) do, a ``metaData`` action with the new schema (a
renamed field keeps its physical name and id; an added one gets new ones; a widened one
records ``delta.typeChanges``). deltalake's own reader (its DataFusion query engine,
:func:`deltalake_rows`) is the oracle: it maps physical names back to the table's.
A table with the ``typeWidening`` feature, which deltalake cannot open for reading rows, is
written by hand in Spark's shape (:func:`widened_spark_table`), its rows built here.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from decimal import Decimal
from typing import Callable

import pyarrow as pa

from tests.stats.delta_logs import spark_stats, widened, write_table

MAPPING = "delta.columnMapping.mode"
LIST = pa.list_(pa.struct([("q", pa.int64())]))
MAP = pa.map_(pa.string(), pa.struct([("z", pa.int64())]))


def _log(root: str) -> str:
    return os.path.join(root, "_delta_log")


def latest(root: str) -> tuple[int, dict, dict]:
    """The newest version of the table at ``root``, its ``metaData`` and ``protocol``."""
    metadata = protocol = None
    version = -1
    for name in sorted(os.listdir(_log(root))):
        if not name.endswith(".json"):
            continue
        version = int(name.split(".")[0])
        with open(os.path.join(_log(root), name)) as f:
            for line in f:
                action = json.loads(line)
                metadata = action.get("metaData", metadata)
                protocol = action.get("protocol", protocol)
    return version, metadata, protocol


def commit(root: str, actions: list[dict]) -> int:
    """Commit ``actions`` as the table's next version; its number."""
    version = latest(root)[0] + 1
    with open(os.path.join(_log(root), f"{version:020d}.json"), "w") as out:
        out.write("\n".join(json.dumps(a) for a in actions) + "\n")
    return version


def mapped_field(name: str, typ, column_id: int, physical: str | None = None) -> dict:
    """A field of a column-mapped Delta schema (``typ``: a Delta type name or type dict)."""
    return {"name": name, "type": typ, "nullable": True,
            "metadata": {"delta.columnMapping.id": column_id,
                         "delta.columnMapping.physicalName":
                             physical or f"col-{uuid.UUID(int=column_id)}"}}


def evolve(root: str, edit: Callable[[list[dict]], None], partition_columns=None,
           reader_features=()) -> int:
    """Commit a schema change: ``edit`` changes the table's fields (the schema's ``fields``
    list, in place); ``partition_columns`` replaces the partition columns' names (after a
    rename). ``reader_features``: table features the change needs (protocol 3 / 7)."""
    _, metadata, protocol = latest(root)
    schema = json.loads(metadata["schemaString"])
    edit(schema["fields"])
    metadata = dict(metadata, schemaString=json.dumps(schema))
    if partition_columns is not None:
        metadata["partitionColumns"] = list(partition_columns)
    ids = [_ids(f) for f in schema["fields"]]
    metadata["configuration"] = dict(metadata.get("configuration") or {}, **{
        "delta.columnMapping.maxColumnId": str(max(i for group in ids for i in group))})
    actions = [{"metaData": metadata}]
    if reader_features:
        actions.insert(0, {"protocol": {
            "minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": sorted({"columnMapping", *reader_features}),
            "writerFeatures": sorted({"columnMapping", *reader_features})}})
    return commit(root, actions)


def _ids(f: dict) -> list[int]:
    out = [int(f["metadata"].get("delta.columnMapping.id", 0))]
    typ = f["type"]
    while isinstance(typ, dict) and typ.get("type") in ("array", "map"):
        typ = typ.get("elementType") or typ.get("valueType")
    if isinstance(typ, dict) and typ.get("type") == "struct":
        out += [i for c in typ["fields"] for i in _ids(c)]
    return out


def by_name(fields: list[dict], name: str) -> dict:
    """The field ``name`` of ``fields``."""
    return next(f for f in fields if f["name"] == name)


def deltalake_rows(root: str) -> pa.Table:
    """Every row of the table's newest version as deltalake's query engine reads it (it
    maps column-mapped physical names; ``DeltaTable.to_pyarrow_table`` of deltalake 1.6
    does not, and gives nulls)."""
    from deltalake import DeltaTable, QueryBuilder

    rows = QueryBuilder().register("t", DeltaTable(root)).execute("SELECT * FROM t").read_all()
    return pa.table(rows)


def row_key(row: dict) -> str:
    """A sortable, exact text of one row."""
    return json.dumps(row, sort_keys=True, default=repr)


#: predicates on the table of :func:`widened_spark_table`
WIDENED_WHERES = ["f = 3.4000000953674316", "f = 3.4", "f > 3", "n > 2147483646", "n < 0",
                  "d >= TIMESTAMP '2024-01-02 00:00:00'",
                  "d < TIMESTAMP '2000-01-01 00:00:00'", "dec > 12345678.91",
                  "dec = 12345678.9100", "x2 >= 3", None]


def mapped_history(root: str, mode: str, partitioned: bool) -> None:
    """A column-mapped Delta table after a rename (top-level, nested, a list's and a map's
    struct field, the partition column), a dropped and an added column, float → double and
    int → long widenings, an append in the new schema, a delete and an update."""
    from deltalake import DeltaTable, write_deltalake

    write_deltalake(root, pa.table({
        "x": pa.array(range(20), pa.int64()),
        "s": pa.array([{"a": i, "b": str(i % 9)} if i % 7 else None for i in range(20)],
                      pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "f": pa.array([i + 0.4 for i in range(20)], pa.float32()),
        "n": pa.array(range(20), pa.int32()),
        "gone": pa.array(range(100, 120), pa.int64()),
        "l": pa.array([[{"q": i}, {"q": -i}] if i % 3 else None for i in range(20)], LIST),
        "m": pa.array([[("k", {"z": i})] for i in range(20)], MAP),
        "p": [f"p{i % 2}" for i in range(20)]}),
        partition_by=["p"] if partitioned else None, configuration={MAPPING: mode})

    def edit(fields):
        by_name(fields, "x")["name"] = "x2"
        by_name(by_name(fields, "s")["type"]["fields"], "a")["name"] = "alpha"
        by_name(by_name(fields, "l")["type"]["elementType"]["fields"], "q")["name"] = "quality"
        by_name(by_name(fields, "m")["type"]["valueType"]["fields"], "z")["name"] = "zed"
        f = by_name(fields, "f")
        f["type"] = "double"
        f["metadata"].update(widened(("float", "double")))
        n = by_name(fields, "n")
        n["type"] = "long"
        n["metadata"].update(widened(("integer", "long")))
        fields.remove(by_name(fields, "gone"))
        by_name(fields, "p")["name"] = "part"
        fields.append(mapped_field("y", "string", 50))

    evolve(root, edit, partition_columns=["part"] if partitioned else [])
    write_deltalake(root, pa.table({
        "x2": pa.array(range(20, 30), pa.int64()),
        "s": pa.array([{"alpha": i, "b": str(i % 9)} for i in range(20, 30)],
                      pa.struct([("alpha", pa.int64()), ("b", pa.string())])),
        "f": [i + 0.25 for i in range(20, 30)],
        "n": pa.array([2 ** 31 + i if i % 4 == 0 else i for i in range(20, 30)], pa.int64()),
        "l": pa.array([[{"quality": i}] for i in range(20, 30)],
                      pa.list_(pa.struct([("quality", pa.int64())]))),
        "m": pa.array([[("k", {"zed": i})] for i in range(20, 30)],
                      pa.map_(pa.string(), pa.struct([("zed", pa.int64())]))),
        "part": [f"p{i % 2}" for i in range(20, 30)],
        "y": [None if i % 3 else f"y{i}" for i in range(20, 30)]}), mode="append")
    table = DeltaTable(root)
    table.delete("x2 < 5")
    table.update(updates={"y": "'updated'"}, predicate="x2 >= 26 OR x2 = 11")


def physical(name: str) -> str:
    """A physical name as Spark's Delta writer makes them (``col-`` and a uuid)."""
    return f"col-{name}-0000-0000"


def widened_spark_table(root: str) -> tuple[str, pa.Table]:
    """A column-mapped table (name mode) as Spark's Delta writer leaves it, with the
    ``typeWidening`` table feature (which deltalake cannot read): one file written before
    ``f`` became a double, ``n`` a long, ``d`` a timestamp_ntz and ``dec`` a wider decimal,
    and before ``x`` was renamed ``x2``, one written after, each with the statistics Spark
    writes (keyed by physical name, in the type written). Returns the root and the table's
    rows: each file's read in the table's types."""
    fields = [mapped_field("x2", "integer", 1, physical("x")),
              mapped_field("f", "double", 2, physical("f")),
              mapped_field("n", "long", 3, physical("n")),
              mapped_field("d", "timestamp_ntz", 4, physical("d")),
              mapped_field("dec", "decimal(12,4)", 5, physical("dec"))]
    for f, change in zip(fields[1:], [("float", "double"), ("integer", "long"),
                                      ("date", "timestamp_ntz"),
                                      ("decimal(10,2)", "decimal(12,4)")]):
        f["metadata"].update(widened(change))
    before = pa.table({
        physical("x"): pa.array([1, 2, 3], pa.int32()),
        physical("f"): pa.array([3.4, 1.5, None], pa.float32()),
        physical("n"): pa.array([2 ** 31 - 1, -1, 0], pa.int32()),
        physical("d"): pa.array([dt.date(2024, 1, 2), None, dt.date(1999, 12, 31)]),
        physical("dec"): pa.array([Decimal("12345678.91"), Decimal("-0.01"), None],
                                   pa.decimal128(10, 2))})
    after = pa.table({
        physical("x"): pa.array([4, 5], pa.int32()),
        physical("f"): pa.array([3.4, 1e300], pa.float64()),
        physical("n"): pa.array([2 ** 31, -2 ** 40], pa.int64()),
        physical("d"): pa.array([dt.datetime(2024, 1, 2, 0, 0, 1), dt.datetime(2000, 1, 1)],
                                 pa.timestamp("us")),
        physical("dec"): pa.array([Decimal("12345678.9101"), Decimal("0.0001")],
                                   pa.decimal128(12, 4))})
    root = write_table(root, fields, [
        {"name": "ab/part-0.parquet", "data": before, "stats": spark_stats(before)},
        {"name": "cd/part-1.parquet", "data": after, "stats": spark_stats(after)}],
        configuration={MAPPING: "name"},
        features=["columnMapping", "typeWidening", "timestampNtz"])
    table = pa.schema([("x2", pa.int32()), ("f", pa.float64()), ("n", pa.int64()),
                       ("d", pa.timestamp("us")), ("dec", pa.decimal128(12, 4))])
    rows = pa.concat_tables([pa.table([data.column(i).cast(f.type) for i, f in
                                       enumerate(table)], schema=table)
                             for data in (before, after)])
    return root, rows
