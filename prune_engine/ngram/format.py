"""The bytes of one container's n-gram index, defined once (constants, Python encoder/decoder).

An index entry is a small self-checking blob: a header, one or two gram sets ("sections"), and
a trailing checksum. All integers are little-endian::

    0   u8   version            (VERSION; any other value is "unknown version")
    1   u8   gram_size          n, in code points (1..8)
    2   u8   num_sections       1 (case-sensitive set) or 2 (+ case-folded set)
    3   u8   reserved           0
    4   8 bytes per section:    u8 kind (KIND_EXACT | KIND_SBBF), u8 fold (FOLD_NONE |
                                FOLD_LOWER), u16 reserved 0, u32 count
        zero padding to a multiple of 8
        section payloads, in header order:
          KIND_EXACT: count sorted u64 gram hashes                       (8 * count bytes)
          KIND_SBBF:  count 256-bit blocks of eight u32 words (Parquet)  (32 * count bytes)
    -8  u64  checksum           xxHash64 (seed 0) of every byte before it

A gram is ``n`` consecutive code points of ``START + value + END``; the markers are the bytes
``0xFF`` and ``0xFE``, which never occur in UTF-8, so edge grams cannot collide with inner
ones. A gram's hash is xxHash64 (seed 0) of its UTF-8 bytes (markers as their single byte).
The split-block Bloom filter (SBBF) is Parquet's: block ``((h >> 32) * count) >> 32``, in word
``i`` the bit ``(lower32(h) * SALTS[i]) >> 27`` (32-bit product).

This module is plain Python and the one definition of these bytes, hash included
(:func:`xxh64`, :func:`gram_bytes`): the numba kernels (:mod:`._kernels`) write and read the
same layout with the same hash, and tests compare the two. (numba's cache notices a change of
the constants here, though the kernels bake them in: see :mod:`._cache`.)

>>> blob = encode_entry(3, [(KIND_EXACT, FOLD_NONE, [7, 5])])
>>> decode_entry(blob)
Entry(gram_size=3, sections=(Section(kind=0, fold=0, count=2, payload=(5, 7)),))
"""

from __future__ import annotations

import functools
import math
import struct
from typing import NamedTuple, Sequence

from prune_engine.errors import IndexCorruptError

VERSION = 1
KIND_EXACT = 0
KIND_SBBF = 1
FOLD_NONE = 0
FOLD_LOWER = 1
MAX_GRAM_SIZE = 8

#: code points standing for the start / end of a value inside grams (above Unicode's range)
START_MARK = 0x110000
END_MARK = 0x110001
#: their bytes in a gram's hashed form (never valid UTF-8)
START_BYTE = 0xFF
END_BYTE = 0xFE

#: Parquet SBBF salts (parquet-format BloomFilter.md)
SALTS = (0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
         0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31)

BLOCK_BYTES = 32
TRAILER_BYTES = 8

