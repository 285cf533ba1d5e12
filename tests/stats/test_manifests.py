"""The Avro decoder and the Iceberg manifest reader behind ``pe.stats_from_iceberg``.

Differential: on tables PyIceberg wrote (format v1 and v2, unpartitioned and partitioned by
every transform, overwrites and deletes leaving DELETED entries, every manifest codec), the
live data files read by ``prune_engine.stats.manifests`` equal those PyIceberg's own reader
gives, field by field. Corrupt files raise ``StatsError`` naming the file, never anything else.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from pyiceberg.expressions import GreaterThan
from pyiceberg.manifest import DataFileContent, ManifestContent
from pyiceberg.transforms import IdentityTransform

import prune_engine as pe
from prune_engine.errors import StatsError
from prune_engine.stats import avro, iceberg, manifests

NAN = float("nan")


DATA = pa.table({
    "id": pa.array([1, 2, 3, None, -(2 ** 63), 2 ** 63 - 1], pa.int64()),
    "i": pa.array([-(2 ** 31), 0, 7, 2 ** 31 - 1, None, 5], pa.int32()),
    "s": ["a", "héllo wörld", "", None, "z" * 40, "日本語"],
    "b": [b"\x00", b"\xff" * 20, None, b"", b"ab", b"\x80"],
    "g": [NAN, -0.0, 0.0, 1.5, None, float("inf")],
    "f": pa.array([1.0, None, -0.0, float("-inf"), 2.5, 0.0], pa.float32()),
    "bo": [True, False, None, True, True, False],
    "d": [dt.date(1970, 1, 1), dt.date(2024, 2, 29), None, dt.date(1, 1, 1),
          dt.date(9999, 12, 31), dt.date(1969, 12, 31)],
    "ts": pa.array([0, 1, -1, None, 1_700_000_000_000_000, 86_400_000_000],
                   pa.timestamp("us")),
    "tz": pa.array([0, 3_600_000_001, None, -86_400_000_000, 5, 6], pa.timestamp("us", "UTC")),
    "de": pa.array([Decimal("1.50"), Decimal("-3.25"), None, Decimal("9999999.99"),
                    Decimal("-9999999.99"), Decimal("0.00")], pa.decimal128(9, 2)),
})

#: partition specs: name -> [(source column, transform)]
SPECS = {
    "plain": [],
    "identity": [("i", IdentityTransform()), ("s", IdentityTransform()),
                 ("bo", IdentityTransform()), ("d", IdentityTransform()),
                 ("de", IdentityTransform()), ("f", IdentityTransform())],
    # (PyIceberg 0.12 writes transform partitions only with pyiceberg-core, not installed)
    "evolved": [("ts", IdentityTransform()), ("tz", IdentityTransform()),
                ("id", IdentityTransform())],
}


def _table(catalog, name: str, spec: list, version: int = 2, codec: str | None = None):
    props = {"format-version": str(version)}
    if codec:
        props["write.avro.compression-codec"] = codec
    table = catalog.create_table(f"db.{name}", schema=DATA.schema, properties=props)
    if spec:
        with table.update_spec() as update:
            for column, transform in spec:
                update.add_field(column, transform, f"{column}_{type(transform).__name__}")
    table.append(DATA)
    table.append(DATA.slice(0, 3))
    if not spec:  # (PyIceberg fails to rewrite a partition whose rows are all deleted)
        table.overwrite(DATA.slice(0, 4))  # every file so far becomes a DELETED entry
        table.delete(GreaterThan("i", 6))  # rewrites a file: a DELETED entry, a new file
    table.append(DATA.slice(3))
    return table


def _reference(table) -> list:
    """PyIceberg's live data files of the current snapshot, in commit order."""
    files = []
    for manifest in table.current_snapshot().manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if manifest.content == ManifestContent.DATA and \
                    entry.data_file.content == DataFileContent.DATA:
                files.append((entry.sequence_number, len(files), entry.data_file))
    files.sort(key=lambda f: (-1 if f[0] is None else f[0], f[1]))
    return [f[2] for f in files]


def _maps(column: manifests.MapColumn, n: int) -> list[dict]:
    out: list[dict] = [{} for _ in range(n)]
    values = column.value.to_pylist() if isinstance(column.value, pa.Array) else \
        column.value.tolist()
    for f, key, value in zip(column.file.tolist(), column.key.tolist(), values):
        out[f][key] = value
    return out


