"""Randomized: every text a Delta writer puts in the log for a value reads as bounds that hold
the value (hypothesis, with the project's derandomized profile).

Each example is one table whose files each hold one value (the log is all that is read, so the
data files are not written): a float written while the column was a float, read as a double; a
decimal(p, s) as Spark writes it (exact), as delta-rs writes it (a float64, perhaps a few steps
from the nearest, or an int64 that saturates); a timestamp cut to the millisecond, with a zone
offset or none.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from decimal import Context, Decimal, localcontext

import numpy as np
import pyarrow as pa
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from tests.stats.delta_logs import Raw, field, to_json, widened

UTC = dt.timezone.utc
WIDE = Context(prec=100)


def _table(root, fields: list[dict], texts: list[dict], features=()) -> str:
    """A log of one file per entry of ``texts`` (column: the JSON text of its min = max)."""
    os.makedirs(os.path.join(root, "_delta_log"), exist_ok=True)
    lines = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                           "readerFeatures": list(features), "writerFeatures": list(features)}}
             if features else {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
             {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
                           "schemaString": json.dumps({"type": "struct", "fields": fields}),
                           "partitionColumns": [], "configuration": {}, "createdTime": 0}}]
    for i, values in enumerate(texts):
        stats = {"numRecords": 1, "minValues": values, "maxValues": values,
                 "nullCount": {k: 0 for k in values}}
        lines.append({"add": {"path": f"f{i}.parquet", "partitionValues": {}, "size": 1,
                              "modificationTime": 0, "dataChange": True,
                              "stats": to_json(stats)}})
    with open(os.path.join(root, "_delta_log", f"{0:020d}.json"), "w") as out:
        out.write("\n".join(to_json(a) for a in lines) + "\n")
    return root


def _bounds(root, column: str) -> list[tuple]:
    stats = pe.stats_from_delta(root)
    return [(lo[column], hi[column]) for lo, hi in zip(stats.column("min_values").to_pylist(),
                                                       stats.column("max_values").to_pylist())]


floats32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=60)
@given(values=st.lists(st.tuples(floats32, st.booleans()), min_size=1, max_size=12),
       doubles=st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=4))
def test_a_float_read_as_a_double_is_held(tmp_path_factory, values, doubles):
    """Written as a float (Spark's shortest text, or delta-rs's double of the float) into a
    column now double, or written as a double since: the bounds hold the double it reads as."""
    texts = [{"x": Raw(str(np.float32(v)) if spark else repr(float(np.float32(v))))}
             for v, spark in values] + [{"x": Raw(repr(d))} for d in doubles]
    root = _table(str(tmp_path_factory.mktemp("f") / "t"),
                  [field("x", "double", widened(("float", "double")))], texts,
                  features=["typeWidening"])
    expected = [float(np.float32(v)) for v, _ in values] + list(doubles)
    for value, (lo, hi) in zip(expected, _bounds(root, "x")):
        assert lo <= value <= hi, (value, lo, hi)


@st.composite
def decimals(draw):
    precision = draw(st.integers(16, 38))
    scale = draw(st.integers(0, precision))
    limit = 10 ** precision - 1
    unscaled = draw(st.one_of(st.integers(-limit, limit), st.sampled_from(
        [limit, -limit, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 1, -1, 0])))
    unscaled = max(-limit, min(limit, unscaled))
    steps = draw(st.integers(-3, 3))  # delta-rs's double may be a step or so off
    return precision, scale, Decimal(unscaled).scaleb(-scale, context=WIDE), steps


def _delta_rs_text(value: Decimal, scale: int, steps: int) -> str:
    if scale == 0:  # an int64, saturated
        return str(max(-2 ** 63, min(2 ** 63 - 1, int(value))))
    double = float(value)
    for _ in range(abs(steps)):
        double = float(np.nextafter(double, np.inf if steps > 0 else -np.inf))
    return repr(double)


@settings(max_examples=80)
@given(cases=st.lists(decimals(), min_size=1, max_size=6))
def test_a_decimal_text_is_read_as_bounds_of_its_value(tmp_path_factory, cases):
    with localcontext(WIDE):
        for i, (precision, scale, value, steps) in enumerate(cases):
            texts = [{"d": Raw(str(value))}, {"d": Raw(_delta_rs_text(value, scale, steps))}]
            root = _table(str(tmp_path_factory.mktemp("d") / f"t{i}"),
                          [field("d", f"decimal({precision},{scale})")], texts)
            (spark_lo, spark_hi), (rs_lo, rs_hi) = _bounds(root, "d")
            saturated = scale == 0 and value in (2 ** 63 - 1, -2 ** 63)
            if len(value.as_tuple().digits) > 17 and not saturated:  # Spark's text: exact
                assert spark_lo == value == spark_hi, (value, spark_lo, spark_hi)
            for lo, hi in ((spark_lo, spark_hi), (rs_lo, rs_hi)):
                assert lo is None or lo <= value, (value, lo)
                assert hi is None or value <= hi, (value, hi)


moments = st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30))
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timedelta(minutes=m))


@settings(max_examples=60)
@given(cases=st.lists(st.tuples(moments, offsets, st.sampled_from(["Z", "offset", "none"])),
                      min_size=1, max_size=10))
def test_a_timestamp_text_is_read_as_bounds_of_its_instant(tmp_path_factory, cases):
    """Spark writes the instant in its session zone, cut to the millisecond; a writer may give
    no zone at all. Both columns, zoned and timestamp_ntz."""
    texts = []
    for when, offset, style in cases:
        cut = when.replace(microsecond=when.microsecond // 1000 * 1000)
        if style == "Z":
            zoned, ntz = cut.isoformat(timespec="milliseconds") + "Z", cut.isoformat()
        elif style == "offset":
            local = (cut + offset).replace(tzinfo=dt.timezone(offset))
            zoned = local.isoformat(timespec="milliseconds")
            ntz = cut.replace(tzinfo=dt.timezone(offset)).isoformat(timespec="milliseconds")
        else:  # no zone: for a zoned column, the writer's session zone is unknown
            zoned = (cut + offset).isoformat(timespec="milliseconds")
            ntz = cut.isoformat(timespec="milliseconds")
        texts.append({"ts": zoned, "tsn": ntz})
    root = _table(str(tmp_path_factory.mktemp("ts") / "t"),
                  [field("ts", "timestamp"), field("tsn", "timestamp_ntz")], texts,
                  features=["timestampNtz"])
    stats = pe.stats_from_delta(root)
    lows = stats.column("min_values").to_pylist()
    highs = stats.column("max_values").to_pylist()
    assert stats.schema.field("min_values").type.field("ts").type == pa.timestamp("us", "UTC")
    for (when, _, style), lo, hi in zip(cases, lows, highs):
        assert lo["ts"] <= when.replace(tzinfo=UTC) <= hi["ts"], (when, style, lo, hi)
        assert lo["tsn"] <= when <= hi["tsn"], (when, style, lo, hi)
        if style == "Z":  # exact to the millisecond
            assert hi["tsn"] - lo["tsn"] == dt.timedelta(microseconds=999)
