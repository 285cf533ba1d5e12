"""A Bloom filter of integer join keys: built by Spark's executors, probed over container ranges.

When a dimension's join keys are too many for an exact ``IN`` set, a fact container is still
pruned when no key lies in its range. For integer and date keys that is testable: every value
of a container's ``[min, max]`` is probed, for containers whose range spans at most
``max_span`` values (within a total budget); any hit, an unknown bound or a span beyond the
limits keeps the container. A Bloom filter has no false negatives, so a key in the range is
always a hit: pruning stays sound; a false positive only keeps a container. Probing a span of
``S`` values multiplies the false-positive rate by about ``S``, so the caller sizes the filter
for its per-container target divided by the typical span (at most :data:`MAX_BITS` bits).

Keys are hashed as int64 (dates as days) with SplitMix64; probe ``i`` of ``k`` is bit
``(h1 + i * h2) mod m`` (Kirsch-Mitzenmacher double hashing), ``m`` sized for the requested
false-positive rate.

>>> bloom = KeyBloom.empty(1000, 0.01)
>>> bloom.add(np.array([3, 17, 99], dtype=np.int64))
>>> bloom.contains(np.array([3, 17, 99], dtype=np.int64)).tolist()
[True, True, True]
>>> bloom.any_in_ranges(np.array([0, 20]), np.array([5, 90])).tolist()
[True, False]
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

_M1, _M2, _GOLDEN = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), \
    np.uint64(0x9E3779B97F4A7C15)
#: most values probed per container, and in total per call
MAX_SPAN = 1 << 16
MAX_PROBES = 1 << 24
#: the smallest and largest filter built (bits): 8 kB (double hashing is poor in tiny
#: filters) and 32 MB
MIN_BITS, MAX_BITS = 1 << 16, 1 << 28


def _mix(values: np.ndarray) -> np.ndarray:
    z = values.astype(np.int64, copy=False).view(np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def as_int64(array: pa.Array) -> np.ndarray:
    """The non-null values of an integer or date32 Arrow array as int64."""
    array = array.drop_null()
    if pa.types.is_date32(array.type):
        array = array.cast(pa.int32())
    return np.asarray(array.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


class KeyBloom:
    """``m`` bits (``uint64`` words) and ``k`` probes per key."""

    def __init__(self, words: np.ndarray, k: int):
        self.words = words
        self.k = k
        self.m = np.uint64(len(words) * 64)

    @classmethod
    def empty(cls, expected: int, fpp: float) -> "KeyBloom":
        """A filter sized for ``expected`` distinct keys at false-positive rate ``fpp``."""
        expected = max(1, int(expected))
        fpp = min(max(fpp, 1e-12), 0.5)
        bits = math.ceil(-expected * math.log(fpp) / math.log(2) ** 2)
        bits = min(MAX_BITS, max(MIN_BITS, bits))
        words = (bits + 63) // 64
        k = max(1, round(-math.log2(fpp)))  # optimal for the size the rate asks for
        return cls(np.zeros(words, np.uint64), k)

    def _positions(self, values: np.ndarray):
        h = _mix(values)
        h1, h2 = h & np.uint64(0xFFFFFFFF), (h >> np.uint64(32)) | np.uint64(1)
        with np.errstate(over="ignore"):
            for i in range(self.k):
                yield (h1 + np.uint64(i) * h2) % self.m

    def add(self, values: np.ndarray) -> None:
        for pos in self._positions(values):
            np.bitwise_or.at(self.words, (pos >> np.uint64(6)).astype(np.int64),
                             np.uint64(1) << (pos & np.uint64(63)))

    def contains(self, values: np.ndarray) -> np.ndarray:
        hit = np.ones(len(values), dtype=bool)
        for pos in self._positions(values):
            word = self.words[(pos >> np.uint64(6)).astype(np.int64)]
            hit &= (word >> (pos & np.uint64(63))) & np.uint64(1) == np.uint64(1)
        return hit

    def union(self, other: "KeyBloom") -> None:
        self.words |= other.words

    def any_in_ranges(self, lo: np.ndarray, hi: np.ndarray, known: np.ndarray | None = None,
                      max_span: int = MAX_SPAN, max_probes: int = MAX_PROBES) -> np.ndarray:
        """Per container: may a key lie in ``[lo, hi]``? True (keep) where the bounds are not
        ``known``, the span is too wide, or the probe budget is spent."""
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        keep = np.ones(len(lo), dtype=bool)
        ok = np.ones(len(lo), dtype=bool) if known is None else known.copy()
        with np.errstate(over="ignore"):
            span = np.where(ok, hi - lo + 1, 0)
        ok &= (span > 0) & (span <= max_span)
        idx = np.flatnonzero(ok)
        idx = idx[np.cumsum(span[idx]) <= max_probes]
        if len(idx) == 0:
            return keep
        spans = span[idx]
        starts = np.concatenate(([0], np.cumsum(spans)[:-1]))
        values = np.repeat(lo[idx], spans) + (np.arange(spans.sum()) - np.repeat(starts, spans))
        hits = self.contains(values)
        keep[idx] = np.logical_or.reduceat(hits, starts)
        return keep

    def to_bytes(self) -> bytes:
        return self.words.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, k: int) -> "KeyBloom":
        return cls(np.frombuffer(bytes(data), dtype=np.uint64).copy(), k)
