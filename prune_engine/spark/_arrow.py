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
    batches = df._collect_as_arrow()  # Spark 3.5: no batch at all for no rows
    if batches:
        return pa.Table.from_batches(batches)
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema).empty_table()
