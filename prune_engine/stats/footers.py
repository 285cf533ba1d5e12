"""What a scan needs of each file's footer, recorded with the statistics that read it.

``pe.scan`` unifies the Arrow schemas of every file of the source and counts their row groups
before it reads one row. ``collect_stats`` has read every footer already; it records, per file,
the id of its Arrow schema and its number of row groups (``metadata["footers"]``), and each
distinct schema once (``metadata["schemas"]``: id -> the schema in Arrow IPC, base64). A scan
given these statistics takes them for every file whose identity (size, modification time, ...)
is the one recorded, and opens only the footers of the files it reads: a point lookup or a
top-k over 2,000 files opens one footer, not 2,000 (on an object store, one request each).

>>> import pyarrow as pa
>>> record = Record()
>>> record.add("a.parquet", pa.schema([("x", pa.int64())]), 3)
>>> known = record.metadata()
>>> read(known)["a.parquet"]
(x: int64, 3)
"""

from __future__ import annotations

import base64
import hashlib

import pyarrow as pa

FOOTERS = "footers"
SCHEMAS = "schemas"


class Record:
    """The footers' record being written: files and their distinct schemas."""

    def __init__(self) -> None:
        self.files: dict[str, list] = {}
        self.schemas: dict[str, str] = {}
        self._ids: dict[int, str] = {}  # id(schema object) -> schema id (schemas are shared)

    def add(self, path: str, schema: pa.Schema, row_groups: int) -> None:
        key = self._ids.get(id(schema))
        if key is None:
            blob = schema.serialize().to_pybytes()
            key = hashlib.sha1(blob).hexdigest()[:16]
            self.schemas[key] = base64.b64encode(blob).decode("ascii")
            self._ids[id(schema)] = key
        self.files[path] = [key, int(row_groups)]

    def metadata(self) -> dict:
        return {FOOTERS: self.files, SCHEMAS: self.schemas}


def merge(metadatas: list[dict], paths=None) -> dict:
    """One record of several (``paths``: keep only these files); empty when one lacks it."""
    if not metadatas or any(FOOTERS not in m for m in metadatas):
        return {}
    files: dict = {}
    schemas: dict = {}
    for m in metadatas:
        files.update(m[FOOTERS])
        schemas.update(m[SCHEMAS])
    if paths is not None:
        files = {p: v for p, v in files.items() if p in paths}
    used = {v[0] for v in files.values()}
    return {FOOTERS: files, SCHEMAS: {k: v for k, v in schemas.items() if k in used}}


def read(metadata: dict) -> dict[str, tuple[pa.Schema, int]]:
    """Per recorded file: its Arrow schema and number of row groups ({} when not recorded)."""
    if FOOTERS not in metadata:
        return {}
    schemas = {k: pa.ipc.read_schema(pa.py_buffer(base64.b64decode(v)))
               for k, v in metadata.get(SCHEMAS, {}).items()}
    return {path: (schemas[key], n) for path, (key, n) in metadata[FOOTERS].items()
            if key in schemas}
