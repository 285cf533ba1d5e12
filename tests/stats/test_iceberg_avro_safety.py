"""Memory safety of the Avro kernel behind Iceberg manifests (``stats/_avro.py``).

numba checks no index: every size, length, count and offset read from a file (or a schema)
must be checked before it moves a read position. Before, a manifest whose Avro schema
declared a ``fixed`` of size -1,099,511,627,776 killed the process with SIGSEGV (the kernel
moved its position by the size with only a past-the-end check), and ``p + size`` overflowed
for a length near 2**63. Here: hostile schemas and bytes give a clean StatsError, and the
compiled kernels agree with their Python twins (the same source run uncompiled, where numpy
checks every index and a negative one is refused too).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

from prune_engine.errors import StatsError
from prune_engine.stats import _avro as k
from prune_engine.stats import avro
from tests.stats.iceberg_support import manifest_paths, rewrite_avro

_zz, _text = avro.zigzag, avro.text
HUGE = 2**63 - 1
LOWEST = -(2**63)


class _Strict(np.ndarray):
    """A byte buffer for the Python twin that refuses negative positions (numpy would wrap
    them around silently, as numba reads them: outside the buffer)."""

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)) and index < 0:
            raise IndexError(f"negative position {index}")
        return super().__getitem__(index)


def _run_both(data: bytes, count: int, flat: avro.Flat):
    """(status, entries) of the compiled kernel, asserted equal to its Python twin's."""
    buffer = np.frombuffer(data, np.uint8)
    answers = []
    for decode, buf in ((k.decode, buffer), (k.decode.py_func, buffer.copy().view(_Strict))):
        cap = len(data) + 1
        out = [np.zeros(cap, np.int64) for _ in range(4)]
        status, n = decode(buf, count, flat.kinds, flat.args, flat.first, flat.children,
                           flat.slots, 0, flat.depth, *out)
        answers.append((int(status), [a[:n].tolist() for a in out]))
    assert answers[0] == answers[1]
    return answers[0]


def _flat(schema) -> avro.Flat:
    return avro.flatten(schema, lambda path: 0 if path else -1)


def _record(*fields) -> dict:
    return {"type": "record", "name": "r",
            "fields": [{"name": f"f{i}", "type": t} for i, t in enumerate(fields)]}


FIXED = {"type": "fixed", "name": "fx", "size": 4}


ARRAY = _record({"type": "array", "items": "int"})


@pytest.mark.parametrize("schema, data, status", [
    # a bytes / string length past the end, negative, and near 2**63 (p + size overflows)
    (_record("bytes"), _zz(5) + b"ab", k.TRUNCATED),
    (_record("string"), _zz(-3) + b"abc", k.BAD_LENGTH),
    (_record("bytes"), _zz(HUGE) + b"ab", k.TRUNCATED),
    (_record("bytes"), _zz(HUGE - 5) + b"ab", k.TRUNCATED),
    # array blocks: a negative count (a byte size follows) of -2**63, a negative byte size,
    # a byte size past the end, a count far past the bytes
    (ARRAY, _zz(LOWEST) + _zz(2) + b"\x02\x04", k.BAD_LENGTH),
    (ARRAY, _zz(-2) + _zz(-9) + b"\x02\x04\x00", k.BAD_LENGTH),
    (ARRAY, _zz(-2) + _zz(HUGE) + b"\x02\x04\x00", k.BAD_LENGTH),
    (ARRAY, _zz(HUGE) + b"\x02\x04\x00", k.BAD_LENGTH),
    (_record({"type": "map", "values": "long"}), _zz(2**40) + _text(b"k") + b"\x02", k.BAD_LENGTH),
    # varints: 11 bytes, a 10th byte above 1 (wider than 64 bits)
    (_record("long"), b"\xff" * 10 + b"\x01", k.BAD_VARINT),
    (_record("long"), b"\xff" * 9 + b"\x02", k.BAD_VARINT),
    (_record("long"), b"\xff" * 9 + b"\x01", k.OK),
    # a union branch and an enum symbol the schema does not have, negative and past the end
    (_record(["null", "int"]), _zz(-1), k.BAD_UNION),
    (_record(["null", "int"]), _zz(2), k.BAD_UNION),
    (_record({"type": "enum", "name": "e", "symbols": ["A"]}), _zz(1), k.BAD_UNION),
    (_record({"type": "enum", "name": "e", "symbols": ["A"]}), _zz(-1), k.BAD_UNION),
    # a boolean byte other than 0 or 1; floats and fixed past the end
    (_record("boolean"), b"\x64", k.BAD_BOOLEAN),
    (_record("double"), b"\x00" * 7, k.TRUNCATED),
    (_record("float"), b"\x00" * 3, k.TRUNCATED),
    (_record(FIXED), b"abc", k.TRUNCATED),
])
def test_hostile_bytes_stop_the_kernel_cleanly(schema, data, status):
    flat = _flat(schema)
    got, _ = _run_both(data, 1, flat)
    assert got == status
    if status != k.OK:  # and through the module: a StatsError naming the file
        container = avro.Container(schema, np.frombuffer(data, np.uint8), 1)
        with pytest.raises(StatsError, match="m.avro: not a readable Avro file"):
            avro.decode(container, flat, "m.avro")


