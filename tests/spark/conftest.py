"""One local Spark session for every test of prune_engine.spark.

The session runs ``local[2]`` with the UI off, two shuffle partitions, and an explicit
session time zone that is not UTC and has daylight saving time, so that a test reading a
zoneless ``timestamp'...'`` as UTC would fail, and ANSI mode on (Spark 4's default, not 3.5's:
the same semantics on both). Its Python workers run this interpreter.
"""

from __future__ import annotations

import os
import sys

import pytest

from tests.spark.helpers import TIME_ZONE


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    session = (SparkSession.builder.master("local[2]").appName("prune_engine-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", TIME_ZONE)
               .config("spark.sql.ansi.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
