"""Spark's Python workers: can they run prune_engine's tasks?

A session started from a virtual environment's Python without activating it runs its Python
workers on ``python3`` from ``PATH`` (Spark's default for ``PYSPARK_PYTHON``), which usually
lacks pyarrow and prune_engine; the first task then dies with a long worker traceback. Before
its first job on the workers, prune_engine runs one tiny task that reports the workers'
Python and the modules it cannot find, and turns a missing one into one clear error naming
the fix. The answer is remembered per Spark application (or Connect session), so a session
pays the probe once: one task, 0.1-0.2 s on local[2] once the workers run (the session's first Python
task starts them, 1.2-1.7 s, whichever job runs it), and up to 0.6 s as the session's first
job on the workers.

A job that runs at once (a statistics job, not a lazy DataFrame) need not probe first: it runs
inside :func:`checked_on_failure`, which probes only when the job fails (so the error still
names the fix), and records workers that ran it as able.
"""

from __future__ import annotations

import contextlib
import json
import sys

from prune_engine.errors import PruneEngineError
from prune_engine.spark._jobs import job_description
from prune_engine.spark._session import functions, is_connect, session_key

#: what a task of prune_engine imports on a worker (prune_engine's own dependencies included)
NEEDED = ("pyarrow", "numpy", "numba", "sqlglot", "prune_engine")

_FIX = ("start the session with PYSPARK_PYTHON (or spark.pyspark.python) set to a Python that "
        f"has prune_engine[spark], for example the driver's (PYSPARK_PYTHON={sys.executable}), "
        "or install prune_engine[spark] on the executors")

#: (session, worker Python) pairs already probed and found able
_checked: set[tuple[str, str]] = set()


def check_workers(spark) -> None:
    """Raise :class:`~prune_engine.PruneEngineError` when Spark's Python workers cannot run
    prune_engine's tasks (a missing module, or a worker Python Spark cannot start)."""
    python = "" if is_connect(spark) else str(spark.sparkContext.pythonExec)
    key = (session_key(spark), python)
    if key in _checked:
        return
    needed = NEEDED

    def probe(_):
        """On a worker: its Python and the needed modules it cannot find, as JSON. A nested
        function, so cloudpickle sends it by value: the worker may not have prune_engine."""
        import importlib.util
        import json as worker_json
        import platform
        import sys as worker_sys

        missing = [m for m in needed if importlib.util.find_spec(m) is None]
        return worker_json.dumps([worker_sys.executable, platform.python_version(), missing])

    try:
        with job_description(spark, "prune_engine: check the workers' Python"):
            if is_connect(spark):  # a plain Python UDF: needs no pyarrow on the workers
                F = functions(spark)
                answer = spark.range(0, 1, 1, 1).select(F.udf(probe, "string")("id")).first()[0]
            else:
                answer = spark.sparkContext.parallelize([0], 1).map(probe).collect()[0]
    except Exception as e:  # noqa: BLE001 - Spark wraps a worker's failure in several types
        where = repr(python) if python else "the workers' Python"
        raise PruneEngineError(f"Spark could not run a Python task on its workers "
                               f"({where}: {_reason(e)}): {_FIX}") from None
    executable, version, missing = json.loads(answer)
    if missing:
        raise PruneEngineError(
            f"Spark's Python workers run {executable!r} (Python {version}), which lacks "
            f"{', '.join(missing)} (the driver runs {sys.executable!r}): {_FIX}")
    _checked.add(key)


@contextlib.contextmanager
def checked_on_failure(spark):
    """Run the block's Spark job of prune_engine's tasks without a probe before it: when it
    fails, :func:`check_workers` raises its clear error if the workers cannot run the tasks
    (else the job's own error goes through); when it succeeds, the workers are recorded as
    able (no later probe)."""
    python = "" if is_connect(spark) else str(spark.sparkContext.pythonExec)
    key = (session_key(spark), python)
    try:
        yield
    except Exception:
        if key not in _checked:
            check_workers(spark)
        raise
    _checked.add(key)


def _reason(error: Exception) -> str:
    """The line of a Spark job failure that says what went wrong in the worker."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    for marker in ("PYTHON_VERSION_MISMATCH", "different version", "Cannot run program", "Error:"):
        for line in lines:
            if marker in line:
                return line[:300]
    return lines[0][:300] if lines else type(error).__name__

