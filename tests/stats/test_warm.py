"""The footer kernels' Python twins (what answers while numba compiles, ``prune_engine._warm``)
decode every footer exactly as the compiled kernels do, reject what they reject, and a fresh
process with an empty numba cache gets the same statistics from its first call."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.stats import _thrift, parquet


def _files() -> list[bytes]:
    """Footers of many shapes: types, nesting, row groups, metadata, statistics off."""
    tables = [
        pa.table({"x": [1, None, 3]}),
        pa.table({"i": pa.array([-2**63, 2**63 - 1], pa.int64()),
                  "u": pa.array([0, 2**64 - 1], pa.uint64()),
                  "f": pa.array([float("nan"), -0.0]), "s": ["\U0001f600", ""],
                  "d": pa.array([decimal.Decimal("1.5"), None], pa.decimal128(30, 4)),
                  "t": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("ns", "UTC")),
                  "b": [b"\x00", b"\xff" * 40]}),
        pa.table({"st": pa.array([{"a": 1, "l": [1, 2]}, None],
                                 pa.struct([("a", pa.int32()), ("l", pa.list_(pa.int64()))])),
                  "m": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64()))}),
        pa.table({f"c{k}": np.arange(100) * k for k in range(40)}),
    ]
    out = []
    for i, table in enumerate(tables):
        for options in ({}, {"row_group_size": 7}, {"write_statistics": False},
                        {"use_dictionary": False, "compression": "zstd"},
                        {"use_deprecated_int96_timestamps": True}):
            sink = io.BytesIO()
            pq.write_table(table.replace_schema_metadata({"k": "v" * i}), sink, **options)
            out.append(sink.getvalue())
    return out


def _tail(data: bytes) -> np.ndarray:
    return parquet._tail(lambda n, offset: data[offset:offset + n], len(data))


@pytest.fixture(scope="module")
def twins():
    return parquet.FOOTER_KERNELS._load_twins()


def _same(a, b) -> bool:
    return a.path == b.path and a.key == b.key and np.array_equal(a.num_rows, b.num_rows) \
        and np.array_equal(a.data, b.data) and np.array_equal(a.rows, b.rows)


def test_twins_decode_every_footer_as_the_compiled_kernels(twins):
    for data in _files():
        footer = _tail(data)
        assert _same(parquet._decode(footer, "f", None, twins),
                     parquet._decode(footer, "f", None, _thrift))
        info_t, chunks_t, rows_t = twins.decode_footer(footer)
        info_c, chunks_c, rows_c = _thrift.decode_footer(footer)
        assert np.array_equal(info_t, info_c) and np.array_equal(chunks_t, chunks_c)
        assert np.array_equal(rows_t, rows_c)


def test_twins_reject_what_the_compiled_kernels_reject(twins):
    rng = np.random.default_rng(5)
    footers = [_tail(d) for d in _files()[:10]]
    cases = 0
    for footer in footers:
        for _ in range(30):
            broken = footer.copy()
            kind = rng.integers(3)
            if kind == 0:  # truncated
                broken = np.append(broken[:rng.integers(1, broken.size)], np.uint8(0))
            elif kind == 1:  # a byte changed
                broken[rng.integers(broken.size - 1)] = rng.integers(256)
            else:  # garbage
                broken = np.append(rng.integers(0, 256, broken.size - 1).astype(np.uint8),
                                   np.uint8(0))
            outcomes = []
            for kernels in (twins, _thrift):
                try:
                    outcomes.append(parquet._decode(broken, "f", None, kernels))
                except (ValueError, OSError, pa.ArrowException):  # as _read_one takes them
                    outcomes.append("rejected")
            if outcomes[0] == "rejected" or outcomes[1] == "rejected":
                assert outcomes[0] == outcomes[1] == "rejected"
            else:
                assert _same(*outcomes)
            cases += 1
    assert cases == 300


def test_a_fresh_process_gets_the_same_statistics_from_its_first_call(tmp_path):
    """An empty numba cache: the first collect_stats answers through the twins (the
    compilation runs beside it) with the statistics of a warm process."""
    root = tmp_path / "lake"
    root.mkdir()
    for k in range(20):
        pq.write_table(pa.table({"x": [k, k + 1, None], "s": [f"v{k}"] * 3}),
                       root / f"f{k}.parquet", row_group_size=2)
    expected = pe.collect_stats(str(root), progress=False)
    out = tmp_path / "first.parquet"
    code = ("import sys, prune_engine as pe; from prune_engine.stats.parquet import "
            "FOOTER_KERNELS as K; s = pe.collect_stats(sys.argv[1], progress=False); "
            "s.save(sys.argv[2]); print(K.ready)")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PRUNE_ENGINE_WARM": "1"}
    run = subprocess.run([sys.executable, "-c", code, str(root), str(out)], env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    assert run.stdout.strip() == "False", "the first call was answered before numba was ready"
    assert pe.read_stats(str(out)).table.equals(expected.table)


def test_a_warm_cache_is_loaded_at_once():
    """Kernels in numba's cache are loaded by the first call itself (no twins, no child)."""
    kernels = parquet.FOOTER_KERNELS
    assert kernels.wait(600)  # this process: compiled or loaded by now
    assert kernels._cached(_thrift), "numba's cache holds the kernels' index"


