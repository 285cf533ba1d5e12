"""Row ranges from a predicate: which rows of each row group may match, from page statistics.

A row group's column chunks are cut into pages, and the pages of different columns cover
different rows, so a page prune is not one keep-mask per container. Instead, per row group,
this module computes the ROW RANGES (``[row_start, row_start + row_count)``) that may hold a
row where the predicate is TRUE; a reader may skip every row outside them.

What is read, and what is trusted:

- the page statistics of :mod:`prune_engine.stats.page_index` (``PageStats``): per leaf column,
  one row per page, a valid statistics table (DESIGN.md layout) with the page's ``row_start``
  and ``row_count`` within its row group. A chunk without a usable page index is one "page"
  with unknown statistics: it keeps all its rows.
- the row-group statistics (``stats=``, or ``collect_stats`` of the source): a row group they
  prune selects no rows.
- rows a column's pages do not cover, pages with no row span, and page spans past the row
  group's end are not trusted: uncovered rows of a row group are kept, spans are clipped to it.

How a predicate becomes ranges (the steps, in order):

1. ``NOT`` is pushed down to the predicates first, by the engine's one rewrite
   (:func:`prune_engine.compiler.rules.rewrite`, which runs ``push_not``): afterwards the tree
   is AND / OR over predicates, none under a ``NOT``.
2. A sub-predicate over exactly one leaf column with pages (``a > 5``, ``a = 1 OR a = 7``,
   ``s LIKE 'ab%'``) is a LEAF: :func:`prune_engine.prune` runs it over ALL pages of that column
   at once (the same checks, type rules and three-valued logic as for row groups: one home for
   them), and the kept pages become that leaf's ranges (:func:`ranges_from_pages`).
3. AND intersects its parts' ranges, OR unions them (:func:`combine_ranges`).
4. Anything else (several columns in one comparison, a struct or list as a whole, a column
   without pages, a function over no column) selects every row: unknown keeps.

Why this is sound (a row where the predicate is TRUE is always in a selected range), in
three-valued logic (a row where the predicate is NULL is not selected, as in a WHERE clause):

=====================  ==============================================  =====================
part                   a row where it is TRUE ...                      so its ranges ...
=====================  ==============================================  =====================
leaf ``p``             lies in a page ``prune`` keeps ("may be TRUE")  contain the row
``p AND q``            is TRUE for ``p`` and for ``q``                  intersection holds it
``p OR q``             is TRUE for ``p`` or for ``q``                   union holds it
``NOT p``              is FALSE (not NULL) for ``p``                    cannot come from p's
=====================  ==============================================  =====================

The last line is why ``NOT`` must be pushed down first: the ranges of ``p`` over-approximate
where ``p`` may be TRUE; their complement is not where ``p`` may be FALSE (a kept page may hold
rows where ``p`` is FALSE too), so ``NOT`` of "may be TRUE" would drop matching rows. After the
push-down, ``NOT (a > 5 AND b < 3)`` is ``a <= 5 OR b >= 3``: each side a leaf, NULL where its
column is NULL, exactly as ``NOT`` means in SQL.

Ranges are half-open ``[start, end)`` in int64, held in one coordinate over all row groups at
once: row group ``g`` starts at ``offset[g]``, with a gap of one row between groups, so that the
range algebra (pure numpy, no loop per row group or per page) never merges across a boundary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._lazy import LazyModule
from prune_engine.api import OnInvalid, Predicate, Source, Stats, prune
from prune_engine.api import explain as _explain
from prune_engine.compiler.rules import rewrite
from prune_engine.expr import nodes as n
from prune_engine.expr.convert import to_expr
from prune_engine.stats import layout
from prune_engine.stats.table import as_stats_table

if TYPE_CHECKING:
    from prune_engine.stats.page_index import PageStats

#: the page index reader, imported where files are read (not by ``pe.explain`` without pages)
page_index = LazyModule("prune_engine.stats.page_index")

__all__ = ["Ranges", "normalize_ranges", "intersect_ranges", "union_ranges", "subtract_ranges",
           "combine_ranges", "ranges_from_pages", "row_ranges", "considered_groups", "prune_rows",
           "explain_ranges", "explain"]

#: sorted, disjoint, non-adjacent half-open ranges: ``(starts, ends)``, int64 arrays
Ranges = tuple[np.ndarray, np.ndarray]

#: the columns of :func:`prune_rows`' answer, and their types
RESULT_SCHEMA = pa.schema([("file", pa.string()), ("row_group", pa.int32()),
                           ("row_start", pa.int64()), ("row_count", pa.int64())])


# --- range algebra: pure functions on sorted int64 start/end arrays -------------------------------
def _coverage(parts: list[Ranges], weights: list[int], need: int) -> Ranges:
    """The rows where the weighted count of ``parts`` covering them is at least ``need``, as
    normalized ranges. A sweep over every start (+weight) and end (-weight) at once: the sum
    of the weights met so far is the coverage up to the next position."""
    starts = [np.asarray(s, np.int64) for s, _ in parts]
    ends = [np.asarray(e, np.int64) for _, e in parts]
    pos, delta = [], []
    for s, e, w in zip(starts, ends, weights):
        real = e > s
        pos += [s[real], e[real]]
        delta += [np.full(int(real.sum()), w, np.int64), np.full(int(real.sum()), -w, np.int64)]
    pos = np.concatenate(pos) if pos else np.empty(0, np.int64)
    if len(pos) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    delta = np.concatenate(delta)
    order = np.argsort(pos, kind="stable")
    pos, delta = pos[order], delta[order]
    at, first = np.unique(pos, return_index=True)
    cover = np.cumsum(np.add.reduceat(delta, first))  # coverage on [at[i], at[i + 1])
    inside = cover >= need  # (False at the last position: every range has ended there)
    before = np.concatenate(([False], inside[:-1]))
    after = np.concatenate((inside[1:], [False]))
    return at[inside & ~before], at[np.flatnonzero(inside & ~after) + 1]


def normalize_ranges(starts, ends) -> Ranges:
    """Any ranges (unsorted, overlapping, adjacent, empty) as sorted, disjoint, merged ones.

    >>> [a.tolist() for a in normalize_ranges([5, 0, 3, 9], [8, 3, 4, 9])]
    [[0, 5], [4, 8]]
    """
    return _coverage([(starts, ends)], [1], 1)


def intersect_ranges(a: Ranges, b: Ranges) -> Ranges:
    """The rows in both ``a`` and ``b`` (each sorted and disjoint).

    >>> [x.tolist() for x in intersect_ranges(([0, 10], [5, 20]), ([4], [12]))]
    [[4, 10], [5, 12]]
    """
    return _coverage([a, b], [1, 1], 2)


def union_ranges(a: Ranges, b: Ranges) -> Ranges:
    """The rows in ``a`` or ``b``, adjacent ranges merged.

    >>> [x.tolist() for x in union_ranges(([0], [5]), ([5, 9], [7, 10]))]
    [[0, 9], [7, 10]]
    """
    return _coverage([a, b], [1, 1], 1)


def subtract_ranges(a: Ranges, b: Ranges) -> Ranges:
    """The rows in ``a`` and not in ``b`` (each sorted and disjoint).

    >>> [x.tolist() for x in subtract_ranges(([0], [10]), ([2, 6], [4, 7]))]
    [[0, 4, 7], [2, 6, 10]]
    """
    return _coverage([a, b], [1, -1], 1)


def combine_ranges(parts: list[Ranges], kind: str) -> Ranges:
    """``"and"``: the rows in every part; ``"or"``: the rows in any (each part sorted and
    disjoint), in one sweep however many parts there are."""
    if kind not in ("and", "or"):
        raise ValueError(f"kind must be 'and' or 'or', not {kind!r}")
    return _coverage(parts, [1] * len(parts), len(parts) if kind == "and" else 1)


def ranges_from_pages(row_start, row_count, keep) -> Ranges:
    """The rows of the pages ``keep`` selects, merged (``row_start`` and ``row_count`` in the
    one coordinate of every row group).

    >>> [x.tolist() for x in ranges_from_pages([0, 4, 8], [4, 4, 2], [True, True, False])]
    [[0], [8]]
    """
    start = np.asarray(row_start, np.int64)
    end = start + np.asarray(row_count, np.int64)
    keep = np.asarray(keep, bool)
    return normalize_ranges(start[keep], end[keep])


# --- the predicate tree -------------------------------------------------------------------------
class _Groups:
    """The row groups considered, in (path, row_group) order, and their coordinate: group ``g``
    holds rows ``[offset[g], offset[g] + num_rows[g])``, one row of gap to the next."""

    def __init__(self, groups: pa.Table):
        groups = groups.select([layout.PATH, layout.ROW_GROUP, "num_rows"])
        self.table = groups.sort_by([(layout.PATH, "ascending"), (layout.ROW_GROUP, "ascending")])
        rows = self.table.column("num_rows").fill_null(0).to_numpy().astype(np.int64)
        self.num_rows = np.maximum(rows, 0)
        self.offset = np.concatenate(([0], np.cumsum(self.num_rows + 1)[:-1])).astype(np.int64)

    def index_of(self, table: pa.Table) -> np.ndarray:
        """Per row of ``table`` (columns ``path``, ``row_group``): the index of its group, -1
        where none (a ``row_group`` that is null matches every group of its path: -2, see
        :meth:`select`)."""
        keys = self.table.select([layout.PATH, layout.ROW_GROUP]).append_column(
            "__g", pa.array(np.arange(self.table.num_rows, dtype=np.int64)))
        rows = pa.table({layout.PATH: table.column(layout.PATH).cast(pa.string()),
                         layout.ROW_GROUP: table.column(layout.ROW_GROUP).cast(pa.int32()),
                         "__r": pa.array(np.arange(table.num_rows, dtype=np.int64))})
        joined = rows.join(keys, [layout.PATH, layout.ROW_GROUP], join_type="left outer")
        out = np.full(table.num_rows, -1, np.int64)
        g = joined.column("__g")
        out[joined.column("__r").to_numpy()] = g.fill_null(-1).to_numpy()
        return out

    def whole(self, which: np.ndarray | None = None) -> Ranges:
        """Every row of the groups ``which`` (a boolean mask; None: all)."""
        start, rows = self.offset, self.num_rows
        if which is not None:
            start, rows = start[which], rows[which]
        return normalize_ranges(start, start + rows)


def _leaf_name(column: n.Column) -> str:
    return ".".join(column.path)


def _column_sets(e: n.Expr) -> dict[int, frozenset]:
    """id of every AND / OR / predicate node of ``e`` -> the leaf names it references."""
    memo: dict[int, frozenset] = {}

    def combine(node, parts):
        if isinstance(node, (n.And, n.Or)):
            return frozenset().union(*parts)
        return frozenset(_leaf_name(c) for c in n.columns_of(node))

    n.fold(e, lambda node: node.args if isinstance(node, (n.And, n.Or)) else (), combine, memo)
    return memo


def _leaf_ranges(pages: pa.Table, predicate: n.Expr, groups: _Groups, everything: Ranges) -> Ranges:
    """The rows of the pages of one column where ``predicate`` (over that column only) may be
    TRUE, plus the rows of considered groups its pages do not cover (unknown keeps)."""
    start, count = pages.column("row_start"), pages.column("row_count")
    if start.null_count or count.null_count:
        return everything
    g = groups.index_of(pages)
    known = g >= 0
    base = groups.offset[np.maximum(g, 0)]
    start = start.to_numpy().astype(np.int64) + base
    end = start + np.maximum(count.to_numpy().astype(np.int64), 0)
    keep = prune(pages, predicate).to_numpy(zero_copy_only=False) & known
    covered = normalize_ranges(start[known], end[known])
    kept = union_ranges(normalize_ranges(start[keep], end[keep]), subtract_ranges(everything, covered))
    return intersect_ranges(kept, everything)  # (spans past their row group are clipped)


def row_ranges(pages: PageStats, where: Predicate, groups: np.ndarray | None = None) -> pa.Table:
    """The row ranges of each row group of ``pages`` where ``where`` may be TRUE: the answer of
    :func:`prune_rows` from page statistics already read. ``groups`` (a boolean mask over
    ``pages.groups``, in its row order) limits the row groups considered (None: all).

    >>> import pyarrow as pa
    >>> from types import SimpleNamespace
    >>> pages = SimpleNamespace(
    ...     groups=pa.table({"path": ["f"], "row_group": pa.array([0], pa.int32()),
    ...                      "num_rows": [10]}),
    ...     columns={"x": pa.table({
    ...         "container": ["f#0@0", "f#0@5"], "path": ["f", "f"],
    ...         "row_group": pa.array([0, 0], pa.int32()), "row_start": [0, 5],
    ...         "row_count": [5, 5], "num_records": [5, 5],
    ...         "min_values": [{"x": 0}, {"x": 5}], "max_values": [{"x": 4}, {"x": 9}],
    ...         "null_count": [{"x": 0}, {"x": 0}]})})
    >>> row_ranges(pages, "x = 7").to_pylist()
    [{'file': 'f', 'row_group': 0, 'row_start': 5, 'row_count': 5}]
    """
    order = _Groups(pages.groups)
    if groups is not None:  # (the mask is in pages.groups' order; _Groups sorts)
        chosen = pages.groups.select([layout.PATH, layout.ROW_GROUP]).filter(
            pa.array(np.asarray(groups, bool)))
        considered = np.zeros(order.table.num_rows, bool)
        g = order.index_of(chosen)
        considered[g[g >= 0]] = True
    else:
        considered = np.ones(order.table.num_rows, bool)
    everything = order.whole(considered)
    tree = rewrite(to_expr(where))  # NOT pushed down to the predicates (step 1)
    columns = _column_sets(tree)
    result = _evaluate(tree, columns, pages.columns, order, everything)
    return _to_table(result, order)


def _evaluate(tree: n.Expr, columns: dict[int, frozenset], pages: dict, groups: _Groups,
              everything: Ranges) -> Ranges:
    """Steps 2 to 4 of the module doc, on an explicit stack (trees may be thousands deep)."""
    done: dict[int, Ranges] = {}
    stack = [tree]
    while stack:
        node = stack[-1]
        if id(node) in done:
            stack.pop()
            continue
        names = columns[id(node)]
        if len(names) == 1 and next(iter(names)) in pages:
            stack.pop()
            done[id(node)] = _leaf_ranges(pages[next(iter(names))], node, groups, everything)
        elif isinstance(node, (n.And, n.Or)):
            pending = [a for a in node.args if id(a) not in done]
            if pending:
                stack.extend(reversed(pending))
                continue
            stack.pop()
            parts = [done[id(a)] for a in node.args]
            done[id(node)] = combine_ranges(parts, "and" if isinstance(node, n.And) else "or")
        else:
            stack.pop()
            truth = node.value if isinstance(node, n.Literal) and not names else True
            done[id(node)] = everything if truth is not False and truth is not None \
                else (np.empty(0, np.int64), np.empty(0, np.int64))
    return done[id(tree)]


def _to_table(ranges: Ranges, groups: _Groups) -> pa.Table:
    """Ranges in the one coordinate back to (file, row_group, row_start, row_count) rows."""
    starts, ends = ranges
    g = np.searchsorted(groups.offset, starts, side="right") - 1
    return pa.table({
        "file": groups.table.column(layout.PATH).take(pa.array(g)).cast(pa.string()),
        "row_group": groups.table.column(layout.ROW_GROUP).take(pa.array(g)).cast(pa.int32()),
        "row_start": pa.array(starts - groups.offset[g], pa.int64()),
        "row_count": pa.array(ends - starts, pa.int64()),
    }, schema=RESULT_SCHEMA)


# --- the public entry point ---------------------------------------------------------------------
def prune_rows(source: Source, where: Predicate, stats: Stats | None = None, *,
               filesystem=None) -> pa.Table:
    """The row ranges of the Parquet files of ``source`` that may hold a row matching ``where``,
    from the page index (page statistics): one row per range, ``file`` (string), ``row_group``
    (int32), ``row_start`` (int64, the first row within the row group) and ``row_count``
    (int64), sorted, disjoint, adjacent ranges merged. A row outside every range cannot match.

    ``source``: as for :func:`~prune_engine.collect_stats` (a file, a folder, a list of paths),
    on ``filesystem`` if given. ``where``: a :data:`~prune_engine.Predicate`. ``stats``: the
    row-group statistics of ``source`` (read from the footers when None): a row group they
    prune selects nothing (rows match by ``path`` and ``row_group``; a ``row_group`` that is
    null matches every row group of its file; a row group without statistics is considered).
    AND intersects ranges and OR unions them, also across columns; a file without a page index
    gives whole row groups. See :mod:`prune_engine.row_ranges` for the contract.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "t.parquet")
    >>> pq.write_table(pa.table({"a": range(1000), "b": range(1000)}), path,
    ...                row_group_size=500, write_page_index=True, data_page_size=512,
    ...                write_batch_size=100)
    >>> ranges = pe.prune_rows(path, "a = 5 OR b = 707")
    >>> ranges.column("row_group").to_pylist(), sum(ranges.column("row_count").to_pylist()) < 500
    ([0, 1], True)
    """

    where_tree = to_expr(where)
    if stats is None:
        from prune_engine.stats.collect import collect_stats

        stats = collect_stats(source, granularity="row_group", filesystem=filesystem)
    stats = as_stats_table(stats)
    pages = page_index.page_stats(source, columns=_paged_leaves(stats, where_tree), filesystem=filesystem)
    considered = considered_groups(pages.groups, stats, prune(stats, where_tree))
    return row_ranges(pages, where_tree, considered)


def considered_groups(groups: pa.Table, stats, keep: pa.BooleanArray) -> np.ndarray:
    """Per row group of ``groups``: False where a row of ``stats`` naming it was pruned by
    ``keep`` (by path and row group; a null row group names every group of its path); True
    where no row of ``stats`` names it (unknown keeps)."""
    table = stats.table if hasattr(stats, "table") else stats
    if layout.PATH not in table.column_names:
        return np.ones(groups.num_rows, bool)
    rows = table.select([layout.PATH]).append_column(
        layout.ROW_GROUP, table.column(layout.ROW_GROUP).cast(pa.int32())
        if layout.ROW_GROUP in table.column_names else pa.nulls(table.num_rows, pa.int32()))
    rows = rows.append_column("__keep", keep)
    path_rows = rows.filter(pc.is_null(rows.column(layout.ROW_GROUP)))
    group_rows = rows.filter(pc.is_valid(rows.column(layout.ROW_GROUP)))
    keys = groups.select([layout.PATH, layout.ROW_GROUP]).append_column(
        "__g", pa.array(np.arange(groups.num_rows, dtype=np.int64)))
    out = np.ones(groups.num_rows, bool)
    for part, on in ((group_rows, [layout.PATH, layout.ROW_GROUP]), (path_rows, [layout.PATH])):
        pruned = part.filter(pc.invert(part.column("__keep"))).select(on)
        if pruned.num_rows:
            hit = keys.join(pruned.group_by(on).aggregate([]), on, join_type="inner")
            out[hit.column("__g").to_numpy()] = False
    return out


# --- explain: the row ranges of each container --------------------------------------------------
#: the type of :func:`explain_ranges`' ``row_ranges`` column: one list of ranges per container
RANGES_TYPE = pa.list_(pa.struct([("row_start", pa.int64()), ("row_count", pa.int64())]))


def _paged_leaves(stats, tree: n.Expr) -> list[str]:
    """The leaf columns of ``tree`` that the statistics describe: those whose pages are read."""
    referenced = {_leaf_name(c) for c in n.columns_of(tree)}
    schema = stats.schema
    if layout.MIN_VALUES not in schema.names:
        return []
    return [".".join(p) for p, _, _ in layout.leaves(schema.field(layout.MIN_VALUES).type)
            if ".".join(p) in referenced]


def explain_ranges(stats: Stats, where: Predicate, keep, *, filesystem=None
                   ) -> tuple[pa.Int64Array, pa.ListArray]:
    """Per container of ``stats`` (in its row order), the rows that may match ``where`` from
    the page index: ``rows_selected`` (int64) and ``row_ranges`` (list of ``row_start``,
    ``row_count`` within the row group), the columns ``pe.explain(..., pages=True)`` adds.

    Only a container that is a row group of a Parquet file (``path`` and ``row_group`` both
    set) has ranges; elsewhere both are null (unknown). ``keep`` is the container mask of
    ``pe.prune`` for the same predicate: a pruned row group selects 0 rows (an empty list);
    the page indexes are read only for the files with a kept row group, and the ranges of
    those row groups are those of :func:`prune_rows` for the same files and statistics. A
    row group the file does not have is null.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"a": range(1000)}), path, row_group_size=500,
    ...                write_page_index=True, data_page_size=512, write_batch_size=100)
    >>> stats = pe.collect_stats(path)
    >>> selected, ranges = explain_ranges(stats, "a = 5", pe.prune(stats, "a = 5"))
    >>> selected.to_pylist(), ranges.to_pylist()
    ([100, 0], [[{'row_start': 0, 'row_count': 100}], []])
    """
    table = as_stats_table(stats).table
    count = table.num_rows
    keep = np.asarray(pa.array(keep, pa.bool_()).fill_null(True).to_numpy(zero_copy_only=False),
                      bool)
    if layout.PATH not in table.column_names or layout.ROW_GROUP not in table.column_names:
        return pa.nulls(count, pa.int64()), pa.nulls(count, RANGES_TYPE)
    containers = pa.table({
        layout.PATH: table.column(layout.PATH).cast(pa.string()),
        layout.ROW_GROUP: table.column(layout.ROW_GROUP).cast(pa.int32()),
        "__i": pa.array(np.arange(count, dtype=np.int64))})
    is_group = np.asarray(pc.and_(pc.is_valid(containers.column(layout.PATH)),
                                  pc.is_valid(containers.column(layout.ROW_GROUP))))
    known = is_group & ~keep  # (a pruned row group: nothing selected)
    hits = pa.table({"__i": pa.array([], pa.int64()), "row_start": pa.array([], pa.int64()),
                     "row_count": pa.array([], pa.int64())})
    files = sorted(set(containers.column(layout.PATH).filter(pa.array(is_group & keep))
                       .to_pylist()))
    if files:
        tree = to_expr(where)
        pages = page_index.page_stats(files, columns=_paged_leaves(table, tree), filesystem=filesystem)
        considered = considered_groups(pages.groups, table, pa.array(keep))
        ranges = row_ranges(pages, tree, considered)
        read = containers.filter(pa.array(is_group & keep))
        present = read.join(pages.groups.select([layout.PATH, layout.ROW_GROUP]),
                            [layout.PATH, layout.ROW_GROUP], join_type="inner")
        known[present.column("__i").to_numpy()] = True
        hits = read.join(ranges.rename_columns([layout.PATH, layout.ROW_GROUP, "row_start",
                                                "row_count"]),
                         [layout.PATH, layout.ROW_GROUP], join_type="inner")
        hits = hits.sort_by([("__i", "ascending"), ("row_start", "ascending")])
    owner = hits.column("__i").to_numpy().astype(np.int64)
    per = np.bincount(owner, minlength=count).astype(np.int64)
    rows = np.zeros(count, np.int64)
    np.add.at(rows, owner, hits.column("row_count").to_numpy().astype(np.int64))
    offsets = pa.array(np.concatenate(([0], np.cumsum(per))).astype(np.int32))
    values = pa.StructArray.from_arrays(
        [hits.column("row_start").combine_chunks(), hits.column("row_count").combine_chunks()],
        names=["row_start", "row_count"])
    valid = pa.array(known)
    lists = pa.ListArray.from_arrays(offsets, values, mask=pc.invert(valid))
    return pa.array(rows, pa.int64(), mask=~known), lists.cast(RANGES_TYPE)


def explain(stats: Stats, expr: Predicate, *, on_invalid: OnInvalid = "raise",
            pages: bool = False, filesystem=None) -> pa.Table:
    """Per container: why it is kept or pruned (the table of :func:`prune_engine.api.explain`:
    ``container``, ``keep``, ``reason``, ``kept_because``, ``answer``), and with
    ``pages=True`` the rows of it that may match, from the page index of the Parquet files
    whose row groups are kept (read on ``filesystem`` if given): ``rows_selected`` (int64; 0
    where pruned) and ``row_ranges`` (list of ``row_start``, ``row_count`` within the row
    group: the ranges :func:`prune_rows` gives it), both null for a container that is not a
    row group (a file). See :func:`explain_ranges`. ``pe.explain`` is this function: it lives
    here, above both, because the row ranges are built on the layer of ``prune``.

    ``stats``, ``expr`` and ``on_invalid`` are those of :func:`prune_engine.prune`.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"a": range(1000)}), path, row_group_size=500,
    ...                write_page_index=True, data_page_size=512, write_batch_size=100)
    >>> table = pe.explain(pe.collect_stats(path), "a BETWEEN 120 AND 130", pages=True)
    >>> table.select(["keep", "rows_selected", "row_ranges"]).to_pylist()[0]
    {'keep': True, 'rows_selected': 100, 'row_ranges': [{'row_start': 100, 'row_count': 100}]}
    >>> table.column("rows_selected").to_pylist()
    [100, 0]
    """
    table = _explain(stats, expr, on_invalid=on_invalid)
    if not pages:
        return table
    selected, ranges = explain_ranges(stats, expr, table.column("keep"), filesystem=filesystem)
    return table.append_column("rows_selected", selected).append_column("row_ranges", ranges)
