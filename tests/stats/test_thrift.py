"""The numba footer decoder against a plain-Python Thrift decoder, on footers written by pyarrow,
DuckDB and (in test_spark_parquet) Spark, and on edited footers: unknown fields of every type,
long field headers, no column orders, one-sided bounds, wrong physical types, corruption."""

from __future__ import annotations

import copy
import io
import struct

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats import _thrift as T
from prune_engine.stats.parquet import group_stats, read_footer
from tests.budget import examples
from tests.stats import thrift_codec as tc
from tests.stats.thrift_codec import assert_kernel_matches, footer_of, kernel
from tests.stats.stats_oracle import check_against_rows, rows
from tests.stats.test_parquet import rich_table

MAGIC = b"PAR1"


def framed(footer: bytes) -> bytes:
    """A footer as a file of its own (no data pages: only footers are ever read)."""
    return MAGIC + footer + struct.pack("<I", len(footer)) + MAGIC


def parquet_bytes(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


# ------------------------------------------------------------------------------ real footers


def _pyarrow_files() -> dict[str, bytes]:
    rich = rich_table(120, 3)
    strings = pa.table({"s": ["a", "x" * 5000, None, "b"], "i": [1, 2, None, 4]})
    return {
        "rich": parquet_bytes(rich, row_group_size=40),
        "rich-page-index": parquet_bytes(rich, row_group_size=50, write_page_index=True),
        "stats-off": parquet_bytes(rich, write_statistics=False),
        "long-strings": parquet_bytes(strings, row_group_size=2),
        "int96": parquet_bytes(pa.table({"t": pa.array([1, None], pa.timestamp("ns"))}),
                               use_deprecated_int96_timestamps=True),
        "empty": parquet_bytes(pa.table({"x": pa.array([], pa.int64())})),
        "many-row-groups": parquet_bytes(pa.table({"x": np.arange(300)}), row_group_size=7),
        "format-1.0": parquet_bytes(rich.select(["i64", "s", "f64"]), version="1.0"),
    }


PYARROW_FILES = _pyarrow_files()


@pytest.mark.parametrize("name", list(PYARROW_FILES))
def test_kernel_reads_what_python_reads_pyarrow_footers(name):
    assert_kernel_matches(footer_of(PYARROW_FILES[name]))


def test_kernel_reads_what_python_reads_duckdb_footers(tmp_path):
    path = str(tmp_path / "d.parquet")
    duckdb.sql(f"""COPY (SELECT i, i::VARCHAR AS s, i / 7 AS d, [i, NULL] AS l,
                  {{'a': i, 'b': 'x' || i}} AS st, MAP {{'k': i}} AS m,
                  (i * 1.5)::DECIMAL(18, 3) AS dec, uuid() AS u,
                  TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i) HOUR AS ts
                  FROM range(1000) t(i)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 300)""")
    data = open(path, "rb").read()
    assert_kernel_matches(footer_of(data))
    stats = pe.collect_stats(path, progress=False)
    check_against_rows(path, stats)


# ------------------------------------------------------------------------------ edited footers

UNKNOWN = [  # one field of every type, at ids no Parquet version uses
    tc.Field(40, tc.TRUE, True), tc.Field(41, tc.FALSE, False), tc.Field(42, tc.BYTE, -5),
    tc.Field(43, tc.I16, -300), tc.Field(44, tc.I32, 70000), tc.Field(45, tc.I64, -(2**40)),
    tc.Field(46, tc.DOUBLE, 2.5), tc.Field(47, tc.BINARY, b"\x00\xff" * 9),
    tc.Field(48, tc.LIST, tc.Seq(tc.TRUE, [True, False, True])),
    tc.Field(49, tc.SET, tc.Seq(tc.I64, list(range(20)), tc.SET)),
    tc.Field(50, tc.MAP, tc.Map(tc.BINARY, tc.STRUCT, [(b"k", [tc.Field(1, tc.I32, 3)])])),
    tc.Field(51, tc.MAP, tc.Map(0, 0, [])),
    tc.Field(52, tc.STRUCT, [tc.Field(1, tc.LIST, tc.Seq(tc.STRUCT, [[tc.Field(2, tc.DOUBLE,
                                                                                1.0)]]))]),
]


def _structs(tree):
    """FileMetaData and, in it, every RowGroup, ColumnChunk, ColumnMetaData, Statistics."""
    yield tree
    for group in tc.get(tree, 4).value.items:
        yield group
        for chunk in tc.get(group, 1).value.items:
            yield chunk
            meta = tc.get(chunk, 3).value
            yield meta
            if tc.get(meta, 12):
                yield tc.get(meta, 12).value


def _statistics(tree):
    """Every chunk's Statistics struct."""
    for group in tc.get(tree, 4).value.items:
        for chunk in tc.get(group, 1).value.items:
            stats = tc.get(tc.get(chunk, 3).value, 12)
            if stats:
                yield stats.value


def _stats_of(footer: bytes) -> pa.Table:
    top, _, _ = group_stats([read_footer(pa.BufferReader(framed(footer)), "x")], "row_group")
    return pa.table({s.min_field.name: s.mins for s in top} | {
        f"max_{s.min_field.name}": s.maxs for s in top} | {
        f"nulls_{s.min_field.name}": s.nulls for s in top})


@pytest.mark.parametrize("long_headers", [False, True])
def test_unknown_fields_of_every_type_are_skipped(long_headers):
    footer = footer_of(PYARROW_FILES["rich"])
    tree = tc.decode(footer)
    for s in _structs(tree):
        s.extend(copy.deepcopy(UNKNOWN))
    edited = tc.encode(tree, long_headers=long_headers)
    assert len(edited) > len(footer) + 100
    assert_kernel_matches(edited)
    assert _stats_of(edited).equals(_stats_of(footer)), "the same statistics"


def test_without_column_orders_only_signed_deprecated_bounds_count():
    table = pa.table({"i": pa.array([5, -3, None], pa.int64()), "f": [1.5, -0.5, None],
                      "u": pa.array([1, 2**63 + 1, 7], pa.uint64()), "s": ["b", "a", None],
                      "b": [True, False, None]})
    footer = footer_of(parquet_bytes(table))
    tree = tc.decode(footer)
    tree[:] = [f for f in tree if f.fid != 7]  # no column orders: an old writer
    for s in _statistics(tree):
        for f in s:  # min_value / max_value become the deprecated min / max
            if f.fid in (5, 6):
                f.fid -= 4
        s.sort(key=lambda f: f.fid)
    got = _stats_of(tc.encode(tree)).to_pylist()[0]
    assert (got["i"], got["max_i"]) == (-3, 5), "signed integers: the deprecated order is right"
    assert (got["f"], got["max_f"]) == (-0.5, 1.5)
    assert (got["b"], got["max_b"]) == (False, True)
    assert (got["u"], got["max_u"]) == (None, None), "unsigned: compared as signed, unknown"
    assert (got["s"], got["max_s"]) == (None, None), "strings: byte order unknown, unknown"
    assert got["nulls_s"] == 1, "null counts stay"


def test_deprecated_bounds_are_ignored_with_column_orders():
    footer = footer_of(parquet_bytes(pa.table({"i": [5, 9]})))
    tree = tc.decode(footer)
    for s in _statistics(tree):
        s[:] = [f for f in s if f.fid not in (5, 6)] + [
            tc.Field(1, tc.BINARY, struct.pack("<q", 9)),
            tc.Field(2, tc.BINARY, struct.pack("<q", 5))]
        s.sort(key=lambda f: f.fid)
    got = _stats_of(tc.encode(tree)).to_pylist()[0]
    assert (got["i"], got["max_i"]) == (None, None), "as pyarrow: type order means min_value"


def test_one_missing_side_is_unknown_on_that_side_only():
    footer = footer_of(parquet_bytes(pa.table({"i": [5, 9], "s": ["m", "q"]})))
    tree = tc.decode(footer)
    for s in _statistics(tree):
        s[:] = [f for f in s if f.fid != 5]  # drop max_value
    got = _stats_of(tc.encode(tree)).to_pylist()[0]
    assert (got["i"], got["max_i"], got["s"], got["max_s"]) == (5, None, "m", None)


def test_a_chunk_of_another_physical_type_is_unknown():
    footer = footer_of(parquet_bytes(pa.table({"i": [5, 9], "j": [1, 2]})))
    tree = tc.decode(footer)
    chunk = tc.get(tc.get(tree, 4).value.items[0], 1).value.items[0]
    tc.get(tc.get(chunk, 3).value, 1).value = 1  # INT32 where the schema says INT64
    got = _stats_of(tc.encode(tree)).to_pylist()[0]
    assert (got["i"], got["max_i"], got["nulls_i"]) == (None, None, None)
    assert (got["j"], got["max_j"]) == (1, 2)


def test_wrong_width_bounds_are_unknown():
    footer = footer_of(parquet_bytes(pa.table({"i": [5, 9]})))
    tree = tc.decode(footer)
    for s in _statistics(tree):
        tc.get(s, 6).value = b"\x05\x00\x00"  # 3 bytes for an INT64
    got = _stats_of(tc.encode(tree)).to_pylist()[0]
    assert (got["i"], got["max_i"]) == (None, 9)


def test_row_groups_with_different_column_counts_are_an_error():
    footer = footer_of(parquet_bytes(pa.table({"i": [5, 9, 1], "j": [1, 2, 3]}),
                                     row_group_size=2))
    tree = tc.decode(footer)
    columns = tc.get(tc.get(tree, 4).value.items[1], 1).value
    columns.items = columns.items[:1]
    with pytest.raises(ValueError, match="malformed"):
        kernel(tc.encode(tree))


# ------------------------------------------------------------------------------ corruption


def _check_never_out_of_bounds(footer: bytes) -> None:
    try:
        info, chunks, counts = kernel(footer)
    except ValueError:
        return
    for off_slot in (T.C_MIN_OFF, T.C_MAX_OFF, T.C_OLD_MIN_OFF, T.C_OLD_MAX_OFF):
        size = chunks[:, off_slot + 1]
        has = size >= 0
        assert (chunks[has, off_slot] >= 0).all()
        assert (chunks[has, off_slot] + size[has] <= len(footer)).all()
    assert len(chunks) == len(counts) * max(info[T.F_COLUMNS], 0)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["rich", "long-strings", "many-row-groups"]), st.data())
