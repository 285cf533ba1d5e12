"""``string_view`` / ``binary_view`` columns (deltalake writes them in some versions: an update
rewrites a file as ``string_view``, an append writes ``string``; pyarrow stores the Arrow type
in the file and reads it back): their statistics are the plain types (``string``,
``binary``), a lake mixing views, plain and large types is one column, and ``prune``,
``classify``, ``explain``, Bloom filters, dictionary value sets, n-gram indexes,
``compute_missing`` and ``scan`` answer on it as DuckDB does on the rows."""

from __future__ import annotations

import base64
import glob
import io

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats.unify import concat_stats, unify_types
from tests.budget import examples
from tests.stats import thrift_codec as tc
from tests.stats.container_oracle import check_sound

#: each file's values of ``s`` (two row groups of two rows each)
ROWS = {
    "a": ["apple", "apricot", None, "banana"],
    "b": ["cherry", "date", "fig", "grape"],
    "c": ["kiwi", None, "lemon", "lime"],
    "d": ["mango", "melon", "nut", "olive"],
}
VIEW, STRING, LARGE = pa.string_view(), pa.string(), pa.large_string()
#: a dictionary whose Arrow type the file stores as ``dictionary<string_view>`` (as arrow-rs
#: can write it); pyarrow 26 reads it back as ``dictionary<string>``
DICT_OF_VIEW = pa.dictionary(pa.int32(), pa.string_view())
LAKES = {
    "view": {"a": VIEW, "b": VIEW, "c": VIEW, "d": VIEW},
    "mixed": {"a": VIEW, "b": STRING, "c": LARGE, "d": VIEW},
    "dictionary_of_view": {"a": DICT_OF_VIEW, "b": STRING, "c": VIEW,
                           "d": pa.dictionary(pa.int32(), pa.string())},
}
PREDICATES = ["s = 'fig'", "s = 'coconut'", "s < 'b'", "s >= 'lime'", "s LIKE 'me%'",
              "s LIKE '%an%'", "s IN ('kiwi', 'nut')", "s NOT IN ('mango', 'melon')",
              "s != 'apple'", "s IS NULL", "s IS NOT NULL"]


def _binary_type(typ: pa.DataType) -> pa.DataType:
    """The binary twin of a string type (the file's ``b`` column)."""
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    return {VIEW: pa.binary_view(), STRING: pa.binary(), LARGE: pa.large_binary()}[typ]


def _stored_as(data: bytes, schema: pa.Schema) -> bytes:
    """The Parquet file ``data`` with ``schema`` as the Arrow schema it stores (the
    ``ARROW:schema`` key), as a writer of that Arrow type would have left it."""
    blob = base64.b64encode(schema.serialize().to_pybytes())

    def change(tree):
        for kv in tc.get(tree, 5).value.items:
            if tc.get(kv, 1).value == b"ARROW:schema":
                tc.get(kv, 2).value = blob

    return tc.edited(data, change)


def write_lake(root, types: dict[str, pa.DataType], **options) -> None:
    """One file per entry of ``types``: ``s`` of that type, ``b`` its bytes (binary twin),
    ``x`` an integer; two row groups of two rows."""
    root.mkdir()
    for name, typ in types.items():
        values = ROWS[name]
        b = pa.array([None if v is None else v.encode() for v in values], _binary_type(typ))
        x = pa.array(range(len(values)), pa.int64())
        if typ == DICT_OF_VIEW:  # pyarrow cannot write it: write the dictionary, store the type
            s = pa.array(values, STRING).dictionary_encode()
            buf = io.BytesIO()
            pq.write_table(pa.table({"s": s, "b": b, "x": x}), buf, row_group_size=2, **options)
            stored = pa.schema([("s", DICT_OF_VIEW), ("b", b.type), ("x", x.type)])
            (root / f"{name}.parquet").write_bytes(_stored_as(buf.getvalue(), stored))
            continue
        s = pa.array(values, typ.value_type).dictionary_encode() \
            if pa.types.is_dictionary(typ) else pa.array(values, typ)
        pq.write_table(pa.table({"s": s, "b": b, "x": x}), root / f"{name}.parquet",
                       row_group_size=2, **options)


