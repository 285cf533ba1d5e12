"""Parquet footer decimal bounds are exact to 38 digits and beyond (decimal256: widths of 17
to 32 bytes), at scale 0 and 38 and near 10**38: each row group's bounds equal the rows'
minimum and maximum (DuckDB's reading of the rows up to 38 digits; pyarrow's past them, which
DuckDB reads as doubles), and pruning at the edges agrees with DuckDB on the rows."""

from __future__ import annotations

import decimal
import io
import random

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.stats import thrift_codec as tc
from tests.stats.container_oracle import check_sound

D = decimal.Decimal
CONTEXT = decimal.Context(prec=100)


def _values(precision: int, scale: int, seed: int, n: int = 24) -> list:
    """Values at the type's edges (10**p - 1 units, one unit, zero) and random ones."""
    top = 10 ** precision - 1
    units = [top, -top, 1, -1, 0, top - 1, -(top - 1)]
    rng = random.Random(seed)
    units += [rng.randint(-top, top) for _ in range(n - len(units) - 2)] + [None, None]
    rng.shuffle(units)
    return [None if u is None else D(u).scaleb(-scale, CONTEXT) for u in units]


def _write(path, typ, values, **kw):
    pq.write_table(pa.table({"d": pa.array(values, typ), "k": list(range(len(values)))}), path,
                   row_group_size=6, **kw)


def _duckdb_bounds(path) -> list[tuple]:
    return duckdb.connect().execute(
        f"SELECT file_row_number // 6 AS rg, min(d), max(d) FROM read_parquet('{path}', "
        "file_row_number=true) GROUP BY rg ORDER BY rg").fetchall()


def _literal(value: D) -> str:
    return format(value, "f")


@pytest.mark.parametrize("precision, scale", [(38, 0), (38, 38), (38, 10), (37, 23), (28, 5),
                                              (18, 2), (9, 4)])
@pytest.mark.parametrize("as_integer", [False, True])
def test_decimal_bounds_to_38_digits_are_exact(tmp_path, precision, scale, as_integer):
    path = str(tmp_path / "d.parquet")
    values = _values(precision, scale, seed=precision * 100 + scale)
    _write(path, pa.decimal128(precision, scale), values,
           store_decimal_as_integer=as_integer)
    stats = pe.collect_stats(path, progress=False)
    got = [(lo["d"], hi["d"]) for lo, hi in zip(stats.column("min_values").to_pylist(),
                                                stats.column("max_values").to_pylist())]
    assert got == [(lo, hi) for _, lo, hi in _duckdb_bounds(path)], "exact, as DuckDB reads"
    edges = sorted({v for v in values if v is not None})
    unit = D(1).scaleb(-scale, CONTEXT)
    predicates = []
    for v in (edges[0], edges[-1], edges[len(edges) // 2]):
        predicates += [f"d = {_literal(v)}", f"d > {_literal(v)}", f"d < {_literal(v)}",
                       f"d != {_literal(v)}"]
        if abs(v) < D(10) ** (precision - scale) - unit:
            predicates += [f"d > {_literal(v - unit)}", f"d < {_literal(v + unit)}"]
    check_sound(stats, predicates)


@pytest.mark.parametrize("precision, scale", [(39, 0), (40, 39), (50, 10), (76, 0), (76, 76)])
def test_wide_decimal_bounds_are_exact(tmp_path, precision, scale):
    """decimal256 (fixed-length bytes of 17 to 32): each bound is the rows' exact min / max
    (pyarrow computes them from the rows; DuckDB reads such columns as doubles)."""
    path = str(tmp_path / "d.parquet")
    values = _values(precision, scale, seed=precision + scale)
    typ = pa.decimal256(precision, scale)
    _write(path, typ, values)
    width = pq.read_metadata(path).schema.column(0).length
    assert width > 16
    stats = pe.collect_stats(path, progress=False)
    assert stats.schema.field("min_values").type.field("d").type == typ
    pf = pq.ParquetFile(path)
    for rg, (lo, hi) in enumerate(zip(stats.column("min_values").to_pylist(),
                                      stats.column("max_values").to_pylist())):
        exact = pc.min_max(pf.read_row_group(rg).column("d"))
        assert (lo["d"], hi["d"]) == (exact["min"].as_py(), exact["max"].as_py())
    top = max(v for v in values if v is not None)
    assert pe.prune(stats, pc.field("d") > pa.scalar(top, typ)).to_pylist() == [False] * 4
    kept = pe.prune(stats, pc.field("d") == pa.scalar(top, typ)).to_pylist()
    holds = [pc.any(pc.equal(pf.read_row_group(rg).column("d"), pa.scalar(top, typ))).as_py()
             for rg in range(4)]
    assert all(k for k, h in zip(kept, holds) if h) and kept == holds


def _with_min(data: bytes, raw: bytes, group: int = 0) -> bytes:
    def change(tree):
        chunk = tc.get(tc.get(tc.get(tree, 4).value.items[group], 1).value.items[0], 3).value
        tc.get(tc.get(chunk, 12).value, 6).value = raw
    return tc.edited(data, change)


@pytest.mark.parametrize("raw, why", [
    ((10 ** 38).to_bytes(16, "big", signed=True), "39 digits in a decimal(38): no reader's"),
    ((-5).to_bytes(8, "big", signed=True), "8 bytes of a 16-byte column: cut short"),
    ((-5).to_bytes(20, "big", signed=True), "20 bytes of a 16-byte column"),
    (b"", "no bytes"),
], ids=["39 digits", "8 bytes", "20 bytes", "empty"])
def test_a_decimal_bound_no_reader_can_take_is_unknown_alone(tmp_path, raw, why):
    """Such a bound is unknown, in its row group only (the old code lost the bounds of every
    row group of the column to one value past the precision)."""
    buf = io.BytesIO()
    values = [D(v) for v in (-5, 7, 1, 9, 2, 3, 4, 5, 6, 8, 10, 11)]
    pq.write_table(pa.table({"d": pa.array(values, pa.decimal128(38, 0))}), buf,
                   row_group_size=6)
    path = tmp_path / "d.parquet"
    path.write_bytes(_with_min(buf.getvalue(), raw))
    stats = pe.collect_stats(str(path), progress=False)
    mins = [m["d"] for m in stats.column("min_values").to_pylist()]
    assert mins == [None, D(4)], why
