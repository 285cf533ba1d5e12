"""stats_from_delta: per-file statistics from a Delta log, checked against the rows.

Every table here is written by ``deltalake.write_deltalake`` (or, where a writer's behaviour
delta-rs does not have is tested, by a hand-written log entry such as Spark writes). The
oracle is DuckDB on each file's actual rows: a file that holds a row matching a predicate
must be kept; and what the log's statistics keep must be a superset of what the footers'
statistics (``collect_stats`` on the same files) keep.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import prune_engine as pe
from prune_engine.stats import layout
from prune_engine.expr.like import successor as _increment  # the max's increment
from tests.oracle.data import CID
from tests.oracle.duck import DuckOracle, portable_sql
from tests.stats.delta_logs import sql as _sql

NAN = float("nan")
LONG_A = "a" * 70
STRINGS = ["", "abc", "abd", LONG_A + "x", LONG_A + "y", "a" * 63 + "c", "é" * 40,
           "é" * 39 + "ê", "\U0001F600" * 20, "zz", "\U0010FFFF" * 3, None]
TS_OFFSETS = [0, 1, 999, 1000, 500_000, 999_500, 999_999]  # microseconds
BIG = [12345678901234567890123456789012345678, 2 ** 63 + 5, -(2 ** 63 + 7)]
MID = ["1234567890123456.78", "-1234567890123456.79", "9007199254740993.01"]


def _write(k: int) -> pa.Table:
    """The rows of write ``k``: values shifted per write so that files differ."""
    rnd = np.random.default_rng(100 + k)
    n = 24

    def pick(pool):
        return [pool[i] for i in rnd.integers(0, len(pool), n)]

    ints = list(range(10 * k, 10 * k + 8)) + [None]
    base = dt.datetime(2024, 1, 1, 10) + dt.timedelta(hours=k)
    stamps = [base + dt.timedelta(seconds=s, microseconds=us)
              for s in (0, 1) for us in TS_OFFSETS] + [None]
    if k == 3:
        stamps.append(dt.datetime(1969, 12, 31, 23, 59, 59, 999_500))
    words = STRINGS + [f"k{k}", f"k{k}" + "q" * 40]
    floats = [NAN, -0.0, 0.0, 1.5, -2.25, 3.0 * k, None] + ([float("inf")] if k == 2 else [])
    decs = [Decimal(f"{k}.{d:03d}") for d in (1, 999, 500)] + [None]
    mids = [Decimal(m) for m in MID] + [Decimal(f"{k}.01"), None]
    bigs = [Decimal(b) for b in BIG] + [Decimal(k), None]
    structs = [{"a": a, "b": b} for a in (k, k + 1, None) for b in ("x", "é" * 40, None)] + [None]
    return pa.table({
        "i8": pa.array(pick(ints), pa.int8()),
        "i16": pa.array(pick(ints), pa.int16()),
        "i32": pa.array(pick(ints), pa.int32()),
        "i64": pa.array(pick(ints), pa.int64()),
        "u16": pa.array(pick(ints), pa.uint16()),  # deltalake stores it as short (int16)
        "f32": pa.array(pick(floats), pa.float32()),
        "f64": pa.array(pick(floats), pa.float64()),
        "s": pa.array(pick(words), pa.string()),
        "b": pa.array(pick([b"", b"\x00\xff", b"ab", None]), pa.binary()),
        "bo": pa.array(pick([True, False, None]), pa.bool_()),
        "d": pa.array(pick([dt.date(2024, 1, 1) + dt.timedelta(days=10 * k + i)
                            for i in range(4)] + [None]), pa.date32()),
        "ts": pa.array(pick(stamps), pa.timestamp("us")),
        "tsz": pa.array(pick(stamps), pa.timestamp("us", "UTC")),
        "dec": pa.array(pick(decs), pa.decimal128(10, 3)),
        "dmid": pa.array(pick(mids), pa.decimal128(18, 2)),
        "dbig": pa.array(pick(bigs), pa.decimal128(38, 0)),
        "st": pa.array(pick(structs), pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "tags": pa.array(pick([["a", "b"], [], None, ["zz"]]), pa.list_(pa.string())),
        "pint": pa.array(pick([1, 2]), pa.int32()),
        "pstr": pa.array(pick(["x", "y", None]), pa.string()),
    })


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("delta") / "t")
    for k in range(4):
        write_deltalake(root, _write(k), partition_by=["pint", "pstr"],
                        mode="append" if k else "error")
    return root


def _rows(stats) -> pa.Table:
    """Each file's rows, with its container id and its typed partition values."""
    parts = stats.column("partition_values").to_pylist() \
        if "partition_values" in stats.table.column_names else [{}] * stats.num_rows
    pieces = []
    for cid, path, part in zip(stats.column("container").to_pylist(),
                               stats.column("path").to_pylist(), parts):
        data = pq.ParquetFile(path).read()
        for name, value in part.items():
            typ = stats.table.schema.field("partition_values").type.field(name).type
            data = data.append_column(name, pa.array([value] * data.num_rows, typ))
        pieces.append(data.append_column(CID, pa.array([cid] * data.num_rows, pa.string())))
    return pa.concat_tables(pieces, promote_options="permissive")


