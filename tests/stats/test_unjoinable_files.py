"""A file whose column types cannot join the lake's (``x`` of strings where the other files
hold integers) is that file's error wherever statistics are made: ``collect_stats``,
``merge_parts`` (the slices Spark's executors collect) and ``update_stats``. The schema of
the most files wins; with ``on_error="skip"`` the file is listed in ``skipped_files`` with a
row of unknown statistics (kept by every query), otherwise a one-line :class:`StatsError`
names it; the other files' statistics never change because of it. Slices and refreshes give
exactly what ``collect_stats`` gives on the whole lake."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.stats.collect import collect_part, merge_parts
from prune_engine.stats.listing import list_source, partition_types
from prune_engine.stats.table import StatsTable

#: the lake: (partition folder, file, table); ``3`` holds x as strings, ``4`` has no x
FILES = [
    ("k=1", "0.parquet", pa.table({"x": [1, 11, 5], "y": ["a", "b", "c"]})),
    ("k=1", "1.parquet", pa.table({"x": [2, 12, None], "y": ["d", "e", "f"]})),
    ("k=2", "2.parquet", pa.table({"x": [3, 13, 7], "y": ["g", "h", "i"]})),
    ("k=2", "3.parquet", pa.table({"x": ["s", "t", "u"], "w": [1, 2, 3]})),
    ("k=3", "4.parquet", pa.table({"y": ["j", "k", "l"], "z": [1.5, 2.5, None]})),
]
BAD = "3.parquet"


def write_lake(root) -> list[str]:
    paths = []
    for folder, name, table in FILES:
        os.makedirs(root / folder, exist_ok=True)
        pq.write_table(table, root / folder / name, row_group_size=2)
        paths.append(str(root / folder / name))
    return paths


def _same(got: StatsTable, want: StatsTable) -> None:
    """``got`` is the table ``collect_stats`` made (``want``), rows and what metadata says
    of the files."""
    assert got.table.equals(want.table), (got.table.to_pylist(), want.table.to_pylist())
    for key in ("skipped_files", "files", "footers", "schemas", "untrusted_statistics"):
        assert got.metadata[key] == want.metadata[key], key


def _through_json(part: StatsTable) -> StatsTable:
    """A slice as the driver receives it (its metadata through JSON)."""
    return StatsTable(part.table, json.loads(json.dumps(part.metadata)))


def _slices(listing, split: list[int], granularity: str, on_error: str) -> list[StatsTable]:
    types = partition_types(listing.files, listing.typed)
    bounds = [0, *split, len(listing.files)]
    return [_through_json(collect_part(listing.files[a:b], types, granularity,
                                       on_error=on_error))
            for a, b in zip(bounds, bounds[1:])]


#: where the listing is cut into slices: each leaves the string file a slice of its own, or
#: with the file that has no ``x``
SPLITS = [[3], [2, 3, 4], [1, 2, 3, 4], [3, 4]]


@pytest.mark.parametrize("split", SPLITS, ids=str)
@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_merge_parts_skips_the_file_that_cannot_join(tmp_path, split, granularity):
    """Splits where the string file is a slice of its own, or shares one with a file that
    has no ``x`` (so that slice's table holds ``x`` as strings): the merged table is the one
    of the whole lake, the file skipped and its row unknown."""
    root = tmp_path / "lake"
    write_lake(root)
    listing = list_source(str(root))
    want = pe.collect_stats(str(root), granularity=granularity, on_error="skip",
                            progress=False)
    slices = _slices(listing, split, granularity, "skip")
    assert any("x" in p.schema.field("min_values").type.names and
               p.schema.field("min_values").type.field("x").type == pa.string()
               for p in slices), "some slice holds x as strings"
    got = merge_parts(slices)
    _same(got, want)
    assert [s["path"].endswith(BAD) for s in got.metadata["skipped_files"]] == [True]
    assert "does not unify" in got.metadata["skipped_files"][0]["error"]
    rows = got.table.to_pylist()
    bad = [r for r in rows if r["path"].endswith(BAD)]
    assert len(bad) == 1 and bad[0]["num_records"] is None and bad[0]["min_values"] is None
    assert bad[0]["partition_values"] == {"k": 2}
    assert got.schema.field("min_values").type.field("x").type == pa.int64()
    assert "w" not in got.schema.field("min_values").type.names, "the bad file's column left out"
    keep = pe.prune(got, "x = 100").to_pylist()
    assert [k for k, r in zip(keep, rows) if r["path"].endswith(BAD)] == [True], \
        "the skipped file's row is unknown: kept"


@pytest.mark.parametrize("split", SPLITS + [[4]], ids=str)
def test_merge_parts_raises_naming_the_file(tmp_path, split):
    root = tmp_path / "lake"
    paths = write_lake(root)
    listing = list_source(str(root))
    with pytest.raises(pe.StatsError) as caught:
        merge_parts(_slices(listing, split, "file", "raise"))
    message = caught.value.args[0]
    assert message.startswith(paths[3]) and "does not unify" in message
    assert "\n" not in message and len(message) < 400
    assert caught.value.containers == [paths[3]]
    with pytest.raises(pe.StatsError) as whole:
        pe.collect_stats(str(root), granularity="file", progress=False)
    assert whole.value.args[0] == message, "the error collect_stats gives"


def test_good_files_statistics_do_not_change_because_of_a_bad_file(tmp_path):
    root = tmp_path / "lake"
    paths = write_lake(root)
    listing = list_source(str(root))
    got = merge_parts(_slices(listing, [3, 4], "row_group", "skip"))
    good = pe.collect_stats([p for p in paths if not p.endswith(BAD)], progress=False)
    rows = [r for r in got.table.to_pylist() if not r["path"].endswith(BAD)]
    for column in ("container", "num_records", "min_values", "max_values", "null_count"):
        assert [r[column] for r in rows] == good.column(column).to_pylist(), column


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_update_stats_skips_a_new_file_of_another_type(tmp_path, granularity):
    root = tmp_path / "lake"
    write_lake(root)
    os.remove(root / "k=2" / BAD)
    old = pe.collect_stats(str(root), granularity=granularity, progress=False)
    pq.write_table(FILES[3][2], root / "k=2" / BAD, row_group_size=2)
    new = pe.update_stats(old, str(root), on_error="skip", progress=False)
    want = pe.collect_stats(str(root), granularity=granularity, on_error="skip",
                            progress=False)
    _same(new, want)
    assert [s["path"] for s in new.metadata["skipped_files"]] == [str(root / "k=2" / BAD)]
    assert new.metadata["refresh"] == {"reused": 0, "changed": 0, "new": 1, "gone": 0,
                                       "reread": 4}
    good = new.table.filter(pa.compute.invert(pa.compute.ends_with(new.table.column("path"),
                                                                   BAD)))
    assert good.column("min_values").to_pylist() == old.column("min_values").to_pylist()
    assert good.column("max_values").to_pylist() == old.column("max_values").to_pylist()
    # the file is tried again next time; once rewritten with integers it joins
    pq.write_table(pa.table({"x": [40, 41], "w": [1, 2]}), root / "k=2" / BAD)
    again = pe.update_stats(new, str(root), progress=False)
    assert again.metadata["skipped_files"] == [] and again.metadata["refresh"]["reused"] == 4
    keep = dict(zip(again.column("container").to_pylist(), pe.prune(again, "x = 41").to_pylist()))
    assert {os.path.basename(c).split("#")[0] for c, k in keep.items() if k} == \
        {BAD, "4.parquet"}, "41 is only in the rewritten file (4.parquet has no x: unknown)"


def test_update_stats_raises_naming_the_new_file(tmp_path):
    root = tmp_path / "lake"
    write_lake(root)
    os.remove(root / "k=2" / BAD)
    old = pe.collect_stats(str(root), granularity="file", progress=False)
    pq.write_table(FILES[3][2], root / "k=2" / BAD)
    with pytest.raises(pe.StatsError) as caught:
        pe.update_stats(old, str(root), progress=False)
    message = caught.value.args[0]
    assert message.startswith(str(root / "k=2" / BAD)) and "changes type" in message
    assert "\n" not in message and len(message) < 400


def test_update_stats_where_the_new_files_are_most(tmp_path):
    """Three new files of strings against two old ones of integers: the strings win, as
    collect_stats decides on the whole lake; the old files are the errors."""
    root = tmp_path / "lake"
    root.mkdir()
    for i in range(2):
        pq.write_table(pa.table({"x": [i, i + 1]}), root / f"old{i}.parquet")
    old = pe.collect_stats(str(root), granularity="file", progress=False)
    for i in range(3):
        pq.write_table(pa.table({"x": [f"s{i}", "t"]}), root / f"new{i}.parquet")
    new = pe.update_stats(old, str(root), on_error="skip", progress=False)
    want = pe.collect_stats(str(root), granularity="file", on_error="skip", progress=False)
    _same(new, want)
    assert new.schema.field("min_values").type.field("x").type == pa.string()
    assert sorted(os.path.basename(s["path"]) for s in new.metadata["skipped_files"]) == \
        ["old0.parquet", "old1.parquet"]
