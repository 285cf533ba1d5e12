"""The soundness check: every container DuckDB finds a matching row in must be kept.

:class:`Tally` runs ``pe.prune`` for many (statistics, predicate) pairs of one case, compares
the mask with DuckDB's answer, and accumulates

- ``violations``: self-contained failure reports (unsound prunes, malformed masks, third-party
  exceptions leaking out of ``pe.prune``), each with a minimised predicate, the rows that match,
  the container's statistics row and a runnable reproduction;
- ``prunable`` / ``pruned``: how many containers without a matching row there were and how
  many of them the engine pruned, so that a do-nothing engine is noticed;
- ``rejected``: predicates DuckDB runs but prune_engine refuses with a ``PruneEngineError``
  (allowed, but counted and shown).
"""

from __future__ import annotations

import base64
import collections
from dataclasses import dataclass, field

import pyarrow as pa

import prune_engine as pe
from .data import CID, Case
from .duck import DuckOracle
from .predicates import Pred, simplifications

#: at most this many simplification rounds when minimising a failing predicate
MINIMISE_ROUNDS = 30
#: violations reported in full (minimised, with a reproduction); later ones in one line
MAX_DETAILED = 25


@dataclass
class Tally:
    oracle: DuckOracle
    cases: int = 0
    duck_rejected: int = 0
    #: DuckDB's own messages for the predicates it rejected, with how often
    duck_errors: collections.Counter = field(default_factory=collections.Counter)
    prunable: collections.Counter = field(default_factory=collections.Counter)
    pruned: collections.Counter = field(default_factory=collections.Counter)
    rejected: collections.Counter = field(default_factory=collections.Counter)
    rejected_examples: dict = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set)

    def check(self, case: Case, sources: dict[str, pa.Table], preds: list[Pred], label: str = "") -> None:
        """Check every predicate against every statistics table of ``case``."""
        errors_before = collections.Counter(self.oracle.errors)
        matches = self.oracle.matching(case.table, [p.sql("duck") for p in preds])
        wrapped = [i for i, p in enumerate(preds) if p.sql("wrap") != p.sql("duck")]
        if wrapped:  # another semantics engines have: its matching rows must be kept too
            more = self.oracle.matching(case.table, [preds[i].sql("wrap") for i in wrapped])
            for i, m in zip(wrapped, more):
                matches[i] = m if matches[i] is None else matches[i] | (m or set())
        self.duck_errors += self.oracle.errors - errors_before
        for pred, match in zip(preds, matches):
            if match is None:
                self.duck_rejected += 1
                continue
            for source, stats in sources.items():
                self.cases += 1
                self._check_one(case, stats, pred, match, f"{label} source={source}")

    def assert_answered(self, at_least: int) -> None:
        """Fail, in DuckDB's own words, when DuckDB answered at most ``at_least`` checks."""
        reasons = "; ".join(f"{n} x {msg}" for msg, n in self.duck_errors.most_common(3))
        assert self.cases > at_least, (
            f"DuckDB answered {self.cases} (statistics, predicate) pairs, expected more than "
            f"{at_least}; it rejected {self.duck_rejected} predicates: {reasons or 'no error'}")

    def _check_one(self, case: Case, stats: pa.Table, pred: Pred, match: set[str], label: str) -> None:
        sql = pred.sql("pe")
        mask = _prune(stats, sql)
        if isinstance(mask, pe.PruneEngineError):
            key = f"{type(mask).__name__}: {str(mask).splitlines()[0][:100]}"
            self.rejected[key] += 1
            self.rejected_examples.setdefault(key, sql[:300])
            return
        if isinstance(mask, BaseException):
            self._report(f"pe.prune raised a third-party exception {type(mask).__name__}: {mask}", label, sql)
            return
        problem = _mask_problem(mask, stats.num_rows)
        if problem:
            self._report(f"malformed keep-mask: {problem}", label, sql)
            return
        keep = mask.to_pylist()
        source = label.split("source=")[-1]
        for i, cid in enumerate(case.cids):
            if cid in match:
                if not keep[i]:
                    self._unsound(case, stats, pred, i, label)
            else:
                self.prunable[source] += 1
                self.pruned[source] += not keep[i]

    def _unsound(self, case: Case, stats: pa.Table, pred: Pred, index: int, label: str) -> None:
        if len(self.violations) < MAX_DETAILED:
            self.violations.append(self.describe(case, stats, pred, index, label))
        else:  # enough detail already; still count it
            self.violations.append(f"UNSOUND PRUNE: container {case.cids[index]!r} ({label.strip()}): {pred}")

    def _report(self, message: str, label: str, sql: str) -> None:
        key = (message[:80], label.split("source=")[-1])
        if key not in self.seen:
            self.seen.add(key)
            shown = sql if len(sql) < 800 else sql[:800] + " ..."
            self.violations.append(f"{message}\n  case: {label}\n  predicate: {shown}")

    # ----------------------------------------------------------------- failure reports

    def still_fails(self, case: Case, stats_row: pa.Table, cid: str, pred: Pred) -> bool:
        rows = _rows_of(case, cid)
        match = any(self.oracle.matching(rows, [pred.sql(d)])[0] for d in ("duck", "wrap"))
        if not match:
            return False
        mask = _prune(stats_row, pred.sql("pe"))
        return isinstance(mask, pa.BooleanArray) and mask.to_pylist() == [False]

    def minimise(self, case: Case, stats_row: pa.Table, cid: str, pred: Pred) -> Pred:
        """Greedily replace compound nodes by their children while the prune stays unsound."""
        for _ in range(MINIMISE_ROUNDS):
            for smaller in simplifications(pred):
                if self.still_fails(case, stats_row, cid, smaller):
                    pred = smaller
                    break
            else:
                break
        return pred

    def describe(self, case: Case, stats: pa.Table, pred: Pred, index: int, label: str) -> str:
        cid = case.cids[index]
        row = stats.slice(index, 1)
        small = self.minimise(case, row, cid, pred) if self.still_fails(case, row, cid, pred) else pred
        cols = sorted(small.columns()) or sorted(pred.columns())
        dialect = "duck" if self.oracle.matching(_rows_of(case, cid), [small.sql("duck")])[0] else "wrap"
        witnesses = self.oracle.witnesses(case.table, small.sql(dialect), cid)
        tops = sorted({c.split(".")[0] for c in cols} & set(witnesses.column_names))
        rows = printable(witnesses.select(tops)).to_pylist() if tops else []
        stats_rows = printable(row).to_pylist()
        ipc = _ipc_b64(row)
        return (
            f"UNSOUND PRUNE: container {cid!r} holds a row matching the predicate, "
            f"but pe.prune pruned it ({label.strip()}).\n"
            f"  minimal predicate (prune_engine SQL): {small.sql('pe')}\n"
            f"  minimal predicate (DuckDB SQL{', integers wrapped' if dialect == 'wrap' else ''}): "
            f"{small.sql(dialect)}\n"
            f"  original predicate: {pred.sql('pe')[:500]}\n"
            f"  matching rows (DuckDB, SET TimeZone='UTC'): {rows}\n"
            f"  data schema: {_schema_line(case.table.select(tops) if tops else case.table)}\n"
            f"  stats row: {stats_rows}\n"
            f"  stats schema: {_schema_line(row)}\n"
            f"  reproduce:\n"
            f"    import base64, pyarrow as pa, prune_engine as pe\n"
            f"    stats = pa.ipc.open_stream(base64.b64decode({ipc!r})).read_all()\n"
            f"    pe.prune(stats, {small.sql('pe')!r})  # returns [false]; a matching row exists\n"
        )


