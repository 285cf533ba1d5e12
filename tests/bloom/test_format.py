"""Unit tests of the Bloom filter pieces: xxHash64, plain encodings, fold / combine / shrink,
entries, headers, and reading filters from files (problems reported, never raised)."""

from __future__ import annotations

import random
import struct
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.bloom import format as fmt
from prune_engine.bloom.encoding import hashes, plain_bytes, xxh64_rows
from prune_engine.bloom.probe import may_contain
from prune_engine.bloom.read import read_filters
from prune_engine.errors import IndexCorruptError
from prune_engine.ngram.format import SALTS, xxh64
from tests.bloom.writer import needs_bloom_writer
from tests.stats.thrift_codec import uvarint, zigzag


# ------------------------------------------------------------------------------ helpers


def sbbf_insert(words: np.ndarray, h: int) -> None:
    """Insert hash ``h`` into a split-block filter (u32 words), as parquet-format says."""
    nblocks = len(words) // 8
    block = ((h >> 32) * nblocks) >> 32
    lo = h & 0xFFFFFFFF
    for i in range(8):
        words[block * 8 + i] |= np.uint32(1 << (((lo * SALTS[i]) & 0xFFFFFFFF) >> 27))


def filter_of(values: list[bytes], blocks: int) -> np.ndarray:
    words = np.zeros(8 * blocks, np.uint32)
    for v in values:
        sbbf_insert(words, xxh64(v))
    return words


def probe(entry: bytes, values, stats_type=pa.int64(), **kw) -> bool:
    return bool(may_contain(pa.array([entry], pa.binary()), values, stats_type, **kw)[0])


# ------------------------------------------------------------------------------ xxHash64


def test_hashes_equal_reference_xxh64_for_every_length():
    rng = random.Random(7)
    values = [bytes(rng.randrange(256) for _ in range(n)) for n in range(81) for _ in range(3)]
    values += [b"", b"abc", b"\xff" * 64, b"\0" * 33]
    got = hashes(values)
    assert [int(h) for h in got] == [xxh64(v) for v in values]


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 80])
def test_xxh64_rows_equals_reference(n):
    rng = np.random.default_rng(n)
    rows = rng.integers(0, 256, size=(17, n), dtype=np.uint8)
    got = xxh64_rows(rows)
    assert got.dtype == np.uint64
    assert [int(h) for h in got] == [xxh64(r.tobytes()) for r in rows]


def test_hashes_empty_list():
    assert len(hashes([])) == 0


# ------------------------------------------------------------------------------ plain_bytes


@pytest.mark.parametrize("tok, lo, hi, code", [
    ("int32", -(2**31), 2**31 - 1, "<i"), ("int64", -(2**63), 2**63 - 1, "<q"),
    ("uint32", 0, 2**32 - 1, "<I"), ("uint64", 0, 2**64 - 1, "<Q")])
def test_plain_bytes_integer_limits(tok, lo, hi, code):
    t = pa.int64() if tok != "uint64" else pa.uint64()
    assert plain_bytes(lo, t, tok) == [struct.pack(code, lo)]
    assert plain_bytes(hi, t, tok) == [struct.pack(code, hi)]
    assert plain_bytes(0, t, tok) == [struct.pack(code, 0)]
    assert plain_bytes(lo - 1, t, tok) == []
    assert plain_bytes(hi + 1, t, tok) == []


def test_plain_bytes_integer_type_mismatch_is_unknown():
    assert plain_bytes(5, pa.string(), "int64") is None
    assert plain_bytes(5.0, pa.int64(), "int64") is None
    assert plain_bytes(True, pa.int64(), "int64") is None
    assert plain_bytes("5", pa.int64(), "int32") is None


def test_plain_bytes_date32():
    assert plain_bytes(18000, pa.date32(), "date32") == [struct.pack("<i", 18000)]
    assert plain_bytes(-1, pa.date32(), "date32") == [struct.pack("<i", -1)]
    # a date64 (milliseconds) statistic: exact days only
    day = 86_400_000
    assert plain_bytes(3 * day, pa.date64(), "date32") == [struct.pack("<i", 3)]
    assert plain_bytes(3 * day + 1, pa.date64(), "date32") == []
    assert plain_bytes(2**31, pa.date32(), "date32") == []
    assert plain_bytes("x", pa.date32(), "date32") is None


