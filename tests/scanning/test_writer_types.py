"""The scan on the types other writers choose: string and binary in their three Arrow
encodings (deltalake writes views), dictionary columns (pandas' categoricals), Spark's INT96
timestamps past 2262, decimals to 38 digits; and files that cannot be read. Each against a
row-level oracle (DuckDB on the rows, or exact Python arithmetic), on files the tests write
the way those writers write them."""

from __future__ import annotations

import datetime as dt
import decimal
import operator
import os
import random

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_engine as pe
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.rows import RowFilter
from tests.budget import examples
from tests.scanning.lakes import duck_table

D = decimal.Decimal
WIDE = decimal.Context(prec=200)
MAX38 = 10 ** 38 - 1


def _duck_rows(table: pa.Table, where: str | None, key: str) -> list:
    return sorted((r[key] for r in duck_table(table, where, None, None).to_pylist()),
                  key=lambda v: (v is None, v))


def _scan_rows(result: pa.Table, key: str) -> list:
    return sorted(result.column(key).to_pylist(), key=lambda v: (v is None, v))


def _one_line(error: Exception, path: str) -> None:
    text = str(error)
    assert "\n" not in text and len(text) < 400 and path in text, text


# ------------------------------------------------------------------------------ strings


ENCODINGS = [(pa.string(), pa.binary()), (pa.large_string(), pa.large_binary()),
             (pa.string_view(), pa.binary_view())]


@pytest.mark.parametrize("kinds", [(0, 2), (2, 0), (0, 1, 2), (1, 2), (2, 2)])
def test_string_and_binary_encodings_are_one_type_to_the_scan(tmp_path, kinds):
    paths = []
    for i, k in enumerate(kinds):
        text, raw = ENCODINGS[k]
        path = str(tmp_path / f"part-{i}.parquet")
        values = [f"v{i}-{j}" if j % 3 else None for j in range(6)]
        pq.write_table(pa.table({"s": pa.array(values, text),
                                 "b": pa.array([v.encode() if v else None for v in values],
                                               raw)}), path)
        assert pq.read_schema(path).field("s").type == text  # as the writer wrote it
        paths.append(path)
    table = pe.scan(str(tmp_path))
    expected = pa.concat_tables([pq.read_table(p).cast(pa.schema([("s", pa.large_string()),
                                                                  ("b", pa.large_binary())]))
                                 for p in paths])
    assert table.column("s").to_pylist() == expected.column("s").to_pylist()
    assert table.column("b").to_pylist() == expected.column("b").to_pylist()
    if set(kinds) == {2}:  # views are read as their plain types (pyarrow cannot filter them)
        assert (table.schema.field("s").type, table.schema.field("b").type) == \
            (pa.string(), pa.binary())
        assert pe.scan(str(tmp_path), where="s = 'v1-1'").column("s").to_pylist() == ["v1-1"]
    elif len(set(kinds)) == 1:
        assert table.schema.field("s").type == ENCODINGS[kinds[0]][0], "one type: kept"
    else:
        large = 1 in kinds
        assert table.schema.field("s").type == (pa.large_string() if large else pa.string())
        assert table.schema.field("b").type == (pa.large_binary() if large else pa.binary())


def test_a_table_deltalake_wrote_in_two_versions_scans(tmp_path):
    """deltalake's update rewrites with string_view; its append writes string."""
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"s": ["a", "b", "c", None], "x": [1, 2, 3, 4]}))
    DeltaTable(root).update(updates={"s": "'zz'"}, predicate="x = 2")
    write_deltalake(root, pa.table({"s": ["q"], "x": [9]}), mode="append")
    types = {pq.read_schema(f).field("s").type for f in DeltaTable(root).file_uris()}
    assert types == {pa.string(), pa.string_view()}
    expected = DeltaTable(root).to_pyarrow_table()
    stats = pe.stats_from_delta(root)
    for where in ["s >= 'b'", "s = 'zz'", "s LIKE '%z'", "s IN ('a', 'q')", "s IS NULL"]:
        got = pe.scan(root, where=where, stats=stats)
        assert got.schema.field("s").type == pa.string()
        assert _scan_rows(got, "x") == _duck_rows(expected, where, "x"), where