def _check_against_pyiceberg(table) -> None:
    listed = manifests.manifest_list(table.io, table.current_snapshot())
    assert [(m.manifest_path, m.partition_spec_id, m.content, m.sequence_number)
            for m in listed] == [(m.manifest_path, m.partition_spec_id, int(m.content),
                                  m.sequence_number) for m in
                                 table.current_snapshot().manifests(table.io)]
    ours = manifests.data_files(table.io, listed)
    ref = _reference(table)
    n = len(ref)
    assert len(ours.paths) == n > 0
    assert ours.paths.to_pylist() == [f.file_path for f in ref]
    assert ours.record_count.tolist() == [f.record_count for f in ref]
    assert ours.split_counts.tolist() == [len(f.split_offsets) if f.split_offsets else -1
                                          for f in ref]
    assert ours.spec_ids.tolist() == [f.spec_id for f in ref]
    for map_id, attr in ((manifests.NULL_COUNTS, "null_value_counts"),
                         (manifests.NAN_COUNTS, "nan_value_counts"),
                         (manifests.LOWER_BOUNDS, "lower_bounds"),
                         (manifests.UPPER_BOUNDS, "upper_bounds")):
        assert _maps(ours.maps[map_id], n) == [dict(getattr(f, attr) or {}) for f in ref], attr
    schema, specs = table.schema(), table.specs()
    for record, f in zip(ours.partitions, ref):
        spec = specs[f.spec_id]
        for pos, pf in enumerate(spec.fields):
            rtype = pf.transform.result_type(schema.find_type(pf.source_id))
            mine = iceberg._normalize(rtype, iceberg._partition_value(rtype,
                                                                      record[pf.field_id]))
            theirs = iceberg._normalize(rtype, f.partition[pos])
            assert mine == theirs or (mine is None and theirs is None), (pf.name, mine, theirs)


@pytest.mark.parametrize("spec", list(SPECS))
@pytest.mark.parametrize("version", [1, 2])
def test_data_files_equal_pyiceberg(catalog, spec, version):
    table = _table(catalog, f"{spec}_v{version}", SPECS[spec], version)
    _check_against_pyiceberg(table)
    stats = pe.stats_from_iceberg(table)
    assert stats.num_rows == len(_reference(table))
    footers = pe.collect_stats(stats.column("path").to_pylist(), granularity="file",
                               progress=False)
    for pred in ("id = 2", "i > 6", "s = 'a'", "g > 1", "d < DATE '1970-01-01'", "de = 1.5",
                 "bo IS NULL", "s IS NULL", "ts >= TIMESTAMP '1970-01-02 00:00:00'"):
        kept = pe.prune(stats, pred).to_pylist()
        by_footer = dict(zip(footers.column("path").to_pylist(), pe.prune(footers, pred)
                             .to_pylist()))
        for path, keep in zip(stats.column("path").to_pylist(), kept):
            assert keep or not by_footer[path], (pred, path)


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2"])
def test_manifest_codecs_written_by_pyiceberg(catalog, codec):
    _check_against_pyiceberg(_table(catalog, f"codec_{codec}", SPECS["identity"], 2, codec))


# -- the container format itself ----------------------------------------------------------------


_zz, _text = avro.zigzag, avro.text
SYNC = bytes(range(100, 116))


def _container(schema, records: bytes, count: int, codec: str = "null") -> bytes:
    return avro.write_container(schema, records, count, codec, SYNC)


SCHEMA = {"type": "record", "name": "r", "fields": [
    {"name": "x", "type": ["null", "long"]},
    {"name": "s", "type": "string"},
    {"name": "f", "type": {"type": "fixed", "name": "f3", "size": 3}},
    {"name": "d", "type": "double"},
    {"name": "m", "type": {"type": "map", "values": "int"}},
    {"name": "a", "type": {"type": "array", "items": "f3"}},  # a named type, by name
    {"name": "e", "type": {"type": "enum", "name": "e", "symbols": ["A", "B"]}},
    {"name": "bo", "type": "boolean"},
]}
WANT = {("x",): 0, ("s",): 1, ("f",): 2, ("d",): 3, ("m", "key"): 4, ("m", "value"): 5,
        ("a", "element"): 6, ("e",): 7, ("bo",): 8}


def _record(x, s: bytes, f: bytes, d: float, m: dict, a: list, e: int, bo: bool) -> bytes:
    out = (_zz(0) if x is None else _zz(1) + _zz(x)) + _text(s) + f
    out += np.float64(d).tobytes()
    out += (_zz(len(m)) + b"".join(_text(k) + _zz(v) for k, v in m.items()) + _zz(0)) if m \
        else _zz(0)
    out += (_zz(-len(a)) + _zz(3 * len(a)) + b"".join(a) + _zz(0)) if a else _zz(0)
    return out + _zz(e) + bytes([bo])


RECORDS = [(None, b"", b"abc", -0.0, {}, [], 0, False),
           (2 ** 63 - 1, "日本".encode(), b"\x00\x00\x00", NAN, {b"k": -1, b"": 2 ** 31 - 1},
            [b"xyz", b"\xff\xfe\xfd"], 1, True),
           (-(2 ** 63), b"z" * 300, b"\x01\x02\x03", float("inf"), {b"a": 0}, [b"123"], 0, True)]


