"""``pes.read`` and ``pes.count`` given statistics of an Iceberg table whose schema evolved:
its files name a column as the schema did when they were written (a renamed column under its
old name, a dropped one still there, an added one missing, a promoted one in its old type),
and Spark's Parquet reader matches names. The DataFrame has the table's columns and the rows
PyIceberg reads (``table.scan().to_arrow()``), filtered by Spark with a ``where`` on the
table's names, checked against DuckDB on PyIceberg's rows. Classic and Connect."""

from __future__ import annotations

import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._files import file_key
from prune_engine.spark._mapped import IcebergRead, mapped_read, read_schema
from prune_engine.spark._session import functions
from tests.scanning.column_mapping import row_key
from tests.scanning.lakes import duck_table
from tests.scanning.table_formats import commit_deletes, iceberg_catalog
from tests.spark.helpers import scanned_files

pytestmark = pytest.mark.spark

S_OLD = pa.struct([("a", pa.int64()), ("b", pa.string())])
L_OLD = pa.list_(pa.struct([("k", pa.int32())]))

WHERES = [
    "x2 < 8",                                   # a renamed column, in old files only
    "x2 >= 30 AND x2 < 95",                     # across old files and the rewritten one
    "s.alpha > 15 AND s.alpha < 25",            # a renamed nested field
    "s.b = '7' OR s IS NULL",                   # a nested field that kept its name
    "y = 'y125' OR y IS NULL",                  # an added column: null in old files
    "gone IS NOT NULL",                         # re-added under a dropped column's name
    "s.c = 'c127'",                             # a nested field added later
    "f = 3.4000000953674316",                   # float -> double: 3.4f as its double
    "n > 2147483647",                           # int -> long
    "d > 25.5 AND d < 63",                      # decimal(9, 2) -> decimal(18, 2)
    "try_element_at(l, 1).kk > 100",            # a renamed, promoted field in a list
    None,
]
#: PyIceberg's spelling of some wheres (its own filtered scan, a second oracle)
ICEBERG = {"x2 < 8": "x2 < 8", "n > 2147483647": "n > 2147483647",
           "y = 'y125' OR y IS NULL": "y = 'y125' OR y IS NULL",
           "x2 >= 30 AND x2 < 95": "x2 >= 30 AND x2 < 95"}
#: DuckDB's spelling of a where (its lists count from 1, and give NULL past the end)
DUCK = {"try_element_at(l, 1).kk > 100": "l[1].kk > 100"}


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


def _old_batch(lo: int, hi: int) -> pa.Table:
    r = range(lo, hi)
    return pa.table({
        "x": pa.array(r, pa.int64()),
        "s": pa.array([{"a": i, "b": str(i % 9)} if i % 7 else None for i in r], S_OLD),
        "n": pa.array(r, pa.int32()),
        "f": pa.array([i + 0.4 for i in r], pa.float32()),
        "d": pa.array([Decimal(i) / 4 for i in r], pa.decimal128(9, 2)),
        "l": pa.array([[{"k": i}, {"k": -i}] if i % 5 else [] for i in r], L_OLD),
        "gone": pa.array(range(1000 + lo, 1000 + hi), pa.int64())})


def _new_batch(table, lo: int, hi: int) -> pa.Table:
    r = range(lo, hi)
    data = {
        "x2": pa.array(r, pa.int64()),
        "s": [{"alpha": i, "b": str(i % 9), "c": f"c{i}" if i % 2 else None} for i in r],
        "n": [2 ** 31 + i if i % 4 == 0 else i for i in r],
        "f": [i + 0.25 for i in r],
        "d": [Decimal(i * 25) / 100 + Decimal("0.01") for i in r],
        "l": [[{"kk": 2 ** 33 + i}] for i in r],
        "y": [f"y{i}" if i % 3 else None for i in r],
        "gone": [f"g{i}" for i in r]}
    return pa.Table.from_pydict(data, schema=table.schema().as_arrow())