def test_the_row_filter_reads_string_and_binary_views():
    text = ["apple", "Banana", None, "cherry", "é", ""]
    batch = pa.record_batch({"s": pa.array(text, pa.string_view()),
                             "b": pa.array([t.encode() if t is not None else None
                                            for t in text], pa.binary_view())})
    plain = pa.table({"s": pa.array(text), "b": pa.array(
        [t.encode() if t is not None else None for t in text])})
    for where in ["s = 'apple'", "s > 'b'", "s LIKE '%a%'", "s ILIKE 'b%'",
                  "regexp_matches(s, '^c')", "s IN ('é', '', 'x', 'y', 'z', 'a1', 'a2', 'a3', "
                  "'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'b1', 'b2', 'b3')", "s IS NULL",
                  "b = X'6170706c65'", "s != 'apple' AND b IS NOT NULL"]:
        mask = RowFilter(to_expr(where), batch.schema).mask(batch).to_pylist()
        duck = RowFilter(to_expr(where), plain.schema).mask(plain).to_pylist()
        assert mask == duck, where
    with_rows = pa.table({"i": range(6), **{c: plain.column(c) for c in plain.column_names}})
    assert [i for i, m in enumerate(RowFilter(to_expr("s > 'b'"), batch.schema).mask(batch)
                                    .to_pylist()) if m] == _duck_rows(with_rows, "s > 'b'", "i")


# ------------------------------------------------------------------------------ dictionaries


@pytest.fixture(scope="module")
def categorical_lake(tmp_path_factory):
    """pandas' categoricals (int8 indices), an Arrow dictionary with int16 indices, and a
    file where the same column is a plain string, several row groups each."""
    import pandas as pd

    root = tmp_path_factory.mktemp("categorical")
    rnd = random.Random(3)
    colors = ["green", "red", "blue", "grün", None]
    frames = []
    for i in range(3):
        cat = [rnd.choice(colors) for _ in range(30)]
        x = list(range(i * 30, i * 30 + 30))
        if i == 0:
            pd.DataFrame({"cat": pd.Categorical(cat), "x": x,
                          "n": pd.Categorical([len(c or "") for c in cat])}
                         ).to_parquet(root / "a.parquet", row_group_size=10)
        else:
            array = pa.array(cat).dictionary_encode() if i == 1 else pa.array(cat)
            if i == 1:
                array = array.cast(pa.dictionary(pa.int16(), pa.string()))
            pq.write_table(pa.table({"cat": array, "x": x,
                                     "n": [len(c or "") for c in cat]}),
                           root / f"{'bc'[i - 1]}.parquet", row_group_size=10)
        frames.append(pa.table({"cat": cat, "x": x, "n": [len(c or "") for c in cat]}))
    assert pa.types.is_dictionary(pq.read_schema(root / "a.parquet").field("cat").type)
    return str(root), pa.concat_tables(frames)


CATEGORICAL_WHERES = ["cat = 'green'", "cat != 'red'", "cat IN ('green', 'blue')",
                      "cat LIKE 'g%'", "cat ILIKE 'GR%'", "cat IS NULL", "cat > 'h'",
                      "NOT (cat = 'green')", "cat = 'green' AND x > 40", "n = 5",
                      "cat IS DISTINCT FROM 'red'", "cat = 'purple'"]


