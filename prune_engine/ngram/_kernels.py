"""numba kernels of the n-gram index: gram collection, entry encoding, checksums, probing.

Private: :mod:`.build`, :mod:`.directory` and :mod:`.probe` validate input, allocate every
array, and call the kernels of this module, :func:`build_entries` (or its ASCII twin
:func:`build_entries_ascii`), :func:`checksums` and :func:`probe_entries`. Only those have
explicit signatures and ``cache=True``: each compiles on its first call with a cold numba
cache (see :func:`_kernel`) and loads from the cache afterwards, until this file or a constant
of :mod:`.format` changes (numba alone would notice this file only: see :mod:`._cache`).
The helpers (``_`` names, under ``@_helper``) compile into the kernels that call them, with no
Python-callable wrapper; a helper with one caller (``@_inlined``) is typed into it. Array
inputs are read-only C-contiguous arrays (use :func:`ro`).
Tests compare each kernel with its plain-Python twin (:mod:`.reference`, :mod:`.format`); the
byte layout is :mod:`.format`'s.

Rules that keep the first compile short and the loops fast
----------------------------------------------------------
* No kernel allocates: numba compiles every allocation function once per dtype, which cost
  seconds of the first compile. The caller passes every output and scratch array; the build
  kernel stops before a container that needs more room than it was given, says how much, and
  is called again from there with bigger arrays (:func:`build_entries`).
* Every function costs compile time of its own (numba types and lowers it; LLVM optimizes and
  emits it, and again in every caller that links it), so a helper called from one place
  only is typed into its caller (``inline="always"``, :data:`_inlined`), and the build
  kernels are their body itself (:func:`_builder`). A helper called from several places
  gets no ``inline="always"``, which would re-type it at every call site: each compiles
  once per argument types. Constants passed to helpers are typed (``np.int64(0)``): a
  literal argument makes numba compile one more copy per value.
* The cyclic garbage collector is paused while a kernel compiles (numba makes many
  short-lived objects; with pyarrow and pandas loaded, each full collection walks them all):
  0.3 s of a first build.
* Hot loops index with unsigned integers where they can: numba then skips its negative-index
  fix-up, and LLVM fuses the byte loads of :func:`_rd64` into one load.
* ``build_entries`` releases the GIL (``nogil=True``): :mod:`.build` runs batches of
  containers on several threads with one cached serial kernel (a ``parallel=True`` kernel
  could not be cached).

Counting the distinct grams of a container
------------------------------------------
The entry's form (an exact sorted set, or a Bloom filter sized for the grams) needs the number
of distinct grams, and the exact set needs them all; a Bloom filter does not care how often a
gram is inserted. :func:`_collect` walks each value once, decoding UTF-8 (ASCII bytes take the
short path) and rolling two keys over the last ``n`` code points:

* a gram of at most 3 code points that are ASCII or markers ("small") is its own hashed bytes,
  which fit in 24 bits (little-endian: the oldest byte lowest). Those are deduplicated in a
  2^24-bit bitmap (2 MiB, allocated once per build): one load, then the store of the bit and
  of the key in the list of keys, which only counts the first time; the bits are cleared after
  the container. The stores are made without a branch on the answer, which is fastest while
  a good share of the grams is new; after a container where fewer than one gram in 16 was
  new, a branch skips them for seen grams (:func:`_mark`): 50% faster on repetitive text.
  Grams of letters and digits share a few kilobytes of the bitmap;
* any other gram goes to an open-addressing hash table, keyed by its code points packed 21
  bits each (``n <= 3``) or by its hash (``n > 3``); the table grows with the distinct grams
  (not the occurrences), so it stays in cache, and is cleared after the container.

Only then is each distinct gram hashed (xxHash64 of its UTF-8, see :mod:`.format`, assembled in
registers rather than a buffer) and written: sorted for an exact set, or straight into the
filter's bytes. The trailing checksums are computed by :func:`checksums` over the finished,
read-only bytes, so that the hash of whole entries compiles once, for the build and for the
directory's verification (:mod:`.directory`).

What a first build compiles
---------------------------
Compiling is most of a first build's time on a new machine, so a batch whose bytes are all
ASCII, with ``n <= 3``, goes to :func:`build_entries_ascii`: the same body
(:func:`_builder`) with a collector that needs neither the UTF-8 decoder nor the table of
other grams. The general kernel compiles only when a batch needs it. While a build kernel
compiles, a helper process compiles :func:`checksums` and :func:`probe_entries` into
numba's cache, on another CPU (:mod:`._ahead`).

How a probe stays cheap when the index does not fit in cache
------------------------------------------------------------
Headers are decoded once per index into a directory (:mod:`.directory`), so a probe reads only
the filter blocks it tests. A query is an OR of conjunctions of grams (one conjunction for
every LIKE). A conjunction is tested gram by gram over the list of containers still possible,
the gram that a sample of containers lacks most often first (:func:`_gram_order`): a container
leaves the list at its first absent gram, and the independent loads of one pass overlap their
cache misses. The next conjunction is tested only on the containers that no earlier one
matched.
"""

