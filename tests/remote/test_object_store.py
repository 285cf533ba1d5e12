"""Lakes on an object store: the S3 API served on localhost by moto's server (started and
stopped here), reached by URI (``s3://bucket/lake?endpoint_override=...``) and by an explicit
``pyarrow.fs.S3FileSystem``; an fsspec filesystem (``memory://``); ``file://`` URIs. The
statistics must equal those of the same files on the local disk (names aside), pruning must
keep every file holding a matching row (DuckDB on the rows), and ``pe.scan`` must return the
rows of the local scan."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.remote.s3server import REGION, aws_keys, s3_server, write_lake

FILES = 6


def _table(k: int) -> pa.Table:
    return pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64()),
                     "s": pa.array([f"k{k}-{i}" for i in range(10)]),
                     "v": pa.array([None if i == 3 else i * 0.5 for i in range(10)])})


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """An S3 API on localhost with a bucket holding the lake, and the same lake on disk."""
    local = tmp_path_factory.mktemp("local_lake")
    with aws_keys(), s3_server() as (endpoint, fs):
        write_lake(fs, "lake-bucket", str(local),
                   {f"grp={k % 2}/part-{k}.parquet": _table(k) for k in range(FILES)}, 5)
        uri = (f"s3://lake-bucket/lake?endpoint_override={endpoint}&scheme=http"
               f"&region={REGION}")
        yield {"fs": fs, "uri": uri, "local": str(local), "endpoint": endpoint}


def _same_as_local(stats, local_stats, prefix: str, local_root: str):
    assert stats.column("path").to_pylist() == [
        prefix + os.path.relpath(p, local_root) for p in local_stats.column("path").to_pylist()]
    for name in ("num_records", "min_values", "max_values", "null_count", "partition_values"):
        assert stats.column(name).equals(local_stats.column(name)), name


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_statistics_over_s3_by_uri_and_by_filesystem(s3, granularity):
    local = pe.collect_stats(s3["local"], granularity=granularity, progress=False)
    by_uri = pe.collect_stats(s3["uri"], granularity=granularity, progress=False)
    _same_as_local(by_uri, local, "s3://lake-bucket/lake/", s3["local"])
    by_fs = pe.collect_stats("lake-bucket/lake", granularity=granularity, filesystem=s3["fs"],
                             progress=False)
    _same_as_local(by_fs, local, "lake-bucket/lake/", s3["local"])
    assert set(by_fs.metadata["files"]) == set(by_fs.column("path").to_pylist())


def test_pruning_and_scans_over_s3_match_the_local_lake(s3):
    stats = pe.collect_stats(s3["uri"], granularity="row_group", compute_missing=True,
                             ngram=["s"], progress=False)
    local_stats = pe.collect_stats(s3["local"], granularity="row_group", ngram=["s"],
                                   progress=False)
    for where in ["id = 42", "id > 55", "grp = 1 AND id < 20", "s LIKE '%3-4%'", "v IS NULL"]:
        assert pe.prune(stats, where).equals(pe.prune(local_stats, where)), where
        remote = pe.scan("lake-bucket/lake", where=where, filesystem=s3["fs"], stats=None)
        assert remote.sort_by("id").equals(pe.scan(s3["local"], where=where).sort_by("id"))


def test_update_stats_over_s3(s3):
    fs = s3["fs"]
    stats = pe.collect_stats("lake-bucket/lake", granularity="file", filesystem=fs,
                             progress=False)
    pq.write_table(_table(9), "lake-bucket/lake/grp=1/part-9.parquet", filesystem=fs)
    try:
        updated = pe.update_stats(stats, "lake-bucket/lake", filesystem=fs, progress=False)
        assert updated.num_rows == FILES + 1
        assert updated.metadata["refresh"]["new"] == 1
        assert updated.metadata["refresh"]["reused"] == FILES
    finally:
        fs.delete_file("lake-bucket/lake/grp=1/part-9.parquet")


def test_missing_objects_and_globs_are_clear_errors(s3):
    with pytest.raises(pe.StatsError, match="no such file or directory"):
        pe.collect_stats("lake-bucket/nope", filesystem=s3["fs"], progress=False)
    with pytest.raises(pe.StatsError, match="globs are read on the local disk only"):
        pe.collect_stats("lake-bucket/lake/*.parquet", filesystem=s3["fs"], progress=False)


def test_an_fsspec_filesystem_and_memory_uris(tmp_path):
    import fsspec

    memory = fsspec.filesystem("memory")
    for k in range(3):
        with memory.open(f"/mlake/p={k}/f.parquet", "wb") as out:
            pq.write_table(_table(k), out)
    try:
        by_uri = pe.collect_stats("memory://mlake", granularity="file", progress=False)
        by_fs = pe.collect_stats("/mlake", granularity="file", filesystem=memory,
                                 progress=False)
        assert by_uri.column("path").to_pylist() == [f"memory://mlake/p={k}/f.parquet"
                                                     for k in range(3)]
        assert by_uri.column("max_values").equals(by_fs.column("max_values"))
        assert pe.prune(by_uri, "id >= 20").to_pylist() == [False, False, True]
    finally:
        memory.rm("/mlake", recursive=True)
    with pytest.raises(TypeError, match="fsspec filesystem"):
        pe.collect_stats("/x", filesystem=object(), progress=False)


def test_slices_named_by_uris_are_read_through_their_filesystem(s3):
    """What a Spark executor runs (``collect_part``): files named by URIs (Hadoop's
    ``s3a://`` too) are read from the store, the same statistics as the whole listing's."""
    from prune_engine.stats.collect import collect_part, merge_parts
    from prune_engine.stats.listing import SourceFile, list_source, partition_types

    whole = pe.collect_stats(s3["uri"], granularity="file", progress=False)
    listing = list_source(s3["uri"])
    query = s3["uri"].split("?", 1)[1]
    types = partition_types(listing.files)
    parts = []
    for scheme in ("s3", "s3a"):
        named = [SourceFile(f"{scheme}://{f.location}?{query}", dict(f.partitions))
                 for f in listing.files]
        parts.append(merge_parts([collect_part(named[:3], types, "file"),
                                  collect_part(named[3:], types, "file")]))
    for stats in parts:
        assert stats.column("max_values").equals(whole.column("max_values"))
        assert stats.column("partition_values").equals(whole.column("partition_values"))


def test_statistics_saved_to_and_read_from_s3(s3):
    stats = pe.collect_stats(s3["uri"], granularity="file", progress=False)
    stats.save("lake-bucket/stats/lake.parquet", filesystem=s3["fs"])
    back = pe.read_stats("lake-bucket/stats/lake.parquet", filesystem=s3["fs"])
    assert back.table.equals(stats.table) and back.metadata == stats.metadata
    query = s3["uri"].split("?", 1)[1]
    assert pe.read_stats(f"s3://lake-bucket/stats/lake.parquet?{query}").table.equals(stats.table)
    with pytest.raises(pe.StatsError, match="no such statistics file"):
        pe.read_stats("lake-bucket/stats/nope.parquet", filesystem=s3["fs"])


def test_azure_names_the_container_in_the_authority(s3, tmp_path):
    """``abfss://container@account.dfs.core.windows.net/lake``: pyarrow's Azure filesystem
    has the path ``container/lake`` (the container moves from the authority into the path);
    files are named by their URIs all the same. Served here by a local folder registered for
    that account (no Azure), the statistics equal the local lake's."""
    from prune_engine.stats import filesystems

    import pyarrow.fs as pafs

    prefix = "abfss://c@account.dfs.core.windows.net/"
    os.makedirs(tmp_path / "c")
    os.symlink(s3["local"], tmp_path / "c" / "lake")
    filesystems.register(prefix, pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()),
                         root="c/")
    try:
        stats = pe.collect_stats(prefix + "lake", granularity="file", progress=False)
    finally:
        filesystems.unregister(prefix)
    local = pe.collect_stats(s3["local"], granularity="file", progress=False)
    _same_as_local(stats, local, prefix + "lake/", s3["local"])
    location, path = filesystems.resolve(prefix + "lake")  # Azure itself: the same mapping
    assert (type(location.filesystem).__name__, path) == ("AzureFileSystem", "c/lake")
    assert location.name("c/lake/x.parquet") == prefix + "lake/x.parquet"
