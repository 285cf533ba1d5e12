"""``pe.aggregate`` on statistics of a table format's snapshot (issue #34): rows deleted
without their file (Iceberg position and equality delete files, Delta deletion vectors) are
still in the file's row count, null count and bounds, so such a file is never answered from
its statistics; with a source, only the snapshot's live files are read, as ``pe.scan`` reads
them (position deletes applied, or a one-line ``ScanError`` naming the file).

The oracle is DuckDB's ``SELECT COUNT(*), COUNT(x), MIN(x), MAX(x), ... WHERE`` on the rows the
format's own reader gives (PyIceberg's ``table.scan().to_arrow()``, deltalake's
``to_pyarrow_table()``); where no reader can say which rows a deletion vector deletes, on
every set of rows it may delete.
"""

from __future__ import annotations

import itertools
import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine.answers import parse
from tests.scanning.table_formats import commit_deletes, delta_history, iceberg_catalog
from tests.stats.delta_logs import field, spark_stats, write_table

ITEMS = "COUNT(*), COUNT(x), MIN(x), MAX(x), MIN(s), MAX(s)"
WHERES = [None, "x < 10", "x >= 40", "x > 58", "x IS NULL", "x BETWEEN 15 AND 45",
          "s = 's3'", "s >= 's7'", "s >= 's0'", "x > 1000", "x >= 0"]


def truth(rows: pa.Table, items: str, where: str | None) -> dict:
    """DuckDB's answer to ``SELECT items FROM rows WHERE where``."""
    con = duckdb.connect()
    con.register("rows", rows)
    values = con.execute(f"SELECT {items} FROM rows" + (f" WHERE {where}" if where else "")
                         ).fetchone()
    return dict(zip([i.text for i in parse(items)], values))


def one_line(error: Exception, name: str) -> None:
    text = str(error)
    assert "\n" not in text and len(text) < 400 and name in text, text


# ------------------------------------------------------------------------------ Iceberg


@pytest.fixture(scope="module")
def iceberg(tmp_path_factory):
    """Four files of 20 rows (``x`` 0-19, 20-39, 40-59, 60-79, some NULL; ``s`` per row) and
    three position delete files, each committed as a writer commits one: they delete the
    smallest and the largest value and the NULLs of the first file, every row of the third,
    and the largest value of the fourth."""
    folder = str(tmp_path_factory.mktemp("iceberg"))
    catalog = iceberg_catalog(folder)
    schema = pa.schema([("x", pa.int64()), ("s", pa.string())])
    table = catalog.create_table("db.deleted", schema=schema)
    for k in range(4):
        x = [k * 20 + i if i % 7 != 3 else None for i in range(20)]
        table.append(pa.table({"x": pa.array(x, pa.int64()),
                               "s": [f"s{(k * 20 + i) % 10}" for i in range(20)]}))
    table = catalog.load_table("db.deleted")
    files = {pq.read_table(f.removeprefix("file://")).column("x")[0].as_py(): f
             for f in (t.file.file_path for t in table.scan().plan_files())}
    for first, positions in ((0, [0, 19, 3, 10, 17]), (40, range(20)), (60, [19])):
        positions = pa.array(positions, pa.int64())
        commit_deletes(catalog.load_table("db.deleted"),
                       pa.table({"file_path": [files[first]] * len(positions), "pos": positions}),
                       os.path.join(folder, f"deletes-{first}.parquet"))
    return catalog.load_table("db.deleted")


def named(stats):
    """``stats`` with each delete file's ``referenced_data_file`` recorded (the one data file
    it names, as a writer records it; the fixture's writer did not)."""
    stats = pe.StatsTable(stats.table, {"iceberg": dict(stats.metadata["iceberg"])})
    entries = []
    for d in stats.metadata["iceberg"]["deletes"]:
        (one,) = set(pq.read_table(d["path"]).column("file_path").to_pylist())
        entries.append({**d, "referenced_data_file": one.removeprefix("file://")})
    stats.metadata["iceberg"]["deletes"] = entries
    return stats


