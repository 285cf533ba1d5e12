"""String and binary bounds compared through words (``evaluate/strings.py``) against plain
Python bytes comparisons, on the data that breaks shortcuts: long shared prefixes (past the
7-byte words), NUL bytes, non-ASCII, empty strings, null bounds, every binary-like type, IN
lists with repeats and with members outside every range."""

import operator
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.evaluate import membership, strings
from prune_engine.evaluate.domains import ArrowDomain, as_bytes
from tests.budget import examples

OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}
TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.binary(10)]
#: prefixes shared by many values: none, a URL, one across two words, NUL bytes, non-ASCII
PREFIXES = ["", "https://shop.example/", "aaaaaaaaaaaaaa", "\0\0\0\0\0\0\0\0\0", "éééé"]
#: few symbols, so that values tie on whole 7-byte words and differ late, by NUL, by length
SUFFIX = st.text(alphabet=["a", "b", "\0", "é", "😀", "\x7f"], max_size=17)


def texts(prefix: str):
    return st.one_of(st.just(prefix), SUFFIX.map(lambda s: prefix + s), SUFFIX)


def as_type(values: list, typ: pa.DataType) -> pa.Array:
    """``values`` (str or None) as an array of ``typ``; fixed-size binary pads with NUL."""
    if pa.types.is_fixed_size_binary(typ):
        w = typ.byte_width
        return pa.array([None if v is None else v.encode()[:w].ljust(w, b"\0") for v in values], typ)
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return pa.array([None if v is None else v.encode() for v in values], typ)
    return pa.array(values, typ)


@st.composite
def columns(draw, count: int = 2):
    """A type and ``count`` aligned columns of values (str or None) around one prefix."""
    typ = draw(st.sampled_from(TYPES))
    prefix = draw(st.sampled_from(PREFIXES))
    n = draw(st.integers(1, 30))
    cols = [draw(st.lists(st.one_of(texts(prefix), st.none()), min_size=n, max_size=n))
            for _ in range(count)]
    return typ, prefix, cols


def raw(arr: pa.Array) -> list:
    return [None if v is None else as_bytes(v) for v in arr.to_pylist()]


@settings(max_examples=examples(300), deadline=None)
@given(columns(), st.data())
def test_comparisons_match_bytes(case, data):
    typ, prefix, (left, right) = case
    lit = data.draw(texts(prefix))
    a, b = as_type(left, typ), as_type(right, typ)
    d = ArrowDomain(typ)
    (ka, _), (kb, _) = d.view(a), d.view(b)
    va, vb, v = raw(a), raw(b), as_type([lit], typ)[0].as_py()
    for op, fn in OPS.items():
        got = d.compare(ka, op, d.scalar(v))
        for i, x in enumerate(va):
            if x is not None:
                assert got[i] == fn(x, as_bytes(v)), (op, x, v)
        got = d.compare_arrays(ka, op, kb)
        for i, (x, y) in enumerate(zip(va, vb)):
            if x is not None and y is not None:
                assert got[i] == fn(x, y), (op, x, y)


#: the default block size, and blocks so small that a few containers span several
BLOCKS = pytest.mark.parametrize("block", [membership.BLOCK, 3], ids=["block", "tiny-blocks"])


@BLOCKS
@settings(max_examples=examples(300), deadline=None)
@given(case=columns(), data=st.data())
def test_sets_match_bytes(block, case, data):
    """IN: some member in [lo, hi], an unknown bound reading as the set's own end; NOT IN's
    lookup: is the value a member. Members repeat, and some lie outside every range."""
    typ, prefix, (low, high) = case
    size = data.draw(st.sampled_from([1, 3, membership.SCAN_MAX + 5]))
    members = data.draw(st.lists(texts(prefix), min_size=1, max_size=size))
    lo, hi = as_type(low, typ), as_type(high, typ)
    d = ArrowDomain(typ)
    (klo, lov), (khi, hiv) = d.view(lo), d.view(hi)
    items = d.sorted_set(raw(as_type(members, typ)))
    with mock.patch.object(membership, "BLOCK", block):
        got = d.any_in_range(klo, khi, items, lov, hiv)
        found = d.isin(klo, items)
    assert items.values == sorted(set(raw(as_type(members, typ))))
    for i, (a, b) in enumerate(zip(raw(lo), raw(hi))):
        expected = any((a is None or a <= m) and (b is None or m <= b) for m in items.values)
        assert got[i] == expected, (a, b, items.values)
    for i, a in enumerate(raw(lo)):
        if a is not None:
            assert found[i] == (a in items.values), (a, items.values)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.binary(max_size=20), min_size=2, max_size=20))