@pytest.mark.parametrize("unit, have, tok, want", [
    ("us", 1_500_000, "ts:ms", 1_500), ("us", 1_500, "ts:ms", None),
    ("ms", 7, "ts:us", 7_000), ("ms", 7, "ts:ns", 7_000_000), ("ns", 2_000, "ts:us", 2),
    ("ns", 2_001, "ts:us", None), ("s", 3, "ts:ms", 3_000), ("us", -1_000, "ts:ms", -1),
    ("us", -1_001, "ts:ms", None), ("us", 12345, "ts:us", 12345)])
def test_plain_bytes_timestamp_rescaling(unit, have, tok, want):
    for tz in (None, "UTC", "America/Los_Angeles"):
        got = plain_bytes(have, pa.timestamp(unit, tz), tok)
        assert got == ([] if want is None else [struct.pack("<q", want)])


def test_plain_bytes_timestamp_out_of_int64_range():
    # a second-resolution value whose nanoseconds overflow int64
    assert plain_bytes(2**62, pa.timestamp("s"), "ts:ns") == []
    assert plain_bytes(5, pa.int64(), "ts:ms") is None


@pytest.mark.parametrize("stats_type, value, tok, want", [
    (pa.decimal128(5, 2), 12345, "dec32:2", [struct.pack("<i", 12345)]),
    (pa.decimal128(5, 2), 12345, "dec32:3", [struct.pack("<i", 123450)]),
    (pa.decimal128(5, 2), 12340, "dec32:1", [struct.pack("<i", 1234)]),
    (pa.decimal128(5, 2), 12345, "dec32:1", []),           # 123.45 at scale 1: inexact
    (pa.decimal128(15, 3), -5, "dec64:3", [struct.pack("<q", -5)]),
    (pa.decimal128(15, 3), 10**12, "dec32:3", []),         # past int32
    (pa.decimal128(15, 3), 10**15, "dec64:6", [struct.pack("<q", 10**18)]),
    (pa.decimal128(15, 3), 10**15, "dec64:7", []),         # past int64
    (pa.decimal128(30, 4), -7, "decfixed:13:4", [(-7).to_bytes(13, "big", signed=True)]),
    (pa.decimal128(30, 4), 7, "decfixed:13:6", [(700).to_bytes(13, "big", signed=True)]),
    (pa.decimal128(30, 4), 70, "decfixed:13:3", [(7).to_bytes(13, "big", signed=True)]),
    (pa.decimal128(30, 4), 71, "decfixed:13:3", []),
    (pa.decimal128(30, 4), 2**40, "decfixed:4:4", []),    # does not fit 4 bytes
    (pa.decimal128(30, 4), 5, "decfixed:16:4", [(5).to_bytes(16, "big", signed=True)]),
])
def test_plain_bytes_decimals(stats_type, value, tok, want):
    assert plain_bytes(value, stats_type, tok) == want


def test_plain_bytes_decimal_mismatch_is_unknown():
    assert plain_bytes(5, pa.int64(), "dec32:2") is None
    assert plain_bytes(5.0, pa.decimal128(5, 2), "dec32:2") is None


def test_plain_bytes_floats():
    assert plain_bytes(1.5, pa.float64(), "double") == [struct.pack("<d", 1.5)]
    assert plain_bytes(1.5, pa.float64(), "float") == [struct.pack("<f", 1.5)]
    assert plain_bytes(3, pa.float32(), "double") == [struct.pack("<d", 3.0)]
    for tok, code in (("double", "<d"), ("float", "<f")):
        for zero in (0.0, -0.0, 0):
            assert sorted(plain_bytes(zero, pa.float64(), tok)) == sorted(
                [struct.pack(code, 0.0), struct.pack(code, -0.0)])
        assert plain_bytes(float("nan"), pa.float64(), tok) is None
        assert plain_bytes(float("inf"), pa.float64(), tok) == [struct.pack(code, float("inf"))]
        assert plain_bytes(float("-inf"), pa.float64(), tok) == [struct.pack(code, float("-inf"))]
    # no float32 equals 0.1: unknown (None) as documented, or the bytes of float32(0.1),
    # which is also sound (no row can equal 0.1; rows equal to float32(0.1) are kept).
    # NumPy 2 (NEP 50) makes ``np.float32(x) != x`` compare in float32, hence the latter.
    assert plain_bytes(0.1, pa.float64(), "float") in (None, [struct.pack("<f", 0.1)])
    assert plain_bytes(2.0**-149, pa.float64(), "float") == [struct.pack("<f", 2.0**-149)]
    assert plain_bytes(0.1, pa.float64(), "double") == [struct.pack("<d", 0.1)]
    assert plain_bytes(1.0, pa.int64(), "double") is None
    assert plain_bytes("1", pa.float64(), "double") is None


