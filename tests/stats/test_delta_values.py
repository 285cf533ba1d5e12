"""stats_from_delta on values at the edges of their types: decimal(38) bounds read exactly from
the log's text, and timestamps far outside the nanosecond range (Spark's INT96 files holding
0001-01-01 and 9999-12-30), each checked against DuckDB on the rows.
"""

from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal, localcontext

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import prune_engine as pe
from tests.stats.delta_logs import (
    Raw, check, comparisons, field, spark_stats, table_rows, write_table,
)

UTC = dt.timezone.utc
WIDE = Context(prec=100)  # decimal arithmetic on 38-digit values, exactly
TYPES = {"d0": pa.decimal128(38, 0), "d10": pa.decimal128(38, 10), "d38": pa.decimal128(38, 38)}


def _limit(typ: pa.DataType) -> Decimal:
    return Decimal(10 ** typ.precision - 1).scaleb(-typ.scale)


def _unit(typ: pa.DataType) -> Decimal:
    return Decimal(1).scaleb(-typ.scale)


def _decimal_files() -> list[pa.Table]:
    """Files at the limits of decimal(38, s), next to them, at int64's limits and small."""
    with localcontext(WIDE):
        return [_decimal_file(shape) for shape in ("limits", "inside", "int64", "small")]


def _decimal_file(shape: str) -> pa.Table:
    columns = {}
    for name, typ in TYPES.items():
        top, unit = _limit(typ), _unit(typ)
        values = {
            "limits": [top, -top, Decimal(0)],
            "inside": [top - unit, -top + unit, (top / 3).quantize(unit)],
            "int64": [Decimal(2 ** 63 - 1) * unit, Decimal(-2 ** 63) * unit,
                      Decimal(2 ** 63) * unit],
            "small": [unit, -unit, unit * 5],
        }[shape]
        columns[name] = pa.array(values + [None], typ)
    return pa.table(columns)


def _decimal_predicates(rows: pa.Table) -> list[str]:
    preds = []
    with localcontext(WIDE):
        for name, typ in TYPES.items():
            unit = _unit(typ)
            present = sorted({v for v in rows.column(name).to_pylist() if v is not None})
            near = sorted({x for v in present for x in (v - unit, v, v + unit)
                           if abs(x) <= _limit(typ)})
            preds += comparisons(name, near)
    return preds


@pytest.fixture(scope="module")
def spark_decimals(tmp_path_factory):
    """Spark writes decimals as exact JSON numbers (``1E-38`` for the smallest step)."""
    files = [{"name": f"part-{i}.parquet", "data": data, "stats": spark_stats(data)}
             for i, data in enumerate(_decimal_files())]
    fields = [field(name, f"decimal({t.precision},{t.scale})") for name, t in TYPES.items()]
    return write_table(tmp_path_factory.mktemp("decimals") / "t", fields, files)


def _assert_bounds(lows: list, highs: list) -> None:
    """The bounds read from Spark's log of the files of :func:`_decimal_files`."""
    for name, typ in TYPES.items():
        top, unit = _limit(typ), _unit(typ)
        # 38 significant digits cannot be a float64's text: exact
        assert (lows[0][name], highs[0][name]) == (-top, top), name
        assert (lows[1][name], highs[1][name]) == (-top + unit, top - unit), name
        # an integer at int64's limits may be one delta-rs saturated: unknown on that side
        if typ.scale == 0:
            assert (lows[2][name], highs[2][name]) == (None, Decimal(2 ** 63))
        # a short text may be a float64 of delta-rs: widened by its error and two units
        # (three once rounded outward), still a bound; an integer text is exact
        if typ.scale == 0:
            assert (lows[3][name], highs[3][name]) == (-1, 5)
        else:
            assert (lows[3][name], highs[3][name]) == (-4 * unit, 8 * unit), name


def test_spark_decimals_are_exact_to_38_digits(spark_decimals):
    stats = pe.stats_from_delta(spark_decimals)
    assert [stats.schema.field("min_values").type.field(n).type for n in TYPES] == \
        list(TYPES.values())
    with localcontext(WIDE):
        _assert_bounds(stats.column("min_values").to_pylist(),
                       stats.column("max_values").to_pylist())
    rows = table_rows(stats, pa.schema(list(TYPES.items())))
    classes = check(stats, rows, _decimal_predicates(rows))
    # at the limits, the exact bounds prune: nothing is above the max of the inside file
    files = [c.split(",") for c in classes]
    assert sum(f.count("none") for f in files) > len(files) // 2
    # (built, not SQL text: the SQL front end reads a literal past 17 digits as a double)
    below_top = Decimal(f"{'9' * 37}8")
    assert pe.prune(stats, pe.col("d0") > below_top).to_pylist() == [True, False, False, False]
    above_bottom = Decimal(f"-0.{'9' * 37}8")
    assert pe.prune(stats, pe.col("d38") < above_bottom).to_pylist() == \
        [True, False, False, False]
    assert pe.classify(stats, f"d10 >= {-_limit(TYPES['d10'])}").to_pylist()[0] == "some"


