"""numba kernels that answer before they are compiled.

A kernel module's first call in a fresh process with a fresh numba cache (a new machine, a new
virtualenv, a new Spark executor) compiles for seconds. :class:`Kernels` serves such a
module's functions in two forms: the compiled ones once they are ready, and until then their
*Python twins*: the same source executed again with ``njit`` as the identity, so that the two
can never disagree (one source, two ways to run it).

A kernel module may give a few small functions a plain-Python stand-in, ``_twin_<name>`` next
to ``<name>``, which the twins call instead: the storage (Python lists and ``bytes``, whose
items are plain ints, where the compiled kernels use numpy arrays, whose scalars are several
times slower in Python) and the varint arithmetic on those ints. The logic that walks the data
stays one source; the stand-ins are tested against the functions they stand in for.

The first use starts a thread that loads the compiled kernels from numba's on-disk cache when
it holds them (numba's import and the load: a few tenths of a second, which the twins fill; a
caller with many calls ahead waits for that load instead), and otherwise starts the
compilation in a child process, which writes that cache (numba compiles in Python, holding
the GIL: in a thread it would stall the twins it runs beside), waits for it and loads what it
wrote. Until then every use gets the twins. One child compiles at a time per machine, Python
and numba cache (a file lock): the Python workers of a Spark executor start together, and
each compilation takes seconds of a core and hundreds of megabytes; the others then load what
the first wrote. Where the child cannot help (it fails, or the cache cannot be written), the
thread compiles in this process instead.

A process may end while that thread works. A thread left inside numba's compiled code when
the interpreter shuts down aborts the process ("exception not rethrown"), so the thread's
loads and compilations in this process hold :data:`_IN_PROCESS`, and the process waits for
the one under way at exit (:func:`_at_exit`, a few tenths of a second) and starts none after.
A compilation in a child process is not waited for: the child finishes writing the cache on
its own.

The twins are slower than the compiled kernels (a footer of a few columns takes about a
quarter of a millisecond instead of microseconds, and they gain nothing from threads), so they
carry the first call of a small job; a large job switches to the compiled functions as soon
as they are ready. ``PRUNE_ENGINE_WARM=0`` turns the twins off (every call waits for numba).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
from types import SimpleNamespace
from typing import Callable


_IMPORT = "from numba import njit\n"
#: calls of the twins worth about one load of the kernels from numba's cache (a few tenths of
#: a second, slower beside the twins; a footer of a few columns takes them a quarter of a
#: millisecond)
LOAD_WORTH = 500

#: the prefix of a kernel module's plain-Python stand-in for one of its functions
_TWIN = "_twin_"

#: held by a thread while it loads or compiles kernels in this process (see the module doc)
_IN_PROCESS = threading.Lock()
_exiting = False


@atexit.register
def _at_exit() -> None:
    """Wait for a load or compilation under way in a thread, and let none start after."""
    global _exiting
    with _IN_PROCESS:
        _exiting = True


def _unless_exiting(step: Callable[[], object]):
    """``step()`` while holding :data:`_IN_PROCESS`; None once the process is ending."""
    with _IN_PROCESS:
        return None if _exiting else step()


def _identity_njit(*args, **kwargs):
    if args and callable(args[0]):
        return args[0]
    return lambda f: f


class Kernels:
    """The functions ``names`` of module ``module``, compiled or as Python twins.

    ``warm_up(compiled)`` calls the compiled functions once on small valid inputs (which
    compiles them or loads them from numba's cache); ``owner`` is where this object is
    (``"package.module:NAME"``), for the child process to find it."""

    def __init__(self, module: str, names: tuple[str, ...], warm_up: Callable[[object], None],
                 owner: str):
        self.module, self.names, self.warm_up, self.owner = module, names, warm_up, owner
        self._ready = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self._twins: SimpleNamespace | None = None
        self.failure: BaseException | None = None
        self._compiled = None  # the compiled module, once get() returns it

    def get(self, calls: int = 1):
        """The compiled module when ready; else (starting the load or compilation) the twins.

        ``calls``: how many calls the caller has ahead. The first use with more than
        :data:`LOAD_WORTH` of them loads the kernels from numba's cache before it returns
        when the cache holds them (the twins would take longer than the load); a smaller one
        gets the twins at once while a thread loads them."""
        if self._compiled is not None:  # the hot path: every footer asks
            return self._compiled
        if self._ready.is_set() or os.environ.get("PRUNE_ENGINE_WARM", "1") == "0":
            self._compiled = importlib.import_module(self.module)
            return self._compiled
        with self._lock:
            if not self._started:
                self._started = True
                if calls > LOAD_WORTH:
                    compiled = self._from_cache()
                    if compiled is not None:
                        return compiled
                threading.Thread(target=self._prepare, name=f"numba {self.module}",
                                 daemon=True).start()
            if self._twins is None:
                self._twins = self._load_twins()
        return self._twins if not self._ready.is_set() else importlib.import_module(self.module)

    @property
    def ready(self) -> bool:
        """Whether :meth:`get` returns the compiled functions."""
        return self._ready.is_set() or os.environ.get("PRUNE_ENGINE_WARM", "1") == "0"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the compiled functions are ready (tests, benchmarks)."""
        self.get()
        return self._ready.wait(timeout)

    def _prepare(self) -> None:
        """Load the compiled functions from numba's cache (a fraction of a second), else
        compile them in a child process and load what it wrote."""
        if _unless_exiting(self._from_cache) is not None:
            return
        self._compile_in_child()
        _unless_exiting(lambda: self._load(importlib.import_module(self.module)))

    def _from_cache(self):
        """The compiled module loaded from numba's cache, or None when the cache does not
        hold it (importing it imports numba: a tenth of a second)."""
        compiled = importlib.import_module(self.module)
        return compiled if self._cached(compiled) and self._load(compiled) else None

    def _load(self, compiled) -> bool:
        """Run the warm-up on the compiled functions (a load from numba's cache, or a
        compilation here); whether they are ready."""
        try:
            self.warm_up(compiled)
        except BaseException as e:  # noqa: BLE001 - kept; the twins keep serving
            self.failure = e
            return False
        self._ready.set()
        return True

    def _cached(self, compiled) -> bool:
        """Whether numba's cache holds an index for every kernel (a load, not a compile;
        an index from older source is compiled again, in this process)."""
        try:
            return all(os.path.exists(getattr(compiled, name)._cache._cache_file._index_path)
                       for name in self.names)
        except AttributeError:  # another numba: no such internals
            return False

    def _compile_in_child(self) -> None:
        """Compile in a child process (numba's cache is then written), one at a time (see
        :func:`compiling_alone`); errors are ignored: the caller compiles in this process
        after."""
        module, name = self.owner.split(":")
        code = ("import importlib, os\n"
                "from prune_engine._warm import compiling_alone\n"
                "hasattr(os, 'nice') and os.nice(10)\n"  # the twins first
                f"with compiling_alone({self.module!r}):\n"
                f"    kernels = importlib.import_module({module!r}).{name}\n"
                "    kernels.warm_up(importlib.import_module(kernels.module))\n")
        try:
            subprocess.run([sys.executable, "-c", code], env={**os.environ,
                           "PRUNE_ENGINE_WARM": "0"}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=300, check=False)
        except (OSError, subprocess.SubprocessError):
            pass

    def _load_twins(self) -> SimpleNamespace:
        return twins_of(self.module, self.names)


def twins_of(module: str, names: tuple[str, ...]) -> SimpleNamespace:
    """The Python twins of the functions ``names`` of kernel module ``module`` (its source
    run again with ``njit`` as the identity, each ``_twin_<name>`` standing in for
    ``<name>``). A kernel module that calls another's functions takes their twins from here
    in its own twin (where its ``__name__`` ends with ``[python]``)."""
    path = importlib.util.find_spec(module).origin  # (no import: no numba)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    # the module's own `from numba import njit` is dropped: `njit` is the identity here
    if _IMPORT not in source:
        raise RuntimeError(f"{path} must import njit as {_IMPORT.strip()!r}")
    namespace = {"__name__": f"{module}[python]", "__file__": path, "njit": _identity_njit}
    exec(compile(source.replace(_IMPORT, "\n"), path, "exec"), namespace)
    for name in [n for n in namespace if n.startswith(_TWIN)]:  # the twins' stand-ins
        namespace[name[len(_TWIN):]] = namespace[name]
    return SimpleNamespace(**{name: namespace[name] for name in names})


@contextlib.contextmanager
def compiling_alone(module: str):
    """Hold an exclusive lock for compiling ``module`` with this Python and numba cache
    directory (a file in the temporary directory; none where ``fcntl`` is missing): a second
    child waits, then finds the kernels in the cache the first wrote and only loads them."""
    try:
        import fcntl
    except ImportError:  # not POSIX: each child compiles
        yield
        return
    key = hashlib.sha256("\0".join([module, sys.executable, os.environ.get(
        "NUMBA_CACHE_DIR", "")]).encode()).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"prune_engine-compile-{key}.lock")
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
