"""The differential sweep over other writers' shapes (issue #34's check), in the suite.

Each test writes boundary values of one column (:mod:`tests.oracle.boundary`: each value
alone, adjacent pairs, nulls, NaN, empty containers) the way another writer lays them out, reads
the statistics through the route a user has for those files, and checks random and boundary
predicates against DuckDB on the rows, both ways (:class:`~tests.oracle.classify.ClassifyTally`):
no container holding a matching row is pruned, and none called ``"all"`` holds a row where the
predicate is not TRUE.

- Spark's INT96 timestamps from year 1 to 9999 (far-future sentinels past the nanosecond range
  included), with and without an Arrow schema in the file, through ``collect_stats`` and its
  ``compute_missing``;
- a Delta double column widened from float, half of its files written while it was a float,
  with the log's statistics as Spark writes them (the float's shortest text);
- decimal(38) bounds at scales 0, 10 and 38 from Parquet footers, a Spark-shaped Delta log and
  Iceberg manifests, and Iceberg identity partitions on a decimal(38) column.

Deterministic: every round is seeded by its test's parameters.
"""

from __future__ import annotations

import math
import os
import random

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
from tests.oracle.boundary import boundary_case, boundary_predicates, boundary_values
from tests.oracle.classify import ClassifyTally
from tests.oracle.data import CID, Case, Leaf
from tests.oracle.duck import DuckOracle
from tests.oracle.predicates import random_predicate
from tests.oracle.stats import align, parquet_stats
from tests.stats.delta_logs import field, spark_stats, widened, write_table
from tests.stats.iceberg_support import rows_by_file

ORACLE = DuckOracle()
BOUNDARY_BUDGET = 250
RANDOM_PREDICATES = 60

#: Spark's range: years 1 to 9999, in microseconds since the epoch
YEAR_1 = -62135596800 * 10**6
YEAR_9999_END = 253402300799999999
#: far-future sentinels of slowly changing dimensions ("valid until forever")
SENTINELS = [253402128000000000, 253402214400000000]  # 9999-12-30, 9999-12-31


def _predicates(rnd, case: Case):
    return (boundary_predicates(rnd, case, BOUNDARY_BUDGET)
            + [random_predicate(rnd, case) for _ in range(RANDOM_PREDICATES)])


def _assert_sound(tally: ClassifyTally, at_least: int) -> None:
    assert not tally.violations, f"{len(tally.violations)} wrong answers\n\n" + \
        "\n\n".join(tally.violations[:10])
    tally.assert_answered(at_least)


def _case_of(leaf: Leaf, rows: pa.Table, cids: list[str]) -> Case:
    """The oracle's case for rows read back from the files (``CID`` = the stats' container)."""
    column = rows.column(leaf.name)
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())
    ids = rows.column(CID).to_pylist()
    return Case(table=rows.select([leaf.name, CID]), leaves=[leaf], cids=cids,
                sizes=[ids.count(c) for c in cids], values={leaf.name: column.to_pylist()})


# --------------------------------------------------------------------------- Spark's INT96

def _spark_timestamps(leaf: Leaf) -> list[int]:
    """The microsecond boundary values Spark can write (years 1 to 9999), with the sentinels."""
    pool = [v for v in boundary_values(leaf) if YEAR_1 <= v <= YEAR_9999_END]
    return sorted({*pool, *SENTINELS, YEAR_9999_END, YEAR_9999_END - 1})


@pytest.mark.parametrize("zone, arrow_schema", [(None, False), (None, True), ("UTC", True)])
def test_spark_int96_timestamps(tmp_path, zone, arrow_schema):
    """Spark writes INT96 without an Arrow schema (the zone is then lost: the file's column
    reads as a zone-less timestamp); pyarrow can write INT96 with its schema, zone included. Statistics from
    the footers (INT96 has no usable min/max: only null counts) and from ``compute_missing``
    (bounds computed from the rows) must both hold values past 2262."""
    leaf = Leaf(("ts",), "timestamp", pa.timestamp("us", tz=zone))
    rnd = random.Random(f"int96-{zone}-{arrow_schema}")
    case = boundary_case(rnd, leaf, pool=_spark_timestamps(leaf))
    tally = ClassifyTally(ORACLE)
    preds = _predicates(rnd, case)
    for collect in ({}, {"compute_missing": True}):
        stats, held = parquet_stats(case, tmp_path / f"spark-{len(collect)}.parquet", collect,
                                    use_deprecated_int96_timestamps=True,
                                    store_schema=arrow_schema)
        assert stats.schema.field("min_values").type.field("ts").type.unit == "us"
        tally.check(held, {f"collect_stats{collect}": stats}, preds,
                    label=f"int96 zone={zone} schema={arrow_schema}")
    _assert_sound(tally, 300)
    # the far rows were seen: compute_missing gives true bounds past 2262
    computed = stats.column("max_values").to_pylist()
    assert any(m and m["ts"] is not None and m["ts"].year == 9999 for m in computed)


# --------------------------------------------------------------------------- Delta widening

def _f32_values() -> list[float]:
    """float32 boundary values (as the doubles they read as), without infinities (Spark's
    JSON statistics have no spelling for them)."""
    leaf = Leaf(("f",), "float", pa.float32())
    return [v for v in boundary_values(leaf) if math.isfinite(v)] + \
        [float(np.float32(x)) for x in (3.4, 0.1, 2.2, 123456.79, 7.0e-10)]