def _check(stats, predicates, reference=None) -> list[int]:
    """Every file holding a matching row is kept (DuckDB on the rows), and a superset of
    what ``reference`` keeps; returns how many files each predicate pruned."""
    oracle = DuckOracle()
    matches = oracle.matching(_rows(stats), [portable_sql(p) for p in predicates])
    ids = stats.column("container").to_pylist()
    pruned = []
    for p, match in zip(predicates, matches):
        assert match is not None, f"DuckDB rejected {p!r}: {dict(oracle.errors)}"
        kept = pe.prune(stats, p).to_pylist()
        lost = sorted(match - {c for c, k in zip(ids, kept) if k})
        assert not lost, f"{p!r} pruned files holding matching rows: {lost}"
        if reference is not None:
            ref = dict(zip(reference.column("container").to_pylist(),
                           pe.prune(reference, p).to_pylist()))
            tighter = [c for c, k in zip(ids, kept) if ref[c] and not k]
            assert not tighter, f"{p!r}: the log prunes files the footers keep: {tighter}"
        pruned.append(kept.count(False))
    return pruned


def _neighbours(value):
    if isinstance(value, bool):
        return [value]
    if isinstance(value, int):
        return [value - 1, value, value + 1]
    if isinstance(value, float):
        return [np.nextafter(value, -np.inf), value, np.nextafter(value, np.inf)]
    if isinstance(value, Decimal):
        unit = Decimal(1).scaleb(value.as_tuple().exponent)
        return [value - unit, value, value + unit]
    if isinstance(value, dt.datetime):
        us = dt.timedelta(microseconds=1)
        return [value - us, value, value + us]
    if isinstance(value, dt.date):
        return [value - dt.timedelta(days=1), value, value + dt.timedelta(days=1)]
    if isinstance(value, str):
        return [v for v in (value[:-1], value, value + " ", _increment(value))
                if v is not None] if value else [value]
    return []


