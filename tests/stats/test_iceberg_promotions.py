"""Statistics read in the type they were written in, across Iceberg's type promotions, and
timestamps at the ends of their range.

Each table is written with the old type, its schema evolved (``update_schema()`` where
PyIceberg allows it; for the v3 promotions, which PyIceberg cannot write, the metadata JSON is
edited as a v3 writer would leave it), more data written, and predicates on the boundary
values checked against DuckDB on the rows read in the CURRENT type (the old files' values
cast, as every Iceberg reader does). Before: a date bound of a column promoted to a
timestamp was read as microseconds (1970-01-01 plus a few milliseconds: an upper bound far
too low, which pruned the file's rows).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.types import DecimalType, DoubleType, LongType

import prune_engine as pe
from tests.stats.iceberg_support import (check_sound, edit_metadata, rewrite_manifests,
                                         rows_by_file)

F32 = float(pa.array([3.4], pa.float32())[0].as_py())  # 3.4000000953674316


def _evolved(catalog, name, old: pa.Schema, rows_old: dict, change, new: pa.Schema,
             rows_new: dict):
    table = catalog.create_table(f"db.{name}", schema=old)
    table.append(pa.table(rows_old, schema=old))
    with table.update_schema() as update:
        change(update)
    table.append(pa.table(rows_new, schema=new))
    return table


def test_int_to_long(catalog):
    old, new = pa.schema([("x", pa.int32())]), pa.schema([("x", pa.int64())])
    table = _evolved(catalog, "int_long", old, {"x": [-(2**31), 2**31 - 1, 5]},
                     lambda u: u.update_column("x", LongType()), new,
                     {"x": [2**31, -(2**63), 2**63 - 1]})
    stats = pe.stats_from_iceberg(table)
    assert stats.column("min_values").to_pylist() == [{"x": -(2**31)}, {"x": -(2**63)}]
    assert stats.column("max_values").to_pylist() == [{"x": 2**31 - 1}, {"x": 2**63 - 1}]
    preds = []
    for v in (-(2**63), -(2**31) - 1, -(2**31), 5, 2**31 - 1, 2**31, 2**63 - 1):
        preds += [f"x = {v}", f"x > {v}", f"x >= {v}", f"x < {v}", f"x <> {v}"]
    assert check_sound(stats, rows_by_file(stats, new), preds) > 10
    assert pe.prune(stats, f"x > {2**31 - 1}").to_pylist() == [False, True]


def test_float_to_double(catalog):
    # the float file holds 3.4f, which a double column reads as 3.4000000953674316: its
    # bounds (4 bytes) are read as float32 and widened exactly, never as the double 3.4
    old, new = pa.schema([("f", pa.float32())]), pa.schema([("f", pa.float64())])
    tiny = float(pa.array([1e-45], pa.float32())[0].as_py())  # the smallest subnormal
    table = _evolved(catalog, "float_double", old,
                     {"f": [3.4, 0.1, -3.4028234663852886e38, tiny]},
                     lambda u: u.update_column("f", DoubleType()), new,
                     {"f": [3.4, 0.1, 7.0]})
    stats = pe.stats_from_iceberg(table)
    assert stats.column("max_values").to_pylist() == [{"f": F32}, {"f": 7.0}]
    assert stats.column("min_values").to_pylist()[0] == {"f": -3.4028234663852886e38}
    preds = []
    for v in (F32, 3.4, 0.1, float(pa.array([0.1], pa.float32())[0].as_py()), tiny, 7.0,
              -3.4028234663852886e38, 0.0):
        lit = repr(v)
        preds += [f"f = {lit}", f"f > {lit}", f"f >= {lit}", f"f < {lit}", f"f <= {lit}",
                  f"f <> {lit}"]
    preds += [f"f IN ({F32}, 7.5)", f"f NOT IN ({F32})", "f BETWEEN 3.4 AND 3.40000001"]
    assert check_sound(stats, rows_by_file(stats, new), preds) > 10
    # the issue's case (Delta's, the same shape here): the float file's maximum is F32, the
    # double 3.4000000953674316, not the double 3.4 (which would prune the first two)
    # (equality: ">" keeps a float file whose NaN count is unknown, as NaN sorts above all)
    assert pe.prune(stats, f"f = {F32}").to_pylist()[0] is True
    assert pe.prune(stats, f"f = {math.nextafter(F32, 4)!r}").to_pylist()[0] is False
    assert pe.prune(stats, f"f IN ({F32}, 9.0)").to_pylist()[0] is True
    assert pe.classify(stats, f"f <> {F32}").to_pylist()[0] != "all"


def test_decimal_precision_widening(catalog):
    old = pa.schema([("d", pa.decimal128(9, 2))])
    new = pa.schema([("d", pa.decimal128(38, 2))])
    wide = Decimal("123456789012345678901234567890123456.78")
    table = _evolved(catalog, "decimal_widen", old,
                     {"d": [Decimal("9999999.99"), Decimal("-9999999.99"), Decimal("0.01")]},
                     lambda u: u.update_column("d", DecimalType(38, 2)), new,
                     {"d": [wide, -wide, Decimal("10000000.00")]})
    stats = pe.stats_from_iceberg(table)
    assert stats.column("max_values").to_pylist() == [{"d": Decimal("9999999.99")}, {"d": wide}]
    preds = []
    for v in ("9999999.99", "10000000.00", "-9999999.99", "-10000000.00", "0.01", str(wide)):
        preds += [f"d = {v}", f"d > {v}", f"d < {v}", f"d >= {v}", f"d <> {v}"]
    assert check_sound(stats, rows_by_file(stats, new), preds) > 5
    assert pe.prune(stats, "d > 9999999.99").to_pylist() == [False, True]


def _retype(table, types: dict[str, str], version: int | None = None) -> None:
    """Give fields new type texts in the table's current schema JSON (a promotion PyIceberg
    cannot make), and the format version a v3 writer would set."""
    def change(m):
        for f in m["schemas"][-1]["fields"]:
            if f["name"] in types:
                f["type"] = types[f["name"]]
        if version:
            m["format-version"] = version
            m.setdefault("next-row-id", 0)
    edit_metadata(table, change)


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_date_to_timestamp_v3(catalog, unit):
    target = "timestamp" if unit == "us" else "timestamp_ns"
    old = pa.schema([("d", pa.date32()), ("k", pa.int64())])
    days = [dt.date(1970, 1, 1), dt.date(2024, 2, 29), dt.date(1969, 12, 31)]
    if unit == "us":  # the ends of the range; a nanosecond timestamp ends in 1677 and 2262
        days += [dt.date(1, 1, 1), dt.date(9999, 12, 31)]
    table = catalog.create_table(f"db.date_{target}", schema=old)
    table.append(pa.table({"d": days, "k": range(len(days))}, schema=old))
    table.append(pa.table({"d": [dt.date(2000, 1, 1)], "k": [9]}, schema=old))
    if unit == "ns":  # a day past the nanosecond range: its bound is unknown, not wrapped
        table.append(pa.table({"d": [dt.date(2262, 4, 11), dt.date(2300, 1, 1)], "k": [1, 2]},
                              schema=old))
    _retype(table, {"d": target}, version=3)
    table = catalog.load_table(f"db.date_{target}")
    new = pa.schema([("d", pa.timestamp(unit)), ("k", pa.int64())])
    stats = pe.stats_from_iceberg(table)
    assert stats.schema.field("min_values").type.field("d").type == pa.timestamp(unit)
    lows = [m["d"] for m in stats.column("min_values").to_pylist()]
    highs = [m["d"] for m in stats.column("max_values").to_pylist()]
    assert highs[:2] == [dt.datetime(9999, 12, 31) if unit == "us" else dt.datetime(2024, 2, 29),
                         dt.datetime(2000, 1, 1)]  # midnight of the day (was 1970 + ms)
    if unit == "us":
        assert lows[0] == dt.datetime(1, 1, 1)
        rows = rows_by_file(stats, new)
    else:
        assert highs[2] is None and lows[2] is not None  # 2300 does not fit in ns
        rows = rows_by_file(stats, pa.schema([("d", pa.timestamp("us")), ("k", pa.int64())]))
    preds = []
    for moment in ("1969-12-31 00:00:00", "1969-12-31 00:00:00.000001", "1970-01-01 00:00:00",
                   "2000-01-01 00:00:00", "2000-01-01 00:00:01", "2024-02-29 00:00:00",
                   "2024-02-28 23:59:59.999999", "2262-04-11 00:00:00"):
        lit = f"TIMESTAMP '{moment}'"
        preds += [f"d = {lit}", f"d > {lit}", f"d >= {lit}", f"d < {lit}", f"d <> {lit}"]
    if unit == "us":
        preds += ["d < TIMESTAMP '0001-01-01 00:00:00.000001'",
                  "d >= TIMESTAMP '9999-12-31 00:00:00'", "d > TIMESTAMP '9999-12-31 00:00:00'"]
    assert check_sound(stats, rows, preds) > 10
    assert pe.prune(stats, "d > TIMESTAMP '2000-01-01 00:00:00'").to_pylist()[:2] == [True, False]


@pytest.mark.parametrize("zone", ["", "tz"])
def test_nanosecond_timestamps_v3(catalog, zone):
    # written as longs of nanoseconds, then typed timestamp(tz)_ns in the table and in every
    # manifest's schema: what a v3 writer leaves
    name = f"nanos{zone}"
    schema = pa.schema([("t", pa.int64())])
    ends = [-(2**63) + 1, 2**63 - 1, 0, 1, -1, 1_700_000_000_123_456_789]
    table = catalog.create_table(f"db.{name}", schema=schema)
    table.append(pa.table({"t": ends[:3]}, schema=schema))
    table.append(pa.table({"t": ends[3:]}, schema=schema))
    target = f"timestamp{zone}_ns"
    rewrite_manifests(table, meta=lambda m: {**m, "schema": m["schema"].replace(
        b'"type":"long"', f'"type":"{target}"'.encode())})
    _retype(table, {"t": target}, version=3)
    table = catalog.load_table(f"db.{name}")
    arrow = pa.timestamp("ns", tz="UTC" if zone else None)
    stats = pe.stats_from_iceberg(table)
    assert stats.schema.field("min_values").type.field("t").type == arrow
    assert [m["t"] for m in stats.column("min_values").cast(
        pa.struct([("t", pa.int64())])).to_pylist()] == [-(2**63) + 1, -1]
    rows = rows_by_file(stats, pa.schema([("t", arrow)]))
    preds = []
    moments = ["1970-01-01 00:00:00", "2023-11-14 22:13:20.123456", "2262-04-11 00:00:00",
               "1677-09-22 00:00:00", "1969-12-31 23:59:59.999999"]
    literals = [f"TIMESTAMP '{v}'" for v in moments]
    if not zone:  # (DuckDB compares a zoned column with no nanosecond literal)
        literals += [f"TIMESTAMP_NS '{v}'" for v in (
            "1970-01-01 00:00:00.000000001", "2023-11-14 22:13:20.123456789",
            "2023-11-14 22:13:20.12345679", "1969-12-31 23:59:59.999999999")]
    for lit in literals:
        preds += [f"t = {lit}", f"t > {lit}", f"t < {lit}", f"t >= {lit}", f"t <> {lit}"]
    assert check_sound(stats, rows, preds) > 5


def test_timestamps_at_the_ends_of_their_range(catalog):
    # year 1 and 9999 (Spark's far sentinels) in timestamp and timestamptz, microseconds;
    # and an identity partition at those values
    schema = pa.schema([("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")),
                        ("p", pa.timestamp("us"))])
    first, last = dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
    table = catalog.create_table("db.far_timestamps", schema=schema)
    with table.update_spec() as update:
        update.add_identity("p")
    utc = dt.timezone.utc
    for values in ([first, dt.datetime(1970, 1, 1)], [last, dt.datetime(9999, 12, 30)],
                   [first, last]):
        table.append(pa.table({"ts": values, "tz": [v.replace(tzinfo=utc) for v in values],
                               "p": [values[0]] * 2}, schema=schema))
    stats = pe.stats_from_iceberg(table)
    assert stats.schema.field("min_values").type == pa.struct(schema)  # microseconds
    mins, maxs = stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()
    assert (mins[2]["ts"], maxs[2]["ts"]) == (first, last)
    assert [m["p"] for m in mins] == [m["p"] for m in maxs] == [first, last, first]
    preds = []
    for moment in ("0001-01-01 00:00:00", "0001-01-01 00:00:00.000001", "1970-01-01 00:00:00",
                   "2262-04-12 00:00:00", "9999-12-30 00:00:00", "9999-12-31 00:00:00",
                   "9999-12-31 23:59:59.999999", "9999-01-01 00:00:00"):
        lit = f"TIMESTAMP '{moment}'"
        for col in ("ts", "tz", "p"):
            preds += [f"{col} = {lit}", f"{col} > {lit}", f"{col} >= {lit}", f"{col} < {lit}",
                      f"{col} <> {lit}"]
    assert check_sound(stats, rows_by_file(stats), preds) > 30
    assert pe.prune(stats, "ts >= TIMESTAMP '9999-01-01 00:00:00'").to_pylist() == \
        [False, True, True]
    assert pe.prune(stats, "p = TIMESTAMP '9999-12-31 23:59:59.999999'").to_pylist() == \
        [False, True, False]


def test_string_to_binary(catalog):
    # PyIceberg's own promotion (not the spec's): string bounds, truncated to 16 characters
    # with the last one incremented (by code point), are true bounds of the same bytes
    from pyiceberg.types import BinaryType

    old, new = pa.schema([("s", pa.string())]), pa.schema([("s", pa.binary())])
    long = "\u00e9" * 20  # 40 bytes of UTF-8: truncated, its upper bound incremented
    table = _evolved(catalog, "string_binary", old, {"s": ["apple", long, "b"]},
                     lambda u: u.update_column("s", BinaryType()), new,
                     {"s": [b"\xff\x00", b"a", b""]})
    stats = pe.stats_from_iceberg(table)
    assert stats.schema.field("max_values").type.field("s").type == pa.binary()
    assert stats.column("min_values").to_pylist() == [{"s": b"apple"}, {"s": b""}]
    preds = []
    for v in (b"apple", b"b", long.encode(), "\u00e9".encode() * 16, b"\xff", b"\xff\x00",
              b"", b"a", b"\xc3\xaa"):
        lit = f"X'{v.hex()}'"
        preds += [f"s = {lit}", f"s > {lit}", f"s < {lit}", f"s >= {lit}"]
    assert check_sound(stats, rows_by_file(stats, new), preds) > 5
