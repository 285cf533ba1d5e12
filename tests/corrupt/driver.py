"""The parent process of the corrupt-input fuzzer: batches, time limits, crashes, findings.

Mutant ``<seed>-<index>`` is defined by its label alone (:func:`.targets.make_mutant`), on a
corpus written afresh for the run (:func:`workspace`). The indices run in batches of
``batch`` consecutive ones; each batch goes to a child process (:mod:`.child`), ``jobs`` at a
time. A child prints ``start`` and ``done`` around each mutant, so a child that dies
(a signal: a ``crash``) or stays silent past ``timeout`` seconds on one mutant (a ``hang``,
then killed) names the mutant it was in, and the rest of its batch goes to a new child:
nothing else is lost. A crash that needs the mutants run before it in the same process (a
cache, or memory that an earlier one damaged) is replayed with them (:func:`replay`: each
finding names the first mutant of its process).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.corrupt import corpus as C
from tests.corrupt.targets import Finding

ROOT = Path(__file__).resolve().parents[2]
#: seconds a child may take to start (imports, numba's cache) before its first mutant
START_SECONDS = 120.0


@dataclass
class Tally:
    """What a run did: mutants run, findings, refusals by stage, time."""

    mutants: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    targets: collections.Counter = field(default_factory=collections.Counter)
    refused: collections.Counter = field(default_factory=collections.Counter)

    @property
    def by_kind(self) -> collections.Counter:
        return collections.Counter(f.kind for f in self.findings)

    def summary(self) -> str:
        rate = self.mutants / self.seconds if self.seconds else 0.0
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.by_kind.items())) or "none"
        targets = ", ".join(f"{k} {n}" for k, n in sorted(self.targets.items()))
        refused = ", ".join(f"{k} {n}" for k, n in self.refused.most_common())
        return (f"{self.mutants} mutants in {self.seconds:.0f} s ({rate:.1f} per second); "
                f"findings: {kinds}\n  targets: {targets}\n  refused at: {refused or 'none'}")


def replay_command(f: Finding) -> str:
    """The command that runs the finding's mutant again: alone, then (if that finds nothing)
    after the mutants its process ran before it."""
    after = f" --after {f.first}" if f.first and f.first != f.label else ""
    return f"python -m tests.corrupt --replay {f.label}{after}"


def show(f: Finding) -> str:
    """A finding on one line, with the command that replays it."""
    where = f" at {f.where}" if f.where else ""
    return (f"{f.kind.upper()} {f.label} [{f.target}] {f.what} | {f.stage}: {f.error}{where} "
            f"| replay: {replay_command(f)}")


@contextlib.contextmanager
def workspace(seed: int):
    """A folder holding the corpus of a run of ``seed``: the same path in every run of the
    seed (so that the corpus, paths included, is the same bytes), unless another run of it is
    under way, which has the folder: then a fresh one (its mutants may differ in the bytes of
    the path itself)."""
    base = Path(tempfile.gettempdir())
    lock = open(base / f"pe-corrupt-{seed}.lock", "a")
    root = None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            root = base / f"pe-corrupt-{seed}"
            shutil.rmtree(root, ignore_errors=True)  # left by a run that was stopped
        except BlockingIOError:
            print(f"note: another run of seed {seed} is under way; this one writes its own "
                  "corpus (mutants that edit the bytes of its path may differ)", flush=True)
            root = Path(tempfile.mkdtemp(prefix=f"pe-corrupt-{seed}-"))
        C.build(root)
        yield root
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
        lock.close()


class Child:
    """One child process running a list of mutants, read line by line."""

    def __init__(self, root: Path, labels: list[str]):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        # its stderr to a file: a pipe nobody reads while it runs could fill and block it
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.corrupt.child", str(root), *labels], cwd=ROOT,
            env=env, stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0)
        self.labels = labels
        self.pending = b""  # output read but not yet a whole line
        self.current: str | None = None  # the mutant started and not done
        self.done: list[dict] = []
        self.deadline = time.monotonic() + START_SECONDS

    def lines(self) -> list[str] | None:
        """The whole lines the child has written since the last call (None: it has closed
        its output). Read from the pipe itself, without a buffer that select cannot see."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.pending += chunk
        *whole, self.pending = self.pending.split(b"\n")
        return [line.decode() for line in whole]

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()

    def remaining(self) -> list[str]:
        """The labels not done (the one it died in excluded)."""
        seen = {d["label"] for d in self.done} | {self.current}
        return [x for x in self.labels if x not in seen]


