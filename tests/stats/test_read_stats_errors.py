"""``pe.read_stats`` names the file and what is wrong with it, before any statistics are used.

A saved file carries a checksum of all its bytes (format version 2): a flipped bit anywhere is
refused whole. Its metadata and columns must have the shape their readers rely on, in version
1 files (no checksum) too.
"""

from __future__ import annotations

import base64
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.errors import StatsFileNotFoundError

STATS = pa.table({"container": ["a"], "num_records": [3], "min_values": [{"x": 1}],
                  "max_values": [{"x": 2}], "null_count": [{"x": 0}]})


def test_a_missing_file_is_a_file_not_found_error_naming_it(tmp_path):
    path = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError) as err:
        pe.read_stats(path)
    assert isinstance(err.value, StatsFileNotFoundError)
    assert isinstance(err.value, pe.StatsError), "one error family: also a StatsError"
    assert str(err.value) == f"{path}: no such statistics file", "says what and where"
    assert err.value.path == err.value.filename == str(path)
    assert err.value.containers == [str(path)]


def test_a_relative_missing_path_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StatsFileNotFoundError, match=r"^nope\.parquet: no such statistics file$"):
        pe.read_stats("nope.parquet")


def test_a_directory_is_not_read_as_a_dataset(tmp_path):
    pq.write_table(pa.table({"x": list(range(10))}), tmp_path / "data.parquet")
    with pytest.raises(pe.StatsError, match="a directory, not a statistics file"):
        pe.read_stats(tmp_path)


@pytest.mark.parametrize("content, message", [
    (b"", "not a readable statistics file"),
    (b"PAR1 garbage", "not a readable statistics file"),
])
def test_a_file_that_is_not_parquet(tmp_path, content, message):
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    with pytest.raises(pe.StatsError, match=message) as err:
        pe.read_stats(path)
    assert str(err.value).startswith(f"{path}: ")
    assert not isinstance(err.value, FileNotFoundError)


def test_parquet_data_is_refused_from_its_footer(tmp_path, monkeypatch):
    """A data file is recognised from its schema: its rows are never read."""
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"x": list(range(10))}), path)

    def no_read(*args, **kwargs):
        raise AssertionError("read_stats read the rows of a file that is no statistics file")

    monkeypatch.setattr(pq, "read_table", no_read)
    with pytest.raises(pe.StatsError, match="not a prune_engine statistics file"):
        pe.read_stats(path)


def test_saved_statistics_round_trip(tmp_path):
    path = tmp_path / "stats.parquet"
    pe.StatsTable(STATS, {"k": [1, 2]}).save(path)
    back = pe.read_stats(str(path))
    assert back.table.equals(STATS) and back.metadata == {"k": [1, 2]}
    assert back.table.schema.metadata is None, "the format keys are not left in the schema"


# ------------------------------------------------------------------------------ checksum and shape


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """The fuzzer's lake (:mod:`tests.corrupt.corpus`): two Parquet files as pyarrow writes them."""
    from tests.corrupt.corpus import write_lake

    folder = tmp_path_factory.mktemp("lake") / "lake"
    write_lake(folder)
    return folder


@pytest.fixture(scope="module")
def collected(lake):
    """Their statistics as collect_stats makes them (Bloom filters, value sets, n-grams: every
    metadata key it writes)."""
    from tests.corrupt.corpus import lake_stats

    return lake_stats(lake)


def assert_refused(path, *fragments):
    """``read_stats(path)`` raises a StatsError (not FileNotFoundError): one line of at most
    400 characters, starting with the file's name, holding each of ``fragments``."""
    with pytest.raises(pe.StatsError) as err:
        pe.read_stats(path)
    message = str(err.value)
    assert not isinstance(err.value, FileNotFoundError)
    assert "\n" not in message and len(message) <= 400, f"one short line: {message!r}"
    assert message.startswith(f"{path}: "), f"names the file first: {message!r}"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} in {message!r}"
    return message