def _decode(raw: bytes) -> avro.Tape:
    container = avro.read_container(raw, "t.avro")
    return avro.decode(container, avro.flatten(container.schema, lambda p: WANT.get(p, -1)),
                       "t.avro")


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"])
def test_every_codec_and_type(codec):
    raw = _container(SCHEMA, b"".join(_record(*r) for r in RECORDS), len(RECORDS), codec)
    tape = _decode(raw)
    assert tape.count == 3
    rec, x = tape.ints(0)
    assert rec.tolist() == [1, 2] and x.tolist() == [2 ** 63 - 1, -(2 ** 63)]
    assert tape.entries(0)[2][0] == -1  # the null
    assert [bytes(b) for b in tape.bytes(1)[1]] == [r[1] for r in RECORDS]
    assert [bytes(b) for b in tape.bytes(2)[1]] == [r[2] for r in RECORDS]
    pos = tape.entries(3)[2]
    d = np.concatenate([tape.data[p:p + 8].view("<f8") for p in pos])
    assert d[0] == 0 and np.signbit(d[0]) and np.isnan(d[1]) and d[2] == np.inf
    assert [bytes(b) for b in tape.bytes(4)[1]] == [b"k", b"", b"a"]
    assert tape.ints(5)[1].tolist() == [-1, 2 ** 31 - 1, 0]
    assert tape.entries(6)[0].tolist() == [1, 1, 2]
    assert tape.ints(7)[1].tolist() == [0, 1, 0] and tape.ints(8)[1].tolist() == [0, 1, 1]


def _fails(raw: bytes) -> None:
    with pytest.raises(StatsError, match="t.avro"):
        _decode(raw)


def test_malformed_files_raise_a_clear_error():
    good = _container(SCHEMA, b"".join(_record(*r) for r in RECORDS), len(RECORDS))
    _decode(good)
    _fails(b"Obj\x02" + good[4:])
    _fails(good[:-1])  # the last sync marker cut
    _fails(good[:-20])
    _fails(good[:-16] + bytes(16))  # a sync marker that does not match
    _fails(good + b"\x00")  # a byte after the last block
    records = b"".join(_record(*r) for r in RECORDS)
    _fails(_container(SCHEMA, records + b"\x00", 3))  # bytes after the last record
    _fails(_container(SCHEMA, records, 4))  # a record that is not there
    _fails(_container(SCHEMA, b"\x04" + records[1:], 3))  # union branch 2 of 2
    _fails(_container(SCHEMA, records[:-1] + b"\x80" * 11, 3))  # an endless varint
    _fails(_container(SCHEMA, records, 3, "deflate")[:-40] + bytes(24) + SYNC)
    _fails(_container(SCHEMA, records, 3, "snappy").replace(SYNC, b"", 1)[:10])
    with pytest.raises(StatsError, match="codec"):
        _decode(_container(SCHEMA, records, 3).replace(b"\x08null", b"\x08lzma"))
    selfref = {"type": "record", "name": "n", "fields": [{"name": "next", "type": "n"}]}
    with pytest.raises(StatsError, match="itself"):
        avro.flatten(selfref, lambda p: -1)
    with pytest.raises(StatsError, match="unknown type"):
        avro.flatten({"type": "record", "name": "r", "fields": [{"name": "a", "type": "q"}]},
                     lambda p: -1)


def test_random_damage_is_an_error_or_a_decoding_never_a_crash():
    """Every truncation and 2,000 seeded random byte changes: StatsError or a tape."""
    good = _container(SCHEMA, b"".join(_record(*r) for r in RECORDS), len(RECORDS), "deflate")
    rng = np.random.default_rng(7)
    damaged = [good[:cut] for cut in range(len(good))]
    for _ in range(2_000):
        raw = bytearray(good)
        for at in rng.integers(0, len(raw), rng.integers(1, 4)):
            raw[at] = int(rng.integers(0, 256))
        damaged.append(bytes(raw))
    for raw in damaged:
        try:
            _decode(raw)
        except StatsError:
            pass


def test_a_corrupt_manifest_names_the_file(catalog):
    table = _table(catalog, "corrupt", [])
    manifest = next(iter(table.current_snapshot().manifests(table.io)))
    path = manifest.manifest_path.removeprefix("file://")
    with open(path, "r+b") as f:
        f.truncate(200)
    with pytest.raises(StatsError, match="avro"):
        pe.stats_from_iceberg(table)


def test_local_paths():
    paths = pa.array(["file:///a/b c.parquet", "file://localhost/x", "file:/y", "s3://b/k",
                      "/plain", "file://host/z", "file:///q?x#f", None])
    assert iceberg._local_paths(paths).to_pylist() == [
        "/a/b c.parquet", "/x", "/y", "s3://b/k", "/plain", "file://host/z", "/q", None]
