"""numba kernels of the n-gram index: gram collection, entry encoding, entry directory, probing.

Private: :mod:`.build` and :mod:`.probe` validate input and call the three kernels of this
module, :func:`build_entries`, :func:`read_directory` and :func:`probe_entries`. Only those
have explicit signatures and ``cache=True``: they compile when this module is first imported
with a cold numba cache and load from the cache afterwards. The helpers (``_`` names, under
``@_helper``) compile into the kernels that call them, with no Python-callable wrapper. Array
inputs are read-only C-contiguous arrays (use :func:`ro`). Tests compare each kernel with its
plain-Python twin (:mod:`.reference`, :mod:`.format`); the byte layout is :mod:`.format`'s.

Rules that keep the first compile short and the loops fast
----------------------------------------------------------
* Helpers get no signature and no ``inline="always"`` (which re-types a helper at every call
  site): each compiles once per argument types.
* Constants passed to helpers are typed (``np.int64(0)``, ``np.uint64(27)``): a literal
  argument makes numba compile one more copy of the helper per value.
* A per-element loop never calls a helper that takes an array and branches: numba keeps two
  reference-count calls around each such call (~20 ns). Those loops sit in one helper called
  once per container or per gram (:func:`_ascii_pass`, :func:`_keep_having`); only the
  branch-free byte readers (:func:`_rd32`, :func:`_rd64`) are called per element.
* Hot loops index with unsigned integers: numba then skips its negative-index fix-up, and
  LLVM fuses the byte loads of :func:`_rd64` into one load.
* numba's ``np.sort`` costs a second of compile: :func:`_sort_unique` is a short radix sort;
  and only ``np.zeros`` allocates (each allocation function and dtype compiles separately).

Finding the distinct grams of a container without hashing every gram
--------------------------------------------------------------------
A container of 10,000 strings has ~500,000 grams but a few thousand distinct ones; only the
distinct ones need their xxHash64. Most values are all ASCII, and a gram of at most 3 code
points that are ASCII or markers ("small") is its own hashed bytes, which fit in 24 bits
(little-endian: the oldest byte lowest). :func:`_ascii_pass` slides that key over the bytes of
every all-ASCII value and dedupes it in a 2^24-bit bitmap (2 MiB, allocated once per build):
one load and, the first time, one store and an append to the list of new keys, whose bits are
cleared after the container. The grams that end in the same two bytes share 32 bytes of it.

A value with a non-ASCII byte (and every value when ``n > 3``) goes to :func:`_other_grams`,
which decodes code points and lists every gram occurrence: its code points packed 21 bits
each (``n <= 3``) or its hash (``n > 3``); :func:`_other_hashes` deduplicates the list by
sorting, batch by batch. The hashes of both paths are merged and deduplicated again, so the
stored set does not depend on the path a gram took.

How a probe stays cheap when the index does not fit in cache
------------------------------------------------------------
Headers are decoded once per index into a directory (:func:`read_directory`, cached by
:mod:`.probe`), so a probe reads only the filter blocks it tests. A query is an OR of
conjunctions of grams (one conjunction for every LIKE). A conjunction is tested gram by gram
over the list of containers still possible, the gram that a sample of containers lacks most
often first (:func:`_gram_order`): a container leaves the list at its first absent gram, and
the independent loads of one pass overlap their cache misses. The next conjunction is tested
only on the containers that no earlier one matched.
"""

from __future__ import annotations

import math

import numpy as np
from numba import boolean, float64, int8, int64, njit, types, uint8

from prune_engine.ngram.format import (
    BLOCK_BYTES, END_BYTE, END_MARK, FOLD_LOWER, FOLD_NONE, KIND_EXACT, KIND_SBBF,
    MAX_GRAM_SIZE, SALTS, START_BYTE, START_MARK, TRAILER_BYTES, VERSION,
)

_RO = dict(readonly=True)
U8 = types.Array(uint8, 1, "C", **_RO)
I8 = types.Array(int8, 1, "C", **_RO)
I32 = types.Array(types.int32, 1, "C", **_RO)
I64 = types.Array(int64, 1, "C", **_RO)
B1 = types.Array(boolean, 1, "C", **_RO)

