"""Parquet split-block Bloom filters: the bytes in a Parquet file, and the entries of the
statistics table's ``bloom_filter`` column.

In a Parquet file (parquet-format ``BloomFilter.md``), a column chunk's filter sits at the
``bloom_filter_offset`` its ``ColumnMetaData`` gives: a Thrift compact ``BloomFilterHeader``
(``1: i32 numBytes``, ``2: algorithm`` (``BLOCK``), ``3: hash`` (``XXHASH``), ``4: compression``
(``UNCOMPRESSED``)), then ``numBytes`` of bitset: blocks of eight little-endian u32 words. A
value's hash ``h`` is xxHash64 (seed 0) of its plain encoding; it selects block
``((h >> 32) * blocks) >> 32`` and, in word ``i`` of it, the bit ``(lower32(h) * SALTS[i]) >> 27``.

In the statistics, one entry per container and column (null = no filter, which keeps)::

    0  4 bytes  MAGIC
    4  u8       VERSION
    5  u8       length L of the encoding token
    6  L bytes  encoding token (ASCII, :mod:`.encoding`: how a value becomes the hashed bytes)
       zero padding to a multiple of 8
       u32      number F of filters (a row group has one; a file one per row group, or fewer)
       F x u32  blocks of each filter (a power of two)
       zero padding to a multiple of 8
       bitsets  the F filters' blocks, one after the other

A value may be in the container where it may be in one of its filters. The filters of a
file's row groups are kept apart unless they are sparse enough to share one: a filter of
``2b`` blocks folds into one of ``b`` blocks by OR-ing blocks ``2j`` and ``2j + 1`` (block
``j`` of ``b`` takes the hashes whose top bits select ``2j`` or ``2j + 1`` of ``2b``), and
filters of one size are OR-ed. A sparse filter (parquet-java sizes for 1 MiB unless told the
number of values) is folded while its bits stay sparse (:func:`shrink`), which keeps its
false-positive rate low and the statistics small. No step can lose a value: a fold only adds
bits.

>>> bits = np.zeros(16, np.uint32); bits[3] = 1; bits[12] = 2
>>> folded = fold(bits, 1); folded.tolist()
[0, 0, 0, 1, 2, 0, 0, 0]
>>> entry = encode_entry("int64", [folded, bits])
>>> token, filters = decode_entry(entry)
>>> token, [len(f) for f in filters], filters[0].tolist() == folded.tolist()
('int64', [8, 16], True)
"""

from __future__ import annotations

import functools
import struct

import numpy as np

from prune_engine._compact import ThriftError, read_struct, varint
from prune_engine.errors import IndexCorruptError
from prune_engine.ngram.format import SALTS

MAGIC = b"PEBF"
VERSION = 1
BLOCK_BYTES = 32
WORDS_PER_BLOCK = 8
#: a fold stops before the fraction of set bits would pass this: a filter of that fill
#: answers "maybe" for about 0.5 ** 8 (0.4%) of absent values
MAX_FILL = 0.5
#: the largest bitset a file may declare (parquet-java and Arrow cap theirs at 128 MiB)
MAX_BITSET_BYTES = 128 << 20


# ------------------------------------------------------------------------------ file bytes


#: a Bloom filter header that is malformed or not a split-block xxHash filter
HeaderError = ThriftError


#: the header after ``numBytes`` as Arrow and parquet-java write it: fields 2, 3 and 4 each a
#: union holding its first member (``BLOCK``, ``XXHASH``, ``UNCOMPRESSED``), then the end
_CANONICAL_TAIL = bytes([0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0])


def parse_header(buf: bytes) -> tuple[int, int]:
    """``(numBytes, header length)`` of the ``BloomFilterHeader`` at the start of ``buf``.

    Raises :class:`HeaderError` unless it is a split-block filter hashed with xxHash and
    stored uncompressed, of a positive multiple of 32 bytes.

    >>> parse_header(bytes([0x15, 0x80, 0x04, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0]))
    (256, 16)
    """
    if buf[:1] == b"\x15":  # the usual bytes: field 1 (i32), then the canonical tail
        raw, pos = varint(buf, 1)
        if buf[pos:pos + len(_CANONICAL_TAIL)] == _CANONICAL_TAIL:
            return _checked_size((raw >> 1) ^ -(raw & 1)), pos + len(_CANONICAL_TAIL)
    fields, end = read_struct(buf, 0)
    size = _checked_size(fields.get(1))
    for fid, what in ((2, "algorithm BLOCK"), (3, "hash XXHASH"), (4, "compression UNCOMPRESSED")):
        union = fields.get(fid)
        if not isinstance(union, dict) or list(union) != [1]:
            raise HeaderError(f"not a filter with {what}")
    return size, end