def describe(root: Path, label: str):
    """Mutant ``label`` as made for the corpus at ``root`` (not run)."""
    from tests.corrupt import targets

    return targets.make_mutant(label, targets.Inputs(root, C.load(root)))


def _crash_site(stderr: str) -> str:
    """Where a child crashed, from the stack that faulthandler printed: the innermost frame
    of the library (or else the innermost frame), or the last line of the child's output."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    frames = [line for line in lines if line.startswith("File ")]
    ours = [f for f in frames if f"{os.sep}prune_engine{os.sep}" in f]
    shown = (ours or frames or lines[-1:] or [""])[0]
    return shown.replace(str(ROOT) + os.sep, "")[:300]


def run_batches(root: Path, batches, jobs: int, timeout: float, report,
                stop_at: float | None = None) -> Tally:
    """Run the ``batches`` of labels (an iterable, drawn as children free up), ``jobs``
    children at a time; ``report(finding)`` is called for each finding as it is found. No
    batch starts after ``stop_at`` (a ``time.monotonic()``)."""
    run = _Batches(root, iter(batches), jobs, timeout, report, stop_at)
    started = time.monotonic()
    try:
        run.loop()
    finally:  # interrupted too: no child outlives the run
        for child in run.live:
            child.kill()
    run.tally.seconds = time.monotonic() - started
    return run.tally


class _Batches:
    """The state of :func:`run_batches`: the children running, the batches left."""

    def __init__(self, root: Path, pending, jobs: int, timeout: float, report,
                 stop_at: float | None):
        self.root, self.pending, self.jobs, self.timeout = root, pending, jobs, timeout
        self.report, self.stop_at = report, stop_at
        self.tally = Tally()
        self.again: collections.deque = collections.deque()  # the rest of a dead child's batch
        self.sel = selectors.DefaultSelector()
        self.live: list[Child] = []

    def next_batch(self) -> list[str] | None:
        if self.again:
            return self.again.popleft()
        if self.stop_at is not None and time.monotonic() > self.stop_at:
            return None
        return next(self.pending, None)

    def found(self, finding: Finding) -> None:
        self.tally.findings.append(finding)
        self.report(finding)

    def loop(self) -> None:
        while True:
            while len(self.live) < self.jobs:
                labels = self.next_batch()
                if labels is None:
                    break
                child = Child(self.root, labels)
                self.live.append(child)
                self.sel.register(child.proc.stdout, selectors.EVENT_READ, child)
            if not self.live:
                return
            wait = max(0.05, min(c.deadline for c in self.live) - time.monotonic())
            for key, _ in self.sel.select(timeout=wait):
                child = key.data
                lines = child.lines()
                if lines is None:
                    self.finish(child, None)
                    continue
                for line in lines:
                    self.read(child, line)
            for child in [c for c in self.live if time.monotonic() > c.deadline]:
                if child.current is None:
                    raise RuntimeError(f"a child did not start within {START_SECONDS:.0f} s")
                self.finish(child, "hang")

    def read(self, child: Child, line: str) -> None:
        """One line of a child: a mutant started, or done (with its findings)."""
        tag, _, rest = line.partition(" ")
        if tag == "start":
            child.current = rest
            child.deadline = time.monotonic() + self.timeout
        elif tag == "done":
            result = json.loads(rest)
            child.done.append(result)
            child.current = None
            self.tally.mutants += 1
            self.tally.targets[result["target"]] += 1
            if result["refused"]:
                self.tally.refused[result["refused"]] += 1
            for f in result["findings"]:
                self.found(Finding(**f))

    def finish(self, child: Child, kind: str | None) -> None:
        """A child that closed its output (``kind`` None) or is to be killed (``"hang"``):
        the mutant it was in is a finding, and the rest of its batch goes to a new child."""
        self.sel.unregister(child.proc.stdout)
        if kind is not None:
            child.kill()
        code = child.proc.wait()
        self.live.remove(child)
        child.stderr.seek(0)
        err = child.stderr.read().decode(errors="replace")
        child.stderr.close()
        child.proc.stdout.close()
        if child.current is None and not child.done and code != 0:
            raise RuntimeError(f"a child failed to start ({code}): {err[-3000:]}")
        if child.current is not None:
            kind = kind or "crash"
            if kind == "crash":
                reason = f"killed by {signal.Signals(-code).name}" if code < 0 else \
                    f"exited with {code}"
            else:
                reason = f"no answer in {self.timeout:.0f} s"
            self.tally.mutants += 1
            mutant = describe(self.root, child.current)
            self.found(Finding(child.current, kind, mutant.target, mutant.what, "?",
                               f"{reason}; {_crash_site(err)}".rstrip("; "),
                               first=child.labels[0]))
        rest = child.remaining()
        if rest:
            self.again.append(rest)


def fuzz(seed: int, count: int | None = None, minutes: float | None = None, jobs: int = 2,
         batch: int = 200, timeout: float = 30.0, report=print) -> Tally:
    """Run mutants ``<seed>-0``, ``<seed>-1``, ... (``count`` of them, or as many as
    ``minutes`` allow) and return the tally; ``report`` gets each finding's line."""
    stop_at = time.monotonic() + 60 * minutes if minutes is not None else None
    total = count if count is not None else 10**12
    batches = ([f"{seed}-{i}" for i in range(start, min(start + batch, total))]
               for start in range(0, total, batch))
    with workspace(seed) as root:
        return run_batches(root, batches, jobs, timeout, lambda f: report(show(f)), stop_at)