def test_a_fixed_size_the_schema_cannot_have_is_refused_before_the_kernel():
    for size in (-1_099_511_627_776, -1, 2**31, 2**62, "4", 4.0, True):
        with pytest.raises(StatsError, match="size"):
            _flat(_record({"type": "fixed", "name": "fx", "size": size}))
    # and the kernel itself refuses a negative size that reached it
    flat = _flat(_record(FIXED))
    flat.args[flat.kinds == k.FIXED] = -1_099_511_627_776
    assert _run_both(b"\x00" * 64, 1, flat)[0] == k.BAD_LENGTH
    flat.args[flat.kinds == k.FIXED] = HUGE
    assert _run_both(b"\x00" * 64, 1, flat)[0] == k.TRUNCATED


@pytest.mark.parametrize("count", [HUGE, 2**40, -1])
def test_record_counts_that_the_bytes_cannot_hold(count):
    # a schema whose records may be empty (every field null) would loop count times
    for schema, data in ((_record("null"), b""), (_record("long"), b"\x02")):
        flat = _flat(schema)
        container = avro.Container(schema, np.frombuffer(data, np.uint8), count)
        with pytest.raises(StatsError, match="records cannot fit"):
            avro.decode(container, flat, "m.avro")


def _blocks(count: int, size: int, payload: bytes, sync: bytes = bytes(range(16))) -> bytes:
    return _zz(count) + _zz(size) + payload + sync


@pytest.mark.parametrize("body", [
    _blocks(1, HUGE, b"\x02"),  # p + size + 16 overflows: read far past the end before
    _blocks(1, HUGE - 17, b"\x02"),
    _blocks(1, -5, b"\x02"),
    _blocks(-1, 1, b"\x02"),
    _blocks(LOWEST, 1, b"\x02"),
    _blocks(1, 1, b"\x02", bytes(16)),  # a sync marker that does not match
    b"\xff" * 11,  # an endless varint
])
def test_hostile_container_blocks(body):
    schema = _record("long")
    header = avro.write_container(schema, b"", 0)[:-(2 + 16)]  # (up to the header's sync)
    raw = header + body
    data = np.frombuffer(raw, np.uint8)
    start = len(header)
    sync = np.frombuffer(bytes(range(16)), np.uint8)
    compiled = k.blocks(data, start, sync)
    twin = k.blocks.py_func(data.copy().view(_Strict), start, sync)
    assert compiled[0] == twin[0] != k.OK and compiled[4] == twin[4]
    with pytest.raises(StatsError, match="m.avro"):
        avro.read_container(raw, "m.avro")


def _one_block(schema, payload: bytes, codec: str, count: int = 1) -> bytes:
    """A container of one block whose (compressed) bytes are ``payload`` as given."""
    sync = bytes(range(16))
    header = avro.write_container(schema, b"", 0, codec)
    header = header[:header.index(sync) + 16]
    return header + _zz(count) + _zz(len(payload)) + payload + sync