def test_the_fixture_deletes_what_it_says(iceberg):
    rows = iceberg.scan().to_arrow()
    assert rows.num_rows == 80 - 5 - 20 - 1
    stats = pe.stats_from_iceberg(iceberg)
    assert sum(stats.column("num_records").to_pylist()) == 80, \
        "the record counts include the deleted rows: they are no answer to COUNT(*)"
    assert [d["content"] for d in stats.metadata["iceberg"]["deletes"]] == ["position"] * 3


@pytest.mark.parametrize("items", [ITEMS, "COUNT(*), COUNT(x)", "MIN(x), MAX(x)"])
@pytest.mark.parametrize("referenced", [False, True], ids=["any file", "named"])
@pytest.mark.parametrize("where", WHERES)
def test_iceberg_position_deletes_equal_pyicebergs_rows(iceberg, where, referenced, items):
    stats = pe.stats_from_iceberg(iceberg)
    stats = named(stats) if referenced else stats
    expected = truth(iceberg.scan().to_arrow(), items, where)
    alone = pe.aggregate(stats, items, where=where)
    for text, value in alone.values.items():
        if alone.exact or value is not None:
            assert value == expected[text], (text, value, expected[text], where)
    read = pe.aggregate(stats, items, where=where,
                        source=iceberg.location().removeprefix("file://"))
    assert read.exact and read.values == expected, (read.values, expected, where)
    assert read.containers_read == sum(alone.must_read.to_pylist())


def test_iceberg_files_with_deletes_are_never_answered_from_their_statistics(iceberg):
    given = pe.stats_from_iceberg(iceberg)
    paths = given.column("path").to_pylist()
    second = next(p for p in paths if pq.read_table(p).column("x")[0].as_py() == 20)
    location = iceberg.location().removeprefix("file://")
    # every row matches: 80 records, 54 rows
    alone = pe.aggregate(given, "COUNT(*), COUNT(x)", where="s >= 's0'")
    assert not alone.exact and alone.values == {"COUNT(*)": None, "COUNT(x)": None}
    assert alone.must_read.to_pylist() == [True] * 4, \
        "a position delete file without a referenced data file may name any file"
    # each delete file naming its data file: the second file, which none names, is answered
    stats = named(given)
    alone = pe.aggregate(stats, "COUNT(*), COUNT(x)", where="s >= 's0'")
    assert [p for p, r in zip(paths, alone.must_read.to_pylist()) if not r] == [second]
    for stats in (given, stats):
        read = pe.aggregate(stats, "COUNT(*), COUNT(x)", where="s >= 's0'", source=location)
        assert read.values == {"COUNT(*)": 54, "COUNT(x)": 54 - 3 - 3}
    assert read.containers_read == 3
    # the third file's rows are all deleted: its bounds 40..59 hold no live value
    alone = pe.aggregate(stats, "MIN(x), MAX(x)", where="x >= 40 AND x < 70")
    assert alone.values == {"MIN(x)": None, "MAX(x)": None}
    read = pe.aggregate(stats, "MIN(x), MAX(x)", where="x >= 40 AND x < 70", source=location)
    assert read.values == {"MIN(x)": 60, "MAX(x)": 69}


def test_iceberg_equality_deletes_are_read_or_refused(tmp_path):
    catalog = iceberg_catalog(str(tmp_path))
    table = catalog.create_table("db.eq", schema=pa.schema([("x", pa.int64()),
                                                            ("s", pa.string())]))
    table.append(pa.table({"x": pa.array(range(10), pa.int64()), "s": ["a"] * 10}))
    table.append(pa.table({"x": pa.array(range(10, 20), pa.int64()), "s": ["b"] * 10}))
    commit_deletes(catalog.load_table("db.eq"), pa.table({"x": pa.array([3], pa.int64())}),
                   str(tmp_path / "eq.parquet"), equality_ids=[1])
    table = catalog.load_table("db.eq")  # (PyIceberg 0.12 cannot read it: 19 rows)
    stats = pe.stats_from_iceberg(table)
    alone = pe.aggregate(stats, "COUNT(*), COUNT(x)")
    assert alone.values == {"COUNT(*)": None, "COUNT(x)": None}, \
        "20 records, 19 rows: an equality delete may remove a row of any file"
    assert alone.must_read.to_pylist() == [True, True]
    location = table.location().removeprefix("file://")
    with pytest.raises(pe.ScanError, match="equality delete") as caught:
        pe.aggregate(stats, "COUNT(*)", source=location)
    one_line(caught.value, caught.value.path)
    assert pe.aggregate(stats, "COUNT(*), MAX(x)", where="x > 100", source=location).values \
        == {"COUNT(*)": 0, "MAX(x)": None}, "every file pruned: nothing to read or refuse"


