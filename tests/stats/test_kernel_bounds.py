"""Memory safety of the footer kernels (:mod:`prune_engine.stats._thrift`) and of the Bloom
probe kernel (:mod:`prune_engine.bloom._kernels`): numba checks no bounds, so every size,
count, length and offset a file gives is checked before it moves a position or indexes an
array. Hostile values (negative, +-2**40, 2**63, 2**64 - 1 as lengths, list and map sizes,
field ids; offsets past the buffers) go to the compiled kernel and to its Python twin, which
must agree: a clean refusal (``ValueError``) or the same, in-bounds answer. Also the Python
readers of Bloom filter headers, their places, and dictionary page headers."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from prune_engine.bloom import _kernels, format as bloom_format
from prune_engine.bloom.read import read_filters
from prune_engine.stats import _thrift, dictionary, parquet
from tests.budget import examples
from tests.stats import thrift_codec as tc

HOSTILE = [-1, -2, -(2**31), -(2**40), 2**31 - 1, 2**31, 2**40, -(2**63), 2**63 - 1, 2**64 - 1,
           2**63]


@pytest.fixture(scope="module")
def twins():
    return parquet.FOOTER_KERNELS._load_twins()


def _footer() -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": [1, 2, None], "s": ["a", "bb", None],
                             "l": [[1], [], None]}), buf, row_group_size=2)
    return tc.footer_of(buf.getvalue())


FOOTER = _footer()


def _both(twins, footer: bytes):
    """The compiled kernel's and the twin's answer (arrays, or "refused") for footer bytes."""
    buf = np.frombuffer(footer + b"\0", np.uint8).copy()
    out = []
    for kernels in (_thrift, twins):
        try:
            info, chunks, rows = kernels.decode_footer(buf)
        except (ValueError, IndexError, OverflowError) as e:
            out.append(("refused", type(e).__name__))
            continue
        out.append((info.tolist(), chunks.tolist(), rows.tolist()))
        n = len(footer)
        for slot in (_thrift.C_MIN_OFF, _thrift.C_MAX_OFF, _thrift.C_OLD_MIN_OFF,
                     _thrift.C_OLD_MAX_OFF):  # every place it gives lies inside the footer
            sizes = chunks[:, slot + 1]
            assert (chunks[sizes >= 0, slot] >= 0).all()
            assert (chunks[sizes >= 0, slot] + sizes[sizes >= 0] <= n).all()
    assert out[0][0] == "refused" and out[1][0] == "refused" or out[0] == out[1], out
    return out[0]


def _places(kind: str) -> list[int]:
    """Byte positions in FOOTER where a value of ``kind`` starts (its varint)."""
    tree = tc.decode(FOOTER)
    found = []

    def walk(fields):
        for f in fields:
            if kind == "binary" and f.type == tc.BINARY:
                found.append(f.start)
            elif kind == "list" and f.type == tc.LIST:
                found.append(f.start)
            if isinstance(f.value, list):
                walk(f.value)
            elif isinstance(f.value, tc.Seq) and f.value.elem == tc.STRUCT:
                for item in f.value.items:
                    walk(item)
    walk(tree)
    return found


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_binary_lengths_are_refused(twins, value):
    """A binary length (the schema's names, statistics, key-value metadata) of a hostile
    value: the length runs past the footer, so the footer is refused."""
    for at in _places("binary"):
        old = tc.Reader(FOOTER)
        old.pos = at
        old.uvarint()
        hostile = FOOTER[:at] + tc.uvarint(value) + FOOTER[old.pos:]
        assert _both(twins, hostile)[0] == "refused"


@pytest.mark.parametrize("value", HOSTILE + [14, 15, 16, 1000])
def test_hostile_list_sizes_stay_in_bounds(twins, value):
    """A list's size in its long form (header nibble 15, then a varint) of a hostile value,
    and short forms: refused, or decoded in bounds alike by kernel and twin."""
    for at in _places("list"):
        elem = FOOTER[at] & 0x0F
        old = tc.Reader(FOOTER)
        old.pos = at + 1
        if FOOTER[at] >> 4 == 15:
            old.uvarint()
        head = bytes([0xF0 | elem]) + tc.uvarint(value) if value >= 15 or value < 0 \
            else bytes([value << 4 | elem])
        _both(twins, FOOTER[:at] + head + FOOTER[old.pos:])


@pytest.mark.parametrize("value", HOSTILE + [0, 1, 4, 16])
def test_hostile_field_ids_and_map_sizes(twins, value):
    """Fields in their long form (delta 0, then a zigzag id) of hostile ids, with values of
    every type; maps of hostile sizes; nesting deeper than the kernel's stack."""
    body = FOOTER[:-1]  # FileMetaData without its stop
    for typ, payload in ((tc.I64, tc.zigzag(7)), (tc.BINARY, tc.uvarint(3) + b"abc"),
                         (tc.MAP, tc.uvarint(value)),
                         (tc.LIST, bytes([0xF5]) + tc.uvarint(value)),
                         (tc.STRUCT, b"\x00"), (tc.DOUBLE, b"\x00" * 8)):
        hostile = body + bytes([typ]) + tc.zigzag(value) + payload + b"\x00"
        _both(twins, hostile)
    deep = body + bytes([0x0C]) + tc.zigzag(100) + bytes([0x1C]) * 200 + b"\x00" * 201
    assert _both(twins, deep)[0] == "refused", "nested past the stack: refused"


@settings(max_examples=examples(200), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(FOOTER) - 1), st.sampled_from(HOSTILE + [0, 15, 127, 128]),
       st.sampled_from(["uvarint", "zigzag", "byte"]))