@pytest.mark.parametrize("x", [1e300, -1e300, 6.8e38])
def test_plain_bytes_float_beyond_float32_range(x):
    assert plain_bytes(x, pa.float64(), "float") in (None, [])


def test_plain_bytes_bytes_and_fixed():
    assert plain_bytes("héllo", pa.string(), "bytes") == ["héllo".encode()]
    assert plain_bytes("", pa.large_string(), "bytes") == [b""]
    assert plain_bytes(b"\0\xff", pa.binary(), "bytes") == [b"\0\xff"]
    assert plain_bytes(b"abcd", pa.binary(4), "fixed:4") == [b"abcd"]
    assert plain_bytes(b"abc", pa.binary(4), "fixed:4") == []
    assert plain_bytes(b"abcde", pa.binary(), "fixed:4") == []
    assert plain_bytes("abcd", pa.string(), "fixed:4") == [b"abcd"]
    # type mismatch: a string against binary statistics, bytes against string statistics
    assert plain_bytes("abc", pa.binary(), "bytes") is None
    assert plain_bytes(b"abc", pa.string(), "bytes") is None
    assert plain_bytes(5, pa.string(), "bytes") is None


def test_plain_bytes_unknown_token():
    assert plain_bytes(5, pa.int64(), "int96") is None
    assert plain_bytes(5, pa.int64(), "") is None


# ------------------------------------------------------------------------------ folding


@pytest.mark.parametrize("seed", range(6))
def test_fold_combine_shrink_never_lose_a_value(seed):
    rng = random.Random(seed)
    blocks = 1 << rng.randrange(0, 8)
    groups = [[struct.pack("<q", rng.randrange(-2**63, 2**63)) for _ in range(rng.randrange(0, 60))]
              for _ in range(rng.randrange(1, 6))]
    filters = [filter_of(g, blocks if rng.random() < 0.5 else 1 << rng.randrange(0, 8))
               for g in groups]
    every = [v for g in groups for v in g]
    values = [struct.unpack("<q", v)[0] for v in every]

    def holds_all(fs):
        entry = fmt.encode_entry("int64", fs)
        return all(probe(entry, [v]) for v in values)

    for f, g in zip(filters, groups):  # the helper's filter answers as the probe reads it
        e = fmt.encode_entry("int64", [f])
        assert all(probe(e, [struct.unpack("<q", v)[0]]) for v in g)
        have = len(f) // 8
        b = have
        while b >= 1:
            folded = fmt.fold(f, b)
            assert len(folded) == 8 * b
            ee = fmt.encode_entry("int64", [folded])
            assert all(probe(ee, [struct.unpack("<q", v)[0]]) for v in g)
            b //= 2
        for fill in (0.05, 0.3, 0.5, 0.9):
            s = fmt.shrink(f, fill)
            es = fmt.encode_entry("int64", [s])
            assert all(probe(es, [struct.unpack("<q", v)[0]]) for v in g)
    for fill in (0.01, 0.5, 1.0):
        combined = fmt.combine(filters, fill)
        assert holds_all(combined)
        for c in combined:
            assert fmt.fill(c) <= fill or len(c) == 8 or any(len(c) == len(f) for f in filters)
    assert holds_all(filters)


def test_fold_rejects_bad_sizes():
    with pytest.raises(ValueError):
        fmt.fold(np.zeros(24, np.uint32), 1)   # 3 blocks
    with pytest.raises(ValueError):
        fmt.fold(np.zeros(16, np.uint32), 4)   # grow
    with pytest.raises(ValueError):
        fmt.fold(np.zeros(16, np.uint32), 3)