def evolved_table(folder: str):
    """An unpartitioned Iceberg table: three files in its first schema; then ``x`` renamed
    ``x2``, ``s.a`` ``s.alpha`` and ``l.element.k`` ``kk``, ``n`` and ``kk`` promoted to
    long, ``f`` to double, ``d`` to decimal(18, 2), ``gone`` dropped, ``y`` and ``s.c``
    added, then ``gone`` added again (a new field, a string); then an append, a
    copy-on-write delete that rewrites the second old file, and an overwrite of part of the
    new rows. Two old files keep the old names."""
    from pyiceberg.types import DecimalType, DoubleType, LongType, StringType

    catalog = iceberg_catalog(folder)
    table = catalog.create_table("db.events", schema=_old_batch(0, 1).schema)
    for k in range(3):
        table.append(_old_batch(40 * k, 40 * k + 40))
    with table.update_schema() as update:
        update.rename_column("x", "x2")
        update.rename_column("s.a", "alpha")
        update.rename_column("l.element.k", "kk")
        update.update_column("n", field_type=LongType())
        update.update_column("l.element.k", field_type=LongType())
        update.update_column("f", field_type=DoubleType())
        update.update_column("d", field_type=DecimalType(18, 2))
        update.delete_column("gone")
        update.add_column("y", StringType())
        update.add_column(("s", "c"), StringType())
    with table.update_schema() as update:
        update.add_column("gone", StringType())
    table = catalog.load_table("db.events")
    table.append(_new_batch(table, 120, 140))
    table = catalog.load_table("db.events")
    table.delete("x2 >= 40 AND x2 < 50")
    table = catalog.load_table("db.events")
    table.overwrite(_new_batch(table, 500, 503), overwrite_filter="x2 >= 135 AND x2 < 500")
    return catalog.load_table("db.events")


def _data(table) -> str:
    return os.path.join(table.location().removeprefix("file://"), "data")


def _live(table) -> list[str]:
    return [t.file.file_path.removeprefix("file://") for t in table.scan().plan_files()]


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    table = evolved_table(str(tmp_path_factory.mktemp("iceberg")))
    return table, table.scan().to_arrow()


def _spark_rows(df, columns) -> list[str]:
    return sorted(row_key({c: r[c] for c in columns})
                  for r in (row.asDict(recursive=True) for row in df.collect()))


def _expected(rows: pa.Table, where) -> list[str]:
    kept = duck_table(rows, DUCK.get(where, where), None, None)
    return sorted(row_key(r) for r in kept.to_pylist())


def test_the_history_leaves_files_of_both_namings(evolved):
    """What makes the reads below a test: live files that name ``x`` and ``s.a`` by their
    old names, and files that name them by their new ones."""
    table, rows = evolved
    names = {tuple(pq.read_schema(p).names) for p in _live(table)}
    assert ("x", "s", "n", "f", "d", "l", "gone") in names
    assert any(n[0] == "x2" for n in names)
    assert rows.num_rows == 120 - 10 + 15 + 3


@pytest.mark.parametrize("where", WHERES)
def test_read_and_count_equal_pyicebergs_rows(spark, evolved, where):
    table, rows = evolved
    stats = pe.stats_from_iceberg(table)
    df, summary = pes.read(spark, _data(table), where, stats=stats, return_summary=True)
    assert df.columns == rows.column_names, "the table's names, in its order"
    got, scanned = scanned_files(df)
    expected = _expected(rows, where)
    if where in ICEBERG:
        assert sorted(row_key(r) for r in table.scan(row_filter=ICEBERG[where]).to_arrow()
                      .to_pylist()) == expected, "DuckDB and PyIceberg agree"
    assert sorted(row_key(r.asDict(recursive=True)) for r in got) == expected
    read = {file_key(f) for f in df.inputFiles()}
    assert read <= set(_live(table)), "Spark reads live files, and no removed one"
    assert len(read) == scanned <= summary.files_read, \
        "Spark scans the kept files (a group none of whose rows can match is not scanned)"
    assert summary.not_in_snapshot > 0, "the files the delete and overwrite removed"
    assert pes.count(spark, _data(table), where, stats=stats) == len(expected)


def test_the_where_prunes_on_the_tables_names(spark, evolved):
    """The where names current columns (renamed, nested, promoted): Spark reads it against
    the table's schema, so the statistics prune on it."""
    table, rows = evolved
    stats = pe.stats_from_iceberg(table)
    data = _data(table)
    for where in ["x2 > 1000", "d > 1000 AND s.alpha > 3", "n < -5", "f < -5"]:
        df, summary = pes.read(spark, data, where, stats=stats, return_summary=True)
        assert summary.files_read == 0, f"{where}: no live file can hold a row"
        assert df.columns == rows.column_names and df.count() == 0
        assert pes.count(spark, data, where, stats=stats, return_summary=True)[1] \
            .files_read == 0
    df, summary = pes.read(spark, data, "x2 < 8", stats=stats, return_summary=True)
    assert summary.files_read == 1, "only the first old file holds x2 < 8"
    got, scanned = scanned_files(df)
    assert scanned == 1 and len(got) == 8
    top = pes.read(spark, data, "f > 3", stats=stats, order_by="s.alpha DESC NULLS LAST",
                   limit=4)
    assert [r["s"]["alpha"] for r in top.collect()] == sorted(
        (r["s"]["alpha"] for r in rows.to_pylist() if r["f"] > 3 and r["s"] is not None),
        reverse=True)[:4]