def test_a_process_that_only_merges_statistics_never_imports_numba(tmp_path):
    """A Spark driver lists the files, states the options and merges the executors' slices:
    none of it decodes a footer, so none of it loads numba (half a second of the first
    ``pes.collect_stats``)."""
    from prune_engine.spark._collect import _write_part
    from prune_engine.stats.collect import collect_part
    from prune_engine.stats.listing import list_source, partition_types

    root = tmp_path / "lake"
    for k in range(2):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"x": [k, k + 1]}), root / f"k={k}" / "f.parquet")
    listing = list_source(str(root))
    types = partition_types(listing.files, listing.typed)
    for k, f in enumerate(listing.files):
        (tmp_path / f"part{k}").write_bytes(_write_part(collect_part([f], types, "file")))
    code = ("import sys, prune_engine.spark._collect as c, prune_engine.stats.collect as sc\n"
            "c.collect_options('file', ngram=None, bloom=None)\n"
            "sc.list_source(sys.argv[1])\n"
            "parts = [c._read_part(open(p, 'rb').read()) for p in sys.argv[2:]]\n"
            "print(sc.merge_parts(parts).num_rows, 'numba' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code, str(root), str(tmp_path / "part0"),
                          str(tmp_path / "part1")], capture_output=True, text=True, check=True,
                         timeout=300)
    assert run.stdout.split() == ["2", "False"], run.stderr


def _varints(rng) -> list[bytes]:
    """Byte strings that start with varints of every length (1 to 11 bytes, continuation
    bits on the last one too), with the extreme payloads, and random bytes."""
    out = [b"\x00", b"\x7f", b"\x80\x01", b"\xff" * 9 + b"\x01", b"\xff" * 10 + b"\x01",
           b"\xff" * 11, b"\x80" * 10, b"\xfe" + b"\xff" * 8 + b"\x7f"]
    for size in range(1, 12):
        for _ in range(20):
            body = rng.integers(0x80, 0x100, size - 1).astype(np.uint8).tobytes()
            out.append(body + bytes([int(rng.integers(0, 0x100))]))
    out += [rng.integers(0, 256, int(rng.integers(1, 24))).astype(np.uint8).tobytes()
            for _ in range(300)]
    return out


