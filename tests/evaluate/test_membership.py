"""The sorted-set lookups of ``evaluate/membership.py`` against plain-Python references, on
both of their paths (scan up to SCAN_MAX members, binary search above) and across blocks."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.evaluate import membership
from tests.budget import examples

DTYPES = {
    np.int64: st.integers(-(2**63), 2**63 - 1),
    np.uint64: st.integers(0, 2**64 - 1),
    np.int32: st.integers(-(2**31), 2**31 - 1),
    np.float64: st.floats(allow_nan=False),
    np.float32: st.floats(allow_nan=False, width=32),
}


#: the default block size; blocks so small that a few containers span several; and those
#: tiny blocks shared among three threads
BLOCKS = pytest.mark.parametrize("block,threads", [(membership.BLOCK, 1), (5, 1), (5, 3)],
                                 ids=["block", "tiny-blocks", "threads"])


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(list(DTYPES)))
    values = DTYPES[dtype]
    near = draw(st.lists(values, min_size=1, max_size=6))  # values that repeat in every role
    pick = st.one_of(st.sampled_from(near), values)
    n = draw(st.integers(0, 40))
    lo = draw(st.lists(pick, min_size=n, max_size=n))
    hi = draw(st.lists(pick, min_size=n, max_size=n))
    size = draw(st.sampled_from([1, 3, membership.SCAN_MAX, membership.SCAN_MAX + 9]))
    members = draw(st.lists(pick, min_size=0, max_size=size))
    known = st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n).map(np.array))
    arr = lambda xs: np.array(xs, dtype=dtype)  # noqa: E731
    return arr(lo), arr(hi), np.sort(arr(members)), draw(known), draw(known)


@BLOCKS
@settings(max_examples=examples(300), deadline=None)
@given(case=cases())
def test_lookups_match_python(block, threads, case):
    lo, hi, members, lo_known, hi_known = case
    with mock.patch.object(membership, "BLOCK", block), \
            mock.patch.object(membership, "PARALLEL_MIN", 4 if threads > 1 else membership.PARALLEL_MIN), \
            mock.patch.object(membership, "_workers", lambda: threads):
        check(lo, hi, members, lo_known, hi_known)


def check(lo, hi, members, lo_known=None, hi_known=None):
    """Every lookup against Python; an unknown bound (``*_known`` False) is no bound."""
    m = members.tolist()
    n = len(lo)
    lo_known = [True] * n if lo_known is None else lo_known.tolist()
    hi_known = [True] * n if hi_known is None else hi_known.tolist()
    expected = [any((not ka or a <= x) and (not kb or x <= b) for x in m)
                for a, b, ka, kb in zip(lo.tolist(), hi.tolist(), lo_known, hi_known)]
    got = membership.any_in_range(lo, hi, members, np.array(lo_known, bool), np.array(hi_known, bool))
    assert got.tolist() == expected
    if all(lo_known) and all(hi_known):
        assert membership.any_in_range(lo, hi, members).tolist() == expected
    assert membership.contains(members, lo).tolist() == [a in m for a in lo.tolist()]
    if len(m):
        assert membership.count_below(members, lo).tolist() == [
            sum(x < a for x in m) for a in lo.tolist()]


def test_zero_signs_and_infinities():
    members = np.array([-np.inf, -0.0, 5.0])
    lo, hi = np.array([0.0, np.inf, -np.inf]), np.array([0.0, np.inf, -1.0])
    assert membership.any_in_range(lo, hi, members).tolist() == [True, False, True]
    assert membership.contains(members, np.array([0.0, -np.inf, np.inf])).tolist() == [True, True, False]
