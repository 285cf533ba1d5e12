"""The join keys' Bloom filter: never a false negative, false positives near the target, and
range probing that keeps every container holding a key (checked against the exact set)."""

from __future__ import annotations

import numpy as np

from prune_engine.spark._bloom import KeyBloom


def test_no_false_negatives_and_false_positives_near_the_target():
    rng = np.random.default_rng(1)
    keys = rng.integers(-(2**62), 2**62, 50_000)
    bloom = KeyBloom.empty(len(keys), 0.01)
    bloom.add(keys)
    assert bloom.contains(keys).all(), "every key is found"
    others = np.setdiff1d(rng.integers(-(2**62), 2**62, 200_000), keys)
    assert bloom.contains(others).mean() < 0.02, "about 1% false positives"


def test_union_of_partial_filters_is_the_filter_of_all_keys():
    keys = np.arange(0, 10_000, 7)
    whole, a, b = (KeyBloom.empty(len(keys), 0.001) for _ in range(3))
    whole.add(keys)
    a.add(keys[::2])
    b.add(keys[1::2])
    a.union(b)
    assert np.array_equal(a.words, whole.words)
    back = KeyBloom.from_bytes(a.to_bytes(), a.k)
    assert np.array_equal(back.words, a.words)


def test_range_probing_keeps_every_container_holding_a_key():
    rng = np.random.default_rng(2)
    keys = np.unique(rng.integers(0, 1_000_000, 3_000))
    bloom = KeyBloom.empty(len(keys), 0.01 / 500)
    bloom.add(keys)
    lo = np.sort(rng.integers(0, 1_000_000, 400))
    hi = lo + rng.integers(0, 1_000, 400)
    hi[5] = lo[5] + 10**6  # too wide to probe: kept
    known = np.ones(400, dtype=bool)
    known[7] = False  # unknown bounds: kept
    keep = bloom.any_in_ranges(lo, hi, known, max_span=100_000)
    exact = np.searchsorted(keys, hi, side="right") > np.searchsorted(keys, lo, side="left")
    assert keep[exact].all(), "no container with a key in its range is pruned"
    assert keep[5] and keep[7]
    assert keep.sum() < 400 and (keep & ~exact).sum() <= 0.05 * (~exact).sum() + 2


def test_extreme_bounds_do_not_overflow_into_a_small_span():
    bloom = KeyBloom.empty(10, 0.01)
    bloom.add(np.arange(10))
    lo = np.array([-(2**63), -(2**63) + 5, 0])
    hi = np.array([2**63 - 1, 2**63 - 1, 9])
    assert bloom.any_in_ranges(lo, hi).tolist() == [True, True, True]
