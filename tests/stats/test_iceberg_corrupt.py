"""Iceberg tables damaged on disk: every refusal a one-line StatsError naming the file, and no
damage read as a wrong statistic.

Each test writes a table with PyIceberg (the SQLite catalog), then edits one of its files in
place as a corruption, a buggy writer or a hostile one would: the metadata JSON, the manifest
list, a manifest (schema or records). Before, these raised pyarrow's ArrowInvalid,
FileNotFoundError, UnicodeDecodeError, RecursionError or pydantic's errors, or read a string
partition value that is not UTF-8 as the exact value ``'e\\ufffd'`` of every row.
"""

from __future__ import annotations

import json
import os
import re
import warnings

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.errors import StatsError
from tests.stats.iceberg_support import (check_sound, edit_entries, edit_metadata, local,
                                         manifest_paths, rewrite_avro, rewrite_manifests,
                                         rows_by_file)

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def _table(catalog, name: str, partitioned: bool = True):
    """Two files (``s`` = 'a' and 'e'), identity-partitioned by ``s`` when asked."""
    table = catalog.create_table(f"db.{name}", schema=SCHEMA)
    if partitioned:
        with table.update_spec() as update:
            update.add_identity("s")
    table.append(pa.table({"id": [1, 2], "s": ["a", "a"]}, schema=SCHEMA))
    table.append(pa.table({"id": [7, 9], "s": ["e", "e"]}, schema=SCHEMA))
    return table


def _refused(catalog, name: str, names: str) -> StatsError:
    """The StatsError ``stats_from_iceberg`` raises for table ``name``: one line, under 400
    characters, naming the file ``names`` (its base name is enough)."""
    with pytest.raises(StatsError) as info:
        pe.stats_from_iceberg(catalog, f"db.{name}")
    text = str(info.value)
    assert "\n" not in text and len(text) < 400, text
    assert os.path.basename(names.rstrip("/")) in text, (names, text)
    return info.value


def _manifest_list(table) -> str:
    return local(table.current_snapshot().manifest_list)


# -- missing and unopenable files ------------------------------------------------------------


def test_a_missing_manifest_list(catalog):
    table = _table(catalog, "no_list")
    os.remove(_manifest_list(table))
    e = _refused(catalog, "no_list", _manifest_list(table))  # (was FileNotFoundError)
    assert "no such file" in str(e) and "manifest list" in str(e)


def test_a_missing_manifest(catalog):
    table = _table(catalog, "no_manifest")
    gone = manifest_paths(table)[0]
    os.remove(gone)
    assert "manifest" in str(_refused(catalog, "no_manifest", gone))


def test_a_manifest_list_location_with_a_nul(catalog):
    table = _table(catalog, "nul_list")
    edit_metadata(table, lambda m: m["snapshots"][-1].update(
        {"manifest-list": m["snapshots"][-1]["manifest-list"] + "\x00x"}))
    _refused(catalog, "nul_list", "x")  # (was ArrowInvalid: Embedded NUL char in path)


def test_a_manifest_path_that_is_not_utf8_or_holds_a_nul(catalog):
    for name, bad in (("latin_list", b"/d\xff/"), ("nul_manifest_path", b"/d\x00/")):
        table = _table(catalog, name)
        rewrite_avro(_manifest_list(table), data=lambda d: d.replace(b"/db/", bad, 1))
        e = _refused(catalog, name, _manifest_list(table))  # (was UnicodeDecodeError)
        assert "manifest path" in str(e)


def test_a_manifest_path_naming_no_file(catalog):
    table = _table(catalog, "elsewhere")
    rewrite_avro(_manifest_list(table), data=lambda d: d.replace(b"/db/", b"/dX/", 1))
    _refused(catalog, "elsewhere", "metadata")


def test_a_data_file_path_that_is_not_utf8_or_holds_a_nul(catalog):
    for name, bad in (("latin_data", b"/da\xffa/"), ("nul_data", b"/da\x00a/")):
        table = _table(catalog, name)
        rewrite_manifests(table, data=lambda d: d.replace(b"/data/", bad))
        e = _refused(catalog, name, manifest_paths(table)[0])  # (was ArrowInvalid)
        assert "data file path" in str(e)


