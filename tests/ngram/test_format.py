"""Index bytes: round trip, corrupt and unknown-version entries, the size cap, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest

from prune_engine.errors import IndexCorruptError, PruneEngineError
from prune_engine.ngram import reference as R
from prune_engine.ngram.build import build_index, build_index_column
from prune_engine.ngram.format import (
    FOLD_LOWER, FOLD_NONE, KIND_EXACT, KIND_SBBF, decode_entry, encode_entry,
)
from prune_engine.ngram.probe import equals_may_match, like_may_match, regex_may_match

URLS = [f"https://shop.example.com/{p}/{i}" for i in range(40)
        for p in ("cart", "checkout", "search")]


def _index(values, sizes, **kw):
    return build_index(pa.array(values, pa.string()), np.cumsum([0] + sizes), **kw)


@pytest.mark.parametrize("mode", ["exact", "bloom"])
def test_round_trip_holds_every_gram(mode):
    index = _index(URLS, [len(URLS)], mode=mode, case_insensitive=True)
    entry = decode_entry(index[0].as_py())
    kind = KIND_EXACT if mode == "exact" else KIND_SBBF
    assert [(s.kind, s.fold) for s in entry.sections] == [(kind, FOLD_NONE), (kind, FOLD_LOWER)]
    hashes = R.container_hashes(URLS, 3)
    if mode == "exact":
        assert set(entry.sections[0].payload) == hashes
    else:
        assert all(R.sbbf_contains(entry.sections[0].payload, h) for h in hashes)
    assert encode_entry(3, [(s.kind, s.fold, s.payload) for s in entry.sections]) == index[0].as_py()


def test_auto_mode_is_exact_when_small_and_bloom_when_large():
    index = _index(["abc"] + URLS, [1, len(URLS)], exact_max_grams=100)  # URLS: 134 grams
    assert decode_entry(index[0].as_py()).sections[0].kind == KIND_EXACT
    assert decode_entry(index[1].as_py()).sections[0].kind == KIND_SBBF


def test_entry_above_the_byte_cap_is_null_and_keeps():
    index = build_index_column(pa.array(URLS + ["x"]), np.array([0, len(URLS), len(URLS) + 1]),
                               max_bytes=200)
    assert index.is_null().to_pylist() == [True, False], "the URL container exceeds 200 bytes"
    assert like_may_match(index, "%checkout%").tolist() == [True, False]


def _corrupt(index: pa.Array, i: int, pos: int, value: int) -> pa.Array:
    blobs = index.to_pylist()
    b = bytearray(blobs[i])
    b[pos] = value
    blobs[i] = bytes(b)
    return pa.array(blobs, pa.binary())


@pytest.mark.parametrize("pos,what", [(40, "corrupt"), (0, "unknown version"), (-1, "corrupt")])
def test_bad_entry_raises_naming_the_container_or_keeps(pos, what):
    index = _index(URLS + ["zzz"], [len(URLS), 1], mode="bloom")
    blob = index[0].as_py()
    bad = _corrupt(index, 0, pos % len(blob), blob[pos % len(blob)] ^ 0x5A)
    ids = pa.array(["f1.parquet", "f2.parquet"])
    with pytest.raises(IndexCorruptError, match=f"f1.parquet.*{what}") as err:
        like_may_match(bad, "%zzz%", containers=ids)
    assert err.value.container == "f1.parquet"
    with pytest.raises(IndexCorruptError, match="container 0"):
        regex_may_match(bad, "zzz")
    with pytest.warns(UserWarning, match="kept 1 container"):
        mask = like_may_match(bad, "%zzz%", on_invalid="keep")
    assert mask.tolist() == [True, True], "the corrupt container is kept, the other answered"


def test_truncated_entry_is_corrupt():
    index = _index(["abcdef"], [1])
    bad = pa.array([index[0].as_py()[:-3]], pa.binary())
    with pytest.raises(IndexCorruptError):
        equals_may_match(bad, ["abcdef"])


def test_null_entries_and_chunked_index_keep_and_answer():
    index = _index(["checkout", "home", "cart"], [1, 1, 1])
    chunked = pa.chunked_array([index.slice(0, 1), pa.array([None], pa.binary()), index.slice(1, 2)])
    assert like_may_match(chunked, "%home%").tolist() == [False, True, True, False]


def test_gram_sizes_mixed_in_one_column():
    a = _index(["checkout"], [1], gram_size=3)
    b = _index(["checkout"], [1], gram_size=4)
    c = _index(["home"], [1], gram_size=2)
    index = pa.concat_arrays([a, b, c])
    assert like_may_match(index, "%checkout%").tolist() == [True, True, False]


def test_ilike_keeps_containers_without_a_folded_set():
    index = _index(["CheckOut", "home"], [1, 1])
    assert like_may_match(index, "%checkout%", case_insensitive=True).tolist() == [True, True]
    folded = _index(["CheckOut", "home"], [1, 1], case_insensitive=True)
    assert like_may_match(folded, "%checkout%", case_insensitive=True).tolist() == [True, False]
    assert like_may_match(folded, "%checkout%").tolist() == [False, False], "LIKE is case-sensitive"


@pytest.mark.parametrize("call,match", [
    (lambda: build_index_column(pa.array([1, 2]), np.array([0, 2])), "string column"),
    (lambda: build_index_column(pa.array(["a"]), np.array([0, 2])), "group_offsets"),
    (lambda: build_index_column(pa.array(["a"]), np.array([1, 0])), "group_offsets"),
    (lambda: build_index_column(pa.array(["a"]), np.array([0, 1]), gram_size=0), "gram_size"),
    (lambda: build_index_column(pa.array(["a"]), np.array([0, 1]), fpp=1.5), "fpp"),
    (lambda: like_may_match(pa.array(["a"]), "%a"), "binary column"),
    (lambda: like_may_match(pa.array([b"x"]), "a!", escape="!"), "ends with its escape"),
    (lambda: like_may_match(pa.array([b"x"]), "a", escape="ab"), "one character"),
    (lambda: like_may_match(pa.array([b"x"]), "a", on_invalid="drop"), "on_invalid"),
    (lambda: equals_may_match(pa.array([b"x"]), "abc"), "sequence of strings"),
])
def test_bad_input_is_a_clear_error(call, match):
    with pytest.raises(PruneEngineError, match=match) as err:
        call()
    assert isinstance(err.value, ValueError)


def test_string_view_and_large_string_and_slices_build_alike():
    values = pa.array(["checkout", None, "home", "cart"])
    expected = build_index_column(values, np.array([0, 2, 4])).to_pylist()
    for v in (values.cast(pa.large_string()), values.cast(pa.string_view()),
              pa.chunked_array([values.slice(0, 1), values.slice(1)])):
        assert build_index_column(v, np.array([0, 2, 4])).to_pylist() == expected
    sliced = pa.array(["zz", "checkout", None, "home", "cart"]).slice(1)
    assert build_index_column(sliced, np.array([0, 2, 4])).to_pylist() == expected


def test_empty_in_list_matches_nothing_and_null_entry_keeps():
    index = pa.concat_arrays([_index(["a"], [1]), pa.array([None], pa.binary())])
    assert equals_may_match(index, []).tolist() == [False, True]
    assert equals_may_match(index, [None]).tolist() == [False, True]


def test_progress_bar_builds_the_same_bytes():
    values = pa.array(URLS)
    offsets = np.arange(0, len(URLS) + 1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_bar = build_index_column(values, offsets, progress=True)
    assert with_bar.to_pylist() == build_index_column(values, offsets).to_pylist()


@pytest.mark.parametrize("fpp", [0.01, 0.05])
def test_bloom_false_positive_rate_meets_its_target(fpp):
    """Random gram hashes in a filter sized by :func:`sbbf_num_blocks`: absent hashes pass at
    most at the target rate (measured on 40,000, with room for the sampling error only)."""
    import random

    from prune_engine.ngram.format import sbbf_num_blocks

    rng = random.Random(1)
    hashes = [rng.getrandbits(64) for _ in range(4000)]
    blocks = R.sbbf_blocks(hashes, sbbf_num_blocks(len(hashes), fpp))
    probes = 40_000
    rate = sum(R.sbbf_contains(blocks, rng.getrandbits(64)) for _ in range(probes)) / probes
    assert rate <= fpp + 3 * (fpp / probes) ** 0.5, f"measured {rate:.4f} for a target of {fpp}"