from __future__ import annotations

import functools
import gc
import math
import threading

import numpy as np
from numba import boolean, float64, int8, int64, njit, types, uint8

from prune_engine.ngram import _ahead, _cache
from prune_engine.ngram.format import (
    BLOCK_BYTES, END_BYTE, END_MARK, FOLD_LOWER, FOLD_NONE, KIND_EXACT, KIND_SBBF,
    SALTS, START_BYTE, START_MARK, TRAILER_BYTES, VERSION,
)

# the constants above are compiled into the cached kernels: make numba's cache of this file's
# kernels stale when one of them changes (before any kernel compiles)
_cache.install()

_RO = dict(readonly=True)
U8 = types.Array(uint8, 1, "C", **_RO)
I8 = types.Array(int8, 1, "C", **_RO)
I32 = types.Array(types.int32, 1, "C", **_RO)
I64 = types.Array(int64, 1, "C", **_RO)
U64 = types.Array(types.uint64, 1, "C", **_RO)
B1 = types.Array(boolean, 1, "C", **_RO)
#: writable arrays (outputs and scratch)
W_U8 = types.Array(uint8, 1, "C")
W_I64 = types.Array(int64, 1, "C")
W_U32 = types.Array(types.uint32, 1, "C")
W_U64 = types.Array(types.uint64, 1, "C")
W_B1 = types.Array(boolean, 1, "C")