def test_a_hostile_value_anywhere_agrees_with_the_twin(twins, at, value, how):
    """A hostile varint (or a byte) spliced anywhere into a footer: kernel and twin agree,
    and every place they give lies in the footer."""
    insert = tc.uvarint(value) if how == "uvarint" else tc.zigzag(value) if how == "zigzag" \
        else bytes([value & 0xFF])
    _both(twins, FOOTER[:at] + insert + FOOTER[at + 1:])


def test_select_stats_refuses_rows_that_are_not_the_decoders(twins):
    """Chunk rows of another shape than ``decode_footer`` gives, leaf indexes outside the
    columns: a clean refusal, never a read outside ``chunks``."""
    buf = np.frombuffer(FOOTER + b"\0", np.uint8).copy()
    info, chunks, _ = _thrift.decode_footer(buf)
    columns = int(info[_thrift.F_COLUMNS])
    ones = np.ones(1, bool)
    for kernels in (_thrift, twins):
        for leaf, cols, rows in ((columns, columns, chunks), (-1, columns, chunks),
                                 (0, columns + 1, chunks), (0, columns, chunks[:-1]),
                                 (0, -1, chunks), (0, 0, chunks)):
            with pytest.raises(ValueError):
                kernels.select_stats(buf, rows, cols, np.array([leaf], np.int64),
                                     np.array([chunks[0, _thrift.C_TYPE]], np.int64), ones,
                                     ones, True)
        bad = chunks.copy()  # a bound placed outside the footer: unknown, not read
        bad[:, _thrift.C_MIN_OFF] = len(buf) + 2**40
        bad[:, _thrift.C_MAX_OFF] = -(2**40)
        data, rows = kernels.select_stats(buf, bad, columns, np.array([0], np.int64),
                                          np.array([chunks[0, _thrift.C_TYPE]], np.int64),
                                          ones, ones, True)
        assert (rows[:, _thrift.S_MIN_LEN] == -1).all() and (rows[:, _thrift.S_MAX_LEN] == -1).all()


# ------------------------------------------------------------------------------ Bloom probe


def _probe(fn, words, starts, blocks, rows, high, masks, size):
    out = np.zeros(size, bool)
    fn(words, starts, blocks, rows, high, masks, out)
    return out


