"""A lake only the session's Hadoop configuration reaches: a ``viewfs://`` mount table, set in
the session's settings, over a local folder. pyarrow cannot open ``viewfs://`` (no such
scheme, no libhdfs here), so listing, file identities and statistics go through Spark
(:mod:`prune_engine.spark._through_spark`). Every answer must equal plain Spark's on the same
URIs, on classic and Connect sessions, and Spark must scan only the kept files."""

from __future__ import annotations

import os
import uuid
import warnings

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import prune_engine.spark as pes
from prune_engine.errors import StatsError
from prune_engine.spark import _saved, _through_spark
from prune_engine.spark._files import identities
from prune_engine.spark._session import is_connect
from prune_engine.spark._through_spark import reached_by_pyarrow
from prune_engine.stats import filesystems
from tests.spark.helpers import explained, scanned_files, sorted_rows, write

pytestmark = pytest.mark.spark

FILES = 9
WHERES = ["id < 40", "id >= 650 AND day = 2", "v IS NULL AND id > 700", "s = 'k402'",
          "v >= 200.0", "id IN (5, 777)", "day <> 1 AND id BETWEEN 100 AND 120"]


def _table(k: int) -> pa.Table:
    ids = list(range(k * 100, k * 100 + 100))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "v": pa.array([None if i % 17 == 0 else float("nan") if i == 402 else i / 4
                                    for i in ids]),
                     "s": pa.array([f"k{i}" for i in ids])})


def _write_lake(folder: str, files: int = FILES) -> None:
    for k in range(files):
        write(os.path.join(folder, f"day={k % 3}", f"part-{k:03d}.parquet"), _table(k))


@pytest.fixture(scope="module")
def mount(session, tmp_path_factory):
    """``(the mount's URI, the local folder under it)``: a mount table of its own, so that
    Hadoop's cached filesystems of other mounts are not reused."""
    folder = tmp_path_factory.mktemp("mounted")
    name = f"pe{uuid.uuid4().hex[:10]}"
    key = f"fs.viewfs.mounttable.{name}.link./lake"
    session.conf.set(key, folder.as_uri())
    yield f"viewfs://{name}/lake", str(folder)
    session.conf.unset(key)


@pytest.fixture
def lake(mount, request):
    """A fresh lake under the mount: ``(its URI, its local folder)``."""
    uri, folder = mount
    name = request.node.name.replace("[", "_").replace("]", "").replace(" ", "_")[:60]
    _write_lake(os.path.join(folder, name))
    return f"{uri}/{name}", os.path.join(folder, name)


def _equal_to_plain(session, source, where, stats=None):
    df, summary = pes.read(session, source, where, stats=stats, return_summary=True)
    rows, scanned = scanned_files(df)
    plain = session.read.parquet(source).where(where)
    assert sorted_rows(rows) == sorted_rows(plain.collect()), where
    assert df.columns == plain.columns
    assert scanned == summary.files_read, where
    return summary


def test_pyarrow_cannot_open_the_mount_but_spark_reads_it(session, lake):
    uri, _ = lake
    assert not reached_by_pyarrow(uri + "/day=0/part-000.parquet")
    assert reached_by_pyarrow(os.getcwd())
    assert session.read.parquet(uri).count() == FILES * 100