#: per-entry status codes of :func:`read_directory`
OK = 0
CORRUPT = 1
BAD_VERSION = 2
#: build modes
MODE_AUTO = 0
MODE_EXACT = 1
MODE_SBBF = 2
#: grams of at most this many code points can be small (24-bit keys, see the module doc)
SMALL_GRAM_MAX = 3
#: containers sampled to order the grams of a conjunction (:func:`_gram_order`)
ORDER_SAMPLE = 32

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_SALTS = tuple(np.uint64(s) for s in SALTS)
_M32 = np.uint64(0xFFFFFFFF)


#: decorates every helper: compiled only inside the kernels that call it, so numba builds no
#: Python-callable wrapper for it (that wrapper is about half of a small helper's compile time)
_helper = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)


def ro(a: np.ndarray, dtype) -> np.ndarray:
    """A read-only C-contiguous view of ``a`` as ``dtype`` (the kernels' input type)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


# ----------------------------------------------------------------- bytes and xxHash64 -------

@_helper
def _rd32(b, p):
    """Little-endian u32 at ``b[p]``, as uint64. (An unsigned index spares numba's negative
    index check, so LLVM fuses the byte loads into one load.)"""
    i = np.uint64(p)
    return (np.uint64(b[i]) | np.uint64(b[i + np.uint64(1)]) << np.uint64(8)
            | np.uint64(b[i + np.uint64(2)]) << np.uint64(16)
            | np.uint64(b[i + np.uint64(3)]) << np.uint64(24))


@_helper
def _rd64(b, p):
    """Little-endian u64 at ``b[p]``."""
    return _rd32(b, p) | _rd32(b, p + 4) << np.uint64(32)


@_helper
def _wr(b, p, v, nbytes):
    """Write the ``nbytes`` low bytes of ``v`` at ``b[p]``, little-endian."""
    for i in range(nbytes):
        b[p + i] = np.uint8((np.uint64(v) >> np.uint64(8 * i)) & np.uint64(0xFF))


@_helper
def _rotl(x, r):
    """Rotate the uint64 ``x`` left by ``r`` bits (xxHash64's rotations)."""
    return (x << r) | (x >> (np.uint64(64) - r))


@_helper
def _round(acc, lane):
    """xxHash64's round: mix the 8-byte ``lane`` into the accumulator ``acc``."""
    return _rotl(acc + lane * _P2, np.uint64(31)) * _P1


@_helper
def _xxh64_tail(h, word, length):
    """Finish an xxHash64 state ``h`` with the last ``length < 8`` bytes, given as the
    little-endian ``word``, and avalanche it."""
    p = 0
    if length >= 4:
        h ^= (word & _M32) * _P1
        h = _rotl(h, np.uint64(23)) * _P2 + _P3
        p = 4
    while p < length:
        h ^= ((word >> np.uint64(8 * p)) & np.uint64(0xFF)) * _P5
        h = _rotl(h, np.uint64(11)) * _P1
        p += 1
    h ^= h >> np.uint64(33)
    h *= _P2
    h ^= h >> np.uint64(29)
    h *= _P3
    return h ^ (h >> np.uint64(32))


@_helper
def _xxh64(buf, start, length):
    """xxHash64 with seed 0 of ``buf[start:start + length]``."""
    p = start
    end = start + length
    if length >= 32:
        v1 = _P1 + _P2
        v2 = _P2
        v3 = np.uint64(0)
        v4 = np.uint64(0) - _P1
        while p + 32 <= end:
            v1 = _round(v1, _rd64(buf, p))
            v2 = _round(v2, _rd64(buf, p + 8))
            v3 = _round(v3, _rd64(buf, p + 16))
            v4 = _round(v4, _rd64(buf, p + 24))
            p += 32
        h = (_rotl(v1, np.uint64(1)) + _rotl(v2, np.uint64(7)) + _rotl(v3, np.uint64(12))
             + _rotl(v4, np.uint64(18)))
        for v in (v1, v2, v3, v4):
            h = (h ^ _round(np.uint64(0), v)) * _P1 + _P4
    else:
        h = _P5
    h += np.uint64(length)
    while p + 8 <= end:
        h ^= _round(np.uint64(0), _rd64(buf, p))
        h = _rotl(h, np.uint64(27)) * _P1 + _P4
        p += 8
    word = np.uint64(0)
    for i in range(end - p):
        word |= np.uint64(buf[p + i]) << np.uint64(8 * i)
    return _xxh64_tail(h, word, end - p)


@_helper
def _small_hash(key, n):
    """xxHash64 of the ``n <= 3`` bytes of small gram ``key`` (see the module doc)."""
    return _xxh64_tail(_P5 + np.uint64(n), np.uint64(key), n)


# ----------------------------------------------------------------- gram collection ----------

@_helper
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


@_helper
def _ascii_pass(offsets, data, valid, lo, hi, n, amap, bits, small, slow):
    """Mark the small grams of the all-ASCII values of rows ``lo..hi`` in the bitmap ``bits``.

    A new key is appended to ``small``. ``amap[b]`` is byte ``b`` as indexed (folded or not),
    -1 for a non-ASCII byte; a value holding one, or any value when ``n > 3``, is appended to
    ``slow`` instead (grams marked before its first non-ASCII byte stay marked: they are grams
    of the value). Returns (keys in ``small``, rows in ``slow``).
    """
    top = np.uint64(8 * (n - 1))
    cnt = np.int64(0)
    nslow = np.int64(0)
    for r in range(lo, hi):
        if not valid[r]:
            continue
        p = offsets[r]
        end = offsets[r + 1]
        key = np.uint64(0)
        ascii = n <= SMALL_GRAM_MAX
        i = p - 1  # START, the bytes, END; unsigned indices spare numba's negative-index checks
        while ascii and i <= end:
            if i < p:
                b = np.int64(START_BYTE)
            elif i < end:
                b = amap[data[np.uint64(i)]]
                ascii = b >= 0
            else:
                b = np.int64(END_BYTE)
            key = (key >> np.uint64(8)) | (np.uint64(b) << top)
            if ascii and i - p + 2 >= n:
                word = key >> np.uint64(6)
                bit = np.uint64(1) << (key & np.uint64(63))
                if bits[word] & bit == 0:
                    bits[word] |= bit
                    small[cnt] = key
                    cnt += 1
            i += 1
        if not ascii:
            slow[nslow] = r
            nslow += 1
    return cnt, nslow


@_helper
def _other_grams(offsets, data, rows, lo, hi, n, fold, use_fold, out, cnt):
    """Append to ``out[cnt:]`` every gram occurrence of the values ``rows[lo:hi]``, decoded to
    code points (folded with ``fold`` when ``use_fold``): its code points packed 21 bits each
    when ``n <= 3``, else its hash. ``out`` needs room for bytes + 2 per value (the most grams
    a value can have). Returns the new count."""
    ring = np.zeros(MAX_GRAM_SIZE, np.int64)
    gbuf = np.zeros(4 * MAX_GRAM_SIZE, np.uint8)
    for i in range(lo, hi):
        p = offsets[rows[i]]
        end = offsets[rows[i] + 1]
        filled = 0
        stage = 0
        while stage < 2:
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
                if use_fold and cp < fold.size:
                    cp = np.int64(fold[cp])
            else:
                cp = END_MARK
                stage = 2
            filled += 1
            ring[filled % n] = cp
            if filled < n:
                continue
            key = np.uint64(0)
            q = np.int64(0)
            for j in range(filled + 1, filled + 1 + n):  # oldest code point first
                if n <= SMALL_GRAM_MAX:
                    key = (key << np.uint64(21)) | np.uint64(ring[j % n])
                else:
                    q = _put_utf8(gbuf, q, ring[j % n])
            out[cnt] = key if n <= SMALL_GRAM_MAX else _xxh64(gbuf, np.int64(0), q)
            cnt += 1
    return cnt


@_helper
def _sort_unique(a, m):
    """Sort ``a[:m]`` (uint64) in place and drop repeats; returns the new length.

    An LSD radix sort: 8 passes of one byte, O(m), with no recursion to compile."""
    src = a
    dst = np.zeros(m, np.uint64)
    count = np.zeros(257, np.int64)
    for shift in range(0, 64, 8):
        for d in range(257):
            count[d] = 0
        for i in range(m):
            count[np.int64((src[i] >> np.uint64(shift)) & np.uint64(255)) + 1] += 1
        for d in range(256):
            count[d + 1] += count[d]
        for i in range(m):
            d = np.int64((src[i] >> np.uint64(shift)) & np.uint64(255))
            dst[count[d]] = src[i]
            count[d] += 1
        src, dst = dst, src  # after the 8th pass the sorted keys are back in ``a``
    k = np.int64(0)
    for i in range(m):
        if k == 0 or a[i] != a[k - 1]:
            a[k] = a[i]
            k += 1
    return k


@_helper
def _grown(a, k, size):
    """A zeroed array of ``size`` elements of ``a``'s type, starting with ``a[:k]``."""
    b = np.zeros(size, a.dtype)
    for i in range(k):
        b[i] = a[i]
    return b


@_helper
def _other_hashes(offsets, data, slow, nslow, n, fold, use_fold):
    """Distinct gram hashes of the values ``slow[:nslow]`` (the general path).

    The occurrences are listed batch by batch into a buffer that is sorted and deduplicated
    after each batch, and doubled when half full of distinct keys: memory follows the distinct
    grams, not the occurrences."""
    keys = np.zeros(1 << 12 if nslow else 0, np.uint64)
    k = np.int64(0)
    i = np.int64(0)
    while i < nslow:
        j = i  # the batch: values slow[i:j], as many as fit
        room = keys.size - k
        while j < nslow and offsets[slow[j] + 1] - offsets[slow[j]] + 2 <= room:
            room -= offsets[slow[j] + 1] - offsets[slow[j]] + 2
            j += 1
        if j == i or 2 * k > keys.size:
            keys = _grown(keys, k, 2 * keys.size + offsets[slow[i] + 1] - offsets[slow[i]] + 2)
            continue
        k = _sort_unique(keys, _other_grams(offsets, data, slow, i, j, n, fold, use_fold, keys, k))
        i = j
    if n <= SMALL_GRAM_MAX:  # packed code points: hash their UTF-8
        gbuf = np.zeros(4 * SMALL_GRAM_MAX, np.uint8)
        for i in range(k):
            q = np.int64(0)
            for j in range(n - 1, -1, -1):
                cp = np.int64((keys[i] >> np.uint64(21 * j)) & np.uint64(0x1FFFFF))
                q = _put_utf8(gbuf, q, cp)
            keys[i] = _xxh64(gbuf, np.int64(0), q)
    return keys[:k]


@_helper
def _section_hashes(offsets, data, valid, lo, hi, n, fold, use_fold, amap, bits, small, slow):
    """Distinct gram hashes of rows ``lo..hi``; the bitmap ``bits`` is left all clear.

    ``small`` (room for every small gram of a container) and ``slow`` (for its rows) are
    scratch reused from container to container. Sorted when any value was not all ASCII.
    """
    cnt, nslow = _ascii_pass(offsets, data, valid, lo, hi, n, amap, bits, small, slow)
    other = _other_hashes(offsets, data, slow, nslow, n, fold, use_fold)
    hashes = np.zeros(cnt + other.size, np.uint64)
    for i in range(cnt):
        bits[small[i] >> np.uint32(6)] = 0  # each bit set in the bitmap is a listed key
        hashes[i] = _small_hash(small[i], n)
    if other.size == 0:
        return hashes
    for i in range(other.size):
        hashes[cnt + i] = other[i]
    return hashes[:_sort_unique(hashes, hashes.size)]


# ----------------------------------------------------------------- entries ------------------

@_helper
def _sbbf_bit(h, i):
    """The bit that hash ``h`` sets in word ``i`` of its block (32-bit product, top 5 bits)."""
    return np.uint64(1) << ((((h & _M32) * _SALTS[i]) & _M32) >> np.uint64(27))


@_helper
def _sbbf_words(hashes, nblocks):
    """The 8 * ``nblocks`` u32 words (as uint64) of a Parquet SBBF holding ``hashes``."""
    words = np.zeros(8 * nblocks, np.uint64)
    for h in hashes:
        block = np.int64(((h >> np.uint64(32)) * np.uint64(nblocks)) >> np.uint64(32))
        for i in range(8):
            words[8 * block + i] |= _sbbf_bit(h, i)
    return words


@_helper
def _put_words(out, q, words, width):
    """Write each of ``words`` as ``width`` little-endian bytes from ``out[q]``."""
    for i in range(words.size):
        for j in range(width):
            out[q + width * i + j] = np.uint8((words[i] >> np.uint64(8 * j)) & np.uint64(0xFF))


@_helper
def _choose_kind(ndv, bits_per_gram, exact_max, mode):
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
    (valid False, zero length). The bytes array is longer than ``offsets[-1]``: trim it.
    """
    ncont = groups.size - 1
    nsec = 2 if case_insensitive else 1
    amaps = np.zeros(512, np.int64)  # bytes as indexed, plain then folded; -1: not ASCII
    for b in range(256):
        amaps[b] = b if b < 0x80 else -1
        amaps[256 + b] = fold[b] if b < 0x80 else -1
    most_rows = np.int64(1)
    most_grams = np.int64(1)
    for c in range(ncont):
        rows = groups[c + 1] - groups[c]
        most_rows = max(most_rows, rows)
        most_grams = max(most_grams, offsets[groups[c + 1]] - offsets[groups[c]] + 2 * rows)
    bits = np.zeros(1 << (8 * SMALL_GRAM_MAX - 6), np.uint64)
    small = np.zeros(min(most_grams, 1 << (8 * SMALL_GRAM_MAX)), np.uint32)
    slow = np.zeros(most_rows, np.int64)
    out_off = np.zeros(ncont + 1, np.int64)
    out_ok = np.zeros(ncont, np.bool_)
    out = np.zeros(1 << 16, np.uint8)
    head = (4 + 8 * nsec + 7) // 8 * 8
    kinds = np.zeros(2, np.int64)
    counts = np.zeros(2, np.int64)
    pos = np.int64(0)
    for c in range(ncont):
        hs = hf = np.zeros(0, np.uint64)  # the plain and the folded section's hashes
        total = head + TRAILER_BYTES
        for s in range(nsec):
            h = _section_hashes(offsets, data, valid, groups[c], groups[c + 1], n, fold, s == 1,
                                amaps[256 * s:256 * (s + 1)], bits, small, slow)
            if s == 0:
                hs = h
            else:
                hf = h
            kinds[s], counts[s] = _choose_kind(h.size, bits_per_gram, exact_max, mode)
            total += 8 * counts[s] if kinds[s] == KIND_EXACT else BLOCK_BYTES * counts[s]
        if total > max_bytes:
            out_off[c + 1] = pos
            continue
        if pos + total > out.size:
            out = _grown(out, pos, max(2 * out.size, pos + total))
        out[pos] = VERSION
        out[pos + 1] = n
        out[pos + 2] = nsec
        q = pos + head
        for s in range(nsec):
            h = hs if s == 0 else hf
            t = pos + 4 + 8 * s
            out[t] = kinds[s]
            out[t + 1] = FOLD_NONE if s == 0 else FOLD_LOWER
            _wr(out, t + 4, np.uint64(counts[s]), np.int64(4))
            if kinds[s] == KIND_EXACT:
                _sort_unique(h, h.size)
                _put_words(out, q, h, np.int64(8))
                q += 8 * counts[s]
            else:
                _put_words(out, q, _sbbf_words(h, counts[s]), np.int64(4))
                q += BLOCK_BYTES * counts[s]
        _wr(out, q, _xxh64(out, pos, q - pos), np.int64(8))
        pos += total
        out_off[c + 1] = pos
        out_ok[c] = True
    return out_off, out, out_ok


# ----------------------------------------------------------------- directory ----------------

@_helper
def _read_entry(buf, s, length, c, ncont, gram_size, kind, count, position):
    """Decode entry ``c`` (``buf[s:s + length]``) into the directory arrays of
    :func:`read_directory` and return its status; unless it is OK, both kinds stay -1."""
    if length < 4 + 8 + TRAILER_BYTES:
        return CORRUPT
    if buf[s] != VERSION:
        return BAD_VERSION
    n = np.int64(buf[s + 1])
    nsec = np.int64(buf[s + 2])
    ok = 1 <= nsec <= 2 and 1 <= n <= MAX_GRAM_SIZE
    q = s + (4 + 8 * nsec + 7) // 8 * 8
    for i in range(nsec if ok else 0):
        t = s + 4 + 8 * i
        k = np.int64(buf[t])
        row = np.int64(buf[t + 1]) * ncont + c  # FOLD_NONE: the plain row, FOLD_LOWER: folded
        cnt = np.int64(_rd32(buf, t + 4))
        ok = (buf[t + 1] <= FOLD_LOWER and kind[row] < 0
              and (k == KIND_EXACT or (k == KIND_SBBF and cnt > 0)))
        if not ok:
            break
        kind[row], count[row], position[row] = k, cnt, q
        q += 8 * cnt if k == KIND_EXACT else BLOCK_BYTES * cnt
    ok = ok and q + TRAILER_BYTES == s + length
    if ok and _xxh64(buf, s, length - TRAILER_BYTES) == _rd64(buf, s + length - TRAILER_BYTES):
        gram_size[c] = n
        return OK
    kind[c] = kind[ncont + c] = -1
    return CORRUPT


@njit(types.Tuple((types.Array(int8, 1, "C"), types.Array(int8, 1, "C"),
                   types.Array(int8, 1, "C"), types.Array(int64, 1, "C"),
                   types.Array(int64, 1, "C")))(I64, U8, B1), cache=True)
def read_directory(offsets, data, valid):
    """Decode and verify every entry once: (status, gram size, kind, count, payload position).

    ``status`` is OK, CORRUPT (structure or checksum) or BAD_VERSION. ``kind``, ``count`` and
    ``position`` hold the plain sections, then the folded ones (2 * entries); the kind is -1
    where there is nothing to probe (null or bad entry, missing section), and the gram size is
    0 for null and bad entries.
    """
    ncont = offsets.size - 1
    status = np.zeros(ncont, np.int8)
    gram_size = np.zeros(ncont, np.int8)
    kind = np.zeros(2 * ncont, np.int8)
    count = np.zeros(2 * ncont, np.int64)
    position = np.zeros(2 * ncont, np.int64)
    for c in range(ncont):
        kind[c] = kind[ncont + c] = -1
        if valid[c]:
            status[c] = _read_entry(data, offsets[c], offsets[c + 1] - offsets[c], c, ncont,
                                    gram_size, kind, count, position)
    return status, gram_size, kind, count, position


# ----------------------------------------------------------------- probing ------------------

@_helper
def _keep_having(live, m, kind, count, pos, data, h):
    """Keep in ``live[:m]`` (container numbers, in order) the containers whose section may hold
    gram hash ``h``; returns how many are kept. The one place that tests membership.

    (A plain loop: the branch on each answer is predicted, so the loads of the next containers
    start before this one's arrives. Batching the tests to overlap the misses was slower.)"""
    pairs = np.zeros(4, np.uint64)  # the SBBF bits of h in words 2i and 2i + 1, as one u64
    for i in range(4):
        pairs[i] = _sbbf_bit(h, 2 * i) | _sbbf_bit(h, 2 * i + 1) << np.uint64(32)
    high = h >> np.uint64(32)
    k = np.int64(0)
    for j in range(m):
        c = live[j]
        p = pos[c]
        if kind[c] == KIND_SBBF:
            base = p + np.int64((high * np.uint64(count[c])) >> np.uint64(32)) * BLOCK_BYTES
            hit = ((_rd64(data, base) & pairs[0]) == pairs[0]) \
                & ((_rd64(data, base + 8) & pairs[1]) == pairs[1]) \
                & ((_rd64(data, base + 16) & pairs[2]) == pairs[2]) \
                & ((_rd64(data, base + 24) & pairs[3]) == pairs[3])
        else:
            lo = np.int64(0)
            hi = count[c]
            while lo < hi:
                mid = (lo + hi) >> 1
                if _rd64(data, p + 8 * mid) < h:
                    lo = mid + 1
                else:
                    hi = mid
            hit = lo < count[c] and _rd64(data, p + 8 * lo) == h
        if hit:
            live[k] = c
            k += 1
    return k


@_helper
def _gram_order(live, m, kind, count, pos, data, hashes):
    """Grams by how many of up to ORDER_SAMPLE evenly spread containers hold them, fewest
    first (stable)."""
    sample = min(m, ORDER_SAMPLE)
    some = np.zeros(sample, np.int64)
    held = np.zeros(hashes.size, np.int64)
    order = np.zeros(hashes.size, np.int64)
    for g in range(hashes.size):
        for i in range(sample):
            some[i] = live[(i * m) // sample]
        held[g] = _keep_having(some, sample, kind, count, pos, data, hashes[g])
        j = g  # insertion sort: a term has a few dozen grams at most
        while j > 0 and held[order[j - 1]] > held[g]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = g
    return order


@njit(types.Array(boolean, 1, "C")(I8, I8, I64, I64, U8, int64, U8, I64, I64, I64), cache=True)
def probe_entries(gram_size, kind, count, pos, data, n, gram_bytes, gram_offsets, term_offsets,
                  term_grams):
    """May-match mask of every entry (one section of a :func:`read_directory`) for one query.

    Gram ``i`` is ``gram_bytes[gram_offsets[i]:gram_offsets[i + 1]]`` (its hashed form). The
    query is an OR of terms, term ``t`` the AND of the grams ``term_grams[term_offsets[t]:
    term_offsets[t + 1]]`` (none: true). Entries of another gram size and entries of kind -1
    are kept. Each term is tested on the containers no earlier term matched, gram by gram over
    those still possible, in :func:`_gram_order` (see the module doc).
    """
    ncont = kind.size
    hashes = np.zeros(gram_offsets.size - 1, np.uint64)
    for g in range(hashes.size):
        hashes[g] = _xxh64(gram_bytes, gram_offsets[g], gram_offsets[g + 1] - gram_offsets[g])
    out = np.zeros(ncont, np.bool_)
    rest = np.zeros(ncont, np.int64)  # the containers no term has matched yet, in order
    m = np.int64(0)
    for c in range(ncont):
        if gram_size[c] == n and kind[c] >= 0:
            rest[m] = c
            m += 1
        else:
            out[c] = True
    live = np.zeros(m, np.int64)
    for t in range(term_offsets.size - 1):
        k = m
        for j in range(m):
            live[j] = rest[j]
        term = np.zeros(term_offsets[t + 1] - term_offsets[t], np.uint64)
        for i in range(term.size):
            term[i] = hashes[term_grams[term_offsets[t] + i]]
        for g in _gram_order(live, k, kind, count, pos, data, term):
            k = _keep_having(live, k, kind, count, pos, data, term[g])
        m_left = np.int64(0)
        i = np.int64(0)
        for j in range(m):  # rest minus the k matched (both in container order)
            if i < k and live[i] == rest[j]:
                out[rest[j]] = True
                i += 1
            else:
                rest[m_left] = rest[j]
                m_left += 1
        m = m_left
    return out