# ------------------------------------------------------------------------------ Delta


def _vector(cardinality: int) -> dict:
    """A deletion vector descriptor as Spark writes one (its bitmap is never read here)."""
    return {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1,
            "sizeInBytes": 36, "cardinality": cardinality}


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """A Delta table of two files: ``a`` (x 0-9, a NULL at row 4) with a deletion vector of
    2 rows (wide bounds, as Spark writes them), ``b`` (x 20-29) without one."""
    a = pa.table({"x": pa.array([i if i != 4 else None for i in range(10)], pa.int64()),
                  "s": [f"s{i}" for i in range(10)]})
    b = pa.table({"x": pa.array(range(20, 30), pa.int64()), "s": ["t"] * 10})
    files = [{"name": "a.parquet", "data": a, "stats": {**spark_stats(a), "tightBounds": False},
              "add": {"deletionVector": _vector(2)}},
             {"name": "b.parquet", "data": b, "stats": spark_stats(b)}]
    root = write_table(tmp_path_factory.mktemp("dv") / "t",
                       [field("x", "long"), field("s", "string")], files,
                       configuration={"delta.enableDeletionVectors": "true"},
                       features=["deletionVectors"])
    return root, a, b


DELTA_CASES = [(ITEMS, None), ("MAX(x), MAX(s)", None), ("COUNT(*), MIN(x), MAX(x)", "x >= 20"),
               ("COUNT(x), MIN(x)", "x < 5"), ("COUNT(*)", "x > 1000"), ("MIN(x)", "s = 's2'"),
               ("MAX(x)", "x IS NOT NULL")]


@pytest.mark.parametrize("items,where", DELTA_CASES)
def test_delta_deletion_vectors_are_read_or_refused(vectors, items, where):
    """Whichever 2 rows of ``a`` the vector deletes, an answer is that of the rows left; a
    read of ``a`` is a one-line ScanError naming it (no reader here applies the vector)."""
    root, a, b = vectors
    stats = pe.stats_from_delta(root)
    assert stats.metadata["delta"]["deletion_vectors"] == [os.path.join(root, "a.parquet")]
    truths = [truth(pa.concat_tables([a.filter(pa.array([i not in gone for i in range(10)])),
                                      b]), items, where)
              for gone in itertools.combinations(range(10), 2)]
    alone = pe.aggregate(stats, items, where=where)
    for text, value in alone.values.items():
        if alone.exact or value is not None:
            assert all(value == t[text] for t in truths), (text, value, where)
    try:
        read = pe.aggregate(stats, items, where=where, source=root)
    except pe.ScanError as e:
        one_line(e, "a.parquet")
        assert "deletion vector" in str(e)
        assert alone.must_read[0].as_py(), "only a file that had to be read is refused"
        return
    assert read.exact and all(read.values == t for t in truths), (read.values, where)
    assert not alone.must_read[0].as_py()


def test_delta_deletion_vector_answers(vectors):
    """What is answered without reading ``a``: the MAX (``a``'s bounds cannot win), and
    everything of a predicate that prunes it; COUNT(*) over ``a`` is not taken from its
    record count."""
    root, _, _ = vectors
    stats = pe.stats_from_delta(root)
    assert pe.aggregate(stats, "MAX(x)", source=root).values == {"MAX(x)": 29}
    assert pe.aggregate(stats, "COUNT(*), COUNT(x), MIN(x)", where="x >= 20",
                        source=root).values == {"COUNT(*)": 10, "COUNT(x)": 10, "MIN(x)": 20}
    alone = pe.aggregate(stats, "COUNT(*)")
    assert alone.values == {"COUNT(*)": None} and alone.must_read.to_pylist() == [True, False]


