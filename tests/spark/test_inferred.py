"""The schema Spark inferred for a source, remembered (``prune_engine.spark._inferred``): used
while the files, options and settings stay the same, and never once Spark would infer another
(the first file rewritten, a new first file, a setting, an option, a new partition value)."""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pytest

import prune_engine as pe
import prune_engine.spark as pes
from prune_engine.spark import _inferred
from tests.spark.helpers import sorted_rows, write

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def spark(session):
    """Every test here runs on a classic session and on a Spark Connect session."""
    return session


@pytest.fixture
def loads(monkeypatch):
    """The schemas ``source_frame`` loads the source with (None: Spark infers); no opened
    frame is kept (every read loads: what a source whose tree changes meets)."""
    monkeypatch.setattr(_inferred, "_MOST_FRAMES", 0)
    return _spied_loads(monkeypatch)


def _spied_loads(monkeypatch) -> list:
    """Every schema the source is loaded with from now on, in order (nothing remembered)."""
    seen: list = []
    real = _inferred.load_remembered

    def spy(spark, format, paths, options, load):
        return real(spark, format, paths, options, lambda s: (seen.append(s), load(s))[1])

    monkeypatch.setattr(_inferred, "load_remembered", spy)
    _inferred.forget()
    return seen


def _ints(root: str, names=("a", "b")) -> None:
    for k, name in enumerate(names):
        write(os.path.join(root, f"{name}.parquet"), pa.table({"x": pa.array([k, k + 10], pa.int32())}))


def _same_as_spark(spark, root: str, options: dict | None = None) -> None:
    stats = pe.collect_stats(root, granularity="file", progress=False)
    df = pes.read(spark, root, "x >= 0", stats=stats, options=options)
    plain = spark.read.options(**(options or {})).parquet(root).where("x >= 0")
    assert df.schema == plain.schema
    assert sorted_rows(df.collect()) == sorted_rows(plain.collect())


def _twice(spark, root: str, loads: list, options: dict | None = None):
    """Read ``root`` twice (``_same_as_spark``): Spark infers at the first read, the second
    uses what it inferred; that schema."""
    del loads[:]
    _same_as_spark(spark, root, options)
    first = len(loads)
    _same_as_spark(spark, root, options)
    assert loads[first - 1] is None, "inferred (after trying a remembered schema)"
    assert len(loads) == first + 1 and loads[-1] is not None, "then remembered"
    return loads[-1]


def test_a_second_read_infers_nothing(spark, tmp_path, loads):
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    assert loads == [None], "inferred"
    for _ in range(2):
        del loads[:]
        _same_as_spark(spark, root)
        assert len(loads) == 1 and loads[0] is not None, "loaded with the remembered schema"


def _rewrite_first(spark, root):
    write(os.path.join(root, "a.parquet"), pa.table({"x": pa.array([5], pa.int32()), "y": ["n"]}))


def _new_first(spark, root):
    write(os.path.join(root, "0.parquet"), pa.table({"x": pa.array([7], pa.int32()), "y": ["m"]}))


@pytest.mark.parametrize("change", [_rewrite_first, _new_first], ids=["rewritten", "new first"])
def test_a_file_spark_infers_from_changes(spark, tmp_path, loads, change):
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    change(spark, root)
    assert "y" in _twice(spark, root, loads).fieldNames()


def test_a_partition_value_that_changes_the_partition_type(spark, tmp_path, loads):
    root = str(tmp_path / "t")
    for p in (1, 2):
        write(os.path.join(root, f"p={p}", "f.parquet"), pa.table({"x": [p]}))
    _same_as_spark(spark, root)
    write(os.path.join(root, "p=x", "f.parquet"), pa.table({"x": [3]}))
    assert _twice(spark, root, loads)["p"].dataType.typeName() == "string"


def test_a_setting_that_changes_the_inference(spark, tmp_path, loads):
    root = str(tmp_path / "t")
    local = pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us"))  # no time zone: NTZ
    write(os.path.join(root, "a.parquet"), pa.table({"x": [1], "t": local}))
    _same_as_spark(spark, root)
    key = "spark.sql.parquet.inferTimestampNTZ.enabled"
    spark.conf.set(key, "false")
    try:
        assert _twice(spark, root, loads)["t"].dataType.typeName() == "timestamp"
    finally:
        spark.conf.unset(key)
    del loads[:]
    _same_as_spark(spark, root)
    assert loads[0]["t"].dataType.typeName() == "timestamp_ntz", "remembered before"


def test_options_are_part_of_what_is_remembered(spark, tmp_path, loads):
    root = str(tmp_path / "t")
    _ints(root)
    write(os.path.join(root, "c.parquet"), pa.table({"x": pa.array([2], pa.int32()), "z": [1.5]}))
    assert "z" not in _twice(spark, root, loads).fieldNames()
    assert "z" in _twice(spark, root, loads, {"mergeSchema": "true"}).fieldNames()
    del loads[:]
    _same_as_spark(spark, root)
    assert "z" not in loads[0].fieldNames(), "remembered before"


# ------------------------------------------------------------------ the opened frame, kept