def test_read_schema_matches_by_field_id_not_name(evolved):
    """The first old file's ``gone`` is the dropped column, not the new one of that name;
    its ``x`` is ``x2``; ``s.c`` and ``y`` are not in it."""
    table, _ = evolved
    stats = pe.stats_from_iceberg(table)
    read = mapped_read(None, _data(table), stats, "parquet")
    assert isinstance(read, IcebergRead)
    old = next(p for p in _live(table) if pq.read_schema(p).names[0] == "x")
    schema, names = read_schema(read.columns.schema, pq.read_schema(old), old)
    assert names == ["x", "s", "n", "f", "d", "l", None, None]
    assert schema.field("s").type == pa.struct([("a", pa.int64()), ("b", pa.string()),
                                                ("__pe_absent_0", pa.string())])
    assert schema.field("l").type == pa.list_(pa.struct([("k", pa.int64())]))


def test_an_identity_partition_fills_a_column_its_file_lacks(spark, tmp_path):
    """A file added with its partition value in the manifest but not the column (as a
    Hive table migrated to Iceberg has it): PyIceberg reads the column as the partition
    value, and so does pes.read."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField, StringType

    catalog = iceberg_catalog(str(tmp_path))
    schema = Schema(NestedField(1, "x", LongType(), required=False),
                    NestedField(2, "p", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000,
                                        transform=IdentityTransform(), name="p"))
    table = catalog.create_table("db.parts", schema=schema, partition_spec=spec)
    table.append(pa.Table.from_pydict({"x": list(range(6)), "p": ["a", "b"] * 3},
                                      schema=schema.as_arrow()))
    path = str(tmp_path / "migrated.parquet")
    x = pa.field("x", pa.int64(), metadata={b"PARQUET:field_id": b"1"})
    pq.write_table(pa.table({"x": pa.array([100, 101, 102], pa.int64())},
                            schema=pa.schema([x])), path)
    with table.transaction() as tx:
        update = tx.update_snapshot().fast_append()
        data_file = DataFile.from_args(
            content=DataFileContent.DATA, file_path="file://" + path,
            file_format=FileFormat.PARQUET, partition=Record("zz"), record_count=3,
            file_size_in_bytes=os.path.getsize(path))
        data_file.spec_id = 0
        update.append_data_file(data_file)
        update.commit()
    table = catalog.load_table("db.parts")
    rows = table.scan().to_arrow()
    assert sorted(r["p"] for r in rows.to_pylist() if r["x"] >= 100) == ["zz"] * 3
    stats = pe.stats_from_iceberg(table)
    source = [_data(table), path]
    for where in ["p = 'zz'", "p = 'a' OR x > 100", "p IS NULL", None]:
        df = pes.read(spark, source, where, stats=stats)
        assert df.columns == ["x", "p"]
        assert _spark_rows(df, ["x", "p"]) == _expected(rows, where), where
        assert pes.count(spark, source, where, stats=stats) == len(_expected(rows, where))


def test_deletes_are_refused_where_they_touch_a_file_read(spark, tmp_path):
    """The refusals for delete files are those of any Iceberg snapshot: a position delete
    on an old file is refused where the read needs that file."""
    table = evolved_table(str(tmp_path))
    old = min((p for p in _live(table) if pq.read_schema(p).names[0] == "x"),
              key=lambda p: pq.read_table(p).column("x").to_pylist()[0])
    commit_deletes(table, pa.table({"file_path": ["file://" + old],
                                    "pos": pa.array([3], pa.int64())}),
                   str(tmp_path / "deletes.parquet"))
    table = table.refresh()
    stats = pe.stats_from_iceberg(table)
    rows = table.scan().to_arrow()
    assert _spark_rows(pes.read(spark, _data(table), "x2 >= 100", stats=stats),
                       rows.column_names) == _expected(rows, "x2 >= 100")
    for call in (pes.read, pes.count):
        with pytest.raises(pe.ScanError, match="position deletes") as caught:
            call(spark, _data(table), "x2 < 10", stats=stats)
        assert old in str(caught.value) and "\n" not in str(caught.value)


def test_an_unknown_schema_reads_as_spark_reads_the_files(spark, evolved, tmp_path):
    """Statistics whose table schema cannot be found (none recorded, the metadata files
    moved) read the live files as Spark reads them, as before: no mapping."""
    import shutil

    table, rows = evolved
    stats = pe.stats_from_iceberg(table)
    del stats.metadata["iceberg"]["schema"]
    location = table.location().removeprefix("file://")
    live = _live(table)
    moved = str(tmp_path / "metadata")
    shutil.move(os.path.join(location, "metadata"), moved)
    try:
        assert mapped_read(spark, _data(table), stats, "parquet") is None
        df = pes.read(spark, _data(table), None, stats=stats)
        assert df.columns in ([f.name for f in pq.read_schema(p)] for p in live), \
            "one file's names, as Spark infers a folder's schema"
        assert df.count() == rows.num_rows
    finally:
        shutil.move(moved, os.path.join(location, "metadata"))


def test_a_field_id_of_another_kind_is_a_clear_error():
    """A file whose field of a column's id is a list where the table has a struct is not a
    file of that table: a one-line ScanError naming it, not Spark's failure mid-job."""
    fid = {b"PARQUET:field_id": b"2"}
    table = pa.schema([pa.field("s", pa.struct([("a", pa.int64())]), metadata=fid)])
    odd = pa.schema([pa.field("s", pa.list_(pa.int64()), metadata=fid)])
    with pytest.raises(pe.ScanError, match="is a list where") as caught:
        read_schema(table, odd, "/lake/odd.parquet")
    assert str(caught.value).startswith("/lake/odd.parquet: ") and "\n" not in str(caught.value)