def _battery(data: pa.Table) -> list[str]:
    """Comparisons at and next to the values present, IN, IS NULL, LIKE prefixes, ranges."""
    preds = []
    columns = ["i8", "i16", "i32", "i64", "u16", "f32", "f64", "s", "bo", "d", "ts", "tsz",
               "dec", "dmid", "dbig", "st.a", "st.b", "pint", "pstr"]
    for name in columns:
        top, _, child = name.partition(".")
        values = data.column(top)
        if child:
            values = values.combine_chunks().field(child)
        present = sorted({v for v in values.to_pylist()
                          if v is not None and not (isinstance(v, float) and not np.isfinite(v))},
                         key=lambda v: (str(type(v)), v))
        literals = []
        for v in present:
            literals.extend(_neighbours(v))
        literals = [v for v in dict.fromkeys(literals)
                    if not isinstance(v, float) or np.isfinite(v)]
        if len(literals) > 24:  # the extremes and an even spread of the inside
            keep = np.unique(np.linspace(0, len(literals) - 1, 24).astype(int))
            literals = [literals[i] for i in keep]
        for v in literals:
            for op in ("=", "<", ">", "<=", ">="):
                preds.append(f"{name} {op} {_sql(v)}")
        preds.append(f"{name} IS NULL")
        preds.append(f"{name} IS NOT NULL")
        if len(present) >= 2:
            preds.append(f"{name} IN ({_sql(present[0])}, {_sql(present[-1])})")
            preds.append(f"{name} BETWEEN {_sql(present[1])} AND {_sql(present[-1])}")
    for prefix in ("a" * 63, "a" * 64, LONG_A, "é" * 39, "é" * 41, "k1", "\U0001F600" * 19, "z"):
        preds.append(f"s LIKE {_sql(prefix + '%')}")
    preds += ["b IS NULL", "b IS NOT NULL", "f64 > 0 AND pint = 2", "pstr IS NULL OR i64 < 3",
              "NOT (i64 < 15)", "ts >= TIMESTAMP '2024-01-01 11:00:00' AND pstr = 'x'",
              "tsz BETWEEN TIMESTAMPTZ '2024-01-01 12:00:00+00:00' AND "
              "TIMESTAMPTZ '2024-01-01 12:00:00.999999+00:00'"]
    return preds


def test_prune_keeps_every_matching_file_and_no_less_than_the_footers(table):
    stats = pe.stats_from_delta(table)
    footers = pe.collect_stats(stats.column("path").to_pylist(), granularity="file",
                               progress=False)
    assert stats.column("container").to_pylist() == footers.column("container").to_pylist()
    data = _rows(stats)
    preds = _battery(data)
    assert len(preds) > 500
    pruned = _check(stats, preds, reference=footers)
    # it does prune: many predicates prune some files, and some prune every file
    assert sum(1 for p in pruned if 0 < p < stats.num_rows) > 100
    assert any(p == stats.num_rows for p in pruned)
    assert pe.prune(stats, "i64 > 100").to_pylist() == [False] * stats.num_rows


def test_files_paths_and_partitions(table):
    stats = pe.stats_from_delta(table)
    adds = pa.table(DeltaTable(table).get_add_actions(flatten=True))
    assert stats.num_rows == adds.num_rows >= 10
    paths = stats.column("path").to_pylist()
    assert stats.column("container").to_pylist() == paths
    assert all(os.path.isfile(p) and p.startswith(os.path.join(table, "pint=")) for p in paths)
    assert stats.column("row_group").null_count == stats.num_rows
    assert stats.column("num_records").to_pylist() == adds.column("num_records").to_pylist()
    parts = stats.column("partition_values").to_pylist()
    assert {p["pstr"] for p in parts} == {"x", "y", None}
    assert stats.schema.field("partition_values").type == \
        pa.struct([("pint", pa.int32()), ("pstr", pa.string())])
    mins = stats.column("min_values").to_pylist()
    maxs = stats.column("max_values").to_pylist()
    nulls = stats.column("null_count").to_pylist()
    for part, lo, hi, nc, n in zip(parts, mins, maxs, nulls,
                                   stats.column("num_records").to_pylist()):
        for key in ("pint", "pstr"):  # exact min = max, null count all or nothing
            assert lo[key] == hi[key] == part[key]
            assert nc[key] == (n if part[key] is None else 0)
        # columns without statistics in the log are unknown, never 0 or empty
        assert lo["b"] is None and hi["b"] is None and nc["b"] is None
        assert lo["tags"] is None and nc["tags"] is None
    assert pe.prune(stats, "pstr IS NULL").to_pylist() == [p["pstr"] is None for p in parts]

    assert stats.metadata["delta"] == {"table": table, "version": 3, "deletion_vectors": [],
                                       "schema": json.dumps(json.loads(
                                           DeltaTable(table).schema().to_json()), sort_keys=True)}


