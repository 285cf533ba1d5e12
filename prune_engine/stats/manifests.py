"""The live data files of an Iceberg snapshot, as columns read straight from its manifests.

The snapshot's manifest list and its manifests, one record per data or delete file, are
decoded with :mod:`prune_engine.stats.avro` (remote manifests read in parallel, for object
stores), keeping only what ``stats_from_iceberg`` uses: from the list, each manifest's path,
partition spec, content and sequence number; from the manifests, the entry's status and
sequence number, and the file's content, path, format, record count, split offsets, partition
tuple, null / NaN counts, lower / upper bounds, equality ids and referenced data file.

How fields are found (what is trusted, and why):

- By their Iceberg field ids, which the specification guarantees. A writer that leaves the
  Avro field ids out (BigQuery's manifests carry none on the key / value fields of their maps)
  is read by the specification's field NAMES instead, which are as fixed as the ids
  (``lower_bounds`` is field 125, its entries' ``key`` 126 and ``value`` 127): where a field
  has no id, its spec name stands for it. The map key IS the column's field id either way.
- Every field read must have the Avro type the specification gives it (a path a string, a
  count a long, a bound bytes, ...) and appear once. A required field (status, file path,
  record count) that is missing, doubled or mistyped, or a mistyped optional one, makes the
  manifest unreadable: a :class:`~prune_engine.errors.StatsError` naming it. A map
  (``lower_bounds``, ``null_value_counts``, ...) whose entries cannot be matched without doubt
  (key and value ids that are not the spec's, swapped, mistyped, or an Avro ``map`` of
  string keys) is not read at all: :attr:`DataFiles.unused` says why, per manifest, and the
  caller warns; those statistics are unknown.
- File paths must be UTF-8 without NUL characters (the spec's strings; no file system opens
  anything else): otherwise a :class:`StatsError` naming the manifest. A string partition
  value that is not UTF-8 is :data:`UNREADABLE` (never decoded with replacement characters:
  the caller would take it for the exact value of every row).
- Any failure to open or read a file (missing, a path the file system refuses) is a
  :class:`StatsError` with a one-line message naming it.
- The table schema a manifest was written under (its Avro metadata key ``schema``, which the
  spec requires) gives the type each column had then (:attr:`DataFiles.written`); the caller
  leaves a column's bounds unknown in the files of a manifest whose type for it is none the
  current type can be promoted from (field ids reassigned, a corrupt table). A manifest
  without a readable ``schema`` gives no such check (the bounds' sizes still tell their type).

Sequence numbers are inherited as the spec says (and PyIceberg does): an entry without one
takes its manifest's when the entry was ADDED or the manifest's is 0 (format v1). Entries
with status DELETED are dropped; live entries of delete manifests or of delete content
(position / equality deletes) are listed in :attr:`DataFiles.deletes`.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError
from prune_engine.stats import _avro
from prune_engine.stats.avro import (Container, Flat, Tape, decode, flatten, ranges,
                                     read_container, stats_error)

# Iceberg field ids of the manifest entry (spec: "Manifests")
STATUS, SEQUENCE, DATA_FILE = 0, 3, 2
CONTENT, FILE_PATH, FILE_FORMAT, PARTITION, RECORD_COUNT = 134, 100, 101, 102, 103
SPLIT_OFFSETS, EQUALITY_IDS, REFERENCED_DATA_FILE = 132, 135, 143
NULL_COUNTS, NAN_COUNTS, LOWER_BOUNDS, UPPER_BOUNDS = 110, 137, 125, 128
DELETED, ADDED = 2, 1
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2

#: the spec's names of the fields read, for a writer that leaves out their Avro field ids:
#: per parent path (of ids), name -> id
_NAMES = {
    (): {"status": STATUS, "snapshot_id": 1, "sequence_number": SEQUENCE,
         "file_sequence_number": 4, "data_file": DATA_FILE},
    (DATA_FILE,): {"content": CONTENT, "file_path": FILE_PATH, "file_format": FILE_FORMAT,
                   "partition": PARTITION, "record_count": RECORD_COUNT,
                   "null_value_counts": NULL_COUNTS, "nan_value_counts": NAN_COUNTS,
                   "lower_bounds": LOWER_BOUNDS, "upper_bounds": UPPER_BOUNDS,
                   "split_offsets": SPLIT_OFFSETS, "equality_ids": EQUALITY_IDS,
                   "referenced_data_file": REFERENCED_DATA_FILE},
    (DATA_FILE, SPLIT_OFFSETS): {"element": 133},
    (DATA_FILE, EQUALITY_IDS): {"element": 136},
}
#: the maps read: map field id -> (name, key id, value id)
_MAP_IDS = {NULL_COUNTS: ("null_value_counts", 121, 122),
            NAN_COUNTS: ("nan_value_counts", 138, 139),
            LOWER_BOUNDS: ("lower_bounds", 126, 127), UPPER_BOUNDS: ("upper_bounds", 129, 130)}

#: the tape slots of the scalar (and list element) fields, by path of field ids
(_S_STATUS, _S_SEQUENCE, _S_CONTENT, _S_PATH, _S_RECORDS, _S_SPLITS, _S_FORMAT, _S_EQUALITY,
 _S_REFERENCED) = range(9)
_SCALARS = {(STATUS,): _S_STATUS, (SEQUENCE,): _S_SEQUENCE, (DATA_FILE, CONTENT): _S_CONTENT,
            (DATA_FILE, FILE_PATH): _S_PATH, (DATA_FILE, RECORD_COUNT): _S_RECORDS,
            (DATA_FILE, SPLIT_OFFSETS, 133): _S_SPLITS, (DATA_FILE, FILE_FORMAT): _S_FORMAT,
            (DATA_FILE, EQUALITY_IDS, 136): _S_EQUALITY,
            (DATA_FILE, REFERENCED_DATA_FILE): _S_REFERENCED}
#: the maps' (key, value) slots
_MAPS = {NULL_COUNTS: (9, 10), NAN_COUNTS: (11, 12), LOWER_BOUNDS: (13, 14),
         UPPER_BOUNDS: (15, 16)}
_FIRST_PARTITION_SLOT = 17

_INTS = frozenset({_avro.INT, _avro.LONG})
_TEXT = frozenset({_avro.STRING, _avro.BYTES})
_KIND_NAMES = {_avro.NULL: "null", _avro.BOOLEAN: "boolean", _avro.INT: "int",
               _avro.LONG: "long", _avro.FLOAT: "float", _avro.DOUBLE: "double",
               _avro.BYTES: "bytes", _avro.STRING: "string", _avro.FIXED: "fixed",
               _avro.RECORD: "record", _avro.ENUM: "enum", _avro.ARRAY: "array"}
#: the Avro kinds each slot may have, the field's name, and whether a manifest needs it
_EXPECTED = {_S_STATUS: (_INTS, "status", True), _S_SEQUENCE: (_INTS, "sequence_number", False),
             _S_CONTENT: (_INTS, "content", False), _S_PATH: (_TEXT, "file_path", True),
             _S_RECORDS: (_INTS, "record_count", True),
             _S_SPLITS: (_INTS, "split_offsets", False),
             _S_FORMAT: (_TEXT, "file_format", False),
             _S_EQUALITY: (_INTS, "equality_ids", False),
             _S_REFERENCED: (_TEXT, "referenced_data_file", False)}
_IDS = {_S_STATUS: STATUS, _S_SEQUENCE: SEQUENCE, _S_CONTENT: CONTENT, _S_PATH: FILE_PATH,
        _S_RECORDS: RECORD_COUNT, _S_SPLITS: SPLIT_OFFSETS, _S_FORMAT: FILE_FORMAT,
        _S_EQUALITY: EQUALITY_IDS, _S_REFERENCED: REFERENCED_DATA_FILE}


class _Unreadable:
    """The type of :data:`UNREADABLE`."""

    def __repr__(self) -> str:
        return "UNREADABLE"


#: a partition value that is present but cannot be read (a string that is not UTF-8, a
#: field of no single Avro type): not a null partition, and not a value
UNREADABLE = _Unreadable()


@dataclass(frozen=True)
class Manifest:
    """One entry of a manifest list (content 0: data files, 1: delete files)."""

    manifest_path: str
    partition_spec_id: int
    content: int = 0
    sequence_number: int = 0


def _canonical(path: tuple) -> tuple:
    """``path`` (field ids, or names where the writer gave no id) with each name the spec
    gives an id replaced by that id."""
    out: list = []
    for key in path:
        if isinstance(key, str):
            key = _NAMES.get(tuple(out), {}).get(key, key)
        out.append(key)
    return tuple(out)


def _read(io, name: str, what: str) -> bytes:
    """The bytes of the file ``name`` (an Iceberg ``what``); any failure is a StatsError."""
    try:
        with io.new_input(name).open() as stream:
            return stream.read()
    except FileNotFoundError:
        raise stats_error(name, f"no such file (the Iceberg {what})") from None
    except Exception as e:  # noqa: BLE001 - any file system's failure: a refusal naming it
        raise stats_error(name, f"cannot read the Iceberg {what}: {type(e).__name__}: {e}") \
            from None


def _text(raw: bytes, name: str, what: str) -> str:
    """A location read from a manifest (list) ``name``: UTF-8 without NUL, else refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise stats_error(name, f"{what} {raw[:120]!r} is not UTF-8") from None
    if "\x00" in text:
        raise stats_error(name, f"{what} {text[:120]!r} holds a NUL character")
    return text


