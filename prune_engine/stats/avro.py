"""Avro object container files, decoded into columns: what Iceberg manifests are written in.

Iceberg keeps per-file statistics in Avro manifests. Decoding them record by record into
Python objects costs about 25 µs per data file; a table of 100,000 files would spend seconds
before the first prune. Here a file's blocks are decompressed into one buffer and a numba
kernel (:mod:`prune_engine.stats._avro`) walks every record once, writing the values of the
*wanted* fields (chosen by their path of Iceberg field ids or names) onto a tape of flat
arrays; all others are skipped. The caller turns the tape into Arrow columns with numpy.

Supported: every Avro type (named types referenced by name, logical types as their
underlying type) and every codec of the specification (null, deflate, snappy, bzip2, xz,
zstandard). A schema that refers to itself is refused. Malformed files (bad magic, a block
that ends early, a sync marker that does not match, bytes past the last record, a boolean
byte other than 0 or 1, an enum index or union branch the schema does not have, a varint
longer than 10 bytes or wider than 64 bits, a negative ``fixed`` size, more records than
their bytes can hold, a block that decompresses past :data:`MAX_BLOCK` bytes) raise
:class:`~prune_engine.errors.StatsError` with a one-line message naming the file (see
:func:`stats_error`); nothing is guessed, and no input makes the kernel read outside its
buffers (:mod:`prune_engine.stats._avro`).

>>> raw = _example_file()
>>> container = read_container(raw, "example.avro")
>>> flat = flatten(container.schema, lambda path: {("x",): 0, ("s",): 1}.get(path, -1))
>>> tape = decode(container, flat, "example.avro")
>>> tape.ints(0)[1].tolist(), [bytes(b) for b in tape.bytes(1)[1]]
([7, -1], [b'a', b'bc'])
"""

from __future__ import annotations

import bz2
import json
import lzma
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from prune_engine.errors import StatsError, about
from prune_engine.stats import _avro as k

__all__ = ["Container", "Flat", "Tape", "decode", "flatten", "ranges", "read_container",
           "stats_error", "write_container", "zigzag", "text"]

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
#: the most bytes one block may decompress to (a manifest block holds kilobytes to megabytes;
#: past this a block is a decompression bomb, not a manifest)
MAX_BLOCK = 1 << 30
#: the most records a file may hold when its schema lets a record take no byte at all
#: (otherwise every record takes at least the schema's minimum size, which bounds the count)
MAX_EMPTY_RECORDS = 1 << 20

KINDS = {"null": k.NULL, "boolean": k.BOOLEAN, "int": k.INT, "long": k.LONG, "float": k.FLOAT,
         "double": k.DOUBLE, "bytes": k.BYTES, "string": k.STRING}

ERRORS = {k.TRUNCATED: "a record ends past the end of its block",
          k.BAD_VARINT: "an integer longer than 10 bytes or wider than 64 bits",
          k.BAD_LENGTH: "a negative or impossible length",
          k.BAD_UNION: "a union branch or enum symbol the schema does not have",
          k.TOO_DEEP: "values nested deeper than the schema",
          k.TRAILING: "bytes after the last record",
          k.BAD_BOOLEAN: "a boolean byte other than 0 or 1"}


def stats_error(name: str, text: str) -> StatsError:
    """The :class:`StatsError` ``"<name>: <text>"`` (:func:`~prune_engine.errors.about`: one
    line of at most 400 characters, the name first), naming ``name`` in ``containers``.

    >>> str(stats_error("m.avro", "bad\\n  block"))
    'm.avro: bad block'
    >>> len(str(stats_error("x" * 500, "y" * 500))) <= 400
    True
    """
    return StatsError(about(name, text), containers=[name])


# ------------------------------------------------------------------------------ container


