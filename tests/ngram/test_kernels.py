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
from numba import njit

from prune_engine.ngram import _kernels as K
from prune_engine.ngram import reference as R
from prune_engine.ngram.build import build_index
from prune_engine.ngram.directory import directory
from prune_engine.ngram.format import xxh64
from prune_engine.ngram.pattern import equals_query, like_query, regex_query
from prune_engine.ngram.probe import compile_query, probe_section
from tests.budget import examples
from tests.ngram.ngram_cases import flatten, random_containers, random_like, random_regex

#: published xxHash64 (seed 0) vectors: "", "a", "abc", and a 39-byte input (32-byte stripes)
VECTORS = [(b"", 0xEF46DB3751D8E999), (b"a", 0xD24EC4F1A98C6E5B), (b"abc", 0x44BC2CF5AD770999),
           (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1)]


def _u8(data: bytes) -> np.ndarray:
    return K.ro(np.frombuffer(data, np.uint8), np.uint8)


# the kernels' helpers have no Python wrapper: these compile them for the tests


@njit
def _xxh64(buf, start, length):
    return K._xxh64(buf, start, length)


@njit
def _small_hash(key, n):
    return K._small_hash(key, n)


@njit
def _sort_unique(a, m):
    return K._sort_unique(a, m, np.zeros(m, np.uint64), np.zeros(257, np.int64))


@pytest.mark.parametrize("data,expected", VECTORS)
def test_xxh64_matches_published_vectors(data, expected):
    assert _xxh64(_u8(data), 0, len(data)) == expected, "numba kernel"
    assert xxh64(data) == expected, "Python (the format's definition)"


@settings(max_examples=examples(100), deadline=None)  # the first example compiles the helper
@given(st.binary(max_size=200), st.integers(0, 200), st.integers(0, 200))
def test_xxh64_of_any_slice_equals_reference(data, a, b):
    a, b = sorted((min(a, len(data)), min(b, len(data))))
    assert _xxh64(_u8(data), a, b - a) == xxh64(data[a:b])


@settings(max_examples=examples(100), deadline=None)  # the first example compiles the helper
@given(st.binary(min_size=1, max_size=3))
def test_small_gram_hash_equals_reference(gram):
    """A small gram's key is its bytes, the first one lowest (see the kernels' module doc)."""
    key = np.uint64(int.from_bytes(gram, "little"))
    assert _small_hash(key, len(gram)) == xxh64(gram)


@settings(max_examples=examples(100), deadline=None)  # the first example compiles the helper
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300))
def test_sort_unique_equals_sorted_set(values):
    a = np.array(values + [0], np.uint64)  # one spare slot after the m values
    m = _sort_unique(a, len(values))
    assert a[:m].tolist() == sorted(set(values))


def _assert_reference_bytes(containers, n, ci=True, fpp=0.2, mode="auto", exact_max=8):
    values, offsets = flatten(containers)
    index = build_index(values, offsets, gram_size=n, case_insensitive=ci, fpp=fpp, mode=mode,
                        exact_max_grams=exact_max)
    for i, rows in enumerate(containers):
        expected = R.build_entry(rows, n, case_insensitive=ci, fpp=fpp, exact_max=exact_max,
                                 mode=mode)
        assert index[i].as_py() == expected, f"n={n} container {i} {rows!r}: kernel bytes differ"


@settings(max_examples=examples(60), deadline=None)
@given(rng=st.randoms(use_true_random=False), n=st.integers(1, 5),
       mode=st.sampled_from(["exact", "bloom", "auto"]), fpp=st.sampled_from([0.01, 0.2]),
       ci=st.booleans())
def test_build_writes_the_reference_bytes(rng, n, mode, fpp, ci):
    _assert_reference_bytes(random_containers(rng), n, ci, fpp, mode)