class _Fields:
    """``want`` for :func:`flatten` over a fixed table of slots: counts how often each slot
    is asked for (a field id written twice is refused) and which paths the schema has."""

    def __init__(self, table: dict[tuple, int]) -> None:
        self.table = table
        self.hits: Counter = Counter()
        self.seen: set[tuple] = set()

    def slot(self, path: tuple) -> int:
        return self.table.get(path, -1)

    def __call__(self, path: tuple) -> int:
        path = _canonical(path)
        self.seen.add(path[:2])
        slot = self.slot(path)
        if slot >= 0:
            self.hits[slot] += 1
        return slot


def _kinds(flat: Flat) -> dict[int, set[int]]:
    """Per slot: the Avro kinds of its values (unions and nulls left out)."""
    out: dict[int, set[int]] = {}
    for kind, slot in zip(flat.kinds.tolist(), flat.slots.tolist()):
        if slot >= 0 and kind not in (_avro.UNION, _avro.NULL):
            out.setdefault(slot, set()).add(kind)
    return out


def _shown(kinds: set[int]) -> str:
    return "/".join(sorted(_KIND_NAMES.get(k, "?") for k in kinds)) or "null"


def _check(fields: _Fields, kinds: dict[int, set[int]], slot: int, expected: frozenset,
           what: str, required: bool) -> str | None:
    """Why the field of ``slot`` cannot be read (None: it can, or it is absent and optional)."""
    hits = fields.hits[slot]
    if hits == 0:
        return f"it has no {what} field" if required else None
    if hits > 1:
        return f"it declares its {what} field {hits} times"
    have = kinds.get(slot, set())
    if not have <= expected or (required and not have):
        return f"its {what} field is {_shown(have)}, not {_shown(set(expected))}"
    return None


