"""``pe.stats_from_iceberg`` on tables written by PyIceberg (a SQL catalog on sqlite).

Soundness: a file holding a row that matches a predicate (DuckDB on the file's rows) is kept,
and the manifest statistics never keep fewer files than the footers (``pe.collect_stats`` of
the same files) do.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions import In
from pyiceberg.types import LongType

import prune_engine as pe
from prune_engine.errors import StatsError
from prune_engine.stats.validate import check_layout
from tests.oracle.data import CID
from tests.oracle.duck import DUCKDB_MAJOR, DuckOracle

NAN = float("nan")
P16 = "abcdefghijklmnop"  # the default metrics mode truncate(16) cuts right after this

SCHEMA = pa.schema([
    ("i", pa.int32()), ("l", pa.int64()), ("f", pa.float32()), ("g", pa.float64()),
    ("s", pa.string()), ("b", pa.binary()), ("bo", pa.bool_()), ("da", pa.date32()),
    ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")),
    ("de", pa.decimal128(9, 2)), ("st", pa.struct([("a", pa.int64()), ("b", pa.string())])),
    ("nul", pa.string()),
])


def _day(n):
    return dt.date(2024, 1, 1) + dt.timedelta(days=n)


def _ts(h, us=0):
    return dt.datetime(2024, 1, 1) + dt.timedelta(hours=h, microseconds=us)


def _file(i, l, f, g, s, b, bo, da, ts, de, st):
    n = len(i)
    return pa.table({
        "i": i, "l": l, "f": f, "g": g, "s": s, "b": b, "bo": bo, "da": da, "ts": ts,
        "tz": [None if t is None else t.replace(tzinfo=dt.timezone.utc) for t in ts],
        "de": [None if d is None else Decimal(d) for d in de], "st": st, "nul": [None] * n,
    }, schema=SCHEMA)


FILES = [
    _file([1, 2, None], [10, 20, None], [1.0, None, 0.0], [NAN, -0.0, 2.5],
          ["apple", P16 + "XYZ", None], [b"\x00\x01", None, b"\xff" * 20], [True, True, None],
          [_day(0), _day(1), None], [_ts(0), _ts(1, 4), None], ["1.50", "-3.25", None],
          [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}]),
    _file([10, 11, 12], [-1, 0, 1], [-0.0, -0.0, 2.0], [0.0, 5.0, None],
          [P16 + "AAA", P16, "\xe9" * 17], [b"a" * 30, b"a", b""], [False, False, False],
          [_day(10), _day(10), _day(12)], [_ts(24), _ts(25), _ts(26)], ["0.00", "0.01", "9.99"],
          [{"a": 5, "b": "z"}, {"a": 6, "b": None}, {"a": 7, "b": "zz"}]),
    _file([-5, -1, None], [None, None, None], [NAN, NAN, None], [-1.0, -0.0, NAN],
          ["\xfc", "\u65e5\u672c\u8a9e" * 7, "\U0001F600" * 20], [b"\xfe", b"\xff\xfe", None],
          [True, None, None], [_day(-400), None, _day(-1)], [_ts(-48), None, _ts(-1)],
          ["-100.00", None, "-0.01"], [None, None, {"a": -1, "b": "\xe9"}]),
    _file([None, None], [None, None], [None, None], [None, None], [None, None], [None, None],
          [None, None], [None, None], [None, None], [None, None], [None, None]),
]


def _sql_str(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def _predicates() -> list[str]:
    preds = []
    for col in ("i", "l"):
        values = sorted({v for t in FILES for v in t.column(col).to_pylist() if v is not None})
        for v in values:
            for w in (v - 1, v, v + 1):
                preds += [f"{col} = {w}", f"{col} < {w}", f"{col} <= {w}", f"{col} > {w}",
                          f"{col} >= {w}", f"NOT ({col} <> {w})"]
        preds += [f"{col} IN ({values[0] - 1}, {values[-1] + 1})", f"{col} IN (2, 11)",
                  f"{col} BETWEEN 3 AND 9", f"{col} IS NULL", f"{col} IS NOT NULL"]
    for col in ("f", "g"):
        for w in ("0", "-0.0", "0.0", "1.0", "2.5", "5.0", "-1.0", "2", "1e300", "-1e300"):
            preds += [f"{col} = {w}", f"{col} < {w}", f"{col} > {w}", f"{col} >= {w}",
                      f"{col} <= {w}"]
        preds += [f"{col} = CAST('NaN' AS DOUBLE)", f"{col} IS NULL", f"{col} IS NOT NULL",
                  f"{col} <> 0"]
    words = sorted({v for t in FILES for v in t.column("s").to_pylist() if v is not None})
    nul = [P16 + "\x00"] if DUCKDB_MAJOR >= 2 else []  # DuckDB 1.x ends a literal at a NUL
    for v in words + [P16[:15], *nul, P16 + "\U0010ffff", "\xe9" * 16 + "\xea", "b"]:
        preds += [f"s = {_sql_str(v)}", f"s < {_sql_str(v)}", f"s > {_sql_str(v)}",
                  f"s >= {_sql_str(v)}", f"s <= {_sql_str(v)}"]
        for k in (1, 15, 16, 17):
            preds.append(f"s LIKE {_sql_str(v[:k] + '%')}")
    preds += ["s IS NULL", "s IS NOT NULL", f"s IN ('apple', {_sql_str(P16)})"]
    for v in (b"", b"\x00", b"\x00\x01", b"a", b"a" * 30, b"b", b"\xfe", b"\xff", b"\xff" * 21):
        preds += [f"b = X'{v.hex()}'", f"b > X'{v.hex()}'", f"b < X'{v.hex()}'"]
    preds += ["b IS NULL", "bo = true", "bo = false", "bo IS NULL", "NOT bo",
              "bo IS NOT NULL AND NOT bo"]
    for d in (-401, -400, -1, 0, 1, 2, 10, 11, 12, 13):
        lit = f"DATE '{_day(d).isoformat()}'"
        preds += [f"da = {lit}", f"da > {lit}", f"da < {lit}"]
    for h, us in ((-49, 0), (-48, 0), (-1, 0), (0, 0), (1, 3), (1, 4), (1, 5), (24, 0), (26, 0),
                  (26, 1)):
        lit = _ts(h, us).isoformat(sep=" ")
        for col in ("ts", "tz"):
            preds += [f"{col} = TIMESTAMP '{lit}'", f"{col} >= TIMESTAMP '{lit}'",
                      f"{col} > TIMESTAMP '{lit}'", f"{col} < TIMESTAMP '{lit}'"]
    for v in ("-100.01", "-100.00", "-3.25", "-0.01", "0", "0.01", "1.5", "1.51", "9.99", "10"):
        preds += [f"de = {v}", f"de > {v}", f"de < {v}", f"de >= {v}"]
    preds += ["de IS NULL", "st.a = 1", "st.a > 6", "st.a < 0", "st.b = 'y'", "st.a IS NULL",
              "st.b IS NULL", "nul IS NULL", "nul IS NOT NULL", "nul = 'a'",
              "i > 5 AND s < 'b'", "i = 1 OR g = 5.0", "NOT (s = 'apple' OR i > 0)",
              "g > 2 AND f IS NULL", "l IS NULL AND i < 0"]
    return preds


@pytest.fixture(scope="module")
def typed(catalog):
    table = catalog.create_table("db.typed", schema=SCHEMA)
    for data in FILES[:2]:
        table.append(data)
    table.append(SCHEMA.empty_table())  # an empty append writes no data file
    for data in FILES[2:]:
        table.append(data)
    return table


def _rows_by_file(stats) -> pa.Table:
    pieces = []
    for path in stats.column("path").to_pylist():
        data = pq.ParquetFile(path).read()  # the file alone: no partitions from its folders
        pieces.append(data.append_column(CID, pa.array([path] * data.num_rows, pa.string())))
    return pa.concat_tables(pieces, promote_options="permissive")


def _kept(stats, pred) -> set[str]:
    mask = pe.prune(stats, pred).to_pylist()
    return {c for c, k in zip(stats.column("container").to_pylist(), mask) if k}


def test_layout_of_a_typed_table(typed):
    stats = pe.stats_from_iceberg(typed)
    assert stats.num_rows == len(FILES)  # the empty append added no file
    assert stats.column("num_records").to_pylist() == [t.num_rows for t in FILES]
    paths = stats.column("path").to_pylist()
    assert paths == stats.column("container").to_pylist()
    assert all(not p.startswith("file:") and pq.read_metadata(p).num_rows for p in paths)
    assert stats.column("row_group").null_count == len(FILES)
    check_layout(stats.schema)
    footers = pe.collect_stats(paths, granularity="file", progress=False)
    for name in ("min_values", "max_values", "null_count"):  # same types as from the footers
        assert stats.schema.field(name).type == footers.schema.field(name).type, name
    mins, maxs = stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()
    nulls = stats.column("null_count").to_pylist()
    # truncate(16): the lower bound a prefix, the upper one incremented; b"\xff" * 20 has none
    assert mins[0]["s"] == P16 and maxs[0]["s"] == "apple"
    assert maxs[1]["s"] == "\xe9" * 15 + "\xea" and maxs[0]["b"] is None
    # zeros widened, NaN counts unknown (PyIceberg records none)
    assert (mins[0]["g"], maxs[0]["g"]) == (-0.0, 2.5) and str(mins[0]["g"]) == "-0.0"
    assert str(maxs[1]["f"]) == "2.0" and str(mins[1]["f"]) == "-0.0"
    assert stats.column("nan_count").to_pylist()[0] == {"f": None, "g": None}
    assert mins[0]["tz"] == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert maxs[0]["ts"] == _ts(1, 4) and maxs[0]["de"] == Decimal("1.50")
    assert (mins[2]["da"], maxs[2]["da"]) == (_day(-400), _day(-1))
    # nested leaves: PyIceberg writes counts only; the all-null file and column
    assert mins[1]["st"] == {"a": None, "b": None} and nulls[1]["st"] == {"a": 0, "b": 1}
    assert nulls[3]["i"] == 2 and mins[3]["i"] is None and nulls[0]["nul"] == 3
    assert stats.metadata["iceberg"]["delete_files"] == 0


def test_prune_is_sound_and_never_tighter_than_the_footers(typed):
    stats = pe.stats_from_iceberg(typed)
    footers = pe.collect_stats(stats.column("path").to_pylist(), granularity="file",
                               progress=False)
    preds = _predicates()
    oracle = DuckOracle()
    truth = oracle.matching(_rows_by_file(stats), preds)
    assert all(t is not None for t in truth), oracle.errors
    pruned_some = 0
    for pred, holding in zip(preds, truth):
        kept = _kept(stats, pred)
        assert holding <= kept, (pred, holding - kept)
        assert _kept(footers, pred) <= kept, pred
        pruned_some += len(kept) < stats.num_rows
    assert pruned_some > len(preds) // 2
    # and some exactly: the all-null file matches only IS NULL tests
    assert _kept(stats, "i = 1") == {stats.column("path")[0].as_py()}


def test_identity_partitions_with_a_null_partition(catalog):
    data = pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()),
                     "region": ["eu", None, "us", "eu", "a b/c"],
                     "amount": [1.0, 2.0, -0.0, 4.0, NAN]})
    table = catalog.create_table("db.parts", schema=data.schema)
    with table.update_spec() as update:
        update.add_identity("region")
    table.append(data)
    table.append(data.slice(0, 2))
    stats = pe.stats_from_iceberg(table)
    parts = stats.column("partition_values").to_pylist()
    assert sorted(p["region"] or "" for p in parts) == ["", "", "a b/c", "eu", "eu", "us"]
    assert stats.schema.field("partition_values").type == pa.struct([("region", pa.string())])
    for p, lo, hi, n, count in zip(parts, stats.column("min_values").to_pylist(),
                                   stats.column("max_values").to_pylist(),
                                   stats.column("null_count").to_pylist(),
                                   stats.column("num_records").to_pylist()):
        assert lo["region"] == hi["region"] == p["region"]
        assert n["region"] == (count if p["region"] is None else 0)
    footers = pe.collect_stats(stats.column("path").to_pylist(), granularity="file",
                               progress=False)
    preds = ["region = 'eu'", "region IS NULL", "region = 'a b/c'", "region > 'f'",
             "region IS NOT NULL AND id > 3", "amount = 0", "amount > 3", "id IN (2, 3)",
             "region IN ('us', 'zz')", "NOT (region = 'eu')", "region LIKE 'a%'"]
    truth = DuckOracle().matching(_rows_by_file(stats), preds)
    for pred, holding in zip(preds, truth):
        kept = _kept(stats, pred)
        assert holding <= kept and _kept(footers, pred) <= kept, pred
    assert len(_kept(stats, "region = 'eu'")) == 2
    assert len(_kept(stats, "region IS NULL")) == 2


def test_columns_are_matched_by_field_id(catalog):
    table = catalog.create_table("db.evolve", schema=pa.schema([("x", pa.int64()),
                                                                ("s", pa.string())]))
    table.append(pa.table({"x": [1, 2], "s": ["a", "b"]}))
    table.update_schema().rename_column("x", "y").commit()
    table.update_schema().add_column("z", LongType()).commit()
    table.append(pa.table({"y": pa.array([10, None], pa.int64()), "s": ["c", "d"],
                           "z": pa.array([7, 8], pa.int64())}))
    stats = pe.stats_from_iceberg(table)
    assert stats.column("min_values").to_pylist() == [{"y": 1, "s": "a", "z": None},
                                                      {"y": 10, "s": "c", "z": 7}]
    assert stats.column("null_count").to_pylist() == [{"y": 0, "s": 0, "z": None},
                                                      {"y": 1, "s": 0, "z": 0}]
    assert pe.prune(stats, "y > 5").to_pylist() == [False, True]
    assert pe.prune(stats, "z = 7").to_pylist() == [True, True]  # the old file: unknown
    assert pe.prune(stats, "z IS NULL").to_pylist() == [True, False]
    with pytest.raises(pe.UnknownColumnError):
        pe.prune(stats, "x > 5")


def test_string_bounds_of_files_with_several_row_groups_are_unknown(catalog):
    # pyarrow drops a row group's min/max for a value over 4 KiB and PyIceberg then builds
    # the file's bounds from the other row groups alone: here ['a', 'a'] for a file holding
    # 'zzz...'. Such bounds are not used.
    table = catalog.create_table("db.long", schema=pa.schema([("s", pa.string()),
                                                              ("x", pa.int64())]),
                                 properties={"write.parquet.row-group-limit": "1"})
    table.append(pa.table({"s": ["z" * 5000, "a"], "x": [1, 2]}))
    (task,) = table.scan().plan_files()
    assert task.file.upper_bounds[1] == b"a"  # what PyIceberg wrote: not an upper bound
    assert len(task.file.split_offsets) == 2
    stats = pe.stats_from_iceberg(table)
    assert stats.column("max_values").to_pylist() == [{"s": None, "x": 2}]
    assert pe.prune(stats, "s = '" + "z" * 5000 + "'").to_pylist() == [True]
    assert pe.prune(stats, "x > 2").to_pylist() == [False]


def test_in_of_201_values_prunes_where_pyiceberg_gives_up(catalog):
    table = catalog.create_table("db.ids", schema=pa.schema([("id", pa.int64())]))
    for k in range(6):
        table.append(pa.table({"id": pa.array(range(k * 1000, k * 1000 + 10), pa.int64())}))
    values = list(range(2000, 2201))  # 201 values, only the third file may hold some
    assert len(table.scan(row_filter=In("id", values[:200])).plan_files()) == 1
    assert len(table.scan(row_filter=In("id", values)).plan_files()) == 6  # gives up
    stats = pe.stats_from_iceberg(table)
    mask = pe.prune(stats, pe.col("id").isin(values)).to_pylist()
    assert mask == [False, False, True, False, False, False]
    text = "id IN (" + ", ".join(map(str, values)) + ")"
    assert pe.prune(stats, text).to_pylist() == mask


def test_table_without_snapshot_is_empty(catalog):
    table = catalog.create_table("db.empty", schema=pa.schema([("x", pa.int64()),
                                                               ("f", pa.float64())]))
    stats = pe.stats_from_iceberg(catalog, "db.empty")
    assert stats.num_rows == 0
    assert stats.schema.field("min_values").type == pa.struct([("x", pa.int64()),
                                                               ("f", pa.float64())])
    assert pe.prune(stats, "x = 1").to_pylist() == []
    assert stats.metadata["iceberg"]["snapshot_id"] is None and table is not None


def test_errors(catalog, typed):
    with pytest.raises(StatsError, match="does not exist"):
        pe.stats_from_iceberg(catalog, "db.nope")
    with pytest.raises(StatsError, match="does not exist"):
        pe.stats_from_iceberg(catalog, "nowhere.nope")
    with pytest.raises(StatsError, match="name="):
        pe.stats_from_iceberg(catalog)
    with pytest.raises(StatsError, match="name="):
        pe.stats_from_iceberg(typed, "db.typed")
    with pytest.raises(StatsError, match="not str"):
        pe.stats_from_iceberg("db.typed")
    assert pe.stats_from_iceberg(catalog, ("db", "typed")).num_rows == len(FILES)
