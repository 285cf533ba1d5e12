"""Manifests whose Avro schema carries no field ids where the Iceberg spec writes them.

BigQuery writes manifests whose statistics maps (``lower_bounds``, ``null_value_counts``, ...)
are arrays of key / value records without the ``field-id`` attributes (PyIceberg cannot read
them at all). The map key IS the column's field id; only the Avro schema's own ids are
missing, and the spec's names (``key`` / ``value``, ``lower_bounds``, ...) say which field is
which. Before, every column of such a table silently became unknown. Here: a PyIceberg table's
manifests are rewritten with those ids removed (the records' bytes unchanged), and the
statistics must equal those of the untouched manifests. Where the entries cannot be matched
without doubt, the statistics are unknown, with a warning and
``metadata["iceberg"]["unused_statistics"]`` saying why.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.stats import avro, manifests
from tests.stats.iceberg_support import check_sound, rewrite_manifests, rows_by_file

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("g", pa.float64()),
                    ("p", pa.string())])
FILES = [pa.table({"id": [1, 2, None], "s": ["a", "b", "c"], "g": [0.5, None, 1.5],
                   "p": ["eu"] * 3}),
         pa.table({"id": [10, 12, 11], "s": ["x", None, "y"], "g": [-1.0, 2.0, 3.0],
                   "p": ["us"] * 3}),
         pa.table({"id": [None, None], "s": ["m", "n"], "g": [None, None], "p": [None, None]})]
PREDICATES = ["id > 5", "id < 5", "id = 11", "id IS NULL", "id IS NOT NULL", "s = 'b'",
              "s > 'w'", "s IS NULL", "g > 1.7", "g < 0", "g IS NULL", "id > 1 AND s < 'c'",
              "p = 'eu'", "p IS NULL", "p > 'f'"]


def _table(catalog, name: str):
    """Three files, identity-partitioned by ``p`` (the partition record's field names and
    ids are in the manifests too)."""
    table = catalog.create_table(f"db.{name}", schema=SCHEMA)
    with table.update_spec() as update:
        update.add_identity("p")
    for data in FILES:
        table.append(data.cast(SCHEMA))
    return table


def _walk(schema, visit) -> None:
    """Call ``visit(node)`` on every dict of an Avro schema."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            visit(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _map_entries(change):
    """A schema edit: ``change(field)`` on the key and value fields of every map's entries
    (Iceberg's records named ``k<key id>_v<value id>``)."""
    def edit(schema):
        def visit(node):
            if node.get("type") == "record" and str(node.get("name", "")).startswith("k"):
                for f in node.get("fields", []):
                    change(f)
        _walk(schema, visit)
        return schema
    return edit


def _no_ids(schema):
    """Every ``field-id`` and ``element-id`` of the schema removed (names only)."""
    def visit(node):
        node.pop("field-id", None)
        node.pop("element-id", None)
    _walk(schema, visit)
    return schema


def _stats_columns(stats) -> dict:
    return {name: stats.column(name).to_pylist()
            for name in ("path", "num_records", "min_values", "max_values", "null_count")}


@pytest.mark.parametrize("how", ["map entries without ids", "no ids at all"])
def test_manifests_without_field_ids_prune_as_with_them(catalog, how):
    table = _table(catalog, "unnamed_" + how.replace(" ", "_"))
    expected = _stats_columns(pe.stats_from_iceberg(table))
    assert expected["min_values"][1] == {"id": 10, "s": "x", "g": -1.0, "p": "us"}
    edit = _map_entries(lambda f: f.pop("field-id")) if how.startswith("map") else _no_ids
    rewrite_manifests(table, schema=edit)
    stats = pe.stats_from_iceberg(table)  # (before: every column unknown)
    assert _stats_columns(stats) == expected
    assert "unused_statistics" not in stats.metadata["iceberg"]
    assert check_sound(stats, rows_by_file(stats), PREDICATES) > 10
    assert pe.prune(stats, "id > 5").to_pylist() == [False, True, False]


