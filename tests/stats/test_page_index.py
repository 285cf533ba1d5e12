"""Page statistics from the Parquet page index (prune_engine.stats.page_index), against the rows.

Files are written by pyarrow with ``write_page_index=True`` and small pages (about 100 pages
per column chunk); the oracle is pyarrow (the rows of each page's span) and DuckDB (which rows
match a predicate).
"""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from prune_engine._warm import twins_of
from prune_engine.errors import PruneEngineError
from prune_engine.stats import _page_thrift, _thrift
from prune_engine.stats.page_index import PAGE_KERNELS, page_stats
from prune_engine.stats.parquet import read_footer

ROWS = 6_000
GROUP = 2_500
PAGE = 50


def _table(seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = ROWS
    key = np.sort(rng.integers(-10**6, 10**6, n))
    ints = rng.integers(-50, 50, n)
    words = [f"w{v:04d}" for v in np.sort(rng.integers(0, 3000, n)).tolist()]
    longs = [("x" * 70 + f"{v:05d}") if v % 11 else None for v in rng.integers(0, 10**5, n)]
    floats = rng.normal(size=n)
    floats[rng.random(n) < 0.01] = np.nan
    floats[rng.random(n) < 0.01] = -0.0
    mask = rng.random(n) < 0.2
    ts = pa.array(np.sort(rng.integers(0, 10**15, n)), pa.timestamp("us", "America/New_York"))
    dec = pa.array([None if m else int(v) for v, m in zip(rng.integers(-10**6, 10**6, n), mask)],
                   pa.int64()).cast(pa.decimal128(25, 3))
    nulls_block = pa.array([None if (i // 400) % 2 == 0 else int(i) for i in range(n)],
                           pa.int32())
    lists = pa.array([None if i % 13 == 0 else [] if i % 17 == 0 else
                      [int(v), int(v) + 3] for i, v in enumerate(ints)], pa.list_(pa.int64()))
    struct = pa.StructArray.from_arrays(
        [pa.array(ints, pa.int64()), pa.array(words)], names=["x", "y"],
        mask=pa.array(rng.random(n) < 0.05))
    return pa.table({
        "key": key, "i": pa.array(np.where(mask, 0, ints), mask=mask), "w": words,
        "long": longs, "f": floats, "b": pa.array(rng.random(n) < 0.3), "ts": ts, "d": dec,
        "blocks": nulls_block, "l": lists, "s": struct,
    })


def _write(path, table, **kw) -> str:
    pq.write_table(table, str(path), row_group_size=GROUP, write_page_index=True,
                   data_page_size=1, write_batch_size=PAGE, **kw)
    return str(path)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    table = _table()
    return _write(tmp_path_factory.mktemp("pages") / "a.parquet", table), table


@pytest.fixture(scope="module")
def pages(written):
    PAGE_KERNELS.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a file as pyarrow writes it: no warning
        return page_stats(written[0])


def _leaf(path: str, table: pa.Table) -> pa.Array:
    """The leaf's values per row (a list leaf: the lists)."""
    array = table.column(path.split(".")[0]).combine_chunks()
    if "." in path:
        array = pc.struct_field(array, path.split(".")[1])
    return array


def _get(row: dict, key: str, path: str):
    value = row[key]
    for part in path.split("."):
        value = None if value is None else value[part]
    return value


LEAVES = ["key", "i", "w", "long", "f", "b", "ts", "d", "blocks", "l", "s.x", "s.y"]


def test_every_leaf_has_many_pages_and_the_spans_tile_each_row_group(pages):
    """Row spans are consecutive and cover each row group exactly, in row order."""
    assert sorted(pages.columns) == sorted(LEAVES)
    assert pages.groups.column("num_rows").to_pylist() == [2500, 2500, 1000]
    for name, table in pages.columns.items():
        assert table.num_rows >= 3 * 10, name
        for r, rows in enumerate([2500, 2500, 1000]):
            mine = table.filter(pc.equal(table["row_group"], r))
            start = mine["row_start"].to_numpy()
            count = mine["row_count"].to_numpy()
            assert start[0] == 0 and (start[1:] == start[:-1] + count[:-1]).all(), name
            assert start[-1] + count[-1] == rows, name
            assert (mine["num_records"].to_numpy() == count).all()
            ids = mine["container"].to_pylist()
            assert ids[1] == f"{mine['path'][0]}#{r}@{start[1]}"


@pytest.mark.parametrize("name", LEAVES)
def test_each_page_bounds_its_rows(pages, written, name):
    """For every page: its rows' min >= page min, max <= page max (NaN aside), null count equal
    (outside lists; a list leaf's counts elements and empty lists too)."""
    path, table = written
    values = _leaf(name, table)
    stats = pages.columns[name].to_pylist()
    known_bounds = with_values = 0
    for row in stats:
        start = row["row_group"] * GROUP + row["row_start"]
        part = values.slice(start, row["row_count"])
        if name == "l":  # element slots missing: null lists, empty lists, null elements
            vals = pc.list_flatten(part)
            nulls = part.null_count + vals.null_count + (
                pc.sum(pc.equal(pc.list_value_length(part), 0)).as_py() or 0)
        else:
            vals = part
            nulls = part.null_count
        lo, hi = _get(row, "min_values", name), _get(row, "max_values", name)
        nc = _get(row, "null_count", name)
        if nc is not None:
            assert nc == nulls, row
        if pa.types.is_floating(vals.type):
            vals = pc.filter(vals, pc.invert(pc.is_nan(vals)))
        present = pc.drop_null(vals)
        if len(present) == 0:
            continue
        mm = pc.min_max(present)
        with_values += 1
        if lo is not None:
            known_bounds += 1
            assert pc.greater_equal(mm["min"], pa.scalar(lo, mm["min"].type)).as_py(), row
        if hi is not None:
            assert pc.less_equal(mm["max"], pa.scalar(hi, mm["max"].type)).as_py(), row
    assert known_bounds > with_values // 2, "most pages holding values should have bounds"


def test_all_null_pages_count_their_rows(pages):
    """An all-null page (null_pages): bounds unknown, null count its rows."""
    rows = pages.columns["blocks"].to_pylist()
    empty = [r for r in rows if r["null_count"]["blocks"] == r["row_count"]]
    assert empty and all(r["min_values"]["blocks"] is None for r in empty)


def test_long_strings_truncated_by_the_writer_still_bound(pages, written):
    """pyarrow truncates long string bounds in the page index; they must still be bounds."""
    rows = pages.columns["long"].to_pylist()
    assert any(r["max_values"]["long"] is not None for r in rows)


def test_layout_is_collect_stats_layout(pages, written):
    """Each per-column table has the leaf typed and nested as collect_stats lays it out."""
    stats = pe.collect_stats(written[0]).table if hasattr(pe.collect_stats(written[0]), "table") \
        else pe.collect_stats(written[0])
    full = stats.schema.field("min_values").type
    for name, table in pages.columns.items():
        mine = table.schema.field("min_values").type
        top = name.split(".")[0]
        want = full.field(top)
        got = mine.field(top)
        if "." in name:
            want = want.type.field(name.split(".")[1])
            got = got.type.field(name.split(".")[1])
        assert got.type == want.type, name
        assert got.metadata == want.metadata, name
    assert pages.columns["ts"].schema.field("min_values").type.field("ts").type.tz == \
        "America/New_York"


PREDICATES = {
    "key": lambda v: [f"key = {v}", f"key > {v}", f"key < {v}", f"key BETWEEN {v} AND {v + 500}"],
    "i": lambda v: [f"i = {v % 60 - 30}", "i IS NULL", f"i <> {v % 60 - 30}"],
    "w": lambda v: [f"w = 'w{v % 3000:04d}'", f"w >= 'w{v % 3000:04d}'", "w LIKE 'w12%'"],
    "f": lambda v: [f"f > {v / 10**6}", f"f < {-v / 10**6}", "f = 0", "isnan(f)"],
    "b": lambda v: ["b", "NOT b", "b IS NULL"],
    "ts": lambda v: [f"ts > TIMESTAMP '{1970 + v % 30}-03-01 00:00:00+00'"],
    "d": lambda v: [f"d > {v % 2000 - 1000}.5", f"d = {v % 1000}", "d IS NULL"],
    "blocks": lambda v: ["blocks IS NULL", f"blocks > {v % ROWS}", "blocks IS NOT NULL"],
    "s.x": lambda v: [f"s.x = {v % 60 - 30}", "s.x IS NULL"],
    "s.y": lambda v: [f"s.y < 'w{v % 3000:04d}'"],
}


@settings(max_examples=12)
@given(v=st.integers(-10**6, 10**6))
def test_prune_never_drops_a_page_holding_a_matching_row(pages, written, v):
    """pe.prune over a column's pages keeps every page that DuckDB finds a matching row in."""
    path, _ = written
    con = duckdb.connect()
    for name, make in PREDICATES.items():
        table = pages.columns[name]
        starts = (table["row_group"].to_numpy().astype(np.int64) * GROUP
                  + table["row_start"].to_numpy())
        for pred in make(v):
            keep = pe.prune(table, pred).to_numpy(zero_copy_only=False)
            sql = pred.replace("isnan(f)", "isnan(f)")
            hits = np.array([r[0] for r in con.sql(
                f"SELECT file_row_number FROM read_parquet('{path}', file_row_number=true) "
                f"WHERE {sql}").fetchall()], np.int64)
            page = np.searchsorted(starts, hits, "right") - 1
            assert keep[page].all(), f"{pred}: a page holding a matching row was pruned"


def test_pages_prune_a_point_lookup(pages):
    """On the sorted key a point lookup keeps one or two pages per row group."""
    table = pages.columns["key"]
    v = table["min_values"].to_pylist()[40]["key"]
    keep = pe.prune(table, f"key = {v}").to_numpy(zero_copy_only=False)
    assert 1 <= keep.sum() <= 3, "should keep only the pages whose span may hold the key"


def test_columns_selects_leaves_and_names_unknown_ones(written):
    pages = page_stats(written[0], columns=["key", "s.x"])
    assert sorted(pages.columns) == ["key", "s.x"]
    with pytest.raises(PruneEngineError, match="nope"):
        page_stats(written[0], columns=["nope"])


def test_a_file_without_page_index_has_one_unknown_row_per_chunk(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(_table().slice(0, 3000), str(path), row_group_size=GROUP)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pages = page_stats(str(path))
    for name, table in pages.columns.items():
        assert table.num_rows == 2, name
        assert table["row_count"].to_pylist() == [2500, 500]
        assert table["min_values"].is_null().to_pylist() == [False, False]  # (a struct)
        assert all(_get(r, "min_values", name) is None and _get(r, "null_count", name) is None
                   for r in table.to_pylist())


def test_files_and_folders(tmp_path):
    """A folder of files: every file's row groups, in order, each column covering them."""
    for k in range(3):
        _write(tmp_path / f"f{k}.parquet", _table(k).slice(0, 3000).select(["key", "w"]))
    pq.write_table(_table(9).slice(0, 100).select(["key"]), str(tmp_path / "f3.parquet"))
    pages = page_stats(str(tmp_path))
    assert pages.groups.num_rows == 7
    for name in ("key", "w"):
        table = pages.columns[name]
        seen = set(zip(table["path"].to_pylist(), table["row_group"].to_pylist()))
        assert seen == set(zip(pages.groups["path"].to_pylist(),
                               pages.groups["row_group"].to_pylist()))
    assert pages.columns["w"].filter(pc.match_substring(
        pages.columns["w"]["path"], "f3")).num_rows == 1  # the file lacks w: one unknown row


def test_unreadable_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 40)
    with pytest.raises(PruneEngineError) as info:
        page_stats(str(path))
    assert "bad.parquet" in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------------------ corrupt


def _index_places(path: str):
    footer = read_footer(path, path, page_index=True)
    rows = footer.rows
    return footer, rows


def _offset_index_first_page(data: bytes, at: int) -> tuple[int, int]:
    """Positions of the first PageLocation's offset varint and first_row_index byte."""
    assert data[at] == 0x19  # field 1, a list
    pos = at + 1
    size = data[pos] >> 4
    pos += 1
    if size == 15:
        while data[pos] & 0x80:
            pos += 1
        pos += 1
    assert data[pos] == 0x16  # offset
    offset_at = pos + 1
    pos = offset_at
    while data[pos] & 0x80:
        pos += 1
    pos += 1
    assert data[pos] == 0x15
    pos += 1
    while data[pos] & 0x80:
        pos += 1
    pos += 1
    assert data[pos] == 0x16
    return offset_at, pos + 1


def _varint(data, pos) -> tuple[int, int]:
    value = shift = 0
    while True:
        value |= (data[pos] & 0x7F) << shift
        shift += 7
        pos += 1
        if data[pos - 1] < 0x80:
            return value, pos


def _column_index_lists(ci: bytes) -> dict[int, int]:
    """Where the first element of each list field of a ColumnIndex (as pyarrow writes it:
    fields 1, 2, 3, 4, 5 in order) starts."""
    out, pos, last = {}, 0, 0
    while ci[pos] != 0:
        fid, kind = last + (ci[pos] >> 4), ci[pos] & 0x0F
        last, pos = fid, pos + 1
        if kind == 5:  # boundary_order, an i32
            _, pos = _varint(ci, pos)
            continue
        assert kind == 9  # a list
        size, etype, pos = ci[pos] >> 4, ci[pos] & 0x0F, pos + 1
        if size == 15:
            size, pos = _varint(ci, pos)
        out[fid] = pos
        for _ in range(size):
            if etype in (1, 2):  # a boolean: one byte
                pos += 1
            elif etype == 8:  # binary
                n, pos = _varint(ci, pos)
                pos += n
            else:  # i64
                _, pos = _varint(ci, pos)
    return out


def _corrupt(tmp_path, edit) -> tuple[str, list]:
    table = _table().select(["key", "w"]).slice(0, 3000)
    path = _write(tmp_path / "c.parquet", table)
    data = bytearray(open(path, "rb").read())
    footer, rows = _index_places(path)
    edit(data, rows)
    out = tmp_path / "c2.parquet"
    out.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = page_stats(str(out))
    return pages, [w for w in caught if "page index" in str(w.message)]


def _first_chunk_is_unknown(pages):
    table = pages.columns["key"]
    first = table.filter(pc.equal(table["row_group"], 0)).to_pylist()
    assert len(first) == 1 and first[0]["row_count"] == GROUP
    assert first[0]["min_values"]["key"] is None and first[0]["null_count"]["key"] is None
    other = table.filter(pc.equal(table["row_group"], 1))
    assert other.num_rows > 1, "the other chunk's page index is still used"


def test_first_row_index_not_from_zero_is_ignored_with_a_warning(tmp_path):
    def edit(data, rows):
        at = int(rows[0, _thrift.S_OFFSET_INDEX_OFF])
        _, first_row = _offset_index_first_page(data, at)
        assert data[first_row] == 0
        data[first_row] = 2  # first_row_index 1

    pages, caught = _corrupt(tmp_path, edit)
    _first_chunk_is_unknown(pages)
    assert len(caught) == 1 and "first row" in str(caught[0].message)


def test_page_offset_outside_the_chunk_is_ignored_with_a_warning(tmp_path):
    def edit(data, rows):
        at = int(rows[0, _thrift.S_OFFSET_INDEX_OFF])
        offset_at, _ = _offset_index_first_page(data, at)
        assert data[offset_at] & 0x7F >= 2
        data[offset_at] -= 2  # one byte before the chunk's first page

    pages, caught = _corrupt(tmp_path, edit)
    _first_chunk_is_unknown(pages)
    assert len(caught) == 1 and "outside its column chunk" in str(caught[0].message)


def test_min_above_max_is_ignored_with_a_warning(tmp_path):
    def edit(data, rows):
        at = int(rows[0, _thrift.S_COLUMN_INDEX_OFF])
        size = int(rows[0, _thrift.S_COLUMN_INDEX_LEN])
        ci = bytes(data[at:at + size])
        pos = _column_index_lists(ci)[2]
        assert ci[pos] == 8  # the first min's length
        data[at + pos + 1:at + pos + 9] = (2**62).to_bytes(8, "little")

    pages, caught = _corrupt(tmp_path, edit)
    _first_chunk_is_unknown(pages)
    assert len(caught) == 1 and "min is above its max" in str(caught[0].message)


def test_index_place_outside_the_file_is_ignored_with_a_warning(written, monkeypatch):
    """A footer whose column index place lies past the file's pages: that chunk is read
    whole, with one warning (the footer is edited after decoding: its bytes are varints)."""
    from prune_engine.stats import page_index

    real = page_index.read_footer

    def shifted(*args, **kwargs):
        footer = real(*args, **kwargs)
        footer.rows[0, _thrift.S_COLUMN_INDEX_OFF] = 10**12
        return footer

    monkeypatch.setattr(page_index, "read_footer", shifted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = page_stats(written[0], columns=["key"])
    _first_chunk_is_unknown(pages)
    assert len([w for w in caught if "outside the file" in str(w.message)]) == 1


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), hits=st.integers(1, 8))
def test_random_damage_to_the_page_index_never_crashes(tmp_path_factory, seed, hits):
    """Random bytes anywhere in the page index: at most one warning, a well-formed table
    (spans tiling each row group), never an exception."""
    root = tmp_path_factory.mktemp("damage")
    base = _write(root / "a.parquet", _table().select(["key", "w", "l"]).slice(0, 3000))
    data = bytearray(open(base, "rb").read())
    _, rows = _index_places(base)
    lo = int(rows[:, _thrift.S_COLUMN_INDEX_OFF].min())
    hi = int((rows[:, _thrift.S_OFFSET_INDEX_OFF] + rows[:, _thrift.S_OFFSET_INDEX_LEN]).max())
    rng = np.random.default_rng(seed)
    for at in rng.integers(lo, hi, hits).tolist():
        data[at] = int(rng.integers(0, 256))
    (root / "b.parquet").write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = page_stats(str(root / "b.parquet"))
    assert len([w for w in caught if "page index" in str(w.message)]) <= 1
    for name, table in pages.columns.items():
        for r, n in enumerate([2500, 500]):
            mine = table.filter(pc.equal(table["row_group"], r))
            start, count = mine["row_start"].to_numpy(), mine["row_count"].to_numpy()
            assert start[0] == 0 and start[-1] + count[-1] == n, name
            assert (start[1:] == start[:-1] + count[:-1]).all(), name


def test_twin_decodes_as_the_compiled_kernel(written, tmp_path):
    """The Python twin of decode_page_index gives the compiled kernel's answer, on a good
    page index and on damaged ones."""
    from prune_engine.stats import page_index

    twin = twins_of("prune_engine.stats._page_thrift", ("decode_page_index",))
    PAGE_KERNELS.wait()
    footer = read_footer(written[0], written[0], page_index=True)
    data, places, _ = page_index.index_places(footer)
    rng = np.random.default_rng(3)
    for k in range(30):
        buf = data.copy()
        if k:
            at = rng.integers(0, len(buf) - 1, 3)
            buf[at] = rng.integers(0, 256, 3)
        got = twin.decode_page_index(buf, places)
        want = _page_thrift.decode_page_index(buf, places)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), k


def test_leaves_inside_maps_and_lists_of_structs(tmp_path):
    """Leaves named and laid out as collect_stats lays them out (``m.key``, ``ls.x``, a list
    of lists by its name); each page bounds the elements of its rows; INT96 (no column index
    written, no trusted order) is one unknown row per row group."""
    n = 1_000
    rng = np.random.default_rng(5)
    vals = rng.integers(-100, 100, n).tolist()
    table = pa.table({
        "m": pa.array([[("k%03d" % (v + 100), v)] if i % 4 else None
                       for i, v in enumerate(vals)], pa.map_(pa.string(), pa.int64())),
        "ls": pa.array([[{"x": v, "y": "q"}, {"x": v + 1, "y": None}] for v in vals],
                       pa.list_(pa.struct([("x", pa.int64()), ("y", pa.string())]))),
        "ll": pa.array([[[v], []] for v in vals], pa.list_(pa.list_(pa.int32()))),
        "t96": pa.array(range(n), pa.timestamp("ns")),
    })
    path = str(tmp_path / "n.parquet")
    pq.write_table(table, path, write_page_index=True, data_page_size=1, write_batch_size=50,
                   use_deprecated_int96_timestamps=True)
    pages = page_stats(path)
    assert sorted(pages.columns) == ["ll", "ls.x", "ls.y", "m.key", "m.value", "t96"]
    full = pe.collect_stats(path).schema.field("min_values").type
    for name, stats in pages.columns.items():
        top, *rest = name.split(".")
        want, got = full.field(top), stats.schema.field("min_values").type.field(top)
        if rest:
            want, got = want.type.field(rest[0]), got.type.field(rest[0])
        assert (got.type, got.metadata) == (want.type, want.metadata), name
    assert pages.columns["t96"].num_rows == 1
    assert pages.columns["t96"]["min_values"].to_pylist() == [{"t96": None}]
    elements = {"ls.x": lambda part: pc.struct_field(pc.list_flatten(part), "x"),
                "m.value": lambda part: part.items.slice(  # (a map's values)
                    part.offsets[0].as_py(), part.offsets[-1].as_py() - part.offsets[0].as_py()),
                "ll": lambda part: pc.list_flatten(pc.list_flatten(part))}
    for name, flatten in elements.items():
        column = table.column(name.split(".")[0]).combine_chunks()
        rows = pages.columns[name].to_pylist()
        assert len(rows) > 10, name
        for row in rows:
            present = pc.drop_null(flatten(column.slice(row["row_start"], row["row_count"])))
            lo, hi = _get(row, "min_values", name), _get(row, "max_values", name)
            if len(present):
                assert lo is not None and hi is not None, row
                assert pc.min(present).as_py() >= lo and pc.max(present).as_py() <= hi, row


def test_string_bounds_of_old_parquet_mr_are_not_trusted(tmp_path):
    """PARQUET-251: a file said written by parquet-mr 1.6 has no trusted string bounds in its
    footer, so none in its page index either (one unknown row, no warning); integers keep."""
    path = _write(tmp_path / "a.parquet", _table().select(["key", "w"]).slice(0, 3000))
    data = bytearray(open(path, "rb").read())
    created = pq.ParquetFile(path).metadata.created_by.encode()
    fake = b"parquet-mr version 1.6.0".ljust(len(created))
    assert len(fake) == len(created) and data.count(created) == 1
    at = data.index(created)
    data[at:at + len(created)] = fake
    out = tmp_path / "old.parquet"
    out.write_bytes(bytes(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pages = page_stats(str(out))
    assert pages.columns["w"].num_rows == 2
    assert pages.columns["w"]["min_values"].to_pylist() == [{"w": None}, {"w": None}]
    assert pages.columns["key"].num_rows > 10


def test_a_file_whose_row_counts_contradict_reads_whole_with_a_warning(tmp_path):
    """The file's num_rows (3001) contradicts its row groups' (3000): no page or row count of
    it is trusted (one unknown row per chunk, num_records null), one warning."""
    path = _write(tmp_path / "a.parquet", _table().select(["key"]).slice(0, 3000))
    data = bytearray(open(path, "rb").read())
    footer_start = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    said = b"\x16\xf0\x2e"  # FileMetaData 3 num_rows: i64 3000 (zigzag 6000)
    at = data.index(said, footer_start)
    data[at + 1] = 0xF2  # 3001
    out = tmp_path / "b.parquet"
    out.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = page_stats(str(out))
    table = pages.columns["key"]
    assert table["row_count"].to_pylist() == [2500, 500]
    assert table["num_records"].to_pylist() == [None, None]
    assert table["min_values"].to_pylist() == [{"key": None}, {"key": None}]
    assert len([w for w in caught if "contradict" in str(w.message)]) == 1


def test_null_count_above_the_page_rows_is_ignored_with_a_warning(tmp_path):
    def edit(data, rows):
        at = int(rows[0, _thrift.S_COLUMN_INDEX_OFF])
        size = int(rows[0, _thrift.S_COLUMN_INDEX_LEN])
        pos = _column_index_lists(bytes(data[at:at + size]))[5]  # null_counts
        assert data[at + pos] == 0  # no null in the key
        data[at + pos] = 2 * (PAGE + 5)  # zigzag: more nulls than the page has rows

    pages, caught = _corrupt(tmp_path, edit)
    _first_chunk_is_unknown(pages)
    assert len(caught) == 1 and "null count" in str(caught[0].message)
