"""The live data files of an Iceberg snapshot, as columns read straight from its manifests.

The snapshot's manifest list and its manifests, one record per data file, are decoded with
:mod:`prune_engine.stats.avro` (remote manifests read in parallel, for object stores),
keeping only what ``stats_from_iceberg`` uses: from the list, each manifest's path, partition
spec, content and sequence number; from the manifests, the entry's status and
sequence number, and the data file's content, path, record count, split offsets, partition
tuple, null / NaN counts and lower / upper bounds. Fields are found by their Iceberg field
ids (the names are the spec's too, but ids are what the spec guarantees).

Sequence numbers are inherited as the spec says (and PyIceberg does): an entry without one
takes its manifest's when the entry was ADDED or the manifest's is 0 (format v1). Entries
with status DELETED are dropped; live entries of delete manifests or of delete content
(position / equality deletes) are only counted.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from prune_engine.stats import _avro
from prune_engine.stats.avro import Tape, ranges, decode, flatten, read_container

# Iceberg field ids of the manifest entry (spec: "Manifests")
STATUS, SEQUENCE, DATA_FILE = 0, 3, 2
CONTENT, FILE_PATH, PARTITION, RECORD_COUNT, SPLIT_OFFSETS = 134, 100, 102, 103, 132
NULL_COUNTS, NAN_COUNTS, LOWER_BOUNDS, UPPER_BOUNDS = 110, 137, 125, 128
DELETED, ADDED, DATA = 2, 1, 0

#: the tape slots of the scalar fields, by path of field ids
_SCALARS = {(STATUS,): 0, (SEQUENCE,): 1, (DATA_FILE, CONTENT): 2, (DATA_FILE, FILE_PATH): 3,
            (DATA_FILE, RECORD_COUNT): 4, (DATA_FILE, SPLIT_OFFSETS, 133): 5}
#: the maps read: map field id -> its (key, value) slots
_MAPS = {NULL_COUNTS: (6, 7), NAN_COUNTS: (8, 9), LOWER_BOUNDS: (10, 11), UPPER_BOUNDS: (12, 13)}
_MAP_IDS = {LOWER_BOUNDS: (126, 127), UPPER_BOUNDS: (129, 130), NULL_COUNTS: (121, 122),
            NAN_COUNTS: (138, 139)}
_FIRST_PARTITION_SLOT = 14


@dataclass(frozen=True)
class Manifest:
    """One entry of a manifest list (content 0: data files, 1: delete files)."""

    manifest_path: str
    partition_spec_id: int
    content: int = 0
    sequence_number: int = 0


#: the manifest list's fields read (format v1 lists have no content or sequence number)
_LIST_FIELDS = {(500,): 0, (502,): 1, (517,): 2, (515,): 3}


def manifest_list(io, snapshot) -> list[Manifest]:
    """The manifests of ``snapshot`` (a PyIceberg ``Snapshot``), from its manifest list."""
    if snapshot.manifest_list is None:  # a v1 snapshot listing its manifests inline
        return [Manifest(m.manifest_path, m.partition_spec_id, int(m.content),
                         m.sequence_number or 0) for m in snapshot.manifests(io)]
    name = snapshot.manifest_list
    with io.new_input(name).open() as stream:
        container = read_container(stream.read(), name)
    tape = decode(container, flatten(container.schema, lambda p: _LIST_FIELDS.get(p, -1)),
                  name)
    _, paths = tape.bytes(0)
    specs, contents, sequences = (_scalar(tape, slot, 0)[0] for slot in (1, 2, 3))
    return [Manifest(bytes(p).decode("utf-8"), spec, content, sequence)
            for p, spec, content, sequence in zip(paths, specs.tolist(), contents.tolist(),
                                                  sequences.tolist())]


@dataclass
class MapColumn:
    """One map of every file: per entry the file number, the key (a field id) and the value
    (an int64 array for counts, a binary array for bounds)."""

    file: np.ndarray
    key: np.ndarray
    value: object


@dataclass
class DataFiles:
    """The live data files in commit order (sequence number, then as listed)."""

    paths: pa.Array
    record_count: np.ndarray
    split_counts: np.ndarray  # -1: no split offsets recorded
    spec_ids: np.ndarray
    partitions: list[dict[int, object]]  # per file: partition field id -> raw Avro value
    maps: dict[int, MapColumn]
    delete_files: int = 0


def binary_array(data: np.ndarray, pos: np.ndarray, size: np.ndarray) -> pa.Array:
    """The byte strings ``data[pos[i]:pos[i] + size[i]]`` as one Arrow binary array."""
    offsets = np.zeros(len(size) + 1, np.int64)
    np.cumsum(size, out=offsets[1:])
    values = data[ranges(pos, size)]
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(size),
                                            [None, pa.py_buffer(offsets),
                                             pa.py_buffer(values)]).cast(pa.binary())


class _Slots:
    """``want`` for :func:`flatten`: the fixed slots, and one slot per partition field (by
    its field id, else its name) in the order the file's schema lists them."""

    def __init__(self) -> None:
        self.partition: dict[object, int] = {}

    def __call__(self, path: tuple) -> int:
        if path in _SCALARS:
            return _SCALARS[path]
        if len(path) == 3 and path[:2] == (DATA_FILE, PARTITION):
            return self.partition.setdefault(path[2], _FIRST_PARTITION_SLOT + len(self.partition))
        if len(path) >= 3 and path[0] == DATA_FILE and path[1] in _MAP_IDS:
            ids = _MAP_IDS[path[1]]  # (..., map id, "element", key or value id)
            if path[-1] in ids:
                return _MAPS[path[1]][ids.index(path[-1])]
        return -1


