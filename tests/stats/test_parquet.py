"""Footer statistics of pyarrow-written files against the rows and against DuckDB's reader."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats.parquet import bad_string_stats
from tests.budget import examples
from tests.stats.stats_oracle import check_against_duckdb, check_against_rows, rows

NAN = float("nan")


def rich_table(n: int, seed: int) -> pa.Table:
    """Every type the footer path handles, with nulls, NaN, -0.0 and an all-null stretch."""
    rng = np.random.default_rng(seed)
    null = rng.random(n) < 0.2

    def col(values, typ):
        return pa.array(values, typ, mask=null)

    ints = rng.integers(-(2**62), 2**62, n)
    floats = rng.choice([NAN, -0.0, 0.0, 1.5, -2.5, np.inf], n)
    words = ["", "a", "ab", "b\xe9", "\U0001f600x", "zz", "A"]
    strings = [words[i] for i in rng.integers(0, len(words), n)]
    decs = [decimal.Decimal(int(v)).scaleb(-3) for v in rng.integers(-(10**15), 10**15, n)]
    big = [decimal.Decimal("9" * 40 + ".5") * (1 if v else -1) for v in rng.integers(0, 2, n)]
    cols = {
        "i64": col(ints, pa.int64()),
        "i8": col(rng.integers(-128, 128, n), pa.int8()),
        "u8": col(rng.integers(0, 256, n), pa.uint8()),
        "u32": col(rng.integers(0, 2**32, n), pa.uint32()),
        "u64": col(rng.choice(np.array([0, 5, 2**63, 2**64 - 1], dtype=np.uint64), n),
                   pa.uint64()),
        "f64": col(floats, pa.float64()),
        "f32": col(floats.astype(np.float32), pa.float32()),
        "allnull": pa.nulls(n, pa.int32()),
        "b": col(rng.integers(0, 2, n).astype(bool), pa.bool_()),
        "s": col(strings, pa.string()),
        "ls": col(strings, pa.large_string()),
        "bin": col([s.encode() + b"\xff" for s in strings], pa.binary()),
        "fsb": col([bytes([i % 256, 0]) for i in range(n)], pa.binary(2)),
        "dec": col(decs, pa.decimal128(18, 3)),
        "dec38": col(decs, pa.decimal128(38, 3)),
        "dec256": col(big, pa.decimal256(45, 1)),
        "date": col(rng.integers(-20000, 20000, n).astype(np.int32), pa.date32()),
    }
    for unit in ("ms", "us", "ns"):
        for zone in (None, "UTC", "America/New_York"):
            cols[f"ts_{unit}_{zone}"] = col(rng.integers(-(10**12), 10**12, n),
                                            pa.timestamp(unit, zone))
    cols["st"] = pa.StructArray.from_arrays(
        [col(ints, pa.int64()), pa.StructArray.from_arrays([col(strings, pa.string())],
                                                           names=["s"])],
        names=["x", "inner"], mask=pa.array(rng.random(n) < 0.2))
    lists = [None if rng.random() < 0.2 else [float(v) for v in rng.choice(floats, rng.integers(0, 3))]
             for _ in range(n)]
    cols["l"] = pa.array(lists, pa.list_(pa.float64()))
    maps = [None if rng.random() < 0.2 else [(words[int(k)], int(v)) for k, v in
                                             zip(rng.integers(0, 7, 2), rng.integers(-9, 9, 2))]
            for _ in range(n)]
    cols["m"] = pa.array(maps, pa.map_(pa.string(), pa.int32()))
    return pa.table(cols)


@pytest.fixture(scope="module")
def rich_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pq") / "rich.parquet")
    table = rich_table(300, 1)
    # the last row group holds only nulls in "s": an all-null chunk
    table = table.set_column(table.schema.get_field_index("s"), "s",
                             pa.array(table.column("s").to_pylist()[:250] + [None] * 50))
    pq.write_table(table, path, row_group_size=50)
    return path


def test_rich_file_against_rows_and_duckdb(rich_file):
    stats = pe.collect_stats(rich_file, progress=False)
    assert stats.num_rows == 6
    check_against_rows(rich_file, stats)
    check_against_duckdb(rich_file, stats, exact=False)


def test_rich_file_reads_every_bound_duckdb_reads(rich_file):
    stats = pe.collect_stats(rich_file, progress=False)
    # floats: DuckDB shows the raw bound; ours widens a +0.0 min to -0.0, equal under IEEE
    check_against_duckdb(rich_file, stats, exact=True)


def test_all_null_chunk_is_all_null_not_unknown(rich_file):
    stats = pe.collect_stats(rich_file, progress=False)
    last = stats.num_rows - 1
    assert rows(stats, "null_count")[last]["s"] == 50, "null count kept without min/max"
    assert rows(stats, "min_values")[last]["s"] is None
    assert stats.column("num_records")[last].as_py() == 50
    assert all(r["allnull"] == 50 for r in rows(stats, "null_count")), "Null-typed column"


def test_types_and_markers(rich_file):
    stats = pe.collect_stats(rich_file, progress=False)
    data = pq.read_schema(rich_file)
    mins = stats.schema.field("min_values").type
    for name in ("u64", "dec256", "ts_ns_America/New_York", "ts_ms_None", "ls", "fsb", "date"):
        assert mins.field(name).type == data.field(name).type, name
    assert mins.field("m").type == pa.struct([("key", pa.string()), ("value", pa.int32())])
    assert mins.field("m").metadata[b"prune_engine.element"] == b"map"
    assert mins.field("l").metadata[b"prune_engine.element"] == b"list"
    nans = stats.schema.field("nan_count").type
    assert [f.name for f in nans] == ["f64", "f32", "l"], "a NaN count for every float leaf"
    assert nans.field("l").metadata[b"prune_engine.element"] == b"list"
    for counts, nulls, n in zip(rows(stats, "nan_count"), rows(stats, "null_count"),
                                stats.column("num_records").to_pylist()):
        for name in ("f64", "f32"):
            assert counts[name] == (0 if nulls[name] == n else None), \
                "pyarrow writes no nan_count: unknown, but an all-null chunk holds no NaN"


def test_uint64_above_2_63_and_signed_zero(tmp_path):
    path = str(tmp_path / "u.parquet")
    pq.write_table(pa.table({"u": pa.array([2**63 + 1, 2**64 - 1], pa.uint64()),
                             "lo": [0.0, 1.0], "hi": [-1.0, -0.0]}), path)
    stats = pe.collect_stats(path, progress=False)
    assert rows(stats, "min_values") == [{"u": 2**63 + 1, "lo": 0.0, "hi": -1.0}]
    lo, hi = rows(stats, "min_values")[0]["lo"], rows(stats, "max_values")[0]["hi"]
    assert math.copysign(1, lo) < 0, "a min of +0.0 may hide -0.0: widened to -0.0"
    assert math.copysign(1, hi) > 0, "a max of -0.0 may hide +0.0: widened to +0.0"


@pytest.mark.parametrize("as_integer", [True, False])
def test_decimals_physical_kinds(tmp_path, as_integer):
    path = str(tmp_path / "d.parquet")
    values = [decimal.Decimal("-12.34"), decimal.Decimal("99.99"), None]
    table = pa.table({"d4": pa.array(values, pa.decimal128(4, 2)),
                      "d18": pa.array(values, pa.decimal128(18, 2)),
                      "d60": pa.array(values, pa.decimal256(60, 2))})
    pq.write_table(table, path, store_decimal_as_integer=as_integer)
    stats = pe.collect_stats(path, progress=False)
    assert rows(stats, "min_values") == [{k: values[0] for k in table.column_names}]
    assert rows(stats, "max_values") == [{k: values[1] for k in table.column_names}]
    check_against_duckdb(path, stats, exact=True)


def test_statistics_off_is_unknown(tmp_path):
    path = str(tmp_path / "nostats.parquet")
    pq.write_table(rich_table(40, 2), path, write_statistics=False, row_group_size=20)
    stats = pe.collect_stats(path, progress=False)
    assert stats.column("num_records").to_pylist() == [20, 20]
    for column in ("min_values", "max_values", "null_count"):
        for row in rows(stats, column):
            assert all(v is None for v in _leaves(row)), f"{column} unknown without statistics"
    check_against_duckdb(path, stats, exact=True)


def _leaves(row):
    for v in row.values():
        if isinstance(v, dict):
            yield from _leaves(v)
        else:
            yield v


def test_page_index_files(tmp_path):
    path = str(tmp_path / "pageindex.parquet")
    pq.write_table(rich_table(120, 3), path, write_page_index=True, row_group_size=40)
    stats = pe.collect_stats(path, progress=False)
    check_against_rows(path, stats)
    check_against_duckdb(path, stats, exact=True)


def test_long_strings_have_unknown_bounds_but_known_nulls(tmp_path):
    path = str(tmp_path / "long.parquet")
    long = "x" * 5000
    pq.write_table(pa.table({"s": [long, "a" + long, None]}), path)
    stats = pe.collect_stats(path, progress=False)
    assert rows(stats, "min_values") == [{"s": None}], "pyarrow drops > 4 KiB bounds"
    assert rows(stats, "null_count") == [{"s": 1}]
    check_against_rows(path, stats)
    check_against_duckdb(path, stats, exact=True)


def test_int96_timestamps_are_unknown(tmp_path):
    path = str(tmp_path / "int96.parquet")
    pq.write_table(pa.table({"t": pa.array([1, 2], pa.timestamp("ns")), "x": [1, 2]}), path,
                   use_deprecated_int96_timestamps=True)
    stats = pe.collect_stats(path, progress=False)
    assert rows(stats, "min_values") == [{"t": None, "x": 1}]
    check_against_duckdb(path, stats, exact=False)


def test_parquet_251_writers_lose_string_bounds():
    assert bad_string_stats("parquet-mr version 1.7.9 (build x)")
    assert bad_string_stats("parquet-mr compatible Photon version 1.6.0")
    assert not bad_string_stats("parquet-mr version 1.8.0 (build x)")
    assert not bad_string_stats("parquet-cpp-arrow version 26.0.1")
    assert not bad_string_stats(None)


@st.composite
def random_tables(draw):
    n = draw(st.integers(1, 40))
    ints = st.none() | st.integers(-(2**63), 2**63 - 1)
    floats = st.none() | st.sampled_from([NAN, -0.0, 0.0, 1.0, -1.0, math.inf])
    text = st.none() | st.text(alphabet="a\xe9\U0001f600z", max_size=4)

    def column(strategy, typ):
        return pa.array(draw(st.lists(strategy, min_size=n, max_size=n)), typ)

    return pa.table({"i": column(ints, pa.int64()), "f": column(floats, pa.float64()),
                     "s": column(text, pa.string()),
                     "l": column(st.none() | st.lists(text, max_size=3), pa.list_(pa.string()))}
                    ), draw(st.integers(1, 10))


@settings(max_examples=examples(25), deadline=None)
@given(random_tables())
def test_random_files_against_rows_and_duckdb(tmp_path_factory, case):
    table, row_group_size = case
    path = str(tmp_path_factory.mktemp("h") / "r.parquet")
    pq.write_table(table, path, row_group_size=row_group_size)
    stats = pe.collect_stats(path, progress=False)
    check_against_rows(path, stats)
    check_against_duckdb(path, stats, exact=True)