def test_collected_statistics_round_trip_and_carry_their_checksum(collected, tmp_path):
    path = tmp_path / "stats.parquet"
    collected.save(path)
    footer = pq.read_metadata(path).metadata
    assert footer[b"prune_engine.stats_format"] == b"2"
    assert len(footer[b"prune_engine.checksum"]) == 64, "a BLAKE2b-256 digest in hex"
    back = pe.read_stats(path)
    assert back.table.equals(collected.table) and back.metadata == collected.metadata
    assert back.table.schema.metadata is None, "the format keys are not left in the schema"


def test_a_version_1_file_without_checksum_still_reads(collected, lake, tmp_path):
    """Files saved before the checksum existed: read, their metadata shape-checked."""
    from tests.corrupt.corpus import write_version_1

    path = tmp_path / "old.parquet"
    write_version_1(collected.table, collected.metadata, path)
    assert b"prune_engine.checksum" not in pq.read_metadata(path).metadata
    back = pe.read_stats(path)
    assert back.table.equals(collected.table) and back.metadata == collected.metadata
    refreshed = pe.update_stats(back, str(lake), progress=False)
    assert refreshed.metadata["refresh"]["reused"] == 2, "its recorded identities still match"


def test_every_flipped_bit_and_every_cut_is_refused_whole(collected, tmp_path):
    """A sample of single-bit flips over the whole file (every byte of the footer), and
    truncations: each a StatsError naming the file, never a raw error and never a table."""
    path = tmp_path / "stats.parquet"
    collected.save(path)
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    positions = sorted(set(range(0, len(data), max(1, len(data) // 150)))
                       | set(range(len(data) - 8 - footer, len(data), 7)))
    bad = tmp_path / "bad.parquet"
    for i, pos in enumerate(positions):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (i % 8)
        bad.write_bytes(bytes(flipped))
        assert_refused(bad)
    for cut in (len(data) - 1, len(data) - 8, len(data) // 2, 12, 4, 0):
        bad.write_bytes(data[:cut])
        assert_refused(bad)
    bad.write_bytes(data + b"\0")
    assert_refused(bad)


def test_a_flip_in_the_data_pages_is_refused_by_the_checksum(collected, tmp_path):
    """A byte of a data page that pyarrow reads without complaint (no page CRC is checked):
    only the checksum sees it."""
    path = tmp_path / "stats.parquet"
    collected.save(path)
    data = bytearray(path.read_bytes())
    meta = pq.read_metadata(path)
    chunk = meta.row_group(0).column(meta.schema.names.index("num_records"))
    data[chunk.data_page_offset + chunk.total_compressed_size - 1] ^= 0x01  # last value byte
    path.write_bytes(bytes(data))
    assert_refused(path, "corrupt statistics file: its checksum does not match its content")


@pytest.mark.parametrize("edit", ["drop the checksum", "zeros", "shorter", "version 1"])
def test_a_checksum_that_is_missing_or_altered_is_refused(collected, tmp_path, edit):
    from prune_engine.stats import io as stats_io, layout

    path = tmp_path / "stats.parquet"
    table = collected.table.replace_schema_metadata({
        layout.FORMAT_VERSION_KEY: b"2",
        stats_io.METADATA_KEY: json.dumps(collected.metadata).encode()})
    sealed = stats_io.seal(table)
    digest = pq.read_metadata(pa.BufferReader(sealed)).metadata[stats_io.CHECKSUM_KEY]
    if edit == "drop the checksum":  # what version 2 promises, missing
        pq.write_table(table, path)
        assert_refused(path, "format version 2 carries a checksum, and this file has none")
        return
    if edit == "zeros":
        path.write_bytes(sealed.replace(digest, b"0" * 64))
    elif edit == "shorter":  # a digest of other length: the footer changes around it
        writer_sink = pa.BufferOutputStream()
        with pq.ParquetWriter(writer_sink, table.schema) as writer:
            writer.write_table(table)
            writer.add_key_value_metadata({stats_io.CHECKSUM_KEY: digest[:40]})
        path.write_bytes(writer_sink.getvalue().to_pybytes())
    else:  # the version downgraded to 1 (no checksum then): the checksum still binds it
        path.write_bytes(_with_version(sealed, b"1"))
    assert_refused(path, "corrupt statistics file")


def _with_version(data: bytes, version: bytes) -> bytes:
    """``data`` with the format version's value in the footer's key-value list replaced
    (same length), the checksum left as it was."""
    from prune_engine.stats import layout

    key = layout.FORMAT_VERSION_KEY + b"\x18\x01"
    at = data.rindex(key) + len(key)
    return data[:at] + version + data[at + 1:]


def _flipped_schema(text: str) -> str:
    """A recorded schema with the first bit of its IPC bytes flipped: pyarrow then raises a
    plain OSError ("negative continuation token"), not an ArrowException."""
    blob = bytearray(base64.b64decode(text))
    blob[0] ^= 1
    return base64.b64encode(bytes(blob)).decode()


#: metadata edits, each made where a reader would have tripped on it
SHAPES = [
    (lambda m: m.update(files=[1, 2]), 'metadata["files"] should be an object'),
    (lambda m: m["files"].update({"x.parquet": [10, "5"]}),
     'metadata["files"]["x.parquet"][1] should be an integer or null'),
    (lambda m: m["files"].update({"x.parquet": [1, 2, 3, 4, 5]}), "at most 4 integers"),
    (lambda m: m.update(schemas={"k": "not base64!"}), "is not an Arrow schema in base64"),
    (lambda m: m.update(schemas={"k": "AAAA"}), "is not an Arrow schema in base64"),
    (lambda m: m["schemas"].update({k: _flipped_schema(v) for k, v in m["schemas"].items()}),
     "is not an Arrow schema in base64"),
    (lambda m: m.pop("schemas"), 'metadata["footers"] needs metadata["schemas"]'),
    (lambda m: next(iter(m["footers"].values())).__setitem__(1, 2**40),
     "should be an integer in 0..2**31-1"),
    (lambda m: next(iter(m["footers"].values())).__setitem__(1, 10**6), "row groups in a file of"),
    (lambda m: next(iter(m["footers"].values())).pop(), "should be [schema id, row groups]"),
    (lambda m: m.update(skipped_files=[{"path": "a"}]), "lacks 'error'"),
    (lambda m: m["collect"].update(granularity="page"), "'row_group', 'file' or null"),
    (lambda m: m["collect"].update(gram_size="3"), "should be an integer in 1..8"),
    (lambda m: m["collect"].update(bloom=5), "null, true or a list of names"),
    (lambda m: m["collect"].update(ngram="s"), "null or a list of names"),
    (lambda m: m["collect"].update(dictionary_bytes=0), "should be a positive integer"),
    (lambda m: m.update(collect=None), 'metadata["collect"] should be an object'),
    (lambda m: m["bloom"].pop("problems"), "lacks 'problems'"),
    (lambda m: m["bloom"].update(bytes_read=-1), "should be an integer in 0..2**63-1"),
    (lambda m: m.update(untrusted_statistics={"a": []}), "at least 1 item(s)"),
    (lambda m: m.update(untrusted_statistics=7), "should be an object"),
    (lambda m: m.update(refresh={"reused": 1}), "lacks 'changed'"),
    (lambda m: m.update(delta={"table": 5}), "should be a string or null"),
    (lambda m: m.update(iceberg={"deletes": {}}), "should be a list"),
]


@pytest.mark.parametrize("edit, why", SHAPES, ids=[why for _, why in SHAPES])
@pytest.mark.parametrize("version", [1, 2])
def test_metadata_of_the_wrong_shape_is_refused_naming_the_file(collected, tmp_path, edit,
                                                                 why, version):
    """Version 2 files behind a valid checksum (a writer's bug, or a forger) and version 1
    files alike: the shape is checked before any statistics are returned."""
    from prune_engine.stats import io as stats_io, layout
    from tests.corrupt.corpus import write_version_1

    metadata = json.loads(json.dumps(collected.metadata))
    edit(metadata)
    path = tmp_path / "stats.parquet"
    if version == 1:
        write_version_1(collected.table, metadata, path)
    else:
        path.write_bytes(stats_io.seal(collected.table.replace_schema_metadata({
            layout.FORMAT_VERSION_KEY: b"2",
            stats_io.METADATA_KEY: json.dumps(metadata).encode()})))
    assert_refused(path, "corrupt statistics metadata: ", why)


@pytest.mark.parametrize("text, why", [
    ('{"files": ', "not JSON"), ("[1, 2]", "the metadata should be an object"),
    ("[" * 3000 + "]" * 3000, "not JSON"), ('"\\ud800"', "the metadata should be an object"),
])
def test_metadata_that_is_not_a_json_object_is_refused(tmp_path, text, why):
    from tests.corrupt.corpus import version_1_bytes

    path = tmp_path / "stats.parquet"
    path.write_bytes(version_1_bytes(STATS, text))
    assert_refused(path, why)


@pytest.mark.parametrize("column, values, why", [
    ("container", pa.array([1]), "column 'container' should hold strings, not int64"),
    ("path", pa.array([b"a"]), "column 'path' should hold strings, not binary"),
    ("row_group", pa.array(["0"]), "column 'row_group' should hold integers, not string"),
    ("num_records", pa.array(["3"]), "column 'num_records' must be an integer type"),
    ("null_count", pa.array([{"x": "0"}]), "count column 'null_count.x' must be an integer"),
    ("max_values", pa.array([{"x": "2"}]), "min_values.x is int64 but max_values.x is string"),
    ("ngram_index", pa.array([{"x": 1}]), "index column 'ngram_index.x' must be binary"),
])
def test_columns_of_the_wrong_type_are_refused(tmp_path, column, values, why):
    from tests.corrupt.corpus import write_version_1

    table = STATS.drop_columns([column]) if column in STATS.column_names else STATS
    table = table.append_column(column, values)
    path = tmp_path / "stats.parquet"
    write_version_1(table, {}, path)
    assert_refused(path, "not a statistics table: ", why)


def test_a_table_without_bounds_still_reads(tmp_path):
    """Columns are checked where present: counts alone serve aggregate."""
    path = tmp_path / "stats.parquet"
    pe.StatsTable(pa.table({"container": ["a"], "num_records": [3]})).save(path)
    assert pe.aggregate(pe.read_stats(path), "COUNT(*)").values == {"COUNT(*)": 3}


@pytest.mark.parametrize("metadata, why", [
    ({"files": {"a": "big"}}, 'metadata["files"]["a"] should be a list'),
    ({"collect": {"gram_size": 99}}, "should be an integer in 1..8"),
])
def test_save_refuses_what_read_would_refuse(tmp_path, metadata, why):
    with pytest.raises(pe.StatsError, match=re.escape(why)):
        pe.StatsTable(STATS, metadata).save(tmp_path / "stats.parquet")
    assert not (tmp_path / "stats.parquet").exists()


def test_what_the_old_reader_let_through_now_fails_at_read_not_later(collected, tmp_path):
    """Version 1 files the previous read_stats returned, whose shape then broke scan,
    update_stats and aggregate with raw errors (binascii.Error, KeyError, AttributeError):
    refused at read."""
    from tests.corrupt.corpus import write_version_1

    for edit in (lambda m: m.update(schemas={k: "!!" for k in m["schemas"]}),
                 lambda m: m.pop("schemas"),
                 lambda m: m.update(untrusted_statistics="x"),
                 lambda m: next(iter(m["footers"].values())).__setitem__(1, 2**63)):
        metadata = json.loads(json.dumps(collected.metadata))
        edit(metadata)
        path = tmp_path / "stats.parquet"
        write_version_1(collected.table, metadata, path)
        assert_refused(path, "corrupt statistics metadata")