def test_collect_stats_per_file_through_spark(session, lake):
    """Exact per-file statistics (NaN and NULL counted apart), recorded with the identities
    Hadoop gives (size, modification time in ms), named by the files' URIs."""
    uri, folder = lake
    stats = pes.collect_stats(session, uri, granularity="file")
    rows = {r["path"]: r for r in stats.table.to_pylist()}
    assert len(rows) == FILES
    for k in range(FILES):
        local = os.path.join(folder, f"day={k % 3}", f"part-{k:03d}.parquet")
        key = f"{uri}/day={k % 3}/part-{k:03d}.parquet"
        table = pq.read_table(local)
        row = rows[key]
        assert (row["min_values"]["id"], row["max_values"]["id"]) == (k * 100, k * 100 + 99)
        assert row["min_values"]["day"] == row["max_values"]["day"] == k % 3
        assert row["null_count"]["v"] == table.column("v").null_count
        assert row["nan_count"]["v"] == (1 if k == 4 else 0)
        st = os.stat(local)
        assert stats.metadata["files"][key][:2] == [st.st_size,
                                                   st.st_mtime_ns // 1_000_000 * 1_000_000]


@pytest.mark.parametrize("asked", [{}, {"granularity": "file", "ngram": ["s"]},
                                   {"granularity": "file", "bloom": ["s"]}])
def test_row_groups_and_indexes_need_pyarrow_and_say_so(session, lake, asked):
    uri, _ = lake
    with pytest.raises(StatsError, match="granularity='file' without indexes"):
        pes.collect_stats(session, uri, **asked)


def test_identities_come_from_sparks_listing(session, lake):
    uri, folder = lake
    keys = [f"{uri}/day=1/part-001.parquet", f"{uri}/day=1/part-gone.parquet"]
    found = identities(keys, [uri], session)
    st = os.stat(os.path.join(folder, "day=1", "part-001.parquet"))
    assert found == {keys[0]: (st.st_size, st.st_mtime_ns // 1_000_000), keys[1]: None}
    with pytest.raises(StatsError, match="no Spark session"):
        identities(keys, [uri])


@pytest.mark.parametrize("where", WHERES)
def test_read_equals_plain_spark(session, mount, where):
    uri, folder = mount
    if not os.path.isdir(os.path.join(folder, "shared")):
        _write_lake(os.path.join(folder, "shared"))
    source = f"{uri}/shared"
    stats = pes.collect_stats(session, source, granularity="file")
    summary = _equal_to_plain(session, source, where, stats)
    assert summary.files_total == FILES
    assert summary.files_read < FILES / 2, where  # NaN and NULL counts prune too


def test_saved_statistics_follow_new_changed_and_gone_files(session, lake):
    uri, folder = lake
    where = "id < 150 OR id >= 900"

    def read():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the changed file's warning
            return _equal_to_plain(session, uri, where).statistics

    write(os.path.join(folder, "day=1", "part-empty.parquet"), _table(0).slice(0, 0))
    assert read()["new"] == FILES + 1
    again = read()
    assert (again["reused"], again["new"], again["changed"]) == (FILES + 1, 0, 0), \
        "a file without rows is remembered too"
    changed = os.path.join(folder, "day=1", "part-001.parquet")
    pq.write_table(_table(30), changed)  # ids 3000..3099 now: not what was recorded
    os.remove(os.path.join(folder, "day=2", "part-002.parquet"))
    write(os.path.join(folder, "day=0", "part-new.parquet"), _table(9))
    after = read()
    assert (after["reused"], after["changed"], after["new"], after["gone"]) == \
        (FILES - 1, 1, 1, 1)
    assert read()["reused"] == FILES + 1


def test_join_and_count_equal_plain_spark(session, lake):
    uri, _ = lake
    stats = pes.collect_stats(session, uri, granularity="file")
    dim = session.createDataFrame([(5, "a"), (777, "b"), (None, "c")], "id long, tag string")
    joined, summary = pes.join(session, uri, dim, on="id", fact_stats=stats,
                               return_summary=True)
    fact = session.read.parquet(uri)
    plain = fact.join(dim, "id")
    assert sorted_rows(joined.collect()) == sorted_rows(plain.collect())
    assert joined.columns == plain.columns
    assert summary.files_read == 2
    assert len(explained(joined)) <= 2 * len(explained(plain))
    where = "id >= 250 AND v > 70"
    assert pes.count(session, uri, where, stats=stats) == fact.where(where).count()


def test_a_catalog_table_on_the_mount(session, lake):
    uri, _ = lake
    name = f"pe_mounted_{'connect' if is_connect(session) else 'classic'}"
    session.sql(f"DROP TABLE IF EXISTS {name}")
    session.sql(f"CREATE TABLE {name} USING parquet LOCATION '{uri}'")
    try:
        session.sql(f"MSCK REPAIR TABLE {name}")
        where = "id < 40"
        out, summary = pes.read(session, name, where, return_summary=True)
        rows, scanned = scanned_files(out)
        assert sorted_rows(rows) == sorted_rows(session.table(name).where(where).collect())
        assert scanned == summary.files_read == 1
    finally:
        session.sql(f"DROP TABLE IF EXISTS {name}")


class _Refusing(pafs.FileSystemHandler):
    """A filesystem pyarrow opens but that refuses every request, as a bucket does to
    credentials it does not accept."""

    def get_type_name(self):
        return "refusing"

    def equals(self, other):
        return self is other

    def normalize_path(self, path):
        return path

    def _refuse(self, *args, **kwargs):
        raise PermissionError("AccessDenied: no credentials for this bucket")

    get_file_info = get_file_info_selector = create_dir = delete_dir = _refuse
    delete_dir_contents = delete_root_dir_contents = delete_file = move = copy_file = _refuse
    open_input_stream = open_input_file = open_output_stream = open_append_stream = _refuse


@pytest.fixture
def refused(lake, monkeypatch):
    """The lake's URI, with a filesystem registered for its ``scheme://authority/`` that
    pyarrow opens but that refuses every request; no refusal remembered before."""
    uri, _ = lake
    prefix = uri.split("/lake/")[0] + "/"
    monkeypatch.setattr(_through_spark, "_REFUSED", set())
    filesystems.register(prefix, pafs.PyFileSystem(_Refusing()))
    yield uri
    filesystems.unregister(prefix)


def test_a_refused_listing_reads_through_spark(session, refused):
    """Credentials only the cluster has: the first refusal warns, and the read (statistics
    collected and refreshed) goes through Spark, equal to plain Spark."""
    assert reached_by_pyarrow(refused)
    with pytest.warns(UserWarning, match="pyarrow cannot list viewfs://"):
        summary = _equal_to_plain(session, refused, "id < 40")
    assert (summary.statistics["new"], summary.files_read) == (FILES, 1)
    assert not reached_by_pyarrow(refused)
    again = _equal_to_plain(session, refused, "id >= 850")
    assert (again.statistics["reused"], again.files_read) == (FILES, 1)
    assert _saved._path(session, [refused]) != _saved._path(session, [refused], True), \
        "statistics Spark aggregated are never merged into those read from footers"


def test_a_refused_collection_aggregates_through_spark(session, refused):
    with pytest.warns(UserWarning, match="pyarrow cannot list"):
        stats = pes.collect_stats(session, refused, granularity="file")
    assert stats.num_rows == FILES


@pytest.mark.parametrize("error, refused", [(PermissionError("AccessDenied"), True),
                                            (OSError("AWS Error ACCESS_DENIED"), True),
                                            (FileNotFoundError("no such key"), False)])
def test_only_a_refusal_turns_to_spark(monkeypatch, error, refused):
    """pyarrow refused (an OSError) turns the bucket to Spark; a missing file (a typo in the
    path) is an error, and the bucket stays pyarrow's."""
    monkeypatch.setattr(_through_spark, "_REFUSED", set())
    monkeypatch.setattr(_through_spark, "_opens", lambda prefix: True)
    name = "s3a://bucket/lake/x.parquet"

    def by_pyarrow():
        raise error

    if refused:
        with pytest.warns(UserWarning, match="pyarrow cannot list s3a://bucket/"):
            assert _through_spark.or_through_spark([name], by_pyarrow, lambda: "spark") == "spark"
    else:
        with pytest.raises(FileNotFoundError):
            _through_spark.or_through_spark([name], by_pyarrow, lambda: "spark")
    assert reached_by_pyarrow(name) is not refused


_LONG = "https://example.org/" + "very/long/common/prefix/" * 4 + "é/"  # 117 bytes, non-ASCII
_I64 = (-(1 << 63), -(1 << 63) + 1, -1, 0, 1, (1 << 63) - 2, (1 << 63) - 1)
_X = (-0.0, 0.0, float("nan"), float("inf"), float("-inf"), 1.5, -1.5, None)


def _shaped(k: int) -> pa.Table:
    """File ``k`` of a lake with the shapes users have: URLs under a long common prefix that
    differ only at their end, high-entropy hex, one of the int64 limits or their neighbours,
    and one of -0.0, 0.0, NaN, the infinities and NULL."""
    import random

    rng = random.Random(k)
    return pa.table({
        "url": [f"{_LONG}{k:02d}/{i:03d}" for i in range(8)],
        "hex": [f"{rng.getrandbits(128):032x}" for _ in range(8)],
        "big": pa.array([_I64[k % len(_I64)]] * 8, pa.int64()),
        "x": pa.array([_X[k]] * 8, pa.float64()),
    })


@pytest.mark.parametrize("where, most", [
    (f"url = '{_LONG}03/005'", 1), (f"url >= '{_LONG}06'", 2), (f"url < '{_LONG}01/'", 1),
    ("url LIKE '%/07/%'", 8), ("hex = '0'", 0), ("hex > 'f'", 8),
    (f"big = {(1 << 63) - 1}", 1), (f"big <= {-(1 << 63) + 1}", 3),
    ("big > 9223372036854775805", 2), ("x = 0.0", 2), ("x < 0.0", 3), ("x > 1e308", 2),
    ("x = double('NaN')", 1), ("x IS NULL", 1)])
def test_shapes_users_have_read_equal_to_plain_spark(session, mount, where, most):
    """Spark's per-file aggregation on long common prefixes, non-ASCII, high entropy, type
    limits, -0.0, NaN and infinities: every read equals plain Spark's, and at most ``most``
    of the 8 files are read."""
    uri, folder = mount
    if not os.path.isdir(os.path.join(folder, "shapes")):
        for k in range(8):
            write(os.path.join(folder, "shapes", f"part-{k}.parquet"), _shaped(k))
    source = f"{uri}/shapes"
    stats = pes.collect_stats(session, source, granularity="file")
    assert _equal_to_plain(session, source, where, stats).files_read <= most, where