#: the manifest list's fields read: path of field ids -> slot, with expected kinds
_LIST_FIELDS = {(500,): 0, (502,): 1, (517,): 2, (515,): 3}
_LIST_NAMES = {"manifest_path": 500, "partition_spec_id": 502, "content": 517,
               "sequence_number": 515}
_LIST_EXPECTED = {0: (_TEXT, "manifest_path", True), 1: (_INTS, "partition_spec_id", True),
                  2: (_INTS, "content", False), 3: (_INTS, "sequence_number", False)}


class _ListFields(_Fields):
    def __call__(self, path: tuple) -> int:
        if len(path) == 1 and isinstance(path[0], str):
            path = (_LIST_NAMES.get(path[0], path[0]),)
        slot = self.slot(path)
        if slot >= 0:
            self.hits[slot] += 1
        return slot


def manifest_list(io, snapshot) -> list[Manifest]:
    """The manifests of ``snapshot`` (a PyIceberg ``Snapshot``), from its manifest list."""
    if snapshot.manifest_list is None:  # a v1 snapshot listing its manifests inline
        return [Manifest(m.manifest_path, m.partition_spec_id, int(m.content),
                         m.sequence_number or 0) for m in snapshot.manifests(io)]
    name = snapshot.manifest_list
    container = read_container(_read(io, name, "manifest list"), name)
    fields = _ListFields(_LIST_FIELDS)
    flat = _flatten(container, fields, name)
    kinds = _kinds(flat)
    for slot, (expected, what, required) in _LIST_EXPECTED.items():
        why = _check(fields, kinds, slot, expected, what, required)
        if why:
            raise stats_error(name, f"not an Iceberg manifest list: {why}")
    tape = decode(container, flat, name)
    rec, paths = tape.bytes(0)
    specs, has_spec = _scalar(tape, 1, 0)
    contents, sequences = (_scalar(tape, slot, 0)[0] for slot in (2, 3))
    if len(rec) != tape.count or not has_spec.all():
        raise stats_error(name, "not an Iceberg manifest list: an entry has no manifest path "
                                "or partition spec")
    out = []
    for p, spec, content, sequence in zip(paths, specs.tolist(), contents.tolist(),
                                          sequences.tolist()):
        if content not in (0, 1):
            raise stats_error(name, f"a manifest of content {content} (0: data, 1: deletes)")
        out.append(Manifest(_text(bytes(p), name, "the manifest path"), spec, content,
                            sequence))
    if len({m.manifest_path for m in out}) < len(out):  # (its files would be listed twice)
        raise stats_error(name, "not an Iceberg manifest list: it names a manifest twice")
    return out


