"""What the fuzzer mutates, and which entry points it runs on each mutant.

A *target* makes a mutant of one corpus input (:mod:`.corpus`) with the operators of
:mod:`.mutate`, and runs the library on it, stage by stage, as a user would:

- ``footer``, ``bloom``, ``dictionary``, ``parquet``: a lake file's footer (Thrift fields,
  bytes), its Bloom filters (header fields, bitsets), its dictionary pages (header fields,
  data), or any byte of it. Runs ``collect_stats(bloom=True, dictionaries=True)``, then
  ``prune`` and ``classify``; and ``collect_stats`` of the file beside a good one with
  ``on_error="skip"``.
- ``iceberg-metadata``, ``iceberg-manifest-list``, ``iceberg-manifest``: the table's metadata
  JSON, its manifest list or a manifest (Avro). Runs ``stats_from_iceberg``, then ``prune``
  and ``classify``.
- ``stats`` (saved statistics: bytes, or the metadata JSON re-sealed with a valid checksum),
  ``stats-v1`` (format-1 statistics: bytes, the metadata JSON, a column) and ``ngram`` (an
  n-gram index entry in format-1 statistics). Runs ``read_stats``, then ``prune`` and
  ``classify`` (LIKE probes of the n-gram index among them), ``aggregate``, ``scan`` and
  ``update_stats``.

:func:`make_mutant` gives mutant ``<seed>-<index>`` (deterministic: its generator is seeded
with its label); :func:`run_mutant` runs its stages and returns what went wrong
(:func:`judge`): an exception that is not a ``PruneEngineError`` (``exception``), a refusal
whose message runs over several lines or 400 characters, or, in a stage that reads the
mutated input (``collect_stats``, ``stats_from_iceberg``, ``read_stats``), names no file of
it (``message``). (The later stages work on statistics in memory: their refusals concern the
statistics, not a file.) Crashes and hangs are seen by the parent process (:mod:`.driver`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import struct
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from tests.corrupt import corpus as C
from tests.corrupt import mutate as M

#: longest refusal message (see the brief of the project's errors)
MAX_MESSAGE = 400

LAKE_PREDICATES = (
    "k = 1017 OR k IN (5, 77) OR s = 'v7' OR s IN ('v1', 'zz') OR b = false OR st.a = 4",
    "f > 0.5 AND d < 1.5 AND ts >= TIMESTAMP '2024-01-02 00:00:00' AND s LIKE 'v1%' "
    "AND k IS NOT NULL",
    "s != 'v3' AND NOT (k BETWEEN 10 AND 20) AND st.t <= 't1'",
)
STATS_PREDICATES = LAKE_PREDICATES + ("s LIKE '%v1%'", "s ILIKE '%V2%' OR s = 'v33'")
ICEBERG_PREDICATES = (
    "id = 7 OR name = 'n3' OR cat = 'red' OR price = 1.5",
    "amount > 0.2 AND ts < TIMESTAMP '2024-03-01 00:30:00' AND f <= 5.5 AND cat != 'blue'",
)

#: weights of the targets in a run
WEIGHTS = {"footer": 3, "bloom": 2, "dictionary": 2, "parquet": 2, "iceberg-metadata": 2,
           "iceberg-manifest-list": 2, "iceberg-manifest": 3, "stats": 2, "stats-v1": 3,
           "ngram": 2}


@dataclass
class Mutant:
    label: str
    target: str
    what: str
    #: the mutated file's path relative to the corpus root (``in_place``: it replaces that
    #: file while the mutant runs) or its name in the mutant's own folder
    name: str
    data: bytes
    in_place: bool = False


@dataclass
class Finding:
    label: str
    kind: str  # "exception" | "message" | "crash" | "hang"
    target: str
    what: str
    stage: str = ""
    error: str = ""
    where: str = ""
    #: the first mutant its process ran (state left by those before it may matter)
    first: str = ""

    def to_json(self) -> dict:
        return self.__dict__.copy()


@dataclass
class Inputs:
    """A child's view of the corpus: its files' bytes, loaded once."""

    root: Path
    corpus: dict
    pristine: dict[str, bytes] = field(default_factory=dict)
    _stats: tuple | None = None
    _catalog: object = None

    def bytes(self, rel: str) -> bytes:
        """Input ``rel`` as the corpus wrote it."""
        if rel not in self.pristine:
            self.pristine[rel] = C.pristine(self.root, rel)
        return self.pristine[rel]

    def stats(self) -> tuple[pa.Table, dict]:
        """The pristine statistics table (without its format keys) and metadata."""
        if self._stats is None:
            import prune_engine as pe

            back = pe.read_stats(self.root / self.corpus["stats"]["v2"])
            self._stats = (back.table, back.metadata)
        return self._stats

    def catalog(self):
        if self._catalog is None:
            self._catalog = C.iceberg_catalog(self.root)
        return self._catalog

    @contextlib.contextmanager
    def iceberg_lock(self):
        """The Iceberg table to this process alone (its mutants replace its files in place),
        its files first made pristine again (a process that crashed may have left a mutant)."""
        with open(self.root / "iceberg.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                ice = self.corpus["iceberg"]
                for rel in [ice["metadata"], ice["manifest_list"], *ice["manifests"]]:
                    if (self.root / rel).read_bytes() != self.bytes(rel):
                        (self.root / rel).write_bytes(self.bytes(rel))
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


# ------------------------------------------------------------------------------ mutants


def _lake_mutant(rnd: random.Random, inputs: Inputs, target: str) -> tuple[str, bytes, str]:
    rel = rnd.choice(inputs.corpus["lake"])
    data = inputs.bytes(rel)
    ranges = inputs.corpus["ranges"][rel]
    if target == "footer":
        if rnd.random() < 0.5:
            out, what = M.footer_edit(rnd, data)
        else:
            out, what = M.bytes_edit(rnd, data, [ranges["footer"], (len(data) - 8, len(data))])
    elif target in ("bloom", "dictionary"):
        parts = ranges[target]
        if rnd.random() < 0.4:
            out, what = M.thrift_header_edit(rnd, data, rnd.choice(parts)[0])
        else:
            out, what = M.bytes_edit(rnd, data, parts)
    else:
        out, what = M.bytes_edit(rnd, data)
    return os.path.basename(rel), out, f"{os.path.basename(rel)}: {what}"


def _iceberg_mutant(rnd: random.Random, inputs: Inputs, target: str) -> tuple[str, bytes, str]:
    ice = inputs.corpus["iceberg"]
    rel = ice["metadata"] if target == "iceberg-metadata" else \
        ice["manifest_list"] if target == "iceberg-manifest-list" else rnd.choice(ice["manifests"])
    data = inputs.bytes(rel)
    if target == "iceberg-metadata" and rnd.random() < 0.7:
        text, what = M.json_edit(rnd, data.decode())
        out = text.encode()
    elif target != "iceberg-metadata" and rnd.random() < 0.8:
        out, what = M.avro_edit(rnd, data)
    else:
        out, what = M.bytes_edit(rnd, data)
    return rel, out, f"{os.path.basename(rel)}: {what}"


def _entry_edit(rnd: random.Random, blob: bytes) -> tuple[bytes, str]:
    """One field of an n-gram index entry (:mod:`prune_engine.ngram.format`) edited, its
    checksum re-sealed or not."""
    from prune_engine.ngram.format import TRAILER_BYTES, xxh64

    out = bytearray(blob)
    slot = rnd.randrange(2)
    at = 4 + 8 * slot
    field_ = rnd.choice(("version", "gram_size", "sections", "kind", "fold", "count", "count",
                         "bytes", "truncate", "extend"))
    if field_ == "version":
        out[0] = rnd.choice((0, 2, 0xFF))
    elif field_ == "gram_size":
        out[1] = rnd.choice((0, 9, 0xFF, 1))
    elif field_ == "sections":
        out[2] = rnd.choice((0, 2, 3, 0xFF))
    elif field_ == "kind":
        out[at] = rnd.choice((1, 2, 0xFF))
    elif field_ == "fold":
        out[at + 1] = rnd.choice((0, 1, 2, 0xFF))
    elif field_ == "count":
        out[at + 4:at + 8] = struct.pack("<I", rnd.choice((0, 1, 0xFFFFFFFF, 0x80000000,
                                                           0x7FFFFFFF, 2**28, 3)))
    elif field_ == "bytes":
        edited, what = M.bytes_edit(rnd, bytes(out))
        out = bytearray(edited)
        field_ = what
    elif field_ == "truncate":
        del out[rnd.randrange(len(out)):]
    else:
        out += bytes([rnd.choice(M.BOUNDARY_BYTES)]) * rnd.choice((1, 8, 32))
    reseal = rnd.random() < 0.6 and len(out) >= TRAILER_BYTES
    if reseal:
        body = bytes(out[:-TRAILER_BYTES])
        out = bytearray(body + struct.pack("<Q", xxh64(body)))
    return bytes(out), f"{field_}{' (re-sealed)' if reseal else ''}"


def _stats_mutant(rnd: random.Random, inputs: Inputs, target: str) -> tuple[str, bytes, str]:
    from prune_engine.stats import io as stats_io, layout

    table, metadata = inputs.stats()
    text = json.dumps(metadata)
    if target == "stats":
        if rnd.random() < 0.5:
            out, what = M.bytes_edit(rnd, inputs.bytes(inputs.corpus["stats"]["v2"]))
            return "stats.parquet", out, what
        edited, what = M.json_edit(rnd, text)
        out = stats_io.seal(table.replace_schema_metadata({
            layout.FORMAT_VERSION_KEY: str(layout.FORMAT_VERSION).encode(),
            stats_io.METADATA_KEY: edited.encode()}))
        return "stats.parquet", out, f"metadata {what} (re-sealed)"
    if target == "ngram":
        index = table.column(layout.NGRAM_INDEX).combine_chunks()
        entries = index.field(0).to_pylist()
        row = rnd.choice([i for i, e in enumerate(entries) if e is not None])
        entries[row], what = _entry_edit(rnd, entries[row])
        column = pa.StructArray.from_arrays([pa.array(entries, pa.binary())],
                                            fields=[index.type.field(0)])
        table = table.set_column(table.column_names.index(layout.NGRAM_INDEX),
                                 layout.NGRAM_INDEX, column)
        return "stats.parquet", C.version_1_bytes(table, text), f"n-gram entry {row}: {what}"
    choice = rnd.random()
    if choice < 0.4:
        out, what = M.bytes_edit(rnd, inputs.bytes(inputs.corpus["stats"]["v1"]))
        return "stats.parquet", out, what
    if choice < 0.7:
        edited, what = M.json_edit(rnd, text)
        return "stats.parquet", C.version_1_bytes(table, edited), f"metadata {what}"
    edited_table, what = M.table_edit(rnd, table)
    return "stats.parquet", C.version_1_bytes(edited_table, text), what


def make_mutant(label: str, inputs: Inputs) -> Mutant:
    """Mutant ``label`` (``"<seed>-<index>"``): the same bytes for the same label and corpus.
    (An edit that cannot be written, such as a struct column left with no field, which
    Parquet cannot hold, is drawn again from the same generator.)"""
    rnd = random.Random(label)
    names = list(WEIGHTS)
    target = rnd.choices(names, [WEIGHTS[n] for n in names])[0]
    for attempt in range(10):
        try:
            if target.startswith("iceberg"):
                name, data, what = _iceberg_mutant(rnd, inputs, target)
                return Mutant(label, target, what, name, data, in_place=True)
            make = _stats_mutant if target in ("stats", "stats-v1", "ngram") else _lake_mutant
            name, data, what = make(rnd, inputs, target)
            return Mutant(label, target, what, name, data)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            if attempt == 9:
                raise
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------ running


def _where(tb) -> str:
    """The innermost frame of the library and the innermost frame (``file:line function``)."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if f"{os.sep}prune_engine{os.sep}" in f.filename]

    def show(f):
        return f"{f.filename.rsplit(os.sep + 'prune_engine' + os.sep, 1)[-1]}:{f.lineno} {f.name}"

    parts = [show(ours[-1])] if ours else []
    if frames and (not ours or frames[-1] is not ours[-1]):
        parts.append(f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno} "
                     f"{frames[-1].name}")
    return " > ".join(parts)


