"""Statistics made by Spark jobs: ``pes.collect_stats`` is ``pe.collect_stats`` computed by the
executors (the very same table), and ``pes.stats_from_dataframe`` agrees with
``pe.stats_from_arrow`` on the same rows."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._files import file_key
from tests.spark.helpers import write

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


@pytest.fixture(scope="module")
def drifting_lake(tmp_path_factory):
    """Partitioned files whose schemas drift: a column added later, int32 widened to int64,
    a struct gaining a field, plus strings for an n-gram index."""
    root = str(tmp_path_factory.mktemp("drift"))
    rng = np.random.default_rng(3)
    for k in range(9):
        n = 30
        cols = {
            "id": pa.array(rng.integers(k * 100, k * 100 + 100, n), pa.int32() if k < 4 else pa.int64()),
            "url": pa.array([f"https://x.example/{k}/{rng.integers(0, 50)}" for _ in range(n)]),
            "st": pa.array([{"a": int(i)} if k < 5 else {"a": int(i), "b": f"b{i}"} for i in range(n)]),
        }
        if k >= 3:
            cols["added"] = pa.array(rng.random(n))
        folder = os.path.join(root, f"day=2024-01-{k % 3 + 1:02d}", f"h={k % 2}")
        write(os.path.join(folder, f"part-{k}.parquet"), pa.table(cols), row_group_size=10)
    return root


@pytest.mark.parametrize("granularity, options", [
    ("row_group", {}),
    ("file", {}),
    ("file", {"ngram": ["url"]}),
    ("row_group", {"columns": ["id", "added", "day"]}),
    ("row_group", {"nan_free": ["added"], "dictionaries": True}),
])
def test_spark_collect_stats_is_the_local_table(spark, drifting_lake, granularity, options):
    local = pe.collect_stats(drifting_lake, granularity, progress=False, **options)
    spark_made = pes.collect_stats(spark, drifting_lake, granularity, files_per_task=2, **options)
    assert spark_made.table.schema.equals(local.table.schema, check_metadata=True)
    assert spark_made.table.equals(local.table)
    assert spark_made.metadata == local.metadata
    where = "id IN (5, 250, 777) OR day = DATE '2024-01-02'"
    assert pe.prune(spark_made, where).equals(pe.prune(local, where)), "and it prunes alike"


@pytest.mark.parametrize("inline_bytes", [0, 1 << 20])
def test_the_slices_reach_the_tasks_in_rows_or_with_the_function(spark, drifting_lake,
                                                                 monkeypatch, inline_bytes):
    """A large listing travels in the rows of a parallelized frame (classic sessions), a small
    one with the task's function: the same table either way."""
    from prune_engine.spark import _collect

    monkeypatch.setattr(_collect, "INLINE_BYTES", inline_bytes)
    local = pe.collect_stats(drifting_lake, "file", progress=False)
    assert pes.collect_stats(spark, drifting_lake, "file", files_per_task=3).table.equals(
        local.table)


def test_a_nan_free_declaration_a_dictionary_contradicts_fails_as_locally(spark, tmp_path):
    """``nan_free=`` over Spark: a NaN in a dictionary page read is the same clear error."""
    write(str(tmp_path / "a.parquet"), pa.table({"f": [1.0, float("nan"), 1.0]}))
    for collect in (lambda: pe.collect_stats(str(tmp_path), nan_free=["f"], dictionaries=True,
                                             progress=False),
                    lambda: pes.collect_stats(spark, str(tmp_path), nan_free=["f"],
                                              dictionaries=True)):
        with pytest.raises(pe.StatsError, match="holds NaN in a dictionary page"):
            collect()


def test_spark_collect_stats_skips_unreadable_files_like_the_local_one(spark, tmp_path):
    root = str(tmp_path)
    write(os.path.join(root, "good.parquet"), pa.table({"x": [1, 2]}))
    with open(os.path.join(root, "bad.parquet"), "wb") as f:
        f.write(b"not parquet at all")
    with pytest.raises(Exception, match="bad.parquet"):
        pes.collect_stats(spark, root, "file")
    local = pe.collect_stats(root, "file", on_error="skip", progress=False)
    spark_made = pes.collect_stats(spark, root, "file", on_error="skip")
    assert spark_made.table.equals(local.table) and spark_made.metadata == local.metadata


def test_a_zero_byte_file_holds_no_rows_as_in_spark(spark, tmp_path):
    """Spark 4 reads a folder with a 0-byte ``.parquet`` as if the file were not there (3.5
    fails inferring the schema from it, and so does ``pes.read`` there): the statistics job
    makes it an empty container (pruned by every predicate), not an error."""
    root = str(tmp_path)
    write(os.path.join(root, "good.parquet"), pa.table({"x": [1, 2]}))
    open(os.path.join(root, "empty.parquet"), "wb").close()
    stats = pes.collect_stats(spark, root, "file")
    rows = dict(zip(stats.column("path").to_pylist(), stats.column("num_records").to_pylist()))
    assert rows == {os.path.join(root, "good.parquet"): 2, os.path.join(root, "empty.parquet"): 0}
    for where in ("x > 0", "x IS NULL OR x IS NOT NULL"):
        try:
            plain = sorted(r.x for r in spark.read.parquet(root).where(where).collect())
        except Exception:  # noqa: BLE001 - Spark 3.5 infers the schema from the empty file
            with pytest.raises(Exception, match="empty.parquet|not a Parquet file"):
                pes.read(spark, root, where, stats=stats)
            continue
        df, summary = pes.read(spark, root, where, stats=stats, return_summary=True)
        assert sorted(r.x for r in df.collect()) == plain
        assert summary.files_read == 1
    with pytest.raises(pe.StatsError, match="empty.parquet"):
        pe.collect_stats(root, "file", progress=False)  # pyarrow's reading: not Parquet


