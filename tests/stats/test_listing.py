"""prune_engine.stats.listing: a source's files, partition strings, identity and partition types."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from prune_engine.errors import StatsError
from prune_engine.stats.listing import (HIVE_NULL, SourceFile, identify, list_source,
                                        partition_arrays, partition_types)


def write(path, table=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table if table is not None else pa.table({"x": [1]}), path)
    return path


@pytest.fixture
def lake(tmp_path):
    root = str(tmp_path / "lake")
    write(f"{root}/k=b%2Fc/day=2024-03-02/z.parquet")
    write(f"{root}/k=a/day=2024-03-01/y.PARQ")
    write(f"{root}/k=a/day={HIVE_NULL}/x.parquet")
    write(f"{root}/_delta_log/ignored.parquet")
    write(f"{root}/.hidden/ignored.parquet")
    write(f"{root}/k=a/_tmp.parquet")
    open(f"{root}/notes.txt", "w").close()
    return root


def test_directory_walk_order_hidden_names_and_raw_partitions(lake):
    listing = list_source(lake)
    assert [os.path.relpath(f.path, lake).replace(os.sep, "/") for f in listing.files] == [
        "k=a/day=2024-03-01/y.PARQ", f"k=a/day={HIVE_NULL}/x.parquet",
        "k=b%2Fc/day=2024-03-02/z.parquet"], "sorted walk; . and _ names are not data"
    assert [f.partitions for f in listing.files] == [
        {"k": "a", "day": "2024-03-01"}, {"k": "a", "day": None},
        {"k": "b/c", "day": "2024-03-02"}], "raw strings, unquoted; the Hive null is None"
    assert listing.filesystem is None and listing.typed is None
    assert all(f.size is None and f.mtime_ns is None for f in listing.files), "not stat'ed yet"


def test_glob_path_and_list_sources(lake):
    by_glob = list_source(os.path.join(lake, "k=a", "*", "*"))
    assert [os.path.basename(f.path) for f in by_glob.files] == ["y.PARQ", "x.parquet"]
    assert by_glob.files[0].partitions == {"k": "a", "day": "2024-03-01"}
    one = list_source(by_glob.files[0].path)
    assert [f.path for f in one.files] == [by_glob.files[0].path]
    mixed = list_source([os.path.join(lake, "k=b%2Fc"), by_glob.files[1].path])
    assert [os.path.basename(f.path) for f in mixed.files] == ["z.parquet", "x.parquet"], \
        "a directory in the list is walked, in list order"


def test_dataset_source_keeps_its_types_and_filesystem(lake):
    dataset = ds.dataset(os.path.join(lake, "k=a"), format="parquet",
                         partitioning=ds.partitioning(pa.schema([("day", pa.string())]),
                                                      flavor="hive"))
    listing = list_source(dataset)
    assert listing.typed == pa.schema([("day", pa.string())])
    assert isinstance(listing.filesystem, pafs.FileSystem)
    assert len(listing.files) == 2


def test_in_memory_dataset_has_no_files():
    with pytest.raises(StatsError, match="InMemoryDataset has no files"):
        list_source(ds.dataset(pa.table({"x": [1]})))


def test_identify_local_and_with_a_filesystem(tmp_path):
    path = write(str(tmp_path / "a.parquet"))
    gone = str(tmp_path / "gone.parquet")
    files = [SourceFile(path), SourceFile(gone)]
    identify(files, None)
    st = os.stat(path)
    assert (files[0].size, files[0].mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert (files[1].size, files[1].mtime_ns) == (None, None), "cannot be stat'ed: unknown"
    again = [SourceFile(path)]
    identify(again, pafs.LocalFileSystem())
    assert again[0].size == st.st_size and again[0].mtime_ns is not None


def test_partition_arrays_infer_types_over_all_files():
    files = [SourceFile("a", {"n": "7", "d": "2024-03-01", "s": "1", "z": None}),
             SourceFile("b", {"n": "-2", "d": None, "s": "x"}),
             SourceFile("c", {"n": None, "d": "2024-03-02", "s": "2"})]
    arrays = partition_arrays(files, None)
    assert list(arrays) == ["n", "d", "s", "z"], "keys in order of first appearance"
    assert {k: v.type for k, v in arrays.items()} == {
        "n": pa.int64(), "d": pa.date32(), "s": pa.string(), "z": pa.string()}
    assert arrays["n"].to_pylist() == [7, -2, None]
    assert arrays["s"].to_pylist() == ["1", "x", "2"], "one non-integer: all strings"
    assert arrays["z"].to_pylist() == [None, None, None], "absent and Hive null: both None"


def test_partition_arrays_date_needs_the_iso_form():
    files = [SourceFile("a", {"d": "2024-3-1"})]
    assert partition_arrays(files, None)["d"].type == pa.string()


def test_partition_arrays_take_known_types():
    typed = pa.schema([("n", pa.int32())])
    folders = [SourceFile("a", {"n": "5", "s": "q"}), SourceFile("b", {"n": None})]
    arrays = partition_arrays(folders, typed)
    assert arrays["n"].type == pa.int32() and arrays["n"].to_pylist() == [5, None]
    assert arrays["s"].to_pylist() == ["q", None]
    values = [SourceFile("a", {"n": 5}), SourceFile("b", {"n": 6})]  # a dataset's typed keys
    assert partition_arrays(values, typed)["n"].to_pylist() == [5, 6]


def test_partition_types_of_a_whole_listing_type_its_slices_alike():
    files = [SourceFile("a", {"n": "1"}), SourceFile("b", {"n": "x"})]
    schema = partition_types(files)
    assert schema == pa.schema([("n", pa.string())])
    assert partition_types(files[:1]) == pa.schema([("n", pa.int64())]), "a slice alone differs"
    assert partition_arrays(files[:1], schema)["n"].to_pylist() == ["1"]
    assert partition_types([SourceFile("a")]) == pa.schema([])


def test_file_uris_are_local_paths(tmp_path):
    root = tmp_path / "a b"
    root.mkdir()
    pq.write_table(pa.table({"x": [1]}), root / "f.parquet")
    uri = "file://" + str(root).replace(" ", "%20")
    assert [f.path for f in list_source(uri).files] == [str(root / "f.parquet")]
    assert [f.path for f in list_source([uri + "/f.parquet"]).files] == [str(root / "f.parquet")]
    with pytest.raises(StatsError, match="another host"):
        list_source("file://elsewhere/data")
