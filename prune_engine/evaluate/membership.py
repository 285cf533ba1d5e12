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
  Large tables are scanned on several threads (numpy releases the GIL), so that ``IN`` of a
  few values costs about what ``=`` does;
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

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: sets of at most this many members are scanned, larger ones binary-searched
SCAN_MAX = 16
#: containers per block of the scan (their bounds stay in cache across the members)
BLOCK = 1 << 16
#: containers per thread of the scan, at least; and the most threads it uses
PARALLEL_MIN = 1 << 18
MAX_THREADS = 8


def count_below(members: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each ``x[i]``: the number of members ``< x[i]`` (an index into ``members``).

    >>> count_below(np.array([2, 4, 4, 8]), np.array([1, 4, 5, 9])).tolist()
    [0, 1, 3, 4]
    """
    return np.searchsorted(members, x, side="left")


def any_in_range(lo: np.ndarray, hi: np.ndarray, members: np.ndarray,
                 lo_known: np.ndarray | None = None, hi_known: np.ndarray | None = None) -> np.ndarray:
    """For each container: does a member ``m`` satisfy ``lo[i] <= m <= hi[i]``? An unknown
    bound (``*_known`` False; None = all known) reads as the set's own end, so that the known
    one still decides.

    >>> any_in_range(np.array([1, 1]), np.array([1, 0]), np.array([1])).tolist()
    [True, False]
    >>> any_in_range(np.array([9, 9]), np.array([5, 5]), np.array([1, 5]),
    ...              lo_known=np.array([False, True])).tolist()
    [True, False]
    """
    n, k = len(lo), len(members)
    if k == 0:
        return np.zeros(n, dtype=bool)
    if k > SCAN_MAX:
        lo, hi = _known_or(lo, lo_known, members[0]), _known_or(hi, hi_known, members[-1])
        idx = np.searchsorted(members, lo, side="left")
        first = np.take(members, idx, mode="clip")  # the first member >= lo (if idx < k)
        return (idx < k) & (first <= hi)
    lo_known = None if lo_known is None else lo_known.view(np.uint8)
    hi_all = None if hi_known is None else np.logical_not(hi_known).view(np.uint8) * np.uint8(k)
    out = np.empty(n, dtype=bool)

    def scan(start: int, stop: int) -> None:
        for first, last in _blocks(start, stop):
            part = slice(first, last)
            a, b = lo[part], hi[part]
            below = np.zeros(last - first, dtype=np.uint8)  # members < lo
            upto = np.zeros(last - first, dtype=np.uint8)  # members <= hi
            test = np.empty(last - first, dtype=bool)
            counted = test.view(np.uint8)
            for m in members:
                np.greater(a, m, out=test)
                np.add(below, counted, out=below)
                np.greater_equal(b, m, out=test)
                np.add(upto, counted, out=upto)
            if lo_known is not None:  # an unknown lo: no member below it
                np.multiply(below, lo_known[part], out=below)
            if hi_all is not None:  # an unknown hi: every member up to it
                np.maximum(upto, hi_all[part], out=upto)
            np.greater(upto, below, out=out[part])

    _in_parallel(scan, n)
    return out


def _known_or(values: np.ndarray, known: np.ndarray | None, fill) -> np.ndarray:
    """``values`` where ``known``, else ``fill``."""
    return values if known is None else np.where(known, values, fill)


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
    for start, stop in _blocks(0, n):
        part, found, test = x[start:stop], out[start:stop], np.empty(stop - start, dtype=bool)
        for m in members:
            np.logical_or(found, np.equal(part, m, out=test), out=found)
    return out


def _blocks(start: int, stop: int):
    return ((first, min(first + BLOCK, stop)) for first in range(start, stop, BLOCK))


def _in_parallel(scan, n: int) -> None:
    """``scan(start, stop)`` over ``range(n)``: on two or more threads (numpy releases the GIL)
    when there are at least :data:`PARALLEL_MIN` containers, else in this thread."""
    run_split(scan, n, n // PARALLEL_MIN, BLOCK)


def run_split(scan, n: int, pieces: int, align: int = 1) -> None:
    """``scan(start, stop)`` over ``range(n)`` in up to ``pieces`` parts of whole multiples of
    ``align``, one per thread (at most one per core): the first in this thread, the others on
    the shared pool. For a scan that releases the GIL (numpy, or a ``nogil`` kernel)."""
    k = min(_workers(), pieces)
    if k < 2:
        scan(0, n)
        return
    step = -(-n // k // align) * align
    others = [_pool().submit(scan, start, min(start + step, n))
              for start in range(step, n, step)]
    scan(0, min(step, n))
    for other in others:
        other.result()


@functools.lru_cache(maxsize=1)
def _workers() -> int:
    return min(MAX_THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@functools.lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_workers() - 1, thread_name_prefix="prune_engine-membership")
