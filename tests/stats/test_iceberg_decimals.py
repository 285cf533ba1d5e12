"""Exact decimals to 38 digits from Iceberg manifests: bounds and identity partitions.

Before: the bounds decoder built ``Decimal(unscaled).scaleb(-scale)`` in Python's default
context of 28 digits, which rounds: a ``decimal(36,23)`` column raised pyarrow's ArrowInvalid
("Decimal type with precision 28 does not fit ..."), and where it did not raise, a rounded
maximum could be below the file's true maximum. Partition values used the same expression.
Each table here is written by PyIceberg (the SQLite catalog); DuckDB on the files' rows is the
oracle.
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st
from pyiceberg.types import DecimalType

import prune_engine as pe
from prune_engine.stats import iceberg
from tests.stats.iceberg_support import check_sound, rows_by_file

TOP = 10**38 - 1  # the largest unscaled value of a decimal(38)


def _dec(unscaled: int, scale: int) -> Decimal:
    """An exact decimal (digit tuple: no context rounds it)."""
    return Decimal((int(unscaled < 0), tuple(map(int, str(abs(unscaled)))), -scale))


SCHEMA = pa.schema([("a", pa.decimal128(38, 0)), ("b", pa.decimal128(38, 38)),
                    ("c", pa.decimal128(36, 23)), ("k", pa.int64())])
SCALES = {"a": 0, "b": 38, "c": 23}
#: the issue's value, unscaled: 32 digits, 23 of them after the point
ISSUE = 12345678945678901234567890123456

#: per file and column: the rows' unscaled values (decimal arithmetic would round at 28)
UNSCALED = [
    {"a": [TOP, -TOP], "b": [TOP, 1], "c": [ISSUE, -1]},
    {"a": [TOP - 1, None], "b": [-TOP, -TOP + 1], "c": [10**35 - 1, -(10**35) + 1]},
    {"a": [5, -5], "b": [None, 0], "c": [ISSUE - 1, ISSUE - 2]},
]
FILES = [{**{col: [None if u is None else _dec(u, SCALES[col]) for u in values]
             for col, values in f.items()}, "k": [2 * i, 2 * i + 1]}
         for i, f in enumerate(UNSCALED)]


def _literal(unscaled: int, scale: int) -> str:
    return format(_dec(unscaled, scale), "f")


def _predicates() -> list[str]:
    preds = []
    for col, scale in SCALES.items():
        values = {u for f in UNSCALED for u in f[col] if u is not None}
        for v in sorted(values):
            for w in (v - 1, v, v + 1):
                if abs(w) > TOP:
                    continue
                lit = _literal(w, scale)
                preds += [f"{col} = {lit}", f"{col} > {lit}", f"{col} >= {lit}",
                          f"{col} < {lit}", f"{col} <= {lit}", f"{col} <> {lit}"]
        preds += [f"{col} IS NULL", f"{col} IS NOT NULL"]
    return preds


def test_decimal_bounds_are_exact_to_38_digits(catalog):
    table = catalog.create_table("db.wide_decimals", schema=SCHEMA)
    for data in FILES:
        table.append(pa.table(data, schema=SCHEMA))
    stats = pe.stats_from_iceberg(table)  # (before: pyarrow.lib.ArrowInvalid)
    assert stats.schema.field("min_values").type == pa.struct(
        [f for f in SCHEMA if f.name in "abck"])
    for path, lo, hi in zip(stats.column("path").to_pylist(),
                            stats.column("min_values").to_pylist(),
                            stats.column("max_values").to_pylist()):
        rows = pq.read_table(path)
        for col in ("a", "b", "c"):  # the exact extremes of the rows, digit for digit
            values = [v for v in rows.column(col).to_pylist() if v is not None]
            assert lo[col] == min(values) and hi[col] == max(values), (col, lo, hi)
    maxs = stats.column("max_values").to_pylist()
    assert str(maxs[0]["c"]) == "123456789.45678901234567890123456"  # not ...9012 (28 digits)
    assert maxs[0]["a"] == _dec(TOP, 0) and maxs[0]["b"] == _dec(TOP, 38)
    pruned = check_sound(stats, rows_by_file(stats), _predicates())
    assert pruned > 100  # the bounds are used, not dropped
    # the third file's maximum is one unit (1e-23) below the issue's value: exact bounds
    # prune it for the value itself, and keep it one unit lower
    issue, below = _literal(ISSUE, 23), _literal(ISSUE - 1, 23)
    assert pe.prune(stats, f"c = {issue}").to_pylist() == [True, True, False]
    assert pe.prune(stats, f"c >= {issue}").to_pylist() == [True, True, False]
    assert pe.prune(stats, f"c = {below}").to_pylist() == [True, True, True]
    assert pe.prune(stats, f"c > {issue}").to_pylist() == [False, True, False]


def test_decimal_identity_partitions_are_exact(catalog):
    schema = pa.schema([("p", pa.decimal128(38, 10)), ("q", pa.decimal128(36, 23)),
                        ("x", pa.int64())])
    table = catalog.create_table("db.decimal_parts", schema=schema)
    with table.update_spec() as update:
        update.add_identity("p")
        update.add_identity("q")
    values = [(_dec(TOP, 10), _dec(ISSUE, 23)), (_dec(-TOP, 10), _dec(-1, 23)), (None, None),
              (_dec(TOP - 1, 10), _dec(ISSUE - 1, 23))]
    for i, (p, q) in enumerate(values):
        table.append(pa.table({"p": [p, p], "q": [q, q], "x": [i, i + 10]}, schema=schema))
    stats = pe.stats_from_iceberg(table)
    parts = stats.column("partition_values").to_pylist()
    mins, maxs = stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()
    nulls = stats.column("null_count").to_pylist()
    assert [(d["p"], d["q"]) for d in parts] == values  # exact (was rounded to 28 digits)
    for (p, q), lo, hi, n in zip(values, mins, maxs, nulls):
        assert lo["p"] == hi["p"] == p and lo["q"] == hi["q"] == q
        assert n["p"] == (2 if p is None else 0)
    preds = []
    for p, q in ((TOP, ISSUE), (-TOP, -1), (TOP - 1, ISSUE - 1)):
        preds += [f"p = {_literal(p, 10)}", f"p > {_literal(p - 1, 10)}",
                  f"p < {_literal(p, 10)}", f"p <> {_literal(p, 10)}",
                  f"q = {_literal(q, 23)}", f"q >= {_literal(q, 23)}", f"q < {_literal(q, 23)}",
                  f"q > {_literal(q - 1, 23)}"]
    preds += ["p IS NULL", "q IS NOT NULL", f"p = {_literal(TOP, 10)} AND x > 5"]
    assert check_sound(stats, rows_by_file(stats), preds) > 20
    issue = _literal(ISSUE, 23)
    assert pe.prune(stats, f"q = {issue}").to_pylist() == [True, False, False, False]


@given(st.integers(-TOP, TOP), st.integers(0, 38), st.integers(1, 38))
def test_decimals_from_unscaled_integers_are_exact(unscaled, scale, precision):
    precision = max(precision, scale, 1)
    t = DecimalType(precision, scale)
    atype = pa.decimal128(precision, scale)
    out = iceberg._decimals([unscaled, None], t, atype).to_pylist()
    fits = abs(unscaled) < 10**precision
    assert out == [_dec(unscaled, scale) if fits else None, None]
    assert iceberg._decimal(unscaled, t) == (_dec(unscaled, scale) if fits else None)
    if fits:  # the bound decoder reads Iceberg's big-endian two's complement bytes
        raw = unscaled.to_bytes(unscaled.bit_length() // 8 + 1, "big", signed=True)
        decoded = iceberg._decode_bounds(t, atype, pa.array([raw], pa.binary())).to_pylist()
        assert decoded == [_dec(unscaled, scale)]