def test_the_twins_stand_ins_read_bytes_as_the_compiled_functions(twins):
    """The plain-Python stand-ins (``_twin_*``) of the varint readers give what the compiled
    functions give, as plain ints, at every position, past the end included."""
    rng = np.random.default_rng(11)
    for raw in _varints(rng):
        buf = np.frombuffer(raw + b"\x00", np.uint8)  # padded as decode_footer takes it
        data = buf.tobytes()
        for pos in range(len(raw) + 2):
            assert _thrift._twin_byte(data, pos) == _thrift.byte(buf, pos)
            for name in ("uvarint", "zigzag", "length"):
                value, end = getattr(_thrift, f"_twin_{name}")(data, pos)
                expected, expected_end = getattr(_thrift, name)(buf, pos)
                assert (int(value), end) == (int(expected), expected_end), (name, raw, pos)
                assert type(value) is int


def test_one_child_compiles_at_a_time():
    """While one process holds the compile lock of a module, another waits for it."""
    from prune_engine._warm import compiling_alone

    code = ("from prune_engine._warm import compiling_alone\n"
            "with compiling_alone('some.kernels'):\n"
            "    print('compiling')\n")
    with compiling_alone("some.kernels"):
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                 text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=3)
    out, _ = child.communicate(timeout=60)
    assert out.strip() == "compiling"


def _filled_cache(tmp_path) -> dict:
    """The environment of a process whose numba cache (under ``tmp_path``) holds the footer
    kernels, filled by a process of its own."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PRUNE_ENGINE_WARM": "1"}
    fill = "from prune_engine.stats.parquet import FOOTER_KERNELS as K; assert K.wait(600)"
    subprocess.run([sys.executable, "-c", fill], env=env, check=True, timeout=600)
    return env


def test_a_filled_cache_is_loaded_first_only_for_a_large_job(tmp_path):
    """With numba's cache filled, a job of many footers waits for the load (faster than the
    twins over it); a small one starts on the twins while a thread loads the kernels."""
    from prune_engine._warm import LOAD_WORTH

    env = _filled_cache(tmp_path)
    code = ("import sys, types; from prune_engine.stats.parquet import FOOTER_KERNELS as K; "
            "got = K.get(int(sys.argv[1])); "
            "print(isinstance(got, types.SimpleNamespace), K.wait(600))")
    for calls, twins in ((1, "True"), (LOAD_WORTH + 1, "False")):
        run = subprocess.run([sys.executable, "-c", code, str(calls)], env=env, check=True,
                             capture_output=True, text=True, timeout=600)
        assert run.stdout.split() == [twins, "True"], (calls, run.stdout, run.stderr[-500:])


def test_a_process_ending_while_a_thread_loads_the_kernels_waits_for_it(tmp_path):
    """A process that ends while the loading thread is inside numba's compiled code aborts
    ("exception not rethrown"): the exit waits for the load under way (its marker file is
    written) and the process ends cleanly, every time."""
    marker = tmp_path / "loaded"
    code = ("import sys, time\n"
            "from prune_engine._warm import Kernels\n"
            "def warm_up(compiled):\n"
            "    time.sleep(1.0)\n"  # a load under way when the main thread ends
            "    open(sys.argv[1], 'w').write('done')\n"
            "k = Kernels('prune_engine.stats._thrift', ('decode_footer',), warm_up, 'x:K')\n"
            "k.get()\n"  # the twins, while a thread loads
            "time.sleep(0.3)\n")
    env = {**os.environ, "PRUNE_ENGINE_WARM": "1"}
    run = subprocess.run([sys.executable, "-c", code, str(marker)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-500:]
    assert marker.read_text() == "done", "the exit did not wait for the load under way"


def test_short_processes_on_a_filled_cache_end_cleanly(tmp_path):
    """Processes that import numba themselves and read one footer (the load then runs in a
    thread as the process ends): none aborts."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    env = _filled_cache(tmp_path)
    code = ("import sys, pyarrow as pa\n"
            "from prune_engine.stats import _thrift, parquet\n"
            "parquet.read_footer(sys.argv[1], 'f')\n")
    for _ in range(8):
        run = subprocess.run([sys.executable, "-c", code, str(path)], env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-500:]
