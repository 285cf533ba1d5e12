"""numba's cache of the n-gram kernels notices a change of format.py's constants
(ngram/_cache.py): the kernels bake them in, and numba alone watches only _kernels.py."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
from numba.core import caching

from prune_engine.ngram import _cache
from prune_engine.ngram import _kernels as K
from prune_engine.ngram import format as F

#: one 40-byte entry for the checksum kernel, the cheapest kernel that bakes a constant of the
#: format (TRAILER_BYTES: it hashes the bytes before the trailer, and reads the trailer)
DATA = bytes(range(40))

#: runs the checksum kernel of the package copy in ``argv[1]`` (a bare package, as the helper
#: of ngram/_ahead.py does: only the kernels' modules are imported) with numba's cache in
#: ``argv[2]``; then, with a folder ``argv[3]``, without the format-stamped locator (numba
#: alone) in that cache. Prints the outputs of each, and whether numba loaded the kernel from
#: its cache or compiled it.
PROGRAM = """
import json, os, sys, types
package = types.ModuleType("prune_engine")
package.__path__ = [sys.argv[1]]
sys.modules["prune_engine"] = package
import numpy as np
from numba import njit
from numba.core import caching, config
from prune_engine.ngram import _cache, _kernels as K

def use_cache(folder):
    os.environ["NUMBA_CACHE_DIR"] = folder
    config.reload_config()

def run(kernel, dispatcher):
    data = K.ro(np.frombuffer(bytes(range(40)), np.uint8), np.uint8)
    words = np.zeros((5, 1), np.uint64)
    kernel(data, K.ro(np.array([0, 40]), np.int64), K.ro(np.ones(1, np.bool_), np.bool_), *words)
    stats = dispatcher().stats
    return {"sum": int(words[0, 0]), "trailer": int(words[4, 0]),
            "loaded": sum(stats.cache_hits.values()),
            "compiled": sum(stats.cache_misses.values())}

use_cache(sys.argv[2])
out = {"guarded": run(K.checksums, lambda: K.checksums.dispatcher)}
if len(sys.argv) > 3:
    caching.CacheImpl._locator_classes.remove(_cache.FormatStampedLocator)
    use_cache(sys.argv[3])
    alone = njit(K.checksums.signature, cache=True)(K.checksums.py_func)
    out["numba alone"] = run(alone, lambda: alone)
print(json.dumps(out))
"""


def run(package: Path, *caches: Path) -> dict:
    """Run :data:`PROGRAM` on ``package`` with these cache folders; its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE_")}
    env.update(PRUNE_ENGINE_COMPILE_AHEAD="0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(package), *map(str, caches)],
                          env=env, cwd=package.parent, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def checksums_with(trailer_bytes: int, **how) -> dict:
    """What the checksum kernel must output with ``TRAILER_BYTES = trailer_bytes``."""
    end = len(DATA) - trailer_bytes
    return {"sum": F.xxh64(DATA[:end]), "trailer": int.from_bytes(DATA[end:end + 8], "little"),
            **how}


def test_a_changed_format_constant_recompiles_the_cached_kernel(tmp_path):
    """A kernel cached with one TRAILER_BYTES compiles again once format.py holds another
    (_kernels.py untouched, its mtime too), and is cached again; numba alone, in a cache of its
    own, loads the kernel of the old constant (so this test fails without the guard)."""
    package = tmp_path / "src" / "prune_engine"
    shutil.copytree(Path(K.__file__).parents[1], package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    kernels, fmt = package / "ngram" / "_kernels.py", package / "ngram" / "format.py"
    kernels_stamp = (kernels.stat().st_mtime_ns, kernels.stat().st_size)
    guarded, alone = tmp_path / "cache", tmp_path / "cache_of_numba_alone"

    old = checksums_with(8)
    compiled = dict(old, loaded=0, compiled=1)
    assert run(package, guarded, alone) == {"guarded": compiled, "numba alone": compiled}

    source = fmt.read_text()
    assert source.count("\nTRAILER_BYTES = 8\n") == 1
    fmt.write_text(source.replace("\nTRAILER_BYTES = 8\n", "\nTRAILER_BYTES = 16\n"))
    assert (kernels.stat().st_mtime_ns, kernels.stat().st_size) == kernels_stamp

    new = checksums_with(16)
    after = run(package, guarded, alone)
    assert after["guarded"] == dict(new, loaded=0, compiled=1), "compiled again: new constant"
    # numba alone loads its cached kernel, the old constant baked in (what the guard fixes)
    assert after["numba alone"] == dict(old, loaded=1, compiled=0)
    assert run(package, guarded) == {"guarded": dict(new, loaded=1, compiled=0)}, "then cached"


def _kernel_functions():
    return [K.checksums.py_func, K.probe_entries.py_func, K.build_entries.py_func,
            K.build_entries_ascii.py_func]


def _elsewhere(x):
    return x


def test_the_locator_answers_for_the_kernels_only(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    assert caching.CacheImpl._locator_classes[0] is _cache.FormatStampedLocator
    assert caching.CacheImpl._locator_classes.count(_cache.FormatStampedLocator) == 1
    for py_func in _kernel_functions():
        locator = caching.FunctionCache(py_func)._impl.locator
        assert isinstance(locator, _cache.FormatStampedLocator), py_func.__name__
        inner = locator._inner
        assert type(inner) in caching.CacheImpl._locator_classes[1:], "numba's own choice"
        assert locator.get_cache_path() == inner.get_cache_path()
        assert locator.get_cache_path().startswith(str(tmp_path)), "NUMBA_CACHE_DIR still holds"
        assert locator.get_disambiguator() == inner.get_disambiguator()
        assert locator.get_source_stamp() == (inner.get_source_stamp(),
                                              _cache.format_fingerprint())
    for py_func in (_elsewhere, F.xxh64):
        assert _cache.FormatStampedLocator.from_function(
            py_func, py_func.__code__.co_filename) is None
        locator = caching.FunctionCache(py_func)._impl.locator
        assert not isinstance(locator, _cache.FormatStampedLocator)


def test_installing_again_keeps_one_locator():
    classes = caching.CacheImpl._locator_classes
    before = list(classes)
    assert _cache.install() and _cache.install()
    assert classes == before


def test_the_fingerprint_covers_every_name_the_kernels_import_from_the_format(monkeypatch):
    """A name imported from format.py into _kernels.py is compiled into the kernels: it must be
    one of the constants of the fingerprint (a function would not be covered), and a change of
    its value must change the fingerprint."""
    tree = ast.parse(Path(K.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").endswith("ngram.format") for alias in node.names}
    assert {"VERSION", "SALTS", "TRAILER_BYTES"} <= imported
    assert imported <= set(_cache.format_constants())
    fingerprint = _cache.format_fingerprint.__wrapped__  # not the value cached for this process
    before = fingerprint()
    assert before == _cache.format_fingerprint()
    for name in sorted(imported):
        value = getattr(F, name)
        monkeypatch.setattr(F, name, value + (1,) if isinstance(value, tuple) else value + 1)
        assert fingerprint() != before, name
        monkeypatch.setattr(F, name, value)
    assert fingerprint() == before
