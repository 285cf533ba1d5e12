"""``pe.classify`` checked both ways against DuckDB on the rows.

:class:`ClassifyTally` is :class:`~tests.oracle.check.Tally` for ``classify``: per container and
predicate ``p``, ``"none"`` must hold no row where ``p`` is TRUE (the pruning oracle) and
``"all"`` no row where ``p IS NOT TRUE`` (FALSE or NULL); ``prune`` must equal
``classify != "none"``.
"""

from __future__ import annotations

import collections

import pyarrow as pa

import prune_engine as pe
from .check import Tally, printable


class ClassifyTally(Tally):
    """:class:`Tally` for ``classify``: ``violations`` lists wrong ``"none"`` and ``"all"``
    answers; ``entire`` / ``found`` count the containers whose every row matches and how many
    of them ``classify`` called ``"all"``."""

    def __init__(self, oracle):
        super().__init__(oracle)
        self.entire = collections.Counter()
        self.found = collections.Counter()

    def _rows_failing(self, case, preds) -> list:
        """Per predicate: the containers with a row where it is not TRUE, in every reading."""
        out = self.oracle.matching(case.table, [f"({p.sql('duck')}) IS NOT TRUE" for p in preds])
        for i, p in enumerate(preds):
            if p.sql("wrap") != p.sql("duck") and out[i] is not None:
                more = self.oracle.matching(case.table, [f"({p.sql('wrap')}) IS NOT TRUE"])[0]
                out[i] = None if more is None else out[i] | more
        return out

    def check(self, case, sources, preds, label=""):
        matches = self.oracle.matching(case.table, [p.sql("duck") for p in preds])
        for i, p in enumerate(preds):
            if p.sql("wrap") != p.sql("duck") and matches[i] is not None:
                more = self.oracle.matching(case.table, [p.sql("wrap")])[0]
                matches[i] = matches[i] | (more or set())
        failing = self._rows_failing(case, preds)
        sizes = collections.Counter(case.table.column("__cid").to_pylist())
        for pred, match, fails in zip(preds, matches, failing):
            if match is None or fails is None:
                self.duck_rejected += 1
                continue
            for source, stats in sources.items():
                self.cases += 1
                self._classify_one(case, stats, pred, match, fails, sizes, f"{label} {source}")

    def _classify_one(self, case, stats, pred, match, fails, sizes, label):
        sql = pred.sql("pe")
        try:
            answers = pe.classify(stats, sql)
            keep = pe.prune(stats, sql).to_pylist()
        except pe.PruneEngineError:
            return
        assert isinstance(answers, pa.DictionaryArray) and len(answers) == stats.num_rows
        answers = answers.to_pylist()
        assert keep == [a != "none" for a in answers], f"prune != classify != 'none': {sql}"
        source = label.split()[-1]
        for i, cid in enumerate(case.cids):
            wrong = (answers[i] == "none" and cid in match) or (answers[i] == "all" and cid in fails)
            if wrong:
                self.violations.append(
                    f"WRONG {answers[i].upper()}: container {cid!r} ({label.strip()})\n"
                    f"  predicate: {sql}\n  stats row: {printable(stats.slice(i, 1)).to_pylist()}")
            if cid not in fails and sizes[cid]:
                self.entire[source] += 1
                self.found[source] += answers[i] == "all"


def assert_sound(stats, rows: pa.Table, predicates: list[str], oracle=None) -> list[list[str]]:
    """For every predicate (one SQL text for both engines): ``prune`` keeps each container
    holding a row where it is TRUE, ``classify`` calls "all" no container holding a row where
    it is not TRUE, and ``prune`` is ``classify != "none"``; DuckDB decides on ``rows`` (the
    data, each row's container in the ``__cid`` column, the statistics' ``container``).
    Returns ``classify``'s answers per predicate, for tests that also ask what was proven."""
    from .duck import DuckOracle

    oracle = oracle or DuckOracle()
    matches, misses = [], []
    for i in range(0, len(predicates), 100):  # DuckDB slows down on very wide batches
        chunk = predicates[i:i + 100]
        matches += oracle.matching(rows, chunk)
        misses += oracle.matching(rows, [f"({p}) IS NOT TRUE" for p in chunk])
    ids = stats.column("container").to_pylist()
    out = []
    for p, match, miss in zip(predicates, matches, misses):
        assert match is not None and miss is not None, \
            f"DuckDB rejected {p!r}: {dict(oracle.errors)}"
        classes = pe.classify(stats, p).to_pylist()
        lost = [c for c, k in zip(ids, classes) if k == "none" and c in match]
        assert not lost, f"{p!r} pruned containers holding matching rows: {lost}"
        wrong = [c for c, k in zip(ids, classes) if k == "all" and c in miss]
        assert not wrong, f"{p!r} called 'all' containers holding rows that do not match: {wrong}"
        assert pe.prune(stats, p).to_pylist() == [k != "none" for k in classes]
        out.append(classes)
    return out
