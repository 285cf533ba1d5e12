"""stats_from_delta: which files, read from which log files, and what a bad log does.

- Only the version's live files are listed: after a delete, an update and a compaction the
  files they replaced stay on disk (until VACUUM) but not in the statistics; the listed files'
  rows are exactly the table's (deltalake's own read).
- Files with deletion vectors are named in ``metadata["delta"]["deletion_vectors"]``, their
  ``num_records`` counts live rows, and their null counts mean only "none" or "all".
- The statistics are read from commits and checkpoints alike (classic, multi-part, V2 with
  sidecars).
- Malformed statistics of one file are unknown for that file, with one warning per file; a log
  that cannot be read is a one-line StatsError naming the table.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import prune_engine as pe
from prune_engine.stats.delta_log import live_adds
from tests.oracle.data import CID
from tests.stats.delta_logs import (
    Raw, check, comparisons, field, spark_stats, table_rows, write_table,
)

SCHEMA = pa.schema([("x", pa.int64()), ("s", pa.string())])


def _sorted_rows(table: pa.Table) -> list[tuple]:
    return sorted(zip(*[table.column(n).to_pylist() for n in SCHEMA.names]),
                  key=lambda r: (r[0], r[1] or ""))


def _listed_rows(stats) -> pa.Table:
    return pa.concat_tables([pq.read_table(p).select(SCHEMA.names).cast(SCHEMA)
                             for p in stats.column("path").to_pylist()])


# ------------------------------------------------------------------------------ live files


def test_only_live_files_after_delete_update_and_compaction(tmp_path):
    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(100), pa.int64()),
                                    "s": [f"s{i}" for i in range(100)]}))
    write_deltalake(root, pa.table({"x": pa.array(range(100, 150), pa.int64()),
                                    "s": ["b"] * 50}), mode="append")
    steps = [lambda t: t.delete("x < 50"),
             lambda t: t.update(updates={"s": "'changed'"}, predicate="x > 120"),
             lambda t: t.optimize.compact()]
    for step in steps:
        step(DeltaTable(root))
        table = DeltaTable(root)
        stats = pe.stats_from_delta(root)
        assert stats.metadata["delta"]["version"] == table.version()
        assert stats.metadata["delta"]["deletion_vectors"] == []
        assert sorted(stats.column("path").to_pylist()) == sorted(table.file_uris())
        on_disk = {os.path.join(root, f) for f in os.listdir(root) if f.endswith(".parquet")}
        assert len(on_disk) > stats.num_rows  # the replaced files are still there
        expected = table.to_pyarrow_table().select(SCHEMA.names).cast(SCHEMA)
        assert _sorted_rows(_listed_rows(stats)) == _sorted_rows(expected)
        assert sum(stats.column("num_records").to_pylist()) == expected.num_rows
        rows = table_rows(stats, SCHEMA)
        check(stats, rows, ["x < 50", "x < 60", "x >= 120", "s = 'changed'", "s = 's10'",
                            "x = 49", "x = 50", "s IS NULL"])
    # after the delete, "x < 60" keeps only what holds rows 50..59; nothing holds x < 50
    assert pe.prune(pe.stats_from_delta(root), "x < 50").to_pylist() == [False]
    assert pe.stats_from_delta(root, version=1).num_rows == 2


# ------------------------------------------------------------------------------ deletion vectors


def _vector(cardinality) -> dict:
    return {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1,
            "sizeInBytes": 36, "cardinality": cardinality}


def test_deletion_vectors_are_named_and_counted(tmp_path):
    """A file with a deletion vector of cardinality 2 (wide bounds, as Spark writes them):
    listed in the metadata, 8 live rows of 10, null counts kept only when 0 or all."""
    data = pa.table({"x": pa.array(range(10), pa.int64()), "y": pa.nulls(10, pa.int64()),
                     "z": pa.array([None] * 3 + list(range(7)), pa.int64())})
    other = pa.table({"x": pa.array([20, 21], pa.int64()), "y": pa.array([1, None], pa.int64()),
                      "z": pa.array([5, 6], pa.int64())})
    stats_a = {**spark_stats(data), "tightBounds": False}
    files = [{"name": "a.parquet", "data": data, "stats": stats_a,
              "add": {"deletionVector": _vector(2)}},
             {"name": "b.parquet", "data": other, "stats": spark_stats(other)},
             {"name": "c.parquet", "data": other, "stats": spark_stats(other),
              "add": {"deletionVector": _vector(2)}}]
    fields = [field(n, "long") for n in ("x", "y", "z")]
    root = write_table(tmp_path / "t", fields, files,
                       configuration={"delta.enableDeletionVectors": "true"},
                       features=["deletionVectors"])
    stats = pe.stats_from_delta(root)
    paths = stats.column("path").to_pylist()
    assert stats.metadata["delta"]["deletion_vectors"] == [paths[0], paths[2]]
    assert stats.column("num_records").to_pylist() == [8, 2, 0]
    assert stats.column("null_count").to_pylist() == [
        {"x": 0, "y": 8, "z": None},  # 0 stays 0, all stays all (of the live rows)
        {"x": 0, "y": 1, "z": 0},
        {"x": 0, "y": None, "z": 0}]
    # whichever rows the vector deletes, the statistics hold for the rows left
    schema = pa.schema([(n, pa.int64()) for n in ("x", "y", "z")])
    preds = comparisons("x", [0, 1, 5, 9, 20]) + comparisons("z", [0, 6]) + \
        ["y IS NULL", "y IS NOT NULL", "z IS NULL", "z IS NOT NULL", "x IS NOT NULL"]
    rows = table_rows(stats, schema)
    ids = rows.column(CID).to_pylist()
    for deleted in ((0, 1), (8, 9), (2, 3)):
        mask = [not (c == paths[0] and i in deleted) and c != paths[2]
                for i, c in enumerate(ids)]
        classes = check(stats, rows.filter(pa.array(mask)), preds)
        assert classes[-3] == "some,none,none"  # z IS NULL: 3 of 10 null, maybe deleted
    assert pe.classify(stats, "y IS NULL").to_pylist() == ["all", "some", "none"]


def test_a_deletion_vector_without_a_valid_cardinality(tmp_path):
    data = pa.table({"x": pa.array([1, 2], pa.int64())})
    files = [{"name": "a.parquet", "data": data, "stats": spark_stats(data),
              "add": {"deletionVector": _vector(-1)}},
             {"name": "b.parquet", "data": data, "stats": spark_stats(data),
              "add": {"deletionVector": _vector(3)}}]
    root = write_table(tmp_path / "t", [field("x", "long")], files,
                       features=["deletionVectors"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.stats_from_delta(root)
    assert stats.column("num_records").to_pylist() == [None, None]
    assert len(stats.metadata["delta"]["deletion_vectors"]) == 2
    assert sorted(str(w.message).rsplit(": ", 1)[-1] for w in caught) == [
        "its deletion vector deletes more rows than numRecords",
        "its deletion vector has no valid cardinality"]
    # a cardinality that is not a number: deltalake refuses the log, a StatsError
    files[0]["add"] = {"deletionVector": _vector("two")}
    root = write_table(tmp_path / "u", [field("x", "long")], files,
                       features=["deletionVectors"])
    with pytest.raises(pe.StatsError) as info:
        pe.stats_from_delta(root)
    _one_line(info.value, root)


# ------------------------------------------------------------------------------ checkpoints


def _table_with_history(root: str) -> None:
    for k in range(4):
        write_deltalake(root, pa.table({"x": pa.array([10 * k, 10 * k + 5], pa.int64()),
                                        "s": [f"k{k}", None]}), mode="append" if k else "error")
    DeltaTable(root).delete("x = 5")


def _summary(stats) -> list:
    return sorted(zip(stats.column("path").to_pylist(), stats.column("min_values").to_pylist(),
                      stats.column("max_values").to_pylist(),
                      stats.column("num_records").to_pylist()), key=str)


def _checkpointed(tmp_path) -> tuple[str, list, int, str]:
    """A table with history and a checkpoint of its last version: (root, the summary of its
    statistics before the checkpoint, that version, the log folder)."""
    root = str(tmp_path / "t")
    _table_with_history(root)
    before = _summary(pe.stats_from_delta(root))
    DeltaTable(root).create_checkpoint()
    return root, before, DeltaTable(root).version(), os.path.join(root, "_delta_log")


def test_statistics_from_a_checkpoint(tmp_path):
    """After a checkpoint and the cleanup of the commits before it, the statistics come from
    the checkpoint (and the commits after it) and are the same."""
    root, before, version, log = _checkpointed(tmp_path)
    for n in range(version):  # the commits before the checkpoint: cleaned up
        os.remove(os.path.join(log, f"{n:020d}.json"))
    assert _summary(pe.stats_from_delta(root)) == before
    write_deltalake(root, pa.table({"x": pa.array([99], pa.int64()), "s": ["z"]}), mode="append")
    after = pe.stats_from_delta(root)
    assert after.num_rows == len(before) + 1
    assert max(m["x"] for m in after.column("max_values").to_pylist()) == 99


def test_statistics_from_a_multi_part_checkpoint(tmp_path):
    root, before, version, log = _checkpointed(tmp_path)
    classic = os.path.join(log, f"{version:020d}.checkpoint.parquet")
    actions = pq.read_table(classic)
    half = actions.num_rows // 2
    for part, piece in enumerate((actions.slice(0, half), actions.slice(half)), start=1):
        pq.write_table(piece, os.path.join(log, f"{version:020d}.checkpoint."
                                                f"{part:010d}.{2:010d}.parquet"))
    os.remove(classic)
    os.remove(os.path.join(log, "_last_checkpoint"))  # found by listing
    for n in range(version):  # the commits before the checkpoint: cleaned up
        os.remove(os.path.join(log, f"{n:020d}.json"))
    paths = DeltaTable(root).get_add_actions(flatten=True).column("path").to_pylist()
    found = live_adds(root, version, paths)
    assert sorted(found) == sorted(paths) and all(a.stats for a in found.values())
    assert _summary(pe.stats_from_delta(root)) == before


def test_a_v2_checkpoint_with_sidecars(tmp_path):
    """A V2 checkpoint (``n.checkpoint.<uuid>.json``) whose adds live in ``_sidecars``."""
    log = tmp_path / "t" / "_delta_log"
    (log / "_sidecars").mkdir(parents=True)
    adds = pa.table({"add": pa.array([
        {"path": "a.parquet", "stats": '{"numRecords": 1}',
         "deletionVector": None},
        {"path": "b.parquet", "stats": '{"numRecords": 2}',
         "deletionVector": {"storageType": "i", "pathOrInlineDv": "x", "offset": None,
                            "sizeInBytes": 1, "cardinality": 1}},
    ])})
    pq.write_table(adds, str(log / "_sidecars" / "one.parquet"))
    checkpoint = [{"checkpointMetadata": {"version": 2}},
                  {"sidecar": {"path": "one.parquet", "sizeInBytes": 1,
                               "modificationTime": 0}},
                  {"add": {"path": "c.parquet", "stats": '{"numRecords": 3}'}}]
    name = f"{2:020d}.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
    (log / name).write_text("\n".join(json.dumps(a) for a in checkpoint))
    (log / f"{3:020d}.json").write_text(json.dumps(
        {"add": {"path": "a.parquet", "stats": '{"numRecords": 7}'}}) + "\n")
    found = live_adds(str(tmp_path / "t"), 3, ["a.parquet", "b.parquet", "c.parquet"])
    assert {p: (a.stats, a.deletion_vector is not None) for p, a in found.items()} == {
        "a.parquet": ('{"numRecords": 7}', False),  # the newest add wins
        "b.parquet": ('{"numRecords": 2}', True), "c.parquet": ('{"numRecords": 3}', False)}


def _one_line(error: pe.StatsError, root: str) -> None:
    text = str(error)
    assert "\n" not in text and len(text) < 400 and root in text, text


def test_a_log_that_cannot_be_read(tmp_path):
    root = tmp_path / "t"
    log = root / "_delta_log"
    log.mkdir(parents=True)
    add = json.dumps({"add": {"path": "a.parquet", "stats": "{}"}})
    for n in (0, 2):
        (log / f"{n:020d}.json").write_text(add + "\n")
    with pytest.raises(pe.StatsError, match="lacks commit 1") as info:
        live_adds(str(root), 2, ["a.parquet"])
    _one_line(info.value, str(root))
    (log / f"{1:020d}.checkpoint.parquet").write_bytes(b"PAR1 not a parquet file PAR1")
    with pytest.raises(pe.StatsError, match="checkpoint") as info:
        live_adds(str(root), 2, ["b.parquet"])
    _one_line(info.value, str(root))
    with pytest.raises(pe.StatsError, match="cannot list") as info:
        live_adds(str(tmp_path / "nowhere"), 0, ["a.parquet"])
    _one_line(info.value, str(tmp_path / "nowhere"))


# ------------------------------------------------------------------------------ malformed


BAD_STATS = {  # file name: (stats text, what stays known)
    "not-json": ("{not json", set()),
    "array": ("[1, 2]", set()),
    "string": ('"stats"', set()),
    "deep": ("[" * 50_000 + "]" * 50_000, set()),
    "huge-count": ('{"numRecords": 1' + "0" * 5000 + "}", set()),
    "number": (5, set()),  # deltalake takes a number for the text
    "bad-count": ('{"numRecords": "3", "minValues": {"x": 1}, "maxValues": {"x": 3}}',
                  {"x"}),
    "negative-count": ('{"numRecords": -5, "minValues": {"x": 1}, "maxValues": {"x": 3}}',
                       {"x"}),
    "not-objects": ('{"numRecords": 3, "minValues": 5, "maxValues": [1], "nullCount": "x"}',
                    {"records"}),
    "wrong-kinds": ('{"numRecords": 3, "minValues": {"x": "1", "s": 5, "d": 20240101, '
                    '"ts": 1.5, "f": "one", "n": "1.0"}, "maxValues": {"x": 3.0, '
                    '"s": ["b"], "d": "2024-13-45", "ts": "garbage", "f": 1e400, '
                    '"n": true}, "nullCount": {"x": -1, "s": 4, "d": true, "ts": 1.0}}',
                    {"records"}),
    "min-above-max": ('{"numRecords": 3, "minValues": {"x": 30, "s": "b"}, '
                      '"maxValues": {"x": 3, "s": "a"}, "nullCount": {"x": 0, "s": 1}}',
                      {"records", "x-nulls", "s-nulls"}),
    "surrogate": ('{"numRecords": 3, "minValues": {"s": "\\ud800"}, "maxValues": {"s": "b"}}',
                  {"records", "s-max"}),
    "tight": ('{"numRecords": 3, "tightBounds": "yes", "minValues": {"x": 1}, '
              '"maxValues": {"x": 3}, "nullCount": {"x": 0, "s": 1}}',
              {"records", "x", "x-nulls"}),
    "struct-not-object": ('{"numRecords": 3, "minValues": {"st": 5}, '
                          '"maxValues": {"st": {"a": 3}}}', {"records", "st-max"}),
}


def test_malformed_statistics_lose_only_themselves(tmp_path):
    data = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", None],
                     "d": pa.array([dt.date(2024, 1, 1)] * 3), "ts": pa.array(
                         [dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)] * 3,
                         pa.timestamp("us", "UTC")),
                     "f": [1.0, 2.0, 3.0], "n": pa.array([1, 2, 3], pa.int32()),
                     "st": pa.array([{"a": 1}, {"a": 3}, None], pa.struct([("a", pa.int64())]))})
    fields = [field("x", "long"), field("s", "string"), field("d", "date"),
              field("ts", "timestamp"), field("f", "double"), field("n", "integer"),
              field("st", {"type": "struct", "fields": [field("a", "long")]})]
    files = [{"name": f"{k}.parquet", "data": data, "stats": text}
             for k, (text, _) in BAD_STATS.items()]
    files += [{"name": "good.parquet", "data": data, "stats": spark_stats(data)},
              {"name": "none.parquet", "data": data, "stats": None}]
    root = write_table(tmp_path / "t", fields, files)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.stats_from_delta(root)
    columns = [stats.column(c).to_pylist()
               for c in ("path", "num_records", "min_values", "max_values", "null_count")]
    by_file = {p.rsplit("/", 1)[-1][:-len(".parquet")]: rest for p, *rest in zip(*columns)}
    assert tuple(by_file["good"][:2]) == (3, {"x": 1, "s": "a", "d": dt.date(2024, 1, 1),
                                       "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
                                       "f": 1.0, "n": 1, "st": {"a": 1}})
    assert by_file["none"][0] is None and by_file["none"][1]["x"] is None
    messages = [str(w.message) for w in caught]
    assert all("\n" not in m and root in m for m in messages)
    named = sorted(m.split(" are partly")[0].rsplit("/", 1)[-1] for m in messages)
    assert named == sorted(f"{k}.parquet" for k in BAD_STATS), named  # one per bad file
    untrusted = stats.metadata["untrusted_statistics"]
    assert sorted(p.rsplit("/", 1)[-1] for p in untrusted) == named
    assert untrusted[os.path.join(root, "min-above-max.parquet")] == \
        ["x: min above max", "s: min above max"]
    for name, (_, known) in BAD_STATS.items():
        records, lo, hi, nulls = by_file[name]
        assert (records == 3) == ("records" in known), name
        assert (lo["x"] is not None and hi["x"] is not None) == ("x" in known), name
        assert (hi["s"] is not None) == ("s-max" in known), name
        assert (nulls["x"] is not None) == ("x-nulls" in known), name
        assert (nulls["s"] is not None) == ("s-nulls" in known), name
        assert (hi["st"]["a"] is not None) == ("st-max" in known), name
        for column in ("d", "ts", "f", "n"):
            assert lo[column] is None and hi[column] is None, (name, column)
    rows = table_rows(stats, data.schema)
    check(stats, rows, comparisons("x", [0, 1, 3, 4]) + comparisons("s", ["a", "b", "c"])
          + ["x IS NULL", "s IS NULL", "s IS NOT NULL", "st.a > 3", "st.a < 1", "f > 3",
             "n < 1", "d > DATE '2024-01-01'", "ts < TIMESTAMP '2024-01-01'"])


def test_a_table_of_only_bad_statistics_is_kept_whole(tmp_path):
    data = pa.table({"x": pa.array([1, 2], pa.int64())})
    files = [{"name": f"{i}.parquet", "data": data, "stats": text}
             for i, text in enumerate(['{"numRecords": 2, "minValues": {"x": "1"}}',
                                       '{"numRecords": 2, "minValues": {"x": 9}, '
                                       '"maxValues": {"x": 1}}'])]
    root = write_table(tmp_path / "t", [field("x", "long")], files)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.stats_from_delta(root)
    assert pe.prune(stats, "x = 2").to_pylist() == [True, True]
    assert stats.column("num_records").to_pylist() == [2, 2]
    assert len(caught) == 2


def test_raw_json_numbers_keep_their_text(tmp_path):
    """The builder of these tests writes a number's text verbatim."""
    data = pa.table({"x": pa.array([1], pa.int64())})
    root = write_table(tmp_path / "t", [field("x", "long")],
                       [{"name": "a.parquet", "data": data,
                         "stats": {"numRecords": 1, "minValues": {"x": Raw("1")},
                                   "maxValues": {"x": Raw("1")}}}])
    with open(os.path.join(root, "_delta_log", f"{0:020d}.json")) as f:
        assert '\\"minValues\\":{\\"x\\":1}' in f.read()