def test_fold_keeps_bits_of_paired_blocks():
    words = np.zeros(32, np.uint32)
    words[8 * 3 + 2] = 4   # block 3 of 4 -> block 1 of 2
    assert fmt.fold(words, 2).tolist()[8 + 2] == 4
    assert fmt.fold(words, 1).tolist()[2] == 4


def test_shrink_folds_sparse_filter_and_keeps_dense_one():
    sparse = filter_of([struct.pack("<q", i) for i in range(3)], 1024)
    assert len(fmt.shrink(sparse)) < len(sparse)
    dense = np.full(8 * 4, 0xFFFFFFFF, np.uint32)
    assert len(fmt.shrink(dense)) == len(dense)


# ------------------------------------------------------------------------------ headers


def _header(num_bytes: int, alg=(1,), hsh=(1,), comp=(1,)) -> bytes:
    """A Thrift compact BloomFilterHeader: i32 numBytes, then three unions of empty structs."""
    def union(fids):
        out, last = b"", 0
        for f in fids:
            out += bytes([((f - last) << 4) | 12]) + b"\0"
            last = f
        return out + b"\0"

    return (bytes([0x15]) + zigzag(num_bytes) + bytes([0x1C]) + union(alg)
            + bytes([0x1C]) + union(hsh) + bytes([0x1C]) + union(comp) + b"\0")


def test_parse_header_accepts_a_good_header():
    raw = _header(256)
    assert fmt.parse_header(raw + b"junk") == (256, len(raw))


@pytest.mark.parametrize("raw", [
    b"", b"\x15", _header(0), _header(-32), _header(33), _header(fmt.MAX_BITSET_BYTES + 32),
    _header(256, alg=(2,)), _header(256, hsh=(2,)), _header(256, comp=(2,)),
    _header(256, alg=()), _header(256)[:-3], bytes([0x18, 0x01, 0x00]),  # unexpected type
    bytes([0x15]) + b"\xff" * 12,  # endless varint
    bytes([0x1C]) * 8,  # nested too deep / truncated
])
def test_parse_header_rejects_bad_headers(raw):
    with pytest.raises(fmt.HeaderError):
        fmt.parse_header(raw)


@needs_bloom_writer
def test_parse_header_real_writer():
    import io
    buf = io.BytesIO()
    pq.write_table(pa.table({"k": [1, 2]}), buf, bloom_filter_options={"k": {"ndv": 10}})
    data = buf.getvalue()
    md = pq.ParquetFile(pa.BufferReader(data)).metadata.row_group(0).column(0)
    size, header = fmt.parse_header(data[md.bloom_filter_offset:])
    assert size % 32 == 0 and size > 0
    if md.bloom_filter_length:
        assert header + size == md.bloom_filter_length


# ------------------------------------------------------------------------------ entries


def _good_entry() -> bytes:
    return fmt.encode_entry("int64", [filter_of([struct.pack("<q", 42)], 2)])


def test_entry_round_trip():
    f1, f2 = filter_of([b"a"], 1), filter_of([b"b"], 4)
    for tok in ("int64", "decfixed:16:4", "ts:ns", "bytes"):
        entry = fmt.encode_entry(tok, [f1, f2])
        assert len(entry) % 8 == 0
        got_tok, got = fmt.decode_entry(entry)
        assert got_tok == tok and [g.tolist() for g in got] == [f1.tolist(), f2.tolist()]
        assert fmt.entry_layout(entry)[2] == (1, 4)


def test_encode_entry_rejects_bad_filters():
    with pytest.raises(ValueError):
        fmt.encode_entry("int64", [np.zeros(24, np.uint32)])
    with pytest.raises(ValueError):
        fmt.encode_entry("int64", [np.zeros(7, np.uint32)])
    with pytest.raises(ValueError):
        fmt.encode_entry("x" * 300, [np.zeros(8, np.uint32)])


def _bad_entries() -> dict[str, bytes]:
    good = _good_entry()
    return {
        "truncated": good[:-4],
        "short": good[:5],
        "empty": b"",
        "bad magic": b"XXXX" + good[4:],
        "bad version": good[:4] + bytes([fmt.VERSION + 1]) + good[5:],
        "too long": good + b"\0" * 32,
        "zero filters": good[:16] + b"\0" * (len(good) - 16),
        "non power of two": good[:20] + struct.pack("<I", 3) + good[24:],
    }


