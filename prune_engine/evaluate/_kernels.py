"""numba kernels for set membership over container ranges (the IN-list test).

Both answer, for every container ``i``: does the sorted set hold a value in ``[lo[i], hi[i]]``?
Plain-numpy equivalents live in :mod:`prune_engine.evaluate.domains` and the tests compare
the two. Serial kernels with explicit signatures, cached on disk (``cache=True``) so that only
the first process ever compiles them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(
    ["boolean[:](int64[:], int64[:], int32[:], int64, int64)",
     "boolean[:](uint64[:], uint64[:], int32[:], int64, int64)"],
    cache=True,
)
def dense_range_hits(lo, hi, counts, first, last):  # pragma: no cover - compiled
    """``counts[k]`` = members below ``first + k`` (length ``last - first + 2``)."""
    n = lo.shape[0]
    out = np.empty(n, dtype=np.bool_)
    span = last - first + 1
    for i in range(n):
        a_val = lo[i]
        b_val = hi[i]
        if b_val < first or a_val > last:
            out[i] = False
            continue
        a = 0 if a_val <= first else np.int64(a_val - first)
        b = span if b_val >= last else np.int64(b_val - first) + 1
        out[i] = counts[b] > counts[a]
    return out


@njit(
    ["boolean[:](int64[:], int64[:], int64[:])",
     "boolean[:](uint64[:], uint64[:], uint64[:])",
     "boolean[:](float64[:], float64[:], float64[:])",
     "boolean[:](float32[:], float32[:], float32[:])"],
    cache=True,
)
def sorted_range_hits(lo, hi, members):  # pragma: no cover - compiled
    """Binary search of each ``lo[i]`` in the sorted ``members``."""
    n = lo.shape[0]
    k = members.shape[0]
    out = np.empty(n, dtype=np.bool_)
    for i in range(n):
        x = lo[i]
        left, right = 0, k
        while left < right:
            mid = (left + right) >> 1
            if members[mid] < x:
                left = mid + 1
            else:
                right = mid
        out[i] = left < k and members[left] <= hi[i]
    return out