def test_decompression_past_the_block_limit_is_refused(monkeypatch):
    schema = _record("bytes")
    records = _text(b"x" * 5000)
    for codec in ("deflate", "bzip2", "xz", "zstandard", "snappy"):
        raw = avro.write_container(schema, records, 1, codec)
        assert avro.read_container(raw, "m.avro").count == 1
        monkeypatch.setattr(avro, "MAX_BLOCK", 1000)
        with pytest.raises(StatsError, match="m.avro: .*decompress"):
            avro.read_container(raw, "m.avro")
        monkeypatch.undo()


def test_compressed_blocks_that_lie_about_their_size_or_end_early():
    schema = _record("bytes")
    records = _text(b"x" * 5000)
    # a snappy block whose length claims 4 GiB (snappy expands about 21 times at most)
    body = pa.Codec("snappy").compress(records, asbytes=True)
    forged = b"\xff\xff\xff\xff\x0f" + body[2:]  # (5003 takes a 2-byte varint)
    crc = __import__("zlib").crc32(records).to_bytes(4, "big")
    with pytest.raises(StatsError, match="m.avro: .*snappy length"):
        avro.read_container(_one_block(schema, forged + crc, "snappy"), "m.avro")
    # a deflate, bzip2 or xz stream cut short
    import bz2
    import lzma
    import zlib

    squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = squeeze.compress(records) + squeeze.flush()
    for codec, packed in (("deflate", deflated), ("bzip2", bz2.compress(records)),
                          ("xz", lzma.compress(records))):
        assert avro.read_container(_one_block(schema, packed, codec), "m.avro").count == 1
        with pytest.raises(StatsError, match="m.avro: .*ends early"):
            avro.read_container(_one_block(schema, packed[:-6], codec), "m.avro")


def test_random_damage_compiled_and_twin_agree():
    """Seeded random byte changes in valid records: the kernel and its twin agree, always
    within the buffer (the twin raises on any read outside it)."""
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "x", "type": ["null", "long"]}, {"name": "s", "type": "string"},
        {"name": "f", "type": FIXED}, {"name": "d", "type": "double"},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "a", "type": {"type": "array", "items": "fx"}},
        {"name": "b", "type": "boolean"}]}
    one = (_zz(1) + _zz(-7) + _text(b"hello") + b"abcd" + bytes(8)
           + _zz(-1) + _zz(3) + _text(b"k") + _zz(3) + _zz(0)
           + _zz(1) + b"wxyz" + _zz(0) + b"\x01")
    good = one * 3
    flat = avro.flatten(schema, lambda path: len(path) - 1 if path else -1)
    assert _run_both(good, 3, flat)[0] == k.OK
    rng = np.random.default_rng(34)
    statuses = set()
    for _ in range(300):
        raw = bytearray(good)
        for at in rng.integers(0, len(raw), rng.integers(1, 4)):
            raw[at] = int(rng.integers(0, 256))
        statuses.add(_run_both(bytes(raw), 3, flat)[0])
    for cut in range(len(good)):
        statuses.add(_run_both(good[:cut], 3, flat)[0])
    assert len(statuses) >= 4  # the damage reached several checks


def test_the_issue_manifest_no_longer_kills_the_process(catalog, tmp_path):
    """The manifest of the issue (a fixed of size -1,099,511,627,776 in its Avro schema) read
    in a child process: a StatsError naming it, not SIGSEGV."""
    table = catalog.create_table("db.hostile_fixed", schema=pa.schema([("x", pa.int64())]))
    table.append(pa.table({"x": [1, 2]}))
    path = manifest_paths(table)[0]

    def hostile(schema):  # the partition record becomes a fixed of a negative size
        for f in schema["fields"]:
            if f["name"] == "data_file":
                for g in f["type"]["fields"]:
                    if g["name"] == "partition":
                        g["type"] = {"type": "fixed", "name": "p", "size": -1_099_511_627_776}
        return schema
    rewrite_avro(path, schema=hostile)
    script = textwrap.dedent(f"""
        import prune_engine as pe
        from pyiceberg.catalog.sql import SqlCatalog
        catalog = SqlCatalog("t", **{dict(catalog.properties)!r})
        try:
            pe.stats_from_iceberg(catalog, "db.hostile_fixed")
        except pe.StatsError as e:
            print("REFUSED", e)
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.startswith("REFUSED") and path.rsplit("/", 1)[-1] in child.stdout