#: build modes
MODE_AUTO = 0
MODE_EXACT = 1
MODE_SBBF = 2
#: grams of at most this many code points can be small (24-bit keys, see the module doc)
SMALL_GRAM_MAX = 3
#: bitmap words of the small keys (2^24 bits)
BITMAP_WORDS = 1 << (8 * SMALL_GRAM_MAX - 6)
#: the hash table of the other grams starts with this many slots (and doubles when half full)
TABLE_START = 1 << 12
#: what :func:`build_entries` ran out of (``need[0]``; ``need[1]`` is the size wanted)
NEED_TABLE = 1
NEED_OTHERS = 2
NEED_HASHES = 3
NEED_OUT = 4
#: containers sampled to order the grams of a conjunction (:func:`_gram_order`)
ORDER_SAMPLE = 32

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7 = (np.uint64(s) for s in SALTS)
_M32 = np.uint64(0xFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


#: decorates every helper: compiled only inside the kernels that call it, so numba builds no
#: Python-callable wrapper for it (that wrapper is about half of a small helper's compile time)
_helper = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
#: decorates a helper with a single caller: its code is typed into the caller's, and is not a
#: function of its own at all (which numba and LLVM would optimize and emit once more)
_inlined = njit(inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True)


def _kernel(signature, then: tuple[str, ...] = (), **options):
    """Decorates a kernel with one explicit signature, compiled (or loaded from numba's cache)
    on its first call rather than at import: numba compiles an explicit signature as soon as
    it decorates, and a process that only probes should not pay for compiling the build.
    ``then`` names the kernels a process calls next: when this one is not in the cache, they
    are compiled meanwhile by a helper process (:mod:`._ahead`)."""
    return lambda py_func: _LazyKernel(py_func, signature, then, options)


class _LazyKernel:
    """See :func:`_kernel`."""

    def __init__(self, py_func, signature, then: tuple[str, ...], options: dict):
        functools.update_wrapper(self, py_func)
        self.py_func, self.signature, self.then, self.options = py_func, signature, then, options
        self.dispatcher = None
        self._lock = threading.Lock()

    def compiled(self):
        """The numba dispatcher, compiled on first use (once, whatever the threads)."""
        with self._lock:
            if self.dispatcher is None:
                _ahead.wait(self.__name__)
                paused = gc.isenabled()
                gc.disable()
                try:
                    if self.then and _ahead.allowed() and not self._cached():
                        _ahead.start(self.then)
                    self.dispatcher = njit(self.signature, cache=True, **self.options)(self.py_func)
                finally:
                    if paused:
                        gc.enable()
        return self.dispatcher

    def _cached(self) -> bool:
        """Does numba's cache hold this kernel? (What numba's compile looks up first; True
        when this numba cannot say, so that nothing is compiled ahead.)"""
        try:
            dispatcher = njit(cache=True, **self.options)(self.py_func)  # lazy: compiles nothing
            return dispatcher._cache.load_overload(self.signature, dispatcher.targetctx) is not None
        except Exception:  # noqa: BLE001 - an internal of numba, absent or changed
            return True

    def __call__(self, *args):
        return (self.dispatcher or self.compiled())(*args)


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
def _rotl(x, r):
    """Rotate the uint64 ``x`` left by ``r`` bits (xxHash64's rotations)."""
    return (x << r) | (x >> (np.uint64(64) - r))


@_helper
def _round(acc, lane):
    """xxHash64's round: mix the 8-byte ``lane`` into the accumulator ``acc``."""
    return _rotl(acc + lane * _P2, np.uint64(31)) * _P1


@_helper
def _converge(v1, v2, v3, v4):
    """xxHash64's state after its 32-byte stripes: the four accumulators merged."""
    h = (_rotl(v1, np.uint64(1)) + _rotl(v2, np.uint64(7)) + _rotl(v3, np.uint64(12))
         + _rotl(v4, np.uint64(18)))
    for v in (v1, v2, v3, v4):
        h = (h ^ _round(np.uint64(0), v)) * _P1 + _P4
    return h


@_helper
def _lane(h, lane):
    """xxHash64's step over one 8-byte ``lane`` after the stripes."""
    return _rotl(h ^ _round(np.uint64(0), lane), np.uint64(27)) * _P1 + _P4


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


@_inlined
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
        h = _converge(v1, v2, v3, v4)
    else:
        h = _P5
    h += np.uint64(length)
    while p + 8 <= end:
        h = _lane(h, _rd64(buf, p))
        p += 8
    word = np.uint64(0)
    for i in range(end - p):
        word |= np.uint64(buf[p + i]) << np.uint64(8 * i)
    return _xxh64_tail(h, word, end - p)


@_inlined
def _small_hash(key, n):
    """xxHash64 of the ``n <= 3`` bytes of small gram ``key`` (see the module doc)."""
    return _xxh64_tail(_P5 + np.uint64(n), np.uint64(key), np.int64(n))


# ----------------------------------------------------------------- gram collection ----------

@_helper
def _lanes_hash(lanes, length):
    """xxHash64 (seed 0) of the ``length <= 32`` bytes held in ``lanes`` (five words)."""
    p = np.int64(0)
    if length >= 32:
        v1 = _round(_P1 + _P2, lanes[0])
        v2 = _round(_P2, lanes[1])
        v3 = _round(np.uint64(0), lanes[2])
        v4 = _round(np.uint64(0) - _P1, lanes[3])
        h = _converge(v1, v2, v3, v4)
        p = 4
    else:
        h = _P5
    h += np.uint64(length)
    while 8 * (p + 1) <= length:
        h = _lane(h, lanes[p])
        p += 1
    return _xxh64_tail(h, lanes[p], length - 8 * p)


@_helper
def _utf8(cp):
    """(the UTF-8 bytes of code point or marker ``cp``, little-endian in a uint64, their count)."""
    if cp == START_MARK:
        return np.uint64(START_BYTE), np.int64(1)
    if cp == END_MARK:
        return np.uint64(END_BYTE), np.int64(1)
    if cp < 0x80:
        return np.uint64(cp), np.int64(1)
    if cp < 0x800:
        return np.uint64((0xC0 | (cp >> 6)) | (0x80 | (cp & 0x3F)) << 8), np.int64(2)
    if cp < 0x10000:
        return np.uint64((0xE0 | (cp >> 12)) | (0x80 | ((cp >> 6) & 0x3F)) << 8
                         | (0x80 | (cp & 0x3F)) << 16), np.int64(3)
    return np.uint64((0xF0 | (cp >> 18)) | (0x80 | ((cp >> 12) & 0x3F)) << 8
                     | (0x80 | ((cp >> 6) & 0x3F)) << 16 | (0x80 | (cp & 0x3F)) << 24), np.int64(4)


@_helper
def _packed_hash(key, n):
    """The hash of the gram of ``n <= 3`` code points packed 21 bits each in ``key``: its at
    most 12 UTF-8 bytes held in two registers (one 8-byte lane and a tail)."""
    lane = np.uint64(0)
    tail = np.uint64(0)
    length = np.int64(0)
    for j in range(n - 1, -1, -1):
        b, w = _utf8(np.int64((key >> np.uint64(21 * j)) & np.uint64(0x1FFFFF)))
        if length >= 8:
            tail |= b << np.uint64(8 * (length - 8))
        else:
            lane |= b << np.uint64(8 * length)
            if length + w > 8:  # the bytes that do not fit the lane start the tail
                tail = b >> np.uint64(8 * (8 - length))
        length += w
    h = _P5 + np.uint64(length)
    if length < 8:
        return _xxh64_tail(h, lane, length)
    return _xxh64_tail(_lane(h, lane), tail, length - 8)


@_helper
def _ring_hash(ring, filled, n, lanes):
    """The hash of the gram of the last ``n`` code points in ``ring`` (``filled`` pushed so
    far), its UTF-8 assembled in ``lanes`` (five words)."""
    for k in range(lanes.size):
        lanes[k] = 0
    length = np.int64(0)
    for j in range(filled + 1, filled + 1 + n):  # oldest code point first
        b, w = _utf8(ring[j % n])
        for k in range(w):
            lanes[length >> 3] |= ((b >> np.uint64(8 * k)) & np.uint64(0xFF)) << np.uint64(8 * (length & 7))
            length += 1
    return _lanes_hash(lanes, length)


@_helper
def _table_add(table, mask, shift, key):
    """Put ``key`` (not 0) in the open-addressing ``table`` (``mask + 1`` slots in use);
    True when it was not there yet."""
    i = (key * _GOLDEN) >> shift
    while True:
        slot = table[i]
        if slot == key:
            return False
        if slot == 0:
            table[i] = key
            return True
        i = (i + np.uint64(1)) & mask


@_helper
def _is_ascii(data, p, end):
    """Are the bytes ``data[p:end]`` all below 0x80? (Eight at a time.)"""
    acc = np.uint64(0)
    while p + 8 <= end:
        acc |= _rd64(data, p)
        p += 8
    while p < end:
        acc |= np.uint64(data[np.uint64(p)])
        p += 1
    return (acc & np.uint64(0x8080808080808080)) == 0


@_helper
def _mark(bits, small, nsmall, key, repeats):
    """Mark small gram ``key`` in the bitmap; append it to ``small`` the first time. Returns
    the new count. Unless ``repeats``, there is no branch on the answer: the stores are made
    anyway, which is fastest when many grams are new; when nearly all repeat (``repeats``),
    skipping the stores of a seen gram is (see the module doc)."""
    word = key >> np.uint64(6)
    bit = np.uint64(1) << (key & np.uint64(63))
    old = bits[word]
    if repeats and (old & bit) != 0:
        return nsmall
    bits[word] = old | bit
    small[nsmall] = key
    return nsmall + ((old & bit) == 0)


@_helper
def _ascii_grams(data, i, end, n, amap, bits, small, nsmall, repeats):
    """Mark the grams of the ASCII value ``data[i:end]`` with ``n <= 3``: every gram is small,
    its key the last ``n`` bytes as indexed (see the module doc). Returns the new count."""
    top = np.uint64(8 * (n - 1))
    key = np.uint64(START_BYTE) << top
    if n == 1:
        nsmall = _mark(bits, small, nsmall, key, repeats)
    for j in range(i, end):
        key = (key >> np.uint64(8)) | (np.uint64(amap[data[np.uint64(j)]]) << top)
        if j - i + 2 >= n:
            nsmall = _mark(bits, small, nsmall, key, repeats)
    key = (key >> np.uint64(8)) | (np.uint64(END_BYTE) << top)
    if end - i + 2 >= n:
        nsmall = _mark(bits, small, nsmall, key, repeats)
    return nsmall


@_helper
def _collect_ascii(offsets, data, valid, lo, hi, n, fold, use_fold, amap, bits, small, table,
                   others, ring, lanes, slots, repeats):
    """:func:`_collect` of rows that are all ASCII, with ``n <= 3``: every gram is small, so
    this needs neither the decoder nor the table (the arguments are the same, to share
    :func:`_builder`'s body)."""
    nsmall = np.int64(0)
    for r in range(lo, hi):
        if valid[r]:
            nsmall = _ascii_grams(data, offsets[r], offsets[r + 1], n, amap, bits, small, nsmall,
                                  repeats)
    return 0, nsmall, np.int64(0), slots


@_helper
def _collect(offsets, data, valid, lo, hi, n, fold, use_fold, amap, bits, small, table,
             others, ring, lanes, slots, repeats):
    """The distinct grams of rows ``lo..hi``: small keys in ``small``, the hashes of the other
    grams in ``others`` (see the module doc); the table, of ``slots`` slots (a power of two)
    to begin with, is left clear. Returns (0, small count, other count, the slots it grew to),
    or (NEED_TABLE / NEED_OTHERS, the size wanted, 0, slots) when ``table`` / ``others`` is
    too small, the bitmap then left clear too."""
    top = np.uint64(8 * (n - 1))
    packed = n <= SMALL_GRAM_MAX
    mask63 = (np.uint64(1) << np.uint64(21 * n)) - np.uint64(1) if packed else np.uint64(0)
    nsmall = np.int64(0)
    nother = np.int64(0)
    shift = np.uint64(64)
    size = np.int64(1)
    while size < slots:
        size *= 2
        shift -= np.uint64(1)
    zero = False  # for n > 3 a hash may be 0, which the table cannot hold
    status = 0
    for r in range(lo, hi):
        if not valid[r]:
            continue
        i = offsets[r]
        end = offsets[r + 1]
        if packed and _is_ascii(data, i, end):  # the short path: every gram is small
            nsmall = _ascii_grams(data, i, end, n, amap, bits, small, nsmall, repeats)
            continue
        k24 = np.uint64(0)
        k63 = np.uint64(0)
        run = 0  # consecutive small code points up to here
        filled = 0
        cp = np.int64(START_MARK)
        byte = np.int64(START_BYTE)
        while True:
            filled += 1
            if packed:
                k63 = ((k63 << np.uint64(21)) | np.uint64(cp)) & mask63
            else:
                ring[filled % n] = cp
            if byte >= 0:
                k24 = (k24 >> np.uint64(8)) | (np.uint64(byte) << top)
                run += 1
            else:
                run = 0
            if filled >= n:
                if packed and run >= n:
                    nsmall = _mark(bits, small, nsmall, k24, repeats)
                else:
                    key = k63 if packed else _ring_hash(ring, filled, n, lanes)
                    if key == 0:
                        new = not zero
                        zero = True
                    else:
                        new = _table_add(table, np.uint64(slots - 1), shift, key)
                    if new:
                        if nother == others.size:
                            status = NEED_OTHERS
                            break
                        others[nother] = key
                        nother += 1
                        if 2 * nother > slots:  # half full: double, and put the keys back
                            if 2 * slots > table.size:
                                status = NEED_TABLE
                                break
                            for j in range(slots):
                                table[j] = 0
                            slots *= 2
                            shift -= np.uint64(1)
                            for j in range(nother):
                                if others[j] != 0:
                                    _table_add(table, np.uint64(slots - 1), shift, others[j])
            if cp == END_MARK:
                break
            if i >= end:
                cp = END_MARK
                byte = END_BYTE
                continue
            b0 = np.int64(data[np.uint64(i)])
            if b0 < 0x80:
                cp = amap[b0]
                byte = cp
                i += 1
                continue
            width = 1 if b0 < 0xC0 else (2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4))
            if i + width > end:  # truncated sequence (not valid UTF-8): one U+FFFD
                cp = 0xFFFD
                i = end
            else:
                cp = b0 if width == 1 else b0 & (0x7F >> width)
                for j in range(1, width):
                    cp = (cp << 6) | (np.int64(data[i + j]) & 0x3F)
                i += width
            if use_fold and cp < fold.size:
                cp = np.int64(fold[cp])
            byte = cp if cp < 0x80 else -1  # a fold may land on ASCII (the Kelvin sign on k)
        if status:
            break
    for j in range(slots):
        table[j] = 0
    if status:
        for j in range(nsmall):
            bits[small[j] >> np.uint32(6)] = 0
        return status, 2 * (slots if status == NEED_TABLE else others.size), np.int64(0), slots
    if packed:  # the keys are packed code points: hash them (for n > 3 they are hashes)
        for j in range(nother):
            others[j] = _packed_hash(others[j], n)
    return 0, nsmall, nother, slots


