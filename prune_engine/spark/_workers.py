"""Spark's Python workers: can they run prune_engine's tasks?

A session started from a virtual environment's Python without activating it runs its Python
workers on ``python3`` from ``PATH`` (Spark's default for ``PYSPARK_PYTHON``), which usually
lacks pyarrow and prune_engine; the first task then dies with a long worker traceback. Before
its first job on the workers, prune_engine runs one tiny task that reports the workers'
Python and the modules it cannot find, and turns a missing one into one clear error naming
the fix. The answer is remembered per SparkContext and worker Python, so a session pays the
probe once: one task, 0.1-0.2 s on local[2] once the workers run (the session's first Python
task starts them, 1.2-1.7 s, whichever job runs it).
"""

from __future__ import annotations

import sys

from prune_engine.errors import PruneEngineError
from prune_engine.spark._jobs import job_description

#: what a task of prune_engine imports on a worker (prune_engine's own dependencies included)
NEEDED = ("pyarrow", "numpy", "numba", "sqlglot", "prune_engine")

_FIX = ("start the session with PYSPARK_PYTHON (or spark.pyspark.python) set to a Python that "
        f"has prune_engine[spark], for example the driver's (PYSPARK_PYTHON={sys.executable}), "
        "or install prune_engine[spark] on the executors")

#: (SparkContext, worker Python) pairs already probed and found able
_checked: set[tuple[int, str]] = set()


def check_workers(spark) -> None:
    """Raise :class:`~prune_engine.PruneEngineError` when Spark's Python workers cannot run
    prune_engine's tasks (a missing module, or a worker Python Spark cannot start)."""
    sc = spark.sparkContext
    key = (id(sc._jsc), str(sc.pythonExec))
    if key in _checked:
        return
    needed = NEEDED

    def probe(_):
        """On a worker: its Python and the needed modules it cannot find. A nested function,
        so cloudpickle sends it by value: the worker may not have prune_engine to import."""
        import importlib.util
        import platform
        import sys as worker_sys

        missing = [m for m in needed if importlib.util.find_spec(m) is None]
        return worker_sys.executable, platform.python_version(), missing

    try:
        with job_description(spark, "prune_engine: check the workers' Python"):
            executable, version, missing = sc.parallelize([0], 1).map(probe).collect()[0]
    except Exception as e:  # noqa: BLE001 - Spark wraps a worker's failure in several types
        raise PruneEngineError(f"Spark could not run a Python task on its workers "
                               f"({sc.pythonExec!r}: {_reason(e)}): {_FIX}") from None
    if missing:
        raise PruneEngineError(
            f"Spark's Python workers run {executable!r} (Python {version}), which lacks "
            f"{', '.join(missing)} (the driver runs {sys.executable!r}): {_FIX}")
    _checked.add(key)


def _reason(error: Exception) -> str:
    """The line of a Spark job failure that says what went wrong in the worker."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    for marker in ("PYTHON_VERSION_MISMATCH", "different version", "Cannot run program", "Error:"):
        for line in lines:
            if marker in line:
                return line[:300]
    return lines[0][:300] if lines else type(error).__name__

