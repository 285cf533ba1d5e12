"""The wide nested file of the scan bench and tests: a 20-child struct and a list of structs.

``write_wide(path, rows, row_groups)`` writes ``id`` (int64, ascending), ``s`` (a struct of
random int64 children ``c00``...) and ``orders`` (a list of ``struct<sku: int64, price:
double>``, 0-3 per row). ``leaf_bytes`` sums the compressed size of leaf column chunks: what a
reader that reads only those leaves must read.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "w.parquet")
>>> write_wide(path, rows=1000, row_groups=2, children=3)
>>> leaf_bytes(path, ["s.c01"]) > 0
True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def write_wide(path: str, rows: int, row_groups: int, children: int = 20, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    struct = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 10**12, rows)) for _ in range(children)],
        names=[f"c{i:02d}" for i in range(children)])
    lengths = rng.integers(0, 4, rows)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    total = int(offsets[-1])
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 10**9, total)), pa.array(rng.random(total))],
        names=["sku", "price"])
    table = pa.table({"id": np.arange(rows, dtype=np.int64), "s": struct,
                      "orders": pa.ListArray.from_arrays(offsets, items)})
    pq.write_table(table, path, row_group_size=rows // row_groups)


def leaf_bytes(path: str, leaves: list[str], row_groups=None) -> int:
    """Compressed bytes of the column chunks of ``leaves`` (Parquet dotted paths)."""
    meta = pq.read_metadata(path)
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    groups = range(meta.num_row_groups) if row_groups is None else row_groups
    return sum(meta.row_group(r).column(names.index(leaf)).total_compressed_size
               for r in groups for leaf in leaves)