# -- metadata the catalog cannot load ---------------------------------------------------------


def test_schema_json_nested_3000_deep(catalog):
    table = _table(catalog, "deep_json", partitioned=False)
    path = local(table.metadata_location)
    with open(path) as f:
        text = f.read()
    nest = "".join('{"type":"list","element-id":%d,"element-required":false,"element":'
                   % (100 + i) for i in range(3000))
    text = text.replace('"name":"id","type":"long"', '"name":"id","type":' + nest + '"long"'
                        + "}" * 3000, 1)
    with open(path, "w") as f:
        f.write(text)
    e = _refused(catalog, "deep_json", path)  # the metadata file (pydantic's error before)
    assert "db.deep_json" in str(e)


def test_manifest_avro_schema_nested_3000_deep(catalog):
    table = _table(catalog, "deep_avro", partitioned=False)
    path = manifest_paths(table)[0]
    with open(path, "rb") as f:
        raw = f.read()
    deep = b'{"type": "array", "items": ' * 3000 + b'"int"' + b"}" * 3000
    with open(path, "wb") as f:  # a schema json.loads cannot read: RecursionError before
        f.write(raw[:4] + _header({"avro.schema": deep, "avro.codec": b"null"}) + bytes(16))
    e = _refused(catalog, "deep_avro", path)
    assert "schema" in str(e)


def _header(meta: dict[str, bytes]) -> bytes:
    from prune_engine.stats.avro import text, zigzag

    return zigzag(len(meta)) + b"".join(text(k.encode()) + text(v) for k, v in meta.items()) \
        + zigzag(0)


# -- field ids that are not where the spec puts them ------------------------------------------


def _swap(first: int, second: int):
    """A schema edit swapping two Avro field ids (as text: they sit in nested records)."""
    def swap(schema):
        names = {first: second, second: first}
        text = re.sub(r'"field-id": (\d+)\b',
                      lambda m: f'"field-id": {names.get(int(m[1]), int(m[1]))}',
                      json.dumps(schema))
        assert text != json.dumps(schema)
        return json.loads(text)
    return swap


def test_manifest_fields_with_swapped_ids_are_refused(catalog):
    # file_path (100) and record_count (103) swapped: the path would be read from a long
    table = _table(catalog, "swap_path", partitioned=False)
    rewrite_manifests(table, schema=_swap(100, 103))
    e = _refused(catalog, "swap_path", manifest_paths(table)[0])
    assert "file_path" in str(e)


def test_map_key_and_value_ids_swapped_leave_the_bounds_unknown(catalog):
    table = _table(catalog, "swap_map", partitioned=False)
    rewrite_manifests(table, schema=_swap(126, 127))  # lower_bounds' key and value
    with pytest.warns(UserWarning, match="lower_bounds"):
        stats = pe.stats_from_iceberg(table)
    assert [m["id"] for m in stats.column("min_values").to_pylist()] == [None, None]
    assert [m["id"] for m in stats.column("max_values").to_pylist()] == [2, 9]  # still read
    unused = stats.metadata["iceberg"]["unused_statistics"]
    assert len(unused) == 2 and all("lower_bounds key" in u["why"] for u in unused)  # 2 manifests
    assert pe.prune(stats, "id > 5").to_pylist() == [False, True]  # the upper bounds prune
    assert pe.prune(stats, "id < 5").to_pylist() == [True, True]


def test_table_schema_with_swapped_field_ids_reads_no_wrong_bound(catalog):
    # the table metadata's ids swapped (id is 2, s is 1): the manifests' own schema says
    # what field 1 and 2 were when they were written (long, string): not promotable to
    # string, long: those statistics are unknown, not the bytes of a long read as a string
    # (and the partition values of 's', strings, are not read as longs: ArrowInvalid before)
    table = _table(catalog, "swap_ids")

    def swap(m):
        fields = m["schemas"][-1]["fields"]
        fields[0]["id"], fields[1]["id"] = fields[1]["id"], fields[0]["id"]
    edit_metadata(table, swap)
    with pytest.warns(UserWarning, match="impossible or unreadable"):
        stats = pe.stats_from_iceberg(catalog, "db.swap_ids")
    for name in ("min_values", "max_values", "null_count"):
        assert stats.column(name).to_pylist() == [{"id": None, "s": None}] * 2, name
    assert pe.prune(stats, "s = 'x'").to_pylist() == [True, True]


