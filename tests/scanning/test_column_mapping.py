"""``pe.scan`` given statistics of a table whose files predate its schema: the rows and
columns of the table, not of its files.

A column-mapped Delta table (``delta.columnMapping.mode`` ``name`` or ``id``) keeps every
field, nested ones too, under a physical name in its files; a rename, an added or a dropped
column rewrites no file, nor does a type widening. The scan returns the table's logical
schema (its names, its types, partition columns from the log), the ``where`` and
``columns=`` name the table's columns, and the rows equal deltalake's own read (its query
engine maps physical names) filtered by DuckDB. The same for an Iceberg table whose columns
were renamed, added, dropped and promoted (files match by field id), against PyIceberg's
``table.scan().to_arrow()``.
"""

from __future__ import annotations

import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.scanning.column_mapping import (MAPPING, WIDENED_WHERES, deltalake_rows,
                                           mapped_field, mapped_history, physical, row_key,
                                           widened_spark_table)
from tests.scanning.lakes import duck_table
from tests.scanning.table_formats import iceberg_catalog
from tests.stats.delta_logs import write_table

WHERES = ["x2 < 8", "x2 >= 20 AND y IS NULL", "s.alpha > 15", "s.b = '7'",
          "f = 3.4000000953674316", "f > 10.3", "n > 2147483647", "n >= 25",
          "part = 'p1' AND x2 > 10", "y = 'updated'", "x2 IN (3, 5, 17, 26)", None]


def _rows(table: pa.Table) -> list[str]:
    return sorted(map(row_key, table.to_pylist()))


def _expected(rows: pa.Table, where: str | None) -> list[str]:
    return _rows(duck_table(rows, where, None, None))


def _plain(schema: pa.Schema) -> list[tuple[str, str]]:
    """Names and types, string views as strings and without field metadata (deltalake's
    engine returns views)."""
    def plain(t: pa.DataType) -> str:
        return str(t).replace("string_view", "string")

    return [(f.name, plain(f.type)) for f in schema]


@pytest.fixture(scope="module", params=[("name", False), ("name", True), ("id", True)],
                ids=["name-flat", "name-partitioned", "id-partitioned"])
def mapped(request, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("mapped") / "t")
    mapped_history(root, *request.param)
    return root, deltalake_rows(root)


@pytest.mark.parametrize("where", WHERES)
def test_a_column_mapped_delta_table_scans_as_deltalake_reads_it(mapped, where):
    root, rows = mapped
    stats = pe.stats_from_delta(root)
    got = pe.scan(root, where=where, stats=stats)
    assert _plain(got.schema) == _plain(rows.schema), \
        "the table's logical names and types, in its order: not the files' physical ones"
    assert _rows(got) == _expected(rows, where)
    batches = list(pe.scan_batches(root, where=where, stats=stats, batch_size=4))
    assert sorted(r for b in batches for r in _rows(pa.Table.from_batches([b]))) == \
        _expected(rows, where)


def test_columns_name_the_tables_columns_nested_ones_too(mapped):
    root, rows = mapped
    stats = pe.stats_from_delta(root)
    got = pe.scan(root, where="x2 > 8", stats=stats,
                  columns=["s.alpha", "l.quality", "m.value.zed", "part", "y"])
    expected = [{"s": None if r["s"] is None else {"alpha": r["s"]["alpha"]}, "l": r["l"],
                 "m": r["m"], "part": r["part"], "y": r["y"]}
                for r in rows.to_pylist() if r["x2"] > 8]
    assert sorted(map(row_key, got.to_pylist())) == sorted(map(row_key, expected))
    flat = pe.scan(root, where="s.alpha >= 20", stats=stats, columns=["s.alpha", "x2"],
                   flatten=True)
    assert flat.column_names == ["s_alpha", "x2"]
    assert sorted(flat.column("x2").to_pylist()) == \
        sorted(r["x2"] for r in rows.to_pylist() if r["s"] and r["s"]["alpha"] >= 20)
    top = pe.scan(root, where="f > 3", stats=stats, order_by="n DESC", limit=3)
    assert top.column("n").to_pylist() == sorted(
        (r["n"] for r in rows.to_pylist() if r["f"] > 3), reverse=True)[:3]


