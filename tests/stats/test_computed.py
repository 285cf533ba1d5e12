"""``compute_missing=True``: statistics computed from the data of chunks whose footers have
none, checked against the rows (exact where known, true bounds always), and pruning on them
against DuckDB on the rows."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.oracle.duck import load_table
from tests.stats.stats_oracle import check_against_rows, get, leaf_info, rows

UTC = dt.timezone.utc
NAN = float("nan")


def _table() -> pa.Table:
    """Every kind of leaf at its edges, three rows per row group: NULL-only and NaN-only
    groups, -0.0, integer limits, a nested struct with NULL parents."""
    return pa.table({
        "i": pa.array([-2**63, 5, None, None, None, None, 2**63 - 1, 0, 1], pa.int64()),
        "u": pa.array([0, 2**64 - 1, 7, 1, 2, 3, None, 4, 5], pa.uint64()),
        "f": pa.array([NAN, NAN, NAN, -0.0, 0.0, 1.5, None, -1.0, NAN], pa.float64()),
        "g": pa.array([0.0, 2.5, -0.0, 1, 2, 3, 4, 5, 6], pa.float32()),
        "s": pa.array(["b", "a", None, "\U0001f600", "é", "", "zz", "z", "y"]),
        "dec": pa.array([decimal.Decimal(v) for v in ("1.25", "-9.99", "0.00", "1", "2", "3",
                                                      "4", "5", "6")], pa.decimal128(5, 2)),
        "ts": pa.array([dt.datetime(2024, 1, k + 1, tzinfo=UTC) for k in range(9)],
                       pa.timestamp("us", "UTC")),
        "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}] * 3,
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "tags": pa.array([["p", "q"], None, []] * 3),
    })


def _write(path, table, **kwargs) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path, **kwargs)
    return path


def test_computed_statistics_are_exact_bounds_of_the_rows(tmp_path):
    path = _write(str(tmp_path / "a.parquet"), _table(), row_group_size=3, write_statistics=False)
    plain = pe.collect_stats(path, progress=False)
    assert all(v is None for v in rows(plain, "max_values")[0].values() if not isinstance(v, dict))
    stats = pe.collect_stats(path, compute_missing=True, progress=False)
    check_against_rows(path, stats)  # true bounds, exact null counts
    pf = pq.ParquetFile(path)
    mins, maxs, nulls = (rows(stats, c) for c in ("min_values", "max_values", "null_count"))
    for rg in range(3):
        exact = pe.stats_from_arrow(pf.read_row_group(rg))
        x_min, x_max, x_null = (rows(exact, c)[0] for c in ("min_values", "max_values",
                                                           "null_count"))
        for leaf, _, element in leaf_info(stats):
            if element:
                continue
            where = f"rg {rg} {'.'.join(leaf)}"
            assert get(nulls[rg], leaf) == get(x_null, leaf), where
            if leaf == ("f",) and rg == 0:  # NaN only: bounds unknown
                assert get(mins[rg], leaf) is None and get(maxs[rg], leaf) is None
                continue
            if get(x_min, leaf) is None:  # all NULL
                continue
            assert get(mins[rg], leaf) == get(x_min, leaf), where
            assert get(maxs[rg], leaf) == get(x_max, leaf), where
    assert stats.metadata["computed"]["containers"] == 3
    assert "st.a" in stats.metadata["computed"]["columns"]
    assert stats.metadata["collect"]["compute_missing"] is True


def test_zero_bounds_widen_and_nan_is_not_a_bound(tmp_path):
    table = pa.table({"f": pa.array([0.0, -0.0, NAN, 2.0], pa.float64())})
    path = _write(str(tmp_path / "z.parquet"), table, write_statistics=False)
    stats = pe.collect_stats(path, compute_missing=True, progress=False)
    lo = stats.column("min_values").to_pylist()[0]["f"]
    assert lo == 0 and str(lo) == "-0.0"
    assert stats.column("max_values").to_pylist()[0]["f"] == 2.0
    assert pe.prune(stats, "f = -0.0").to_pylist() == [True]
    assert pe.prune(stats, "f > 2").to_pylist() == [True], "NaN may be there (NaN > 2)"


def test_footer_statistics_are_not_recomputed(tmp_path):
    path = _write(str(tmp_path / "a.parquet"), pa.table({"x": [1, 2]}))
    stats = pe.collect_stats(path, compute_missing=True, progress=False)
    assert stats.metadata["computed"] == {"columns": [], "containers": 0}
    assert stats.table.equals(pe.collect_stats(path, progress=False).table)


def test_int96_timestamps_get_bounds_except_before_1900(tmp_path):
    """INT96 (Spark's default timestamps) has no footer bounds; computed ones prune. Values
    before 1900 (readers rebase them differently) keep both bounds unknown; a max past 2262
    is known: INT96 statistics are microseconds, as Spark reads them."""
    root = str(tmp_path)
    spans = {"old": [dt.datetime(1850, 3, 1), dt.datetime(1950, 1, 1)],
             "now": [dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 2, 23, 59, 59, 999999)],
             "later": [dt.datetime(2024, 5, 1), dt.datetime(2024, 5, 3)],
             "far": [dt.datetime(2024, 1, 1), dt.datetime(2500, 1, 1)]}
    for name, values in spans.items():
        _write(os.path.join(root, f"{name}.parquet"), pa.table({
            "ts": pa.array(values + [None], pa.timestamp("us"))}), use_deprecated_int96_timestamps=True)
    assert pq.ParquetFile(os.path.join(root, "now.parquet")).schema.column(0).physical_type == "INT96"
    before = pe.collect_stats(root, granularity="file", progress=False)
    stats = pe.collect_stats(root, granularity="file", compute_missing=True, progress=False)
    by_name = {os.path.basename(p).split(".")[0]: (lo["ts"], hi["ts"], n["ts"]) for p, lo, hi, n in zip(
        stats.column("path").to_pylist(), stats.column("min_values").to_pylist(),
        stats.column("max_values").to_pylist(), stats.column("null_count").to_pylist())}
    assert by_name["old"][:2] == (None, None)
    assert by_name["far"][:2] == (dt.datetime(2024, 1, 1), dt.datetime(2500, 1, 1)), \
        "2500 is past nanoseconds, not past microseconds"
    assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us")
    assert by_name["now"][:2] == (dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 2, 23, 59, 59, 999999))
    assert all(v[2] == 1 for v in by_name.values())
    con = duckdb.connect()
    data = pa.concat_tables([pq.ParquetFile(p, coerce_int96_timestamp_unit="us").read().append_column(
        "container", pa.array([p] * 3)) for p in stats.column("path").to_pylist()])
    load_table(con, "t", data)
    for where in ["ts > TIMESTAMP '2024-04-01'", "ts < TIMESTAMP '2024-01-02'",
                  "ts = TIMESTAMP '2024-01-02 23:59:59.999999'", "ts IS NULL",
                  "ts BETWEEN TIMESTAMP '1800-01-01' AND TIMESTAMP '1900-01-01'"]:
        kept = {c for c, k in zip(stats.column("path").to_pylist(), pe.prune(stats, where).to_pylist()) if k}
        matching = {r[0] for r in con.sql(f"SELECT DISTINCT container FROM t WHERE {where}").fetchall()}
        assert matching <= kept, where
        assert sum(pe.prune(before, where).to_pylist()) == 4, "no footer bounds: all kept"
    assert sum(pe.prune(stats, "ts > TIMESTAMP '2024-04-01'").to_pylist()) == 3, \
        "'now' is pruned; 'old' is unknown, 'far' holds 2500"
    assert pe.prune(stats, "ts > TIMESTAMP '2400-01-01'").to_pylist() == [True, False, False, True], \
        "'far' holds 2500; 'old' is unknown"


def test_update_stats_keeps_computing_missing_statistics(tmp_path):
    root = str(tmp_path)
    _write(os.path.join(root, "a.parquet"), pa.table({"x": [1, 2]}), write_statistics=False)
    stats = pe.collect_stats(root, granularity="file", compute_missing=True, progress=False)
    _write(os.path.join(root, "b.parquet"), pa.table({"x": [7, 9]}), write_statistics=False)
    updated = pe.update_stats(stats, root, progress=False)
    assert updated.column("max_values").to_pylist() == [{"x": 2}, {"x": 9}]


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_a_skipped_file_and_an_empty_file_are_left_alone(tmp_path, granularity):
    root = str(tmp_path)
    _write(os.path.join(root, "a.parquet"), pa.table({"x": pa.array([], pa.int64())}),
           write_statistics=False)
    with open(os.path.join(root, "bad.parquet"), "wb") as f:
        f.write(b"not parquet")
    stats = pe.collect_stats(root, granularity=granularity, compute_missing=True,
                             on_error="skip", progress=False)
    assert pe.prune(stats, "x = 1").to_pylist()[-1] is True, "the unreadable file keeps"