def test_delta_after_a_delete_reads_only_the_live_files(tmp_path):
    """The issue's case: the delete rewrote the one file; the old one is still on disk."""
    from deltalake import DeltaTable, write_deltalake

    root = str(tmp_path / "t")
    write_deltalake(root, pa.table({"x": pa.array(range(100), pa.int64()),
                                    "s": [f"s{i % 10}" for i in range(100)]}))
    DeltaTable(root).delete("x < 50")
    assert len([n for n in os.listdir(root) if n.endswith(".parquet")]) == 2
    stats = pe.stats_from_delta(root)
    items = "COUNT(*), COUNT(x), MIN(x), MAX(x)"
    for where in (None, "x < 60", "x >= 0", "x IN (3, 51, 77)"):
        expected = truth(DeltaTable(root).to_pyarrow_table(), items, where)
        read = pe.aggregate(stats, items, where=where, source=root)
        assert read.exact and read.values == expected, (where, read.values, expected)
        assert read.containers_read <= 1
    assert pe.aggregate(stats, "COUNT(*)").values == {"COUNT(*)": 50}


@pytest.fixture(scope="module", params=[False, True], ids=["flat", "partitioned"])
def delta_table(request, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("delta") / "t")
    delta_history(root, request.param)
    return root


@pytest.mark.parametrize("where", [None, "x < 60", "x >= 100 AND x < 110", "s = 'updated'",
                                   "s IS NULL OR x > 400", "p = 'p1' AND x > 100",
                                   "x IN (0, 49, 50, 79, 500)"])
def test_delta_after_deletes_updates_and_compaction_equals_deltalake(delta_table, where):
    from deltalake import DeltaTable

    items = "COUNT(*), COUNT(x), MIN(x), MAX(x), COUNT(s), MIN(s), MAX(s)"
    stats = pe.stats_from_delta(delta_table)
    expected = truth(DeltaTable(delta_table).to_pyarrow_table(), items, where)
    alone = pe.aggregate(stats, items, where=where)
    for text, value in alone.values.items():
        if alone.exact or value is not None:
            assert value == expected[text], (text, value, expected[text], where)
    read = pe.aggregate(stats, items, where=where, source=delta_table)
    assert read.exact and read.values == expected, (read.values, expected, where)


# ------------------------------------------------------------------------------ bounds only


def test_an_extreme_is_settled_by_a_file_that_certainly_holds_a_value(tmp_path):
    """Delta and Iceberg bounds are bounds, not values: the smallest maximum says where the
    minimum is only if its file certainly holds a value. ``a`` holds only NULLs, and its log
    gives bounds 0..1 but no null count (true bounds of no value); ``b``'s lower bound 5 is
    below its values. Settling MIN(x) by ``a``'s maximum alone read ``a``, found no value,
    and answered ``b``'s bound: 5, not 10."""
    a = pa.table({"x": pa.array([None] * 4, pa.int64())})
    b = pa.table({"x": pa.array(range(10, 21), pa.int64())})
    files = [{"name": "a.parquet", "data": a,
              "stats": {"numRecords": 4, "minValues": {"x": 0}, "maxValues": {"x": 1}}},
             {"name": "b.parquet", "data": b,
              "stats": {"numRecords": 11, "minValues": {"x": 5}, "maxValues": {"x": 20},
                        "nullCount": {"x": 0}}}]
    root = write_table(tmp_path / "t", [field("x", "long")], files)
    stats = pe.stats_from_delta(root)
    expected = truth(pa.concat_tables([a, b]), "MIN(x), MAX(x), COUNT(x)", None)
    assert expected == {"MIN(x)": 10, "MAX(x)": 20, "COUNT(x)": 11}
    for items in ("MIN(x)", "MIN(x), MAX(x), COUNT(x)"):
        assert pe.aggregate(stats, items).must_read.to_pylist() == [True, True]
        read = pe.aggregate(stats, items, source=root)
        assert read.values == {k: expected[k] for k in read.values}, (items, read.values)