def test_deltalake_decimals_stay_sound(tmp_path):
    """delta-rs writes a decimal as a float64 (not always the nearest) or, at scale 0, as an
    int64 that saturates: the bounds are widened, never wrong."""
    root = str(tmp_path / "t")
    for i, data in enumerate(_decimal_files()):
        write_deltalake(root, data, mode="append" if i else "error")
    stats = pe.stats_from_delta(root)
    rows = table_rows(stats, pa.schema(list(TYPES.items())))
    classes = check(stats, rows, _decimal_predicates(rows))
    assert sum(c.split(",").count("none") for c in classes) > len(classes) // 4


def test_decimal_texts_at_and_beyond_the_type(tmp_path):
    """Out-of-range or over-long texts: rounded outward, kept in the type's range, or unknown
    with a warning when impossible (a min above the type's largest value)."""
    typ = pa.decimal128(5, 2)
    data = pa.table({"d": pa.array([Decimal("1.25"), Decimal("-999.99")], typ)})
    bounds = [("-1000.5", "999.999"), ("1.245", "1.255"), ("1000", "1001")]
    files = [{"name": f"f{i}.parquet", "data": data,
              "stats": {"numRecords": 2, "minValues": {"d": Raw(lo)}, "maxValues": {"d": Raw(hi)},
                        "nullCount": {"d": 0}}} for i, (lo, hi) in enumerate(bounds)]
    root = write_table(tmp_path / "t", [field("d", "decimal(5,2)")], files)
    with pytest.warns(UserWarning, match="f2.parquet.*d: min a decimal out of its type's range"):
        stats = pe.stats_from_delta(root)
    assert stats.column("min_values").to_pylist() == \
        [{"d": Decimal("-999.99")}, {"d": Decimal("1.24")}, {"d": None}]
    assert stats.column("max_values").to_pylist() == \
        [{"d": Decimal("999.99")}, {"d": Decimal("1.26")}, {"d": Decimal("999.99")}]


# ------------------------------------------------------------------------------ timestamps

FAR = [dt.datetime(9999, 12, 30), dt.datetime(1, 1, 1), dt.datetime(2262, 4, 12),
       dt.datetime(1677, 9, 21), None]
NEAR = [dt.datetime(2024, 5, 6, 7, 8, 9, 123456), dt.datetime(1970, 1, 1), None]
SCHEMA = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("us", "UTC")),
                    ("tsn", pa.timestamp("us"))])
TIMESTAMP_FIELDS = [field("id", "integer"), field("ts", "timestamp"),
                    field("tsn", "timestamp_ntz")]


def _stamps(values: list, columns=("ts", "tsn")) -> pa.Table:
    data = pa.table({"id": pa.array(range(len(values)), pa.int32()),
                     "ts": pa.array([v and v.replace(tzinfo=UTC) for v in values],
                                    pa.timestamp("us", "UTC")),
                     "tsn": pa.array(values, pa.timestamp("us"))})
    return data.select(["id", *columns])


def _timestamp_predicates(column: str) -> list[str]:
    preds = ["ts = TIMESTAMP '9999-12-30 00:00:00'", "ts >= TIMESTAMP '9999-01-01'",
             "ts > TIMESTAMP '2262-04-12'", "ts != TIMESTAMP '9999-12-30 00:00:00'",
             "ts >= '9999-01-01'", "ts <= TIMESTAMP '0001-01-01 00:00:00'",
             "ts < TIMESTAMP '1677-09-22'", "ts BETWEEN TIMESTAMP '2262-04-11' AND "
             "TIMESTAMP '2262-04-13'", "ts IS NULL", "ts > TIMESTAMP '9999-12-31'"]
    preds = [p.replace("ts ", f"{column} ", 1) for p in preds]
    us = dt.timedelta(microseconds=1)
    for v in FAR[:4] + NEAR[:2]:
        near = [v + us] + ([v - us] if v.year > 1 else []) + [v]
        preds += comparisons(column, [w.replace(tzinfo=UTC) if column == "ts" else w
                                      for w in near])
    return preds


