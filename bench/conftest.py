"""Set-up of the benchmark suites: the import path, the ``--bench-sizes`` and ``--bench-rounds``
options.

``python bench/run.py [--quick]`` runs every suite and writes the report; one suite by hand::

    python -m pytest bench/test_bench_prune.py --benchmark-json=bench.json -q
    python bench/report.py bench.json

``--bench-sizes=1k,100k`` restricts the sizes (e.g. for a quick look); ``--bench-rounds=1``
caps the fixed round counts of the suites' slow benchmarks (``bench/run.py --quick`` uses both).

Fresh processes (first calls, a Spark session's new Python workers) import their modules from
compiled bytecode, as in an environment pip installed (it compiles ``.pyc`` files at install):
the session starts by compiling what they import (:func:`first_call.compile_bytecode`), so that
an installer that leaves bytecode out, or ``PYTHONDONTWRITEBYTECODE``, does not add the
compilation of every imported module (about a second) to their times.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# the bench modules import each other by plain name (``import peers``), whatever the import mode
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_addoption(parser):
    parser.addoption("--bench-sizes", default="1k,10k,100k,1M",
                     help="comma-separated container counts to benchmark, from 1k, 10k, 100k, 1M")
    parser.addoption("--bench-rounds", type=int, default=None,
                     help="at most this many timed rounds where a suite fixes its own count")


@pytest.fixture(scope="session", autouse=True)
def bytecode():
    from first_call import compile_bytecode

    compile_bytecode()


@pytest.fixture
def rounds(pytestconfig):
    """``rounds(n)``: a suite's own round count ``n``, capped by ``--bench-rounds``."""
    cap = pytestconfig.getoption("--bench-rounds")
    return lambda n: n if cap is None else max(1, min(n, cap))


@pytest.fixture(scope="module")
def spark():
    """A local[2] Spark session for one suite (UI off, two shuffle partitions, UTC)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("prune_engine-bench")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "2g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
