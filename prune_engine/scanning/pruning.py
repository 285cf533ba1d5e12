"""Which row groups the scan reads: ``pe.prune`` on the statistics, with nested predicates.

Struct leaves are ordinary columns of the statistics (``user.address.city``) and go to
``pe.prune`` as they are. A predicate on list or map elements (``orders.price > 100``) is an
existential test (:mod:`prune_engine.scanning.rows`): some element makes it TRUE. The statistics of
``orders.price`` bound *every element* of the row group, so a row group can be skipped when no
value within those bounds can make the predicate TRUE: exactly what ``pe.prune`` decides for a
column whose values are the elements. The scan therefore hands ``pe.prune`` a view of the
statistics with each such element leaf copied under a fresh private name, as a plain column:

- its ``min_values`` / ``max_values`` are the element bounds;
- its ``null_count`` is unknown (the element null count counts missing slots, not rows), and
  so is its ``nan_count`` (absent);
- every occurrence gets its own copy, so that no rewrite relates two predicates on the same
  elements as if one row held both (``orders.price > 5 AND orders.price < 3`` may be TRUE:
  two different elements).

The row filter's predicate is in negation normal form (NOT pushed down to the predicates),
so every existential test sits under AND / OR only. What the statistics do not describe
(columns missing from a user's statistics, a struct or a bare list tested for NULL, an element
predicate under ``NOT array_contains``) becomes an opaque call that ``pe.prune`` reads as
"unknown", which keeps. ``array_contains`` is handed over unchanged: the engine knows it.

>>> import pyarrow as pa
>>> from prune_engine.expr.convert import to_expr
>>> from prune_engine.scanning.rows import RowFilter
>>> schema = pa.schema([("o", pa.list_(pa.struct([("p", pa.int64())])))])
>>> rows = RowFilter(to_expr("o.p > 5 OR NOT o.p < 2"), schema)
>>> str(rewrite(rows.expr, rows, {("o", "p"): True}, "__e")[0])
'__e0 > 5 OR __e1 >= 2'
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.expr import nodes as n
from prune_engine.scanning.rows import ARRAY_CONTAINS, RowFilter
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable, as_stats_table

__all__ = ["keep_mask", "rewrite"]

#: what a predicate the statistics cannot judge becomes: an unknown function (keeps)
OPAQUE = n.Func("__scan_unknown", ())


def _element_leaves(stats_type: pa.DataType) -> dict[tuple[str, ...], bool]:
    """Every leaf path of a stats struct type -> True if it describes elements."""
    return {path: kind is not None for path, _, kind in layout.leaves(stats_type)}


def rewrite(e: n.Expr, rows: RowFilter, leaves: dict, prefix: str
            ) -> tuple[n.Expr, list[tuple[str, tuple[str, ...]]]]:
    """``e`` for ``pe.prune`` over the element view, and the copies it needs: ``(name, stats
    path)`` per element occurrence. ``leaves``: the statistics' leaf paths (see
    :func:`_element_leaves`)."""
    copies: list[tuple[str, tuple[str, ...]]] = []

    def go(node: n.Expr, positive: bool) -> n.Expr:
        if isinstance(node, n.And):
            return n.And(tuple(go(a, positive) for a in node.args))
        if isinstance(node, n.Or):
            return n.Or(tuple(go(a, positive) for a in node.args))
        if isinstance(node, n.Not):
            return n.Not(go(node.arg, not positive))
        return atom(node, positive)

    def atom(node: n.Expr, positive: bool) -> n.Expr:
        columns = n.columns_of(node)
        if isinstance(node, n.Func) and node.name == ARRAY_CONTAINS:
            fp = rows.bound["contains", node.args[0]]
            if fp.names in leaves:
                return n.Func(ARRAY_CONTAINS, (n.Column(fp.names),) + node.args[1:])
            return OPAQUE
        mapping = {}
        for c in columns:
            fp = rows.bound.get(c)
            if fp is None:
                return OPAQUE  # a list named by array_contains inside a compound test (IS TRUE)
            element = leaves.get(fp.names)
            if element is None or element != fp.through_elements:
                return OPAQUE  # the statistics do not describe it (as this kind of column)
            if not element:
                mapping[c] = n.Column(fp.names)
                continue
            if not positive or isinstance(node, n.IsBool):
                return OPAQUE
            name = f"{prefix}{len(copies)}"
            copies.append((name, fp.names))
            mapping[c] = n.Column((name,))
        return _replace(node, mapping)

    return go(e, True), copies


def _replace(node: n.Expr, mapping: dict) -> n.Expr:
    if isinstance(node, n.Column):
        return mapping.get(node, node)
    if isinstance(node, n.Literal):
        return node
    fields = {}
    for name, value in vars(node).items():
        if isinstance(value, n.Expr):
            fields[name] = _replace(value, mapping)
        elif isinstance(value, tuple) and value and all(isinstance(v, n.Expr) for v in value):
            fields[name] = tuple(_replace(v, mapping) for v in value)
        else:
            fields[name] = value
    return type(node)(**fields)


def _leaf(column: pa.ChunkedArray, path: tuple[str, ...]) -> pa.Array:
    array = column.combine_chunks()
    for name in path:
        array = pc.struct_field(array, [array.type.get_field_index(name)])
    return array


def _with_copies(table: pa.Table, copies: list[tuple[str, tuple[str, ...]]]) -> pa.Table:
    for stat in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT):
        column = table.column(stat).combine_chunks()
        arrays = [column.field(i) for i in range(column.type.num_fields)]
        fields = list(column.type)
        for name, path in copies:
            if stat == layout.NULL_COUNT:
                arrays.append(pa.nulls(table.num_rows, pa.int64()))
                fields.append(pa.field(name, pa.int64()))
            else:
                leaf = _leaf(table.column(stat), path)
                arrays.append(leaf)
                fields.append(pa.field(name, leaf.type))
        struct = pa.StructArray.from_arrays(arrays, fields=fields, mask=column.is_null()
                                            if column.null_count else None)
        table = table.set_column(table.schema.get_field_index(stat), stat, struct)
    return table


def _scan_view(stats: StatsTable, rows: RowFilter) -> tuple[n.Expr, pa.Table, bool]:
    """The scan's predicate over a view of the statistics with the element leaves copied
    (see the module doc), and whether any element predicate was rewritten."""
    schema = stats.schema
    source = layout.MIN_VALUES if layout.MIN_VALUES in schema.names else layout.MAX_VALUES
    leaves = _element_leaves(schema.field(source).type) if source in schema.names else {}
    taken = set(leaves) | {(p[0],) for p in leaves}
    prefix, k = "__scan_element_", 0
    while any(p[0].startswith(prefix) for p in taken):
        k += 1
        prefix = f"__scan_element{k}_"
    expr, copies = rewrite(rows.expr, rows, leaves, prefix)
    table = stats.table
    if copies:
        table = _with_copies(table, copies)
    return expr, table, bool(copies)


def keep_mask(stats: StatsTable | pa.Table, rows: RowFilter, on_invalid: str = "raise"
              ) -> pa.BooleanArray:
    """``pe.prune``'s keep-mask for the scan's predicate (see the module doc)."""
    from prune_engine.api import prune

    expr, table, _ = _scan_view(as_stats_table(stats), rows)
    return prune(table, expr, on_invalid=on_invalid)


def scan_codes(stats: StatsTable | pa.Table, rows: RowFilter, on_invalid: str = "raise"):
    """``pe.classify``'s codes for the scan's predicate: a predicate on list or map elements
    (an existential test the element bounds cannot prove for every row) is never ``"all"``."""
    from prune_engine.api import classify
    from prune_engine.compiler.classify import ALL_CODE, SOME_CODE

    expr, table, elements = _scan_view(as_stats_table(stats), rows)
    codes = classify(table, expr, on_invalid=on_invalid).indices.to_numpy().copy()
    if elements:
        codes[codes == ALL_CODE] = SOME_CODE
    return codes
