"""The real inputs the corrupt-input fuzzer mutates, written by the harness itself.

:func:`build` writes, under one root folder:

- ``lake/part-0.parquet``, ``lake/part-1.parquet``: Parquet files as pyarrow writes them,
  with footer statistics on every column, Bloom filters (``k``, ``s``), dictionary pages,
  page checksums and the page index, several row groups, a struct, a list, a decimal, INT96
  timestamps (``part-1``), booleans and floats with NaN;
- ``stats/v2.parquet``: their statistics (``collect_stats`` with Bloom filters, value sets and
  a case-insensitive n-gram index of ``s``), saved by ``StatsTable.save`` (with its checksum);
- ``stats/v1.parquet``: the same statistics as format version 1 wrote them (no checksum;
  :func:`write_version_1`);
- ``iceberg/``: a PyIceberg table ``db.t`` in a SQLite catalog, identity-partitioned, from
  two appends (partitions of a string and of a decimal(38, 6), which manifests hold as an
  Avro ``fixed``): its metadata JSON, manifest list and manifests are mutated in place
  (copies of them in ``pristine/``).

Everything is deterministic (fixed values, file times, and PyIceberg's uuids, clocks and Avro
sync markers), so the same root gives the same bytes; :func:`build` records what it wrote in
``corpus.json`` (:func:`load` reads it back): the files, the byte ranges of the parts a target
mutates (footers, Bloom filters, dictionary pages), and the names and folders of all files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import random
import uuid
from decimal import Decimal
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq

LAKE_FILES = ("part-0.parquet", "part-1.parquet")
#: every file's modification time (so that saved statistics record the same identities)
MTIME_NS = 1_700_000_000_000_000_000
ICEBERG_TABLE = "db.t"
#: the folder of the copies of the files mutated in place (:func:`pristine`)
PRISTINE = "pristine"


def lake_table(part: int) -> pa.Table:
    """The rows of lake file ``part``: 150 rows in three row groups of 50."""
    n = 150
    base = 1000 * part
    rows = range(n)
    return pa.table({
        "k": pa.array([base + i if i % 37 else None for i in rows], pa.int64()),
        "s": pa.array([f"v{(i * 7) % 40}" if i % 11 else None for i in rows], pa.string()),
        "b": pa.array([i % 3 == 0 for i in rows], pa.bool_()),
        "f": pa.array([float("nan") if i % 29 == 0 else i / 10 - 5 for i in rows], pa.float64()),
        "d": pa.array([Decimal(i * 3 - 200 + part) / 100 for i in rows], pa.decimal128(20, 2)),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i + 1000 * part)
                        for i in rows], pa.timestamp("us")),
        "st": pa.array([{"a": i % 5, "t": f"t{i % 3}"} for i in rows],
                       pa.struct([("a", pa.int32()), ("t", pa.string())])),
        "tags": pa.array([[f"g{i % 4}", f"h{i % 6}"] if i % 5 else [] for i in rows],
                         pa.list_(pa.string())),
    })


def write_lake(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for part, name in enumerate(LAKE_FILES):
        path = folder / name
        pq.write_table(lake_table(part), path, row_group_size=50, use_dictionary=True,
                       write_page_checksum=True, write_page_index=True,
                       use_deprecated_int96_timestamps=part == 1,
                       bloom_filter_options={"k": {"ndv": 200, "fpp": 0.05},
                                             "s": {"ndv": 50, "fpp": 0.05}})
        os.utime(path, ns=(MTIME_NS, MTIME_NS))
        paths.append(path)
    return paths


def version_1_bytes(table: pa.Table, metadata_json: str) -> bytes:
    """The bytes of statistics as format version 1 saved them (before the checksum): the
    table, with the format version and the metadata JSON (here any text: a mutant's need not
    be JSON) in its schema metadata."""
    from prune_engine.stats import io as stats_io, layout

    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata({
        **(table.schema.metadata or {}),
        layout.FORMAT_VERSION_KEY: b"1",
        stats_io.METADATA_KEY: metadata_json.encode(),
    }), sink)
    return sink.getvalue().to_pybytes()


def write_version_1(table: pa.Table, metadata: dict, path) -> None:
    """Write statistics to ``path`` as format version 1 did (:func:`version_1_bytes`)."""
    Path(path).write_bytes(version_1_bytes(table, json.dumps(metadata)))


def lake_stats(lake: Path):
    """The statistics every stats target starts from, their file identities reduced to size
    and modification time (what version 1 recorded; the same in every build)."""
    import prune_engine as pe

    stats = pe.collect_stats(str(lake), bloom=True, dictionaries=True, ngram=["s"],
                             ngram_case_insensitive=True, progress=False)
    stats.metadata["files"] = {p: v[:2] for p, v in stats.metadata["files"].items()}
    return stats


@contextlib.contextmanager
def _deterministic(seed: int = 34):
    """PyIceberg's uuids, clocks and Avro sync markers, drawn from a seeded generator."""
    import pyiceberg.table.metadata as table_metadata
    import pyiceberg.table.update as table_update

    rnd = random.Random(seed)
    clock = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    with mock.patch("uuid.uuid4", lambda: uuid.UUID(int=rnd.getrandbits(128), version=4)), \
            mock.patch("os.urandom", lambda n: rnd.getrandbits(8 * n).to_bytes(n, "little")), \
            mock.patch("time.time", lambda: next(clock) / 1000), \
            mock.patch.object(table_metadata, "datetime_to_millis", lambda _: next(clock)), \
            mock.patch.object(table_update, "datetime_to_millis", lambda _: next(clock)):
        yield


