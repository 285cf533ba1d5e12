"""The IN-list kernels against plain-Python references."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.evaluate import _kernels
from prune_engine.evaluate.domains import _dense_any_in_range
from tests.budget import examples


def reference(lo, hi, members):
    return np.array([any(a <= m <= b for m in members) for a, b in zip(lo, hi)], dtype=bool)


ints = st.integers(-(2**63), 2**63 - 1)
small = st.integers(-50, 50)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.one_of(small, ints), st.integers(0, 30)), min_size=1, max_size=40),
       st.lists(small, min_size=1, max_size=10))
def test_dense_and_sorted_hits_match_the_reference(ranges, members):
    lo = np.array([a for a, _ in ranges], dtype=np.int64)
    hi = np.array([min(a + w, 2**63 - 1) for a, w in ranges], dtype=np.int64)
    s = np.unique(np.array(members, dtype=np.int64))
    expected = reference(lo.tolist(), hi.tolist(), s.tolist())
    counts = np.cumsum(np.bincount(s - s[0] + 1, minlength=int(s[-1] - s[0]) + 2)).astype(np.int32)
    assert (_kernels.dense_range_hits(lo, hi, counts, int(s[0]), int(s[-1])) == expected).all()
    assert (_dense_any_in_range(lo, hi, s, int(s[0]), int(s[-1])) == expected).all()
    assert (_kernels.sorted_range_hits(lo, hi, s) == expected).all()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(0, 100)), min_size=1, max_size=40),
       st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=10))
def test_sorted_hits_on_floats(ranges, members):
    lo = np.array([a for a, _ in ranges])
    hi = lo + np.array([w for _, w in ranges])
    s = np.unique(np.array(members))
    assert (_kernels.sorted_range_hits(lo, hi, s) == reference(lo, hi, s)).all()


def test_unsigned_above_2_63():
    lo = np.array([2**63 + 5, 0], dtype=np.uint64)
    hi = np.array([2**64 - 1, 3], dtype=np.uint64)
    s = np.array([2**63 + 7], dtype=np.uint64)
    assert _kernels.sorted_range_hits(lo, hi, s).tolist() == [True, False]