@pytest.mark.parametrize("how", [
    "names",  # no ids and names the spec does not give: which is the key cannot be told
    "wrong ids",  # the value's id given to the key: bounds paired with the wrong fields
])
def test_map_entries_that_cannot_be_matched_leave_their_statistics_unknown(catalog, how):
    table = _table(catalog, "unmatched_" + how.replace(" ", "_"))
    expected = _stats_columns(pe.stats_from_iceberg(table))

    def rename(f):
        f.pop("field-id")
        f["name"] = {"key": "k", "value": "v"}[f["name"]]

    def wrong(f):
        f["field-id"] = 127 if f["field-id"] == 126 else f["field-id"]

    edit = _map_entries(rename) if how == "names" else _map_entries(wrong)
    rewrite_manifests(table, schema=edit)
    with pytest.warns(UserWarning, match="statistics left unused"):
        stats = pe.stats_from_iceberg(table)
    unused = stats.metadata["iceberg"]["unused_statistics"]
    whys = sorted(u["why"].split(" field")[0] for u in unused)
    columns = _stats_columns(stats)
    # (p, the identity partition, keeps its exact statistics from the partition values)
    unknown = [{"id": None, "s": None, "g": None, "p": p} for p in ("eu", "us", None)]
    assert columns["min_values"] == unknown
    if how == "names":  # every map of each of the 3 manifests is unknown
        assert whys == sorted(["it has no lower_bounds key", "it has no upper_bounds key",
                               "it has no null_value_counts key",
                               "it has no nan_value_counts key"] * 3)
        assert columns["max_values"] == unknown
        assert [n["id"] for n in columns["null_count"]] == [None] * 3
        assert pe.prune(stats, "id < 5").to_pylist() == [True, True, True]
    else:  # only the lower bounds are unknown; the rest as written
        assert whys == ["it has no lower_bounds key"] * 3  # (its id is the value's)
        assert columns["max_values"] == expected["max_values"]
        assert columns["null_count"] == expected["null_count"]
        assert pe.prune(stats, "id < 5").to_pylist() == [True, True, False]  # all null
    # each entry names the data files whose statistics it left unknown
    paths = stats.column("path").to_pylist()
    assert sorted(f for u in unused if "lower_bounds" in u["why"] for f in u["files"]) == \
        sorted(paths)
    check_sound(stats, rows_by_file(stats), PREDICATES)



# -- a manifest written by hand -----------------------------------------------------------------

_zz, _text = avro.zigzag, avro.text


def _bounds_map(values: str | None) -> dict:
    """A statistics map of the BigQuery shape: key / value records without field ids, or
    (``values`` given) an Avro map of string keys."""
    if values:
        return {"type": "map", "values": values}
    return {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": "entry", "fields": [
            {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}}


def _manifest(lower: dict, nulls: dict) -> dict:
    return {"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "data_file", "field-id": 2, "type": {
            "type": "record", "name": "r2", "fields": [
                {"name": "file_path", "type": "string", "field-id": 100},
                {"name": "record_count", "type": "long", "field-id": 103},
                {"name": "null_value_counts", "type": nulls, "field-id": 110},
                {"name": "lower_bounds", "type": lower, "field-id": 125}]}}]}


def _entries(pairs: list[tuple], key) -> bytes:
    return _zz(len(pairs)) + b"".join(key(k) + v for k, v in pairs) + _zz(0)


@pytest.mark.parametrize("shape", ["no ids", "avro map"])
def test_a_hand_written_manifest(tmp_path, shape):
    from pyiceberg.io.pyarrow import PyArrowFileIO

    nulls = {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": "counts", "fields": [
            {"name": "key", "type": "int"}, {"name": "value", "type": "long"}]}}
    int_key = _zz
    lower_key = (lambda k: _text(str(k).encode())) if shape == "avro map" else int_key
    record = (_zz(1) + _text(b"/data/a.parquet") + _zz(3)
              + _entries([(1, _zz(1))], int_key)  # null count of field 1: 1
              + _entries([(1, _text((7).to_bytes(8, "little")))], lower_key))  # its min: 7
    path = tmp_path / "m.avro"
    path.write_bytes(avro.write_container(
        _manifest(_bounds_map("bytes" if shape == "avro map" else None), nulls), record, 1))
    files = manifests.data_files(PyArrowFileIO(), [manifests.Manifest(str(path), 0, 0, 1)])
    assert files.paths.to_pylist() == ["/data/a.parquet"]
    assert files.maps[manifests.NULL_COUNTS].value.tolist() == [1]  # read by the spec's names
    lows = files.maps[manifests.LOWER_BOUNDS]
    if shape == "no ids":
        assert lows.key.tolist() == [1] and lows.value.to_pylist() == [(7).to_bytes(8, "little")]
        assert files.unused == []
    else:  # string keys are not the spec's int keys: not guessed at
        assert len(lows.key) == 0
        assert files.unused == [(str(path), files.unused[0][1])]
        assert "lower_bounds key" in files.unused[0][1]
