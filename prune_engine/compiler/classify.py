"""Three answers per container: no row matches (``none``), every row does (``all``), or some
may (``some``).

``none`` is what pruning proves (:meth:`PruningProgram.evaluate` is False). ``all`` is the same
proof for the predicate's counterpart: a row fails ``p`` when ``p`` is FALSE *or NULL* there,
which is exactly where ``p IS NOT TRUE`` is TRUE. So a container whose statistics prove
``p IS NOT TRUE`` empty holds only rows where ``p`` is TRUE. The rewrite rules expand
``p IS NOT TRUE`` to ``NOT p OR <p may be NULL>`` (:func:`~prune_engine.compiler.rules.may_be_null`:
a column's NULL, or anything the rules cannot follow, which then proves nothing), and the
container tests are the pruning's own: the ALL direction rests on the same tested rules as the
NONE direction, and inherits their soundness. Both tests run in one evaluation context, so
every statistics column is read once; the cost is the counterpart's tests (a comparison per
comparison, mostly): about two to three times the pruning's own.

An empty container is ``none``; a container kept only because its statistics are invalid
(``on_invalid="keep"``) is ``some``.

>>> import pyarrow as pa, prune_engine as pe
>>> stats = pa.table({"container": ["nulls", "none null"], "num_records": [10, 10],
...                   "min_values": [{"x": 6}, {"x": 6}], "max_values": [{"x": 9}, {"x": 9}],
...                   "null_count": [{"x": 2}, {"x": 0}]})
>>> pe.classify(stats, "x > 5").to_pylist()  # NULL > 5 is NULL: no match
['some', 'all']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from prune_engine.compiler.bind import StatsSchema
from prune_engine.compiler.plan import compile_predicate
from prune_engine.errors import UnknownColumnError
from prune_engine.expr import nodes as n

NONE, SOME, ALL = "none", "some", "all"
#: the dictionary of :func:`classify`'s result; codes index it
CLASSES = (NONE, SOME, ALL)
NONE_CODE, SOME_CODE, ALL_CODE = 0, 1, 2


def counterpart(expr: n.Expr) -> n.Expr:
    """``expr IS NOT TRUE``: TRUE on exactly the rows that ``expr`` does not match."""
    return n.IsBool(expr, True, negated=True)


def codes(plan, stats, on_invalid: str = "raise") -> np.ndarray:
    """Per container, the code of its answer (:data:`NONE_CODE`, :data:`SOME_CODE`,
    :data:`ALL_CODE`) for the compiled ``plan`` (a ``PruningProgram``).

    The counterpart's tests only matter where the pruning kept something ("all" is a kind of
    kept), so they run over :func:`kept_windows` alone: on clustered or selective statistics
    that is a small part of the table.

    A predicate on list or map elements is never "all" (some element matching says nothing
    of the rows whose lists are empty, and no element failing says nothing of the others)."""
    keep, ctx, _ = plan._evaluate(stats, on_invalid)
    every = np.zeros(len(keep), bool)
    if not _on_elements(plan, stats):
        other = plan.__dict__.get("_counterpart")
        if other is None:  # compiled once per plan
            other = plan.__dict__["_counterpart"] = compile_predicate(counterpart(plan.expr),
                                                                      plan.schema)
        check = other._check_for(stats)
        for start, stop in kept_windows(keep):
            if stop - start == ctx.n:
                every = np.greater(keep, check.evaluate(ctx))
            else:
                np.greater(keep[start:stop], check.evaluate(ctx.window(start, stop)),
                           out=every[start:stop])
    if ctx.invalid is not None:
        every &= ~ctx.invalid
    every = every.view(np.int8)
    every += keep.view(np.int8)  # none 0, some 1, all 2
    return every


#: containers per block of :func:`kept_windows`
BLOCK = 4096
#: blocks without a kept container between two windows for them to stay apart
GAP = 4
#: most windows (each costs a pass of the test tree's Python)
MOST = 64
#: the share of the table above which the windows give way to the whole table
WHOLE = 0.75


def kept_windows(keep: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges covering every True of ``keep``: runs of :data:`BLOCK`
    containers that hold one, those fewer than :data:`GAP` blocks apart merged, at most
    :data:`MOST` (the closest merged first); the whole table when they would cover more than
    :data:`WHOLE` of it.

    >>> kept_windows(np.array([False] * 10_000 + [True] + [False] * 10_000))
    [(8192, 12288)]
    >>> kept_windows(np.zeros(5, bool))
    []
    """
    n = len(keep)
    whole = n // BLOCK * BLOCK
    hit = keep[:whole].reshape(-1, BLOCK).any(axis=1)
    if whole < n:
        hit = np.append(hit, keep[whole:].any())
    blocks = int(np.count_nonzero(hit))
    if blocks * BLOCK > WHOLE * n:
        return [(0, n)]
    edges = np.flatnonzero(np.diff(np.concatenate(([0], hit.view(np.int8), [0]))))
    starts, stops = edges[0::2], edges[1::2]
    gaps = starts[1:] - stops[:-1]
    split = gaps >= GAP
    if split.sum() >= MOST:  # keep the MOST - 1 widest gaps
        split = np.zeros(len(gaps), bool)
        split[np.argsort(gaps, kind="stable")[len(gaps) - MOST + 1:]] = True
    cut = np.flatnonzero(split)
    starts = np.concatenate((starts[:1], starts[cut + 1]))
    stops = np.concatenate((stops[cut], stops[-1:]))
    if int((stops - starts).sum()) * BLOCK > WHOLE * n:
        return [(0, n)]
    return [(int(a) * BLOCK, min(int(b) * BLOCK, n)) for a, b in zip(starts, stops)]


def _on_elements(plan, stats) -> bool:
    """Does the predicate read list or map elements (or name a list itself)? (Cached per
    plan for the last statistics schema.)"""
    schema, answer = plan.__dict__.get("_on_elements", (None, None))
    if schema is None or (schema is not stats.schema
                          and not stats.schema.equals(schema, check_metadata=False)):
        schema, answer = stats.schema, _reads_elements(plan.expr, StatsSchema(stats.schema))
        plan.__dict__["_on_elements"] = schema, answer
    return answer


def _reads_elements(expr: n.Expr, schema: StatsSchema) -> bool:
    for column in n.columns_of(expr):
        try:
            if schema.resolve(tuple(column.path)).element:
                return True
        except UnknownColumnError:  # a list or map named by its own path
            return True
    return False


def everything(stats) -> np.ndarray:
    """The codes without a predicate: every row of a non-empty container matches."""
    from prune_engine.evaluate.context import EvalContext

    not_empty = EvalContext(stats).not_empty()
    out = np.full(stats.num_rows, ALL_CODE, np.int8)
    if not_empty is not None:
        out[~not_empty] = NONE_CODE
    return out


def to_arrow(classes: np.ndarray) -> pa.DictionaryArray:
    """Codes as a dictionary-encoded string array (``none`` / ``some`` / ``all``)."""
    indices = pa.Array.from_buffers(pa.int8(), len(classes), [None, pa.py_buffer(classes)])
    return pa.DictionaryArray.from_arrays(indices, _DICTIONARY, safe=False)


_DICTIONARY = pa.array(CLASSES, pa.string())