def test_the_bloom_probe_kernel_never_reads_outside_its_filters():
    """Filters placed outside ``words`` (negative starts, past the end, 0 or a non power of
    two or 2**40 blocks) and rows outside ``out``: "maybe" (True), never a read, alike in
    the compiled kernel and its Python twin (``probe.py_func``)."""
    words = np.full(64, 0xFFFFFFFF, np.uint32)
    high, masks = bloom_format.bit_masks(np.array([12345, 2**64 - 1], np.uint64))
    cases = [(0, 8), (-8, 1), (60, 1), (64, 1), (0, 0), (0, 3), (0, 2**40), (2**40, 1),
             (-(2**40), 2), (56, 1), (0, -8), (8, 7)]
    starts = np.array([s for s, _ in cases], np.int64)
    blocks = np.array([b for _, b in cases], np.int64)
    rows = np.array(list(range(len(cases))) + [-1, 10**6, len(cases) + 3], np.int64)
    size = len(cases) + 1
    compiled = _probe(_kernels.probe, words, starts, blocks, rows, high, masks, size)
    twin = _probe(_kernels.probe.py_func, words, starts, blocks, rows, high, masks, size)
    assert compiled.tolist() == twin.tolist()
    assert compiled[:len(cases)].all(), "full words, or not a place: maybe everywhere"
    empty = np.zeros(64, np.uint32)
    for fn in (_kernels.probe, _kernels.probe.py_func):
        got = _probe(fn, empty, starts, blocks, rows, high, masks, size)
        valid = [s >= 0 and b > 0 and b & (b - 1) == 0 and s + 8 * b <= 64 for s, b in cases]
        assert got[:len(cases)].tolist() == [not v for v in valid], "empty filters: absent"
    narrow = np.zeros((2, 4), np.uint32)  # masks of fewer than eight words: no probe
    assert _probe(_kernels.probe, empty, starts, blocks, rows, high, narrow, size)[
        :len(cases)].all()


# ------------------------------------------------------------------------------ Python readers


@pytest.mark.parametrize("size", [-1, -32, -(2**40), 0, 96, 2**40, 2**31, 2**63, 33])
def test_hostile_bloom_header_sizes_are_refused(size):
    header = bytes([0x15]) + tc.zigzag(size) + bytes([0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0,
                                                    0x1C, 0x1C, 0, 0, 0])
    with pytest.raises(bloom_format.HeaderError):
        bloom_format.parse_header(header + bytes(64))


@pytest.mark.parametrize("place", [(-2, -1), (-(2**40), 40), (4, -(2**40)), (4, 0),
                                   (2**40, -1), (4, 2**40), (2**63 - 1, 2**31 - 1),
                                   (-1, 47)])
def test_hostile_bloom_places_are_never_read(place):
    """Offsets and lengths no file has: impossible, and no read beyond the file is asked."""
    data = b"PAR1" + bytes([0x15, 0x40, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0,
                            0]) + bytes(32) + b"tail"
    asked = []

    def read_at(n, at):
        asked.append((n, at))
        assert 0 <= at and 0 <= n and at + n <= len(data)
        return data[at:at + n]

    words, problems, impossible = read_filters(read_at, len(data), [place])
    assert words == [None] and (0 in impossible or problems), (problems, impossible)


@pytest.mark.parametrize("field, value", [(2, -5), (3, -5), (2, 2**40), (3, 2**40),
                                          (2, 2**63 - 1)])
def test_hostile_dictionary_page_sizes_are_refused(field, value):
    """A page header whose sizes are negative or past the bytes read: not a usable page."""
    def page(fields: dict) -> bytes:
        header = b"".join(bytes([0x15]) + tc.zigzag(fields[fid]) for fid in (1, 2, 3))
        return header + bytes([0x4C, 0x15]) + tc.zigzag(2) + b"\x00\x00" + bytes(8)

    fields = {1: 2, 2: 8, 3: 8}  # a dictionary page of 8 bytes, 8 compressed, 2 values
    assert dictionary.page_values(page(fields), 0, 1 << 20) == (2, bytes(8))
    fields[field] = value
    with pytest.raises(dictionary.PageError):
        dictionary.page_values(page(fields), 0, 1 << 20)