def _flatten(container: Container, want, name: str) -> Flat:
    try:
        return flatten(container.schema, want)
    except StatsError as e:
        raise stats_error(name, str(e)) from None


@dataclass
class MapColumn:
    """One map of every file: per entry the file number, the key (a field id) and the value
    (an int64 array for counts, a binary array for bounds)."""

    file: np.ndarray
    key: np.ndarray
    value: object


@dataclass
class DeleteEntry:
    """A live delete file of the snapshot, as its manifest records it."""

    path: str
    content: int  # POSITION_DELETES or EQUALITY_DELETES
    file_format: str
    record_count: int | None
    equality_ids: list[int]
    referenced_data_file: str | None
    sequence_number: int | None
    spec_id: int


@dataclass
class DataFiles:
    """The live data files in commit order (sequence number, then as listed)."""

    paths: pa.Array
    record_count: np.ndarray  # -1: not recorded
    split_counts: np.ndarray  # -1: no split offsets recorded
    spec_ids: np.ndarray
    partitions: list[dict[int, object]]  # per file: partition field id -> raw Avro value
    maps: dict[int, MapColumn]
    delete_files: int = 0
    #: per file: the index of its manifest's schema types in ``written``
    manifest: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: per file: the index of its manifest in ``manifest_paths``
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    manifest_paths: list[str] = field(default_factory=list)
    #: per manifest schema read: primitive field id -> its Iceberg type as the schema's JSON
    #: writes it (``"long"``, ``"decimal(9, 2)"``, ...); None where no schema was readable
    written: list[dict[int, str] | None] = field(default_factory=list)
    #: the live delete files, in the order listed
    deletes: list[DeleteEntry] = field(default_factory=list)
    #: per manifest whose statistics were (partly) left unread: (manifest path, why)
    unused: list[tuple[str, str]] = field(default_factory=list)


