"""Hostile index bytes never make a kernel read outside its buffers.

The n-gram kernels do not check bounds, so the directory (:mod:`prune_engine.ngram.directory`)
checks every offset, count and length before a kernel reads a byte. These tests put the index
bytes at the very end of readable memory, right before a page that cannot be read
(:func:`guarded`): a read one byte past the end kills the process with SIGSEGV instead of
passing unnoticed. Each case runs in a child process (:func:`run_child`), so that a crash
fails the test rather than the test run; a control case shows that the guard does bite.

The verdicts are compared with the plain-Python decoder (:func:`.format.decode_entry`), the
reference for every entry whose offsets are sound.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import pathlib
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

from prune_engine.errors import IndexCorruptError
from prune_engine.ngram.build import build_index
from prune_engine.ngram.directory import CORRUPT, OK, directory, read_directory
from prune_engine.ngram.format import TRAILER_BYTES, decode_entry, xxh64

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = mmap.PAGESIZE
_PROT_NONE = 0

#: one exact entry and one filter entry (case-insensitive: two sections each)
GOOD = [build_index(pa.array(values), np.array([0, len(values)]), case_insensitive=True,
                    mode=mode)[0].as_py()
        for values, mode in ((["checkout", "home"], "exact"),
                             ([f"/cart/{i}" for i in range(300)], "bloom"))]


def guarded(data: bytes) -> pa.Buffer:
    """A buffer holding ``data`` whose last byte is the last readable byte before a page that
    cannot be read (reading past the end raises SIGSEGV). The mapping lives as long as the
    buffer."""
    pages = (len(data) + PAGE - 1) // PAGE + 1
    mm = mmap.mmap(-1, pages * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    start = (pages - 1) * PAGE - len(data)
    mm[start:start + len(data)] = data
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if libc.mprotect(ctypes.c_void_p(base + (pages - 1) * PAGE), PAGE, _PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")
    return pa.foreign_buffer(base + start, len(data), base=mm)


def binary_array(offsets: list[int], data: bytes) -> pa.Array:
    """A binary array whose data lies in :func:`guarded` memory (pyarrow checks its offsets)."""
    return pa.Array.from_buffers(pa.binary(), len(offsets) - 1,
                                 [None, pa.py_buffer(np.array(offsets, np.int32).tobytes()),
                                  guarded(data)])


def sealed(blob: bytes) -> bytes:
    body = blob[:-TRAILER_BYTES]
    return body + struct.pack("<Q", xxh64(body))


def with_count(blob: bytes, slot: int, count: int) -> bytes:
    """``blob`` with the count of section ``slot`` set to ``count`` (u32), checksum re-sealed."""
    out = bytearray(blob)
    out[8 + 8 * slot:12 + 8 * slot] = struct.pack("<I", count % 2**32)
    return sealed(bytes(out))


def cases() -> dict[str, tuple[list[int], bytes, type]]:
    """name -> (offsets, data, offset width): arrays whose entries point anywhere."""
    exact, bloom = GOOD
    both = exact + bloom
    n = len(both)
    out = {
        "good entries at the end of memory": ([0, len(exact), n], both, np.int32),
        "an entry running past the data": ([0, len(exact), n + 64], both, np.int32),
        "an entry running far past the data": ([0, len(exact), 2**31 - 1], both, np.int32),
        "an entry starting past the data": ([0, n + 8, n + 80], both, np.int32),
        "a negative start": ([-64, len(exact), n], both, np.int32),
        "decreasing offsets": ([len(exact), 0, n], both, np.int32),
        "large offsets past the data": ([0, len(exact), 2**40], both, np.int64),
        "large negative offsets": ([-(2**40), len(exact), n], both, np.int64),
        "offsets at the int64 limits": ([0, 2**63 - 1, -(2**63), n], both, np.int64),
    }
    for count in (0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 2**31 // 8, 0):
        for slot in (0, 1):
            hostile = with_count(bloom, slot, count)
            out[f"count {count:#x} in section {slot}"] = ([0, len(hostile)], hostile, np.int32)
    return out


def run_case(name: str) -> dict:
    """Decode the case's entries (offsets as given: pyarrow would refuse an array of such
    offsets, so they go to the directory's decoder as the arrays an Arrow array gives) and
    probe them with a LIKE, plain and folded: what the directory and the probes said."""
    from prune_engine.ngram.pattern import like_query
    from prune_engine.ngram.probe import compile_query, probe_section

    offsets, data, width = cases()[name]
    memory = np.frombuffer(guarded(data), np.uint8)
    n = len(offsets) - 1
    status, gram_size, kind, count, position = read_directory(
        np.array(offsets, width), memory, np.ones(n, np.bool_))
    keep = {}
    for fold, pattern in ((0, "%checkout%"), (1, "%cart/1%")):
        query = compile_query(like_query(pattern, 3, None, bool(fold)))
        hit = probe_section(gram_size, kind[fold], count[fold], position[fold], memory, 3, query)
        keep[fold] = (hit | (status != OK)).tolist()
    return {"status": status.tolist(), "keep": keep[0], "keep_ci": keep[1]}


def run_array() -> dict:
    """The good entries as an Arrow array at the end of memory, probed through the API."""
    from prune_engine.ngram.probe import like_may_match

    array = binary_array([0, len(GOOD[0]), len(GOOD[0]) + len(GOOD[1])], GOOD[0] + GOOD[1])
    return {"status": directory(array).status.tolist(),
            "keep": like_may_match(array, "%checkout%").tolist(),
            "keep_ci": like_may_match(array, "%CART/1%", case_insensitive=True).tolist()}


def run_child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def expected_status(offsets: list[int], data: bytes) -> list[int]:
    """The Python decoder's verdict on every entry whose offsets lie inside the data; an
    entry outside it is corrupt (no byte of it is read)."""
    out = []
    for a, b in zip(offsets, offsets[1:]):
        if not 0 <= a <= b <= len(data):
            out.append(CORRUPT)
            continue
        blob = data[a:b]
        try:
            decode_entry(blob)
        except IndexCorruptError:
            out.append(CORRUPT)
            continue
        out.append(OK)
    return out


def test_the_guard_bites():
    """Control: a read one byte past a guarded buffer kills the child (SIGSEGV), so the cases
    below would crash if a kernel read past their data."""
    done = run_child("""
        import ctypes
        from tests.ngram.test_hostile import guarded
        buf = guarded(b"abc")
        assert ctypes.string_at(buf.address, 3) == b"abc"
        print("inside ok", flush=True)
        ctypes.string_at(buf.address + 3, 1)
        print("read past the end")
    """)
    assert "inside ok" in done.stdout, done.stderr[-2000:]
    assert "read past the end" not in done.stdout and done.returncode < 0, \
        "the read past the end should have been stopped by the guard page"


def test_hostile_offsets_and_counts_are_corrupt_and_never_read_past_the_data():
    """Every case in one child, each printed when done: a crash names the case it was in."""
    done = run_child("""
        import json
        from tests.ngram.test_hostile import cases, run_case
        for name in cases():
            print("start", json.dumps(name), flush=True)
            print("done", json.dumps(run_case(name)), flush=True)
    """)
    lines = done.stdout.splitlines()
    started = [json.loads(line[6:]) for line in lines if line.startswith("start ")]
    results = [json.loads(line[5:]) for line in lines if line.startswith("done ")]
    assert done.returncode == 0, (f"the child died ({done.returncode}) in case "
                                  f"{started[-1] if started else None!r}: {done.stderr[-2000:]}")
    assert len(results) == len(cases())
    for name, got in zip(cases(), results):
        offsets, data, _ = cases()[name]
        expected = expected_status(offsets, data)
        assert got["status"] == expected, f"{name}: the directory agrees with the Python decoder"
        for i, status in enumerate(expected):
            if status != OK:
                assert got["keep"][i] and got["keep_ci"][i], \
                    f"{name}: a corrupt entry keeps its container"
        if name == "good entries at the end of memory":
            assert got["keep"] == [True, False], "'checkout' is in the first container only"
            assert got["keep_ci"] == [False, True], "'/cart/1' is in the second container only"


def test_good_entries_at_the_end_of_memory_probe_through_the_api():
    done = run_child("""
        import json
        from tests.ngram.test_hostile import run_array
        print(json.dumps(run_array()))
    """)
    assert done.returncode == 0, f"the child died ({done.returncode}): {done.stderr[-2000:]}"
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"status": [OK, OK], "keep": [True, False], "keep_ci": [False, True]}, \
        "'checkout' is in the first container only, '/cart/1' (folded) in the second only"


@pytest.mark.parametrize("offsets", [[0], [0, 4, 8, 12]])
def test_offsets_of_the_wrong_length_are_an_index_corrupt_error(offsets):
    """Two entries need three offsets: any other number is refused before a kernel runs."""
    data = np.frombuffer(GOOD[0], np.uint8)
    with pytest.raises(IndexCorruptError, match="2 entries has"):
        read_directory(np.array(offsets, np.int64), data, np.ones(2, np.bool_))


def test_a_corrupt_entry_raises_naming_its_container():
    entry = bytearray(GOOD[0])
    entry[9] ^= 0x40  # a count byte, not re-sealed: the checksum fails
    index = pa.array([GOOD[1], bytes(entry)], pa.binary())
    from prune_engine.ngram.probe import like_may_match

    with pytest.raises(IndexCorruptError, match=r"^n-gram index of container 'a\.parquet#rg=1' "
                       r"is invalid \(corrupt bytes\)"):
        like_may_match(index, "%x%", containers=pa.array(["a.parquet#rg=0", "a.parquet#rg=1"]))
    assert directory(index).status.tolist() == [OK, CORRUPT]
