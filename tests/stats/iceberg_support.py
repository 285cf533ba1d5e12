"""What the Iceberg statistics tests share: the rows of a table's files for the DuckDB oracle,
the soundness check of ``prune`` and ``classify`` against them, and the tools that edit a
table PyIceberg wrote, on disk, the way another writer (or a corruption) would have written it:
its metadata JSON, its manifest list and manifests (Avro, rewritten as one block)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from prune_engine.stats import avro
from tests.oracle.data import CID
from tests.oracle.classify import assert_sound


def local(uri: str) -> str:
    """The local path of a ``file:`` URI PyIceberg wrote."""
    return uri.removeprefix("file://")


def rows_by_file(stats, schema: pa.Schema | None = None) -> pa.Table:
    """Every row of the statistics' files, with the file's path in the oracle's container
    column; cast to ``schema`` (the table's current types, after a promotion) when given."""
    pieces = []
    for path in stats.column("path").to_pylist():
        data = pq.ParquetFile(path).read()  # the file alone: no partitions from its folders
        if schema is not None:
            data = data.select(schema.names).cast(schema)
        pieces.append(data.append_column(CID, pa.array([path] * data.num_rows, pa.string())))
    return pa.concat_tables(pieces, promote_options="permissive")


def check_sound(stats, rows: pa.Table, preds: list[str]) -> int:
    """Assert, for every predicate, that ``prune`` keeps each file holding a matching row
    and that ``classify`` calls "all" no file holding a row where it is not TRUE (DuckDB on
    the rows); return how many (predicate, file) pairs were pruned (so that a test can ask
    that the statistics were used at all)."""
    return sum(classes.count("none") for classes in assert_sound(stats, rows, preds))


def edit_metadata(table, change: Callable[[dict], None]) -> None:
    """Rewrite the table's current metadata JSON in place after ``change`` (the catalog
    keeps pointing at the same file, so its next ``load_table`` reads the edit)."""
    path = local(table.metadata_location)
    with open(path) as f:
        document = json.load(f)
    change(document)
    with open(path, "w") as f:
        json.dump(document, f)


def rewrite_avro(path: str, schema: Callable | None = None, data: Callable | None = None,
                 meta: Callable | None = None) -> None:
    """Rewrite the Avro file ``path`` as one uncompressed block, with its schema, record
    bytes and header metadata each passed through the given function (kept when None)."""
    with open(path, "rb") as f:
        container = avro.read_container(f.read(), path)
    new_schema = schema(container.schema) if schema else container.schema
    records = container.data.tobytes()
    new_records = data(records) if data else records
    header = dict(container.meta)
    new_meta = meta(header) if meta else header
    with open(path, "wb") as f:
        f.write(avro.write_container(new_schema, new_records, container.count,
                                     meta=new_meta))


def manifest_paths(table) -> list[str]:
    """The local paths of the manifests of the table's current snapshot."""
    return [local(m.manifest_path) for m in table.current_snapshot().manifests(table.io)]


def rewrite_manifests(table, **how) -> None:
    """:func:`rewrite_avro` on every manifest of the current snapshot."""
    for path in manifest_paths(table):
        rewrite_avro(path, **how)



def edit_entries(table, change: Callable) -> None:
    """Rewrite every manifest of the current snapshot with PyIceberg's own reader and writer
    (uncompressed), after ``change(data_file)`` on each entry's data file: a manifest as a
    writer with other statistics would have written it."""
    from pyiceberg.manifest import write_manifest

    metadata = table.metadata
    for manifest in table.current_snapshot().manifests(table.io):
        entries = manifest.fetch_manifest_entry(table.io, discard_deleted=False)
        for entry in entries:
            data_file = entry.data_file
            # (PyIceberg reads the maps as read-only dicts, at these positions of its record)
            for at, attr in ((8, "null_value_counts"), (9, "nan_value_counts"),
                             (10, "lower_bounds"), (11, "upper_bounds")):
                data_file[at] = dict(getattr(data_file, attr) or {})
            change(data_file)
        spec = metadata.specs()[manifest.partition_spec_id]
        writer = write_manifest(metadata.format_version, spec, metadata.schema(),
                                table.io.new_output(manifest.manifest_path),
                                manifest.added_snapshot_id, "null")
        with writer:
            for entry in entries:
                writer.add_entry(entry)