#: xxHash64's 64-bit mask and primes (used by :func:`xxh64` only)
_M64 = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                           0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data: bytes) -> int:
    """xxHash64 of ``data`` with seed 0 (the published algorithm, written out): a gram's hash
    (of its :func:`gram_bytes`) and an entry's checksum (of its bytes before the trailer).

    Defined here, in plain Python, because it is part of the format: the encoder and decoder
    below seal and verify entries with it, a probe hashes its query's grams with it, and the
    kernels' version (:mod:`._kernels`) is tested against it.

    >>> hex(xxh64(b"abc"))
    '0x44bc2cf5ad770999'
    """
    n = len(data)
    p = 0
    if n >= 32:
        v = [(_P1 + _P2) & _M64, _P2, 0, (-_P1) & _M64]
        while p + 32 <= n:
            for i in range(4):
                v[i] = _round(v[i], int.from_bytes(data[p + 8 * i:p + 8 * i + 8], "little"))
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for lane in v:
            h = ((h ^ _round(0, lane)) * _P1 + _P4) & _M64
    else:
        h = _P5
    h = (h + n) & _M64
    while p + 8 <= n:
        h ^= _round(0, int.from_bytes(data[p:p + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _M64
        p += 8
    if p + 4 <= n:
        h ^= (int.from_bytes(data[p:p + 4], "little") * _P1) & _M64
        h = (_rotl(h, 23) * _P2 + _P3) & _M64
        p += 4
    while p < n:
        h ^= (data[p] * _P5) & _M64
        h = (_rotl(h, 11) * _P1) & _M64
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


def gram_bytes(gram: Sequence[int]) -> bytes:
    """The hashed form of a gram: UTF-8 of its code points, markers as one byte each
    (START_BYTE, END_BYTE); a gram's hash is ``xxh64(gram_bytes(gram))``.

    >>> gram_bytes((START_MARK, ord("é"), END_MARK))
    b'\\xff\\xc3\\xa9\\xfe'
    """
    out = bytearray()
    for cp in gram:
        if cp == START_MARK:
            out.append(START_BYTE)
        elif cp == END_MARK:
            out.append(END_BYTE)
        else:
            out += chr(cp).encode("utf-8", "surrogatepass")
    return bytes(out)


class Section(NamedTuple):
    kind: int
    fold: int
    count: int
    payload: tuple  # sorted hashes (exact) or blocks as tuples of 8 words (sbbf)


class Entry(NamedTuple):
    gram_size: int
    sections: tuple


def header_bytes(num_sections: int) -> int:
    """Size of the header (fixed part + section table), padded to a multiple of 8."""
    return (4 + 8 * num_sections + 7) // 8 * 8


def payload_bytes(kind: int, count: int) -> int:
    return 8 * count if kind == KIND_EXACT else BLOCK_BYTES * count


def encode_entry(gram_size: int, sections: Sequence[tuple]) -> bytes:
    """Serialize ``sections`` = [(kind, fold, hashes_or_blocks)] (Python reference encoder).

    Exact hashes are sorted here; SBBF sections are given as a list of 8-word blocks.
    """
    head = struct.pack("<BBBB", VERSION, gram_size, len(sections), 0)
    body = b""
    for kind, fold, items in sections:
        items = sorted(items) if kind == KIND_EXACT else list(items)
        head += struct.pack("<BBHI", kind, fold, 0, len(items))
        if kind == KIND_EXACT:
            body += struct.pack(f"<{len(items)}Q", *items)
        else:
            body += b"".join(struct.pack("<8I", *block) for block in items)
    head += b"\0" * (header_bytes(len(sections)) - len(head))
    blob = head + body
    return blob + struct.pack("<Q", xxh64(blob))


def decode_entry(blob: bytes, container=None) -> Entry:
    """Parse and verify one entry; :class:`IndexCorruptError` names ``container`` when bad.

    Every count and length is checked against the entry's size before a byte is unpacked.
    The rules are the directory's (:mod:`.directory`), whose verdicts tests compare with this
    decoder's: one or two sections of distinct folds, each exact or a filter of at least one
    block, ending where the trailer starts, and the trailer the checksum of what precedes it.
    """
    def fail(why: str):
        raise IndexCorruptError(f"n-gram index of container {container!r}: {why}", container)

    if len(blob) < 4 + 8 + TRAILER_BYTES:
        fail(f"{len(blob)} bytes is too short")
    version, gram_size, nsec, _ = struct.unpack_from("<BBBB", blob, 0)
    if version != VERSION:
        fail(f"unknown format version {version} (this build reads version {VERSION})")
    if (struct.unpack_from("<Q", blob, len(blob) - TRAILER_BYTES)[0]
            != xxh64(blob[:-TRAILER_BYTES])):
        fail("checksum mismatch")
    if nsec not in (1, 2) or not 1 <= gram_size <= MAX_GRAM_SIZE:
        fail("malformed header")
    pos = header_bytes(nsec)
    sections = []
    for i in range(nsec):
        kind, fold, _, count = struct.unpack_from("<BBHI", blob, 4 + 8 * i)
        if kind not in (KIND_EXACT, KIND_SBBF) or fold not in (FOLD_NONE, FOLD_LOWER):
            fail("malformed section table")
        if kind == KIND_SBBF and count == 0:
            fail("a filter of no block")
        size = payload_bytes(kind, count)
        if pos + size > len(blob) - TRAILER_BYTES:
            fail("sections overrun the entry")
        if kind == KIND_EXACT:
            payload = struct.unpack_from(f"<{count}Q", blob, pos)
        else:
            payload = tuple(struct.unpack_from("<8I", blob, pos + BLOCK_BYTES * b)
                            for b in range(count))
        sections.append(Section(kind, fold, count, payload))
        pos += size
    if pos != len(blob) - TRAILER_BYTES:
        fail("trailing bytes after the sections")
    if len({s.fold for s in sections}) < len(sections):
        fail("two sections of the same fold")
    return Entry(gram_size, tuple(sections))


def sbbf_num_blocks(ndv: int, fpp: float) -> int:
    """Blocks for ``ndv`` distinct grams at false-positive rate ``fpp`` (at most, on average).

    >>> sbbf_num_blocks(1000, 0.01)
    42
    """
    return max(1, math.ceil(ndv * bits_per_gram(fpp) / 256.0))


@functools.lru_cache(maxsize=64)
def bits_per_gram(fpp: float) -> float:
    """Filter bits per distinct gram for an SBBF whose false-positive rate is ``fpp``.

    A gram lands in a random block, so a block holds a Poisson number ``k`` of grams (mean
    ``lam``) and a gram that is absent passes with probability ``(1 - (31/32) ** k) ** 8`` (one
    bit in each of the 8 words). The rate is that, averaged over ``k``; this finds the largest
    ``lam`` whose rate is at most ``fpp`` and returns ``256 / lam``. (The textbook formula
    ``-8 / ln(1 - fpp ** (1/8))`` assumes every block holds exactly ``lam`` grams: with it,
    the uneven loads push the rate to ~1.5 % for a 1 % target.) The values match the table of
    Parquet's BloomFilter.md (10.5 bits at 1 %).

    >>> round(bits_per_gram(0.01), 2)
    10.53
    """
    lo, hi = 1e-3, 256.0
    for _ in range(60):
        lam = (lo + hi) / 2
        if _sbbf_rate(lam) > fpp:
            hi = lam
        else:
            lo = lam
    return 256.0 / lo


def _sbbf_rate(lam: float) -> float:
    """False-positive rate of an SBBF whose blocks hold ``lam`` grams on average (Poisson)."""
    term = math.exp(-lam)  # P(k = 0)
    rate = 0.0
    for k in range(1, int(lam + 12 * math.sqrt(lam) + 40)):
        term *= lam / k
        rate += term * (1.0 - (31.0 / 32.0) ** k) ** 8
    return rate