@_inlined
def _sort_unique(a, m, spare, count):
    """Sort ``a[:m]`` (uint64) in place and drop repeats; returns the new length.

    An LSD radix sort: 8 passes of one byte, O(m), with no recursion to compile; ``spare``
    holds ``m`` values and ``count`` 257 counters."""
    src = a
    dst = spare
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


# ----------------------------------------------------------------- entries ------------------

@_inlined
def _sbbf_add(words, w, nblocks, h):
    """Set the 8 bits of hash ``h`` in the filter of ``nblocks`` blocks whose u32 words start
    at ``words[w]`` (a u32 view of the entry bytes: this machine is little-endian, as the
    format)."""
    base = np.uint64(w) + (((h >> np.uint64(32)) * np.uint64(nblocks)) >> np.uint64(32)) * np.uint64(8)
    x = h & _M32
    words[base] |= np.uint32(1) << np.uint32(((x * _S0) & _M32) >> np.uint64(27))
    words[base + np.uint64(1)] |= np.uint32(1) << np.uint32(((x * _S1) & _M32) >> np.uint64(27))
    words[base + np.uint64(2)] |= np.uint32(1) << np.uint32(((x * _S2) & _M32) >> np.uint64(27))
    words[base + np.uint64(3)] |= np.uint32(1) << np.uint32(((x * _S3) & _M32) >> np.uint64(27))
    words[base + np.uint64(4)] |= np.uint32(1) << np.uint32(((x * _S4) & _M32) >> np.uint64(27))
    words[base + np.uint64(5)] |= np.uint32(1) << np.uint32(((x * _S5) & _M32) >> np.uint64(27))
    words[base + np.uint64(6)] |= np.uint32(1) << np.uint32(((x * _S6) & _M32) >> np.uint64(27))
    words[base + np.uint64(7)] |= np.uint32(1) << np.uint32(((x * _S7) & _M32) >> np.uint64(27))


