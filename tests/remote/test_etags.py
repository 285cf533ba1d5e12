"""An object rewritten with the same size within the same second: what S3 tells apart only by
its ETag (:mod:`prune_engine.stats.etags`). moto, like S3, keeps modification times to the
second; its clock is frozen here so that both writes fall in one second on every machine.
The statistics of the first write must not be trusted for the second: the scan must return
the rows the files hold now (pyarrow reading them), and a refresh must collect the file again.
"""

from __future__ import annotations

import datetime as dt
import io
import warnings

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.stats import etags
from tests.remote.s3server import REGION, aws_keys, s3_server

BUCKET = "etag-bucket"


def _parquet(values: list[int]) -> bytes:
    """A Parquet file of one int64 column whose size does not depend on the values."""
    sink = io.BytesIO()
    pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), sink, compression="none",
                   use_dictionary=False)
    return sink.getvalue()


OLD, NEW = _parquet([1, 2, 3]), _parquet([7, 8, 9])


@pytest.fixture(scope="module")
def server():
    with aws_keys(), s3_server() as (endpoint, fs):
        fs.create_dir(BUCKET)
        yield endpoint, fs


@pytest.fixture
def lake(server, monkeypatch):
    """``(uri of the lake, fs, put(name, bytes))`` with moto's clock stopped: every write has
    the same modification time."""
    import moto.s3.models

    endpoint, fs = server
    still = dt.datetime(2026, 11, 26, 12, 0, 0, 250_000)
    monkeypatch.setattr(moto.s3.models, "utcnow", lambda: still)
    fs.delete_dir_contents(BUCKET, missing_dir_ok=True)

    def put(name: str, data: bytes) -> None:
        with fs.open_output_stream(f"{BUCKET}/lake/{name}") as out:
            out.write(data)

    put("a.parquet", _parquet([100, 200, 300]))
    put("b.parquet", OLD)
    uri = f"s3://{BUCKET}/lake?endpoint_override={endpoint}&scheme=http&region={REGION}"
    return uri, fs, put


def test_the_two_writes_differ_only_in_content():
    assert len(OLD) == len(NEW) and OLD != NEW


def test_a_rewrite_in_the_same_second_with_the_same_size_is_seen(lake):
    uri, fs, put = lake
    stats = pe.collect_stats(uri, granularity="file", progress=False)
    recorded = stats.metadata["files"][f"s3://{BUCKET}/lake/b.parquet"]
    assert len(recorded) == 3, "size, modification time and the ETag"
    before = fs.get_file_info(f"{BUCKET}/lake/b.parquet")
    put("b.parquet", NEW)
    after = fs.get_file_info(f"{BUCKET}/lake/b.parquet")
    assert (before.size, before.mtime_ns) == (after.size, after.mtime_ns), \
        "size and modification time cannot tell the two writes apart"

    for where in ("x = 8", "x > 5 AND x < 100", "x IN (7, 9)"):
        expected = pq.read_table(f"{BUCKET}/lake", filesystem=fs).to_pandas().query(
            where.replace("=", "==").replace("AND", "and").replace("IN", "in")
            .replace("(7, 9)", "[7, 9]"))
        got = pe.scan(uri, where=where, stats=stats)
        assert sorted(got.column("x").to_pylist()) == sorted(expected["x"]), where
        assert got.num_rows > 0, where

    updated = pe.update_stats(stats, uri, progress=False)
    assert updated.metadata["refresh"]["changed"] == 1
    assert updated.metadata["refresh"]["reused"] == 1
    assert pe.prune(updated, "x = 8").to_pylist() == [False, True]


def test_an_unchanged_lake_is_reused(lake):
    uri, _, _ = lake
    stats = pe.collect_stats(uri, granularity="file", progress=False)
    again = pe.update_stats(stats, uri, progress=False)
    assert again.metadata["refresh"]["reused"] == 2 and again.metadata["refresh"]["changed"] == 0


def test_a_dataset_source_records_etags_too(lake):
    import pyarrow.dataset as ds

    _, fs, put = lake
    dataset = ds.dataset(f"{BUCKET}/lake", filesystem=fs, format="parquet")
    stats = pe.collect_stats(dataset, granularity="file", progress=False)
    assert all(len(v) == 3 for v in stats.metadata["files"].values())
    put("b.parquet", NEW)
    assert pe.scan(dataset, where="x = 8", stats=stats).column("x").to_pylist() == [8]


def test_records_without_etags_still_agree(lake):
    """Statistics made without boto3 (or before ETags were read) record size and modification
    time: a listing with ETags agrees with them on those, and reuses the files."""
    uri, _, _ = lake
    stats = pe.collect_stats(uri, granularity="file", progress=False)
    stats.metadata["files"] = {k: v[:2] for k, v in stats.metadata["files"].items()}
    assert pe.update_stats(stats, uri, progress=False).metadata["refresh"]["reused"] == 2


def test_without_boto3_the_identity_is_size_and_modification_time(lake, monkeypatch):
    import sys

    uri, _, _ = lake
    etags._client.cache_clear()
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 -> ImportError
    try:
        stats = pe.collect_stats(uri, granularity="file", progress=False)
    finally:
        etags._client.cache_clear()
    assert all(len(v) == 2 for v in stats.metadata["files"].values())


def test_a_listing_refused_warns_once_and_gives_no_etags(server):
    _, fs = server
    etags._WARNED.clear()
    with pytest.warns(UserWarning, match="could not be listed"):
        assert etags.object_etags(fs, ["no-such-bucket/lake"]) == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert etags.object_etags(fs, ["no-such-bucket/other"]) == {}


def test_filesystems_boto3_cannot_follow_give_no_etags(server):
    endpoint, _ = server
    assert etags.object_etags(pafs.LocalFileSystem(), ["/tmp"]) == {}
    role = pafs.S3FileSystem(role_arn="arn:aws:iam::123456789012:role/r", region=REGION,
                             endpoint_override=endpoint, scheme="http")
    assert etags._s3_config(role) is None
    anonymous = pafs.S3FileSystem(anonymous=True, region=REGION, endpoint_override=endpoint,
                                  scheme="http")
    assert dict(etags._s3_config(anonymous))["anonymous"] is True


def test_folders_to_list():
    assert etags.folders_of(["b/a/p=1/f", "b/a/p=2/g", "b/c/h", "b/a2/i"]) == \
        ["b/a/p=1", "b/a/p=2", "b/a2", "b/c"]
    assert etags.folders_of(["b/a/f", "b/a/p=1/g"]) == ["b/a"]
    assert etags.etag_number('"abc"') == etags.etag_number("abc") != etags.etag_number("abd")
    assert 0 <= etags.etag_number("x") < 2 ** 63