def binary_array(data: np.ndarray, pos: np.ndarray, size: np.ndarray) -> pa.Array:
    """The byte strings ``data[pos[i]:pos[i] + size[i]]`` as one Arrow binary array."""
    offsets = np.zeros(len(size) + 1, np.int64)
    np.cumsum(size, out=offsets[1:])
    values = data[ranges(pos, size)]
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(size),
                                            [None, pa.py_buffer(offsets),
                                             pa.py_buffer(values)]).cast(pa.binary())


class _Slots(_Fields):
    """``want`` for :func:`flatten` over a manifest: the fixed slots, the maps' key and value
    slots, and one slot per partition field (by its field id, else its name) in the order
    the file's schema lists them."""

    def __init__(self) -> None:
        super().__init__(_SCALARS)
        self.partition: dict[object, int] = {}

    def slot(self, path: tuple) -> int:
        if path in _SCALARS:
            return _SCALARS[path]
        if len(path) == 3 and path[:2] == (DATA_FILE, PARTITION):
            return self.partition.setdefault(path[2], _FIRST_PARTITION_SLOT + len(self.partition))
        if len(path) == 4 and path[0] == DATA_FILE and path[1] in _MAP_IDS:
            _, key, value = _MAP_IDS[path[1]]  # (data_file, map, element, key or value)
            if path[3] in (key, "key"):
                return _MAPS[path[1]][0]
            if path[3] in (value, "value"):
                return _MAPS[path[1]][1]
        return -1


def _scalar(tape: Tape, slot: int, default: int) -> tuple[np.ndarray, np.ndarray]:
    """Per record: the slot's value (``default`` where absent or null), and where present."""
    values = np.full(tape.count, default, np.int64)
    present = np.zeros(tape.count, bool)
    rec, value = tape.ints(slot)
    values[rec] = value
    present[rec] = True
    return values, present


def _partition_values(tape: Tape, slot: int, kind: int) -> list:
    """Per record: a partition field's raw value (int, float, bool, str or bytes; None for a
    null; :data:`UNREADABLE` for a string that is not UTF-8, or a field of no single type)."""
    out: list[object] = [None] * tape.count
    rec, ints, pos = tape.entries(slot)
    view = memoryview(tape.data)
    for r, v, p in zip(rec.tolist(), ints.tolist(), pos.tolist()):
        if p == -1:
            continue
        if kind == _avro.BOOLEAN:
            out[r] = bool(v)
        elif kind in (_avro.INT, _avro.LONG):
            out[r] = v
        elif kind == _avro.FLOAT:
            out[r] = struct.unpack("<f", view[p:p + 4])[0]
        elif kind == _avro.DOUBLE:
            out[r] = struct.unpack("<d", view[p:p + 8])[0]
        elif kind == _avro.STRING:
            try:
                out[r] = bytes(view[p:p + v]).decode("utf-8")
            except UnicodeDecodeError:
                out[r] = UNREADABLE
        elif kind in (_avro.BYTES, _avro.FIXED):
            out[r] = bytes(view[p:p + v])
        else:  # an enum, a field of several types: not a partition value Iceberg writes
            out[r] = UNREADABLE
    return out


def written_types(text: bytes | None) -> dict[int, str] | None:
    """The primitive fields of an Iceberg schema's JSON ``text`` (a manifest's ``schema``
    metadata): field id -> type text; None when there is no such JSON (or it is malformed).

    >>> written_types(b'{"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"},'
    ...               b' {"id": 2, "name": "s", "type": {"type": "struct", "fields": ['
    ...               b'{"id": 3, "name": "d", "type": "decimal(9, 2)"}]}}]}')
    {1: 'int', 3: 'decimal(9, 2)'}
    """
    if not text:
        return None
    try:
        schema = json.loads(text)
    except (ValueError, RecursionError):
        return None
    out: dict[int, str] = {}
    stack = [schema]  # (an explicit stack: a schema may nest thousands deep)
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if kind == "struct":
            for f in node.get("fields") or []:
                if not isinstance(f, dict):
                    return None
                if isinstance(f.get("type"), str):
                    if not isinstance(f.get("id"), int):
                        return None
                    out[f["id"]] = f["type"]
                else:
                    stack.append(f.get("type"))
        elif kind == "list":
            stack.append(node.get("element"))
            if isinstance(node.get("element"), str) and isinstance(node.get("element-id"), int):
                out[node["element-id"]] = node["element"]
        elif kind == "map":
            for part in ("key", "value"):
                stack.append(node.get(part))
                if isinstance(node.get(part), str) and isinstance(node.get(f"{part}-id"), int):
                    out[node[f"{part}-id"]] = node[part]
    return out


