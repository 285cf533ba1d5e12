"""Sorted-set lookups over container bounds: the IN and NOT IN tests, in numpy, without JIT.

For a sorted array of ``members`` (one numpy dtype: integers, floats, or the uint64 words of
:mod:`.strings`) and one value ``x`` per container:

==================================  ==========================================================
function                            per container
==================================  ==========================================================
:func:`count_below`                 how many members are ``< x`` (numpy's ``searchsorted``)
:func:`any_in_range`                does some member lie in ``[lo, hi]``?
:func:`contains`                    is ``x`` a member?
==================================  ==========================================================

Every call is one vectorized pass over the containers, O(n log k) for k members:

* up to :data:`SCAN_MAX` members, each block of :data:`BLOCK` containers (cache-resident) is
  compared with every member, and the comparisons counted; ``any_in_range`` is then
  ``#members <= hi > #members < lo``. numpy's binary search takes one unpredictable branch
  per step and costs several times more than these comparisons at such sizes;
* above it, ``np.searchsorted`` finds each container's first member ``>= lo``, and that one
  member is compared with ``hi``.

Members must be sorted (repeats allowed) and of ``x``'s dtype; NaN is not a member (NaN is
handled by the caller). The tests compare every path with a plain-Python reference.

>>> import numpy as np
>>> lo, hi = np.array([0, 5, 9]), np.array([3, 6, 20])
>>> any_in_range(lo, hi, np.array([4, 6, 30])).tolist()
[False, True, False]
"""

from __future__ import annotations

import numpy as np

#: sets of at most this many members are scanned, larger ones binary-searched
SCAN_MAX = 16
#: containers per block of the scan (their bounds stay in cache across the members)
BLOCK = 1 << 16


def count_below(members: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each ``x[i]``: the number of members ``< x[i]`` (an index into ``members``).

    >>> count_below(np.array([2, 4, 4, 8]), np.array([1, 4, 5, 9])).tolist()
    [0, 1, 3, 4]
    """
    if len(members) > SCAN_MAX:
        return np.searchsorted(members, x, side="left")
    out = np.zeros(len(x), dtype=np.intp)
    for start, stop in _blocks(len(x)):
        part, counts, test = x[start:stop], out[start:stop], np.empty(stop - start, dtype=bool)
        for m in members:
            np.greater(part, m, out=test)
            np.add(counts, test.view(np.uint8), out=counts)
    return out


def any_in_range(lo: np.ndarray, hi: np.ndarray, members: np.ndarray) -> np.ndarray:
    """For each container: does a member ``m`` satisfy ``lo[i] <= m <= hi[i]``?

    >>> any_in_range(np.array([1, 1]), np.array([1, 0]), np.array([1])).tolist()
    [True, False]
    """
    n, k = len(lo), len(members)
    if k == 0:
        return np.zeros(n, dtype=bool)
    if k > SCAN_MAX:
        idx = np.searchsorted(members, lo, side="left")
        first = np.take(members, idx, mode="clip")  # the first member >= lo (if idx < k)
        return (idx < k) & (first <= hi)
    out = np.empty(n, dtype=bool)
    for start, stop in _blocks(n):
        a, b = lo[start:stop], hi[start:stop]
        below = np.zeros(stop - start, dtype=np.uint8)  # members < lo
        upto = np.zeros(stop - start, dtype=np.uint8)  # members <= hi
        test = np.empty(stop - start, dtype=bool)
        counted = test.view(np.uint8)
        for m in members:
            np.greater(a, m, out=test)
            np.add(below, counted, out=below)
            np.greater_equal(b, m, out=test)
            np.add(upto, counted, out=upto)
        np.greater(upto, below, out=out[start:stop])
    return out


def contains(members: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each ``x[i]``: is it one of the members?

    >>> contains(np.array([2, 4]), np.array([1, 4, 5])).tolist()
    [False, True, False]
    """
    n, k = len(x), len(members)
    if k == 0:
        return np.zeros(n, dtype=bool)
    if k > SCAN_MAX:
        return np.take(members, count_below(members, x), mode="clip") == x
    out = np.zeros(n, dtype=bool)
    for start, stop in _blocks(n):
        part, found, test = x[start:stop], out[start:stop], np.empty(stop - start, dtype=bool)
        for m in members:
            np.logical_or(found, np.equal(part, m, out=test), out=found)
    return out


def _blocks(n: int):
    return ((start, min(start + BLOCK, n)) for start in range(0, n, BLOCK))
