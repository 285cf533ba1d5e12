"""What prune_engine's Spark jobs share: their name in the Spark UI, and numba's cache.

Every job prune_engine runs on a classic session carries a job description
(``prune_engine: ...``) for the time it runs; the caller's description is restored
afterwards. A Spark Connect client cannot set job descriptions (the server names its jobs
after the operation), so there the jobs run unnamed.

The executors' Python workers compile the numba kernels on first use, like any process. They
share the driver's on-disk cache (``NUMBA_CACHE_DIR``, or numba's default next to the
package) when it is set in their environment before numba loads: the driver's choice travels
with each task and is set in the worker before the task imports prune_engine.
"""

from __future__ import annotations

import contextlib
import os

from prune_engine.spark._session import is_connect


@contextlib.contextmanager
def job_description(spark, text: str):
    """Name the Spark jobs run inside the block (Spark UI, event log; classic sessions)."""
    if is_connect(spark):
        yield
        return
    sc = spark.sparkContext
    before = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(text)
    try:
        yield
    finally:
        sc.setJobDescription(before)


def numba_cache_dir() -> str | None:
    """The driver's numba cache directory, when one is set."""
    return os.environ.get("NUMBA_CACHE_DIR") or None


def use_numba_cache(cache_dir: str | None) -> None:
    """In an executor: use ``cache_dir`` for numba's cache unless the worker has its own
    (only effective before numba is first imported in that worker)."""
    if cache_dir:
        os.environ.setdefault("NUMBA_CACHE_DIR", cache_dir)
