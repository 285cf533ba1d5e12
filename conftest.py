"""Every temporary file of a test or benchmark run lives under pytest's base temporary directory.

Doctests and fixtures call ``tempfile.mkdtemp()`` as a user would, and the Spark sessions keep
their warehouse and saved statistics in such folders; pytest prunes its base directories
(the last three runs stay), so runs do not fill the disk. Child processes (the first-call
benchmarks, numba's compile child, Spark's Python workers) get the same folder as ``TMPDIR``.
"""

from __future__ import annotations

import os
import tempfile

import pytest


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_under_basetemp(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tempfile"))
    previous, previous_env = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir, os.environ["TMPDIR"] = folder, folder
    yield
    tempfile.tempdir = previous
    if previous_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = previous_env
