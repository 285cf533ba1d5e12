"""Small edges of issue #22: parse errors in the user's words, builder argument checks, and
predicates on fields of list elements in ``pe.prune`` / ``pe.explain``."""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.stats import layout


@pytest.mark.parametrize("sql, words, col", [
    ("x >", "expected an expression after '>'", 3),
    ("x > AND 5", "expected an expression after '>'", 7),
    ("x = 1 AND", "expected an expression after AND", 9),
    ("NOT", "expected an expression after NOT", 3),
    ("(x > 1", "expected ')' to close the '(' at line 1, column 1", 6),
    ("x > 1)", "unexpected ')'", 6),
    ("x BETWEEN 1", "the upper bound is missing", 11),
    ("CAST(x AS)", "expected a type after AS", 10),
])
def test_parse_errors_name_the_construct_as_written(sql, words, col):
    with pytest.raises(pe.SqlParseError) as info:
        pe.compile(sql, None)
    first = str(info.value).splitlines()[0]
    assert words in first and (info.value.line, info.value.col) == (1, col)
    assert "class" not in first and "sqlglot" not in first, "no Python class names"


@pytest.mark.parametrize("make, words", [
    (lambda: pe.col("country").like(5), ".like takes a pattern as a str"),
    (lambda: pe.col("country").ilike(None), ".ilike takes a pattern as a str"),
    (lambda: pe.col("country").like("a%", escape=1), "escape= as a one-character str"),
    (lambda: pe.col("country").rlike(b"^a"), ".rlike takes a regular expression as a str"),
    (lambda: pe.col("x").isin(5), ".isin takes an iterable of values"),
    (lambda: pe.col("x").isin("abc"), ".isin takes an iterable of values"),
    (lambda: pe.col("x").cast("int"), ".cast takes a pyarrow type"),
    (lambda: pe.col(5), "col takes a column name"),
])
def test_builder_methods_say_what_they_take(make, words):
    with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(".", r"\.")):
        make()


def test_builder_isin_takes_any_iterable():
    assert str(pe.col("x").isin(v for v in (1, 2))) == "x IN (1, 2)"
    assert str(pe.col("x").isin({3})) == "x IN (3)"


def _orders_stats() -> pa.Table:
    """Two containers of rows with a list of structs ``orders``; element bounds on price."""
    elem = layout.element_field("orders", pa.struct([("price", pa.int64())]))
    bounds = pa.struct([elem, ("id", pa.int64())])
    counts = pa.struct([("orders", pa.struct([("price", pa.int64())])), ("id", pa.int64())])
    return pa.table({
        "container": ["cheap", "dear"],
        "num_records": pa.array([4, 4], pa.int64()),
        "min_values": pa.array([{"orders": {"price": 1}, "id": 0}, {"orders": {"price": 150}, "id": 5}], bounds),
        "max_values": pa.array([{"orders": {"price": 50}, "id": 4}, {"orders": {"price": 900}, "id": 9}], bounds),
        # element null counts count missing slots, not rows: never read as "all NULL"
        "null_count": pa.array([{"orders": {"price": 4}, "id": 0}] * 2, counts),
    })


def test_prune_and_explain_read_a_path_through_list_elements_like_scan():
    stats = _orders_stats()
    assert pe.prune(stats, "orders.price > 100").to_pylist() == [False, True], "max element price 50"
    assert pe.prune(stats, pe.col("orders.price") > 100).to_pylist() == [False, True]
    assert pe.prune(stats, "orders.price < 10").to_pylist() == [True, False], "min element price 150"
    # NOT is pushed down first, then the test is per element (the scan's meaning)
    assert pe.prune(stats, "NOT (orders.price <= 100)").to_pylist() == [False, True]
    assert pe.prune(stats, "orders.price IS NULL").to_pylist() == [True, True], "element nulls: unknown"
    table = pe.explain(stats, "orders.price > 100")
    assert table.column("keep").to_pylist() == [False, True]
    assert table.column("reason").to_pylist() == ["orders.price > 100", None]


def test_a_list_itself_compared_to_a_value_is_still_an_error():
    mn = pa.array([{"tags": "b"}], pa.struct([layout.element_field("tags", pa.string())]))
    t = pa.table({"container": ["p"], "num_records": [3], "min_values": mn, "max_values": mn,
                  "null_count": pa.array([{"tags": 0}], pa.struct([("tags", pa.int64())]))})
    with pytest.raises(pe.TypeMismatchError, match="array_contains"):
        pe.prune(t, "tags = 'c'")
