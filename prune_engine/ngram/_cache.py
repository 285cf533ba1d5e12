"""numba's cache of the n-gram kernels notices a change of :mod:`.format`'s constants.

The kernels (:mod:`._kernels`) are compiled with ``cache=True`` and read constants of
:mod:`.format` (VERSION, SALTS, BLOCK_BYTES, TRAILER_BYTES, KIND_*, FOLD_*, the markers):
numba compiles them into the machine code as literals. numba reuses a cached kernel while the
*source stamp* of the file that defines it is unchanged, and that stamp covers that file only
(its modification time and size up to numba 0.67, its content from 0.68); the rest of the key
of a cached kernel is its signature, the machine, its bytecode and its closure's contents.
So a constant changed in ``format.py`` alone would leave the old kernels in the cache, and
they would go on writing and reading the old bytes (a wrong index, without an error).

:class:`FormatStampedLocator` closes that gap. numba asks each class of its list
``CacheImpl._locator_classes`` in turn for a *locator* of a function it caches (the first
that answers ``from_function`` with a locator wins); the locator says where the cache files
go and gives the source stamp, which numba stores in the cache's index and compares on load.
:func:`install` puts this class at the front of that list (at the import of
:mod:`._kernels`, before any kernel compiles). It answers for the functions of ``_kernels.py``
next to this module only, with the locator numba would have chosen (so ``NUMBA_CACHE_DIR``,
the ``__pycache__`` folder and the user-wide folder are used exactly as before, with the same
file names), whose stamp it extends with :func:`format_fingerprint`. A different fingerprint
makes numba find the index stale: it compiles the kernel again and overwrites the entry. The
helper process that compiles kernels ahead (:mod:`._ahead`) imports :mod:`._kernels` too, so
it registers the same locator and computes the same stamp.

The fingerprint is of the *values* of format's constants, not of the file's bytes: editing
format's docs or its Python encoder changes no kernel and costs no recompile (seconds of a
first call), while any changed value does. Every upper-case name of :mod:`.format` bound to a
number, string or tuple counts, a superset of what the kernels read (one that they do not
read, like MAX_GRAM_SIZE, costs at most a needless recompile); a test checks that the kernels
import nothing else from :mod:`.format` (a function compiled into them would not be covered).

Limits: with ``NUMBA_CACHE_LOCATOR_CLASSES`` set (numba 0.62 and later), numba asks only the
classes it names, and this guard applies only if it names this class first. If a numba
release drops the list, :func:`install` does nothing (the kernels cache as before) and the
test of this module fails.
"""

from __future__ import annotations

import functools
import hashlib
import os

from prune_engine.ngram import format as _format

#: the file whose functions this locator answers for (the kernels' module, next to this one)
KERNELS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels.py")


def format_constants() -> dict[str, object]:
    """Every constant of :mod:`.format`: its upper-case names bound to numbers, strings or
    tuples (what a kernel can read as a literal).

    >>> format_constants()["VERSION"], len(format_constants()["SALTS"])
    (1, 8)
    """
    return {name: value for name, value in vars(_format).items()
            if name.isupper() and isinstance(value, (int, float, str, bytes, tuple))}


@functools.lru_cache(maxsize=1)
def format_fingerprint() -> str:
    """A digest of :func:`format_constants` (names and values), the same in every process."""
    text = repr(sorted(format_constants().items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _numba_locator_classes() -> list | None:
    """numba's list of locator classes (the same object from numba 0.59 to 0.68), or None."""
    try:
        from numba.core import caching
    except ImportError:
        return None
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    return classes if isinstance(classes, list) else None


def _is_kernels_file(py_file: str) -> bool:
    return (os.path.normcase(os.path.abspath(py_file))
            == os.path.normcase(KERNELS_FILE))


class FormatStampedLocator:
    """numba's cache locator of the kernels of :mod:`._kernels`: the locator numba would pick
    otherwise, its source stamp extended with :func:`format_fingerprint` (see the module doc).

    It implements what numba asks of a locator (``from_function``, ``ensure_cache_path``,
    ``get_cache_path``, ``get_source_stamp``, ``get_disambiguator``, and ``_py_file``, which
    numba names in a warning) and passes everything but the stamp to the wrapped locator.
    """

    def __init__(self, inner, py_file: str):
        self._inner = inner
        self._py_file = py_file

    @classmethod
    def from_function(cls, py_func, py_file: str):
        """A locator for ``py_func`` if it is defined in ``_kernels.py``, else None (numba
        then asks its own locators, as without this class)."""
        if not _is_kernels_file(py_file):
            return None
        for other in _numba_locator_classes() or ():
            if other is not cls:
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, py_file)
        return None

    def ensure_cache_path(self) -> None:
        self._inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        return self._inner.get_cache_path()

    def get_disambiguator(self) -> str:
        return self._inner.get_disambiguator()

    def get_source_stamp(self):
        """The wrapped locator's stamp of ``_kernels.py``, and the fingerprint of the format's
        constants (numba pickles the stamp into the index and compares it on load)."""
        return self._inner.get_source_stamp(), format_fingerprint()


def install() -> bool:
    """Put :class:`FormatStampedLocator` at the front of numba's locator classes (once; a
    class of an earlier import of this module is replaced). False if this numba has no such
    list."""
    classes = _numba_locator_classes()
    if classes is None:
        return False
    cls = FormatStampedLocator
    classes[:] = [c for c in classes if (getattr(c, "__module__", None), c.__qualname__)
                  != (cls.__module__, cls.__qualname__)]
    classes.insert(0, cls)
    return True
