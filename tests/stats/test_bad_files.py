"""One bad file never stops the lake, never changes the good files' statistics, is refused
(or accepted) the same whatever the process read before, and is named in a one-line
:class:`~prune_engine.StatsError`."""

from __future__ import annotations

import io
import json
import os
import random
import struct
import subprocess
import sys
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.stats import _thrift, parquet
from prune_engine.errors import listed, one_line
from tests.bloom.writer import needs_bloom_writer
from tests.stats import thrift_codec as tc


def _parquet(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def _lake(root, count: int = 3, **kw) -> list[str]:
    os.makedirs(root, exist_ok=True)
    paths = []
    for i in range(count):
        path = os.path.join(root, f"good{i}.parquet")
        pq.write_table(pa.table({"x": [i, i + 10, None], "s": ["a", "b", f"c{i}"]}), path,
                       row_group_size=2, **kw)
        paths.append(path)
    return paths


def _no_chunks(data: bytes) -> bytes:
    """Every row group without column chunks (pyarrow: ArrowInvalid; numpy: ValueError)."""
    def change(tree):
        for group in tc.get(tree, 4).value.items:
            tc.get(group, 1).value.items = []
    return tc.edited(data, change)


def _rows_without(stats, path: str) -> list[dict]:
    table = stats.table
    keep = [p != path for p in table.column("path").to_pylist()]
    return table.filter(pa.array(keep)).to_pylist()


def _assert_one_line(message: str, path: str) -> None:
    assert "\n" not in message and len(message) < 400, message
    assert path in message, message


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_a_row_group_without_column_chunks_is_that_files_error_only(tmp_path, granularity):
    root = str(tmp_path / "lake")
    good = _lake(root)
    clean = pe.collect_stats(root, granularity=granularity, progress=False)
    bad = os.path.join(root, "bad.parquet")
    with open(good[0], "rb") as f:
        data = _no_chunks(f.read())
    with open(bad, "wb") as f:
        f.write(data)
    stats = pe.collect_stats(root, granularity=granularity, on_error="skip", progress=False)
    assert [s["path"] for s in stats.metadata["skipped_files"]] == [bad]
    assert _rows_without(stats, bad) == clean.table.to_pylist(), "the good files unchanged"
    assert pe.prune(stats, "x = 1000").to_pylist()[0] is True, "the bad file keeps"
    with pytest.raises(pe.StatsError) as e:
        pe.collect_stats(root, granularity=granularity, progress=False)
    _assert_one_line(str(e.value), bad)
    assert "0 column chunks" in str(e.value)


@needs_bloom_writer
def test_a_bloom_filter_of_three_blocks_is_left_out_with_a_warning(tmp_path):
    """numBytes 96: a multiple of 32, not a power-of-two number of blocks (no writer makes
    one; the entries cannot fold it). The old code raised ValueError for every file."""
    root = str(tmp_path / "lake")
    os.makedirs(root)
    good = [os.path.join(root, f"good{i}.parquet") for i in range(3)]
    for i, path in enumerate(good):  # enough distinct keys for a filter of 4 blocks or more
        pq.write_table(pa.table({"x": list(range(i, 600 + i, 2))}), path,
                       bloom_filter_options={"x": True})
    clean = pe.collect_stats(root, granularity="file", bloom=True, progress=False)
    with open(good[0], "rb") as f:
        data = bytearray(f.read())
    meta = pq.read_metadata(io.BytesIO(bytes(data))).row_group(0).column(0)
    offset = meta.bloom_filter_offset
    assert data[offset] == 0x15
    size, header = _read_numbytes(bytes(data), offset)
    assert size >= 96 and size & (size - 1) == 0
    patched = struct.pack("<B", 0x15) + _zigzag_varint(96)
    assert len(patched) == len(struct.pack("<B", 0x15) + _zigzag_varint(size))
    data[offset:offset + len(patched)] = patched
    bad = os.path.join(root, "bad.parquet")

    def shorter(tree):  # the footer's bloom_filter_length, to the header's new size
        group = tc.get(tree, 4).value.items[0]
        chunk_meta = tc.get(tc.get(group, 1).value.items[0], 3).value
        length = tc.get(chunk_meta, 15)
        if length is not None:
            length.value = header + 96
    with open(bad, "wb") as f:
        f.write(tc.edited(bytes(data), shorter))
    for on_error in ("skip", "raise"):
        with pytest.warns(UserWarning, match="power-of-two"):
            stats = pe.collect_stats(root, granularity="file", bloom=True, on_error=on_error,
                                     progress=False)
        assert stats.metadata["skipped_files"] == []
        assert _rows_without(stats, bad) == clean.table.to_pylist()
        row = [r for r in stats.table.to_pylist() if r["path"] == bad][0]
        assert row["bloom_filter"]["x"] is None and row["min_values"]["x"] == 0
        assert pe.prune(stats, "x = 11").to_pylist() == [True, False, True, False], \
            "only the good filters prune"


def _zigzag_varint(n: int) -> bytes:
    raw, out = n << 1, bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    return bytes(out + bytes([raw]))


def _read_numbytes(data: bytes, offset: int) -> tuple[int, int]:
    from prune_engine.bloom.format import parse_header
    return parse_header(data[offset:offset + 64])


# ------------------------------------------------------------------------------ history


def _mutants(good: bytes, count: int, seed: int) -> list[bytes]:
    """Footers of ``good`` with bytes of their row-group part changed (the schema kept), and
    one without a required field (``ColumnChunk.file_offset``, which pyarrow's Thrift reader
    requires and the statistics do not use)."""
    footer = tc.footer_of(good)
    info, _, _ = tc.kernel(footer)
    start = int(info[_thrift.F_SCHEMA_END])
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        mutated = bytearray(footer)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(start, len(mutated))
            mutated[at] = rng.randrange(256)
        out.append(bytes(mutated))

    def no_file_offset(tree):
        for group in tc.get(tree, 4).value.items:
            for chunk in tc.get(group, 1).value.items:
                chunk[:] = [f for f in chunk if f.fid != 2]
    out.append(tc.footer_of(tc.edited(good, no_file_offset)))
    prefix = good[:len(good) - 8 - len(footer)]
    return [prefix + m + struct.pack("<I", len(m)) + b"PAR1" for m in out]


def _verdict(data: bytes) -> str:
    """Refused (the error's type) or accepted (the statistics), as text."""
    try:
        footer = parquet.read_footer(pa.BufferReader(data), "m")
        top, num_records, _ = parquet.group_stats([footer], "row_group")
    except Exception as e:  # noqa: BLE001 - the verdict is what we compare
        return f"refused: {type(e).__name__}"
    return json.dumps([[str(s.mins.to_pylist()), str(s.maxs.to_pylist()),
                        str(s.nulls.to_pylist())] for s in top] + [num_records.tolist()])


_GOOD = pa.table({"x": pa.array([1, 5, None, 7], pa.int64()), "s": ["a", "q", None, "z"],
                  "f": [0.5, None, -1.0, 2.0]})


def test_acceptance_does_not_depend_on_what_was_read_before(tmp_path):
    """Mutated row groups of a footer: the verdict in a fresh process (no plan cached) equals
    the verdict after reading the good file of the same schema (its plan cached). The old
    code let pyarrow check the whole footer only when the schema was new."""
    good = _parquet(_GOOD, row_group_size=2)
    mutants = _mutants(good, 150, seed=34)
    paths = []
    for i, m in enumerate(mutants):
        path = tmp_path / f"m{i}.parquet"
        path.write_bytes(m)
        paths.append(str(path))
    code = ("import json, sys, pyarrow as pa\n"
            "from tests.stats.test_bad_files import _verdict\n"
            "from prune_engine.stats import parquet\n"
            "out = []\n"
            "for p in sys.argv[1:]:\n"
            "    parquet._PLANS.clear()\n"  # each as in a fresh process
            "    out.append(_verdict(open(p, 'rb').read()))\n"
            "print(json.dumps(out))\n")
    fresh = json.loads(subprocess.run([sys.executable, "-c", code, *paths], check=True,
                                      capture_output=True, text=True,
                                      cwd=os.getcwd()).stdout)
    warm = []
    for m in mutants:
        _verdict(good)  # the good file's plan is cached
        warm.append(_verdict(m))
    assert warm == fresh
    assert any(v.startswith("refused") for v in warm) and any(
        not v.startswith("refused") for v in warm), "both verdicts occur"
    # three in processes of their own, with nothing read before
    for i in (0, 1, len(mutants) - 1):
        alone = subprocess.run([sys.executable, "-c", code.replace(
            "    parquet._PLANS.clear()\n", ""), paths[i]], check=True, capture_output=True,
            text=True, cwd=os.getcwd()).stdout
        assert json.loads(alone) == [warm[i]]


def test_pyarrow_is_given_the_schema_only():
    """What pyarrow reads of a footer: its schema and Arrow schema, no row group."""
    good = _parquet(_GOOD, row_group_size=2)
    footer = parquet._tail(lambda n, at: good[at:at + n], len(good))
    info, _, _ = _thrift.decode_footer(footer)
    raw = footer[info[_thrift.F_SCHEMA_START]:info[_thrift.F_SCHEMA_END]].tobytes()
    arrow = footer[info[_thrift.F_ARROW_OFF]:info[_thrift.F_ARROW_OFF]
                   + info[_thrift.F_ARROW_LEN]].tobytes()
    meta = pq.read_metadata(pa.BufferReader(parquet.schema_file(raw, arrow)))
    assert meta.num_row_groups == 0 and meta.schema.to_arrow_schema() == _GOOD.schema


# ------------------------------------------------------------------------------ messages


def _refusals(tmp_path) -> dict[str, bytes]:
    good = _parquet(_GOOD, row_group_size=2)
    footer = tc.footer_of(good)
    long_name = "x" * 180
    return {
        "empty.parquet": b"",
        "short.parquet": b"PAR1",
        "magic.parquet": good[:-4] + b"PAR2",
        "encrypted.parquet": good[:-4] + b"PARE",
        "length.parquet": good[:-8] + struct.pack("<I", 10**9) + b"PAR1",
        "cut.parquet": good[:len(good) - 8 - len(footer)] + footer[:len(footer) // 2]
        + struct.pack("<I", len(footer) // 2) + b"PAR1",
        "nochunks.parquet": _no_chunks(good),
        "schema.parquet": tc.edited(good, lambda t: tc.get(t, 2).value.items.__setitem__(
            slice(1, None), [])),
        f"{long_name}.parquet": good[:-4] + b"PAR2",
        "norows.parquet": tc.edited(good, lambda t: tc.get(t, 4).value.items[0].__setitem__(
            slice(None), [f for f in tc.get(t, 4).value.items[0] if f.fid != 3])),
    }


def test_every_refusal_is_one_line_under_400_characters_naming_the_file(tmp_path):
    for name, data in _refusals(tmp_path).items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(pe.StatsError) as e:
            pe.collect_stats(str(path), progress=False)
        _assert_one_line(str(e.value), str(path))
    stats = pe.collect_stats(str(tmp_path), on_error="skip", progress=False)
    assert len(stats.metadata["skipped_files"]) == len(_refusals(tmp_path))
    for skipped in stats.metadata["skipped_files"]:
        _assert_one_line(skipped["error"], skipped["path"])
    with pytest.raises(pe.StatsError) as e:
        pe.collect_stats(str(tmp_path), progress=False)
    assert "more failing files" in str(e.value)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400


def test_a_long_message_is_cut_to_one_line():
    assert one_line("a\nb  c", 100) == "a b c"
    cut = one_line("y" * 1000, 50)
    assert len(cut) == 50 and cut.endswith("...")
    names = listed([f"column_{i}" for i in range(500)], 200)
    assert len(names) <= 200 and names.endswith("(500)")


def test_a_columns_error_lists_few_names(tmp_path):
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({f"column_number_{i}": [i] for i in range(300)}), path)
    with pytest.raises(pe.StatsError) as e:
        pe.collect_stats(str(path), columns=["nope"], progress=False)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400


def test_warnings_of_a_lake_are_one_line(tmp_path):
    good = _parquet(_GOOD, row_group_size=2)
    path = tmp_path / ("z" * 150 + ".parquet")
    path.write_bytes(tc.edited(good, lambda t: tc.get(tc.get(tc.get(t, 4).value.items[0], 1)
                                                   .value.items[0], 3).value.append(
        tc.Field(99, tc.I32, 1))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.collect_stats(str(path), progress=False)
    assert caught == [] and stats.metadata["untrusted_statistics"] == {}, \
        "an unknown field is no corruption"
    corrupt = tc.edited(good, lambda t: [tc.get(tc.get(tc.get(tc.get(t, 4).value.items[0], 1)
                                                   .value.items[c], 3).value, 12).value.append(
        tc.Field(3, tc.I64, 99)) for c in range(3)])
    path.write_bytes(corrupt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pe.collect_stats(str(path), progress=False)
    assert len(caught) == 1
    _assert_one_line(str(caught[0].message), str(path))
    assert "and 2 more" in str(caught[0].message)
    assert np.all([w.category is UserWarning for w in caught])


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_a_footer_that_changes_a_columns_type_is_that_files_error(tmp_path, granularity):
    """A corrupt schema (s's logical type dropped: binary where the others have string) does
    not unify with the lake's: with ``on_error="skip"`` that file is skipped, the others keep
    their statistics; with ``"raise"`` the error names it (the old code raised a StatsError
    naming no file, for the whole lake)."""
    root = str(tmp_path / "lake")
    good = _lake(root)
    clean = pe.collect_stats(root, granularity=granularity, progress=False)

    def binary_s(tree):
        for element in tc.get(tree, 2).value.items:
            if tc.get(element, 4) is not None and tc.get(element, 4).value == b"s":
                element[:] = [f for f in element if f.fid not in (6, 10)]
    bad = os.path.join(root, "zz_bad.parquet")
    with open(good[1], "rb") as f:
        data = tc.edited(f.read(), binary_s)
    with open(bad, "wb") as f:
        f.write(data)
    assert pq.read_schema(bad).field("s").type == pa.binary()
    stats = pe.collect_stats(root, granularity=granularity, on_error="skip", progress=False)
    assert [s["path"] for s in stats.metadata["skipped_files"]] == [bad]
    assert _rows_without(stats, bad) == clean.table.to_pylist()
    with pytest.raises(pe.StatsError) as e:
        pe.collect_stats(root, granularity=granularity, progress=False)
    _assert_one_line(str(e.value), bad)
    assert "changes type across files" in str(e.value)
