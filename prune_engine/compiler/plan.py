"""``PruningProgram``: a predicate compiled once, evaluated over any number of stats tables.

Compiling runs the front end (SQL text, builder or ``pyarrow.compute.Expression`` to one
immutable tree), the rewrite rules (:mod:`prune_engine.compiler.rules`: literal casts, sides,
NOT push-down, constant folding) and lowering (:mod:`prune_engine.compiler.lower`: the tree of
container tests). Evaluating reads each statistics column the tests touch once, as numpy views,
and combines the tests' masks in one vectorized pass: no Python loop over containers.

The intuition, per container (DataFusion's PruningPredicate, with three-valued logic):

============  =====================================  ==================================
predicate     the statistics say                     verdict
============  =====================================  ==================================
``x = 5``     min 0, max 4                           prune: no value can equal 5
``x = 5``     min 0, max 9                           keep: some value may be 5
``x = 5``     min unknown                            keep: unknown keeps
``x = 5``     null_count = num_records (all NULL)    prune: ``NULL = 5`` is never TRUE
``x IS NULL`` null_count 0                           prune
``NOT b``     min TRUE                               prune: ``b = FALSE`` has no row
============  =====================================  ==================================

``explain`` says both sides: for a pruned container, the smallest part of the predicate its
statistics prove empty (``reason``); for a kept one, the tests that could not prune it, each
with why (``kept_because``, e.g. ``amount > 250: may hold NaN: nan_count unknown``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading

import numpy as np
import pyarrow as pa

from prune_engine.compiler.bind import StatsSchema
from prune_engine.compiler.lower import Lowering
from prune_engine.compiler.rules import rewrite
from prune_engine.errors import PruneEngineError
from prune_engine.evaluate.checks import AllOf, AnyOf, Check, mask_to_arrow
from prune_engine.evaluate.context import EvalContext
from prune_engine.expr import nodes as n
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable, as_stats_table
from prune_engine.stats.validate import check_layout


class PruningProgram:
    """A compiled predicate. ``evaluate(stats)`` gives the keep-mask; ``explain(stats)`` says why.

    Attributes: ``expr`` (the predicate as parsed), ``rewritten`` (after the rewrite rules:
    the form the tests were built from), ``check`` (the tree of container tests).
    """

    def __init__(self, expr: n.Expr, rewritten: n.Expr, check: Check, schema: pa.Schema):
        self.expr = expr
        self.rewritten = rewritten
        self.check = check
        self.schema = schema

    def __repr__(self) -> str:
        return f"PruningProgram({self.rewritten})"

    def _check_for(self, stats: StatsTable) -> Check:
        if self.schema is not None and stats.schema.equals(self.schema, check_metadata=False):
            return self.check
        check_layout(stats.schema)  # same predicate, another layout: bind again
        return Lowering(StatsSchema(stats.schema)).lower(self.rewritten)

    def evaluate(self, stats: StatsTable | pa.Table, *, on_invalid: str = "raise") -> pa.BooleanArray:
        """The keep-mask: True where a row may match, never null."""
        return mask_to_arrow(self._evaluate(as_stats_table(stats), on_invalid)[0])

    def _evaluate(self, stats: StatsTable, on_invalid: str):
        check = self._check_for(stats)
        ctx = EvalContext(stats, on_invalid)
        mask = check.evaluate(ctx)
        not_empty = ctx.not_empty()
        if not_empty is not None:
            mask = mask & not_empty  # an empty container matches nothing
        if ctx.invalid is not None:
            mask = mask | ctx.invalid
        return mask, ctx, check

    def explain(self, stats: StatsTable | pa.Table, *, on_invalid: str = "raise") -> pa.Table:
        """Per container: ``container``, ``keep``, ``reason``: the part of the predicate (SQL
        text) that the statistics proved empty (null where kept), ``kept_because``: the
        tests that keep it, each with why (null where pruned; see :func:`_kept_reasons`), and
        ``answer``: ``none``, ``some`` or ``all`` of its rows match (:func:`pe.classify
        <prune_engine.classify>`)."""
        from prune_engine.compiler import classify

        stats = as_stats_table(stats)
        answers = classify.to_arrow(classify.codes(self, stats, on_invalid))
        mask, ctx, check = self._evaluate(stats, on_invalid)
        reasons = np.full(ctx.n, None, dtype=object)
        pruned = ~mask
        not_empty = ctx.not_empty()
        if not_empty is not None:
            reasons[pruned & ~not_empty] = "num_records = 0"
            pruned &= not_empty
        _assign_reasons(check, ctx, np.flatnonzero(pruned), reasons)
        table = stats.table
        container = (table.column(layout.CONTAINER) if layout.CONTAINER in table.column_names
                     else pa.array([str(i) for i in range(ctx.n)]))
        return pa.table({"container": container, "keep": mask_to_arrow(mask),
                         "reason": pa.array(reasons, type=pa.string()),
                         "kept_because": pa.array(_kept_reasons(check, ctx, mask),
                                                  type=pa.string()),
                         "answer": answers})


def _assign_reasons(check: Check, ctx: EvalContext, idx: np.ndarray, reasons: np.ndarray) -> None:
    """For containers ``idx`` (all pruned by ``check``): name the smallest part that proves it.
    For an AND, the first conjunct that is FALSE there; otherwise the node itself."""
    if len(idx) == 0:
        return
    if isinstance(check, AllOf):
        left = idx
        for part in check.parts:
            m = part.evaluate(ctx)
            here = left[~m[left]]
            _assign_reasons(part, ctx, here, reasons)
            left = left[m[left]]
            if len(left) == 0:
                return
        reasons[left] = check.sql  # no single conjunct: the combination proves it
        return
    reasons[idx] = check.sql or "FALSE"


#: the tests ``kept_because`` names per container; past them it ends in "; ..."
KEPT_REASONS = 3
#: ``kept_because`` of a container kept only because its statistics are invalid
INVALID_KEPT = "invalid statistics (kept under on_invalid='keep')"


def _kept_reasons(check: Check, ctx: EvalContext, mask: np.ndarray) -> np.ndarray:
    """For each kept container (``mask``): the leaf tests that keep it, in predicate order,
    each as ``"<sql>: <why>"`` (:meth:`Check.why_kept`), joined by ``"; "``; at most
    :data:`KEPT_REASONS`. None where pruned.

    Every part of a kept AND keeps the container, and so does every part of an OR it is
    listed under: pruning it takes all of them. The walk uses an explicit stack (predicates
    may nest thousands deep) and stops where every container it follows is full, so a long
    predicate costs a few of its tests."""
    out = np.full(ctx.n, None, dtype=object)
    count = np.zeros(ctx.n, np.int64)
    more = np.zeros(ctx.n, dtype=bool)
    invalid = np.zeros(ctx.n, dtype=bool) if ctx.invalid is None else ctx.invalid
    kept = np.flatnonzero(mask & ~invalid)  # (the check keeps each of them)
    frames = [[check, kept, 0]]
    while frames:
        frame = frames[-1]
        node, at, i = frame
        if not isinstance(node, (AllOf, AnyOf)):
            frames.pop()
            texts = node.why_kept(ctx)[at]
            first = count[at] == 0
            out[at[first]] = texts[first]
            later = at[~first]
            out[later] = out[later] + "; " + texts[~first]
            count[at] += 1
            continue
        if i == len(node.parts):
            frames.pop()
            continue
        frame[2] = i + 1
        part = node.parts[i]
        sub = at if isinstance(node, AllOf) else at[part.evaluate(ctx)[at]]
        full = count[sub] >= KEPT_REASONS
        more[sub[full]] = True
        if (~full).any():
            frames.append([part, sub[~full], 0])
    out[more] = out[more] + "; ..."
    out[mask & invalid] = INVALID_KEPT
    return out


def compile_predicate(expr, schema: pa.Schema | None) -> PruningProgram:
    """Parse, rewrite and lower ``expr`` against the statistics ``schema``; SQL text and
    expression trees are compiled once per schema (a small LRU cache). The cyclic garbage
    collector pauses meanwhile (:func:`gc_paused`)."""
    from prune_engine.expr.builder import Builder

    with gc_paused():
        key = expr.node if isinstance(expr, Builder) else expr
        if isinstance(key, (str, n.Expr)):
            try:
                return _compile_cached(key, schema)
            except TypeError:  # an unhashable literal somewhere in the tree
                pass
        return _compile(expr, schema)


_gc_lock = threading.Lock()
_gc_pauses = [0, False]  # compilations under way, and whether the collector ran before the first


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector for the block (compiling one predicate).

    Why: compiling a predicate of thousands of terms allocates tens of thousands of small
    objects (nodes, tests, texts) that hold no reference cycles; each batch of 700 triggers a
    collection, and every few batches one walks every object alive in the process (tens of
    milliseconds in a process that has loaded pyarrow and sqlglot), which cost more than the
    compilation itself. Reference counting still frees everything as usual. Nested and
    concurrent pauses (threads) are counted: the collector runs again when the last ends, and
    only if it ran when the first began.

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            gc.disable()
        _gc_pauses[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses[0] -= 1
            if _gc_pauses[0] == 0 and _gc_pauses[1]:
                gc.enable()


@functools.lru_cache(maxsize=256)
def _compile_cached(expr, schema):
    return _compile(expr, schema)


def _compile(expr, schema: pa.Schema | None) -> PruningProgram:
    from prune_engine.expr.convert import to_expr

    node = to_expr(expr)
    if schema is not None:
        check_layout(schema)
    try:
        rewritten = rewrite(node)
        check = Lowering(StatsSchema(schema)).lower(rewritten)
    except RecursionError:
        # the passes over AND/OR/NOT are iterative; what may still recurse is a value nested
        # thousands deep (x + 1 + 1 + ..., CAST(CAST(...)), (p IS TRUE) IS TRUE ...)
        raise PruneEngineError("the predicate nests too deeply to compile (a value or IS TRUE "
                               "nested thousands of levels deep); write it flatter") from None
    return PruningProgram(node, rewritten, check, schema)