@dataclass(frozen=True)
class _Layout:
    """What a manifest schema gives: the flattened schema, the partition slots (by field id
    or name) and their Avro kinds, and the maps that cannot be read, with why."""

    flat: Flat
    partition: dict
    kinds: dict[int, int]
    unusable: dict[int, str]
    fault: str | None


#: manifest schema text -> its :class:`_Layout` (the manifests of one table share a few)
_FLAT: dict[bytes, _Layout] = {}


def _layout(container: Container, name: str) -> _Layout:
    known = _FLAT.get(container.schema_text)
    if known is None:
        slots = _Slots()
        flat = _flatten(container, slots, name)
        kinds = _kinds(flat)
        fault = None
        for slot, (expected, what, required) in _EXPECTED.items():
            fault = fault or _check(slots, kinds, slot, expected, what, required)
        if (DATA_FILE,) not in slots.seen:
            fault = "it has no data_file field"
        unusable = {}
        for map_id, (what, key_id, value_id) in _MAP_IDS.items():
            if (DATA_FILE, map_id) not in slots.seen:
                continue
            key_slot, value_slot = _MAPS[map_id]
            values = _TEXT - {_avro.STRING} if map_id in (LOWER_BOUNDS, UPPER_BOUNDS) \
                else _INTS
            why = _check(slots, kinds, key_slot, _INTS, f"{what} key", True) or \
                _check(slots, kinds, value_slot, values, f"{what} value", True)
            if why:
                unusable[map_id] = (f"{why} (the specification's {what} is an array of "
                                    f"records of an int key {key_id} and a value "
                                    f"{value_id})")
        partition_kinds = {}
        for slot in slots.partition.values():
            have = kinds.get(slot, set())
            partition_kinds[slot] = next(iter(have)) if len(have) == 1 and \
                slots.hits[slot] == 1 else -1
        if len(_FLAT) >= 64:
            _FLAT.clear()
        known = _FLAT[container.schema_text] = _Layout(flat, slots.partition, partition_kinds,
                                                       unusable, fault)
    if known.fault:
        raise stats_error(name, f"not an Iceberg manifest: {known.fault}")
    return known


def _read_manifest(io, manifest: Manifest) -> tuple:
    """One manifest's tape, its layout, the manifest, and its table schema's text."""
    name = manifest.manifest_path
    container = read_container(_read(io, name, "manifest"), name)
    layout = _layout(container, name)
    return decode(container, layout.flat, name), layout, manifest, container.meta.get("schema")


def _locations(tape: Tape, slot: int, records: np.ndarray, name: str, what: str,
               required: bool) -> pa.Array:
    """The strings of ``slot`` (one per record, or none) for ``records``, as a string array
    (null where absent): UTF-8 without NUL, else a StatsError naming the manifest ``name``."""
    rec, size, pos = tape.entries(slot)
    order = np.full(tape.count, -1, np.int64)
    order[rec] = np.arange(len(rec))
    at = order[records]
    present = at >= 0
    present[present] &= pos[at[present]] != -1
    if required and not present.all():
        raise stats_error(name, f"not an Iceberg manifest: an entry has no {what}")
    take = at[present]
    raw = binary_array(tape.data, pos[take], size[take])
    try:
        text = raw.cast(pa.string())
    except pa.ArrowInvalid:
        bad = next(b for b in raw.to_pylist() if _is_not_utf8(b))
        raise stats_error(name, f"the {what} {bad[:120]!r} is not UTF-8") from None
    if len(text) and pc.any(pc.match_substring(text, "\x00")).as_py():
        bad = next(t for t in text.to_pylist() if "\x00" in t)
        raise stats_error(name, f"the {what} {bad[:120]!r} holds a NUL character")
    if present.all():
        return text
    index = np.full(len(records), -1, np.int64)
    index[present] = np.arange(len(take))
    return text.take(pa.array(index, mask=index < 0))