def _prune(stats: pa.Table, sql: str):
    """``pe.prune``, with any exception returned instead of raised."""
    try:
        return pe.prune(stats, sql)
    except Exception as exc:  # noqa: BLE001 - sorted by the caller
        return exc


def _mask_problem(mask, n: int) -> str | None:
    if not isinstance(mask, pa.BooleanArray):
        return f"expected a pyarrow.BooleanArray, got {type(mask).__name__}"
    if len(mask) != n:
        return f"length {len(mask)} for {n} containers"
    if mask.null_count:
        return f"{mask.null_count} null entries"
    return None


def _rows_of(case: Case, cid: str) -> pa.Table:
    import pyarrow.compute as pc

    return case.table.filter(pc.equal(case.table.column(CID), cid))


def _schema_line(table: pa.Table) -> str:
    return "; ".join(f"{f.name}: {f.type}" for f in table.schema)


def _ipc_b64(table: pa.Table) -> str:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode()


def printable(table: pa.Table) -> pa.Table:
    """``table`` with timestamps as text, so that ``to_pylist`` works for nanoseconds too."""
    return pa.table({name: _printable(table.column(name).combine_chunks()) for name in table.column_names})


def _printable(arr: pa.Array) -> pa.Array:
    typ = arr.type
    if pa.types.is_timestamp(typ):
        return arr.cast(pa.string())  # ISO text, UTC
    if pa.types.is_struct(typ):
        children = [_printable(arr.field(i)) for i in range(typ.num_fields)]
        return pa.StructArray.from_arrays(children, names=[f.name for f in typ], mask=arr.is_null())
    if pa.types.is_list(typ):
        return pa.ListArray.from_arrays(arr.offsets, _printable(arr.values), mask=arr.is_null())
    return arr
