"""Whether this pyarrow writes Parquet Bloom filters (``bloom_filter_options``, pyarrow 22 and
later): the tests that write their files with pyarrow need it. Reading does not: on an older
pyarrow (the declared floor, 18) the files DuckDB and Spark write test it."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def pyarrow_writes_bloom() -> bool:
    try:
        pq.write_table(pa.table({"k": [1]}), io.BytesIO(), bloom_filter_options={"k": True})
    except TypeError:
        return False
    return True


needs_bloom_writer = pytest.mark.skipif(
    not pyarrow_writes_bloom(),
    reason=f"pyarrow {pa.__version__} cannot write Parquet Bloom filters (22 and later can); "
           "the DuckDB- and Spark-written files test reading with this pyarrow")