# -- values that do not decode: unknown, never a replaced or guessed value ---------------------


def test_identity_partition_value_that_is_not_utf8_is_unknown(catalog):
    # 'e' becomes b"e\x80" in the manifest: before, decoded as 'e\ufffd' and used as the exact
    # min = max of every row, which pruned "s = 'e'" from the file that holds it
    table = _table(catalog, "latin_partition")
    rewrite_manifests(table, data=lambda d: d.replace(b"\x02e", b"\x04e\x80"))
    with pytest.warns(UserWarning, match="impossible or unreadable"):
        stats = pe.stats_from_iceberg(table)
    parts = stats.column("partition_values").to_pylist()
    assert parts == [{"s": "a"}, {"s": None}]
    assert stats.column("min_values").to_pylist()[1]["s"] is None
    assert stats.column("null_count").to_pylist()[1]["s"] is None  # not "every row null"
    rows = rows_by_file(stats)
    preds = ["s = 'e'", "s = 'a'", "s > 'b'", "s IS NULL", "s = 'e\ufffd'", "s <> 'a'"]
    check_sound(stats, rows, preds)
    assert pe.prune(stats, "s = 'e'").to_pylist() == [False, True]


def test_string_bounds_that_are_not_utf8_are_unknown(catalog):
    table = _table(catalog, "latin_bounds", partitioned=False)

    def latin(data_file):  # the second file's lower bound of s (field 2): b"e" -> b"e\x80"
        if data_file.lower_bounds[2] == b"e":
            data_file.lower_bounds[2] = b"e\x80"
    edit_entries(table, latin)
    stats = pe.stats_from_iceberg(table)
    lows = [m["s"] for m in stats.column("min_values").to_pylist()]
    assert lows == ["a", None]  # not 'e\ufffd'
    check_sound(stats, rows_by_file(stats), ["s = 'e'", "s < 'b'", "s > 'd'"])


def test_boolean_bound_byte_other_than_0_or_1_is_unknown(catalog):
    schema = pa.schema([("b", pa.bool_())])
    table = catalog.create_table("db.bool_byte", schema=schema)
    table.append(pa.table({"b": [False, False]}, schema=schema))

    def byte(data_file):  # 0x64 would read as TRUE byte-wise (the spec: 0x00 or 0x01)
        data_file.lower_bounds[1] = data_file.upper_bounds[1] = b"\x64"
    edit_entries(table, byte)
    stats = pe.stats_from_iceberg(table)
    assert stats.column("min_values").to_pylist() == [{"b": None}]
    assert stats.column("max_values").to_pylist() == [{"b": None}]
    assert pe.prune(stats, "b = false").to_pylist() == [True]


@pytest.mark.parametrize("edit, column", [
    (lambda f: f.null_value_counts.update({1: 57}), "null_count"),  # 57 nulls in 2 rows
    (lambda f: f.lower_bounds.update({1: (10**6).to_bytes(8, "little")}), "min_values"),
])
def test_impossible_statistics_are_unknown_with_one_warning_per_file(catalog, edit, column):
    name = f"impossible_{column}"
    table = _table(catalog, name, partitioned=False)
    edit_entries(table, edit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.stats_from_iceberg(table)
    assert [m["id"] for m in stats.column(column).to_pylist()] == [None, None]
    assert sum("impossible" in str(w.message) for w in caught) == 2  # one per file
    check_sound(stats, rows_by_file(stats), ["id IS NULL", "id > 5", "id < 3", "id = 7"])
    if column == "null_count":
        assert pe.prune(stats, "id > 5").to_pylist() == [False, True]  # the bounds still prune
