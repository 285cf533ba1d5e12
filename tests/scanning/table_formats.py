"""Delta and Iceberg tables for the scan and Spark tests: written by deltalake and PyIceberg
(the writers themselves), changed by deletes, updates, compaction and overwrites, and their
own readers' rows as the oracle.

PyIceberg writes no delete files (its deletes rewrite files); :func:`commit_deletes` writes a
delete file by hand (Parquet: ``file_path``, ``pos`` or the equality columns) and commits it
through PyIceberg's own snapshot producer in a manifest of delete content, so that the table's
metadata, ``stats_from_iceberg`` and PyIceberg's reader all see it as a writer's.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.scanning.lakes import duck_table


def delta_history(root: str, partitioned: bool) -> None:
    """A Delta table at ``root`` after appends, a delete, an update, a compaction and an
    append: its folder holds the files each step removed."""
    from deltalake import DeltaTable, write_deltalake

    parts = ["p"] if partitioned else None
    for k in range(3):
        write_deltalake(root, pa.table({
            "x": pa.array(range(k * 40, k * 40 + 40), pa.int64()),
            "s": [f"s{k}-{i % 7}" if i % 9 else None for i in range(40)],
            "p": [f"p{i % 2}" for i in range(40)]}), mode="append", partition_by=parts)
    table = DeltaTable(root)
    table.delete("x < 50")
    table.update(updates={"s": "'updated'"}, predicate="x >= 100 AND x < 105")
    DeltaTable(root).optimize.compact()
    write_deltalake(root, pa.table({"x": pa.array([500, 501], pa.int64()), "s": ["new", None],
                                    "p": ["p0", "p1"]}), mode="append", partition_by=parts)


@pytest.fixture(scope="module", params=[False, True], ids=["flat", "partitioned"])
def delta_table(request, tmp_path_factory):
    """A Delta table after :func:`delta_history`, unpartitioned and partitioned by ``p``."""
    root = str(tmp_path_factory.mktemp("delta") / "t")
    delta_history(root, request.param)
    return root


def rows_where(table: pa.Table, where: str | None, columns=("x", "s", "p")) -> list[tuple]:
    """The rows of ``table`` where ``where`` holds (DuckDB), as sorted tuples of ``columns``."""
    kept = duck_table(table, where, None, None)
    return sorted(tuple(r[c] for c in columns) for r in kept.to_pylist())


def sorted_rows(table: pa.Table, columns=("x", "s", "p")) -> list[tuple]:
    return sorted(tuple(r[c] for c in columns) for r in table.to_pylist())


def iceberg_catalog(folder: str):
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("t", uri=f"sqlite:///{folder}/c.db", warehouse=f"file://{folder}")
    catalog.create_namespace("db")
    return catalog


def iceberg_events(folder: str, row_group_size: int | None = None):
    """An Iceberg table ``db.events`` (x int64, s string, p string) of three appends of 40 rows
    (x = 0..119): ``(catalog, table)``."""
    catalog = iceberg_catalog(folder)
    table = catalog.create_table("db.events", schema=pa.schema([("x", pa.int64()),
                                                                ("s", pa.string()),
                                                                ("p", pa.string())]))
    if row_group_size:
        with table.transaction() as tx:
            tx.set_properties({"write.parquet.row-group-limit": str(row_group_size)})
    for k in range(3):
        table.append(pa.table({"x": pa.array(range(k * 40, k * 40 + 40), pa.int64()),
                               "s": [f"s{k}-{i % 7}" if i % 9 else None for i in range(40)],
                               "p": [f"p{i % 2}" for i in range(40)]}))
    return catalog, catalog.load_table("db.events")


def iceberg_rewritten(folder: str):
    """:func:`iceberg_events` after a delete (x < 50) and an overwrite (x in [100, 105) become
    500 and 501): the table as loaded again."""
    catalog, table = iceberg_events(folder)
    table.delete("x < 50")
    table.overwrite(pa.table({"x": pa.array([500, 501], pa.int64()), "s": ["updated", None],
                              "p": ["p0", "p1"]}), overwrite_filter="x >= 100 AND x < 105")
    return catalog.load_table("db.events")


def commit_deletes(table, rows: pa.Table, path: str, equality_ids=None):
    """Commit the delete file ``rows`` (written to ``path``) to the unpartitioned Iceberg
    ``table``: position deletes, or equality deletes on the fields ``equality_ids``."""
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestContent,
                                    ManifestWriterV2)
    from pyiceberg.typedef import Record

    class DeletesWriter(ManifestWriterV2):
        def content(self):
            return ManifestContent.DELETES

        @property
        def _meta(self):
            return {**super()._meta, "content": "deletes"}

    pq.write_table(rows, path)
    kind = DataFileContent.EQUALITY_DELETES if equality_ids else \
        DataFileContent.POSITION_DELETES
    with table.transaction() as tx:
        update = tx.update_snapshot().fast_append()
        update.new_manifest_writer = lambda spec: DeletesWriter(
            spec, update.schema(), update.new_manifest_output(), update.snapshot_id,
            update._compression)
        data_file = DataFile.from_args(
            content=kind, file_path="file://" + path, file_format=FileFormat.PARQUET,
            partition=Record(), record_count=rows.num_rows,
            file_size_in_bytes=os.path.getsize(path), equality_ids=equality_ids)
        data_file.spec_id = 0
        update.append_data_file(data_file)
        update.commit()


def write_delta_log(root: str, adds: list[dict], reader_version: int = 3,
                    version: int = 0) -> None:
    """A hand-written Delta log commit at ``root`` with ``adds`` (add actions), for a
    protocol Delta writers with deletion vectors use (reader 3, ``deletionVectors``) or an
    older one; the table has one column ``x`` (long)."""
    os.makedirs(os.path.join(root, "_delta_log"), exist_ok=True)
    schema = {"type": "struct", "fields": [{"name": "x", "type": "long", "nullable": True,
                                            "metadata": {}}]}
    protocol = {"minReaderVersion": 1, "minWriterVersion": 2} if reader_version < 3 else \
        {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
         "writerFeatures": ["deletionVectors"]}
    actions = [{"protocol": protocol},
               {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
                             "schemaString": json.dumps(schema), "partitionColumns": [],
                             "configuration": {}, "createdTime": 0}}] if version == 0 else []
    actions += [{"add": a} for a in adds]
    with open(os.path.join(root, "_delta_log", f"{version:020d}.json"), "w") as out:
        out.write("\n".join(json.dumps(a) for a in actions) + "\n")


def delta_add(root: str, name: str, values: list[int], vector: bool) -> dict:
    """Write the data file ``name`` of ``values`` and give its add action (with a deletion
    vector descriptor, as Spark writes one, when ``vector``)."""
    path = os.path.join(root, name)
    os.makedirs(root, exist_ok=True)
    pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), path)
    add = {"path": name, "partitionValues": {}, "size": os.path.getsize(path),
           "modificationTime": 0, "dataChange": True,
           "stats": json.dumps({"numRecords": len(values), "minValues": {"x": min(values)},
                                "maxValues": {"x": max(values)}, "nullCount": {"x": 0}})}
    if vector:
        add["deletionVector"] = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^",
                                 "offset": 1, "sizeInBytes": 36, "cardinality": 2}
    return add