def test_delta_float_widened_to_double(tmp_path):
    """A double column widened from float: even containers are files written while it was a
    float (float32 data, the log's text the float's shortest spelling), odd ones after."""
    leaf = Leaf(("f",), "float", pa.float64())
    rnd = random.Random("delta-widening")
    case = boundary_case(rnd, leaf, pool=sorted(set(_f32_values())))
    files = []
    for i, cid in enumerate(case.cids):
        rows = case.table.slice(sum(case.sizes[:i]), case.sizes[i]).select(["f"])
        data = rows.cast(pa.schema([("f", pa.float32())])) if i % 2 == 0 else rows
        files.append({"name": f"{cid}.parquet", "data": data, "stats": spark_stats(data)})
    root = write_table(tmp_path / "t", [field("f", "double", widened(("float", "double")))],
                       files, features=["typeWidening"])
    stats = pe.stats_from_delta(root)
    ids = [os.path.basename(p).removesuffix(".parquet") for p in stats.column("path").to_pylist()]
    stats = align(case, stats.table, ids)
    tally = ClassifyTally(ORACLE)
    tally.check(case, {"stats_from_delta": stats}, _predicates(rnd, case), label="delta widening")
    _assert_sound(tally, 200)


# --------------------------------------------------------------------------- decimal(38)

DECIMALS = [pa.decimal128(38, 0), pa.decimal128(38, 10), pa.decimal128(38, 38)]


def _decimal_leaf(typ) -> Leaf:
    return Leaf(("d",), "decimal", typ)


@pytest.mark.parametrize("typ", DECIMALS, ids=str)
def test_decimal38_from_parquet_footers(tmp_path, typ):
    rnd = random.Random(f"parquet-{typ}")
    case = boundary_case(rnd, _decimal_leaf(typ))
    stats, held = parquet_stats(case, tmp_path / "d.parquet")
    tally = ClassifyTally(ORACLE)
    tally.check(held, {"collect_stats": stats}, _predicates(rnd, case), label=f"parquet {typ}")
    _assert_sound(tally, 200)


@pytest.mark.parametrize("typ", DECIMALS, ids=str)
def test_decimal38_from_a_spark_delta_log(tmp_path, typ):
    """Spark writes a decimal's statistics as exact JSON numbers."""
    rnd = random.Random(f"delta-{typ}")
    case = boundary_case(rnd, _decimal_leaf(typ))
    files = [{"name": f"{cid}.parquet", "stats": spark_stats(data),
              "data": data}
             for cid, data in ((cid, case.table.slice(sum(case.sizes[:i]), case.sizes[i])
                                .select(["d"])) for i, cid in enumerate(case.cids))]
    root = write_table(tmp_path / "t", [field("d", f"decimal({typ.precision},{typ.scale})")],
                       files)
    stats = pe.stats_from_delta(root)
    ids = [os.path.basename(p).removesuffix(".parquet") for p in stats.column("path").to_pylist()]
    tally = ClassifyTally(ORACLE)
    tally.check(case, {"stats_from_delta": align(case, stats.table, ids)},
                _predicates(rnd, case), label=f"delta {typ}")
    _assert_sound(tally, 200)


def _iceberg_case(table, leaf: Leaf, case: Case) -> tuple[Case, pa.Table]:
    """Append every non-empty container of ``case`` (one commit each), then the statistics of
    the table and the case as its files hold it (a container per data file)."""
    schema = pa.schema([("d", leaf.type)])
    for i in range(len(case.cids)):
        rows = case.table.slice(sum(case.sizes[:i]), case.sizes[i]).select(["d"])
        if rows.num_rows:
            table.append(rows.cast(schema))
    stats = pe.stats_from_iceberg(table)
    rows = rows_by_file(stats)
    return _case_of(leaf, rows, stats.column("container").to_pylist()), stats.table


@pytest.mark.parametrize("partitioned", [False, True], ids=["bounds", "identity-partition"])
@pytest.mark.parametrize("typ", DECIMALS, ids=str)
def test_decimal38_from_iceberg(catalog, typ, partitioned):
    """Iceberg bounds are the unscaled value's bytes; an identity partition gives every row
    of a file the same exact value."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DecimalType, NestedField

    leaf = _decimal_leaf(typ)
    rnd = random.Random(f"iceberg-{typ}-{partitioned}")
    schema = Schema(NestedField(1, "d", DecimalType(typ.precision, typ.scale), required=False))
    spec = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "d")) if partitioned \
        else PartitionSpec()
    name = f"db.d{typ.scale}_{int(partitioned)}"
    table = catalog.create_table(name, schema=schema, partition_spec=spec)
    case, stats = _iceberg_case(table, leaf, boundary_case(rnd, leaf))
    if partitioned:  # every file holds one value (or only nulls): exact bounds
        assert all(lo["d"] == hi["d"] for lo, hi in zip(stats.column("min_values").to_pylist(),
                                                         stats.column("max_values").to_pylist()))
    tally = ClassifyTally(ORACLE)
    tally.check(case, {"stats_from_iceberg": stats}, _predicates(rnd, case),
                label=f"iceberg {typ} partitioned={partitioned}")
    _assert_sound(tally, 200)
    pruned = sum(not k for p in ("d = 0", "d > 0") for k in pe.prune(stats, p).to_pylist())
    assert pruned, "the statistics were not used at all"