def replay(label: str, after: str | None = None, timeout: float = 30.0) -> int:
    """Run mutant ``label`` alone in a fresh child and print what it does, tracebacks
    included; when that finds nothing and ``after`` names an earlier mutant, run ``after``
    to ``label`` in one child (as the fuzz run did: a crash may need the state an earlier
    mutant left). Returns the number of findings."""
    seed, _, index = label.rpartition("-")
    runs = [[label]]
    if after is not None:
        first = int(after.rpartition("-")[2])
        runs.append([f"{seed}-{i}" for i in range(first, int(index) + 1)])
    with workspace(int(seed)) as root:
        mutant = describe(root, label)
        print(f"mutant {label} [{mutant.target}]: {mutant.what}", flush=True)
        for labels in runs:
            if len(labels) > 1:
                print(f"{label} alone: nothing; again after {labels[0]}..{labels[-2]} in one "
                      "process, as the fuzz run had it", flush=True)
            env = dict(os.environ, PYTHONWARNINGS="ignore", PE_CORRUPT_TRACEBACK="1")
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
            try:
                done = subprocess.run([sys.executable, "-m", "tests.corrupt.child", str(root),
                                       *labels], cwd=ROOT, env=env, capture_output=True,
                                      text=True, timeout=START_SECONDS + timeout * len(labels))
            except subprocess.TimeoutExpired as e:
                print(f"HANG {label}: no answer in {e.timeout:.0f} s")
                return 1
            results = [json.loads(line[5:]) for line in done.stdout.splitlines()
                       if line.startswith("done ")]
            ours = next((r for r in results if r["label"] == label), None)
            if ours is None:
                started = [line[6:] for line in done.stdout.splitlines()
                           if line.startswith("start ")]
                reason = f"killed by {signal.Signals(-done.returncode).name}" \
                    if done.returncode < 0 else f"exited with {done.returncode}"
                print(f"CRASH {started[-1] if started else label}: {reason}\n"
                      f"{done.stderr[-5000:]}")
                return 1
            print(f"{ours['stages']} stage(s) run; refused at {ours['refused']}")
            if ours["findings"]:
                print(done.stderr[-20000:])
                for f in ours["findings"]:
                    print(show(Finding(**f)))
                return len(ours["findings"])
    print(f"{label}: no finding")
    return 0