@pytest.fixture
def opens(monkeypatch):
    """The loads of the source (frames kept while the local tree stays the same)."""
    return _spied_loads(monkeypatch)


def test_an_unchanged_source_is_not_opened_again(spark, tmp_path, opens):
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    assert opens == [None]
    for _ in range(3):
        _same_as_spark(spark, root)
    assert opens == [None], "Spark's listing and schema of the first read, kept"


def _add_file(root):
    write(os.path.join(root, "c.parquet"), pa.table({"x": pa.array([40], pa.int32())}))


def _rewrite_keeping_size_and_time(root):
    path = os.path.join(root, "b.parquet")
    before = os.stat(path)
    write(path, pa.table({"x": pa.array([7, 17], pa.int32())}))  # the same size
    assert os.path.getsize(path) == before.st_size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _delete_file(root):
    os.remove(os.path.join(root, "a.parquet"))


def _hidden_file(root):
    write(os.path.join(root, "_tmp", "d.parquet"), pa.table({"x": pa.array([50], pa.int32())}))


def _empty_folder(root):
    os.mkdir(os.path.join(root, "p=1"))


def _touch(root):
    os.utime(os.path.join(root, "a.parquet"), ns=(1, 1_600_000_000_000_000_000))


def _folder_permissions(root):
    os.chmod(root, 0o750)


@pytest.mark.parametrize("change", [_add_file, _rewrite_keeping_size_and_time, _delete_file,
                                    _hidden_file, _empty_folder, _touch, _folder_permissions],
                         ids=["added", "rewritten, size and time kept", "deleted", "hidden",
                              "empty folder", "touched", "folder permissions"])
def test_any_change_under_the_source_opens_it_again(spark, tmp_path, opens, change):
    """Whatever changed, Spark lists the source again, and the rows are plain Spark's."""
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    _same_as_spark(spark, root)
    assert len(opens) == 1
    change(root)
    _same_as_spark(spark, root)
    assert len(opens) >= 2, "opened again"
    opened = len(opens)
    _same_as_spark(spark, root)
    assert len(opens) == opened, "and kept again"


def test_a_name_spark_never_lists_changes_nothing(spark, tmp_path, opens):
    """Names starting with "." are left out of Spark's listing whatever they hold: one
    written, rewritten or removed keeps the frame."""
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    with open(os.path.join(root, ".notes"), "wb") as out:
        out.write(b"x")
    write(os.path.join(root, ".hidden", "e.parquet"), pa.table({"x": pa.array([9], pa.int32())}))
    _same_as_spark(spark, root)
    os.remove(os.path.join(root, ".notes"))
    _same_as_spark(spark, root)
    assert opens == [None]


def test_a_symbolic_link_or_a_glob_is_opened_every_time(spark, tmp_path, opens):
    root = str(tmp_path / "t")
    _ints(root)
    os.symlink(os.path.join(root, "a.parquet"), os.path.join(root, "link.parquet"))
    for _ in range(2):
        _same_as_spark(spark, root)
    assert len(opens) == 2, "a link's target is not watched"
    glob_root = str(tmp_path / "g")
    _ints(glob_root)
    del opens[:]
    for _ in range(2):
        stats = pe.collect_stats(glob_root, granularity="file", progress=False)
        df = pes.read(spark, os.path.join(glob_root, "*.parquet"), "x >= 0", stats=stats)
        plain = spark.read.parquet(os.path.join(glob_root, "*.parquet")).where("x >= 0")
        assert sorted_rows(df.collect()) == sorted_rows(plain.collect())
    assert len(opens) == 2, "Spark globs the path"


def test_a_frame_is_kept_for_its_own_session_only(classic_spark, tmp_path, opens):
    spark = classic_spark  # a Connect session's sessions differ in their ids already
    root = str(tmp_path / "t")
    _ints(root)
    _same_as_spark(spark, root)
    other = spark.newSession()
    df = pes.read(other, root, "x >= 0", stats=pe.collect_stats(root, progress=False))
    assert df.sparkSession is other
    assert len(opens) == 2


def test_a_deep_lake_of_odd_names_is_kept_and_watched(spark, tmp_path, opens):
    """Hive folders under a long common non-ASCII prefix, names with spaces, ``%``, ``#``,
    ``=`` and non-ASCII letters: Spark names its files as URIs, the walk as paths, and the
    two must meet, so the frame is kept; a file changed deep inside opens it again."""
    prefix = "région=" + "ü" * 40 + " a%20b#c"
    root = str(tmp_path / ("lake " + "ß" * 60))
    deep = []
    for k in range(6):
        folder = os.path.join(root, f"p={prefix}{k}", f"q=日本 {k % 2}")
        deep.append(os.path.join(folder, f"part {k} é%.parquet"))
        write(deep[-1], pa.table({"x": pa.array([k, k + 10], pa.int32())}))
    for _ in range(3):
        _same_as_spark(spark, root)
    assert opens == [None], "kept: Spark's listing and the walk name the same files"
    os.utime(deep[3], ns=(1, 1_600_000_000_000_000_000))
    _same_as_spark(spark, root)
    assert len(opens) > 1, "a file deep in the tree touched: opened again"