def test_a_dropped_column_is_not_the_tables(mapped):
    """``gone`` is still in the files written before it was dropped; a physical name is not
    a column either."""
    root, _ = mapped
    stats = pe.stats_from_delta(root)
    assert "gone" not in pe.scan(root, stats=stats).column_names
    with pytest.raises(pe.PruneEngineError, match="gone"):
        pe.scan(root, where="gone > 100", stats=stats)
    stored = pq.read_schema(stats.column("path")[0].as_py()).names[0]
    assert stored.startswith("col-")
    with pytest.raises(pe.PruneEngineError):
        pe.scan(root, columns=[stored], stats=stats)


def test_an_old_version_scans_in_that_versions_schema(tmp_path):
    """Time travel: the statistics of version 0 read the files under the names and types
    the table had then."""
    from deltalake import DeltaTable

    root = str(tmp_path / "t")
    mapped_history(root, "name", True)
    old = pe.stats_from_delta(root, version=0)
    got = pe.scan(root, where="x < 6", stats=old)
    assert got.column_names == ["x", "s", "f", "n", "gone", "l", "m", "p"]
    assert got.schema.field("f").type == pa.float32()
    assert sorted(got.column("x").to_pylist()) == list(range(6))
    assert sorted(got.column("gone").to_pylist()) == list(range(100, 106))
    from deltalake import QueryBuilder

    then = pa.table(QueryBuilder().register("t", DeltaTable(root, version=0))
                    .execute("SELECT * FROM t WHERE x < 6").read_all())
    assert _rows(got) == _rows(then)


def test_recorded_columns_need_no_log(tmp_path):
    """Statistics that record the table's schema and mapping mode (as ``stats_from_delta``
    may) are read without opening the log; a recorded schema that is not one is a
    StatsError."""
    from deltalake import DeltaTable

    root = str(tmp_path / "t")
    mapped_history(root, "id", False)
    stats = pe.stats_from_delta(root)
    expected = _rows(pe.scan(root, where="x2 > 3", stats=stats))
    stats.metadata["delta"].update(schema=DeltaTable(root).schema().to_json(),
                                   column_mapping="id", table=str(tmp_path / "moved"))
    assert _rows(pe.scan(root, where="x2 > 3", stats=stats)) == expected
    stats.metadata["delta"]["schema"] = '{"type": "struct", "fields": [{"name": 5}]}'
    with pytest.raises(pe.StatsError, match="is not a Delta schema") as caught:
        pe.scan(root, where="x2 > 3", stats=stats)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


# ------------------------------------------------------------------------------ Spark's shape


def test_a_spark_written_widened_table_reads_in_the_tables_types(tmp_path):
    """A table shaped as Spark's Delta writer leaves it (name mode, the typeWidening table
    feature, which deltalake cannot read): a file written before ``f`` became a double, ``n``
    a long, ``d`` a timestamp_ntz and ``dec`` a wider decimal, and before ``x`` was renamed
    ``x2``; one written after. Expected: each file's rows in the table's types, DuckDB
    filtering."""
    root, rows = widened_spark_table(str(tmp_path / "t"))
    assert rows.column("f")[0].as_py() == 3.4000000953674316
    stats = pe.stats_from_delta(root)
    for where in WIDENED_WHERES:
        got = pe.scan(root, where=where, stats=stats)
        assert got.schema == rows.schema, where
        assert _rows(got) == _expected(rows, where), where


def test_id_mode_finds_columns_by_field_id(tmp_path):
    """In ``id`` mode the protocol resolves columns by Parquet field id: files whose names
    are none of the physical names (converted from another format) are still the table's.
    In ``name`` mode the same files hold none of the table's columns: nulls."""
    fields = [mapped_field("a", "long", 1, physical("a")),
              mapped_field("s", {"type": "struct", "fields": [
                  mapped_field("b", "string", 3, physical("b"))]}, 2, physical("s"))]

    def with_id(name, typ, fid):
        return pa.field(name, typ, metadata={"PARQUET:field_id": str(fid)})

    schema = pa.schema([with_id("old_a", pa.int64(), 1),
                        with_id("old_s", pa.struct([with_id("old_b", pa.string(), 3)]), 2)])
    data = pa.table([pa.array([1, 2, 3]), pa.array([{"old_b": "u"}, None, {"old_b": "w"}])],
                    schema=schema)
    for mode, expected in [("id", [(2, None), (3, "w")]), ("name", [])]:
        root = write_table(tmp_path / mode, fields,
                           [{"name": "f.parquet", "data": data, "stats": None}],
                           configuration={MAPPING: mode}, features=["columnMapping"])
        got = pe.scan(root, where="a >= 2", stats=pe.stats_from_delta(root))
        assert got.column_names == ["a", "s"]
        assert sorted((r["a"], r["s"] and r["s"]["b"]) for r in got.to_pylist()) == expected