def iceberg_catalog(root: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    folder = root / "iceberg"
    return SqlCatalog("fuzz", uri=f"sqlite:///{folder}/catalog.db",
                      warehouse=f"file://{folder}/wh")


def write_iceberg(root: Path) -> dict:
    """The Iceberg table; returns the paths (relative to ``root``) of its current metadata
    JSON, manifest list and manifests."""
    (root / "iceberg" / "wh").mkdir(parents=True)
    with _deterministic():
        catalog = iceberg_catalog(root)
        catalog.create_namespace("db")
        data = pa.table({
            "id": pa.array(range(40), pa.int64()),
            "name": pa.array([f"n{i % 9}" for i in range(40)], pa.string()),
            "amount": pa.array([Decimal(i * 12345) / 10**6 for i in range(40)],
                               pa.decimal128(38, 6)),
            "ts": pa.array([dt.datetime(2024, 3, 1) + dt.timedelta(minutes=i)
                            for i in range(40)], pa.timestamp("us")),
            "f": pa.array([i / 3 for i in range(40)], pa.float64()),
            "cat": pa.array(["red", "blue"] * 20, pa.string()),
            "price": pa.array([Decimal("1.5"), Decimal("-2.25")] * 20, pa.decimal128(38, 6)),
        })
        table = catalog.create_table(ICEBERG_TABLE, schema=data.schema)
        with table.update_spec() as update:  # a decimal partition: a fixed in the manifests
            update.add_identity("cat")
            update.add_identity("price")
        table.append(data.slice(0, 20))
        table.append(data.slice(20))
        table = catalog.load_table(ICEBERG_TABLE)
        snapshot = table.current_snapshot()
        manifests = [m.manifest_path for m in snapshot.manifests(table.io)]

    def rel(uri: str) -> str:
        return os.path.relpath(uri.removeprefix("file://").removeprefix("file:"), root)

    return {"metadata": rel(table.metadata_location), "manifest_list": rel(snapshot.manifest_list),
            "manifests": [rel(m) for m in manifests]}


def _parquet_ranges(path: Path) -> dict:
    """The byte ranges of a Parquet file's parts: footer, Bloom filters, dictionary pages."""
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    meta = pq.read_metadata(path)
    blooms, dictionaries = [], []
    for r in range(meta.num_row_groups):
        group = meta.row_group(r)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.bloom_filter_offset is not None and chunk.bloom_filter_offset > 0:
                blooms.append([chunk.bloom_filter_offset,
                               chunk.bloom_filter_offset + chunk.bloom_filter_length])
            if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
                dictionaries.append([chunk.dictionary_page_offset, chunk.data_page_offset])
    return {"footer": [len(data) - 8 - footer, len(data) - 8], "bloom": blooms,
            "dictionary": dictionaries}


def build(root: Path) -> dict:
    """Write every input under ``root`` (an empty or missing folder); returns and records
    (``corpus.json``) what :func:`load` gives."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    lake = write_lake(root / "lake")
    (root / "stats").mkdir()
    stats = lake_stats(root / "lake")
    stats.save(root / "stats" / "v2.parquet")
    write_version_1(stats.table, stats.metadata, root / "stats" / "v1.parquet")
    corpus = {
        "lake": [os.path.relpath(p, root) for p in lake],
        "ranges": {os.path.relpath(p, root): _parquet_ranges(p) for p in lake},
        "stats": {"v2": "stats/v2.parquet", "v1": "stats/v1.parquet"},
        "iceberg": write_iceberg(root),
    }
    # what a refusal may name a file of the corpus by: its name, or its folder under the root
    # (a mutant may garble the rest of a path it holds)
    files = [p for p in root.rglob("*") if p.is_file() and p.name not in ("corpus.json",
                                                                          "catalog.db")]
    corpus["names"] = sorted({p.name for p in files}
                             | {os.path.relpath(p.parent, root) + "/" for p in files})
    # the files mutated in place, kept whole: a child that crashes leaves its mutant there
    ice = corpus["iceberg"]
    for rel in [ice["metadata"], ice["manifest_list"], *ice["manifests"]]:
        (root / PRISTINE / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / PRISTINE / rel).write_bytes((root / rel).read_bytes())
    (root / "corpus.json").write_text(json.dumps(corpus, indent=1))
    return corpus


def load(root: Path) -> dict:
    return json.loads((Path(root) / "corpus.json").read_text())


def pristine(root: Path, rel: str) -> bytes:
    """The bytes of input ``rel`` as :func:`build` wrote it (for a file that mutants replace
    in place, from its copy: a child that crashed may have left a mutant in its place)."""
    copy = Path(root) / PRISTINE / rel
    return (copy if copy.exists() else Path(root) / rel).read_bytes()
