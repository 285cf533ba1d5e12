"""Arrow tables that come out of Spark, in memory of their own.

Arrow data read from Spark (``toArrow``, the batches of ``mapInArrow``, an IPC stream) lives
in read-only buffers. The engine's numba kernels take writable arrays, so every table handed
to it from here is first copied into freshly allocated (writable) buffers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def owned(table: pa.Table) -> pa.Table:
    """``table`` copied into new, writable buffers (one pass over the data)."""
    return table.take(pa.array(np.arange(table.num_rows, dtype=np.int64)))


def to_arrow(df) -> pa.Table:
    """A Spark DataFrame collected to the driver as an Arrow table of its own."""
    if hasattr(df, "toArrow"):
        return owned(df.toArrow())
    return owned(pa.Table.from_batches(df._collect_as_arrow()))
