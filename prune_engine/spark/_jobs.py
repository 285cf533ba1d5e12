"""What prune_engine's Spark jobs share: their name in the Spark UI, and numba's cache.

Every job prune_engine runs carries a job description (``prune_engine: ...``, the Spark UI's
"Description" column) for the time it runs; the caller's description is restored
afterwards. On a classic session it is the thread's ``spark.job.description`` local
property (``SparkContext.setJobDescription``). A Spark Connect client has no local
properties, but the server takes the session's ``spark.job.description`` setting as the
description of the jobs it runs (else it names them after the plan): so there it is set
in the session's settings, and names the session's jobs from every thread while it is set.

The executors' Python workers compile the numba kernels on first use, like any process. They
share the driver's on-disk cache (``NUMBA_CACHE_DIR``, or numba's default next to the
package) when it is set in their environment before numba loads: the driver's choice travels
with each task and is set in the worker before the task imports prune_engine.
"""

from __future__ import annotations

import contextlib
import os

from prune_engine.spark._session import is_connect


#: the local property (classic) and the session setting (Connect) Spark names jobs by
DESCRIPTION = "spark.job.description"


@contextlib.contextmanager
def job_description(spark, text: str):
    """Name the Spark jobs run inside the block (Spark UI, event log; see the module doc)."""
    if is_connect(spark):
        conf = spark.conf
        before = conf.get(DESCRIPTION, None)
        conf.set(DESCRIPTION, text)
        try:
            yield
        finally:
            conf.unset(DESCRIPTION) if before is None else conf.set(DESCRIPTION, before)
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