def _is_not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def data_files(io, manifests: list[Manifest], threads: int = 8) -> DataFiles:
    """The live data files of ``manifests``. Remote manifests are read ``threads`` at a time;
    local ones one after the other (each takes a millisecond; threads would cost more)."""
    remote = any("://" in m.manifest_path and not m.manifest_path.startswith("file:")
                 for m in manifests)
    if remote and threads > 1 and len(manifests) > 1:
        with ThreadPoolExecutor(min(threads, len(manifests))) as pool:
            read = list(pool.map(lambda m: _read_manifest(io, m), manifests))
    else:
        read = [_read_manifest(io, m) for m in manifests]
    paths, records, splits, specs, sequences, partitions = [], [], [], [], [], []
    maps: dict[int, list] = {m: [] for m in _MAPS}
    deletes: list[DeleteEntry] = []
    unused: list[tuple[str, str]] = []
    texts: dict[bytes | None, int] = {}  # a manifest schema's text -> its index in written
    owners, sources = [], []
    offset = 0
    for index, (tape, layout, manifest, schema_text) in enumerate(read):
        name = manifest.manifest_path
        for why in layout.unusable.values():
            unused.append((name, why))
        status, _ = _scalar(tape, _S_STATUS, 0)
        content, _ = _scalar(tape, _S_CONTENT, DATA)
        sequence, has_sequence = _scalar(tape, _S_SEQUENCE, -1)
        inherit = ~has_sequence & ((manifest.sequence_number == 0) | (status == ADDED))
        if manifest.sequence_number is not None:
            sequence[inherit] = manifest.sequence_number
        if not np.isin(status, (0, 1, DELETED)).all():
            raise stats_error(name, "not an Iceberg manifest: an entry's status is not 0 "
                                    "(existing), 1 (added) or 2 (deleted)")
        live = status != DELETED
        if not np.isin(content[live], (DATA, POSITION_DELETES, EQUALITY_DELETES)).all() or \
                (manifest.content == 1 and (content[live] == DATA).any()):
            raise stats_error(name, "not an Iceberg manifest: an entry's content is not 0 "
                                    "(data), 1 or 2 (deletes), or data in a delete manifest")
        counts, has_count = _scalar(tape, _S_RECORDS, -1)
        is_data = live & (content == DATA) & (manifest.content == 0)
        keep = np.flatnonzero(is_data)
        number = np.full(tape.count, -1, np.int64)
        number[keep] = offset + np.arange(len(keep))
        offset += len(keep)

        paths.append(_locations(tape, _S_PATH, keep, name, "data file path", True))
        records.append(np.where(has_count & (counts >= 0), counts, -1)[keep])
        split_rec = tape.entries(_S_SPLITS)[0]
        split_counts = np.bincount(split_rec, minlength=tape.count).astype(np.int64)
        split_counts[split_counts == 0] = -1
        splits.append(split_counts[keep])
        specs.append(np.full(len(keep), manifest.partition_spec_id, np.int64))
        owners.append(np.full(len(keep), texts.setdefault(schema_text, len(texts)), np.int64))
        sources.append(np.full(len(keep), index, np.int64))
        sequences.append(sequence[keep])
        values = {fid: _partition_values(tape, slot, layout.kinds[slot])
                  for fid, slot in layout.partition.items()}
        partitions.extend({fid: v[r] for fid, v in values.items()} for r in keep.tolist())
        for map_id, (key_slot, value_slot) in _MAPS.items():
            if map_id in layout.unusable:
                continue
            krec, key, _ = tape.entries(key_slot)
            _, vint, vpos = tape.entries(value_slot)
            mine = number[krec] >= 0
            if map_id in (LOWER_BOUNDS, UPPER_BOUNDS):  # (a null value: no bound, not b"")
                null = vpos[mine] == -1
                value = binary_array(tape.data, np.where(null, 0, vpos[mine]),
                                     np.where(null, 0, vint[mine]))
                if null.any():
                    value = pc.if_else(pa.array(null), pa.nulls(len(value), pa.binary()), value)
            else:
                value = np.where(vpos[mine] == -1, -1, vint[mine])
            maps[map_id].append((number[krec[mine]], key[mine], value))
        deletes.extend(_deletes(tape, live & ~is_data, content, manifest, counts, has_count,
                                sequence, name))
    sequence = np.concatenate(sequences) if sequences else np.zeros(0, np.int64)
    order = np.argsort(sequence, kind="stable")  # commit order, then as listed
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))

    def column(map_id: int) -> MapColumn:
        parts = maps[map_id]
        files = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        keys = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        if map_id in (LOWER_BOUNDS, UPPER_BOUNDS):
            value = pa.concat_arrays([p[2] for p in parts]) if parts else pa.array([], pa.binary())
        else:
            value = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int64)
        return MapColumn(rank[files], keys, value)

    joined = pa.concat_arrays(paths) if paths else pa.array([], pa.string())
    return DataFiles(
        paths=joined.take(pa.array(order)),
        record_count=(np.concatenate(records) if records else np.zeros(0, np.int64))[order],
        split_counts=(np.concatenate(splits) if splits else np.zeros(0, np.int64))[order],
        spec_ids=(np.concatenate(specs) if specs else np.zeros(0, np.int64))[order],
        manifest=(np.concatenate(owners) if owners else np.zeros(0, np.int64))[order],
        source=(np.concatenate(sources) if sources else np.zeros(0, np.int64))[order],
        manifest_paths=[m.manifest_path for m in manifests],
        written=[written_types(text) for text in texts],
        partitions=[partitions[i] for i in order.tolist()],
        maps={m: column(m) for m in _MAPS}, delete_files=len(deletes), deletes=deletes,
        unused=unused)


