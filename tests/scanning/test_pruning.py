"""Predicates on nested leaves prune with the nested statistics: struct leaves as columns,
list and map elements as elements (an existential test), never losing a matching row."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.pruning import keep_mask
from prune_engine.scanning.rows import RowFilter

GROUPS = 4
ROWS = 10


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """Row group g: user.age 100 g + i, orders.qty 100 g + i for i % 3 != 0 (i = 0..9; no
    orders for i = 0), keys 'k{g}', tags 't{g}'."""
    rows = []
    for g in range(GROUPS):
        for i in range(ROWS):
            rows.append({
                "id": g * ROWS + i,
                "user": {"age": 100 * g + i, "name": f"n{g}"},
                "orders": None if i == 0 else [{"qty": 100 * g + i, "sku": f"s{g}"}] * (i % 3),
                "attrs": [(f"k{g}", i)],
                "tags": [f"t{g}", None],
            })
    schema = pa.schema([
        ("id", pa.int64()), ("user", pa.struct([("age", pa.int64()), ("name", pa.string())])),
        ("orders", pa.list_(pa.struct([("qty", pa.int64()), ("sku", pa.string())]))),
        ("attrs", pa.map_(pa.string(), pa.int64())), ("tags", pa.list_(pa.string()))])
    table = pa.Table.from_pylist(rows, schema=schema)
    path = str(tmp_path_factory.mktemp("prune") / "t.parquet")
    pq.write_table(table, path, row_group_size=ROWS)
    return path, table, pe.collect_stats(path, progress=False)


def _kept(stats, table, where: str) -> list[bool]:
    return keep_mask(stats, RowFilter(to_expr(where), table.schema)).to_pylist()


@pytest.mark.parametrize("where, kept", [
    ("user.age >= 300", [False, False, False, True]),  # a struct leaf: an ordinary column
    ("orders.qty > 250", [False, False, False, True]),  # some element above 250
    ("orders.qty < 105 AND orders.qty > 103", [False, True, False, False]),
    ("NOT (orders.qty >= 200)", [True, True, False, False]),  # some element below 200
    ("orders.sku = 's2'", [False, False, True, False]),
    ("attrs.key = 'k1'", [False, True, False, False]),
    ("attrs.value > 100", [False, False, False, False]),
    ("array_contains(tags, 't3')", [False, False, False, True]),
    ("orders.qty > 250 OR user.age < 5", [True, False, False, True]),
    ("NOT array_contains(tags, 't3')", [True, True, True, True]),  # unknown: keeps
    ("orders.qty IS NULL", [True, True, True, True]),  # element null counts: unknown
])
def test_nested_predicates_prune(lake, where, kept):
    path, table, stats = lake
    assert _kept(stats, table, where) == kept, f"row groups kept for {where}"


@pytest.mark.parametrize("where", [
    "orders.qty > 250", "orders.qty < 105 AND orders.qty > 103", "NOT (orders.qty >= 200)",
    "attrs.key = 'k1' OR orders.sku = 's0'", "array_contains(tags, 't3') AND user.age > 305",
    "(user.age > 305 OR array_contains(tags, 't3')) IS NOT FALSE", "array_contains(tags, 't3') IS TRUE",
])
def test_pruned_scan_equals_the_unpruned_filter(lake, where):
    path, table, stats = lake
    pruned = pe.scan(path, where=where, stats=stats)
    whole = pe.scan(path, where=where, stats=pe.collect_stats(path, columns=["id"],
                                                                progress=False))
    assert pruned.equals(whole), where
    assert pruned.num_rows > 0


def test_statistics_without_the_column_keep_everything(lake):
    path, table, _ = lake
    partial = pe.collect_stats(path, columns=["id"], progress=False)
    assert _kept(partial, table, "orders.qty > 250 AND user.age > 1") == [True] * GROUPS


def test_element_copies_do_not_collide_with_columns(lake):
    path, table, stats = lake
    # two occurrences of one element leaf get two copies: both bounds are applied separately
    assert _kept(stats, table, "orders.qty > 350 AND orders.qty < 110") == \
        [False, False, False, False]
    assert _kept(stats, table, "orders.qty > 250 AND orders.qty < 305") == \
        [False, False, False, True]
