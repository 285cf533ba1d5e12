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

Run as ``python -m prune_engine.ngram._ahead NAME...``, the helper compiles (or loads) the
kernels of :mod:`._kernels` named, in order, and prints each name when it is in the cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

#: set to "0" to never start a helper (the helper itself runs with it)
ENV = "PRUNE_ENGINE_COMPILE_AHEAD"
#: longest wait for a kernel from the helper before compiling it here
WAIT_S = 60.0

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
        # run from the folder holding this package, so that the helper imports this very copy
        # of it (numba's cache is per source file)
        root = Path(__file__).resolve().parents[2]
        env = dict(os.environ, **{ENV: "0"})
        if env.get("NUMBA_CACHE_DIR"):
            env["NUMBA_CACHE_DIR"] = os.path.abspath(env["NUMBA_CACHE_DIR"])
        try:
            proc = subprocess.Popen([sys.executable, "-m", __name__, *names], cwd=root, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
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
    from prune_engine.ngram import _kernels

    for name in names:
        getattr(_kernels, name).compiled()
        print(name, flush=True)


if __name__ == "__main__":
    _main(sys.argv[1:])