@dataclass(frozen=True)
class Container:
    """An Avro file's writer schema (parsed JSON, and its text: a key for caches), its
    records' bytes (all blocks, decompressed, one after the other), the number of records,
    and the header's key-value metadata (``avro.schema``, ``avro.codec`` and the writer's
    own keys, as bytes)."""

    schema: object
    data: np.ndarray
    count: int
    schema_text: bytes = b""
    meta: dict = field(default_factory=dict)


def _varint(data: np.ndarray, p: int, name: str) -> tuple[int, int]:
    """A zigzag varint of the header (the kernel's reader)."""
    value, p = k._long(data, p, data.shape[0])
    if p < 0:
        raise stats_error(name, "not a readable Avro file: a header ends early")
    return int(value), p


def _bytes(data: np.ndarray, p: int, name: str) -> tuple[bytes, int]:
    size, p = _varint(data, p, name)
    if size < 0 or size > data.shape[0] - p:
        raise stats_error(name, "not a readable Avro file: a header ends early")
    return data[p:p + size].tobytes(), p + size


def _bounded(out: bytes, more: bool) -> bytes:
    """``out``, a block decompressed up to ``MAX_BLOCK + 1`` bytes; refused past the limit."""
    if more or len(out) > MAX_BLOCK:
        raise ValueError(f"the block decompresses past {MAX_BLOCK} bytes")
    return out


def _decompress(codec: str, payload: bytes, name: str) -> bytes:
    """One block's records, decompressed (at most :data:`MAX_BLOCK` bytes); any failure is
    an exception the caller reports as a corrupt block."""
    if codec == "null":
        return payload
    if codec == "deflate":
        inflate = zlib.decompressobj(-15)
        out = _bounded(inflate.decompress(payload, MAX_BLOCK + 1), bool(inflate.unconsumed_tail))
        if not inflate.eof:
            raise ValueError("the block's deflate stream ends early")
        return out
    if codec == "snappy":  # raw snappy (its length a varint of 32 bits), then a CRC-32
        import pyarrow as pa

        size = shift = p = 0
        while payload[p] & 0x80:
            size |= (payload[p] & 0x7F) << shift
            shift, p = shift + 7, p + 1
            if shift > 28:
                raise ValueError("the snappy length is longer than 5 bytes")
        size |= payload[p] << shift
        if size > 32 * len(payload) + 32:  # (snappy expands at most about 21 times)
            raise ValueError(f"the snappy length {size} exceeds what the block can hold")
        _bounded(b"", size > MAX_BLOCK)
        out = pa.Codec("snappy").decompress(payload[:-4], decompressed_size=size).to_pybytes()
        if zlib.crc32(out).to_bytes(4, "big") != payload[-4:]:
            raise ValueError("the snappy block's CRC does not match")
        return out
    if codec in ("bzip2", "xz"):
        unpack = bz2.BZ2Decompressor() if codec == "bzip2" else lzma.LZMADecompressor()
        out = unpack.decompress(payload, MAX_BLOCK + 1)
        if not unpack.eof and unpack.needs_input:
            raise ValueError("the block's compressed stream ends early")
        return _bounded(out, not unpack.eof)
    if codec == "zstandard":
        import pyarrow as pa

        stream = pa.CompressedInputStream(pa.BufferReader(payload), "zstd")
        out = stream.read(MAX_BLOCK + 1)
        return _bounded(out, False)
    raise stats_error(name, f"Avro codec {codec!r} is not one of the specification's")


def ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]`` .. ``starts[i] + sizes[i] - 1``, all ranges one after the
    other (a gather index)."""
    offsets = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])


def read_container(raw: bytes, name: str) -> Container:
    """Parse an Avro object container file: header, schema, codec and every block."""
    if raw[:4] != MAGIC:
        raise stats_error(name, "not an Avro file (no 'Obj\\x01' magic)")
    data = np.frombuffer(raw, np.uint8)
    meta: dict[str, bytes] = {}
    p = 4
    while True:
        count, p = _varint(data, p, name)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, p = _varint(data, p, name)
        for _ in range(count):
            key, p = _bytes(data, p, name)
            meta[key.decode("utf-8", "replace")], p = _bytes(data, p, name)
    sync = raw[p:p + SYNC_SIZE]
    p += SYNC_SIZE
    if len(sync) != SYNC_SIZE:
        raise stats_error(name, "not a readable Avro file: a header ends early")
    try:
        schema = json.loads(meta["avro.schema"])
    except (KeyError, ValueError, RecursionError) as e:
        raise stats_error(name, f"not a readable Avro file: no usable schema "
                                f"({type(e).__name__}: {e})") from None
    codec = meta.get("avro.codec", b"null").decode("utf-8", "replace")
    status, counts, starts, sizes, at = k.blocks(data, p, np.frombuffer(sync, np.uint8))
    if status != k.OK:
        raise stats_error(name, f"not a readable Avro file: the block at byte {at} is cut "
                                "short or its sync marker does not match")
    if codec == "null":
        data = data[ranges(starts, sizes)]
    else:
        view = memoryview(raw)
        spans = zip(starts.tolist(), (starts + sizes).tolist())
        try:
            blocks = [_decompress(codec, view[a:b], name) for a, b in spans]
            data = np.frombuffer(b"".join(blocks), np.uint8)
        except StatsError:
            raise
        except Exception as e:  # noqa: BLE001 - any codec failure is a corrupt block
            raise stats_error(name, f"not a readable Avro file: a block does not decompress "
                                    f"with {codec} ({e})") from None
    total = sum(counts.tolist())  # (Python integers: no overflow)
    return Container(schema, data, total, meta["avro.schema"], meta)


# ------------------------------------------------------------------------------ schema


@dataclass(frozen=True)
class Flat:
    """A schema as the kernel's arrays: per node its kind, argument (fields, branches or
    fixed size), first child and output slot; ``depth`` bounds the kernel's stack."""

    kinds: np.ndarray
    args: np.ndarray
    first: np.ndarray
    children: np.ndarray
    slots: np.ndarray
    depth: int
    #: the fewest bytes a record takes (0 for a schema of nulls and empty records)
    min_size: int = 1


#: the fewest bytes a value of each primitive kind takes (a fixed: its size)
_MIN_SIZE = {k.NULL: 0, k.FLOAT: 4, k.DOUBLE: 8}


def _key(schema: dict, default: str):
    """A field's path element: its Iceberg field id when it has one, else its name."""
    for attr in ("field-id", "element-id"):
        if attr in schema:
            return int(schema[attr])
    return default


