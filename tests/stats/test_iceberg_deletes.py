"""``metadata["iceberg"]["deletes"]``: the delete files of the snapshot, for the scan to apply.

PyIceberg 0.12 deletes by copy-on-write only (it rewrites the data files: no delete file), so
merge-on-read deletes are made here by hand through PyIceberg's own API: a Parquet position
delete file (``file_path``, ``pos``) or equality delete file, a delete manifest written by
PyIceberg's manifest writer with content DELETES, committed as a new snapshot. PyIceberg's
own read of the table then leaves the deleted rows out (so the delete is real), and the
statistics list the delete file with what a reader needs to apply it.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.expressions import LessThan
from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestContent,
                                ManifestEntry, ManifestEntryStatus, ManifestWriterV2)
from pyiceberg.typedef import Record

import prune_engine as pe
from tests.stats.iceberg_support import local

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


class _DeleteManifestWriter(ManifestWriterV2):
    """PyIceberg's v2 manifest writer, writing a delete manifest."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def _commit_deletes(table, files: list[DataFile]) -> None:
    """A new snapshot of ``table``: its manifests and one delete manifest of ``files``."""
    location = table.location().removeprefix("file://")
    with table.transaction() as tx:
        update = tx.update_snapshot().fast_append()
        path = f"file://{location}/metadata/deletes-{update._snapshot_id}-m0.avro"
        writer = _DeleteManifestWriter(table.spec(), table.schema(), table.io.new_output(path),
                                       update._snapshot_id, "null")
        with writer:
            for f in files:
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                                   snapshot_id=update._snapshot_id,
                                                   data_file=f))
        manifest = writer.to_manifest_file()
        update._process_manifests = lambda manifests: manifests + [manifest]
        update.commit()


def _delete_file(path: str, rows: pa.Table, content: DataFileContent, **more) -> DataFile:
    pq.write_table(rows, path)
    data_file = DataFile.from_args(content=content, file_path=f"file://{path}",
                                   file_format=FileFormat.PARQUET, partition=Record(),
                                   record_count=rows.num_rows,
                                   file_size_in_bytes=os.path.getsize(path), **more)
    data_file.spec_id = 0
    return data_file


def _table(catalog, name: str):
    table = catalog.create_table(f"db.{name}", schema=SCHEMA)
    table.append(pa.table({"id": range(10), "s": [f"r{i}" for i in range(10)]}, schema=SCHEMA))
    table.append(pa.table({"id": range(10, 15), "s": ["x"] * 5}, schema=SCHEMA))
    return table


def test_a_copy_on_write_delete_leaves_no_delete_file(catalog):
    table = _table(catalog, "cow")
    table.delete(LessThan("id", 4))  # PyIceberg rewrites the first file
    stats = pe.stats_from_iceberg(table)
    meta = stats.metadata["iceberg"]
    assert meta["deletes"] == [] and meta["delete_files"] == 0
    assert sum(stats.column("num_records").to_pylist()) == len(table.scan().to_arrow()) == 11


def test_position_and_equality_delete_files_are_listed(catalog, tmp_path):
    table = _table(catalog, "merge_on_read")
    data = sorted((f.file.file_path for f in table.scan().plan_files()))
    first = next(p for p in data if pq.read_table(local(p)).column("id")[0].as_py() == 0)
    positions = _delete_file(str(tmp_path / "pos.parquet"),
                             pa.table({"file_path": [first, first],
                                       "pos": pa.array([0, 3], pa.int64())}),
                             DataFileContent.POSITION_DELETES)
    _commit_deletes(table, [positions])
    # PyIceberg applies it: rows 0 and 3 of the first file are gone
    ids = sorted(catalog.load_table("db.merge_on_read").scan().to_arrow().column("id").to_pylist())
    assert ids == [1, 2] + list(range(4, 15))
    equality = _delete_file(str(tmp_path / "eq.parquet"), pa.table({"id": [12]}),
                            DataFileContent.EQUALITY_DELETES, equality_ids=[1])
    _commit_deletes(catalog.load_table("db.merge_on_read"), [equality])
    stats = pe.stats_from_iceberg(catalog, "db.merge_on_read")
    meta = stats.metadata["iceberg"]
    assert meta["delete_files"] == 2
    deletes = sorted(meta["deletes"], key=lambda d: d["content"])
    assert deletes == [
        {"path": str(tmp_path / "eq.parquet"), "content": "equality", "file_format": "parquet",
         "record_count": 1, "equality_ids": [1], "referenced_data_file": None,
         "sequence_number": 4, "spec_id": 0},
        {"path": str(tmp_path / "pos.parquet"), "content": "position", "file_format": "parquet",
         "record_count": 2, "referenced_data_file": None, "sequence_number": 3, "spec_id": 0}]
    json.dumps(stats.metadata)  # (saved with the statistics: JSON values only)
    # the data files are listed as before, paths written as the delete file's paths are
    assert sorted(stats.column("path").to_pylist()) == sorted(local(p) for p in data)
    assert os.path.exists(deletes[1]["path"])
