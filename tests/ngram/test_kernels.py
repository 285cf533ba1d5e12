"""Kernels against the plain-Python reference: same hashes, same bytes, same answers."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ngram.ngram_cases import flatten, random_containers, random_like, random_regex
from prune_engine.ngram import _kernels as K
from prune_engine.ngram import reference as R
from prune_engine.ngram.build import build_index
from prune_engine.ngram.pattern import like_query, regex_query
from prune_engine.ngram.probe import compile_query

#: published xxHash64 (seed 0) vectors: "", "a", "abc", and a 39-byte input (32-byte stripes)
VECTORS = [(b"", 0xEF46DB3751D8E999), (b"a", 0xD24EC4F1A98C6E5B), (b"abc", 0x44BC2CF5AD770999),
           (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1)]


@pytest.mark.parametrize("data,expected", VECTORS)
def test_xxh64_matches_published_vectors(data, expected):
    buf = K.ro(np.frombuffer(data, np.uint8), np.uint8)
    assert K.xxh64(buf, 0, len(data)) == expected, "numba kernel"
    assert R.xxh64(data) == expected, "Python reference"


@given(st.binary(max_size=200))
def test_hash_slices_equals_reference(data):
    cuts = sorted({0, len(data), len(data) // 3, len(data) // 2})
    got = K.hash_slices(K.ro(np.frombuffer(data, np.uint8), np.uint8), K.ro(np.array(cuts), np.int64))
    assert got.tolist() == [R.xxh64(data[a:b]) for a, b in zip(cuts, cuts[1:])]


@settings(max_examples=60, deadline=None)
@given(rng=st.randoms(use_true_random=False), n=st.integers(1, 5),
       mode=st.sampled_from(["exact", "bloom", "auto"]), fpp=st.sampled_from([0.01, 0.2]),
       ci=st.booleans())
def test_build_writes_the_reference_bytes(rng, n, mode, fpp, ci):
    containers = random_containers(rng)
    values, offsets = flatten(containers)
    index = build_index(values, offsets, gram_size=n, case_insensitive=ci, fpp=fpp, mode=mode,
                        exact_max_grams=8)
    for i, rows in enumerate(containers):
        expected = R.build_entry(rows, n, case_insensitive=ci, fpp=fpp, exact_max=8, mode=mode)
        assert index[i].as_py() == expected, f"container {i} {rows!r}: kernel bytes differ"


@settings(max_examples=60, deadline=None)
@given(rng=st.randoms(use_true_random=False), mode=st.sampled_from(["exact", "bloom"]),
       n=st.integers(2, 4))
def test_probe_kernel_equals_reference_probe(rng, mode, n):
    containers = random_containers(rng)
    values, offsets = flatten(containers)
    index = build_index(values, offsets, gram_size=n, case_insensitive=True, fpp=0.2, mode=mode)
    off, data, valid = (K.ro(np.frombuffer(index.buffers()[1], np.int32).astype(np.int64), np.int64),
                        K.ro(np.frombuffer(index.buffers()[2], np.uint8), np.uint8),
                        K.ro(np.ones(len(index), np.bool_), np.bool_))
    for folded in (False, True):
        pattern, escape = random_like(rng, containers)
        try:
            query = like_query(pattern, n, escape, folded)
        except ValueError:
            continue
        for q in (query, regex_query(random_regex(rng, containers), n)):
            got, status = K.probe_entries(off, data, valid, n, folded, *compile_query(q))
            assert not status.any()
            expected = [R.may_match(index[i].as_py(), q, folded) for i in range(len(index))]
            assert got.tolist() == expected, f"query {q}"


def test_grams_never_split_a_code_point():
    """Each stored gram hash is the hash of whole code points: probe 3-code-point grams of
    4-byte emoji and 3-byte CJK exactly."""
    index = build_index(pa.array(["😀中😀"]), np.array([0, 1]), mode="exact")
    entry = R.decode_entry(index[0].as_py())
    expected = {R.gram_hash(g) for g in R.grams("😀中😀", 3)}
    assert set(entry.sections[0].payload) == expected
    assert len(expected) == 3  # ^😀中, 😀中😀, 中😀$


def test_two_processes_compiling_at_once_both_succeed(tmp_path):
    """Cold numba cache, two interpreters importing (so compiling) the kernels concurrently."""
    code = textwrap.dedent("""
        import numpy as np, pyarrow as pa
        from prune_engine.ngram.build import build_index_column
        from prune_engine.ngram.probe import like_may_match
        idx = build_index_column(pa.array(["checkout", "home"]), np.array([0, 1, 2]))
        assert like_may_match(idx, "%check%").tolist() == [True, False]
        print("ok")
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0 and out.strip() == "ok", err[-2000:]
    assert any((tmp_path / "cache").rglob("*.nbi")), "the kernels were not cached"