@pytest.mark.parametrize("where", CATEGORICAL_WHERES)
def test_dictionary_columns_filter_as_their_values(categorical_lake, where):
    root, rows = categorical_lake
    got = pe.scan(root, where=where)
    assert _scan_rows(got, "x") == _duck_rows(rows, where, "x")
    assert got.schema.field("cat").type == pa.string(), "mixed encodings: the plain type"
    stats = pe.collect_stats(root, progress=False)
    kept = pe.prune(stats, where).to_pylist()
    kinds = pe.classify(stats, where).to_pylist()
    explained = pe.explain(stats, where)
    assert explained.column("keep").to_pylist() == kept
    matching = {r["x"] // 10 for r in duck_table(rows, where, None, None).to_pylist()}
    for group, (keep, kind) in enumerate(zip(kept, kinds)):
        assert keep or group not in matching, "a row group holding a match is kept"
        assert kind != "all" or len([r for r in duck_table(rows, where, None, None)
                                     .to_pylist() if r["x"] // 10 == group]) == 10


def test_a_categorical_file_keeps_its_type_and_sorts_by_its_values(categorical_lake):
    root, rows = categorical_lake
    path = os.path.join(root, "a.parquet")
    first = rows.slice(0, 30)
    got = pe.scan(path, where="cat >= 'b'", columns=["cat"])
    assert pa.types.is_dictionary(got.schema.field("cat").type)
    assert sorted(got.column("cat").to_pylist()) == \
        sorted(r["cat"] for r in duck_table(first, "cat >= 'b'", None, None).to_pylist())
    for order in ["cat DESC", "cat ASC NULLS FIRST", "n DESC"]:
        top = pe.scan(path, order_by=order, limit=4)
        column = order.split()[0]
        expected = duck_table(first, None, order, 4).column(column).to_pylist()
        assert top.column(column).to_pylist() == expected, order
    assert pe.scan(path, where="cat = 'green'", limit=2).num_rows == 2
    flat = pe.scan(path, where="cat = 'red'", columns=["cat"], flatten=True)
    assert set(flat.column("cat").to_pylist()) == {"red"}


# ------------------------------------------------------------------------------ INT96


FAR = [dt.datetime(9999, 12, 30), dt.datetime(1, 1, 1), dt.datetime(2020, 5, 17, 3, 4, 5),
       None, dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(2262, 4, 12)]
INT96_WHERES = ["ts >= TIMESTAMP '9999-01-01'", "ts > TIMESTAMP '2262-04-12 00:00:00'",
                "ts != TIMESTAMP '9999-12-30'", "ts < TIMESTAMP '1000-01-01'",
                "ts = TIMESTAMP '9999-12-30 00:00:00'", "ts IS NULL",
                "ts BETWEEN TIMESTAMP '2000-01-01' AND TIMESTAMP '3000-01-01'"]


def _int96(path, values, **kwargs):
    """A file as Spark writes timestamps by default: INT96."""
    pq.write_table(pa.table({"id": range(len(values)),
                             "ts": pa.array(values, pa.timestamp("us"))}), path,
                   use_deprecated_int96_timestamps=True, **kwargs)
    assert pq.ParquetFile(path).metadata.schema.column(1).physical_type == "INT96"


def test_int96_timestamps_are_read_as_microseconds(tmp_path):
    path = str(tmp_path / "spark.parquet")
    _int96(path, FAR, row_group_size=2)
    table = pe.scan(path)
    assert table.schema.field("ts").type == pa.timestamp("us")
    assert table.column("ts").to_pylist() == FAR, "9999-12-30 is 9999-12-30, not an overflow"
    for where in INT96_WHERES:  # the row filter alone, on the rows read
        mask = RowFilter(to_expr(where), table.schema).mask(table).to_pylist()
        assert [i for i, m in enumerate(mask) if m] == _duck_int96(path, where), where


def _duck_int96(paths, where: str) -> list[int]:
    paths = [paths] if isinstance(paths, str) else paths
    files = ", ".join(f"'{p}'" for p in paths)
    with duckdb.connect() as con:
        return sorted(r[0] for r in con.execute(
            f"SELECT id FROM read_parquet([{files}]) WHERE {where}").fetchall())


@pytest.mark.parametrize("where", INT96_WHERES)
def test_a_spark_file_past_2262_is_scanned_with_its_true_values(tmp_path, where):
    path = str(tmp_path / "spark.parquet")
    _int96(path, FAR, row_group_size=2)
    assert _scan_rows(pe.scan(path, where=where), "id") == _duck_int96(path, where)


def test_int96_and_nanosecond_files_unify_to_microseconds(tmp_path):
    spark = str(tmp_path / "a.parquet")
    _int96(spark, FAR[:4])
    pandas = str(tmp_path / "b.parquet")
    pq.write_table(pa.table({"id": [10, 11, 12], "ts": pa.array(
        [dt.datetime(2024, 1, 1, 0, 0, 0, 5), None, dt.datetime(1970, 1, 1)],
        pa.timestamp("us")).cast(pa.timestamp("ns"))}), pandas)
    assert pq.read_schema(pandas).field("ts").type == pa.timestamp("ns")
    table = pe.scan(str(tmp_path))
    assert table.schema.field("ts").type == pa.timestamp("us")
    with duckdb.connect() as con:
        expected = con.execute(f"SELECT id, ts FROM read_parquet(['{spark}', '{pandas}']) "
                               "ORDER BY id").fetchall()
    assert sorted(zip(table.column("id").to_pylist(), table.column("ts").to_pylist())) == \
        expected
    # a nanosecond the common unit cannot hold is an error naming its file, never rounded
    pq.write_table(pa.table({"id": [20], "ts": pa.array([1], pa.timestamp("ns"))}),
                   str(tmp_path / "c.parquet"))
    with pytest.raises(pe.ScanError, match="c.parquet") as caught:
        pe.scan(str(tmp_path))
    _one_line(caught.value, "c.parquet")


def test_int96_files_planned_from_recorded_footers(tmp_path, monkeypatch):
    """Statistics record each file's schema as the scan reads it (INT96 as microseconds): a
    scan with them opens only the footers it reads, and reads the true values."""
    from prune_engine.scanning import api

    spark = str(tmp_path / "a.parquet")
    _int96(spark, FAR, row_group_size=2)
    pq.write_table(pa.table({"id": [10], "ts": pa.array([5_000], pa.timestamp("ns"))}),
                   str(tmp_path / "b.parquet"))
    stats = pe.collect_stats(str(tmp_path), progress=False)
    opened = []
    real = api.read_footer
    monkeypatch.setattr(api, "read_footer", lambda where, fs=None: opened.append(where)
                        or real(where, fs))
    where = "ts >= TIMESTAMP '9999-01-01' OR id = 10"
    got = pe.scan(str(tmp_path), where=where, stats=stats)
    assert opened == [] and got.schema.field("ts").type == pa.timestamp("us")
    assert _scan_rows(got, "id") == _duck_int96([spark, str(tmp_path / "b.parquet")], where)


def test_an_int96_column_in_a_struct_is_microseconds_too(tmp_path):
    path = str(tmp_path / "nested.parquet")
    pq.write_table(pa.table({"st": pa.array([{"t": FAR[0]}, {"t": None}, None],
                                            pa.struct([("t", pa.timestamp("us"))]))}), path,
                   use_deprecated_int96_timestamps=True)
    table = pe.scan(path)
    assert table.column("st").to_pylist() == [{"t": FAR[0]}, {"t": None}, None]


# ------------------------------------------------------------------------------ decimals


def _scaled(unscaled: int, scale: int) -> D:
    return D(unscaled).scaleb(-scale, WIDE)


EDGES = [MAX38, -MAX38, MAX38 - 1, -(MAX38 - 1), 0, 1, -1, 10 ** 37, 5 * 10 ** 37 + 1]


@pytest.fixture(scope="module")
def decimals():
    """decimal(38, 0) and decimal(38, 38) at their limits, and a decimal(20, 4)."""
    return pa.table({
        "id": range(len(EDGES)),
        "d": pa.array([D(v) for v in EDGES], pa.decimal128(38, 0)),
        "s": pa.array([_scaled(v, 38) for v in EDGES], pa.decimal128(38, 38)),
        "m": pa.array([_scaled(v % 10 ** 20 * (1 if v >= 0 else -1), 4) for v in EDGES],
                      pa.decimal128(20, 4))})


def _cast38(value: D, scale: int) -> str:
    return f"CAST('{value:f}' AS DECIMAL(38, {scale}))"


DECIMAL_WHERES = [
    "d = 99999999999999999999999999999999999999",
    "d = -99999999999999999999999999999999999999",
    "d > 99999999999999999999999999999999999998", "d < -99999999999999999999999999999999999998",
    "d >= 10000000000000000000000000000000000000", "d != 1", "d IN (0, 1, -1)",
    f"s = {_cast38(_scaled(MAX38, 38), 38)}", f"s > {_cast38(_scaled(MAX38 - 1, 38), 38)}",
    f"s < {_cast38(_scaled(-(MAX38 - 1), 38), 38)}", f"s <= {_cast38(_scaled(1, 38), 38)}",
    f"s = {_cast38(_scaled(-MAX38, 38), 38)}", "s > 0.5", "s = 0",
    f"d = {_cast38(D(MAX38), 0)}", "d > 5e37", "d = 1e38", "s < 1e-38", "s > -0.9999",
    "m > 12.3456", "m * 2 > 1000", "-d = 99999999999999999999999999999999999999",
]
#: what DuckDB refuses (columns of decimal types no DECIMAL(38) holds both of, results past
#: 38 digits): exact, as Python's Decimal computes them
BEYOND_DUCKDB = {
    "m = d": lambda r: r["m"] == r["d"], "m < s": lambda r: r["m"] < r["s"],
    "d > s": lambda r: r["d"] > r["s"],
    "d - 1 < -99999999999999999999999999999999999999":
        lambda r: WIDE.subtract(r["d"], 1) < -MAX38,
    "d + 1 > 99999999999999999999999999999999999999": lambda r: WIDE.add(r["d"], 1) > MAX38,
    "d * 2 = 199999999999999999999999999999999999998":
        lambda r: WIDE.multiply(r["d"], 2) == 2 * MAX38,
    "m * s > 0.5": lambda r: WIDE.multiply(r["m"], r["s"]) > D("0.5"),
}


@pytest.mark.parametrize("where", DECIMAL_WHERES)
def test_decimals_compare_exactly_in_the_row_filter(decimals, where):
    mask = RowFilter(to_expr(where), decimals.schema).mask(decimals).to_pylist()
    assert [i for i, m in enumerate(mask) if m] == _duck_rows(decimals, where, "id"), where


@pytest.mark.parametrize("where", sorted(BEYOND_DUCKDB))
def test_decimals_past_38_digits_compare_exactly(decimals, where):
    mask = RowFilter(to_expr(where), decimals.schema).mask(decimals).to_pylist()
    assert mask == [BEYOND_DUCKDB[where](r) for r in decimals.to_pylist()], where


@pytest.mark.parametrize("where", DECIMAL_WHERES[:16])
def test_decimal_scans_equal_duckdb(tmp_path, decimals, where):
    """End to end, in row groups of two rows (most neither pruned nor "all")."""
    path = str(tmp_path / "d.parquet")
    pq.write_table(decimals, path, row_group_size=2)
    assert _scan_rows(pe.scan(path, where=where), "id") == _duck_rows(decimals, where, "id")


#: each comparison, as Python compares Decimals and as the builder writes the predicate
_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


@settings(max_examples=examples(300), deadline=None)
@given(scale=st.sampled_from([0, 1, 10, 37, 38]),
       values=st.lists(st.integers(-MAX38, MAX38), min_size=1, max_size=6),
       literal=st.integers(-(10 ** 40), 10 ** 40), literal_scale=st.integers(0, 40),
       op=st.sampled_from(sorted(_OPS)))
def test_decimal_literals_compare_exactly(scale, values, literal, literal_scale, op):
    """A builder literal of up to 41 digits, at any scale, against decimal(38, scale)
    values: exactly as Python's Decimal compares them (no float, no 28-digit context)."""
    column = [_scaled(v, scale) for v in values]
    value = _scaled(literal, literal_scale)
    table = pa.table({"v": pa.array(column, pa.decimal128(38, scale))})
    mask = RowFilter(to_expr(_OPS[op](pe.col("v"), value)), table.schema).mask(table).to_pylist()
    assert mask == [_OPS[op](v, value) for v in column]


def test_decimal_against_double_compares_the_correctly_rounded_double():
    """DuckDB casts a decimal to the nearest double; pyarrow's cast can be a step off."""
    rnd = random.Random(5)
    values = [_scaled(rnd.randint(-(10 ** p), 10 ** p), s) for p, s in
              [(15, 3), (15, 15), (10, 2), (38, 38), (38, 5), (30, 29)] for _ in range(40)]
    for precision, scale in [(15, 3), (15, 15), (38, 38), (38, 5), (30, 29)]:
        chosen = [v for v in values if v.as_tuple().exponent == -scale and
                  len(v.as_tuple().digits) <= precision]
        table = pa.table({"id": range(len(chosen)),
                          "v": pa.array(chosen, pa.decimal128(precision, scale))})
        for v in chosen[:10]:
            where = f"v = {float(v)!r}"
            mask = RowFilter(to_expr(where), table.schema).mask(table).to_pylist()
            assert [i for i, m in enumerate(mask) if m] == _duck_rows(table, where, "id"), \
                (precision, scale, where)


# ------------------------------------------------------------------------------ bad files


def test_a_file_that_cannot_be_read_is_a_one_line_scan_error_naming_it(tmp_path):
    good = str(tmp_path / "a.parquet")
    pq.write_table(pa.table({"x": np.arange(100)}), good, row_group_size=10)
    cut = str(tmp_path / "b.parquet")
    with open(good, "rb") as src, open(cut, "wb") as out:
        out.write(src.read()[:-30])
    with pytest.raises(pe.ScanError) as caught:
        pe.scan(str(tmp_path))
    _one_line(caught.value, "b.parquet")
    assert isinstance(caught.value, pe.PruneEngineError)
    os.remove(cut)
    # a footer that reads, over pages that do not: the error comes with the read
    broken = str(tmp_path / "c.parquet")
    pq.write_table(pa.table({"x": np.arange(100)}), broken, row_group_size=10,
                   compression="snappy")
    meta = pq.ParquetFile(broken).metadata
    start = meta.row_group(3).column(0).data_page_offset
    with open(broken, "r+b") as f:
        f.seek(start)
        f.write(b"\xff" * 40)
    with pytest.raises(pe.ScanError) as caught:
        pe.scan(str(tmp_path), where="x >= 0")
    _one_line(caught.value, "c.parquet")