@pytest.mark.parametrize("column", ["ts", "tsn"])
def test_far_timestamps_of_spark_files(tmp_path, column):
    """Spark 3 writes ``timestamp`` as INT96 and its log stats as ``9999-12-30T00:00:00.000Z``
    (timestamp_ntz as INT64 microseconds, its stats without a zone): statistics typed
    timestamp[us] hold them, and the file holding 9999-12-30 is kept for it."""
    files = []
    for name, values in (("far", FAR), ("near", NEAR)):
        data = _stamps(values, [column])
        written = data.cast(pa.schema([("id", pa.int32()), (column, pa.timestamp("us"))]))
        files.append({"name": f"{name}.parquet", "data": written, "int96": column == "ts",
                      "stats": spark_stats(data, zoned={"tsn": False})})
    fields = [f for f in TIMESTAMP_FIELDS if f["name"] in ("id", column)]
    root = write_table(tmp_path / "t", fields, files, features=["timestampNtz"])
    stats = pe.stats_from_delta(root)
    typ = SCHEMA.field(column).type
    assert stats.schema.field("min_values").type.field(column).type == typ
    zone = UTC if column == "ts" else None
    assert stats.column("max_values").to_pylist()[0][column] == \
        dt.datetime(9999, 12, 30, 0, 0, 0, 999, tzinfo=zone)
    assert stats.column("min_values").to_pylist()[0][column] == dt.datetime(1, 1, 1, tzinfo=zone)
    rows = table_rows(stats, pa.schema([SCHEMA.field("id"), SCHEMA.field(column)]))
    assert rows.column(column).to_pylist()[0] == dt.datetime(9999, 12, 30, tzinfo=zone)
    classes = check(stats, rows, _timestamp_predicates(column))
    assert classes[:4] == ["some,none", "some,none", "some,none", "some,some"]


def test_far_timestamps_written_by_deltalake(tmp_path):
    root = str(tmp_path / "t")
    write_deltalake(root, _stamps(FAR))
    write_deltalake(root, _stamps(NEAR), mode="append")
    stats = pe.stats_from_delta(root)
    rows = table_rows(stats, SCHEMA)
    far = [m["tsn"].year == 9999 for m in stats.column("max_values").to_pylist()].index(True)
    for column in ("ts", "tsn"):
        classes = [c.split(",") for c in check(stats, rows, _timestamp_predicates(column))]
        assert [(c[far], c[1 - far]) for c in classes[:4]] == \
            [("some", "none")] * 3 + [("some", "some")]


def test_timestamp_texts_and_their_zones(tmp_path):
    """An offset is an instant; a zoned column's text without one, or a timestamp_ntz text
    with a non-UTC one, depends on the writer's session zone: widened by 18 hours."""
    data = _stamps([dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 1, 18)])
    texts = [("2024-01-01T04:00:00.000-08:00", "2024-01-01T18:00:00.000Z",
              "2024-01-01T12:00:00.000Z", "2024-01-01T18:00:00.000+00:00"),
             ("2024-01-01T12:00:00.000", "2024-01-01T18:00:00", "2024-01-01T12:00:00+05:00",
              "2024-01-01T18:00:00.000-01:00")]
    files = [{"name": f"f{i}.parquet", "data": data, "stats": {
        "numRecords": 2, "minValues": {"ts": a, "tsn": c}, "maxValues": {"ts": b, "tsn": d},
        "nullCount": {"ts": 0, "tsn": 0}}} for i, (a, b, c, d) in enumerate(texts)]
    root = write_table(tmp_path / "t", TIMESTAMP_FIELDS, files, features=["timestampNtz"])
    stats = pe.stats_from_delta(root)
    lows, highs = stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()
    ms = dt.timedelta(microseconds=999)
    slack = dt.timedelta(hours=18)
    assert (lows[0]["ts"], highs[0]["ts"]) == (dt.datetime(2024, 1, 1, 12, tzinfo=UTC),
                                               dt.datetime(2024, 1, 1, 18, tzinfo=UTC) + ms)
    assert (lows[0]["tsn"], highs[0]["tsn"]) == (dt.datetime(2024, 1, 1, 12),
                                                 dt.datetime(2024, 1, 1, 18) + ms)
    noon, six = dt.datetime(2024, 1, 1, 12, tzinfo=UTC), dt.datetime(2024, 1, 1, 18, tzinfo=UTC)
    assert (lows[1]["ts"], highs[1]["ts"]) == (noon - slack, six + slack + ms)
    assert (lows[1]["tsn"], highs[1]["tsn"]) == (dt.datetime(2024, 1, 1, 12) - slack,
                                                 dt.datetime(2024, 1, 1, 18) + slack + ms)
    rows = table_rows(stats, SCHEMA)
    check(stats, rows, comparisons("ts", [dt.datetime(2024, 1, 1, h, tzinfo=UTC)
                                          for h in (11, 12, 18, 19)])
          + comparisons("tsn", [dt.datetime(2024, 1, 1, h) for h in (11, 12, 18, 19)]))
