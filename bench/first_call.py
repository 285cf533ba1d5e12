"""The first call of a numba-backed function in a fresh process, with numba's cache cold or warm.

A user pays this once per process (warm cache) or once per install (cold cache: the kernels
compile and are written to the cache).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


#: the packages a fresh process of the benchmarks imports
IMPORTED = ("prune_engine", "pyarrow", "numpy", "pandas", "numba", "llvmlite", "pyspark", "py4j",
            "cloudpickle", "sqlglot", "duckdb")


def compile_bytecode() -> None:
    """Compile the ``.pyc`` files of :data:`IMPORTED` where they are missing (as pip does at
    install), so that a fresh process does not compile their sources on import."""
    import compileall
    import importlib.util

    for name in IMPORTED:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=2, workers=0)


def run_fresh(code: str, cache_dir: str, *args: str, env: dict | None = None) -> str:
    """Run ``code`` (with ``args`` as ``sys.argv[1:]``) in a fresh interpreter whose numba cache
    is ``cache_dir`` (and with ``env`` added to its environment); the last line it prints."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, **(env or {}))
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise AssertionError(f"first-call process failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def first_call_seconds(code: str, cache_dir: str, env: dict | None = None) -> float:
    """Run ``code`` (it prints its own elapsed seconds) in a fresh interpreter."""
    return float(run_fresh(code, cache_dir, env=env))


def prepare_cache(cache: str, cache_dir: Path, fill) -> None:
    """Make ``cache_dir`` empty for a "cold..." call, or filled (by ``fill()`` if it is not yet)
    for a "warm" one. A cold call leaves it filled, so that a warm call after it needs no
    compile of its own."""
    if cache.startswith("cold"):
        shutil.rmtree(cache_dir, ignore_errors=True)
    elif not cache_dir.exists():
        fill()


def measure(benchmark, code: str, cache: str, what: str, cache_dir: Path,
            env: dict | None = None) -> None:
    """Benchmark one first call (``cache`` is "cold..." or "warm", see :func:`prepare_cache`)
    into ``benchmark``; ``what`` names the work timed in the report."""
    prepare_cache(cache, cache_dir, lambda: first_call_seconds(code, str(cache_dir)))
    seconds = benchmark.pedantic(first_call_seconds, (code, str(cache_dir), env), rounds=1,
                                 iterations=1)
    benchmark.extra_info.update(seconds_in_process=seconds, cache=cache, what=what)
