"""Compile the kernels a process will need next in a helper process, on another CPU.

A first n-gram build on a new machine (numba's cache cold) compiles three kernels one after
the other: the build, then the checksums that seal its entries, then the probe. Only the
first depends on the data; while this process compiles it, a helper process compiles the
other two into numba's cache, from which this process loads them when it gets there (in
milliseconds). The first build and probe then take about the time of the build's compile
alone. (A first probe of a saved index gains nothing from a helper: its two kernels compile
here in less time than a helper takes to start and compile the second.)

Nothing else changes: the helper writes only numba's cache, which numba writes atomically
and checks on load; a kernel the helper has not delivered in :data:`WAIT_S` seconds, or
could not compile, is compiled here as without a helper. No helper is started when the
cache already holds the kernel being compiled, when this process may use only one CPU, when
``sys.executable`` is not a Python interpreter (a program embedding Python), or when the
environment variable ``PRUNE_ENGINE_COMPILE_AHEAD`` is ``0``. A process starts at most one
helper.

The helper (:data:`_PROGRAM`) compiles (or loads) the kernels of :mod:`._kernels` named, in
order, and prints each name when it is in the cache. It imports only the modules of the
kernels, under a bare ``prune_engine`` package: the package's own ``__init__`` imports its
API (pyarrow, sqlglot), which took 0.3 s of the helper's start.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
from pathlib import Path

#: set to "0" to never start a helper (the helper itself runs with it)
ENV = "PRUNE_ENGINE_COMPILE_AHEAD"
#: longest wait for a kernel from the helper before compiling it here
WAIT_S = 60.0

#: the helper's program: ``python -c _PROGRAM <folder of this package> NAME...``
_PROGRAM = """
import sys, types
package = types.ModuleType("prune_engine")
package.__path__ = [sys.argv[1]]
sys.modules["prune_engine"] = package
from prune_engine.ngram._ahead import _main
_main(sys.argv[2:])
"""

_lock = threading.Lock()
_started = False
_proc: subprocess.Popen | None = None  # the helper
_ready: dict[str, threading.Event] = {}  # kernel name -> set once the helper is past it


def allowed() -> bool:
    """May this process start a helper (once, with a CPU to spare, not switched off, from a
    Python interpreter: an embedding program's ``sys.executable`` is not one)?"""
    name = Path(sys.executable or "").name.lower()
    if _started or os.environ.get(ENV) == "0" or not name.startswith(("python", "pypy")):
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus > 1


def start(names: tuple[str, ...]) -> None:
    """Start the helper compiling the kernels ``names`` (if :func:`allowed`)."""
    global _started, _proc
    with _lock:
        if not allowed():
            return
        _started = True
        package = str(Path(__file__).resolve().parents[1])  # this copy: numba caches per file
        try:
            proc = subprocess.Popen([sys.executable, "-c", _PROGRAM, package, *names],
                                    env=dict(os.environ, **{ENV: "0"}), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:  # cannot start a process here: compile in this one
            return
        _proc = proc
        for name in names:
            _ready[name] = threading.Event()
        threading.Thread(target=_listen, args=(proc,), name="prune_engine compile ahead",
                         daemon=True).start()


def _listen(proc: subprocess.Popen) -> None:
    """Mark each kernel the helper reports; at its end, every kernel (delivered or not)."""
    with proc.stdout:
        for line in proc.stdout:
            if line.strip() in _ready:
                _ready[line.strip()].set()
    proc.wait()
    for event in _ready.values():
        event.set()


def wait(name: str) -> None:
    """If the helper compiles kernel ``name``, wait until it is in the cache (or the helper
    has ended, or :data:`WAIT_S` has passed)."""
    event = _ready.get(name)
    if event is not None:
        event.wait(WAIT_S)


def _forget() -> None:
    """In a child forked while a helper ran: that helper reports to the parent only, so wait
    for nothing (a kernel not yet in the cache compiles in the child)."""
    _ready.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def _main(names: list[str]) -> None:
    """The helper's work (a short-lived process: no cyclic garbage collection, see
    :mod:`._kernels`)."""
    gc.disable()
    from prune_engine.ngram import _kernels

    for name in names:
        getattr(_kernels, name).compiled()
        print(name, flush=True)
