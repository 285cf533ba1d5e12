"""Files that differ: schema evolution (missing leaves, field ids, widened types), Hive
partitions, statistics that do not describe the files."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe


def _fid(name, typ, fid, nullable=True):
    return pa.field(name, typ, nullable, metadata={b"PARQUET:field_id": str(fid).encode()})


def test_missing_nested_leaf_is_a_null_column_of_its_type(tmp_path):
    old = pa.table({"id": [1], "user": [{"name": "a"}], "orders": [[{"price": 1.0}]]})
    new = pa.table({"id": [2], "user": [{"name": "b", "city": "Oslo"}],
                    "orders": [[{"price": 2.0, "qty": 3}]]})
    pq.write_table(old, tmp_path / "part-0.parquet")
    pq.write_table(new, tmp_path / "part-1.parquet")
    got = pe.scan(str(tmp_path), columns=["id", "user.city", "orders.qty"])
    assert got.schema.field("user").type == pa.struct([("city", pa.string())])
    assert got.to_pylist() == [
        {"id": 1, "user": {"city": None}, "orders": [{"qty": None}]},
        {"id": 2, "user": {"city": "Oslo"}, "orders": [{"qty": 3}]},
    ]
    # and a filter on the leaf the old file lacks: NULL there, so the row is not kept
    assert pe.scan(str(tmp_path), where="user.city = 'Oslo'", columns=["id"]).to_pylist() == \
        [{"id": 2}]
    assert pe.scan(str(tmp_path), where="user.city IS NULL", columns=["id"]).to_pylist() == \
        [{"id": 1}]


def test_renamed_leaf_is_found_by_field_id(tmp_path):
    def schema(city_name):
        return pa.schema([_fid("id", pa.int64(), 1), _fid("user", pa.struct([
            _fid("name", pa.string(), 3), _fid(city_name, pa.string(), 4)]), 2)])

    pq.write_table(pa.Table.from_pylist([{"id": 1, "user": {"name": "a", "city": "Rome"}}],
                                        schema=schema("city")), tmp_path / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist([{"id": 2, "user": {"name": "b", "town": "Oslo"}}],
                                        schema=schema("town")), tmp_path / "part-1.parquet")
    got = pe.scan(str(tmp_path), columns=["user.town"])
    assert got.column("user").to_pylist() == [{"town": "Rome"}, {"town": "Oslo"}], \
        "id 4 is the same leaf under its old name"
    assert pe.scan(str(tmp_path), where="user.town = 'Rome'", columns=["id"]).to_pylist() == \
        [{"id": 1}]
    with pytest.raises(pe.ColumnPathError, match="nearest existing path is 'user.town'"):
        pe.scan(str(tmp_path), columns=["user.city"])


def test_widened_types_unify(tmp_path):
    pq.write_table(pa.table({"s": pa.array([{"x": 1}], pa.struct([("x", pa.int32())]))}),
                   tmp_path / "a.parquet")
    pq.write_table(pa.table({"s": pa.array([{"x": 2**40}], pa.struct([("x", pa.int64())]))}),
                   tmp_path / "b.parquet")
    got = pe.scan(str(tmp_path), columns=["s.x"], where="s.x > 0")
    assert got.schema.field("s").type == pa.struct([("x", pa.int64())])
    assert got.column("s").to_pylist() == [{"x": 1}, {"x": 2**40}]


def test_incompatible_change_is_an_error(tmp_path):
    pq.write_table(pa.table({"s": [{"x": 1}]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"s": [[1]]}), tmp_path / "b.parquet")
    with pytest.raises(pe.ScanError, match="column s: a struct in some files, a list in others"):
        pe.scan(str(tmp_path))


def test_hive_partitions_are_columns_and_prune(tmp_path):
    for day in ("2024-01-01", "2024-01-02"):
        folder = tmp_path / f"day={day}"
        folder.mkdir()
        pq.write_table(pa.table({"v": [{"a": 1}, {"a": 2}]}), folder / "f.parquet")
    got = pe.scan(str(tmp_path), where="day = DATE '2024-01-02' AND v.a = 2",
                  columns=["day", "v.a"])
    assert got.to_pylist() == [{"day": pa.scalar(19724, pa.date32()).as_py(), "v": {"a": 2}}]
    assert pe.scan(str(tmp_path)).column_names == ["v", "day"]


def test_stale_statistics_read_the_changed_file_whole(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3, 4]}), path, row_group_size=2)
    stats = pe.collect_stats(str(tmp_path), progress=False)
    pq.write_table(pa.table({"x": [9, 9, 9, 4]}), path, row_group_size=2)
    os.utime(path, ns=(1, 1))  # another modification time than the statistics recorded
    assert pe.scan(str(tmp_path), where="x = 9", stats=stats).column("x").to_pylist() == \
        [9, 9, 9], "a stale prune would have dropped the first row group"


def test_statistics_without_locations_are_an_error(tmp_path):
    pq.write_table(pa.table({"x": [1]}), tmp_path / "t.parquet")
    stats = pa.table({"container": ["a"], "num_records": [1], "min_values": [{"x": 1}],
                      "max_values": [{"x": 1}], "null_count": [{"x": 0}]})
    with pytest.raises(pe.ScanError, match="'path' column"):
        pe.scan(str(tmp_path), where="x = 1", stats=stats)


def test_unreadable_file_names_the_file(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(pe.ScanError) as err:
        pe.scan(str(tmp_path))
    assert err.value.path.endswith("bad.parquet")
