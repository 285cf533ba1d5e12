"""Projection paths: every spelling, the shape of the result, and clear errors (never a path
silently dropped)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.scanning.paths import resolve

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("user", pa.struct([("name", pa.string()),
                        ("address", pa.struct([("city", pa.string()), ("zip", pa.int32())]))])),
    ("orders", pa.list_(pa.field("element", pa.struct([("price", pa.float64()),
                                                       ("qty", pa.int32())])))),
    ("attrs", pa.map_(pa.string(), pa.struct([("v", pa.int64()), ("w", pa.string())]))),
    ("a.b", pa.int8()),
    ("a", pa.struct([("b", pa.int8()), ("c.d", pa.int8())])),
])
ROWS = [
    {"id": 1, "user": {"name": "ann", "address": {"city": "Oslo", "zip": 150}},
     "orders": [{"price": 9.5, "qty": 1}, None], "attrs": [("k", {"v": 1, "w": "x"})],
     "a.b": 1, "a": {"b": 2, "c.d": 3}},
    {"id": 2, "user": None, "orders": None, "attrs": None, "a.b": None, "a": None},
    {"id": 3, "user": {"name": None, "address": None}, "orders": [], "attrs": [],
     "a.b": 4, "a": {"b": None, "c.d": 5}},
]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("paths") / "t.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS, schema=SCHEMA), p)
    return p


def test_dotted_struct_leaf_keeps_the_struct_shape(path):
    got = pe.scan(path, columns=["user.address.city"])
    assert got.to_pylist() == [{"user": {"address": {"city": "Oslo"}}}, {"user": None},
                               {"user": {"address": None}}]


def test_integer_paths_are_the_same_selection(path):
    assert pe.scan(path, columns=[[1, 1, 0]]).equals(pe.scan(path, columns=["user.address.city"]))
    assert pe.scan(path, columns=[[2, 0]]).equals(pe.scan(path, columns=["orders.price"]))
    assert pe.scan(path, columns=[[3, 1, 0]]).equals(pe.scan(path, columns=["attrs.value.v"]))


def test_list_of_structs_keeps_the_list(path):
    got = pe.scan(path, columns=["orders.qty"])
    assert str(got.schema.field("orders").type) == "list<element: struct<qty: int32>>"
    assert got.column("orders").to_pylist() == [[{"qty": 1}, None], None, []]


def test_map_values_and_keys_stay_a_map(path):
    values = pe.scan(path, columns=["attrs.value.w"])
    assert values.schema.field("attrs").type == pa.map_(pa.string(), pa.struct([("w", pa.string())]))
    assert values.column("attrs").to_pylist() == [[("k", {"w": "x"})], None, []]
    keys = pe.scan(path, columns=["attrs.key"])
    assert keys.schema.field("attrs").type == pa.map_(pa.string(), pa.null())
    assert keys.column("attrs").to_pylist() == [[("k", None)], None, []]


def test_quoted_names_with_dots(path):
    assert pe.scan(path, columns=["`a.b`"]).column("a.b").to_pylist() == [1, None, 4]
    assert pe.scan(path, columns=["`a`.b"]).column("a").to_pylist() == [{"b": 2}, None, {"b": None}]
    assert pe.scan(path, columns=["a.`c.d`"]).column("a").to_pylist() == \
        [{"c.d": 3}, None, {"c.d": 5}]
    # unambiguous without quotes: a has no child "c"
    assert pe.scan(path, columns=["a.c.d"]).column("a").to_pylist() == \
        [{"c.d": 3}, None, {"c.d": 5}]


def test_ambiguous_dotted_name_is_an_error_listing_the_spellings(path):
    with pytest.raises(pe.ColumnPathError) as err:
        pe.scan(path, columns=["a.b"])
    assert sorted(err.value.candidates) == ["`a.b`", "a.b"], "should name both readings"
    assert "ambiguous" in str(err.value)


@pytest.mark.parametrize("bad, nearest", [
    ("user.adress.city", "user.address.city"),
    ("orders.prize", "orders.price"),
    ("orders.list.element.price", "orders.price"),
    ("usr", "user"),
])
def test_unknown_path_names_the_nearest(path, bad, nearest):
    with pytest.raises(pe.ColumnPathError) as err:
        pe.scan(path, columns=[bad])
    assert err.value.nearest == nearest, str(err.value)
    assert nearest in str(err.value)


def test_path_through_a_scalar_is_an_error(path):
    with pytest.raises(pe.ColumnPathError, match="id is a int64, not a struct"):
        pe.scan(path, columns=["id.x"])
    with pytest.raises(pe.ColumnPathError, match="not a struct"):
        pe.scan(path, columns=["orders.price.cents"])


def test_bad_integer_paths(path):
    with pytest.raises(pe.ColumnPathError, match="index 9 at position 1 is out of range"):
        pe.scan(path, columns=[[1, 9]])
    with pytest.raises(pe.ColumnPathError, match="dotted text or a sequence"):
        pe.scan(path, columns=[[1, "x"]])
    with pytest.raises(pe.ColumnPathError, match="list of paths"):
        pe.scan(path, columns="id")


def test_malformed_quoting(path):
    with pytest.raises(pe.ColumnPathError, match="unclosed backtick"):
        pe.scan(path, columns=["`a.b"])
    with pytest.raises(pe.ColumnPathError, match="ends with a dot"):
        pe.scan(path, columns=["user."])


def test_flatten_names_and_collisions(path):
    got = pe.scan(path, columns=["user.address.city", "orders.price", "attrs.key", "a.`c.d`",
                                 "`a.b`"], flatten=True)
    assert got.column_names == ["user_address_city", "orders_price", "attrs_key", "a_c.d", "a.b"]
    assert got.column("orders_price").to_pylist() == [[9.5, None], None, []]
    assert got.column("attrs_key").to_pylist() == [["k"], None, []]
    same = pe.scan(path, columns=["user.name", "user.name"], flatten=True)
    assert same.column_names == ["user_name", "user_name_2"], "a deterministic suffix"


def test_top_level_order_is_the_order_given(path):
    got = pe.scan(path, columns=["orders.qty", "id", "user.name", "orders.price"])
    assert got.column_names == ["orders", "id", "user"]
    # inside a struct, the schema's order
    assert str(got.schema.field("orders").type) == \
        "list<element: struct<price: double, qty: int32>>"


def test_resolve_exposes_kinds():
    fp = resolve(SCHEMA, "attrs.value.v")
    assert fp.kinds == ("field", "value", "field") and fp.names == ("attrs", "value", "v")