def test_layout_matches_collect_stats(table):
    stats = pe.stats_from_delta(table)
    footers = pe.collect_stats(stats.column("path").to_pylist(), granularity="file",
                               progress=False)
    # nan_count is optional: the footers give one per float leaf (unknown for pyarrow's
    # files), the log has none
    floats = [p for p, t, _ in layout.leaves(footers.schema.field(layout.MIN_VALUES).type)
              if pa.types.is_floating(t)]
    assert [p for p, _, _ in layout.leaves(footers.schema.field(layout.NAN_COUNT).type)] == floats
    assert stats.table.column_names == [c for c in footers.table.column_names
                                        if c != layout.NAN_COUNT]
    for name in (layout.CONTAINER, layout.PATH, layout.ROW_GROUP, layout.NUM_RECORDS):
        assert stats.schema.field(name).type == footers.schema.field(name).type
    for name in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT):
        ours = list(layout.leaves(stats.schema.field(name).type))
        theirs = list(layout.leaves(footers.schema.field(name).type))
        assert [(p, k) for p, _, k in ours] == [(p, k) for p, _, k in theirs]
        differ = [p for (p, a, _), (_, b, _) in zip(ours, theirs) if a != b]
        # only the integer partition column: collect_stats infers int64 from folder names
        assert differ == ([] if name == layout.NULL_COUNT else [("pint",)]), differ
    assert stats.schema.field(layout.MIN_VALUES).type.field("ts").type == pa.timestamp("us")
    assert stats.schema.field(layout.MIN_VALUES).type.field("tsz").type == \
        pa.timestamp("us", "UTC")
    assert stats.schema.field(layout.MIN_VALUES).type.field("u16").type == pa.int16()


def test_bounds_are_widened_where_the_log_cuts(table):
    stats = pe.stats_from_delta(table)
    data = _rows(stats)
    ids = data.column(CID).to_pylist()
    maxs = dict(zip(stats.column("container").to_pylist(),
                    stats.column("max_values").to_pylist()))
    mins = dict(zip(stats.column("container").to_pylist(),
                    stats.column("min_values").to_pylist()))
    for name in ("ts", "tsz", "s", "dmid", "dbig", "f32", "f64", "dec"):
        for cid, v in zip(ids, data.column(name).to_pylist()):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            lo, hi = mins[cid][name], maxs[cid][name]
            if isinstance(v, str):
                v = v.encode()
                lo = None if lo is None else lo.encode()
                hi = None if hi is None else hi.encode()
            assert lo is None or lo <= v, (name, cid, lo, v)
            assert hi is None or v <= hi, (name, cid, hi, v)
    # the log holds the timestamp max cut to the millisecond: widened to the microsecond
    tmax = [m["ts"] for m in maxs.values() if m["ts"] is not None]
    assert tmax and all(t.microsecond % 1000 == 999 for t in tmax)
    # a decimal(38, 0) beyond int64 comes back clamped by deltalake: unknown here
    big = {c for c, v in zip(ids, data.column("dbig").to_pylist())
           if v is not None and v > 2 ** 63}
    assert big and all(maxs[c]["dbig"] is None for c in big)
    assert any(maxs[c]["dbig"] is not None for c in maxs if c not in big)


def test_version_time_travel(tmp_path):
    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": [1, 2]}))
    write_deltalake(root, pa.table({"x": [5, 6]}), mode="append")
    write_deltalake(root, pa.table({"x": [9]}), mode="overwrite")
    by_version = {v: pe.stats_from_delta(root, version=v) for v in (0, 1, 2)}
    assert [s.num_rows for s in by_version.values()] == [1, 2, 1]
    assert by_version[0].column("max_values").to_pylist() == [{"x": 2}]
    assert sorted(m["x"] for m in by_version[1].column("max_values").to_pylist()) == [2, 6]
    assert pe.stats_from_delta(root).column("path").to_pylist() == \
        by_version[2].column("path").to_pylist()
    assert set(by_version[0].column("path").to_pylist()) < \
        set(by_version[1].column("path").to_pylist())
    assert "partition_values" not in by_version[0].table.column_names
    assert by_version[1].metadata["delta"]["version"] == 1


