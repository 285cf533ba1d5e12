"""collect_stats / update_stats / save / read: listing, partitions, granularity, drift, errors."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.stats import layout
from tests.stats.stats_oracle import rows


def write(path, table, **kw):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path, **kw)
    return path


@pytest.fixture
def lake(tmp_path):
    root = str(tmp_path / "lake")
    write(f"{root}/year=2023/region=eu/a.parquet", pa.table({"x": [1, 2, 3], "s": ["a", "b", None]}),
          row_group_size=2)
    write(f"{root}/year=2024/region=us/b.parquet", pa.table({"x": [10, 20], "s": ["q", "r"]}))
    write(f"{root}/year=2024/region=__HIVE_DEFAULT_PARTITION__/c.parquet",
          pa.table({"x": [5], "s": ["m"]}))
    write(f"{root}/_delta_log/ignored.parquet", pa.table({"x": [99]}))
    open(f"{root}/year=2024/_SUCCESS", "w").close()
    return root


def test_directory_row_groups_and_partitions(lake):
    stats = pe.collect_stats(lake, progress=False)
    t = stats.table
    assert t.column("row_group").to_pylist() == [0, 1, 0, 0]
    assert t.column("num_records").to_pylist() == [2, 1, 1, 2]
    assert [c.split(os.sep)[-1] for c in t.column("container").to_pylist()] == [
        "a.parquet#rg=0", "a.parquet#rg=1", "c.parquet#rg=0", "b.parquet#rg=0"]
    assert t.schema.field("partition_values").type == pa.struct(
        [("year", pa.int64()), ("region", pa.string())]), "typed from the folder names"
    assert t.column("partition_values").to_pylist()[2] == {"year": 2024, "region": None}
    mins = rows(stats, "min_values")
    assert [m["year"] for m in mins] == [2023, 2023, 2024, 2024], "partitions as exact stats"
    assert [m["region"] for m in mins] == ["eu", "eu", None, "us"]
    assert [n["region"] for n in rows(stats, "null_count")] == [0, 0, 1, 0], "Hive null: all-null"
    assert not any("_delta_log" in p for p in t.column("path").to_pylist())


def test_partition_pruning_is_plain_pruning_by_stats(lake):
    stats = pe.collect_stats(lake, granularity="file", progress=False)
    # min = max = the folder's value, so a predicate on it decides the file
    keep_2023 = [m["year"] <= 2023 <= x["year"] for m, x in
                 zip(rows(stats, "min_values"), rows(stats, "max_values"))]
    assert keep_2023 == [True, False, False]


def test_file_granularity_aggregates_row_groups(lake):
    stats = pe.collect_stats(lake, granularity="file", progress=False)
    t = stats.table
    assert t.column("row_group").null_count == 3
    assert t.column("num_records").to_pylist() == [3, 1, 2]
    assert rows(stats, "min_values")[0]["x"] == 1 and rows(stats, "max_values")[0]["x"] == 3
    assert rows(stats, "null_count")[0]["s"] == 1, "sum of the row groups' null counts"
    assert t.column("container").to_pylist() == t.column("path").to_pylist()


def test_file_granularity_unknown_if_any_row_group_unknown(tmp_path):
    path = write(str(tmp_path / "f.parquet"), pa.table({"s": ["a", "x" * 5000, None, None]}),
                 row_group_size=2)
    rg = pe.collect_stats(path, progress=False)
    assert rows(rg, "min_values") == [{"s": "a"}, {"s": None}], "pyarrow keeps the short min"
    assert rows(rg, "max_values") == [{"s": None}, {"s": None}], "and drops the > 4 KiB max"
    assert rows(rg, "null_count") == [{"s": 0}, {"s": 2}], "second row group is all-null"
    f = pe.collect_stats(path, granularity="file", progress=False)
    assert rows(f, "min_values") == [{"s": "a"}], "the all-null row group has no min to miss"
    assert rows(f, "max_values") == [{"s": None}], "first row group's max is unknown"
    assert rows(f, "null_count") == [{"s": 2}]
    path3 = write(str(tmp_path / "h.parquet"), pa.table({"s": ["b", "x" * 5000, "a", "c"]}),
                  row_group_size=2)
    h = pe.collect_stats(path3, granularity="file", progress=False)
    assert rows(h, "min_values") == [{"s": "a"}] and rows(h, "max_values") == [{"s": None}], \
        "each side is unknown only if a row group with values has it unknown"
    path2 = write(str(tmp_path / "g.parquet"), pa.table({"s": ["b", "a", None, None]}),
                  row_group_size=2)
    g = pe.collect_stats(path2, granularity="file", progress=False)
    assert rows(g, "min_values") == [{"s": "a"}], "an all-null row group does not make unknown"


def test_glob_list_and_dataset_sources(lake):
    by_glob = pe.collect_stats(os.path.join(lake, "year=2024", "*", "*.parquet"),
                               granularity="file", progress=False)
    assert by_glob.num_rows == 2
    assert by_glob.column("partition_values").to_pylist()[0]["year"] == 2024
    paths = by_glob.column("path").to_pylist()
    by_list = pe.collect_stats(paths, granularity="file", progress=False)
    assert by_list.column("container").to_pylist() == paths
    dataset = ds.dataset(lake, format="parquet", partitioning="hive",
                         exclude_invalid_files=False)
    by_ds = pe.collect_stats(dataset, granularity="file", progress=False)
    assert by_ds.num_rows == 3
    assert sorted(v["year"] for v in by_ds.column("partition_values").to_pylist()) == [2023,
                                                                                        2024, 2024]


def test_columns_selection(lake):
    stats = pe.collect_stats(lake, columns=["x"], progress=False)
    assert stats.schema.field("min_values").type == pa.struct([("x", pa.int64())])
    with pytest.raises(pe.StatsError, match="'nope'.*known columns: .*s, x"):
        pe.collect_stats(lake, columns=["nope"], progress=False)


def test_nested_column_selection(tmp_path):
    path = write(str(tmp_path / "n.parquet"),
                 pa.table({"st": pa.array([{"a": 1, "b": "z"}]), "y": [1]}))
    stats = pe.collect_stats(path, columns=["st.b"], progress=False)
    assert rows(stats, "max_values") == [{"st": {"b": "z"}}]


def test_schema_drift_widening_and_missing_columns(tmp_path):
    a = write(str(tmp_path / "a.parquet"), pa.table({"x": pa.array([1], pa.int32()),
                                                     "f": pa.array([1.5], pa.float32())}))
    b = write(str(tmp_path / "b.parquet"), pa.table({"x": pa.array([2**40], pa.int64()),
                                                     "f": [2.5], "new": ["s"]}))
    stats = pe.collect_stats([a, b], granularity="file", progress=False)
    mins = stats.schema.field("min_values").type
    assert mins.field("x").type == pa.int64() and mins.field("f").type == pa.float64()
    assert rows(stats, "min_values") == [{"x": 1, "f": 1.5, "new": None},
                                         {"x": 2**40, "f": 2.5, "new": "s"}]
    assert rows(stats, "null_count")[0]["new"] is None, "missing in a file: unknown there"


def test_incompatible_schema_change_is_an_error(tmp_path):
    a = write(str(tmp_path / "a.parquet"), pa.table({"x": [1]}))
    b = write(str(tmp_path / "b.parquet"), pa.table({"x": ["one"]}))
    with pytest.raises(pe.StatsError, match="column x changes type across files: int64 vs string"):
        pe.collect_stats([a, b], progress=False)


@pytest.mark.parametrize("first", ["list", "plain"])
def test_a_list_in_some_files_only_is_an_error(tmp_path, first):
    """list<int64> in one file, int64 in the other: their element and row statistics share a
    type, which must not hide that one describes elements and the other rows."""
    tables = {"list": pa.table({"x": [[1, 2]]}), "plain": pa.table({"x": [15]})}
    order = [first] + [k for k in tables if k != first]
    paths = [write(str(tmp_path / f"{i}.parquet"), tables[k]) for i, k in enumerate(order)]
    with pytest.raises(pe.StatsError, match="a list/map in some files, not in others"):
        pe.collect_stats(paths, progress=False)


@pytest.fixture
def bad_files(tmp_path):
    good = write(str(tmp_path / "good.parquet"), pa.table({"x": [1, 2]}))
    empty = str(tmp_path / "empty.parquet")
    open(empty, "wb").close()
    truncated = str(tmp_path / "truncated.parquet")
    with open(good, "rb") as src, open(truncated, "wb") as dst:
        data = src.read()
        dst.write(data[: len(data) // 2])
    csv_named = str(tmp_path / "csv.parquet")
    with open(csv_named, "w") as f:
        f.write("x,y\n1,2\n")
    return {"good": good, "empty": empty, "truncated": truncated, "csv": csv_named,
            "missing": str(tmp_path / "missing.parquet")}


@pytest.mark.parametrize("kind", ["empty", "truncated", "csv", "missing"])
def test_unreadable_file_is_an_error_naming_it(bad_files, kind):
    with pytest.raises(pe.StatsError) as info:
        pe.collect_stats([bad_files["good"], bad_files[kind]], progress=False)
    assert bad_files[kind] in str(info.value), "the message names the file"
    assert info.value.containers == [bad_files[kind]]


def test_skip_lists_the_file_and_keeps_it(bad_files):
    stats = pe.collect_stats([bad_files["good"], bad_files["csv"], bad_files["empty"]],
                             granularity="file", on_error="skip", progress=False)
    skipped = stats.metadata["skipped_files"]
    assert [s["path"] for s in skipped] == [bad_files["csv"], bad_files["empty"]]
    assert "magic" in skipped[0]["error"].lower() or "parquet" in skipped[0]["error"].lower()
    assert stats.column("path").to_pylist() == [bad_files["good"], bad_files["csv"],
                                                bad_files["empty"]], "a row per skipped file"
    assert stats.column("num_records").to_pylist() == [2, None, None]
    assert stats.column("min_values").to_pylist()[1] is None, "unknown statistics: always kept"


def test_permission_error_from_the_reader_is_reported(bad_files, monkeypatch):
    import prune_engine.stats.collect as collect

    def deny(source, path, columns=None, filesystem=None, **indexes):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(collect, "read_footer", deny)
    with pytest.raises(pe.StatsError, match="good.parquet: not a readable Parquet file: "
                                            "Permission denied"):
        pe.collect_stats(bad_files["good"], progress=False)


@pytest.mark.parametrize("source, message", [
    ("does/not/exist", "no such file or directory"),
    ("nothing/*.parquet", "matches no files"),
    ([], "empty"),
    (42, "not int"),
])
def test_bad_sources(source, message):
    with pytest.raises(pe.StatsError, match=message):
        pe.collect_stats(source, progress=False)


def test_directory_without_parquet_files(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(pe.StatsError, match="no Parquet files"):
        pe.collect_stats(str(tmp_path), progress=False)


@pytest.mark.parametrize("kw, message", [({"granularity": "page"}, "granularity"),
                                         ({"on_error": "ignore"}, "on_error")])
def test_bad_options(lake, kw, message):
    with pytest.raises(pe.StatsError, match=message):
        pe.collect_stats(lake, progress=False, **kw)


def test_progress_bar_only_when_asked(lake, capsys):
    pe.collect_stats(lake, progress=True)
    assert "file" in capsys.readouterr().err, "a bar on stderr"
    pe.collect_stats(lake, progress=False)
    pe.collect_stats(lake)  # not a terminal under pytest: quiet
    assert capsys.readouterr().err == ""


def test_save_read_round_trip(lake, tmp_path):
    stats = pe.collect_stats(lake, progress=False)
    path = str(tmp_path / "stats.parquet")
    stats.save(path)
    back = pe.read_stats(path)
    assert back.table.equals(stats.table)
    assert back.schema.field("min_values").type == stats.schema.field("min_values").type
    assert back.metadata == stats.metadata


def test_read_stats_refuses_newer_and_corrupt(tmp_path):
    newer = str(tmp_path / "newer.parquet")
    pq.write_table(pa.table({"container": ["a"]}).replace_schema_metadata(
        {layout.FORMAT_VERSION_KEY: b"99"}), newer)
    with pytest.raises(pe.StatsError, match="version 99 is newer"):
        pe.read_stats(newer)
    bad = str(tmp_path / "bad.parquet")
    pq.write_table(pa.table({"container": ["a"]}).replace_schema_metadata(
        {layout.FORMAT_VERSION_KEY: b"x1"}), bad)
    with pytest.raises(pe.StatsError, match="corrupt statistics format version"):
        pe.read_stats(bad)
    plain = str(tmp_path / "plain.parquet")
    pq.write_table(pa.table({"container": ["a"]}), plain)
    with pytest.raises(pe.StatsError, match="not a prune_engine statistics file"):
        pe.read_stats(plain)
    junk = str(tmp_path / "junk.parquet")
    open(junk, "w").write("not parquet")
    with pytest.raises(pe.StatsError, match="junk.parquet: not a readable statistics file"):
        pe.read_stats(junk)


def test_update_stats_rereads_only_changed_files(lake, monkeypatch):
    stats = pe.collect_stats(lake, progress=False)
    a = os.path.join(lake, "year=2023", "region=eu", "a.parquet")
    b = os.path.join(lake, "year=2024", "region=us", "b.parquet")
    os.remove(b)
    time.sleep(0.01)
    write(a, pa.table({"x": [100], "s": ["new"]}))
    write(os.path.join(lake, "year=2025", "region=eu", "d.parquet"), pa.table({"x": [7], "s": ["d"]}))
    import prune_engine.stats.collect as collect

    read = []
    original = collect.read_footer
    monkeypatch.setattr(collect, "read_footer",
                        lambda src, path, *a, **k: read.append(path) or original(src, path, *a, **k))
    updated = pe.update_stats(stats, lake, progress=False)
    assert sorted(os.path.basename(p) for p in read) == ["a.parquet", "d.parquet"], \
        "the unchanged c.parquet is not re-read"
    names = [os.path.basename(p) for p in updated.column("path").to_pylist()]
    assert names == ["a.parquet", "c.parquet", "d.parquet"], "b deleted, d added, listing order"
    assert rows(updated, "max_values")[0]["x"] == 100
    assert [v["year"] for v in updated.column("partition_values").to_pylist()] == [2023, 2024,
                                                                                   2025]
    assert set(updated.metadata["files"]) == set(updated.column("path").to_pylist())


def test_update_after_save_and_read(lake, tmp_path):
    path = str(tmp_path / "s.parquet")
    pe.collect_stats(lake, granularity="file", progress=False).save(path)
    updated = pe.update_stats(pe.read_stats(path), lake, progress=False)
    assert updated.column("row_group").null_count == updated.num_rows, "granularity kept"
    assert updated.num_rows == 3


def test_ngram_index_per_row_group_and_skipped_files_kept(tmp_path):
    path = write(str(tmp_path / "a.parquet"),
                 pa.table({"s": ["hello world", "foo bar", "zzz", "abcdef"], "x": [1, 2, 3, 4]}),
                 row_group_size=2)
    junk = str(tmp_path / "b.parquet")
    open(junk, "w").write("not parquet")
    stats = pe.collect_stats([path, junk], ngram=["s"], on_error="skip", progress=False)
    index = stats.column("ngram_index").to_pylist()
    assert [v["s"] is not None for v in index] == [True, True, False], "no index: skipped file"
    assert pe.prune(stats, "s LIKE '%world%'").to_pylist() == [True, False, True], \
        "should prune row group 1: no 'wor' trigram; the skipped file is kept"
    assert stats.metadata["collect"]["ngram"] == ["s"]


@pytest.mark.parametrize("ngram, message", [(["nope"], "'nope'"), (["x"], "string column")])
def test_ngram_bad_columns(lake, ngram, message):
    with pytest.raises(pe.StatsError, match=message):
        pe.collect_stats(lake, ngram=ngram, progress=False)


def test_every_file_skipped_still_has_the_layout(bad_files):
    stats = pe.collect_stats([bad_files["csv"]], on_error="skip", progress=False)
    assert stats.column("path").to_pylist() == [bad_files["csv"]]
    for name in ("min_values", "max_values", "null_count"):
        assert stats.column(name).null_count == 1, f"{name}: unknown"


def test_thread_counts_give_the_same_table(tmp_path):
    """Files read inline, by two threads, or one batch per thread: one result, in order."""
    paths = []
    for k in range(37):
        paths.append(write(str(tmp_path / f"f{k:02d}.parquet"),
                           pa.table({"x": [k, k + 100], "s": [f"v{k}", None]})))
    paths.insert(5, str(tmp_path / "missing.parquet"))
    tables = [pe.collect_stats(paths, granularity="file", on_error="skip", progress=False,
                               threads=n) for n in (1, 2, 16)]
    assert tables[0].table.equals(tables[1].table) and tables[0].table.equals(tables[2].table)
    assert rows(tables[0], "min_values")[6] == {"x": 5, "s": "v5"}, "listing order kept"
    assert [s["path"] for s in tables[2].metadata["skipped_files"]] == [paths[5]]
