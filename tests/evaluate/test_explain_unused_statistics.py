"""``explain`` says why Iceberg bounds went unused (issue #34).

A manifest whose statistics maps cannot be matched to the table's columns without doubt (a
BigQuery-shaped manifest whose map entries carry neither the spec's field ids nor its names)
leaves its files' statistics unknown, and ``stats_from_iceberg`` records why in
``metadata["iceberg"]["unused_statistics"]``. ``kept_because`` then names the manifest and the
reason after "min/max unknown" for those files, and for no other: here one of two manifests is
rewritten so, the other file's explanation stays as it was, and so does every test whose
bounds are known (a manifest that lost only its lower bounds still prunes on its upper ones).
"""

from __future__ import annotations

import os
import warnings

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.evaluate.checks import BOUNDS_UNKNOWN
from prune_engine.stats.table import StatsTable
from tests.stats.iceberg_support import manifest_paths, rewrite_avro

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])
PREDICATES = ["id < 5", "id > 5", "id = 11 OR s > 'm'", "s < 'b' AND id IS NOT NULL",
              "id < 5 AND s >= 'a' AND id != 3 AND s != 'q'"]


def _entries_edited(change):
    """An Avro schema edit: ``change(field)`` on the key and value fields of every map
    entry record (Iceberg names them ``k<key id>_v<value id>``)."""
    def edit(schema):
        stack = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("type") == "record" and str(node.get("name", "")).startswith("k"):
                    for f in node.get("fields", []):
                        change(f)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return schema
    return edit


def _unnamed(f):
    """No field id, and names the spec does not give: which is the key cannot be told."""
    f.pop("field-id")
    f["name"] = {"key": "k", "value": "v"}[f["name"]]


def _lower_bounds_misnumbered(f):
    """The lower bounds' value id given to their key: only that map is left unused."""
    f["field-id"] = 127 if f["field-id"] == 126 else f["field-id"]


@pytest.fixture(params=[_unnamed, _lower_bounds_misnumbered], ids=["unnamed", "misnumbered"])
def table(request, tmp_path):
    """Two files in two manifests; the first manifest rewritten with ``request.param``."""
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2, None], "s": ["a", "b", "c"]}, schema=SCHEMA))
    table.append(pa.table({"id": [10, 12, 11], "s": ["x", None, "y"]}, schema=SCHEMA))
    first = next(p for p in manifest_paths(table)
                 if os.path.basename(p).split("-m")[0] == _written_by_first_append(table))
    rewrite_avro(first, schema=_entries_edited(request.param))
    return catalog.load_table("db.t"), first, request.param


def _written_by_first_append(table) -> str:
    """The commit id in the name of the first append's manifest (PyIceberg names a manifest
    ``<commit uuid>-m0.avro``): that of the snapshot whose parent is none."""
    first = next(s for s in table.metadata.snapshots if s.parent_snapshot_id is None)
    (manifest,) = [m.manifest_path for m in first.manifests(table.io)]
    return os.path.basename(manifest).split("-m")[0]


def _without_notes(stats) -> StatsTable:
    meta = {k: v for k, v in stats.metadata["iceberg"].items() if k != "unused_statistics"}
    return StatsTable(stats.table, {"iceberg": meta})


@pytest.mark.parametrize("where", PREDICATES)
def test_explain_names_the_manifest_and_why_for_its_files_only(table, where):
    table, manifest, how = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the warning is stats_from_iceberg's)
        stats = pe.stats_from_iceberg(table)
    unused = stats.metadata["iceberg"]["unused_statistics"]
    assert {os.path.basename(u["manifest"]) for u in unused} == {os.path.basename(manifest)}
    (affected,) = {f for u in unused for f in u["files"]}
    noted = pe.explain(stats, where).to_pylist()
    plain = pe.explain(_without_notes(stats), where).to_pylist()
    assert [r["keep"] for r in noted] == [r["keep"] for r in plain], "a note decides nothing"
    assert [r["reason"] for r in noted] == [r["reason"] for r in plain]
    # the reason about bounds (the lower bounds' in both edits), and how many more
    whys = [u["why"] for u in unused]
    (lower,) = [w for w in whys if "lower_bounds" in w]
    more = f", and {len(whys) - 1} more" if len(whys) > 1 else ""
    note = f"{BOUNDS_UNKNOWN} (Iceberg manifest {os.path.basename(manifest)}: {lower}{more})"
    for row, before in zip(noted, plain):
        if row["container"] != affected or before["kept_because"] is None:
            assert row == before, "nothing changes for the other file"
            continue
        # the note follows exactly the tests whose bounds are unknown there
        assert row["kept_because"] == before["kept_because"].replace(BOUNDS_UNKNOWN, note)
        assert {**row, "kept_because": None} == {**before, "kept_because": None}


def test_the_lower_bound_lost_is_named_where_a_test_reads_it(table):
    table, manifest, how = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stats = pe.stats_from_iceberg(table)
    (affected,) = {f for u in stats.metadata["iceberg"]["unused_statistics"]
                   for f in u["files"]}
    row = next(r for r in pe.explain(stats, "id < 5").to_pylist()
               if r["container"] == affected)
    name = os.path.basename(manifest)
    assert row["keep"] and row["kept_because"].startswith(
        f"id < 5: {BOUNDS_UNKNOWN} (Iceberg manifest {name}: it has no lower_bounds key")
    if how is _unnamed:  # null, NaN, lower and upper: the bounds' reason first, 3 more
        assert row["kept_because"].endswith(", and 3 more)")
        assert "upper" not in row["kept_because"]
    else:
        assert row["kept_because"].endswith(")") and "more" not in row["kept_because"]
        upper = next(r for r in pe.explain(stats, "id > 5").to_pylist()
                     if r["container"] == affected)
        assert upper == {"container": affected, "keep": False, "reason": "id > 5",
                         "kept_because": None, "answer": "none"}, \
            "its upper bounds were read: max 2 proves id > 5 empty"


def test_statistics_without_the_key_read_no_paths():
    """No ``unused_statistics``: the ``path`` column is never read (it may be absent)."""
    stats = StatsTable(pa.table({"container": ["a"], "num_records": [3],
                                 "min_values": pa.array([None], pa.struct([("x", pa.int64())])),
                                 "max_values": pa.array([None], pa.struct([("x", pa.int64())])),
                                 "null_count": [{"x": 0}]}),
                       {"iceberg": {"table": "t", "snapshot_id": 1}})
    assert pe.explain(stats, "x > 5").column("kept_because").to_pylist() == \
        [f"x > 5: {BOUNDS_UNKNOWN}"]