def _deletes(tape: Tape, where: np.ndarray, content: np.ndarray, manifest: Manifest,
             counts: np.ndarray, has_count: np.ndarray, sequence: np.ndarray,
             name: str) -> list[DeleteEntry]:
    """The delete files among the records ``where`` of one manifest."""
    rows = np.flatnonzero(where)
    if not len(rows):
        return []
    paths = _locations(tape, _S_PATH, rows, name, "delete file path", True).to_pylist()
    formats = _locations(tape, _S_FORMAT, rows, name, "file format", False).to_pylist()
    referenced = _locations(tape, _S_REFERENCED, rows, name, "referenced data file",
                            False).to_pylist()
    rec, ids = tape.ints(_S_EQUALITY)
    equality: dict[int, list[int]] = {}
    for r, i in zip(rec.tolist(), ids.tolist()):
        equality.setdefault(r, []).append(i)
    out = []
    for j, r in enumerate(rows.tolist()):
        kind = int(content[r])  # (1 or 2: checked by the caller)
        out.append(DeleteEntry(
            path=paths[j], content=kind, file_format=(formats[j] or "parquet").lower(),
            record_count=int(counts[r]) if has_count[r] and counts[r] >= 0 else None,
            equality_ids=equality.get(r, []) if kind == EQUALITY_DELETES else [],
            referenced_data_file=referenced[j],
            sequence_number=int(sequence[r]) if sequence[r] >= 0 else None,
            spec_id=manifest.partition_spec_id))
    return out
