"""Spark's Python workers that cannot run prune_engine's tasks give one clear error.

A bare virtual environment (no pyarrow, no prune_engine) stands for ``python3`` from ``PATH``
of a session started without activating the project's venv. The session's worker Python is
what ``PYSPARK_PYTHON`` sets: ``SparkContext.pythonExec``, which every task carries.
"""

from __future__ import annotations

import subprocess
import sys
import venv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.errors import PruneEngineError
from prune_engine.spark import _workers
from tests.spark.helpers import arrow_frame

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python with the standard library only."""
    root = tmp_path_factory.mktemp("bare-venv")
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(root)
    python = str(root / "bin" / "python")
    assert subprocess.run([python, "-c", "import pyarrow"], capture_output=True).returncode != 0
    return python


@pytest.fixture
def workers_on(spark, monkeypatch):
    """Run the session's tasks on another Python for the duration of a test."""
    def switch(python: str) -> None:
        monkeypatch.setattr(spark.sparkContext, "pythonExec", python)
    return switch


def test_workers_without_pyarrow_raise_one_clear_error(spark, tmp_path, bare_python, workers_on):
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "part-0.parquet")
    workers_on(bare_python)
    with pytest.raises(PruneEngineError) as info:
        pes.collect_stats(spark, str(tmp_path), granularity="file")
    message = str(info.value)
    assert bare_python in message  # which Python the workers run
    assert "lacks pyarrow, numpy, numba, sqlglot" in message  # what it lacks
    assert "PYSPARK_PYTHON" in message and sys.executable in message  # the fix
    assert "Traceback" not in message and len(message.splitlines()) == 1


def test_prune_dataframe_checks_the_workers_before_its_task(spark, bare_python, workers_on):
    stats = pe.stats_from_arrow(pa.table({"x": [1, 5]}))
    frame = arrow_frame(spark, stats.to_arrow())
    workers_on(bare_python)
    with pytest.raises(PruneEngineError, match="lacks pyarrow"):
        pes.prune_dataframe(frame, "x > 1", schema=stats.schema)


def test_a_worker_python_spark_cannot_start(spark, tmp_path, workers_on):
    workers_on(str(tmp_path / "no-such-python"))
    with pytest.raises(PruneEngineError, match="could not run a Python task on its workers"):
        _workers.check_workers(spark)


def test_good_workers_are_probed_once(spark, monkeypatch):
    _workers.check_workers(spark)  # this interpreter: passes
    monkeypatch.setattr(spark.sparkContext, "parallelize", None)  # a second probe would fail
    _workers.check_workers(spark)


def test_a_statistics_job_runs_without_a_probe_and_vouches_for_the_workers(spark, tmp_path,
                                                                           monkeypatch):
    """The probe is a Spark job of its own (up to 0.6 s as a session's first): a statistics
    job runs without it, and workers that ran it need no probe later."""
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "part-0.parquet")
    monkeypatch.setattr(_workers, "_checked", set())

    def no_probe(_spark):
        raise AssertionError("the workers were probed before a job that succeeds")

    monkeypatch.setattr(_workers, "check_workers", no_probe)
    stats = pes.collect_stats(spark, str(tmp_path), granularity="file")
    assert stats.column("max_values").to_pylist() == [{"x": 3}]
    assert len(_workers._checked) == 1, "the workers that ran the job are known able"
