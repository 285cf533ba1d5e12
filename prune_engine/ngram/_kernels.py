"""numba kernels of the n-gram index: xxHash64, gram collection, SBBF, entry encoding, probing.

Private: the public wrappers in :mod:`.build` and :mod:`.probe` validate input and call these.
Every kernel is ``@njit(cache=True)`` with an explicit signature (compiled on first import of
this module, then loaded from numba's cache); array inputs are read-only C-contiguous arrays
(use :func:`ro`). Each kernel has a plain-Python twin in :mod:`.reference` that tests compare
against. The byte layout is :mod:`.format`'s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import boolean, float64, int8, int64, njit, types, uint8, uint32, uint64

from prune_engine.ngram.format import (
    BLOCK_BYTES, END_BYTE, END_MARK, FOLD_LOWER, FOLD_NONE, KIND_EXACT, KIND_SBBF,
    MAX_GRAM_SIZE, SALTS, START_BYTE, START_MARK, TRAILER_BYTES, VERSION,
)

_RO = dict(readonly=True)
U8 = types.Array(uint8, 1, "C", **_RO)
I64 = types.Array(int64, 1, "C", **_RO)
I32 = types.Array(types.int32, 1, "C", **_RO)
U64 = types.Array(uint64, 1, "C", **_RO)
B1 = types.Array(boolean, 1, "C", **_RO)
U8W = types.Array(uint8, 1, "C")

#: per-container status codes of :func:`probe_entries` / :func:`verify_entries`
OK = 0
CORRUPT = 1
BAD_VERSION = 2
OTHER_GRAM_SIZE = 3
#: build modes
MODE_AUTO = 0
MODE_EXACT = 1
MODE_SBBF = 2
#: query program opcodes (non-negative values push "gram i is present")
OP_AND = -1
OP_OR = -2
OP_TRUE = -3

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SALTS = np.array(SALTS, dtype=np.uint32)
_M32 = np.uint64(0xFFFFFFFF)


def ro(a: np.ndarray, dtype) -> np.ndarray:
    """A read-only C-contiguous view of ``a`` as ``dtype`` (the kernels' input type)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


@njit(uint64(uint64, int64), cache=True, inline="always")
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@njit([uint64(U8, int64), uint64(U8W, int64)], cache=True, inline="always")
def _rd64(b, p):
    v = np.uint64(0)
    for i in range(8):
        v |= np.uint64(b[p + i]) << np.uint64(8 * i)
    return v


@njit([uint32(U8, int64), uint32(U8W, int64)], cache=True, inline="always")
def _rd32(b, p):
    return (np.uint32(b[p]) | (np.uint32(b[p + 1]) << np.uint32(8))
            | (np.uint32(b[p + 2]) << np.uint32(16)) | (np.uint32(b[p + 3]) << np.uint32(24)))


@njit(types.void(U8W, int64, uint64, int64), cache=True, inline="always")
def _wr(b, p, v, nbytes):
    for i in range(nbytes):
        b[p + i] = np.uint8((v >> np.uint64(8 * i)) & np.uint64(0xFF))


@njit(uint64(uint64, uint64), cache=True, inline="always")
def _round(acc, lane):
    acc = acc + lane * _P2
    acc = _rotl(acc, 31)
    return acc * _P1


@njit([uint64(U8, int64, int64), uint64(U8W, int64, int64)], cache=True)
def xxh64(buf, start, length):
    """xxHash64 with seed 0 of ``buf[start:start + length]``."""
    p = start
    end = start + length
    if length >= 32:
        v1 = _P1 + _P2
        v2 = _P2
        v3 = np.uint64(0)
        v4 = np.uint64(0) - _P1
        limit = end - 32
        while p <= limit:
            v1 = _round(v1, _rd64(buf, p))
            v2 = _round(v2, _rd64(buf, p + 8))
            v3 = _round(v3, _rd64(buf, p + 16))
            v4 = _round(v4, _rd64(buf, p + 24))
            p += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        for v in (v1, v2, v3, v4):
            h = (h ^ _round(np.uint64(0), v)) * _P1 + _P4
    else:
        h = _P5
    h += np.uint64(length)
    while p + 8 <= end:
        h ^= _round(np.uint64(0), _rd64(buf, p))
        h = _rotl(h, 27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        h ^= np.uint64(_rd32(buf, p)) * _P1
        h = _rotl(h, 23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= np.uint64(buf[p]) * _P5
        h = _rotl(h, 11) * _P1
        p += 1
    h ^= h >> np.uint64(33)
    h *= _P2
    h ^= h >> np.uint64(29)
    h *= _P3
    h ^= h >> np.uint64(32)
    return h


@njit(types.Array(uint64, 1, "C")(U8, I64), cache=True)
def hash_slices(data, offsets):
    """xxHash64 of each ``data[offsets[i]:offsets[i + 1]]`` (the query's gram hashes)."""
    out = np.empty(offsets.size - 1, np.uint64)
    for i in range(out.size):
        out[i] = xxh64(data, offsets[i], offsets[i + 1] - offsets[i])
    return out


@njit(int64(U8W, int64, int64), cache=True, inline="always")
def _put_utf8(buf, p, cp):
    """Write code point (or marker) ``cp`` at ``buf[p]``; return the new position."""
    if cp == START_MARK:
        buf[p] = START_BYTE
        return p + 1
    if cp == END_MARK:
        buf[p] = END_BYTE
        return p + 1
    if cp < 0x80:
        buf[p] = cp
        return p + 1
    if cp < 0x800:
        buf[p] = 0xC0 | (cp >> 6)
        buf[p + 1] = 0x80 | (cp & 0x3F)
        return p + 2
    if cp < 0x10000:
        buf[p] = 0xE0 | (cp >> 12)
        buf[p + 1] = 0x80 | ((cp >> 6) & 0x3F)
        buf[p + 2] = 0x80 | (cp & 0x3F)
        return p + 3
    buf[p] = 0xF0 | (cp >> 18)
    buf[p + 1] = 0x80 | ((cp >> 12) & 0x3F)
    buf[p + 2] = 0x80 | ((cp >> 6) & 0x3F)
    buf[p + 3] = 0x80 | (cp & 0x3F)
    return p + 4


@njit(types.Tuple((types.Array(uint64, 1, "C"), types.Array(uint64, 1, "C"),
                   types.Array(int64, 1, "C"), int64))(
    I64, U8, B1, int64, int64, int64, I32, boolean,
    types.Array(uint64, 1, "C"), types.Array(int64, 1, "C"), int64), cache=True)
def collect_grams(offsets, data, valid, lo, hi, n, fold, use_fold, keys, stamp, gen):
    """Distinct gram hashes of rows ``lo..hi`` (one container), unsorted.

    ``keys``/``stamp``/``gen`` are a reusable open-addressing table (a slot is used iff
    ``stamp[slot] == gen``, so nothing is cleared between containers); it grows and is returned.
    For ``n <= 3`` a gram is first deduplicated as its packed code points (21 bits each) and
    only distinct grams are hashed; for longer grams every occurrence is hashed.
    """
    packed = n <= 3
    kmask = (np.uint64(1) << np.uint64(21 * n)) - np.uint64(1) if packed else np.uint64(0)
    cap = keys.size
    shift = np.uint64(64 - int(math.log2(cap)))
    found = np.empty(64, np.uint64)
    cnt = 0
    ring = np.zeros(MAX_GRAM_SIZE, np.int64)
    gbuf = np.empty(4 * MAX_GRAM_SIZE, np.uint8)
    ftop = fold.size
    for r in range(lo, hi):
        if not valid[r]:
            continue
        p = offsets[r]
        end = offsets[r + 1]
        key = np.uint64(0)
        filled = 0
        stage = 0
        while True:
            if stage == 0:
                cp = START_MARK
                stage = 1
            elif p < end:
                b0 = np.int64(data[p])
                width = 1 if b0 < 0xC0 else (2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4))
                if p + width > end:  # truncated sequence (not valid UTF-8): one U+FFFD
                    cp = 0xFFFD
                    p = end
                else:
                    cp = b0 if width == 1 else b0 & (0x7F >> width)
                    for j in range(1, width):
                        cp = (cp << 6) | (np.int64(data[p + j]) & 0x3F)
                    p += width
                if use_fold and cp < ftop:
                    cp = np.int64(fold[cp])
            elif stage == 1:
                cp = END_MARK
                stage = 2
            else:
                break
            filled += 1
            if packed:
                key = ((key << np.uint64(21)) | np.uint64(cp)) & kmask
                if filled < n:
                    continue
            else:
                ring[filled % n] = cp
                if filled < n:
                    continue
                q = 0
                for j in range(filled + 1, filled + 1 + n):
                    q = _put_utf8(gbuf, q, ring[j % n])
                key = xxh64(gbuf, 0, q)
            # insert key into the table
            slot = (key * _GOLDEN) >> shift
            while True:
                if stamp[slot] != gen:
                    stamp[slot] = gen
                    keys[slot] = key
                    if cnt == found.size:
                        grown = np.empty(2 * found.size, np.uint64)
                        grown[:cnt] = found[:cnt]
                        found = grown
                    found[cnt] = key
                    cnt += 1
                    break
                if keys[slot] == key:
                    break
                slot = (slot + np.uint64(1)) & np.uint64(cap - 1)
            if 2 * cnt > cap:
                cap *= 2
                shift -= np.uint64(1)
                keys = np.empty(cap, np.uint64)
                stamp = np.zeros(cap, np.int64)
                for i in range(cnt):
                    s = (found[i] * _GOLDEN) >> shift
                    while stamp[s] == gen:
                        s = (s + np.uint64(1)) & np.uint64(cap - 1)
                    stamp[s] = gen
                    keys[s] = found[i]
    hashes = found[:cnt].copy()
    if packed:
        for i in range(cnt):
            k = hashes[i]
            q = 0
            for j in range(n - 1, -1, -1):
                q = _put_utf8(gbuf, q, np.int64((k >> np.uint64(21 * j)) & np.uint64(0x1FFFFF)))
            hashes[i] = xxh64(gbuf, 0, q)
    return hashes, keys, stamp, gen


@njit(uint32(uint64, int64), cache=True, inline="always")
def _sbbf_bit(lo, i):
    """Bit of word ``i`` for a hash whose lower 32 bits are ``lo`` (32-bit product, top 5 bits)."""
    return np.uint32(1) << np.uint32(((lo * np.uint64(_SALTS[i])) & _M32) >> np.uint64(27))


@njit(types.void(U8W, int64, int64, uint64), cache=True, inline="always")
def _sbbf_insert(buf, pos, nblocks, h):
    block = ((h >> np.uint64(32)) * np.uint64(nblocks)) >> np.uint64(32)
    base = pos + np.int64(block) * BLOCK_BYTES
    lo = h & _M32
    for i in range(8):
        bit = _sbbf_bit(lo, i)
        w = base + 4 * i
        word = _rd32(buf, w) | bit
        _wr(buf, w, np.uint64(word), 4)


@njit(boolean(U8, int64, int64, uint64), cache=True, inline="always")
def _sbbf_check(buf, pos, nblocks, h):
    block = ((h >> np.uint64(32)) * np.uint64(nblocks)) >> np.uint64(32)
    base = pos + np.int64(block) * BLOCK_BYTES
    lo = h & _M32
    for i in range(8):
        bit = _sbbf_bit(lo, i)
        if (_rd32(buf, base + 4 * i) & bit) == 0:
            return False
    return True


@njit(boolean(U8, int64, int64, uint64), cache=True, inline="always")
def _exact_check(buf, pos, count, h):
    lo = 0
    hi = count
    while lo < hi:
        mid = (lo + hi) >> 1
        if _rd64(buf, pos + 8 * mid) < h:
            lo = mid + 1
        else:
            hi = mid
    return lo < count and _rd64(buf, pos + 8 * lo) == h


@njit(types.Tuple((int64, int64))(int64, float64, int64, int64), cache=True)
def choose_kind(ndv, bits_per_gram, exact_max, mode):
    """(kind, count) of a section holding ``ndv`` distinct grams."""
    nblocks = max(1, int(math.ceil(ndv * bits_per_gram / 256.0)))
    if mode == MODE_EXACT or (mode == MODE_AUTO and (ndv <= exact_max or 8 * ndv <= 32 * nblocks)):
        return KIND_EXACT, ndv
    return KIND_SBBF, nblocks


@njit(types.Tuple((types.Array(int64, 1, "C"), types.Array(uint8, 1, "C"),
                   types.Array(boolean, 1, "C")))(
    I64, U8, B1, I64, int64, I32, boolean, float64, int64, int64, int64), cache=True)
def build_entries(offsets, data, valid, groups, n, fold, case_insensitive, bits_per_gram,
                  max_bytes, exact_max, mode):
    """Encode one index entry per container (rows ``groups[i]..groups[i+1]``).

    Returns (entry offsets, entry bytes, entry valid); an entry above ``max_bytes`` is left out
    (valid False, zero length).
    """
    ncont = groups.size - 1
    out_off = np.zeros(ncont + 1, np.int64)
    out_ok = np.zeros(ncont, np.bool_)
    out = np.empty(1 << 16, np.uint8)
    keys = np.empty(1 << 12, np.uint64)
    stamp = np.zeros(1 << 12, np.int64)
    gen = 0
    nsec = 2 if case_insensitive else 1
    head = (4 + 8 * nsec + 7) // 8 * 8
    kinds = np.zeros(2, np.int64)
    counts = np.zeros(2, np.int64)
    pos = 0
    for c in range(ncont):
        gen += 1
        hs, keys, stamp, gen = collect_grams(offsets, data, valid, groups[c], groups[c + 1], n,
                                             fold, False, keys, stamp, gen)
        hf = np.empty(0, np.uint64)
        if case_insensitive:
            gen += 1
            hf, keys, stamp, gen = collect_grams(offsets, data, valid, groups[c], groups[c + 1],
                                                 n, fold, True, keys, stamp, gen)
        total = head + TRAILER_BYTES
        for s in range(nsec):
            h = hs if s == 0 else hf
            kind, count = choose_kind(h.size, bits_per_gram, exact_max, mode)
            kinds[s] = kind
            counts[s] = count
            total += 8 * counts[s] if kinds[s] == KIND_EXACT else BLOCK_BYTES * counts[s]
        if total > max_bytes:
            out_off[c + 1] = pos
            continue
        if pos + total > out.size:
            grown = np.empty(max(2 * out.size, pos + total), np.uint8)
            grown[:pos] = out[:pos]
            out = grown
        out[pos:pos + total] = 0
        out[pos] = VERSION
        out[pos + 1] = n
        out[pos + 2] = nsec
        q = pos + head
        for s in range(nsec):
            h = hs if s == 0 else hf
            t = pos + 4 + 8 * s
            out[t] = kinds[s]
            out[t + 1] = FOLD_NONE if s == 0 else FOLD_LOWER
            _wr(out, t + 4, np.uint64(counts[s]), 4)
            if kinds[s] == KIND_EXACT:
                srt = np.sort(h)
                for i in range(srt.size):
                    _wr(out, q + 8 * i, srt[i], 8)
                q += 8 * counts[s]
            else:
                for i in range(h.size):
                    _sbbf_insert(out, q, counts[s], h[i])
                q += BLOCK_BYTES * counts[s]
        _wr(out, q, xxh64(out, pos, q - pos), 8)
        pos += total
        out_off[c + 1] = pos
        out_ok[c] = True
    return out_off, out[:pos].copy(), out_ok


@njit(types.Tuple((int64, int64, int64, int64, int64, int64, int64, int64))(U8, int64, int64),
      cache=True)
def _parse_header(buf, s, length):
    """(status, gram size, kind/count/payload position of the plain and of the folded section).

    Checks the structure in O(1) (not the checksum); a missing section has kind -1.
    """
    k0 = -1
    c0 = 0
    p0 = 0
    k1 = -1
    c1 = 0
    p1 = 0
    if length < 4 + 8 + TRAILER_BYTES:
        return CORRUPT, 0, k0, c0, p0, k1, c1, p1
    if buf[s] != VERSION:
        return BAD_VERSION, 0, k0, c0, p0, k1, c1, p1
    n = np.int64(buf[s + 1])
    nsec = np.int64(buf[s + 2])
    if nsec < 1 or nsec > 2 or n < 1 or n > MAX_GRAM_SIZE:
        return CORRUPT, 0, k0, c0, p0, k1, c1, p1
    q = s + (4 + 8 * nsec + 7) // 8 * 8
    for i in range(nsec):
        t = s + 4 + 8 * i
        kind = np.int64(buf[t])
        fold = np.int64(buf[t + 1])
        count = np.int64(_rd32(buf, t + 4))
        if kind == KIND_EXACT:
            size = 8 * count
        elif kind == KIND_SBBF and count > 0:
            size = BLOCK_BYTES * count
        else:
            return CORRUPT, 0, k0, c0, p0, k1, c1, p1
        if fold == FOLD_NONE and k0 < 0:
            k0, c0, p0 = kind, count, q
        elif fold == FOLD_LOWER and k1 < 0:
            k1, c1, p1 = kind, count, q
        else:
            return CORRUPT, 0, k0, c0, p0, k1, c1, p1
        q += size
    if q + TRAILER_BYTES != s + length:
        return CORRUPT, 0, k0, c0, p0, k1, c1, p1
    return OK, n, k0, c0, p0, k1, c1, p1


@njit(types.Array(int8, 1, "C")(I64, U8, B1), cache=True)
def verify_entries(offsets, data, valid):
    """Per entry: OK, CORRUPT (structure or checksum) or BAD_VERSION; null entries are OK."""
    status = np.zeros(offsets.size - 1, np.int8)
    for c in range(status.size):
        if not valid[c]:
            continue
        s = offsets[c]
        length = offsets[c + 1] - s
        st = _parse_header(data, s, length)[0]
        if st == OK and xxh64(data, s, length - TRAILER_BYTES) != _rd64(data, s + length - TRAILER_BYTES):
            st = CORRUPT
        status[c] = st
    return status


@njit(boolean(U8, int64, int64, int64, uint64), cache=True, inline="always")
def _has(buf, kind, count, pos, h):
    if kind == KIND_EXACT:
        return _exact_check(buf, pos, count, h)
    return _sbbf_check(buf, pos, count, h)


@njit(types.Tuple((types.Array(boolean, 1, "C"), types.Array(int8, 1, "C")))(
    I64, U8, B1, int64, boolean, U64, I64), cache=True)
def probe_entries(offsets, data, valid, n, folded, hashes, prog):
    """May-match mask of every entry for one gram query, and a per-entry status.

    ``prog`` is the query in postfix: ``i >= 0`` pushes "gram ``hashes[i]`` is present",
    ``OP_AND``/``OP_OR`` combine the top two, ``OP_TRUE`` pushes true. A program of only gram
    pushes is a plain AND and stops at the first absent gram. Null entries, entries with
    another gram size (status OTHER_GRAM_SIZE) and entries without the wanted section (the
    folded one when ``folded``) are kept; bad entries are kept with their status set.
    """
    ncont = offsets.size - 1
    out = np.ones(ncont, np.bool_)
    status = np.zeros(ncont, np.int8)
    conj = True
    for op in prog:
        if op < 0:
            conj = False
    stack = np.zeros(max(1, prog.size), np.bool_)
    for c in range(ncont):
        if not valid[c]:
            continue
        s = offsets[c]
        st, g, k0, c0, p0, k1, c1, p1 = _parse_header(data, s, offsets[c + 1] - s)
        if st != OK:
            status[c] = st
            continue
        if g != n:
            status[c] = OTHER_GRAM_SIZE
            continue
        kind, count, pos = (k1, c1, p1) if folded else (k0, c0, p0)
        if kind < 0:
            continue
        if conj:
            for op in prog:
                if not _has(data, kind, count, pos, hashes[op]):
                    out[c] = False
                    break
            continue
        top = 0
        for op in prog:
            if op >= 0:
                stack[top] = _has(data, kind, count, pos, hashes[op])
                top += 1
            elif op == OP_TRUE:
                stack[top] = True
                top += 1
            elif op == OP_AND:
                top -= 1
                stack[top - 1] = stack[top - 1] and stack[top]
            else:
                top -= 1
                stack[top - 1] = stack[top - 1] or stack[top]
        out[c] = stack[0]
    return out, status