def test_a_stored_dictionary_of_views_reads_as_a_dictionary_of_strings(tmp_path):
    """The file stores ``dictionary<string_view>``; pyarrow 26 reads ``dictionary<string>``."""
    write_lake(tmp_path / "lake", {"a": DICT_OF_VIEW})
    path = tmp_path / "lake" / "a.parquet"
    stored = pq.read_metadata(path).metadata[b"ARROW:schema"]
    assert pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored))).field("s").type == \
        DICT_OF_VIEW
    assert pq.read_schema(path).field("s").type == pa.dictionary(pa.int32(), STRING)
    stats = pe.collect_stats(str(path), progress=False, dictionaries=True)
    sets = [v["s"] for v in stats.column("value_set").to_pylist()]
    assert {"apple", "apricot"} <= set(sets[0]) and "banana" in sets[1], sets
    check_sound(stats, PREDICATES, expect_pruned={"s = 'coconut'": [False, False]})


def test_pyarrow_stores_a_view_column_and_reads_it_back_as_a_view(tmp_path):
    """The shape the statistics meet: the file's Arrow schema says ``string_view``."""
    write_lake(tmp_path / "lake", {"a": VIEW})
    path = tmp_path / "lake" / "a.parquet"
    assert pq.read_schema(path).field("s").type == VIEW
    assert pq.read_schema(path).field("b").type == pa.binary_view()
    stats = pe.collect_stats(str(path), progress=False)
    assert stats.schema.field("min_values").type == pa.struct(
        [("s", STRING), ("b", pa.binary()), ("x", pa.int64())]), "views are their plain types"
    assert stats.column("min_values").to_pylist() == [
        {"s": "apple", "b": b"apple", "x": 0}, {"s": "banana", "b": b"banana", "x": 2}]


@pytest.mark.parametrize("lake", list(LAKES))
@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_prune_classify_explain_on_view_lakes(tmp_path, lake, granularity):
    root = tmp_path / "lake"
    write_lake(root, LAKES[lake])
    stats = pe.collect_stats(str(root), granularity=granularity, progress=False)
    string_type = stats.schema.field("min_values").type.field("s").type
    assert string_type == (LARGE if lake == "mixed" else STRING), "large joins string"
    expect = {"s = 'fig'": [False, False, False, True, False, False, False, False]
              if granularity == "row_group" else [False, True, False, False]}
    check_sound(stats, PREDICATES, expect_pruned=expect)
    assert pe.explain(stats, "s = 'fig'").column("reason").to_pylist()[0].startswith("s = 'fig'")


@pytest.mark.parametrize("lake", list(LAKES))
@pytest.mark.parametrize("index", ["bloom", "dictionaries"])
def test_bloom_filters_and_dictionaries_on_view_lakes(tmp_path, lake, index):
    """'coconut' lies inside [cherry, date] (b's first row group): the bounds keep it, the
    Bloom filter or the dictionary of every chunk proves it absent."""
    root = tmp_path / "lake"
    write_lake(root, LAKES[lake], bloom_filter_options={"s": {"ndv": 8, "fpp": 0.01}})
    stats = pe.collect_stats(str(root), progress=False, **{index: True})
    plain = pe.collect_stats(str(root), progress=False)
    assert pe.prune(plain, "s = 'coconut'").to_pylist()[2], "the bounds alone keep b's rg 0"
    column = "bloom_filter" if index == "bloom" else "value_set"
    assert stats.column(column).null_count == 0
    assert all(v["s"] is not None for v in stats.column(column).to_pylist()), \
        "every chunk's index is read, view or not"
    check_sound(stats, PREDICATES + ["s IN ('coconut', 'nut')"],
                expect_pruned={"s = 'coconut'": [False] * 8,
                               "s IN ('coconut', 'nut')": [False] * 7 + [True]})


@pytest.mark.parametrize("lake", list(LAKES))
def test_scan_without_stats_returns_duckdbs_rows(tmp_path, lake):
    """``pe.scan(lake, where=...)`` collects the statistics itself (collect_stats)."""
    root = tmp_path / "lake"
    write_lake(root, LAKES[lake])
    con = duckdb.connect()
    for where in PREDICATES:
        got = pe.scan(str(root), where=where, columns=["s", "x"]).to_pylist()
        want = con.execute(f"SELECT s, x FROM read_parquet('{root}/*.parquet') WHERE {where}"
                           ).fetchall()
        key = lambda r: (r[0] is None, r[0] or "", r[1])  # noqa: E731
        assert sorted(((r["s"], r["x"]) for r in got), key=key) == sorted(want, key=key), where