def test_errors(tmp_path):
    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": [1]}))
    with pytest.raises(pe.StatsError, match="no loadable version 5; its newest is 0"):
        pe.stats_from_delta(root, version=5)
    for bad in (-1, "0", True, 1.0):
        with pytest.raises(pe.StatsError, match="version must be a non-negative int"):
            pe.stats_from_delta(root, version=bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    parquet = str(tmp_path / "f.parquet")
    pq.write_table(pa.table({"x": [1]}), parquet)
    for bad in (str(tmp_path / "missing"), str(empty), parquet):
        with pytest.raises(pe.StatsError, match="not a Delta table") as info:
            pe.stats_from_delta(bad)
        assert info.value.containers == [bad]


def test_columns_past_the_indexed_ones_are_unknown(tmp_path):
    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"a": [1, 2], "b": [3, None], "c": [None, None],
                                    "d": ["x", "y"]}),
                    configuration={"delta.dataSkippingNumIndexedCols": "2"})
    stats = pe.stats_from_delta(root)
    assert stats.column("null_count").to_pylist() == [{"a": 0, "b": 1, "c": None, "d": None}]
    assert stats.column("min_values").to_pylist() == [{"a": 1, "b": 3, "c": None, "d": None}]
    assert _check(stats, ["c IS NULL", "c > 0", "c IS NOT NULL", "d = 'x'", "d = 'q'",
                          "a > 2", "b IS NULL"]) == [0, 0, 0, 0, 0, 1, 0]


def test_renamed_column_finds_its_statistics(tmp_path):
    """Column mapping by name: the log keys statistics by physical names; a rename (a new
    metaData action, as Spark's ALTER TABLE RENAME COLUMN writes) keeps them."""
    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": [1, 4], "st": [{"a": "p"}, {"a": "q"}]}),
                    configuration={"delta.columnMapping.mode": "name"})
    with open(os.path.join(root, "_delta_log", "00000000000000000000.json")) as f:
        actions = [json.loads(line) for line in f if line.strip()]
    meta = next(a for a in actions if "metaData" in a)
    schema = json.loads(meta["metaData"]["schemaString"])
    schema["fields"][0]["name"] = "renamed"
    schema["fields"][1]["type"]["fields"][0]["name"] = "aa"
    meta["metaData"]["schemaString"] = json.dumps(schema)
    with open(os.path.join(root, "_delta_log", "00000000000000000001.json"), "w") as f:
        f.write(json.dumps(meta) + "\n")
    assert DeltaTable(root).schema().fields[0].name == "renamed"
    stats = pe.stats_from_delta(root)
    assert stats.column("min_values").to_pylist() == [{"renamed": 1, "st": {"aa": "p"}}]
    assert stats.column("max_values").to_pylist() == [{"renamed": 4, "st": {"aa": "q"}}]
    assert pe.prune(stats, "renamed > 4").to_pylist() == [False]
    assert pe.prune(stats, "st.aa = 'q'").to_pylist() == [True]
    assert pe.stats_from_delta(root, version=0).column("max_values").to_pylist() == \
        [{"x": 4, "st": {"a": "q"}}]


