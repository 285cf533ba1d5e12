"""Impossible statistics are unknown, not trusted: each field of a footer, Bloom filter and
dictionary page corrupted on purpose, the chunk that holds it kept (checked against DuckDB
reading the rows), a good chunk of the same file still pruning, one warning for the file
whatever the process read before; and the files real writers make (pyarrow, DuckDB; Spark in
:func:`test_spark_written_files_are_trusted`) are used whole."""

from __future__ import annotations

import io
import struct
import warnings
import zlib

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine._compact import read_struct
from tests.bloom.writer import needs_bloom_writer
from tests.stats import thrift_codec as tc
from tests.stats.container_oracle import check_sound

UNTRUSTED = "untrusted_statistics"


# ------------------------------------------------------------------------------ helpers


def _group(tree, r):
    return tc.get(tree, 4).value.items[r]


def _meta(tree, r, c):
    return tc.get(tc.get(_group(tree, r), 1).value.items[c], 3).value


def _stats(tree, r, c):
    return tc.get(_meta(tree, r, c), 12).value


def _set(fields, fid, typ, value):
    """Set field ``fid`` of a struct (added in order when missing)."""
    found = tc.get(fields, fid)
    if found is None:
        fields.append(tc.Field(fid, typ, value))
        fields.sort(key=lambda f: f.fid)
    else:
        found.type, found.value = typ, value