def _checked_size(size) -> int:
    """``numBytes``: a power-of-two number of 32-byte blocks, as every writer sizes its
    filters (Arrow refuses other sizes too) and as the statistics entries fold them; at
    most :data:`MAX_BITSET_BYTES`.

    >>> _checked_size(96)
    Traceback (most recent call last):
    prune_engine._compact.ThriftError: numBytes 96 is not a power-of-two number of 32-byte blocks
    """
    if not isinstance(size, int) or size <= 0 or size % BLOCK_BYTES:
        raise HeaderError(f"numBytes {size!r} is not a positive multiple of {BLOCK_BYTES}")
    if not _is_power_of_two(size // BLOCK_BYTES):
        raise HeaderError(f"numBytes {size} is not a power-of-two number of {BLOCK_BYTES}-byte "
                          "blocks")
    if size > MAX_BITSET_BYTES:
        raise HeaderError(f"numBytes {size} exceeds the cap of {MAX_BITSET_BYTES}")
    return size


# ------------------------------------------------------------------------------ probing

_SALTS = np.array(SALTS, np.uint64)
_M32 = np.uint64(0xFFFFFFFF)


def bit_masks(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For uint64 hashes: ``(high, masks)``, the block selector ``h >> 32`` and the eight u32
    words of bits each hash sets in its block."""
    h = np.asarray(h, np.uint64)
    with np.errstate(over="ignore"):
        bits = ((h[:, None] & _M32) * _SALTS[None, :] & _M32) >> np.uint64(27)
    return h >> np.uint64(32), (np.uint32(1) << bits.astype(np.uint32)).astype(np.uint32)


def may_hold(words: np.ndarray, h: np.ndarray) -> np.ndarray:
    """For each uint64 hash ``h``: may the one filter ``words`` (u32, whole blocks) hold it?

    >>> words = np.zeros(16, np.uint32)
    >>> high, masks = bit_masks(np.array([2**63 + 5], np.uint64))
    >>> words[8:] = masks[0]                        # its block: (high * 2) >> 32 = 1
    >>> may_hold(words, np.array([2**63 + 5, 7], np.uint64)).tolist()
    [True, False]
    """
    words = np.asarray(words, np.uint32)
    blocks = len(words) // WORDS_PER_BLOCK
    if not len(h) or not blocks:
        return np.ones(len(h), bool)  # no filter: anything may be there
    high, masks = bit_masks(h)
    block = ((high * np.uint64(blocks)) >> np.uint64(32)).astype(np.int64)
    got = words.reshape(-1, WORDS_PER_BLOCK)[:blocks][block]
    return ((got & masks) == masks).all(axis=1)


# ------------------------------------------------------------------------------ folding


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def fold(words: np.ndarray, blocks: int) -> np.ndarray:
    """The filter of ``words`` (u32, a power-of-two number of blocks) folded to ``blocks``
    blocks (a smaller power of two): it answers "maybe" for every value the original does."""
    have = len(words) // WORDS_PER_BLOCK
    if not (_is_power_of_two(have) and _is_power_of_two(blocks)) or blocks > have:
        raise ValueError(f"cannot fold {have} blocks into {blocks}")
    out = np.ascontiguousarray(words, np.uint32).reshape(blocks, have // blocks, WORDS_PER_BLOCK)
    return np.bitwise_or.reduce(out, axis=1).reshape(-1)


def combine(filters: list[np.ndarray], max_fill: float = MAX_FILL) -> list[np.ndarray]:
    """Filters holding every value of ``filters`` (u32 words each), as few as stay sparse:
    each one shrunk (:func:`shrink`), then those of one size OR-ed together while the
    result's fill stays at most ``max_fill``."""
    if len(filters) == 1:
        return [shrink(filters[0], max_fill)]
    out: list[np.ndarray] = []
    for f in sorted((shrink(f, max_fill) for f in filters), key=len):
        if out and len(out[-1]) == len(f):
            merged = out[-1] | f
            if fill(merged) <= max_fill:
                out[-1] = merged
                continue
        out.append(f)
    return out


#: set bits of each byte value (numpy < 2 has no ``bitwise_count``)
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def fill(words: np.ndarray) -> float:
    """The fraction of set bits."""
    if not len(words):
        return 1.0
    words = np.ascontiguousarray(words, np.uint32)
    if hasattr(np, "bitwise_count"):
        ones = int(np.bitwise_count(words).sum())
    else:
        ones = int(_POPCOUNT.take(words.view(np.uint8)).sum(dtype=np.int64))
    return ones / (32 * len(words))


def shrink(words: np.ndarray, max_fill: float = MAX_FILL) -> np.ndarray:
    """``words`` folded to the fewest blocks whose fill stays at most ``max_fill``.

    Folding ``2**k`` blocks into one sets a bit where any of them had it, so a fill ``f``
    becomes about ``1 - (1 - f) ** 2**k``: that picks ``k``, and the real fill is checked.

    >>> sparse = np.zeros(8 * 64, np.uint32); sparse[:8] = 1
    >>> len(shrink(sparse)) // WORDS_PER_BLOCK
    1
    """
    blocks = len(words) // WORDS_PER_BLOCK
    if not _is_power_of_two(blocks) or blocks == 1:
        return words
    f = fill(words)
    k = 0
    while (1 << (k + 1)) <= blocks and 1 - (1 - f) ** (1 << (k + 1)) <= max_fill:
        k += 1
    while k > 0:
        smaller = fold(words, blocks >> k)
        if fill(smaller) <= max_fill:
            return smaller
        k -= 1
    return words


# ------------------------------------------------------------------------------ entries


def header_length(token: str) -> int:
    """Bytes before the filter count in an entry with encoding ``token``."""
    return _pad8(6 + len(token))


def _pad8(n: int) -> int:
    return -(-n // 8) * 8


@functools.lru_cache(maxsize=256)
def _entry_head(token: str) -> bytes:
    """An entry's bytes before the filter count."""
    raw = token.encode("ascii")
    if len(raw) > 255:
        raise ValueError(f"encoding token too long: {token!r}")
    head = MAGIC + struct.pack("<BB", VERSION, len(raw)) + raw
    return head + b"\0" * (header_length(token) - len(head))


def encode_entry(token: str, filters: list[np.ndarray]) -> bytes:
    """The statistics entry of ``filters`` (u32 words each, a power-of-two number of blocks)
    for values encoded as ``token``."""
    head = _entry_head(token)
    blocks = []
    for f in filters:
        if len(f) % WORDS_PER_BLOCK or not _is_power_of_two(len(f) // WORDS_PER_BLOCK):
            raise ValueError(f"a filter of {len(f)} words is not a power-of-two of blocks")
        blocks.append(len(f) // WORDS_PER_BLOCK)
    sizes = struct.pack(f"<{1 + len(blocks)}I", len(blocks), *blocks)
    sizes += b"\0" * (_pad8(len(sizes)) - len(sizes))
    return b"".join([head, sizes, *(np.ascontiguousarray(f, "<u4").tobytes() for f in filters)])


def entry_layout(entry: bytes, container=None) -> tuple[str, int, tuple[int, ...]]:
    """``(token, offset of the first bitset, blocks of each filter)`` of one entry;
    :class:`IndexCorruptError` names what is wrong."""
    where = f" (container {container})" if container is not None else ""

    def corrupt(what: str):
        return IndexCorruptError(f"Bloom filter entry {what}{where}", container)

    if len(entry) < 6 or entry[:4] != MAGIC:
        raise corrupt("has bad magic bytes")
    if entry[4] != VERSION:
        raise corrupt(f"of unknown version {entry[4]}")
    try:
        token = entry[6:6 + entry[5]].decode("ascii")
    except UnicodeDecodeError:
        raise corrupt("has a malformed encoding") from None
    at = header_length(token)
    if len(entry) < at + 4:
        raise corrupt("is truncated")
    count = struct.unpack_from("<I", entry, at)[0]
    bits = at + _pad8(4 + 4 * count)
    if count == 0 or len(entry) < bits:
        raise corrupt("is truncated or malformed")
    blocks = struct.unpack_from(f"<{count}I", entry, at + 4)
    if not all(_is_power_of_two(b) for b in blocks) \
            or len(entry) != bits + BLOCK_BYTES * sum(blocks):
        raise corrupt("is truncated or malformed")
    return token, bits, blocks


def decode_entry(entry: bytes, container=None) -> tuple[str, list[np.ndarray]]:
    """``(token, filters)`` of one entry (u32 words each); :class:`IndexCorruptError` names
    what is wrong."""
    token, bits, blocks = entry_layout(entry, container)
    words = np.frombuffer(entry, "<u4", offset=bits)
    starts = np.cumsum((0,) + blocks) * WORDS_PER_BLOCK
    return token, [words[a:b] for a, b in zip(starts[:-1], starts[1:])]
