"""Which files can hold the rows of ``LIMIT k``: the ``limit=`` of ``pes.read``.

- ``order_by`` and ``limit=k``: the first ``k`` rows of ``WHERE where ORDER BY o LIMIT k``
  lie in the containers ``pe.prune_topk`` keeps for the first sort key (its rules are in
  :mod:`prune_engine.compiler.topk`: the containers every row of which matches set a
  threshold once their rows reach ``k``; a container whose values all come after it is
  skipped; ties are kept). With several sort keys, pruning by the first is sound: the first
  ``k`` rows by ``(a, b)`` are among the rows whose ``a`` comes at or before the ``k``-th
  ``a``, and those rows, ties included, are all kept. A first key the statistics cannot
  order as Spark does (:mod:`._order`) prunes nothing beyond the where.
- ``limit=k`` alone: any ``k`` matching rows answer it. When the files whose containers
  every row of which matches (``pe.classify`` says ``"all"``) hold ``k`` rows by their
  ``num_records``, the fewest of them (most such rows first) are kept and every other file
  of the statistics is excluded; else nothing is excluded beyond the where.
- ``order_by`` alone prunes nothing beyond the where.

Both rest on rows being read, so only containers whose files vouch for them
(:meth:`._checked.CheckedFiles.vouching`: there, unchanged, listed by Spark) give evidence;
every other container is kept (a changed file is read, a gone or unlisted one is not
Spark's to read). Files the statistics do not know are always read.
"""

from __future__ import annotations

import numbers

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.expr import nodes as n
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable
from prune_engine.spark._checked import CheckedFiles
from prune_engine.spark._order import OrderItem


def check_limit(limit) -> None:
    """Raise ValueError unless ``limit`` is None or a non-negative integer."""
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 0:
        raise ValueError(f"limit must be a non-negative integer, not {limit!r}")


def limit_keep(base, stats: StatsTable, expr: n.Expr, items: list[OrderItem], limit: int,
               files: CheckedFiles) -> tuple[np.ndarray | None, str]:
    """Per container, whether it may hold one of the rows of ``LIMIT limit`` (None: every
    one may), and how that was decided, for the summary (see the module doc)."""
    import prune_engine as pe

    if items:
        order = items[0].engine_order(base, stats)
        if order is None:
            return None, f"LIMIT {limit}: not pruned: the statistics do not order " \
                         f"{items[0].text} as Spark does"
        text = f"ORDER BY {order} LIMIT {limit}"
    else:
        order, text = None, f"LIMIT {limit}"
    vouching = files.vouching()
    subset = StatsTable(stats.table.filter(pa.array(vouching)), stats.metadata)
    if order is not None:
        inner = np.asarray(pe.prune_topk(subset, expr, order_by=order, limit=limit)
                           .to_numpy(zero_copy_only=False), dtype=bool)
    else:
        inner = _fewest_files(subset, expr, limit, files.index[vouching])
        if inner is None:
            return None, f"{text}: not pruned: the files every row of which matches hold " \
                         f"fewer than {limit} rows"
    keep = np.ones(stats.num_rows, bool)
    keep[vouching] = inner
    return keep, text


def _fewest_files(stats: StatsTable, expr: n.Expr, limit: int,
                  file_of: np.ndarray) -> np.ndarray | None:
    """Per container, whether it is in the fewest files whose ``"all"`` containers hold
    ``limit`` rows (``file_of``: each container's file); None when all of them hold fewer."""
    import prune_engine as pe

    every = pc.equal(pe.classify(stats, expr).dictionary_decode(), "all")
    rows = pc.fill_null(stats.table.column(layout.NUM_RECORDS), 0) \
        if layout.NUM_RECORDS in stats.table.column_names else pa.repeat(0, stats.num_rows)
    certain = np.where(np.asarray(every.to_numpy(zero_copy_only=False), dtype=bool),
                       np.asarray(rows.to_numpy(), dtype=np.int64), 0)
    per_file = np.bincount(file_of, weights=certain,
                           minlength=int(file_of.max()) + 1 if len(file_of) else 0)
    ranked = np.argsort(-per_file, kind="stable")
    total = np.cumsum(per_file[ranked])
    if len(total) == 0 or total[-1] < limit:
        return None
    chosen = np.zeros(len(per_file), bool)
    chosen[ranked[:int(np.searchsorted(total, limit)) + 1 if limit else 0]] = True
    return chosen[file_of]