def flatten(schema, want: Callable[[tuple], int]) -> Flat:
    """The node arrays of ``schema``. ``want(path)`` gives the output slot of the node at
    ``path`` (-1: not wanted); a path is a tuple of record fields' keys (field id, else
    name) and ``"element"`` (an array's item: its element id when given), ``"key"`` and
    ``"value"`` (a map's). A wanted union passes its slot to its branches (a null is then an
    entry with no position)."""
    kinds: list[int] = []
    args: list[int] = []
    first: list[int] = []
    children: list[int] = []
    slots: list[int] = []
    sizes: list[int] = []  # per node: the fewest bytes its value takes
    named: dict[str, object] = {}
    depth = [1]

    def node(kind: int, arg: int, slot: int) -> int:
        kinds.append(kind)
        args.append(arg)
        first.append(0)
        slots.append(slot)
        sizes.append(_MIN_SIZE.get(kind, 1) if kind != k.FIXED else arg)
        return len(kinds) - 1

    def link(parent: int, child_nodes: list[int]) -> None:
        first[parent] = len(children)
        children.extend(child_nodes)

    def walk(s, path: tuple, slot: int, level: int, seen: tuple) -> int:
        depth[0] = max(depth[0], level + 1)
        if isinstance(s, str):
            if s in KINDS:
                return node(KINDS[s], 0, slot)
            if s not in named:
                raise ValueError(f"unknown type name {s!r}")
            if s in seen:
                raise ValueError(f"type {s!r} refers to itself")
            return walk(named[s], path, slot, level, seen + (s,))
        if isinstance(s, list):
            union = node(k.UNION, len(s), slot)
            branches = [walk(b, path, slot, level, seen) for b in s]
            link(union, branches)
            sizes[union] = 1 + min((sizes[b] for b in branches), default=0)
            return union
        if not isinstance(s, dict):
            raise ValueError(f"not a schema: {s!r}")
        t = s.get("type")
        if t in ("record", "error", "enum", "fixed"):
            name = s["name"]
            full = name if "." in name or not s.get("namespace") else f"{s['namespace']}.{name}"
            named[full] = named[name.rsplit(".", 1)[-1]] = s
            seen = seen + (full,)
        if t in ("record", "error"):
            fields = s.get("fields", [])
            record = node(k.RECORD, len(fields), -1)
            members = [walk(f["type"], path + (_key(f, f["name"]),),
                            want(path + (_key(f, f["name"]),)), level + 1, seen)
                       for f in fields]
            link(record, members)
            sizes[record] = sum(sizes[m] for m in members)
            return record
        if t == "enum":
            return node(k.ENUM, len(s["symbols"]), slot)
        if t == "fixed":
            size = s["size"]
            if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size < 1 << 31:
                raise ValueError(f"fixed {s['name']!r} has size {size!r}, not a byte count")
            return node(k.FIXED, size, slot)
        if t == "array":
            element = path + (_key(s, "element"),)
            array = node(k.ARRAY, 1, -1)
            link(array, [walk(s["items"], element, want(element), level + 1, seen)])
            return array
        if t == "map":  # an array of (string key, value) records
            array = node(k.ARRAY, 1, -1)
            entry = node(k.RECORD, 2, -1)
            key, value = path + ("key",), path + ("value",)
            link(entry, [node(k.STRING, 0, want(key)),
                         walk(s["values"], value, want(value), level + 2, seen)])
            link(array, [entry])
            return array
        return walk(t, path, slot, level, seen)  # a primitive with attributes (logicalType)

    try:
        root = walk(schema, (), want(()), 0, ())
    except (KeyError, ValueError, TypeError, AttributeError, RecursionError) as e:
        text = " ".join(f"{type(e).__name__}: {e}".split())
        raise StatsError(f"not a usable Avro schema: {text[:300]}") from None
    return Flat(*(np.asarray(a, np.int64) for a in (kinds, args, first, children, slots)),
                depth=depth[0] + 1, min_size=sizes[root])


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True)
class Tape:
    """The decoded values of the wanted nodes, grouped by slot, in file order: per entry the
    record number, an integer (value or byte length) and a byte position in ``data`` (-1 for
    a null)."""

    data: np.ndarray
    count: int
    rec: np.ndarray
    int_: np.ndarray
    pos: np.ndarray
    bounds: np.ndarray  # slot s is entries bounds[s]:bounds[s + 1]

    def _range(self, slot: int) -> slice:
        if slot + 1 >= len(self.bounds):  # a slot the schema does not have: no entries
            return slice(0, 0)
        return slice(self.bounds[slot], self.bounds[slot + 1])

    def entries(self, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(record numbers, integers, positions) of the entries of ``slot``."""
        r = self._range(slot)
        return self.rec[r], self.int_[r], self.pos[r]

    def ints(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """(record numbers, values) of an int / long / boolean / enum slot's non-null entries."""
        rec, value, pos = self.entries(slot)
        present = pos != -1
        return rec[present], value[present]

    def bytes(self, slot: int) -> tuple[np.ndarray, list[memoryview]]:
        """(record numbers, values) of a bytes / string / fixed slot's non-null entries."""
        rec, size, pos = self.entries(slot)
        present = pos != -1
        view = memoryview(self.data)
        return rec[present], [view[p:p + n] for p, n in zip(pos[present].tolist(),
                                                            size[present].tolist())]


def decode(container: Container, flat: Flat, name: str) -> Tape:
    """Walk every record of ``container`` with ``flat``; raise on malformed records."""
    limit = len(container.data) // flat.min_size if flat.min_size else MAX_EMPTY_RECORDS
    if not 0 <= container.count <= limit:  # (also keeps the kernel's loop and arrays bounded)
        raise stats_error(name, f"not a readable Avro file: {container.count} records cannot "
                                f"fit in {len(container.data)} bytes")
    capacity = len(container.data) + 1
    out_slot = np.empty(capacity, np.int64)
    out_rec = np.empty(capacity, np.int64)
    out_int = np.empty(capacity, np.int64)
    out_pos = np.empty(capacity, np.int64)
    status, n = k.decode(container.data, container.count, flat.kinds, flat.args, flat.first,
                         flat.children, flat.slots, 0, flat.depth,
                         out_slot, out_rec, out_int, out_pos)
    if status != k.OK:
        raise stats_error(name, f"not a readable Avro file: {ERRORS[status]}")
    slots = int(flat.slots.max(initial=-1)) + 1
    slot = out_slot[:n].astype(np.int16 if slots < 2 ** 15 else np.int64)
    order = np.argsort(slot, kind="stable")  # a radix sort for 16-bit keys
    bounds = np.searchsorted(slot[order], np.arange(slots + 1))
    return Tape(container.data, container.count, out_rec[:n][order], out_int[:n][order],
                out_pos[:n][order], bounds)


# ------------------------------------------------------------------------------ writing


def zigzag(v: int) -> bytes:
    """Avro's encoding of an int or long: zigzag, then a varint."""
    v = (v << 1) ^ (v >> 63)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def text(b: bytes) -> bytes:
    """Avro's encoding of bytes or a string: the length, then the bytes."""
    return zigzag(len(b)) + b


def write_container(schema, records: bytes, count: int, codec: str = "null",
                    sync: bytes = bytes(range(16)), meta: dict | None = None) -> bytes:
    """An Avro file of one block: ``count`` records already encoded in ``records``,
    compressed with ``codec``, with the header's ``meta`` besides the schema and codec (for
    examples and tests; the engine only reads Avro)."""
    if codec == "deflate":
        squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
        payload = squeeze.compress(records) + squeeze.flush()
    elif codec == "snappy":
        import pyarrow as pa

        payload = pa.Codec("snappy").compress(records, asbytes=True) + \
            zlib.crc32(records).to_bytes(4, "big")
    elif codec == "zstandard":
        import pyarrow as pa

        payload = pa.Codec("zstd").compress(records, asbytes=True)
    elif codec == "bzip2":
        payload = bz2.compress(records)
    elif codec == "xz":
        payload = lzma.compress(records)
    else:
        payload = records
    extra = {k: v for k, v in (meta or {}).items() if k not in ("avro.schema", "avro.codec")}
    header = MAGIC + zigzag(2 + len(extra)) + text(b"avro.schema") \
        + text(json.dumps(schema).encode()) + text(b"avro.codec") + text(codec.encode()) \
        + b"".join(text(k.encode()) + text(v) for k, v in extra.items()) + zigzag(0)
    return header + sync + zigzag(count) + zigzag(len(payload)) + payload + sync


def _example_file() -> bytes:
    """A two-record Avro file (``x``: a nullable long, ``s``: a string), for the doctest."""
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "x", "type": ["null", "long"]}, {"name": "s", "type": "string"}]}
    records = zigzag(1) + zigzag(7) + text(b"a") + zigzag(1) + zigzag(-1) + text(b"bc")
    return write_container(schema, records, 2)
