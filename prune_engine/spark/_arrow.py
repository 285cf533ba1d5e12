"""Spark DataFrames collected to the driver as Arrow tables.

The buffers Spark hands out are read-only; the engine reads them as they are
(``tests/evaluate/test_readonly_buffers.py``), so nothing is copied.
"""

from __future__ import annotations

import pyarrow as pa


def to_arrow(df) -> pa.Table:
    """A Spark DataFrame collected to the driver as an Arrow table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_batches(df._collect_as_arrow())