#: containers for the two gram paths: all-ASCII values (the bitmap), values with a non-ASCII
#: code point early, late or alone (the general path), both kinds sharing grams in one
#: container, NUL and DEL bytes, empty strings and nulls, and code points that fold onto
#: ASCII (Kelvin sign, dotted capital I) next to ASCII that folds (A-Z)
PATH_CASES = [
    ["checkout", "CHECKOUT", "/cart?q=1", "a", "ab", ""],
    ["é", "éa", "aé", "abcé", "éabc", "abcdéfgh", "中文😀", "😀"],
    ["abc", "abcé", "xabc", "ABC\u212a", "\u0130stanbul", "istanbul", None, ""],
    ["\x00", "a\x00b", "\x7f\x7f", "\x00é\x00"],
    [None, None],
    [],
    ["", "", None],
    ["x" * 40 + "é" + "y" * 40, "x" * 81],
]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("mode", ["exact", "bloom"])
def test_ascii_and_general_paths_write_the_reference_bytes(n, mode):
    _assert_reference_bytes(PATH_CASES, n, ci=True, mode=mode)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_ascii_batches_take_the_ascii_kernel_and_both_kernels_agree(monkeypatch, n):
    """A batch whose bytes are all ASCII goes to ``build_entries_ascii`` when ``n <= 3``, to
    ``build_entries`` otherwise; forced through the general kernel, the same rows give the
    same (reference) bytes."""
    from prune_engine.ngram import build

    rows = [c for c in PATH_CASES if all(v is None or v.isascii() for v in c)]
    rows.append(["\x00", "a\x00b", "\x7f\x7f", "x" * 81])
    calls = []
    for name in ("build_entries", "build_entries_ascii"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, k=kernel, name=name: calls.append(name) or k(*a))
    for mode in ("exact", "bloom"):
        _assert_reference_bytes(rows, n, ci=True, mode=mode)
    assert set(calls) == {"build_entries_ascii" if n <= 3 else "build_entries"}
    calls.clear()
    monkeypatch.setattr(build._Job, "_ascii", lambda self, offsets: False)
    for mode in ("exact", "bloom"):
        _assert_reference_bytes(rows, n, ci=True, mode=mode)
    assert set(calls) == {"build_entries"}


@pytest.mark.parametrize("n", [1, 3, 4])
@pytest.mark.parametrize("mode", ["exact", "bloom"])
def test_containers_after_repetitive_ones_write_the_reference_bytes(n, mode):
    """After a container whose grams mostly repeat, the next one marks its grams with a branch
    that skips the stores of seen grams (``repeats``): new and seen grams, ASCII or not, are
    listed once all the same, and the choice goes back once the grams are new again."""
    repetitive = ["/cart?q=1"] * 200 + ["/cart?q=2"] * 100
    _assert_reference_bytes([repetitive, ["/cart?q=1", "new grams", "é中"] * 3, repetitive,
                             [f"{i:x}-{i * 7919 % 1000:03d}" for i in range(400)],
                             ["/cart?q=1"] * 50 + ["fresh"]], n, ci=True, mode=mode)


@pytest.mark.parametrize("n", [3, 4])
def test_general_path_batches_write_the_reference_bytes(n):
    """Enough non-ASCII grams to list them in several batches, and one value longer than the
    first batch buffer: the general path's dedup must still see every gram once."""
    rng = random.Random(n)
    many = ["".join(rng.choice("aäbcçdeé中😀") for _ in range(rng.randint(1, 30)))
            for _ in range(600)]
    long = "".join(rng.choice("xyzé") for _ in range(6000))
    _assert_reference_bytes([many, [long, "abc"], many[:50] + ["plain ascii"]], n, ci=True,
                            mode="exact")


@pytest.mark.parametrize("n", [2, 3, 5])
def test_growing_every_array_writes_the_reference_bytes(monkeypatch, n):
    """The kernel allocates nothing: with tiny starting arrays, a container with thousands of
    distinct non-ASCII grams makes it stop for a bigger table, key list, hash list and output,
    and resume from that container; the bytes are the reference's all the same."""
    from prune_engine.ngram import build

    monkeypatch.setattr(K, "TABLE_START", 4)  # the Python side sizes its first arrays from it
    rng = random.Random(n)
    many = ["".join(rng.choice("ab中文😀éΣ" + chr(0x4E00 + rng.randint(0, 3000))) for _ in range(20))
            for _ in range(400)]
    containers = [["x"], many, ["ascii only", None], many[:7]]
    values, offsets = flatten(containers)
    for mode in ("exact", "bloom"):
        index = build.build_index(values, offsets, gram_size=n, case_insensitive=True, mode=mode,
                                  fpp=0.2, exact_max_grams=8)
        for i, rows in enumerate(containers):
            assert index[i].as_py() == R.build_entry(rows, n, case_insensitive=True, fpp=0.2,
                                                     exact_max=8, mode=mode), (mode, i)


def test_threads_and_batches_do_not_change_the_bytes(monkeypatch):
    """Batches of a few rows on four threads, or one batch on one: the same entries."""
    from prune_engine.ngram import build

    rng = random.Random(11)
    containers = random_containers(rng, max_containers=40, max_rows=30)
    values, offsets = flatten(containers)
    one = build.build_index(values, offsets, case_insensitive=True, threads=1)
    monkeypatch.setattr(build, "THREAD_MIN_ROWS", 5)
    monkeypatch.setattr(build, "BATCH_ROWS", 7)
    assert build.build_index(values, offsets, case_insensitive=True, threads=4).equals(one)


