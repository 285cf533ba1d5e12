"""One local Spark session for every test that runs Spark, and a Spark Connect session served
by it (fixtures, made visible to every test by ``tests/conftest.py``).

The session runs ``local[2]`` with the UI off, two shuffle partitions, and an explicit
session time zone that is not UTC and has daylight saving time, so that a test reading a
zoneless ``timestamp'...'`` as UTC would fail, and ANSI mode on (Spark 4's default, not 3.5's:
the same semantics on both). Its Python workers run this interpreter.

Where pyspark ships the Spark Connect server (Spark 4; 3.5 needs a separate download), the
same JVM serves Spark Connect on a free localhost port (``spark.plugins``), and the
``connect`` fixture is a Connect client session of it: the same ``local[2]`` cluster, the same
settings, reached over gRPC as a Spark 4 client, Databricks' shared clusters or serverless
reach theirs. ``any_session`` runs a test on both.
"""

from __future__ import annotations

import glob
import os
import socket
import sys
import tempfile

import pytest

from tests.spark.helpers import TIME_ZONE


def connect_server_shipped() -> bool:
    """Whether the installed pyspark carries the Spark Connect server (Spark 4 does)."""
    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    return bool(glob.glob(os.path.join(jars, "spark-connect_*.jar")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_PORT = _free_port()


@pytest.fixture(scope="session")
def classic_spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    builder = (SparkSession.builder.master("local[2]").appName("prune_engine-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", TIME_ZONE)
               .config("spark.sql.ansi.enabled", "true")
               .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="pe-warehouse-"))
               .config("spark.prune_engine.statsDir", tempfile.mkdtemp(prefix="pe-stats-")))
    if connect_server_shipped():
        builder = (builder.config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
                   .config("spark.connect.grpc.binding.address", "127.0.0.1")
                   .config("spark.connect.grpc.binding.port", str(_PORT)))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def session_conf(session, settings: dict[str, str]):
    """Set SQL settings on ``session`` for a block (a generator for a fixture); restore them."""
    before = {k: session.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        session.conf.set(k, v)
    try:
        yield session
    finally:
        for k, v in before.items():
            if v is None:
                session.conf.unset(k)
            else:
                session.conf.set(k, v)


@pytest.fixture(scope="session")
def spark(classic_spark):
    """The classic session."""
    return classic_spark


@pytest.fixture(scope="session")
def connect(classic_spark):
    """A Spark Connect session served by the shared ``local[2]`` session's JVM."""
    if not connect_server_shipped():
        pytest.skip("this pyspark ships no Spark Connect server (Spark 3.5 needs a download)")
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(f"sc://127.0.0.1:{_PORT}").getOrCreate()
    yield session
    session.stop()


@pytest.fixture(scope="module", params=["classic", "connect"])
def session(request, classic_spark):
    """The classic session, then the Connect session."""
    return classic_spark if request.param == "classic" else request.getfixturevalue("connect")