def _scalar(tape: Tape, slot: int, default: int) -> tuple[np.ndarray, np.ndarray]:
    """Per record: the slot's value (``default`` where absent or null), and where present."""
    values = np.full(tape.count, default, np.int64)
    present = np.zeros(tape.count, bool)
    rec, value = tape.ints(slot)
    values[rec] = value
    present[rec] = True
    return values, present


def _partition_value(tape: Tape, slot: int, kinds: dict[int, int]):
    """Per record: a partition field's raw value (int, float, bool, str or bytes; None)."""
    out: list[object] = [None] * tape.count
    kind = kinds.get(slot)
    rec, ints, pos = tape.entries(slot)
    view = memoryview(tape.data)
    for r, v, p in zip(rec.tolist(), ints.tolist(), pos.tolist()):
        if p == -1:
            continue
        if kind == _avro.BOOLEAN:
            out[r] = bool(v)
        elif kind in (_avro.INT, _avro.LONG, _avro.ENUM):
            out[r] = v
        elif kind == _avro.FLOAT:
            out[r] = float(np.frombuffer(view[p:p + 4], "<f4")[0])
        elif kind == _avro.DOUBLE:
            out[r] = float(np.frombuffer(view[p:p + 8], "<f8")[0])
        elif kind == _avro.STRING:
            out[r] = bytes(view[p:p + v]).decode("utf-8", "replace")
        else:
            out[r] = bytes(view[p:p + v])
    return out


#: manifest schema text -> its flattened schema, partition slots and their Avro kinds (the
#: manifests of one table share a few schemas)
_FLAT: dict[bytes, tuple] = {}


def _flat(container) -> tuple:
    known = _FLAT.get(container.schema_text)
    if known is None:
        slots = _Slots()
        flat = flatten(container.schema, slots)
        kinds = {}
        for node, slot in enumerate(flat.slots.tolist()):
            if slot >= _FIRST_PARTITION_SLOT and \
                    flat.kinds[node] not in (_avro.NULL, _avro.UNION):
                kinds[slot] = int(flat.kinds[node])
        if len(_FLAT) >= 64:
            _FLAT.clear()
        known = _FLAT[container.schema_text] = (flat, slots.partition, kinds)
    return known


def _read_manifest(io, manifest) -> tuple:
    """One manifest's tape, the partition slots, their Avro kinds, and the manifest."""
    name = manifest.manifest_path
    with io.new_input(name).open() as stream:
        raw = stream.read()
    container = read_container(raw, name)
    flat, partition, kinds = _flat(container)
    return decode(container, flat, name), partition, kinds, manifest


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
    deletes = offset = 0
    for tape, partition_slots, kinds, manifest in read:
        status, _ = _scalar(tape, _SCALARS[(STATUS,)], 0)
        content, _ = _scalar(tape, _SCALARS[(DATA_FILE, CONTENT)], DATA)
        sequence, has_sequence = _scalar(tape, _SCALARS[(SEQUENCE,)], -1)
        inherit = ~has_sequence & ((manifest.sequence_number == 0) | (status == ADDED))
        if manifest.sequence_number is not None:
            sequence[inherit] = manifest.sequence_number
        live = status != DELETED
        is_data = live & (content == DATA) & (manifest.content == 0)
        deletes += int(np.count_nonzero(live & ~is_data))
        keep = np.flatnonzero(is_data)
        number = np.full(tape.count, -1, np.int64)
        number[keep] = offset + np.arange(len(keep))
        offset += len(keep)

        rec, size, pos = tape.entries(_SCALARS[(DATA_FILE, FILE_PATH)])
        order = np.full(tape.count, -1, np.int64)
        order[rec] = np.arange(len(rec))
        paths.append(binary_array(tape.data, pos[order[keep]], size[order[keep]]))
        records.append(_scalar(tape, _SCALARS[(DATA_FILE, RECORD_COUNT)], -1)[0][keep])
        split_rec = tape.entries(_SCALARS[(DATA_FILE, SPLIT_OFFSETS, 133)])[0]
        split_counts = np.bincount(split_rec, minlength=tape.count).astype(np.int64)
        split_counts[split_counts == 0] = -1
        splits.append(split_counts[keep])
        specs.append(np.full(len(keep), manifest.partition_spec_id, np.int64))
        sequences.append(sequence[keep])
        if partition_slots:
            values = {fid: _partition_value(tape, slot, kinds)
                      for fid, slot in partition_slots.items()}
            partitions.extend({fid: v[r] for fid, v in values.items()} for r in keep.tolist())
        else:
            partitions.extend([{}] * len(keep))
        for map_id, (key_slot, value_slot) in _MAPS.items():
            krec, key, _ = tape.entries(key_slot)
            _, vint, vpos = tape.entries(value_slot)
            mine = number[krec] >= 0
            if map_id in (LOWER_BOUNDS, UPPER_BOUNDS):
                value = binary_array(tape.data, vpos[mine], vint[mine])
            else:
                value = np.where(vpos[mine] == -1, -1, vint[mine])
            maps[map_id].append((number[krec[mine]], key[mine], value))
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

    joined = pa.concat_arrays(paths) if paths else pa.array([], pa.binary())
    return DataFiles(
        paths=joined.take(pa.array(order)),
        record_count=(np.concatenate(records) if records else np.zeros(0, np.int64))[order],
        split_counts=(np.concatenate(splits) if splits else np.zeros(0, np.int64))[order],
        spec_ids=(np.concatenate(specs) if specs else np.zeros(0, np.int64))[order],
        partitions=[partitions[i] for i in order.tolist()],
        maps={m: column(m) for m in _MAPS}, delete_files=deletes)