@settings(max_examples=examples(40), deadline=None)
@given(rng=st.randoms(use_true_random=False), n=st.integers(1, 4))
def test_mostly_ascii_containers_write_the_reference_bytes(rng, n):
    """Long, mostly-ASCII values (what the bitmap path serves), sometimes one non-ASCII code
    point at a random place, in containers that mix both kinds."""
    def value():
        text = "".join(rng.choice("abcXYZ/%_.-019 ") for _ in range(rng.randint(0, 70)))
        if text and rng.random() < 0.3:
            k = rng.randint(0, len(text))
            text = text[:k] + rng.choice("éÉİ\u212a中😀") + text[k:]
        return text if rng.random() > 0.05 else None
    containers = [[value() for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 5))]
    _assert_reference_bytes(containers, n, ci=rng.random() < 0.5, mode=rng.choice(["exact", "bloom"]))


def _directory_section(index, folded):
    d = directory(index)
    s = 1 if folded else 0
    return d.gram_size, d.kind[s], d.count[s], d.position[s], d.data


@settings(max_examples=examples(60), deadline=None)
@given(rng=st.randoms(use_true_random=False), mode=st.sampled_from(["exact", "bloom"]),
       n=st.integers(2, 4))
def test_probe_kernel_equals_reference_probe(rng, mode, n):
    containers = random_containers(rng)
    values, offsets = flatten(containers)
    index = build_index(values, offsets, gram_size=n, case_insensitive=True, fpp=0.2, mode=mode)
    for folded in (False, True):
        pattern, escape = random_like(rng, containers)
        try:
            query = like_query(pattern, n, escape, folded)
        except ValueError:
            continue
        for q in (query, regex_query(random_regex(rng, containers), n)):
            got = probe_section(*_directory_section(index, folded), n, compile_query(q))
            expected = [R.may_match(index[i].as_py(), q, folded) for i in range(len(index))]
            assert got.tolist() == expected, f"query {q}"


@pytest.mark.parametrize("mode", ["exact", "bloom", "auto"])
def test_probe_of_many_containers_equals_reference(mode):
    """More containers than the gram-order sample; conjunctions (gram by gram over the
    containers left) and disjunctions (every gram, then the program) alike."""
    rng = random.Random(5)
    words = ["checkout", "payment", "search", "login", "refund", "timeout", "cart", "tea"]
    containers = [[f"/{rng.choice(words)}/{rng.choice(words)}?q={rng.randint(0, 99)}"
                   for _ in range(rng.randint(1, 30))] for _ in range(150)]
    values, offsets = flatten(containers)
    index = build_index(values, offsets, fpp=0.05, mode=mode, exact_max_grams=40)
    queries = [like_query("%checkout%", 3), like_query("/search/%tea%", 3),
               like_query("%login/refund%", 3), like_query("%zzz%", 3),
               regex_query("(cart|tea)/pay", 3), equals_query(["/cart/tea?q=1", "/x"], 3)]
    for q in queries:
        got = probe_section(*_directory_section(index, False), 3, compile_query(q))
        expected = [R.may_match(index[i].as_py(), q) for i in range(len(index))]
        assert got.tolist() == expected, f"query {q}"
        assert 0 < sum(expected) < len(expected) or q == like_query("%zzz%", 3), "a useful case"


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


def test_every_helper_compiles_once(tmp_path):
    """Compile time is most of a first build on a new machine: no helper may compile twice.
    A literal argument (``repeats = False`` rather than ``np.bool_(False)``) makes numba
    compile a second copy of every helper it reaches; this once added 1.6 s to the general
    build kernel's compile."""
    code = textwrap.dedent("""
        import collections
        from numba.core import event
        compiled = collections.Counter()

        class Count(event.Listener):
            def on_start(self, e):  # per function: both collectors have a body of their own
                d = e.data["dispatcher"]
                compiled[f"{d.py_func.__qualname__} {id(d):x}"] += 1

            def on_end(self, e):
                pass

        event.register("numba:compile", Count())
        from prune_engine.ngram import _kernels as K
        for kernel in (K.build_entries_ascii, K.build_entries, K.checksums, K.probe_entries):
            kernel.compiled()
        print(dict(compiled))
    """)
    # every kernel compiles here (none in a helper process: see ngram/_ahead.py)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PRUNE_ENGINE_COMPILE_AHEAD="0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    compiled = eval(done.stdout.strip().splitlines()[-1])  # a dict literal this test printed
    names = [key.split()[0] for key in compiled]
    assert {"build_entries", "build_entries_ascii", "checksums", "probe_entries",
            "_collect", "_collect_ascii"} <= set(names), "the kernels and both collectors"
    assert "_gram_order" not in names and "_xxh64" not in names, "typed into their one caller"
    twice = {name: n for name, n in compiled.items() if n > 1}
    assert not twice, f"compiled more than once: {twice}"
