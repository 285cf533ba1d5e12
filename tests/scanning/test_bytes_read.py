"""Bytes actually read, counted by a filesystem wrapper: the scan reads the selected leaves'
column chunks (and the footer), not the struct or list around them."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import prune_engine as pe

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from counting_fs import CountingFileSystem  # noqa: E402
from wide import leaf_bytes, write_wide  # noqa: E402

ROWS = 200_000
CHILDREN = 20


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """A 20-child struct of random int64s and a list of structs, 4 row groups."""
    path = str(tmp_path_factory.mktemp("wide") / "wide.parquet")
    write_wide(path, ROWS, 4, CHILDREN, seed=3)
    return path


def _scan_bytes(path: str, **kwargs) -> tuple[int, pa.Table]:
    fs = CountingFileSystem()
    table = pe.scan(ds.dataset(path, filesystem=fs, format="parquet"), **kwargs)
    return fs.bytes_read, table


def test_one_leaf_of_a_20_child_struct(wide):
    leaf = leaf_bytes(wide, ["s.c07"])
    read, table = _scan_bytes(wide, columns=["s.c07"])
    assert table.schema.field("s").type == pa.struct([("c07", pa.int64())])
    assert read <= 1.2 * leaf, f"read {read} bytes for a leaf of {leaf} bytes of chunks"


def test_one_leaf_inside_a_list_of_structs(wide):
    leaf = leaf_bytes(wide, ["orders.list.element.price"])
    read, table = _scan_bytes(wide, columns=["orders.price"])
    assert str(table.schema.field("orders").type) == "list<element: struct<price: double>>"
    assert read <= 1.2 * leaf, f"read {read} bytes for a leaf of {leaf} bytes of chunks"


def test_filter_columns_are_read_too_but_only_them(wide):
    leaves = leaf_bytes(wide, ["s.c07"]) + leaf_bytes(wide, ["id"])
    read, table = _scan_bytes(wide, columns=["s.c07"], where="id < 10",
                              stats=pe.collect_stats(wide, progress=False))
    assert table.num_rows == 10
    # id < 10 keeps the first row group only: a quarter of both leaves
    assert read <= 1.2 * leaves / 4 + 200_000, f"read {read} bytes; both leaves are {leaves}"


def test_the_peers_read_the_whole_struct(wide):
    """What the issue measured: pyarrow's dataset scanner with ds.field and read_table with a
    dotted name read the whole struct; the scan must not (the reason this path exists)."""
    leaf = leaf_bytes(wide, ["s.c07"])
    fs = CountingFileSystem()
    ds.dataset(wide, filesystem=fs, format="parquet").to_table(
        columns={"c07": ds.field("s", "c07")})
    assert fs.bytes_read > 10 * leaf