def _parquet(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def _pair(tmp_path, good: bytes, corrupt: bytes, name: str = "t.parquet"):
    """The corrupted file (to collect) and ``truth``: it -> the good file it was made of,
    whose rows the oracle reads (DuckDB refuses some corrupt footers itself)."""
    for folder in ("good", "bad"):
        (tmp_path / folder).mkdir(exist_ok=True)
    (tmp_path / "good" / name).write_bytes(good)
    path = tmp_path / "bad" / name
    path.write_bytes(corrupt)
    return path, {str(path): str(tmp_path / "good" / name)}


def _collect(path, **kw):
    """Statistics and the warnings they gave (every warning, however often seen before)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.collect_stats(str(path), progress=False, **kw)
    return stats, [str(w.message) for w in caught]


def _value_set(stats, name: str):
    """The first container's value set of ``name`` (None: unknown, or no set at all)."""
    if "value_set" not in stats.table.column_names:
        return None
    return (stats.table.column("value_set").to_pylist()[0] or {}).get(name)


def _one_warning(said: list[str], path) -> str:
    mine = [m for m in said if str(path) in m and "cannot be true" in m]
    assert len(mine) == 1, f"one warning for the file: {said}"
    assert "\n" not in mine[0] and len(mine[0]) < 400
    return mine[0]


#: two row groups of two rows; column x sorted (it prunes), b and s as each test needs
TABLE = pa.table({"x": [1, 2, 3, 4], "b": [False, True, True, True],
                  "s": ["apple", "cherry", "kiwi", "plum"]})


# ------------------------------------------------------------------------------ footer fields


def test_a_boolean_bound_byte_other_than_0_or_1_is_unknown(tmp_path):
    """The issue's case: row group 0 holds FALSE and TRUE, its min byte is 0x64. pyarrow and
    parquet-java read bit 0 (FALSE), the old code read any nonzero byte as TRUE and pruned
    ``b = FALSE``. A byte other than 0 or 1 is no value a writer of booleans writes: the chunk
    is unknown (rather than guess with one reader)."""
    good = _parquet(TABLE, row_group_size=2)
    path, truth = _pair(tmp_path, good, tc.edited(good, lambda t: _set(_stats(t, 0, 1), 6,
                                                                    tc.BINARY, b"\x64")))
    stats, said = _collect(path)
    assert "b: a boolean bound byte other than 0 or 1" in _one_warning(said, path)
    assert stats.column("min_values").to_pylist()[0]["b"] is None
    check_sound(stats, ["b = FALSE", "b = TRUE", "NOT b", "x > 2", "b IS NULL"], truth=truth,
                expect_pruned={"b = FALSE": [True, False], "x > 2": [False, True]})


@pytest.mark.parametrize("case", ["nulls above rows", "nulls above values", "min above max",
                                  "strings min above max", "NaNs above values"])
def test_impossible_counts_and_bounds_are_unknown(tmp_path, case):
    """Each impossible pair of footer fields makes that chunk unknown; the other chunks of the
    file (x of the same row group, b of the other) still prune."""
    table = TABLE.append_column("f", pa.array([0.5, 1.5, 2.5, 3.5]))

    def change(tree):
        if case == "nulls above rows":  # the issue: 57 nulls in a row group of 2 rows
            _set(_stats(tree, 0, 1), 3, tc.I64, 57)
            _set(_meta(tree, 0, 1), 5, tc.I64, 60)
        elif case == "nulls above values":
            _set(_stats(tree, 0, 1), 3, tc.I64, 3)
        elif case == "min above max":
            _set(_stats(tree, 0, 1), 6, tc.BINARY, b"\x01")
            _set(_stats(tree, 0, 1), 5, tc.BINARY, b"\x00")
        elif case == "strings min above max":
            _set(_stats(tree, 0, 2), 6, tc.BINARY, b"kiwi")  # a min above the max "cherry"
        else:
            _set(_stats(tree, 0, 3), 9, tc.I64, 3)

    good = _parquet(table, row_group_size=2)
    path, truth = _pair(tmp_path, good, tc.edited(good, change))
    stats, said = _collect(path)
    _one_warning(said, path)
    preds = ["b = FALSE", "b IS NULL", "b IS NOT NULL", "s = 'apple'", "s >= 'cherry'",
             "f > 1", "f IS NULL", "x > 2", "x = 1"]
    check_sound(stats, preds, truth=truth,
                expect_pruned={"x > 2": [False, True], "x = 1": [True, False]})
    assert pe.prune(stats, "b = FALSE").to_pylist()[0], "row group 0 holds FALSE"
    by_file, said = _collect(path, granularity="file")
    _one_warning(said, path)
    check_sound(by_file, preds, truth=truth)


@pytest.mark.parametrize("case", ["no rows", "values contradict rows", "file rows"])
def test_a_row_count_its_value_counts_contradict_is_unknown(tmp_path, case):
    """A row group of 0 rows would match nothing; a row count that its chunks' value counts
    (or the file's count) contradict is unknown, and so are those chunks."""
    def change(tree):
        if case == "no rows":
            _set(_group(tree, 0), 3, tc.I64, 0)
            _set(tree, 3, tc.I64, 2)
        elif case == "values contradict rows":
            _set(_meta(tree, 0, 0), 5, tc.I64, 1)
        else:
            _set(tree, 3, tc.I64, 7)

    good = _parquet(TABLE, row_group_size=2)
    path, truth = _pair(tmp_path, good, tc.edited(good, change))
    stats, said = _collect(path)
    _one_warning(said, path)
    assert None in stats.column("num_records").to_pylist()
    check_sound(stats, ["x = 1", "x IS NOT NULL", "x IS NULL", "b = FALSE", "s = 'apple'"],
                truth=truth)
    assert pe.prune(stats, "x IS NOT NULL").to_pylist()[0]


# ------------------------------------------------------------------------------ Bloom filters


@needs_bloom_writer
def test_a_bloom_filter_that_denies_the_chunks_own_min_is_impossible(tmp_path):
    """Even keys 0..98 with a Bloom filter; the footer's (exact) min set to 7, which the filter
    answers "absent" for: trusted, the bounds [7, 98] would prune ``k = 2``."""
    table = pa.table({"k": list(range(0, 100, 2)), "y": list(range(50))})
    data = _parquet(table, bloom_filter_options={"k": {"ndv": 50, "fpp": 0.001}})
    path, truth = _pair(tmp_path, data, tc.edited(data, lambda t: _set(
        _stats(t, 0, 0), 6, tc.BINARY, struct.pack("<q", 7))))
    stats, said = _collect(path, bloom=True)
    assert "answers 'absent' for the chunk's own min" in _one_warning(said, path)
    assert stats.table.column("bloom_filter").to_pylist() == [{"k": None}]
    check_sound(stats, ["k = 2", "k = 7", "k IN (0, 4)", "y = 100", "y = 3"], truth=truth,
                expect_pruned={"k = 2": [True], "y = 100": [False]})
    plain, said = _collect(path)
    assert not [m for m in said if "cannot be true" in m], "without bloom= no filter is read"


@needs_bloom_writer
@pytest.mark.parametrize("where", ["another chunk's pages", "past the end", "length 0",
                                   "header vs footer length"])
def test_a_bloom_filter_out_of_place_is_impossible(tmp_path, where):
    table = pa.table({"k": list(range(50)), "y": list(range(50))})
    data = _parquet(table, bloom_filter_options={"k": True})
    meta = pq.read_metadata(io.BytesIO(data)).row_group(0)
    y_pages = meta.column(1).data_page_offset

    def change(tree):
        m = _meta(tree, 0, 0)
        if where == "another chunk's pages":
            _set(m, 14, tc.I64, y_pages)
        elif where == "past the end":
            _set(m, 14, tc.I64, len(data) + 100)
        elif where == "length 0":
            _set(m, 15, tc.I32, 0)
        else:
            _set(m, 15, tc.I32, tc.get(m, 15).value + 32)

    path, truth = _pair(tmp_path, data, tc.edited(data, change))
    stats, said = _collect(path, bloom=True)
    assert "Bloom filter of k" in _one_warning(said, path)
    assert stats.column("min_values").to_pylist() == [{"k": None, "y": 0}]
    check_sound(stats, ["k = 5", "k = 500", "y = 500"], truth=truth,
                expect_pruned={"y = 500": [False], "k = 500": [True]})


@needs_bloom_writer
def test_valid_bloom_filters_of_pyarrow_and_duckdb_are_used(tmp_path):
    """Filters where the writers put them (after the last row group) are not out of place."""
    path = tmp_path / "arrow.parquet"
    path.write_bytes(_parquet(pa.table({"k": list(range(0, 3000, 3)), "s": [f"v{i % 7}" for i in
                                                                            range(1000)]}),
                              row_group_size=300, bloom_filter_options={"k": True, "s": True},
                              write_page_checksum=True))
    duck = tmp_path / "duck.parquet"
    duckdb.sql(f"COPY (SELECT i AS k, 'v' || (i % 7) AS s FROM range(5000) t(i)) TO '{duck}' "
               "(FORMAT parquet, ROW_GROUP_SIZE 2048)")
    for p in (path, duck):
        stats, said = _collect(p, bloom=True, dictionaries=True)
        assert said == [] and stats.metadata[UNTRUSTED] == {}, said
        assert any(v is not None for v in stats.table.column("bloom_filter").to_pylist())
        assert stats.column("min_values").to_pylist()[0]["k"] is not None
    stats, _ = _collect(path, bloom=True)
    assert not pe.prune(stats, "k = 4").to_pylist()[0], "the filter prunes"


# ------------------------------------------------------------------------------ dictionary pages


def _strings_file(checksum: bool = True) -> bytes:
    table = pa.table({"s": ["apple", "cherry"] * 5, "t": ["lime", "pear"] * 5, "x": range(10)})
    return _parquet(table, write_page_checksum=checksum)


def test_a_dictionary_page_whose_crc_fails_is_impossible(tmp_path):
    """A byte of the dictionary page changed ("apple" -> "bpple"): its CRC fails. Trusted, the
    set {bpple, cherry} would prune ``s = 'apple'``."""
    data = bytearray(_strings_file())
    offset = pq.read_metadata(io.BytesIO(bytes(data))).row_group(0).column(0) \
        .dictionary_page_offset
    header, at = read_struct(bytes(data), offset)
    assert header.get(4) is not None, "pyarrow wrote a CRC"
    body = data.index(b"apple", at)
    good = bytes(data)
    data[body] = ord("b")
    path, truth = _pair(tmp_path, good, bytes(data))
    stats, said = _collect(path, dictionaries=True)
    assert "CRC-32" in _one_warning(said, path)
    assert _value_set(stats, "s") is None
    assert _value_set(stats, "t") == ["lime", "pear"]
    check_sound(stats, ["s = 'apple'", "s != 'cherry'", "t = 'kiwi'"], truth=truth,
                expect_pruned={"s = 'apple'": [True], "t = 'kiwi'": [False]})


def test_a_dictionary_page_without_crc_and_one_whose_crc_matches_are_read(tmp_path):
    for checksum in (False, True):
        path = tmp_path / f"t{checksum}.parquet"
        path.write_bytes(_strings_file(checksum))
        stats, said = _collect(path, dictionaries=True)
        assert said == [] and _value_set(stats, "s") == ["apple", "cherry"]


@pytest.mark.parametrize("where", ["another chunk's dictionary", "past the end",
                                   "beyond its chunk"])
def test_a_dictionary_page_out_of_place_is_impossible(tmp_path, where):
    """s's dictionary page offset moved onto t's page (a valid page of other values: trusted,
    ``s = 'apple'`` would prune), past the end of the file, or its data pages beyond the
    chunk's bytes."""
    data = _strings_file(checksum=False)
    meta = pq.read_metadata(io.BytesIO(data)).row_group(0)

    def change(tree):
        m = _meta(tree, 0, 0)
        if where == "another chunk's dictionary":  # all of t's place: both are suspect
            _set(m, 11, tc.I64, meta.column(1).dictionary_page_offset)
            _set(m, 9, tc.I64, meta.column(1).data_page_offset)
            _set(m, 7, tc.I64, meta.column(1).total_compressed_size)
        elif where == "past the end":
            _set(m, 11, tc.I64, len(data) + 10)
            _set(m, 9, tc.I64, len(data) + 60)
        else:
            _set(m, 7, tc.I64, meta.column(0).data_page_offset
                 - meta.column(0).dictionary_page_offset)

    path, truth = _pair(tmp_path, data, tc.edited(data, change))
    stats, said = _collect(path, dictionaries=True)
    assert "dictionary page of s" in _one_warning(said, path)
    assert _value_set(stats, "s") is None
    check_sound(stats, ["s = 'apple'", "s = 'lime'", "t = 'kiwi'", "x = 100"], truth=truth,
                expect_pruned={"s = 'apple'": [True], "x = 100": [False]})
    if where != "another chunk's dictionary":
        assert _value_set(stats, "t") == ["lime", "pear"], "t's place is not in doubt"


# ------------------------------------------------------------------------------ warnings


def test_one_warning_per_file_whatever_was_read_before(tmp_path):
    """Two corrupt files and a good one of the same schema, read three times in one process
    (and the good one alone first): each time one warning per corrupt file, none for the
    good one, and the same statistics."""
    good = _parquet(TABLE, row_group_size=2)
    (tmp_path / "a_good.parquet").write_bytes(good)
    (tmp_path / "b_bad.parquet").write_bytes(
        tc.edited(good, lambda t: (_set(_stats(t, 0, 0), 3, tc.I64, 57),
                               _set(_stats(t, 1, 1), 3, tc.I64, 9))))
    (tmp_path / "c_bad.parquet").write_bytes(
        tc.edited(good, lambda t: _set(_stats(t, 1, 0), 6, tc.BINARY, struct.pack("<q", 99))))
    _collect(tmp_path / "a_good.parquet")
    first = None
    for _ in range(3):
        stats, said = _collect(tmp_path)
        for name in ("b_bad", "c_bad"):
            _one_warning(said, tmp_path / f"{name}.parquet")
        assert not [m for m in said if "a_good" in m]
        assert sorted(stats.metadata[UNTRUSTED]) == [str(tmp_path / "b_bad.parquet"),
                                                     str(tmp_path / "c_bad.parquet")]
        assert len(stats.metadata[UNTRUSTED][str(tmp_path / "b_bad.parquet")]) == 2
        first = first or stats.table
        assert stats.table.equals(first)


def test_crc_of_pyarrow_and_parquet_java_is_the_page_bytes_crc32():
    """The checksum read is zlib's CRC-32 of the compressed page bytes, signed as Thrift's i32
    stores it (what Arrow and parquet-java write)."""
    data = _strings_file()
    offset = pq.read_metadata(io.BytesIO(data)).row_group(0).column(0).dictionary_page_offset
    header, at = read_struct(data, offset)
    assert header[4] & 0xFFFFFFFF == zlib.crc32(data[at:at + header[3]])


# ------------------------------------------------------------------------------ Spark


@pytest.mark.spark
def test_spark_written_files_are_trusted(classic_spark, tmp_path):
    """parquet-java (Spark) writes its Bloom filters after the last row group, a CRC on every
    dictionary page, INT96 timestamps, nested columns: nothing is untrusted, and the filters and
    dictionaries are used."""
    out = str(tmp_path / "spark")
    frame = classic_spark.sql(
        "SELECT id AS k, concat('v', id % 7) AS s, array(id, null) AS l, "
        "named_struct('a', id % 3, 'b', concat('w', id)) AS st, "
        "timestamp'2020-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS ts "
        "FROM range(3000)").coalesce(1)
    key = "spark.sql.parquet.outputTimestampType"
    before = classic_spark.conf.get(key)
    classic_spark.conf.set(key, "INT96")
    try:
        (frame.write.option("parquet.bloom.filter.enabled#k", "true")
         .option("parquet.bloom.filter.expected.ndv#k", "2000")
         .option("parquet.block.size", 16384).parquet(out))
    finally:
        classic_spark.conf.set(key, before)
    stats, said = _collect(out, bloom=True, dictionaries=True)
    assert [m for m in said if "cannot be true" in m] == [] and stats.metadata[UNTRUSTED] == {}
    assert stats.num_rows > 1, "several row groups"
    assert all(v["k"] is not None for v in stats.table.column("bloom_filter").to_pylist())
    assert all(v["s"] is not None for v in stats.table.column("value_set").to_pylist())
    assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