def test_spark_style_log(tmp_path):
    """A log entry as Spark's Delta writer makes it: a string max cut to 32 characters plus
    the tie-breaker U+FFFF (below a supplementary character in UTF-8 order, so as written
    not an upper bound), decimals as exact JSON numbers, timestamps to the millisecond."""
    root = tmp_path / "t"
    (root / "_delta_log").mkdir(parents=True)
    prefix = "a" * 32
    top = prefix + "\U0001F600"  # the largest value: above prefix + U+FFFF + anything
    data = pa.table({
        "s": [top, prefix + "\uffffz", "a"],
        "n": pa.array([Decimal("1234567890123456.123"), Decimal("-1.5"), None],
                      pa.decimal128(20, 3)),
        "ts": pa.array([dt.datetime(2024, 1, 1, 10, 0, 0, 999_999), None, None],
                       pa.timestamp("us", "UTC")),
        "f": pa.array([1.5, 2.5, None], pa.float32()),
        "g": pa.array([0.0, -0.0, None], pa.float64()),
    })
    pq.write_table(data, str(root / "part-0.parquet"))
    schema = {"type": "struct", "fields": [
        {"name": "s", "type": "string", "nullable": True, "metadata": {}},
        {"name": "n", "type": "decimal(20,3)", "nullable": True, "metadata": {}},
        {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "f", "type": "float", "nullable": True, "metadata": {}},
        {"name": "g", "type": "double", "nullable": True, "metadata": {}}]}
    written = prefix + "\uffff"
    assert written.encode() < top.encode()
    stats = {"numRecords": 3,
             "minValues": {"s": "a", "n": -1.5, "ts": "2024-01-01T10:00:00.999Z",
                           "f": 1.5, "g": 0.0},
             "maxValues": {"s": written, "n": 1234567890123456.123,
                           "ts": "2024-01-01T10:00:00.999Z", "f": 2.5, "g": -0.0},
             "nullCount": {"s": 0, "n": 1, "ts": 2, "f": 1, "g": 1}}
    log = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "00000000-0000-0000-0000-000000000001", "format": {
            "provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
            "partitionColumns": [], "configuration": {}, "createdTime": 0}},
        {"add": {"path": "part-0.parquet", "partitionValues": {},
                 "size": os.path.getsize(root / "part-0.parquet"), "modificationTime": 0,
                 "dataChange": True, "stats": json.dumps(stats)}},
    ]
    (root / "_delta_log" / "00000000000000000000.json").write_text(
        "\n".join(json.dumps(a) for a in log) + "\n")
    table = pe.stats_from_delta(str(root))
    hi = table.column("max_values").to_pylist()[0]
    assert hi["s"] == "a" * 31 + "b"  # the prefix incremented: above every continuation
    assert hi["ts"] == dt.datetime(2024, 1, 1, 10, 0, 0, 999_999, tzinfo=dt.timezone.utc)
    lo = table.column("min_values").to_pylist()[0]
    # float32 widened by one step; a zero min is -0.0 and a zero max +0.0
    assert lo["f"] == float(np.nextafter(np.float32(1.5), np.float32(-np.inf)))
    assert hi["f"] == float(np.nextafter(np.float32(2.5), np.float32(np.inf)))
    assert math.copysign(1, lo["g"]) == -1 and math.copysign(1, hi["g"]) == 1
    preds = [f"s = {_sql(top)}", f"s > {_sql(written)}", f"s >= {_sql(prefix + chr(0xFFFF))}",
             "s LIKE 'aaaa%'", "n >= 1234567890123456.123", "n > 1234567890123456.122",
             "n <= -1.5", "ts = TIMESTAMPTZ '2024-01-01 10:00:00.999999+00:00'",
             "ts > TIMESTAMPTZ '2024-01-01 10:00:00.9995+00:00'",
             "f >= 2.5", "f <= 1.5", "g = 0", "g >= -0.0",
             "s > 'b'", "n > 2e16", "ts > TIMESTAMPTZ '2024-01-01 10:00:01+00:00'", "f < 1",
             "g < -1"]
    assert _check(table, preds) == [0] * 13 + [1] * 5


def test_increment():
    assert _increment("ab") == "ac"
    assert _increment("a\U0010FFFF") == "b"
    assert _increment("a\ud7ff") == "a\ue000"
    assert _increment("\U0010FFFF\U0010FFFF") is None
    assert _increment("") is None
    assert _increment("a\uffff") == "a\U00010000"
