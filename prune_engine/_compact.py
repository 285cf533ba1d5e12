"""Small Thrift compact-protocol structs read in Python: page headers, Bloom filter headers.

The footer is decoded by numba kernels (:mod:`prune_engine.stats._thrift`); the headers read
here are a few bytes each (integers, booleans, short binaries, nested structs), so plain Python
reads them: :func:`read_struct` gives ``{field id: value}`` and raises :class:`ThriftError`
for anything else, or bytes that end too soon.

>>> read_struct(bytes([0x15, 0x04, 0x1C, 0x11, 0x00, 0x00]), 0)
({1: 2, 2: {1: True}}, 6)
>>> read_struct(bytes([0x18, 0x02]) + b"ab" + bytes([0x00]), 0)  # a binary field
({1: b'ab'}, 5)
>>> read_struct(bytes([0x18, 0x09]) + b"ab", 0)
Traceback (most recent call last):
prune_engine._compact.ThriftError: the header is truncated
"""

from __future__ import annotations

#: nested structs deeper than this are refused (a header has two levels)
MAX_DEPTH = 4


class ThriftError(ValueError):
    """Bytes that are not the expected Thrift compact struct."""


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos``: ``(value, next position)``."""
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ThriftError("the header is truncated")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def read_struct(buf: bytes, pos: int, depth: int = 0) -> tuple[dict, int]:
    """The struct at ``pos`` whose fields are i32/i64, booleans, binary or structs:
    ``({field id: value}, next position)``."""
    if depth > MAX_DEPTH:
        raise ThriftError("the header nests too deep")
    fields: dict = {}
    last = 0
    while True:
        if pos >= len(buf):
            raise ThriftError("the header is truncated")
        b = buf[pos]
        pos += 1
        if b == 0:
            return fields, pos
        kind, delta = b & 0x0F, b >> 4
        if delta:
            fid = last + delta
        else:
            raw, pos = varint(buf, pos)
            fid = (raw >> 1) ^ -(raw & 1)
        last = fid
        if kind in (5, 6):  # i32, i64 (zigzag)
            raw, pos = varint(buf, pos)
            fields[fid] = (raw >> 1) ^ -(raw & 1)
        elif kind == 12:
            fields[fid], pos = read_struct(buf, pos, depth + 1)
        elif kind in (1, 2):  # a boolean in a struct: its value is the type
            fields[fid] = kind == 1
        elif kind == 8:  # binary (a data page header's statistics, as parquet-java writes)
            size, pos = varint(buf, pos)
            if size > len(buf) - pos:
                raise ThriftError("the header is truncated")
            fields[fid] = bytes(buf[pos:pos + size])
            pos += size
        else:
            raise ThriftError(f"unexpected Thrift type {kind} in the header")