def judge(mutant: Mutant, stage: str, error: BaseException, names: tuple[str, ...] | None
          ) -> list[Finding]:
    """What is wrong with ``error``, raised by ``stage`` on ``mutant``: a foreign exception,
    or a refusal whose message is not one line of at most 400 characters naming one of
    ``names`` (None: a stage that reads no file, whose errors need not name one)."""
    from prune_engine.errors import PruneEngineError

    text = str(error)
    summary = f"{type(error).__name__}: {' '.join(text.split())[:300]}"
    where = _where(error.__traceback__)

    def finding(k: str, why: str = "") -> Finding:
        return Finding(mutant.label, k, mutant.target, mutant.what, stage,
                       f"{why}{summary}", where)

    if not isinstance(error, PruneEngineError):
        return [finding("exception")]
    problems = []
    breaks = text.count("\n") + text.count("\r")
    if breaks:
        problems.append(f"{breaks} line break(s)")
    if len(text) > MAX_MESSAGE:
        problems.append(f"{len(text)} characters")
    if names is not None and not any(n in text for n in names):
        problems.append("names no file")
    return [finding("message", f"[{'; '.join(problems)}] ")] if problems else []


class Run:
    """The stages of one mutant: each runs, and what goes wrong is judged (:func:`judge`)."""

    def __init__(self, mutant: Mutant):
        self.mutant = mutant
        self.findings: list[Finding] = []
        self.stages = 0
        self.refused: str | None = None  # the first stage that refused the input
        self.seconds = 0.0

    def stage(self, name: str, call, names: tuple[str, ...] | None = None):
        """``call()``, or None when it raised."""
        self.stages += 1
        try:
            return call()
        except Exception as e:  # noqa: BLE001 - judged: anything may come out of a mutant
            if os.environ.get("PE_CORRUPT_TRACEBACK"):  # a replay shows every refusal whole
                print(f"--- {self.mutant.label}, stage {name}:", file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
            self.findings += judge(self.mutant, name, e, names)
            self.refused = self.refused or name
            return None

    def to_json(self) -> dict:
        return {"label": self.mutant.label, "target": self.mutant.target,
                "what": self.mutant.what, "stages": self.stages, "refused": self.refused,
                "seconds": round(self.seconds, 3),
                "findings": [f.to_json() for f in self.findings]}


def _predicates(run: Run, stats, predicates) -> None:
    import prune_engine as pe

    for p in predicates:
        run.stage("prune", lambda: pe.prune(stats, p))
        run.stage("classify", lambda: pe.classify(stats, p))


def run_mutant(mutant: Mutant, inputs: Inputs, work: Path) -> Run:
    """Install ``mutant`` (in ``work``, or in place in the corpus, restored after) and run the
    entry points of its target (see the module doc)."""
    run = Run(mutant)
    started = time.perf_counter()
    try:
        _install_and_run(run, inputs, work)
    finally:
        run.seconds = time.perf_counter() - started
    return run


def _install_and_run(run: Run, inputs: Inputs, work: Path) -> None:
    mutant = run.mutant
    if mutant.in_place:
        with inputs.iceberg_lock():
            path = inputs.root / mutant.name
            path.write_bytes(mutant.data)
            try:
                _run_stages(run, inputs, path)
            finally:
                path.write_bytes(inputs.bytes(mutant.name))
        return
    work.mkdir(parents=True, exist_ok=True)
    path = work / mutant.name
    path.write_bytes(mutant.data)
    try:
        _run_stages(run, inputs, path)
    finally:
        path.unlink(missing_ok=True)


def _run_stages(run: Run, inputs: Inputs, path: Path) -> None:
    import prune_engine as pe

    mutant = run.mutant
    root = str(inputs.root)
    # a refusal names the file it could not read: the mutant, or (its paths being what a
    # mutant may garble) a file of the corpus it led to
    names = (os.path.basename(mutant.name), root, *inputs.corpus["names"])
    lake = inputs.root / "lake"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mutant.target.startswith("iceberg"):
            stats = run.stage("stats_from_iceberg", lambda: pe.stats_from_iceberg(
                inputs.catalog(), C.ICEBERG_TABLE), names)
            if stats is not None:
                _predicates(run, stats, ICEBERG_PREDICATES)
        elif mutant.target in ("stats", "stats-v1", "ngram"):
            stats = run.stage("read_stats", lambda: pe.read_stats(path), names)
            if stats is not None:
                _predicates(run, stats, STATS_PREDICATES)
                run.stage("aggregate", lambda: pe.aggregate(
                    stats, "COUNT(*), MIN(k), MAX(k)", where=LAKE_PREDICATES[0]))
                run.stage("scan", lambda: pe.scan(str(lake), where=LAKE_PREDICATES[1],
                                                  stats=stats, columns=["k", "s"]))
                run.stage("update_stats", lambda: pe.update_stats(stats, str(lake),
                                                                  progress=False))
        else:
            options = dict(bloom=True, dictionaries=True, progress=False)
            stats = run.stage("collect_stats", lambda: pe.collect_stats(str(path), **options),
                              names)
            if stats is not None:
                _predicates(run, stats, LAKE_PREDICATES)
            good = str(inputs.root / next(p for p in inputs.corpus["lake"]
                                          if os.path.basename(p) != mutant.name))
            run.stage("collect_stats(on_error='skip')", lambda: pe.collect_stats(
                [good, str(path)], on_error="skip", **options), names)