@pytest.mark.parametrize("what", list(_bad_entries()))
def test_bad_entries_raise(what):
    entry = _bad_entries()[what]
    with pytest.raises(IndexCorruptError):
        fmt.decode_entry(entry)
    with pytest.raises(IndexCorruptError):
        may_contain(pa.array([_good_entry(), entry], pa.binary()), [42], pa.int64())
    with pytest.raises(IndexCorruptError):
        may_contain(pa.array([entry, _good_entry()], pa.binary()), [42], pa.int64())


@pytest.mark.parametrize("what", list(_bad_entries()))
def test_bad_entries_keep_and_warn(what):
    entry = _bad_entries()[what]
    arr = pa.array([_good_entry(), entry, None, _good_entry()], pa.binary())
    with pytest.warns(UserWarning, match="corrupt"):
        got = may_contain(arr, [7], pa.int64(), on_invalid="keep")
    assert got.tolist()[1:3] == [True, True]
    assert got[0] == got[3]
    with pytest.warns(UserWarning):
        assert may_contain(arr, [42], pa.int64(), on_invalid="keep").all()


def test_may_contain_sliced_and_chunked_arrays():
    entries = [fmt.encode_entry("int64", [filter_of([struct.pack("<q", i)], 1)]) for i in range(6)]
    arr = pa.array([None] + entries, pa.binary())
    assert may_contain(arr.slice(1), [3], pa.int64()).tolist()[3]
    chunked = pa.chunked_array([arr.slice(0, 3), arr.slice(3)])
    got = may_contain(chunked, [4], pa.int64())
    assert got[0] and got[5]
    assert may_contain(pa.array([None, None], pa.binary()), [1], pa.int64()).all()
    assert may_contain(pa.array([], pa.binary()), [1], pa.int64()).tolist() == []
    with pytest.raises(ValueError):
        may_contain(arr, [1], pa.int64(), on_invalid="ignore")


def test_may_contain_mixed_tokens_and_unknown_values():
    f32 = fmt.encode_entry("int32", [filter_of([struct.pack("<i", 5)], 1)])
    f64 = fmt.encode_entry("int64", [filter_of([struct.pack("<q", 5)], 1)])
    arr = pa.array([f32, f64], pa.binary())
    assert may_contain(arr, [5], pa.int64()).all()
    assert not may_contain(arr, [2**40], pa.int64())[0]  # out of int32 range: absent
    assert may_contain(arr, ["x"], pa.int64()).all()    # unknown encoding: keep
    assert may_contain(arr, [None, 5], pa.int64()).all()
    assert not may_contain(arr, [None], pa.int64()).any()


# ------------------------------------------------------------------------------ read_filters


def _file_with_filter(tmp_path, n=50):
    p = str(tmp_path / "f.parquet")
    pq.write_table(pa.table({"k": pa.array(range(n), pa.int64())}), p, row_group_size=n,
                   bloom_filter_options={"k": {"ndv": 100, "fpp": 0.01}})
    md = pq.ParquetFile(p).metadata.row_group(0).column(0)
    assert md.bloom_filter_offset is not None and md.bloom_filter_offset > 0
    return p, md.bloom_filter_offset, md.bloom_filter_length


def _reader(data: bytes):
    return lambda n, offset: data[offset:offset + n]


@needs_bloom_writer
def test_read_filters_good_and_unknown_length(tmp_path):
    p, off, length = _file_with_filter(tmp_path)
    data = open(p, "rb").read()
    for n in (length or -1, -1):
        words, problems, impossible = read_filters(_reader(data), len(data),
                                                   [(off, n), (-1, -1)])
        assert problems == [] and impossible == {}
        assert words[1] is None and len(words[0]) % 8 == 0


