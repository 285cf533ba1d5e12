"""stats_from_delta across Delta type widening and column mapping: every bound is read in the
type it was written in (tables shaped as Spark writes them, checked against DuckDB on the rows).

A file written while a column was ``float`` holds floats; its log says ``3.4`` for the float
3.4f, which reads as the double 3.4000000953674316, not the double 3.4. The other widenings
Delta allows (integers to long, to double and to decimal; date to timestamp_ntz; decimal
precision and scale) are exact on the log's text, and are checked to stay right.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable

import prune_engine as pe
from tests.stats.delta_logs import (
    Raw, check, comparisons, field, spark_stats, table_rows, widened, write_table,
)

F32 = np.float32
#: floats whose shortest text parses (as a double) to something else than the double they are
FLOATS = [3.4, 0.1, 0.3, 2.2, 1.0, -2.5, 16777216.0, 123456.79, 1e-45, 1.1754944e-38,
          3.4028235e38, -3.4028235e38, 0.0, -0.0, 7.0e-10, 1.0e10]

OLD = pa.schema([("float_double", pa.float32()), ("byte_long", pa.int8()),
                 ("int_double", pa.int32()), ("date_ts", pa.date32()),
                 ("dec_scale", pa.decimal128(6, 2)), ("int_dec", pa.int32()),
                 ("long_dec", pa.int64()), ("st", pa.struct([("f", pa.float32())]))])
NEW = pa.schema([("float_double", pa.float64()), ("byte_long", pa.int64()),
                 ("int_double", pa.float64()), ("date_ts", pa.timestamp("us")),
                 ("dec_scale", pa.decimal128(10, 4)), ("int_dec", pa.decimal128(12, 2)),
                 ("long_dec", pa.decimal128(22, 2)), ("st", pa.struct([("f", pa.float64())]))])
FIELDS = [
    field("float_double", "double", widened(("float", "double"))),
    field("byte_long", "long", widened(("byte", "short"), ("short", "integer"),
                                       ("integer", "long"))),
    field("int_double", "double", widened(("integer", "double"))),
    field("date_ts", "timestamp_ntz", widened(("date", "timestamp_ntz"))),
    field("dec_scale", "decimal(10,4)", widened(("decimal(6,2)", "decimal(10,4)"))),
    field("int_dec", "decimal(12,2)", widened(("integer", "decimal(12,2)"))),
    field("long_dec", "decimal(22,2)", widened(("long", "decimal(22,2)"))),
    field("st", {"type": "struct",
                 "fields": [field("f", "double", widened(("float", "double")))]}),
]
FEATURES = ["typeWidening", "timestampNtz"]


def _old_file(k: int, floats: list[float]) -> pa.Table:
    n = len(floats)
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=3 * k + i % 3) for i in range(n)]
    return pa.table({
        "float_double": pa.array(floats, pa.float32()),
        "byte_long": pa.array([(-128 + 37 * (i + k)) % 256 - 128 for i in range(n)], pa.int8()),
        "int_double": pa.array([2 ** 31 - 1 - i * 1000 * k if i % 2 else -2 ** 31 + i
                                for i in range(n)], pa.int32()),
        "date_ts": pa.array(days, pa.date32()),
        "dec_scale": pa.array([Decimal(f"{k}{i}.{i:02d}") for i in range(n)],
                              pa.decimal128(6, 2)),
        "int_dec": pa.array([2 ** 31 - 1 - k * i for i in range(n)], pa.int32()),
        "long_dec": pa.array([2 ** 63 - 1 - i if k % 2 else -2 ** 63 + i for i in range(n)],
                             pa.int64()),
        "st": pa.array([{"f": v} for v in floats], OLD.field("st").type),
    })


def _new_file(k: int) -> pa.Table:
    doubles = [3.4, 2.0, 0.1, 3.4000000953674316, -2.5]
    n = len(doubles)
    return pa.table({
        "float_double": pa.array(doubles, pa.float64()),
        "byte_long": pa.array([2 ** 40 * k + i for i in range(n)], pa.int64()),
        "int_double": pa.array([0.5 * i for i in range(n)], pa.float64()),
        "date_ts": pa.array([dt.datetime(2024, 1, 2, 10, 0, 0, 123_456 * i) for i in range(n)],
                            pa.timestamp("us")),
        "dec_scale": pa.array([Decimal(f"{i}.{k}{i}25") for i in range(n)],
                              pa.decimal128(10, 4)),
        "int_dec": pa.array([Decimal(f"{i}.5{k}") for i in range(n)], pa.decimal128(12, 2)),
        "long_dec": pa.array([Decimal(f"-{i}9999999999999999999.99") for i in range(n)],
                             pa.decimal128(22, 2)),
        "st": pa.array([{"f": v} for v in doubles], NEW.field("st").type),
    })


@pytest.fixture(scope="module")
def widening(tmp_path_factory):
    rnd = np.random.default_rng(34)
    extra = rnd.integers(0, 2 ** 31, 30, dtype=np.uint32).view(np.float32)  # any float bits
    extra = [float(v) for v in extra if math.isfinite(v)]
    files = []
    for k, floats in enumerate([FLOATS[:8], FLOATS[8:], [3.4], extra]):
        data = _old_file(k, floats)
        files.append({"name": f"old-{k}.parquet", "data": data,
                      "stats": spark_stats(data, zoned={"date_ts": False})})
    for k in range(2):
        data = _new_file(k)
        files.append({"name": f"new-{k}.parquet", "data": data,
                      "stats": spark_stats(data, zoned={"date_ts": False})})
    root = write_table(tmp_path_factory.mktemp("widening") / "t", FIELDS, files,
                       configuration={"delta.enableTypeWidening": "true"}, features=FEATURES)
    return root, files


def _doubles_of(files, column: str) -> list[float]:
    """Every double the column holds as the table reads it, and each neighbour."""
    out = set()
    for f in files:
        values = f["data"].column(column).combine_chunks()
        if pa.types.is_struct(values.type):
            values = values.field("f")
        for v in values.cast(pa.float64()).to_pylist():
            if v is not None:
                out |= {v, float(np.nextafter(v, -np.inf)), float(np.nextafter(v, np.inf))}
    return sorted(out)


def test_a_float_bound_is_read_as_the_float_it_was(widening):
    root, files = widening
    stats = pe.stats_from_delta(root)
    assert stats.schema.field("min_values").type.field("float_double").type == pa.float64()
    by_name = dict(zip(stats.column("container").to_pylist(),
                       stats.column("max_values").to_pylist()))
    one = next(c for c in by_name if c.endswith("old-2.parquet"))  # holds 3.4f only
    low = next(m for c, m in zip(stats.column("container").to_pylist(),
                                 stats.column("min_values").to_pylist()) if c == one)
    as_double = float(F32(3.4))  # 3.4000000953674316
    assert low["float_double"] <= as_double <= by_name[one]["float_double"]
    # the interval is one float step each way: tight enough to prune far values
    assert by_name[one]["float_double"] == float(np.nextafter(F32(3.4), F32(np.inf)))
    preds = [f"float_double = {as_double!r}", f"float_double IN ({as_double!r}, 7.0)",
             f"float_double != {as_double!r}", "float_double = 3.4",
             f"st.f = {as_double!r}", f"st.f != {as_double!r}"]
    classes = check(stats, table_rows(stats, NEW), preds)
    kinds = dict(zip(stats.column("container").to_pylist(), zip(*[c.split(",") for c in classes])))
    # the file holding 3.4f is kept for its value and never "all" for everything else
    assert kinds[one] == ("some",) * 6, kinds[one]


def test_every_widening_against_the_rows(widening):
    root, files = widening
    stats = pe.stats_from_delta(root)
    rows = table_rows(stats, NEW)
    preds = []
    for column in ("float_double", "st.f", "int_double"):
        preds += comparisons(column, _doubles_of(files, column.split(".")[0]))
    preds += [f"float_double = {float(t)!r}" for t in ("3.4", "0.1", "0.3", "2.2", "123456.79")]
    present = rows.to_pydict()
    for column, step in (("byte_long", 1), ("date_ts", dt.timedelta(microseconds=1)),
                         ("dec_scale", Decimal("0.0001")), ("int_dec", Decimal("0.01")),
                         ("long_dec", Decimal("0.01"))):
        values = sorted({v for v in present[column] if v is not None})
        near = sorted({x for v in values for x in (v - step, v, v + step)})
        preds += comparisons(column, near[:: max(1, len(near) // 40)] + [near[0], near[-1]])
    preds += ["date_ts = TIMESTAMP '2024-01-05 00:00:00'", "date_ts < TIMESTAMP '2024-01-01'",
              "float_double > 1e39", "float_double < -1e39", "byte_long > 2000000000000"]
    classes = check(stats, rows, preds)
    pruned = sum(c.split(",").count("none") for c in classes)
    alls = sum(c.split(",").count("all") for c in classes)
    assert pruned > len(preds) and alls > len(preds) // 2, (pruned, alls)  # still prunes
    # an exact widening keeps its bounds exact: an old file's byte / int / date / decimal
    lows = dict(zip(stats.column("container").to_pylist(), stats.column("min_values").to_pylist()))
    old = next(c for c in lows if c.endswith("old-0.parquet"))
    data = files[0]["data"]
    assert lows[old]["byte_long"] == min(data.column("byte_long").to_pylist())
    assert lows[old]["int_double"] == min(data.column("int_double").to_pylist())
    assert lows[old]["date_ts"] == dt.datetime(2024, 1, 1)
    assert lows[old]["dec_scale"] == min(data.column("dec_scale").to_pylist())
    # an int64 at its limit may be a value delta-rs saturated: no bound on that side only
    assert lows[old]["long_dec"] is None
    odd = next(c for c in lows if c.endswith("old-1.parquet"))
    assert lows[odd]["long_dec"] == min(files[1]["data"].column("long_dec").to_pylist())


def test_a_table_written_before_the_change_only(tmp_path):
    """No file of the new type yet: the old files' bounds still widen (the log does not say
    when a file was written)."""
    data = pa.table({"x": pa.array([3.4, 0.1], pa.float32())})
    root = write_table(tmp_path / "t", [field("x", "double", widened(("float", "double")))],
                       [{"name": "a.parquet", "data": data, "stats": spark_stats(data)}],
                       features=FEATURES)
    stats = pe.stats_from_delta(root)
    rows = table_rows(stats, pa.schema([("x", pa.float64())]))
    assert check(stats, rows, [f"x = {float(F32(v))!r}" for v in (3.4, 0.1)]
                 + [f"x <= {float(F32(0.1))!r}", f"x >= {float(F32(3.4))!r}",
                    "x = 0.1", "x < 0.09"]) == ["some"] * 4 + ["some", "none"]


def test_unreadable_type_history_widens_a_double(tmp_path):
    """A double column whose type history cannot be read may have been a float."""
    data = pa.table({"x": pa.array([3.4], pa.float32())})
    meta = {"delta.typeChanges": "not json"}
    root = write_table(tmp_path / "t", [field("x", "double", meta)],
                       [{"name": "a.parquet", "data": data,
                         "stats": {"numRecords": 1, "minValues": {"x": Raw("3.4")},
                                   "maxValues": {"x": Raw("3.4")}, "nullCount": {"x": 0}}}],
                       features=FEATURES)
    stats = pe.stats_from_delta(root)
    assert pe.prune(stats, f"x = {float(F32(3.4))!r}").to_pylist() == [True]


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_with_renames_and_widening(tmp_path, mode):
    """Physical names in the files and the log, logical names renamed since, a float column
    (top-level and nested) widened to double, a partition column: bounds are found by
    physical name and read in the type they were written in."""
    physical = {"amount": "col-5b1d", "st": "col-77aa", "inner": "col-0c3e", "day": "col-d4y"}

    def meta(name, i, extra=None):
        return {"delta.columnMapping.id": i, "delta.columnMapping.physicalName": physical[name],
                **(extra or {})}

    float_double = widened(("float", "double"))
    fields = [
        field("amount", "double", meta("amount", 1, float_double)),
        field("st", {"type": "struct", "fields": [
            field("inner", "double", meta("inner", 3, float_double))]}, meta("st", 2)),
        field("day", "string", meta("day", 4)),
    ]
    old_type = pa.struct([(physical["inner"], pa.float32())])
    files = []
    for k, values in enumerate([[3.4, 0.1], [2.2, 3.4]]):
        written = pa.table({physical["amount"]: pa.array(values, pa.float32()),
                            physical["st"]: pa.array([{physical["inner"]: v} for v in values],
                                                     old_type)})
        files.append({"name": f"{physical['day']}=d{k}/old-{k}.parquet", "data": written,
                      "stats": spark_stats(written), "partition": {physical["day"]: f"d{k}"}})
    written = pa.table({physical["amount"]: pa.array([3.4], pa.float64()),
                        physical["st"]: pa.array([{physical["inner"]: 3.4}],
                                                 pa.struct([(physical["inner"], pa.float64())]))})
    files.append({"name": f"{physical['day']}=d9/new.parquet", "data": written,
                  "stats": spark_stats(written), "partition": {physical["day"]: "d9"}})
    root = write_table(tmp_path / "t", fields, files, partition_columns=["day"],
                       configuration={"delta.columnMapping.mode": mode,
                                      "delta.columnMapping.maxColumnId": "4",
                                      "delta.enableTypeWidening": "true"},
                       features=["typeWidening", "columnMapping"])
    assert DeltaTable(root).schema().fields[0].name == "amount"
    stats = pe.stats_from_delta(root)
    schema = pa.schema([("amount", pa.float64()), ("st", pa.struct([("inner", pa.float64())])),
                        ("day", pa.string())])
    rows = table_rows(stats, schema, physical)
    assert rows.num_rows == 5
    lows = stats.column("min_values").to_pylist()
    assert all(m["amount"] is not None and m["st"]["inner"] is not None for m in lows)
    preds = []
    for column in ("amount", "st.inner"):
        for v in (3.4, 0.1, 2.2):
            as_double = float(F32(v))
            preds += [f"{column} = {as_double!r}", f"{column} != {as_double!r}",
                      f"{column} = {v!r}", f"{column} > {as_double!r}"]
    preds += ["day = 'd1' AND amount < 1", "amount < -4", "st.inner < 0"]
    classes = check(stats, rows, preds)
    assert classes[-2:] == ["none,none,none"] * 2  # found and used: far values prune
    assert classes[0] == "some,some,some"  # 3.4f is in both old files; 3.4 may be 3.4f