def test_iceberg_types_read_as_pyiceberg_reads_them(spark, tmp_path):
    """A uuid (as its 16 bytes: plain Spark cannot read the Parquet UUID type at all), a
    timestamptz and a timestamp, a date, binary and fixed, a boolean, and a map whose value
    struct's field was renamed: the table's types and PyIceberg's values."""
    import datetime as dt
    import uuid

    from pyiceberg.schema import Schema
    from pyiceberg.types import (BinaryType, BooleanType, DateType, FixedType, IntegerType,
                                 MapType, NestedField, StringType, StructType,
                                 TimestampType, TimestamptzType, UUIDType)

    catalog = iceberg_catalog(str(tmp_path))
    value = StructType(NestedField(12, "v", IntegerType(), required=False))
    table = catalog.create_table("db.types", schema=Schema(
        NestedField(1, "u", UUIDType(), required=False),
        NestedField(2, "tz", TimestamptzType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
        NestedField(4, "day", DateType(), required=False),
        NestedField(5, "bin", BinaryType(), required=False),
        NestedField(6, "fx", FixedType(4), required=False),
        NestedField(7, "b", BooleanType(), required=False),
        NestedField(8, "m", MapType(10, StringType(), 11, value, value_required=False),
                    required=False)))
    utc = dt.timezone.utc
    table.append(pa.Table.from_pylist([
        {"u": uuid.UUID(int=i * 7919), "tz": dt.datetime(2024, 1, i + 1, 5, tzinfo=utc),
         "ts": dt.datetime(2024, 1, i + 1, 5), "day": dt.date(1999, 12, 31 - i),
         "bin": bytes([i]), "fx": bytes([i]) * 4, "b": bool(i % 2),
         "m": [("k", {"v": i})] if i else None} for i in range(4)],
        schema=table.schema().as_arrow()))
    with table.update_schema() as update:
        update.rename_column("m.value.v", "vv")
    table = table.refresh()
    expected = sorted(
        (r["u"].bytes, int(r["tz"].timestamp() * 1_000_000), r["ts"], r["day"], r["bin"],
         r["fx"], r["b"], None if r["m"] is None else {k: v["vv"] for k, v in r["m"]})
        for r in table.scan().to_arrow().to_pylist())
    F = functions(spark)
    df = pes.read(spark, _data(table), "b OR day < DATE '1999-12-30'",
                  stats=pe.stats_from_iceberg(table))
    assert df.columns == ["u", "tz", "ts", "day", "bin", "fx", "b", "m"]
    got = sorted(
        (bytes(r["u"]), r["tz_us"], r["ts"], r["day"], bytes(r["bin"]), bytes(r["fx"]),
         r["b"], None if r["m"] is None else {k: v["vv"] for k, v in r["m"].items()})
        for r in df.withColumn("tz_us", F.unix_micros("tz")).collect())
    assert got == [e for e in expected if e[6] or e[3] < dt.date(1999, 12, 30)]
