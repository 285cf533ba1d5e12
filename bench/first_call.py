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


def first_call_seconds(code: str, cache_dir: str) -> float:
    """Run ``code`` (it prints its own elapsed seconds) in a fresh interpreter."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def measure(benchmark, code: str, cache: str, what: str, cache_dir: Path) -> None:
    """Benchmark one first call (``cache`` is "cold" or "warm") into ``benchmark``; ``what``
    names the work timed in the report. A cold call starts from an empty ``cache_dir`` and
    leaves it filled, so that a warm call after it needs no compile of its own."""
    if cache == "cold":
        shutil.rmtree(cache_dir, ignore_errors=True)
    elif not cache_dir.exists():
        first_call_seconds(code, str(cache_dir))
    seconds = benchmark.pedantic(first_call_seconds, (code, str(cache_dir)), rounds=1,
                                 iterations=1)
    benchmark.extra_info.update(seconds_in_process=seconds, cache=cache, what=what)