def test_corrupt_footers_raise_or_stay_in_bounds(name, data):
    footer = bytearray(footer_of(PYARROW_FILES[name]))
    kind = data.draw(st.sampled_from(["truncate", "flip", "splice"]))
    if kind == "truncate":
        footer = footer[:data.draw(st.integers(0, len(footer) - 1))]
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            at = data.draw(st.integers(0, len(footer) - 1))
            footer[at] = data.draw(st.integers(0, 255))
    else:
        at = data.draw(st.integers(0, len(footer)))
        footer[at:at] = data.draw(st.binary(min_size=1, max_size=40))
    _check_never_out_of_bounds(bytes(footer))


def test_a_truncated_footer_is_a_clear_error(tmp_path):
    data = PYARROW_FILES["rich"]
    footer = footer_of(data)
    path = str(tmp_path / "cut.parquet")
    with open(path, "wb") as f:
        f.write(framed(footer[: len(footer) // 2]))
    with pytest.raises(pe.StatsError, match="cut.parquet: not a readable Parquet file: "
                                            "corrupt footer"):
        pe.collect_stats(path, progress=False)


@pytest.mark.parametrize("tail, message", [
    (b"PAR1", "a Parquet file has at least 12 bytes"),
    (b"xxxxxxxxxxxxxxxxxxxxPARE", "encrypted"),
    (b"xxxxxxxxxxxxxxxxxxxxPAR2", "no Parquet magic"),
    (b"PAR1" + b"\x00" * 8 + struct.pack("<I", 1000) + b"PAR1", "exceeds the file"),
])
def test_bad_file_tails(tmp_path, tail, message):
    path = str(tmp_path / "bad.parquet")
    with open(path, "wb") as f:
        f.write(tail)
    with pytest.raises(pe.StatsError, match=message):
        pe.collect_stats(path, progress=False)


def test_footer_sources_agree(tmp_path):
    """A path, a NativeFile and a Python file object give the same statistics."""
    data = PYARROW_FILES["rich"]
    path = str(tmp_path / "r.parquet")
    with open(path, "wb") as f:
        f.write(data)
    by_path = read_footer(path, "r")
    for source in (pa.BufferReader(data), io.BytesIO(data)):
        other = read_footer(source, "r")
        assert np.array_equal(other.rows, by_path.rows) and np.array_equal(other.data,
                                                                           by_path.data)
    stats = pe.collect_stats(path, progress=False)
    check_against_rows(path, stats)
    assert rows(stats, "min_values")[0]["i64"] is not None