@pytest.mark.parametrize("lake", list(LAKES))
def test_ngram_index_on_view_lakes(tmp_path, lake):
    root = tmp_path / "lake"
    write_lake(root, LAKES[lake])
    stats = pe.collect_stats(str(root), ngram="s", progress=False)
    assert stats.column("ngram_index").null_count == 0
    check_sound(stats, ["s LIKE '%an%'", "s LIKE '%elo%'", "s LIKE '%zz%'"],
                expect_pruned={"s LIKE '%elo%'": [False] * 6 + [True, False]})


def test_compute_missing_on_view_and_dictionary_chunks(tmp_path):
    """Chunks written without statistics (a view column, a pandas categorical) are read and
    their bounds computed over the values, in the statistics' type (string)."""
    root = tmp_path / "lake"
    write_lake(root, {"a": VIEW, "b": STRING}, write_statistics=False)
    pd.DataFrame({"s": pd.Categorical(ROWS["c"]), "x": range(4)}).to_parquet(
        root / "c.parquet", row_group_size=2, write_statistics=False)
    assert pa.types.is_dictionary(pq.read_schema(root / "c.parquet").field("s").type)
    stats = pe.collect_stats(str(root), compute_missing=True, progress=False)
    assert stats.column("min_values").to_pylist()[::2] == [
        {"s": "apple", "b": b"apple", "x": 0}, {"s": "cherry", "b": b"cherry", "x": 0},
        {"s": "kiwi", "b": None, "x": 0}]
    assert [m["s"] for m in stats.column("max_values").to_pylist()] == [
        "apricot", "banana", "date", "grape", "kiwi", "lime"]
    assert stats.metadata["computed"]["columns"] == ["b", "s", "x"]
    check_sound(stats, PREDICATES, expect_pruned={
        "s = 'fig'": [False, False, False, True, False, False]})


def test_a_deltalake_table_updated_and_appended(tmp_path):
    """deltalake rewrites a file as ``string_view`` on update and writes ``string`` on
    append: the files of one table, one column to the statistics."""
    import deltalake

    path = str(tmp_path / "t")
    deltalake.write_deltalake(path, pa.table({"x": list(range(10)),
                                              "s": [f"v{i:02d}" for i in range(10)]}))
    deltalake.DeltaTable(path).update({"s": "'zz'"}, predicate="x < 3")
    deltalake.write_deltalake(path, pa.table({"x": [20, 21], "s": ["q", None]}), mode="append")
    types = {pq.read_schema(f).field("s").type for f in glob.glob(f"{path}/*.parquet")}
    assert VIEW in types and STRING in types, f"deltalake wrote {types}"
    for granularity in ("row_group", "file"):
        stats = pe.collect_stats(path, granularity=granularity, progress=False,
                                 dictionaries=True)
        assert stats.schema.field("max_values").type.field("s").type == STRING
        check_sound(stats, ["s = 'zz'", "s < 'v05'", "s LIKE 'v0%'", "s IN ('q', 'v09')",
                            "s != 'zz'", "s IS NULL"])


def _view_table() -> pa.Table:
    values = ROWS["a"] + ROWS["b"]
    return pa.table({
        "part": pa.array(["p"] * 4 + ["q"] * 4, VIEW),
        "s": pa.array(values, VIEW),
        "d": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 0, 1, 1, 0, 0], pa.int32()),
                                            pa.array(["m", "k"], VIEW)),
        "b": pa.array([None if v is None else v.encode() for v in values], pa.binary_view()),
        "l": pa.array([[v] for v in values], pa.list_(VIEW)),
    })


def _plain(table: pa.Table) -> pa.Table:
    """``table`` with every view (and dictionary) column in its plain type, as the oracle."""
    return pa.table({
        "part": table.column("part").cast(STRING), "s": table.column("s").cast(STRING),
        "d": table.column("d").combine_chunks().dictionary.cast(STRING).take(
            table.column("d").combine_chunks().indices),
        "b": table.column("b").cast(pa.binary()),
        "l": table.column("l").cast(pa.list_(STRING))})