def test_spark_collect_stats_checks_names_over_all_slices(spark, drifting_lake):
    with pytest.raises(pe.StatsError, match="nope"):
        pes.collect_stats(spark, drifting_lake, "file", columns=["nope"], files_per_task=2)
    with pytest.raises(pe.StatsError, match="ngram= names 'nope'"):
        pes.collect_stats(spark, drifting_lake, "file", ngram=["nope"], files_per_task=2)


def _rows_lake(root: str) -> list[str]:
    rng = np.random.default_rng(5)
    paths = []
    for k in range(5):
        n = 20
        doubles = rng.normal(size=n)
        doubles[rng.random(n) < 0.2] = np.nan
        if k == 2:
            doubles[:] = np.nan  # all NaN: no bounds, nan_count = rows
        table = pa.table({
            "i": pa.array(rng.integers(-50, 50, n), mask=rng.random(n) < 0.2),
            "d": pa.array(doubles, mask=rng.random(n) < 0.1),
            "f": pa.array(rng.normal(size=n).astype(np.float32)),
            "s": pa.array([["Z", "a", "é", "\U0001f600", "ab"][i % 5] + str(k) for i in range(n)]),
            "b": pa.array([bytes([i, k]) for i in range(n)]),
            "bo": pa.array([i % 3 == 0 for i in range(n)]),
            "dt": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(i) + k) for i in range(n)]),
            "ts": pa.array([dt.datetime(2024, 3, 10, 9, tzinfo=dt.timezone.utc) + dt.timedelta(hours=int(i))
                            for i in range(n)], pa.timestamp("us", tz="UTC")),
            "dec": pa.array([decimal.Decimal(i) / 4 for i in range(n)], pa.decimal128(12, 2)),
            "st": pa.array([{"a": int(i), "b": None if i % 4 else "x"} for i in range(n)]),
            "nulls": pa.nulls(n, pa.int64()),
            "tags": pa.array([["t"]] * n),
        })
        paths.append(write(os.path.join(root, f"g={k % 2}", f"p{k}.parquet"), table))
    return paths


def _leaves(struct_value, prefix=()):
    for name, value in (struct_value or {}).items():
        if isinstance(value, dict):
            yield from _leaves(value, prefix + (name,))
        else:
            yield prefix + (name,), value


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def test_stats_from_dataframe_equals_stats_from_arrow_on_the_same_rows(spark, tmp_path):
    root = str(tmp_path)
    paths = _rows_lake(root)
    made = pes.stats_from_dataframe(spark.read.parquet(root))
    tables = []
    for p in paths:
        t = pq.ParquetFile(p).read()  # the file's columns only, not the partition in its path
        g = p.split("g=")[1][0]
        t = t.append_column("g", pa.array([int(g)] * t.num_rows, pa.int32()))
        tables.append(t.append_column("__file", pa.array([file_key(p)] * t.num_rows)))
    expected = pe.stats_from_arrow(pa.concat_tables(tables), container="__file")
    want = {c: i for i, c in enumerate(expected.column("container").to_pylist())}
    got_containers = made.column("container").to_pylist()
    assert sorted(got_containers) == sorted(want), "one container per file, named by its path"
    assert made.column("path").to_pylist() == got_containers
    for i, container in enumerate(got_containers):
        j = want[container]
        assert made.column("num_records")[i].as_py() == expected.column("num_records")[j].as_py()
        for part in ("min_values", "max_values", "null_count", "nan_count"):
            mine = dict(_leaves(made.column(part)[i].as_py()))
            theirs = dict(_leaves(expected.column(part)[j].as_py()))
            theirs = {k: v for k, v in theirs.items() if k[0] != "tags"}
            assert set(mine) == set(theirs), part
            for leaf, value in theirs.items():
                assert _same(mine[leaf], value), (container, part, leaf, mine[leaf], value)
    sizes = made.metadata["files"]
    assert {k: v[0] for k, v in sizes.items()} == {file_key(p): os.path.getsize(p) for p in paths}


def test_stats_from_dataframe_of_rows_without_files_is_a_clear_error(spark):
    with pytest.raises(pe.StatsError, match="come from files"):
        pes.stats_from_dataframe(spark.range(5))
    with pytest.raises(pe.StatsError, match="nope"):
        pes.stats_from_dataframe(spark.range(5), columns=["nope"])
