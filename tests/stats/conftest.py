"""What the statistics tests share: an Iceberg catalog (PyIceberg's SQL catalog on SQLite)
with a namespace ``db``, one per test module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    from pyiceberg.catalog.sql import SqlCatalog

    d = tmp_path_factory.mktemp("iceberg")
    cat = SqlCatalog("t", uri=f"sqlite:///{d}/c.db", warehouse=f"file://{d}")
    cat.create_namespace("db")
    return cat