# ------------------------------------------------------------------------------ Iceberg


def _evolved_iceberg(folder: str):
    """An Iceberg table whose ``x`` was renamed ``x2``, ``s.a`` ``s.alpha``, ``n`` promoted
    from int to long and ``f`` from float to double, ``gone`` dropped and ``y`` added, with
    files written before and after, and a delete."""
    from pyiceberg.types import DoubleType, LongType, StringType

    catalog = iceberg_catalog(folder)
    table = catalog.create_table("db.events", schema=pa.schema([
        ("x", pa.int64()), ("s", pa.struct([("a", pa.int64()), ("b", pa.string())])),
        ("n", pa.int32()), ("f", pa.float32()), ("gone", pa.int64())]))
    table.append(pa.table({
        "x": pa.array(range(20), pa.int64()),
        "s": pa.array([{"a": i, "b": str(i % 9)} if i % 7 else None for i in range(20)],
                      pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "n": pa.array(range(20), pa.int32()),
        "f": pa.array([i + 0.4 for i in range(20)], pa.float32()),
        "gone": pa.array(range(100, 120), pa.int64())}))
    with table.update_schema() as update:
        update.rename_column("x", "x2")
        update.rename_column("s.a", "alpha")
        update.update_column("n", field_type=LongType())
        update.update_column("f", field_type=DoubleType())
        update.delete_column("gone")
        update.add_column("y", StringType())
    table = catalog.load_table("db.events")
    table.append(pa.table({
        "x2": pa.array(range(20, 30), pa.int64()),
        "s": pa.array([{"alpha": i, "b": str(i % 9)} for i in range(20, 30)],
                      pa.struct([("alpha", pa.int64()), ("b", pa.string())])),
        "n": pa.array([2 ** 31 + i if i % 4 == 0 else i for i in range(20, 30)], pa.int64()),
        "f": pa.array([i + 0.25 for i in range(20, 30)], pa.float64()),
        "y": [None if i % 3 else f"y{i}" for i in range(20, 30)]}))
    table = catalog.load_table("db.events")
    table.delete("x2 < 5")
    return catalog.load_table("db.events")


ICEBERG_WHERES = ["x2 < 8", "x2 >= 20 AND y IS NULL", "s.alpha > 15", "s.b = '7'",
                  "f = 3.4000000953674316", "n > 2147483647", "y = 'y21'", None]


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    table = _evolved_iceberg(str(tmp_path_factory.mktemp("iceberg")))
    return table, table.scan().to_arrow()


@pytest.mark.parametrize("where", ICEBERG_WHERES)
def test_a_renamed_iceberg_column_scans_under_its_new_name(evolved, where):
    table, rows = evolved
    stats = pe.stats_from_iceberg(table)
    location = table.location().removeprefix("file://")
    got = pe.scan(location, where=where, stats=stats)
    assert [(f.name, str(f.type)) for f in got.schema] == \
        [(f.name, str(f.type).replace("large_string", "string")) for f in rows.schema]
    assert _rows(got) == _expected(rows, where)


def test_a_recorded_iceberg_schema_needs_no_metadata_files(evolved, tmp_path):
    """Statistics recording the snapshot's schema (Iceberg's JSON) read it, not the
    table's metadata files; a recorded schema that is not one is a StatsError."""
    table, rows = evolved
    stats = pe.stats_from_iceberg(table)
    location = table.location().removeprefix("file://")
    expected = _expected(rows, "x2 >= 10")
    moved = str(tmp_path / "metadata")
    shutil.move(os.path.join(location, "metadata"), moved)
    try:
        stats.metadata["iceberg"]["schema"] = json.loads(table.schema().model_dump_json())
        assert _rows(pe.scan(location, where="x2 >= 10", stats=stats)) == expected
        stats.metadata["iceberg"]["schema"] = {"type": "struct", "fields": "no"}
        with pytest.raises(pe.StatsError, match="not an Iceberg schema") as caught:
            pe.scan(location, where="x2 >= 10", stats=stats)
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 400
    finally:
        shutil.move(moved, os.path.join(location, "metadata"))
