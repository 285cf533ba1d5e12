"""A plain-Python Thrift compact protocol codec: the independent reader the footer kernels are
tested against, and the writer of edited footers (unknown fields, legacy statistics, ...).

A struct is a list of :class:`Field`; a list or set is :class:`Seq`; a map is :class:`Map`;
scalars are ``bool``, ``int``, ``float`` and ``bytes``. Decoding keeps each value's byte range.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field as dc_field

import numpy as np

from prune_engine.stats import _thrift as T

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)


@dataclass
class Field:
    fid: int
    type: int
    value: object
    start: int = -1  # byte range of the value in the decoded buffer
    end: int = -1


@dataclass
class Seq:
    elem: int
    items: list = dc_field(default_factory=list)
    kind: int = LIST


@dataclass
class Map:
    key: int
    value: int
    items: list = dc_field(default_factory=list)  # (key, value) pairs


# ------------------------------------------------------------------------------ decoding


class Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("truncated")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uvarint(self) -> int:
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def zigzag(self) -> int:
        u = self.uvarint()
        return (u >> 1) ^ -(u & 1)

    def value(self, t: int, in_container: bool):
        if t in (TRUE, FALSE):
            return (self.byte() == TRUE) if in_container else t == TRUE
        if t == BYTE:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if t in (I16, I32, I64):
            return self.zigzag()
        if t == DOUBLE:
            raw = self.data[self.pos:self.pos + 8]
            if len(raw) < 8:
                raise ValueError("truncated")
            self.pos += 8
            return struct.unpack("<d", raw)[0]
        if t == BINARY:
            n = self.uvarint()
            if self.pos + n > len(self.data):
                raise ValueError("truncated")
            self.pos += n
            return self.data[self.pos - n:self.pos]
        if t in (LIST, SET):
            b = self.byte()
            size, elem = b >> 4, b & 0x0F
            if size == 15:
                size = self.uvarint()
            return Seq(elem, [self.value(elem, True) for _ in range(size)], t)
        if t == MAP:
            size = self.uvarint()
            if size == 0:
                return Map(0, 0, [])
            kv = self.byte()
            k, v = kv >> 4, kv & 0x0F
            return Map(k, v, [(self.value(k, True), self.value(v, True)) for _ in range(size)])
        if t == STRUCT:
            return self.struct()
        raise ValueError(f"unknown type {t}")

    def struct(self) -> list[Field]:
        fields, last = [], 0
        while True:
            b = self.byte()
            if b == 0:
                return fields
            delta, t = b >> 4, b & 0x0F
            fid = last + delta if delta else self.zigzag()
            last = fid
            start = self.pos
            value = self.value(t, False)
            fields.append(Field(fid, t, value, start, self.pos))


def decode(data: bytes) -> list[Field]:
    """A struct (e.g. ``FileMetaData``) from its compact-protocol bytes."""
    return Reader(data).struct()


# ------------------------------------------------------------------------------ encoding


def uvarint(n: int) -> bytes:
    """``n`` as an unsigned LEB128 varint; a negative ``n`` as a writer's int64 would send it
    (its two's complement in 64 bits)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def zigzag(n: int) -> bytes:
    """``n`` (an int64) as Thrift's and Avro's zigzag varint."""
    return uvarint((n << 1) ^ (n >> 63))


def _value(t: int, v, in_container: bool, long_headers: bool) -> bytes:
    if t in (TRUE, FALSE):
        return bytes([TRUE if v else FALSE]) if in_container else b""
    if t == BYTE:
        return struct.pack("b", v)
    if t in (I16, I32, I64):
        return zigzag(v)
    if t == DOUBLE:
        return struct.pack("<d", v)
    if t == BINARY:
        return uvarint(len(v)) + v
    if t in (LIST, SET):
        n = len(v.items)
        head = bytes([(n << 4) | v.elem]) if n < 15 else bytes([0xF0 | v.elem]) + uvarint(n)
        return head + b"".join(_value(v.elem, x, True, long_headers) for x in v.items)
    if t == MAP:
        if not v.items:
            return b"\x00"
        return uvarint(len(v.items)) + bytes([(v.key << 4) | v.value]) + b"".join(
            _value(v.key, k, True, long_headers) + _value(v.value, x, True, long_headers)
            for k, x in v.items)
    if t == STRUCT:
        return encode(v, long_headers)
    raise ValueError(f"unknown type {t}")


def encode(fields: list[Field], long_headers: bool = False) -> bytes:
    """A struct's compact-protocol bytes; ``long_headers`` writes every field id in full."""
    out, last = bytearray(), 0
    for f in fields:
        t = f.type
        if t in (TRUE, FALSE):
            t = TRUE if f.value else FALSE
        delta = f.fid - last
        if 0 < delta <= 15 and not long_headers:
            out.append((delta << 4) | t)
        else:
            out.append(t)
            out += zigzag(f.fid)
        out += _value(t, f.value, False, long_headers)
        last = f.fid
    out.append(0)
    return bytes(out)


def get(fields: list[Field], fid: int) -> Field | None:
    return next((f for f in fields if f.fid == fid), None)


# ------------------------------------------------------------------------------ the kernel


def footer_of(data: bytes) -> bytes:
    """The footer bytes of a whole Parquet file."""
    (length,) = struct.unpack("<I", data[-8:-4])
    return data[-8 - length:-8]


def kernel(footer: bytes):
    return T.decode_footer(np.frombuffer(footer + b"\0", np.uint8).copy())


def edited(data: bytes, change) -> bytes:
    """The Parquet file ``data`` with its footer decoded, changed in place by
    ``change(tree)`` and encoded again; the pages stay where they are (no offset points into
    the footer)."""
    footer = footer_of(data)
    tree = decode(footer)
    change(tree)
    again = encode(tree)
    return data[:len(data) - 8 - len(footer)] + again + struct.pack("<I", len(again)) + b"PAR1"


def with_statistics(data: bytes, fields: dict[tuple[int, int], list[Field]]) -> bytes:
    """The Parquet file ``data`` with fields set in chunks' ``Statistics`` (``(row group,
    column)`` -> fields, replacing those of the same ids), as another writer would have
    written its footer; the data pages stay as they are (no offset points into the footer).
    """
    footer = footer_of(data)
    tree = decode(footer)
    for r, group in enumerate(get(tree, 4).value.items):
        for c, chunk in enumerate(get(group, 1).value.items):
            if (r, c) not in fields:
                continue
            meta = get(chunk, 3).value
            if get(meta, 12) is None:
                meta.append(Field(12, STRUCT, []))
                meta.sort(key=lambda f: f.fid)
            stats = get(meta, 12).value
            ids = {f.fid for f in fields[r, c]}
            stats[:] = sorted([f for f in stats if f.fid not in ids] + list(fields[r, c]),
                              key=lambda f: f.fid)
    edited = encode(tree)
    return data[:len(data) - 8 - len(footer)] + edited + struct.pack("<I", len(edited)) + b"PAR1"


def assert_kernel_matches(footer: bytes) -> None:
    """Every value the kernel reports is the one the Python decoder reads at that place."""
    tree = decode(footer)
    info, chunks, counts = kernel(footer)
    schema = get(tree, 2)
    assert (info[T.F_SCHEMA_START], info[T.F_SCHEMA_END]) == (schema.start, schema.end)
    assert info[T.F_NUM_ROWS] == get(tree, 3).value
    groups = get(tree, 4).value.items
    assert counts.tolist() == [get(g, 3).value for g in groups]
    flat = [c for g in groups for c in get(g, 1).value.items]
    assert len(chunks) == len(flat) == len(groups) * info[T.F_COLUMNS]

    def span(row, slot):
        off, size = row[slot], row[slot + 1]
        return None if size < 0 else footer[off:off + size]

    for row, chunk in zip(chunks, flat):
        meta = get(chunk, 3)
        if meta is None:
            assert row[T.C_TYPE] == -1, "no metadata (encrypted column): unknown"
            continue
        meta = meta.value
        assert row[T.C_TYPE] == get(meta, 1).value
        assert row[T.C_NUM_VALUES] == get(meta, 5).value
        stats = get(meta, 12)
        stats = stats.value if stats else []
        for fid, slot in ((1, T.C_OLD_MAX_OFF), (2, T.C_OLD_MIN_OFF), (5, T.C_MAX_OFF),
                          (6, T.C_MIN_OFF)):
            f = get(stats, fid)
            assert span(row, slot) == (f.value if f else None), f"statistics field {fid}"
        nulls = get(stats, 3)
        assert row[T.C_NULLS] == (nulls.value if nulls else -1)
        nans = get(stats, 9)
        assert row[T.C_NANS] == (nans.value if nans and nans.type == I64 else -1), "nan_count"
    created = get(tree, 6)
    assert span(info, T.F_CREATED_BY_OFF) == (created.value if created else None)
    kv = get(tree, 5)
    arrow = [v for k, v in ((get(e, 1).value, get(e, 2)) for e in kv.value.items)
             if k == b"ARROW:schema"] if kv else []
    assert span(info, T.F_ARROW_OFF) == (arrow[0].value if arrow else None)
    orders = get(tree, 7)
    assert info[T.F_COLUMN_ORDERS] == (len(orders.value.items) if orders else 0)