def test_words_order_as_bytes(values):
    """Word sequences sort as the bytes do, and equal words that end mean equal strings."""
    assert sorted(values, key=strings.encode) == sorted(values)
    ks = strings.KeyedStrings(pa.array(values, pa.binary()))
    for level in range(3):
        expected = [(strings.encode(v, len(ks.prefix)) + [0] * 3)[level] for v in values]
        assert ks.words(level, len(ks.prefix)).tolist() == expected


def test_prefix_is_shared_by_every_value_and_ignores_nulls():
    ks = strings.KeyedStrings(pa.array(["https://a.example/1", None, "https://a.example/22"]))
    assert ks.prefix == b"https://a.example/"
    assert strings.KeyedStrings(pa.array([None, None], pa.string())).prefix == b""
    assert strings.KeyedStrings(pa.array(["same", "same"])).prefix == b"same"


def test_literal_outside_the_shared_prefix_is_below_or_above_all():
    ks = strings.KeyedStrings(pa.array(["https://b/1", "https://b/9"]))
    assert strings.compare_literal(ks, ">", b"https://a/zzz").tolist() == [True, True]
    assert strings.compare_literal(ks, "<", b"https://c").tolist() == [True, True]
    assert strings.compare_literal(ks, ">", b"https:").tolist() == [True, True]


def test_columns_with_different_prefixes():
    a = strings.KeyedStrings(pa.array(["https://a/1", "https://a/2"]))
    b = strings.KeyedStrings(pa.array(["https://b/1", "https://a/2x"]))
    c = strings.KeyedStrings(pa.array(["https://a/", "https://a/"]))
    assert strings.compare_columns(a, "<", b).tolist() == [True, True]
    assert strings.compare_columns(a, ">", c).tolist() == [True, True]
    members = strings.Members([b"https://a/3", b"https://a/zz"])
    assert strings.any_in_range(a, b, members, None, None).tolist() == [True, False]


def test_sliced_arrays_and_the_end_of_the_buffer():
    """Words of a slice read its own values; a value ending at the buffer's end reads no
    byte past it."""
    arr = pa.array(["xxxxxxxxxxxxxxxxxx", "ab", "abcdefghij", "é"])[1:]
    ks = strings.KeyedStrings(arr)
    assert ks.prefix == b""
    assert ks.words(0, 0).tolist() == [strings.encode(v.encode())[0] for v in arr.to_pylist()]
    assert strings.compare_literal(ks, "=", "é".encode()).tolist() == [False, False, True]


def test_column_signs_are_kept_per_other_column():
    """The second comparison of a pair reads the kept signs; another column gets its own."""
    a = strings.KeyedStrings(pa.array(["https://a/1234567890x", "b", "https://a/1234567890"]))
    b = strings.KeyedStrings(pa.array(["https://a/1234567890y", "b", "https://a/1234567890"]))
    c = strings.KeyedStrings(pa.array(["https://a/1234567890", "a", "https://a/1234567890z"]))
    for _ in range(2):
        assert strings.compare_columns(a, "<", b).tolist() == [True, False, False]
        assert strings.compare_columns(a, "=", b).tolist() == [False, True, True]
        assert strings.compare_columns(a, ">", c).tolist() == [True, True, False]
    assert len(a._signs) == 2


@pytest.mark.parametrize("cached", [False, True])
def test_a_slice_compares_as_the_whole_column_does(cached):
    """A window of a column (classify's windows) answers as the same rows of the whole:
    long shared prefixes, non-ASCII bytes, nulls, empty strings, words cached before or not."""
    import random

    rng = random.Random(5)
    base = "https://example.com/каталог/"
    values = [None if i % 17 == 0 else "" if i % 23 == 0 else
              base + "".join(rng.choice("aéz09~") for _ in range(rng.randrange(0, 20)))
              for i in range(500)]
    column = strings.KeyedStrings(pa.array(values))
    literals = [base.encode(), (base + "é").encode(), (base + "z0").encode(), b"", b"\xff"]
    if cached:
        for lit in literals:
            strings.compare_literal(column, "<", lit)
    for start, stop in [(0, 500), (17, 18), (100, 433), (499, 500)]:
        part = column.slice(start, stop)
        for lit in literals:
            for op in ("<", "<=", "=", ">=", ">", "!="):
                assert np.array_equal(strings.compare_literal(part, op, lit),
                                      strings.compare_literal(column, op, lit)[start:stop]), \
                    (start, stop, op, lit)