@needs_bloom_writer
def test_read_filters_reports_problems(tmp_path):
    p, off, length = _file_with_filter(tmp_path)
    data = open(p, "rb").read()
    words, problems, impossible = read_filters(_reader(data), len(data), [(len(data) + 10, -1)])
    assert words == [None] and "past the end" in impossible[0], "no file holds it: impossible"
    bad = data[:off] + b"\x15\x01" + data[off + 2:]  # numBytes = -1
    words, problems, impossible = read_filters(_reader(bad), len(bad), [(off, length or -1)])
    assert words == [None] and "not usable" in problems[0] and not impossible
    if length:
        words, problems, impossible = read_filters(_reader(data), len(data), [(off, length + 8)])
        assert words == [None] and "footer says" in impossible[0], "footer vs header"
    # a header claiming more bytes than the file has
    big = data[:off] + _header(1 << 20) + data[off + len(_header(1 << 20)):]
    words, problems, impossible = read_filters(_reader(big), len(big), [(off, -1)])
    assert words == [None] and "past the end" in impossible[0]


PREDICATES = ["k = 5", "k = 1000", "k IN (1, 2000)", "k > 3", "k = -1"]


def _corrupt(p: str, off: int, patch: bytes) -> None:
    with open(p, "r+b") as f:
        f.seek(off)
        f.write(patch)


@needs_bloom_writer
@pytest.mark.parametrize("patch", [b"\x15\x01", b"\x15\x80\x04\x1c\x1c", b"\xff\xff\xff\xff",
                                   b"\x00"])
def test_collect_stats_warns_on_corrupt_filter_and_keeps(tmp_path, patch):
    p, off, _ = _file_with_filter(tmp_path)
    _corrupt(p, off, patch)
    for granularity in ("row_group", "file"):
        with pytest.warns(UserWarning, match="Bloom filter"):
            stats = pe.collect_stats(p, granularity=granularity, bloom=True, progress=False)
        # a header of another kind is left out; one the footer contradicts is impossible
        said = stats.metadata["bloom"]["problems"] + stats.metadata[
            "untrusted_statistics"].get(p, [])
        assert len(said) == 1 and (p in said[0] or "Bloom filter of k" in said[0])
        for pred in PREDICATES:
            # k = 1000 is outside [0, 49]: min/max prunes it, not the Bloom filter
            if pred in ("k = 1000", "k = -1"):
                continue
            assert pe.prune(stats, pred).to_pylist() == [True], pred


@needs_bloom_writer
def test_collect_stats_warns_on_offset_past_eof(tmp_path):
    p, off, _ = _file_with_filter(tmp_path)
    data = bytearray(open(p, "rb").read())
    assert len(data) < 8000
    # the footer's i64 bloom_filter_offset (zigzag varint after a field header of type 6)
    flen = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - flen
    old = uvarint(off << 1)
    new = uvarint(8000 << 1)
    assert len(old) == len(new) == 2
    hits = [i for i in range(start + 1, len(data) - 8)
            if data[i:i + 2] == old and data[i - 1] & 0x0F == 6]
    assert len(hits) == 1
    data[hits[0]:hits[0] + 2] = new
    open(p, "wb").write(bytes(data))
    assert pq.ParquetFile(p).metadata.row_group(0).column(0).bloom_filter_offset == 8000
    for granularity in ("row_group", "file"):
        with pytest.warns(UserWarning, match="Bloom filter"):
            stats = pe.collect_stats(p, granularity=granularity, bloom=True, progress=False)
        assert "past the end" in stats.metadata["untrusted_statistics"][p][0]
        for pred in ("k = 5", "k = 7", "k IN (1, 3)", "k >= 0"):
            assert pe.prune(stats, pred).to_pylist() == [True], pred


@needs_bloom_writer
def test_collect_stats_good_filter_has_no_problems(tmp_path):
    p = str(tmp_path / "even.parquet")
    pq.write_table(pa.table({"k": pa.array(range(0, 200, 2), pa.int64())}), p,
                   bloom_filter_options={"k": {"ndv": 100, "fpp": 0.01}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats = pe.collect_stats(p, bloom=True, progress=False)
    assert stats.metadata["bloom"]["problems"] == []
    assert stats.metadata["bloom"]["bytes_read"] > 0
    assert all(pe.prune(stats, f"k = {v}").to_pylist() == [True] for v in range(0, 200, 2))
    # odd values lie inside [0, 198]: only the Bloom filter can prune them
    pruned = sum(not pe.prune(stats, f"k = {v}").to_pylist()[0] for v in range(1, 199, 2))
    assert pruned >= 90
    reasons = pe.explain(stats, "k = 3").column("reason").to_pylist()
    assert reasons == ["k = 3 (Bloom filter of k)"]