@_inlined
def _choose_kind(ndv, bits_per_gram, exact_max, mode):
    """(kind, count) of a section holding ``ndv`` distinct grams."""
    nblocks = math.ceil(ndv * bits_per_gram / 256.0)
    if nblocks < 1:
        nblocks = 1
    if mode == MODE_EXACT or (mode == MODE_AUTO and (ndv <= exact_max or 8 * ndv <= 32 * nblocks)):
        return KIND_EXACT, ndv
    return KIND_SBBF, nblocks


def _builder(ascii_only: bool, name: str, doc: str):
    """A build kernel's function (see :func:`build_entries`), its grams collected by
    :func:`_collect_ascii` when ``ascii_only``, else by :func:`_collect`.

    One body serves both kernels, and is the kernel itself: a helper between a kernel and its
    work costs compile time (numba and LLVM optimize and emit every helper's code, and again
    in each caller that links it). ``ascii_only`` is a constant of the closure, so numba drops
    the other collector's call before typing: the ASCII kernel never compiles
    :func:`_collect`. (A constant, not the collector itself, is what the closure holds:
    numba keys its cache on the closure's pickled contents, and a pickled dispatcher differs
    from one process to the next.)"""

    def build(offsets, data, valid, groups, n, fold, case_insensitive, bits_per_gram, max_bytes,
              exact_max, mode, amaps, bits, small, table, others, hashes, spare, count, ring,
              lanes, out, words, out_off, out_ok, need, start):
        ncont = groups.size - 1
        nsec = 2 if case_insensitive else 1
        head = (4 + 8 * nsec + 7) // 8 * 8
        # the table's slots in use: then as many as the last container needed
        slots = table.size if table.size < TABLE_START else np.int64(TABLE_START)
        # did nearly all grams of the last container repeat? (see _mark; typed, not a literal,
        # which would compile every collector twice)
        repeats = np.bool_(False)
        for c in range(start, ncont):
            pos = out_off[c]
            q = pos + head
            kinds = 0
            counts0 = np.int64(0)
            counts1 = np.int64(0)
            for s in range(nsec):
                collect = _collect_ascii if ascii_only else _collect
                status, nsmall, nother, slots = collect(
                    offsets, data, valid, groups[c], groups[c + 1], n, fold, s == 1,
                    amaps[256 * s:256 * (s + 1)], bits, small, table, others, ring, lanes, slots,
                    repeats)
                if status:
                    need[0] = status
                    need[1] = nsmall  # the size wanted
                    return c
                ndv = nsmall + nother
                if s == 0:
                    rows = groups[c + 1] - groups[c]
                    repeats = 16 * ndv < offsets[groups[c + 1]] - offsets[groups[c]] + 2 * rows
                kind, cnt = _choose_kind(ndv, bits_per_gram, exact_max, mode)
                size = 8 * cnt if kind == KIND_EXACT else BLOCK_BYTES * cnt
                room = q + size + TRAILER_BYTES > out.size
                short = kind == KIND_EXACT and (ndv > hashes.size or ndv > spare.size)
                if short:
                    need[0] = NEED_HASHES
                    need[1] = ndv
                elif room:
                    need[0] = NEED_OUT
                    need[1] = q + size + TRAILER_BYTES
                if short or room:
                    for j in range(nsmall):
                        bits[small[j] >> np.uint32(6)] = 0
                    return c
                if kind == KIND_SBBF:
                    for j in range(size):
                        out[q + j] = 0
                for j in range(ndv):  # the grams' hashes: into the exact set, or the filter
                    h = _small_hash(small[j], n) if j < nsmall else others[j - nsmall]
                    if kind == KIND_EXACT:
                        hashes[j] = h
                    else:
                        _sbbf_add(words, q // 4, cnt, h)
                if kind == KIND_EXACT:
                    cnt = _sort_unique(hashes, ndv, spare, count)
                    w = q >> 2  # every section starts on an 8-byte boundary of the entry
                    for j in range(cnt):
                        words[w + 2 * j] = np.uint32(hashes[j] & _M32)
                        words[w + 2 * j + 1] = np.uint32(hashes[j] >> np.uint64(32))
                    size = 8 * cnt
                for j in range(nsmall):
                    bits[small[j] >> np.uint32(6)] = 0
                kinds |= kind << (8 * s)
                if s == 0:
                    counts0 = cnt
                else:
                    counts1 = cnt
                q += size
            total = q + TRAILER_BYTES - pos
            if total > max_bytes:
                out_off[c + 1] = pos
                out_ok[c] = False
                continue
            out[pos] = VERSION
            out[pos + 1] = n
            out[pos + 2] = nsec
            out[pos + 3] = 0
            for s in range(nsec):
                t = pos + 4 + 8 * s
                out[t] = (kinds >> (8 * s)) & 0xFF
                out[t + 1] = FOLD_NONE if s == 0 else FOLD_LOWER
                out[t + 2] = 0
                out[t + 3] = 0
                words[(t + 4) >> 2] = np.uint32(counts0 if s == 0 else counts1)
            for t in range(pos + 4 + 8 * nsec, pos + head):
                out[t] = 0
            out_off[c + 1] = q + TRAILER_BYTES
            out_ok[c] = True
        return ncont

    build.__name__ = build.__qualname__ = name  # the kernel's name in numba's cache, too
    build.__doc__ = doc
    return build


#: the arguments of both build kernels (see :func:`build_entries`)
_BUILD_SIGNATURE = int64(
    I64, U8, B1, I64, int64, I32, boolean, float64, int64, int64, int64, I64, W_U64, W_U32,
    W_U64, W_U64, W_U64, W_U64, W_I64, W_I64, W_U64, W_U8, W_U32, W_I64, W_B1, W_I64, int64)


#: what a process calls after a build: its checksums, then (usually) a probe
_AFTER_BUILD = ("checksums", "probe_entries")

build_entries = _kernel(_BUILD_SIGNATURE, then=_AFTER_BUILD, nogil=True)(_builder(
    False, "build_entries",
    """Encode the index entries of containers ``start..`` (rows ``groups[i]..groups[i+1]``)
    into ``out``, ``out_off`` (entry ``i`` is ``out[out_off[i]:out_off[i + 1]]``, and
    ``out_off[start]`` is where it starts) and ``out_ok`` (False: the entry is above
    ``max_bytes`` and left out, zero length); ``words`` is ``out`` viewed as uint32.

    Returns the number of the first container not encoded: ``groups.size - 1`` when done,
    else ``need`` says what was too small (NEED_* and the size wanted) and the caller grows it
    and calls again from there (``table`` holds a power of two of slots, at least 2). The
    trailing checksums are left for :func:`checksums`.
    Scratch: ``bits`` (BITMAP_WORDS, all clear, left clear), ``small`` (a container's small
    keys), ``table`` and ``others`` (its other keys), ``hashes`` and ``spare`` (an exact
    section's hashes), ``count`` (257), ``ring`` (MAX_GRAM_SIZE), ``lanes`` (5); ``amaps``
    holds the bytes as indexed, plain then folded.
    """))

build_entries_ascii = _kernel(_BUILD_SIGNATURE, then=_AFTER_BUILD, nogil=True)(_builder(
    True, "build_entries_ascii",
    """:func:`build_entries` of rows whose bytes are all ASCII, with ``n <= 3``: the same
    entries, from a kernel about half the size, which is all a first build of ASCII strings
    compiles (the UTF-8 decoder and the table of other grams are left out)."""))


@_kernel(types.void(U8, I64, B1, W_U64, W_U64, W_U64, W_U64, W_U64), nogil=True)
def checksums(data, offsets, valid, sums, first, second, third, trailer):
    """The checksum of every valid entry ``data[offsets[c]:offsets[c + 1]]`` (at least 20 bytes
    long): ``sums[c]``, xxHash64 of its bytes before the trailer (read-only input, as
    :mod:`.directory` verifies it). Also, as little-endian words, the bytes the directory
    decodes: ``first[c]`` and ``second[c]`` its first 16, ``third[c]`` the next 4 and
    ``trailer[c]`` its last 8, read in the same pass (an entry's head then costs one cache
    miss, not one per field)."""
    for c in range(offsets.size - 1):
        if valid[c]:
            s, end = offsets[c], offsets[c + 1]
            sums[c] = _xxh64(data, s, end - s - TRAILER_BYTES)
            first[c] = _rd64(data, s)
            second[c] = _rd64(data, s + 8)
            third[c] = _rd32(data, s + 16)
            trailer[c] = _rd64(data, end - TRAILER_BYTES)


# ----------------------------------------------------------------- probing ------------------

@_helper
def _keep_having(live, m, kind, count, pos, data, h):
    """Keep in ``live[:m]`` (container numbers, in order) the containers whose section may hold
    gram hash ``h``; returns how many are kept. The one place that tests membership.

    (A plain loop: the branch on each answer is predicted, so the loads of the next containers
    start before this one's arrives. Batching the tests to overlap the misses was slower.)"""
    # the SBBF bits of h in words 2i and 2i + 1, as one u64 each
    x = h & _M32
    one = np.uint64(1)
    w0 = one << (((x * _S0) & _M32) >> np.uint64(27)) | one << ((((x * _S1) & _M32) >> np.uint64(27)) + np.uint64(32))
    w1 = one << (((x * _S2) & _M32) >> np.uint64(27)) | one << ((((x * _S3) & _M32) >> np.uint64(27)) + np.uint64(32))
    w2 = one << (((x * _S4) & _M32) >> np.uint64(27)) | one << ((((x * _S5) & _M32) >> np.uint64(27)) + np.uint64(32))
    w3 = one << (((x * _S6) & _M32) >> np.uint64(27)) | one << ((((x * _S7) & _M32) >> np.uint64(27)) + np.uint64(32))
    high = h >> np.uint64(32)
    k = np.int64(0)
    for j in range(m):
        c = live[j]
        p = pos[c]
        if kind[c] == KIND_SBBF:
            base = p + np.int64((high * np.uint64(count[c])) >> np.uint64(32)) * BLOCK_BYTES
            hit = ((_rd64(data, base) & w0) == w0) & ((_rd64(data, base + 8) & w1) == w1) \
                & ((_rd64(data, base + 16) & w2) == w2) & ((_rd64(data, base + 24) & w3) == w3)
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


@_inlined
def _gram_order(live, m, kind, count, pos, data, hashes, start, stop, some, held, order):
    """Order (in ``order[:stop - start]``) the grams ``hashes[start:stop]`` by how many of up
    to ORDER_SAMPLE evenly spread containers hold them, fewest first (stable)."""
    sample = m if m < ORDER_SAMPLE else np.int64(ORDER_SAMPLE)
    size = stop - start
    for g in range(size):
        for i in range(sample):
            some[i] = live[(i * m) // sample]
        held[g] = _keep_having(some, sample, kind, count, pos, data, hashes[start + g])
        j = g  # insertion sort: a term has a few dozen grams at most
        while j > 0 and held[order[j - 1]] > held[g]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = g


@_kernel(types.void(I8, I8, I64, I64, U8, int64, U64, I64, W_B1, W_I64, W_I64, W_I64, W_I64,
                    W_I64))
def probe_entries(gram_size, kind, count, pos, data, n, term_hashes, term_offsets, out, rest,
                  live, some, held, order):
    """May-match mask (into ``out``, all False) of every entry (one section of a
    :class:`~.directory.Directory`) for one query.

    The query is an OR of terms, term ``t`` the AND of the gram hashes ``term_hashes[
    term_offsets[t]:term_offsets[t + 1]]`` (none: true). Entries of another gram size and
    entries of kind -1 are kept. Each term is tested on the containers no earlier term matched,
    gram by gram over those still possible, in :func:`_gram_order` (see the module doc).
    Scratch: ``rest`` and ``live`` (one slot per entry), ``some`` (ORDER_SAMPLE), ``held`` and
    ``order`` (one slot per gram of the longest term).
    """
    ncont = kind.size
    m = np.int64(0)  # rest[:m]: the containers no term has matched yet, in order
    for c in range(ncont):
        if gram_size[c] == n and kind[c] >= 0:
            rest[m] = c
            m += 1
        else:
            out[c] = True
    for t in range(term_offsets.size - 1):
        k = m
        for j in range(m):
            live[j] = rest[j]
        first, last = term_offsets[t], term_offsets[t + 1]
        _gram_order(live, k, kind, count, pos, data, term_hashes, first, last, some, held, order)
        for g in range(last - first):
            k = _keep_having(live, k, kind, count, pos, data, term_hashes[first + order[g]])
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
