"""A lake on S3 as the Spark session reaches it: ``s3a://`` URIs, with the endpoint and keys in
the session's Hadoop settings (``spark.hadoop.fs.s3a.*``, general or per bucket), served on
localhost by moto. ``pes.collect_stats`` must make the statistics ``pe.collect_stats`` makes
of the same files on disk (named by their ``s3a://`` URIs), and the files' identities (for
freshness) must be read through the same settings. No AWS variable is set: without the
session's settings pyarrow could not reach the server at all."""

from __future__ import annotations

import os
import uuid
from types import SimpleNamespace

import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark._files import identities
from prune_engine.stats import filesystems
from tests.remote.s3server import KEY, SECRET, s3_server, write_lake
from tests.spark_sessions import session_conf

pytestmark = pytest.mark.spark

BUCKET = "spark-bucket"
_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION",
        "AWS_ENDPOINT_URL")


def _table(k: int) -> pa.Table:
    return pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64()),
                     "v": pa.array([None if i == 3 else i * 0.5 for i in range(10)])})


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    saved = {k: os.environ.pop(k) for k in _AWS if k in os.environ}
    local = str(tmp_path_factory.mktemp("s3a_lake"))
    try:
        with s3_server() as (endpoint, fs):
            write_lake(fs, BUCKET, local,
                       {f"day={k % 3}/part-{k}.parquet": _table(k) for k in range(7)}, 4)
            yield endpoint, local
    finally:
        os.environ.update(saved)


@pytest.fixture(params=["general", "per bucket"])
def configured(request, session, lake):
    """The session with the S3A endpoint and keys set (as ``fs.s3a.*`` or
    ``fs.s3a.bucket.<bucket>.*``) for the test, and no filesystem registered before it."""
    endpoint, _ = lake
    scope = "fs.s3a." if request.param == "general" else f"fs.s3a.bucket.{BUCKET}."
    settings = {f"spark.hadoop.{scope}{k}": v for k, v in (
        ("endpoint", f"http://{endpoint}"), ("access.key", KEY), ("secret.key", SECRET),
        ("endpoint.region", "us-east-1"))}
    filesystems.unregister(f"s3a://{BUCKET}/")
    yield from session_conf(session, settings)
    filesystems.unregister(f"s3a://{BUCKET}/")


@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_collect_stats_reads_s3a_through_the_session_settings(configured, lake, granularity):
    _, local = lake
    made = pes.collect_stats(configured, f"s3a://{BUCKET}/lake", granularity, files_per_task=2)
    expected = pe.collect_stats(local, granularity, progress=False)
    assert made.column("path").to_pylist() == [
        f"s3a://{BUCKET}/lake/" + os.path.relpath(p, local)
        for p in expected.column("path").to_pylist()]
    for name in ("num_records", "min_values", "max_values", "null_count", "partition_values"):
        assert made.column(name).equals(expected.column(name)), name
    for where in ("id = 42", "id > 55 AND day = 1", "v IS NULL"):
        assert pe.prune(made, where).equals(pe.prune(expected, where)), where


def test_file_identities_read_through_the_session_settings(configured, lake):
    _, local = lake
    stats = pes.collect_stats(configured, f"s3a://{BUCKET}/lake", "file")
    now = identities(stats.column("path").to_pylist())
    sizes = {os.path.relpath(p, local): os.path.getsize(p)
             for p in pe.collect_stats(local, "file", progress=False).column("path").to_pylist()}
    assert {k.split("/lake/", 1)[1]: v[0] for k, v in now.items()} == sizes
    assert identities([f"s3a://{BUCKET}/lake/gone.parquet"]) == {
        f"s3a://{BUCKET}/lake/gone.parquet": None}


def test_many_identities_come_from_one_listing_of_the_roots(configured, lake, monkeypatch):
    """Above LIST_OVER files, the roots are listed (a request per thousand objects, not one
    per file): the same sizes and modification times, and a file not there is gone."""
    from prune_engine.spark import _files

    stats = pes.collect_stats(configured, f"s3a://{BUCKET}/lake", "file")
    keys = stats.column("path").to_pylist() + [f"s3a://{BUCKET}/lake/day=1/gone.parquet"]
    one_by_one = identities(keys)
    monkeypatch.setattr(_files, "LIST_OVER", 0)
    asked, resolve = [], filesystems.resolve

    class Counting:  # the filesystem, counting what it is asked
        def __init__(self, fs):
            self.fs = fs

        def get_file_info(self, what):
            asked.append(what)
            return self.fs.get_file_info(what)

    def counting(*args):
        location, paths = resolve(*args)
        return SimpleNamespace(filesystem=Counting(location.filesystem)), paths

    monkeypatch.setattr(filesystems, "resolve", counting)
    listed = identities(keys, [f"s3a://{BUCKET}/lake"])  # ETags: a filesystem of S3 only
    assert {k: v and v[:2] for k, v in listed.items()} == \
        {k: v and v[:2] for k, v in one_by_one.items()}
    assert sum(isinstance(a, list) for a in asked) == 0, "no file asked for one by one"
    assert one_by_one[keys[-1]] is None and all(v is not None for v in list(one_by_one.values())[:-1])


def test_a_rewrite_in_the_same_second_is_seen_by_its_etag(configured, lake, monkeypatch):
    """An object rewritten with the same size within the same second (moto's clock stopped):
    the ETag the statistics job recorded differs from the one listed now, so the file counts
    as changed for the freshness check and the saved statistics collect it again."""
    import datetime as dt

    import moto.s3.models
    import pyarrow.fs as pafs

    from prune_engine.spark._files import changed, recorded_identity
    from prune_engine.spark._saved import saved_stats
    from tests.remote.test_etags import NEW, OLD

    endpoint, _ = lake
    fs = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, region="us-east-1",
                           scheme="http", endpoint_override=endpoint)
    still = dt.datetime(2026, 11, 26, 12, 0, 0)
    monkeypatch.setattr(moto.s3.models, "utcnow", lambda: still)
    name = f"etag-{uuid.uuid4().hex}"  # saved statistics are per folder: one per run
    folder, key = f"s3a://{BUCKET}/{name}", f"s3a://{BUCKET}/{name}/f.parquet"

    def put(data: bytes) -> None:
        with fs.open_output_stream(f"{BUCKET}/{name}/f.parquet") as out:
            out.write(data)

    put(OLD)
    stats = pes.collect_stats(configured, folder, "file")
    assert saved_stats(configured, folder).metadata["refresh"]["new"] == 1
    recorded = recorded_identity(stats.metadata["files"][key])
    before = identities([key])[key]
    assert len(recorded) == 3 and not changed(recorded, before)
    put(NEW)
    now = identities([key])[key]
    assert now[:2] == before[:2], "size and modification time cannot tell the writes apart"
    assert changed(recorded, now)
    refreshed = saved_stats(configured, folder)
    assert refreshed.metadata["refresh"]["changed"] == 1
    assert pe.prune(refreshed, "x = 8").to_pylist() == [True]