def test_stats_from_arrow_of_view_columns_are_those_of_the_plain_columns():
    table = _view_table()
    got = pe.stats_from_arrow(table, container="part", ngram=["s", "d"]).table
    want = pe.stats_from_arrow(_plain(table), container="part", ngram=["s", "d"]).table
    assert got.equals(want)
    assert got.schema.field("min_values").type.field("d").type == STRING
    assert got.column("min_values").to_pylist()[0]["s"] == "apple"
    assert got.column("max_values").to_pylist()[1]["d"] == "m"


def test_stats_from_arrow_ngram_index_of_a_dictionary_column():
    """A pandas categorical (``dictionary<string>``) is indexed as its values."""
    frame = pd.DataFrame({"c": ["p", "p", "q"],
                          "s": pd.Categorical(["apple", "banana", "cherry"])})
    stats = pe.stats_from_arrow(frame, container="c", ngram="s")
    assert pe.prune(stats, "s LIKE '%nan%'").to_pylist() == [True, False]
    assert pe.prune(stats, "s LIKE '%err%'").to_pylist() == [False, True]


def test_stats_from_arrow_of_items_mixing_views_and_plain_types():
    items = [pa.table({"s": pa.array(ROWS["a"], VIEW)}), pa.table({"s": pa.array(ROWS["b"])}),
             pa.table({"s": pa.array(ROWS["c"]).dictionary_encode()})]
    stats = pe.stats_from_arrow(items)
    assert stats.column("min_values").to_pylist() == [{"s": "apple"}, {"s": "cherry"},
                                                      {"s": "kiwi"}]
    assert pe.prune(stats, "s = 'fig'").to_pylist() == [False, True, False]


def test_unify_types_treats_views_as_their_plain_types():
    assert unify_types(VIEW, STRING, "") == STRING
    assert unify_types(VIEW, VIEW, "") == STRING
    assert unify_types(VIEW, LARGE, "") == LARGE
    assert unify_types(pa.binary_view(), pa.large_binary(), "") == pa.large_binary()
    assert unify_types(pa.struct([("s", VIEW)]), pa.struct([("s", STRING)]), "") == \
        pa.struct([("s", STRING)])
    assert unify_types(pa.list_(VIEW), pa.list_(STRING), "") == pa.list_(STRING)
    with pytest.raises(pe.StatsError, match="string vs int64"):
        unify_types(VIEW, pa.int64(), "")


def test_concat_stats_of_a_table_holding_view_bounds():
    """Statistics made elsewhere with view bounds join the others as strings."""
    views = pa.table({"container": ["a"], "min_values": pa.array([{"s": "k"}],
                                                                 pa.struct([("s", VIEW)])),
                      "value_set": pa.array([{"s": ["k", "m"]}],
                                            pa.struct([("s", pa.list_(VIEW))]))})
    plain = pa.table({"container": ["b"], "min_values": pa.array([{"s": "a"}])})
    joined = concat_stats([views, plain])
    assert joined.schema.field("min_values").type == pa.struct([("s", STRING)])
    assert joined.schema.field("value_set").type == pa.struct([("s", pa.list_(STRING))])
    assert joined.column("min_values").to_pylist() == [{"s": "k"}, {"s": "a"}]
    assert joined.column("value_set").to_pylist() == [{"s": ["k", "m"]}, None]


_WORDS = st.text(alphabet="abc", max_size=3)
_TEMPLATES = ["s = '{}'", "s < '{}'", "s >= '{}'", "s LIKE '{}%'", "s IN ('{}', 'b')",
              "s != '{}'"]


@settings(max_examples=examples(15), deadline=None)
@given(files=st.lists(st.tuples(st.sampled_from(["view", "string", "large", "dictionary"]),
                                st.lists(st.one_of(st.none(), _WORDS), min_size=1, max_size=6)),
                      min_size=1, max_size=3),
       literal=_WORDS, template=st.sampled_from(_TEMPLATES))
def test_random_view_lakes_against_duckdb(tmp_path_factory, files, literal, template):
    root = tmp_path_factory.mktemp("lake")
    kinds = {"view": VIEW, "string": STRING, "large": LARGE}
    for i, (kind, values) in enumerate(files):
        s = pa.array(values, STRING).dictionary_encode() if kind == "dictionary" \
            else pa.array(values, kinds[kind])
        pq.write_table(pa.table({"s": s}), root / f"{i}.parquet", row_group_size=2,
                       bloom_filter_options={"s": {"ndv": 8}})
    stats = pe.collect_stats(str(root), progress=False, bloom=True, dictionaries=True)
    check_sound(stats, [template.format(literal)])
