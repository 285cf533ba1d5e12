"""Dictionary pages as exact value sets (``collect_stats(dictionaries=...)``).

Soundness: a container (file or row group) holding a row on which the predicate is TRUE (SQL
three-valued logic: NULL is not TRUE) is never pruned. The oracle is the container's actual
rows, read back with pyarrow and evaluated in Python (``-0.0`` equals ``0.0``; NaN equals NaN,
the stricter demand for ``=`` and ``IN``), or DuckDB on the rows for DuckDB-written files.
Precision: for a simple predicate on the column (``=``, ``!=``, ``IN``, ``NOT IN``), a
container whose set is known is pruned exactly when no value of its set makes the predicate
TRUE.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import prune_engine as pe
from prune_engine.errors import StatsError
from tests.bloom.test_soundness import (TYPES, _plain, check_oracle, kept, keys, scalar_key,
                                        sql_literal, universe)
from tests.budget import examples
from tests.oracle.duck import DUCKDB_MAJOR, write_parquet

NAN = float("nan")
ROWS = 16
GROUPS = 4
FILES = 3


def collect(root, granularity="row_group", **kw):
    kw.setdefault("dictionaries", True)
    return pe.collect_stats(str(root), granularity=granularity, progress=False, **kw)


def value_sets(stats, column="c") -> dict[str, set | None]:
    """Each container's value set as comparable keys (None = unknown)."""
    cids = stats.column("container").to_pylist()
    if "value_set" not in stats.table.schema.names or \
            stats.table.schema.field("value_set").type.get_field_index(column) < 0:
        return dict.fromkeys(cids)  # no set of the column anywhere: unknown
    arr = stats.table.column("value_set").combine_chunks().field(column)
    out = {}
    for cid, i in zip(cids, range(len(arr))):
        out[cid] = None if not arr[i].is_valid else set(keys(arr[i].values))
    return out


def container_rows(stats, columns=("c", "y")) -> dict[str, list[tuple]]:
    """The rows (as tuples of keys of ``columns``) of every container of ``stats``."""
    out, cache = {}, {}
    for cid, path, rg in zip(stats.column("container").to_pylist(),
                             stats.column("path").to_pylist(),
                             stats.column("row_group").to_pylist()):
        pf = cache.get(path) or cache.setdefault(path, pq.ParquetFile(path))
        data = pf.read(list(columns)) if rg is None else pf.read_row_group(rg, list(columns))
        out[cid] = list(zip(*(keys(data.column(c)) for c in columns)))
    return out


# ------------------------------------------------------------------------------ predicates
#
# ("eq"|"ne", col, scalar), ("in"|"nin", col, [scalar | None]), ("not", p), ("and"|"or", p, q);
# a scalar is a pyarrow scalar (None: NULL in an IN list).

COLUMNS = {"c": 0, "y": 1}


def _key(s):
    return None if s is None else scalar_key(s)


def evaluate(p, row):
    """Three-valued value of ``p`` on ``row`` (True, False or None)."""
    op = p[0]
    if op in ("eq", "ne"):
        x = row[COLUMNS[p[1]]]
        if x is None:
            return None
        eq = x == _key(p[2])
        return eq if op == "eq" else not eq
    if op in ("in", "nin"):
        x = row[COLUMNS[p[1]]]
        if x is None:
            return None
        items = [_key(s) for s in p[2]]
        if x in [k for k in items if k is not None]:
            hit = True
        elif any(k is None for k in items):
            hit = None
        else:
            hit = False
        return hit if op == "in" or hit is None else not hit
    if op == "not":
        v = evaluate(p[1], row)
        return None if v is None else not v
    a, b = evaluate(p[1], row), evaluate(p[2], row)
    if op == "and":
        return False if a is False or b is False else (None if a is None or b is None else True)
    return True if a is True or b is True else (None if a is None or b is None else False)


def _lit(s):
    return "NULL" if s is None else sql_literal(s)


def to_sql(p) -> str | None:
    op = p[0]
    if op in ("eq", "ne", "in", "nin"):
        lits = [_lit(s) for s in (p[2] if op in ("in", "nin") else [p[2]])]
        if any(x is None for x in lits):
            return None
        if op in ("eq", "ne"):
            return f"{p[1]} {'=' if op == 'eq' else '!='} {lits[0]}"
        return f"{p[1]} {'IN' if op == 'in' else 'NOT IN'} ({', '.join(lits)})"
    parts = [to_sql(q) for q in p[1:]]
    if any(x is None for x in parts):
        return None
    if op == "not":
        return f"NOT ({parts[0]})"
    return f"({parts[0]}) {op.upper()} ({parts[1]})"


def to_builder(p):
    """The builder expression of ``p``, or None (an IN list item that is not a plain literal
    crashes the compiler, a known limitation shared with the Bloom filter suite)."""
    op = p[0]
    if op in ("eq", "ne"):
        return pe.col(p[1]) == p[2] if op == "eq" else pe.col(p[1]) != p[2]
    if op in ("in", "nin"):
        if not all(s is None or _plain(s) for s in p[2]):
            return None
        e = pe.col(p[1]).isin(list(p[2]))
        return e if op == "in" else ~e
    parts = [to_builder(q) for q in p[1:]]
    if any(x is None for x in parts):
        return None
    if op == "not":
        return ~parts[0]
    return parts[0] & parts[1] if op == "and" else parts[0] | parts[1]


def simple(p) -> bool:
    """An atom on ``c`` whose literals are plain (exact): the set decides it exactly."""
    if p[0] not in ("eq", "ne", "in", "nin") or p[1] != "c":
        return False
    items = p[2] if p[0] in ("in", "nin") else [p[2]]
    return all(s is None or _plain(s) for s in items) and not any(
        s is not None and _key(s) == "NaN" for s in items)


def check(stats, rows, preds, exact=True) -> None:
    """Soundness of every predicate (builder and SQL forms); precision on simple ones."""
    sets = value_sets(stats)
    for p in preds:
        matching = {cid for cid, rs in rows.items() if any(evaluate(p, r) is True for r in rs)}
        for expr in (to_builder(p), to_sql(p)):
            if expr is None:
                continue
            keep = kept(stats, expr)
            assert matching <= keep, f"unsound: {expr} pruned {sorted(matching - keep)}"
            if exact and simple(p):
                decided = {cid for cid, s in sets.items() if s is not None}
                over = (keep & decided) - matching
                assert not over, f"{expr} keeps {sorted(over)} (sets {[sets[c] for c in over]})"


# ------------------------------------------------------------------------------ the types




def pick(t, seed):
    """``(present, absent)``: 10 values of a universe of ``t`` (its limits included, no NaN)
    and 6 others, all sorted."""
    rng = random.Random(seed)
    u = universe(t, seed)
    if pa.types.is_floating(t):
        u = u.filter(pc.invert(pc.is_nan(u)))
    n = len(u)
    chosen = sorted({0, n - 1} | set(rng.sample(range(1, n - 1), 8)))
    rest = sorted(rng.sample([i for i in range(n) if i not in chosen], 6))
    return u.take(pa.array(chosen)), u.take(pa.array(rest))


def write_lake(root, t, present, seed, **kw) -> None:
    """FILES files of GROUPS row groups of ROWS rows; each row group holds one to three
    values of ``present`` (plus nulls); some row groups have a designed content (see below)."""
    rng = random.Random(seed)
    n = len(present)
    for f in range(FILES):
        rows: list = []
        for g in range(GROUPS):
            design = {(0, 0): [0, n - 1, 3, None], (0, 1): [4], (0, 2): [2, 7],
                      (0, 3): [5, None], (1, 2): [None]}.get((f, g))
            pool = design or (rng.sample(range(n), rng.randint(1, 3)) + [None])
            group = [rng.choice(pool) for _ in range(ROWS)]
            for i, v in enumerate(pool):  # every designed value occurs
                group[i] = v
            rows += [None if i is None else present[i] for i in group]
        values = pa.array([None if s is None else s.as_py() for s in rows], t) \
            if not (pa.types.is_timestamp(t) or pa.types.is_date(t)) else \
            pa.array([None if s is None else s.value for s in rows],
                     pa.int64() if pa.types.is_timestamp(t) else pa.int32()).cast(t)
        if pa.types.is_floating(t) and f == 2:
            py = values.to_pylist()
            py[0:ROWS] = [-0.0 if i % 2 else 2.5 for i in range(ROWS)]  # g0: -0.0 and 2.5
            py[ROWS:2 * ROWS] = [NAN, 1.0] * (ROWS // 2)  # g1: NaN, the set is unknown
            py[3 * ROWS:] = [-0.0, None] * (ROWS // 2)  # g3: only -0.0
            values = pa.array(py, t)
        y = pa.array([rng.choice([0, 1, 2, None]) for _ in range(len(values))], pa.int64())
        pq.write_table(pa.table({"c": values, "y": y}),
                       os.path.join(str(root), f"part-{f}.parquet"), row_group_size=ROWS, **kw)


def _write_kw(t):
    return {"store_decimal_as_integer": True} if pa.types.is_decimal(t) else {}


def predicates(t, present, absent, seed) -> list:
    rng = random.Random(seed)
    scalars = [present[i] for i in range(len(present))] + [absent[i] for i in range(len(absent))]
    if pa.types.is_floating(t):
        scalars += [pa.scalar(x, t) for x in (0.0, -0.0, 2.5, 1.0)]
    y = [pa.scalar(w, pa.int64()) for w in (0, 1, 2, 7)]
    preds = []
    for s in scalars:
        preds += [("eq", "c", s), ("ne", "c", s), ("not", ("eq", "c", s))]
    if pa.types.is_floating(t):
        preds += [("eq", "c", pa.scalar(NAN, t)), ("in", "c", [pa.scalar(NAN, t), scalars[0]])]
    lists = [[rng.choice(scalars) for _ in range(rng.randint(1, 4))] for _ in range(10)]
    lists += [[present[2], present[7]], [present[4]], [present[0], present[3], present[-1]],
              list(present), list(absent)]
    for lst in lists:
        with_null = lst + [None]
        preds += [("in", "c", lst), ("nin", "c", lst), ("in", "c", with_null),
                  ("nin", "c", with_null), ("not", ("in", "c", lst))]
    for s in scalars[::3]:
        w = rng.choice(y)
        preds += [("or", ("ne", "c", s), ("eq", "y", w)), ("and", ("eq", "c", s), ("ne", "y", w)),
                  ("or", ("nin", "c", [s, present[4]]), ("eq", "c", s)),
                  ("not", ("or", ("eq", "c", s), ("in", "c", [present[5]])))]
    return preds


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_every_type_sound_and_pruning(tmp_path, t):
    seed = TYPES.index(t)
    present, absent = pick(t, seed)
    write_lake(tmp_path, t, present, seed, **_write_kw(t))
    if pa.types.is_decimal(t):  # the physical types the decimals are meant to test
        phys = pq.ParquetFile(tmp_path / "part-0.parquet").metadata.row_group(0).column(0)
        assert phys.physical_type == {5: "INT32", 15: "INT64", 30: "FIXED_LEN_BYTE_ARRAY"}[
            t.precision]
    preds = predicates(t, present, absent, seed)
    floating = pa.types.is_floating(t)
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity)
        assert stats.metadata["dictionaries"]["problems"] == []
        sets = value_sets(stats)
        rows = container_rows(stats)
        # the sets are exact: the values of the rows (NaN: unknown)
        for cid, s in sets.items():
            vals = {r[0] for r in rows[cid]} - {None}
            if floating and "NaN" in vals:
                assert s is None, cid
            else:
                assert s == vals, (cid, s, vals)
        check(stats, rows, preds)

    # the sets prune where min/max alone would not
    stats, minmax = collect(tmp_path), collect(tmp_path, dictionaries=None)
    assert "value_set" not in minmax.table.schema.names
    rg = str(tmp_path / "part-0.parquet") + "#rg="
    p2, p7, p4 = present[2], present[7], present[4]
    cases = [(("nin", "c", [p2, p7]), rg + "2"), (("ne", "c", p4), rg + "1"),
             (("nin", "c", [p4]), rg + "1")]
    for a in range(len(absent)):
        cases.append((("eq", "c", absent[a]), None))
    by_minmax = by_sets = 0
    for p, cid in cases:
        for expr in (to_builder(p), to_sql(p)):
            if expr is None:
                continue
            keep, base = kept(stats, expr), kept(minmax, expr)
            assert keep <= base
            if cid is not None:
                assert cid not in keep, (expr, cid)
            by_minmax += len(base)
            by_sets += len(keep)
    assert by_sets < by_minmax
    expr = to_sql(("nin", "c", [p2, p7]))
    if expr is not None:
        assert rg + "2" in kept(minmax, expr)  # min/max alone keeps {p2, p7} for NOT IN
        reasons = dict(zip(*pe.explain(stats, expr).select(["container", "reason"])
                           .to_pydict().values()))
        assert reasons[rg + "2"].endswith("(dictionary of c)"), reasons[rg + "2"]


# ------------------------------------------------------------------------------ unknown sets


def _lake_preds(t, values) -> list:
    scalars = [pa.scalar(v, t) for v in values]
    preds = []
    for s in scalars:
        preds += [("eq", "c", s), ("ne", "c", s)]
    preds += [("nin", "c", scalars[:3]), ("in", "c", scalars[:3]), ("nin", "c", scalars)]
    return preds


def test_fallback_to_plain_is_unknown(tmp_path):
    # a dictionary page limit of 1 KiB: the 2000 distinct strings overflow it mid-chunk and
    # pyarrow falls back to PLAIN for the remaining data pages
    vals = [f"value-{i:05d}" for i in range(2000)]
    small = ["a", "b"] * 1000
    pq.write_table(pa.table({"c": vals, "d": small, "y": [1] * 2000}), tmp_path / "a.parquet",
                   dictionary_pagesize_limit=1024, data_page_size=512, row_group_size=2000)
    md = pq.ParquetFile(tmp_path / "a.parquet").metadata.row_group(0)
    assert "PLAIN" in md.column(0).encodings and md.column(0).has_dictionary_page
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity)
        assert list(value_sets(stats).values()) == [None]
        assert list(value_sets(stats, "d").values()) == [{"a", "b"}]
        rows = container_rows(stats)
        check(stats, rows, _lake_preds(pa.string(), [vals[0], vals[1999], vals[1500], "zz"]))
        # the set of d still prunes
        assert kept(stats, "d NOT IN ('a', 'b')") == set()


def test_no_dictionary_is_unknown(tmp_path):
    pq.write_table(pa.table({"c": ["a", "c", "b", "d"], "y": [1, 2, 3, 4]}),
                   tmp_path / "a.parquet", use_dictionary=False, row_group_size=2)
    stats = collect(tmp_path)
    assert stats.metadata["dictionaries"]["problems"] == []
    if "value_set" in stats.table.schema.names:
        assert set(value_sets(stats).values()) == {None}
    rows = container_rows(stats)
    check(stats, rows, _lake_preds(pa.string(), ["a", "b", "c"]))
    assert len(kept(stats, "c NOT IN ('a', 'c', 'b', 'd')")) == 2


def test_page_over_the_cap_is_unknown(tmp_path):
    vals = [f"long-value-{i:04d}-" + "x" * 40 for i in range(50)] * 2
    pq.write_table(pa.table({"c": vals, "y": list(range(100))}), tmp_path / "a.parquet",
                   compression="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = collect(tmp_path, dictionary_bytes=1000)
    assert small.metadata["dictionaries"]["problems"] == []
    assert list(value_sets(small).values()) == [None]
    big = collect(tmp_path, dictionary_bytes=10000)
    assert list(value_sets(big).values()) == [set(vals)]
    inside = "long-value-0000-y"  # between two values: min/max keeps
    check(small, container_rows(small), _lake_preds(pa.string(), [vals[0], inside]))
    assert kept(small, f"c = '{inside}'") != set() and kept(big, f"c = '{inside}'") == set()


def _overwrite(path, at, data: bytes):
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(data)


def _dictionary_offset(path, rg=0, col=0):
    return pq.ParquetFile(path).metadata.row_group(rg).column(col).dictionary_page_offset


@pytest.mark.parametrize("compression", ["none", "snappy", "zstd"])
@pytest.mark.parametrize("damage", ["header_ff", "header_zero", "body_ff"])
def test_corrupted_page_warns_and_keeps(tmp_path, compression, damage):
    path = tmp_path / "a.parquet"
    vals = [f"v{i % 5}" for i in range(40)]
    pq.write_table(pa.table({"c": vals, "y": [1] * 40}), path, compression=compression,
                   row_group_size=20)
    good = collect(tmp_path)
    at = _dictionary_offset(path)
    length = pq.ParquetFile(path).metadata.row_group(0).column(0).data_page_offset - at
    if damage == "header_ff":
        _overwrite(path, at, b"\xff" * 6)
    elif damage == "header_zero":
        _overwrite(path, at, b"\x00" * 6)
    elif compression == "none":  # the last value's bytes: 'v4' becomes 'zz'
        _overwrite(path, at + length - 2, b"zz")
    else:  # the last bytes of the compressed data
        _overwrite(path, at + length - 6, b"\xff" * 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = collect(tmp_path)
    sets = value_sets(stats)
    rg0 = str(path) + "#rg=0"
    problems = stats.metadata["dictionaries"]["problems"]
    if damage == "body_ff" and compression == "none":
        # uncompressed values changed in place: a valid page of other values, which is also
        # what the rows read back hold; the sets must stay those of the rows
        rows = container_rows(stats)
        assert sets[rg0] is None or sets[rg0] == {r[0] for r in rows[rg0]} - {None}
        return
    assert sets[rg0] is None
    assert problems and any("dictionary page" in str(w.message) for w in caught)
    # the other row group keeps its set; every predicate keeps the damaged one
    assert sets[str(path) + "#rg=1"] == value_sets(good)[str(path) + "#rg=1"]
    # (predicates that min/max alone cannot decide: values inside 'v0'..'v4')
    for expr in ["c = 'v1'", "c = 'v15'", "c != 'v1'", "c NOT IN ('v0','v1','v2','v3','v4')",
                 "c IN ('v05', 'v25')"]:
        assert rg0 in kept(stats, expr), expr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert set(value_sets(collect(tmp_path, "file")).values()) == {None}


def _header_num_values_at(path):
    """The offset of the dictionary page header's num_values (a one-byte zigzag varint),
    found by walking the Thrift compact header: PageHeader field 7 (struct), its field 1."""
    at = _dictionary_offset(path)
    with open(path, "rb") as fh:
        fh.seek(at)
        head = fh.read(64)
    i, last = 0, 0
    while i < len(head):
        b = head[i]
        delta, typ = b >> 4, b & 0x0F
        fid = last + delta
        i += 1
        if typ == 5:  # i32 varint
            while head[i] & 0x80:
                i += 1
            i += 1
        elif typ == 12 and fid == 7:  # the dictionary page header struct
            assert head[i] & 0x0F == 5 and head[i] >> 4 == 1
            return at + i + 1
        else:
            raise AssertionError(f"unexpected field type {typ}")
        last = fid
    raise AssertionError("no dictionary page header")


def test_num_values_smaller_than_body_is_not_a_smaller_set(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"c": pa.array([10, 20, 30] * 4, pa.int32())}), path,
                   compression="none")
    at = _header_num_values_at(path)
    with open(path, "rb") as fh:
        fh.seek(at)
        assert fh.read(1) == b"\x06"  # zigzag(3)
    _overwrite(path, at, b"\x04")  # num_values 2: the page body still holds 3 values
    with pytest.warns(UserWarning, match="12 bytes for 2 values"):
        stats = collect(tmp_path)
    # the data pages still use the third value: the set must be unknown
    assert value_sets(stats)[str(path) + "#rg=0"] is None
    assert str(path) + "#rg=0" in kept(stats, "c = 30")


CODECS = ["none", "snappy", "gzip", "brotli", "zstd", "lz4"]


def test_every_codec_gives_the_same_sets(tmp_path):
    rng = random.Random(5)
    table = pa.table({
        "c": pa.array([rng.choice(["a", "é", "日本", "", None]) for _ in range(200)]),
        "i": pa.array([rng.choice([1, -7, 2**40, None]) for _ in range(200)], pa.int64()),
        "f": pa.array([rng.choice([1.5, -0.0, 3.25]) for _ in range(200)], pa.float64()),
        "y": pa.array(range(200), pa.int64()),
    })
    seen = {}
    for codec in CODECS:
        folder = tmp_path / codec
        folder.mkdir()
        pq.write_table(table, folder / "a.parquet", compression=codec, row_group_size=50)
        stats = collect(folder)
        assert stats.metadata["dictionaries"]["problems"] == [], codec
        got = {c: list(value_sets(stats, c).values()) for c in ("c", "i", "f")}
        for c, sets in got.items():
            assert all(s is not None for s in sets), (codec, c)
        seen[codec] = got
        check(stats, container_rows(stats), _lake_preds(pa.string(), ["a", "", "zz"]))
    assert all(seen[c] == seen["none"] for c in CODECS), seen


def test_boolean_and_int96_have_no_sets(tmp_path):
    pq.write_table(pa.table({"b": [True, False, None], "t": pa.array([0, 1, 2], pa.timestamp("ns")),
                             "c": ["a", "a", "b"]}),
                   tmp_path / "a.parquet", use_deprecated_int96_timestamps=True)
    stats = collect(tmp_path)
    names = stats.table.schema.field("value_set").type
    assert [names.field(i).name for i in range(names.num_fields)] == ["c"]
    assert kept(stats, "b != TRUE") and kept(stats, "t != TIMESTAMP '1970-01-01 00:00:00'")
    with pytest.raises(StatsError, match="'b'"):
        collect(tmp_path, dictionaries=["b"])


# ------------------------------------------------------------------------------ writers


DUCK_COLUMNS = {
    # two values per row group of 2048 rows, far apart, plus some nulls
    "k": "CAST(CASE WHEN i % 7 = 0 THEN NULL WHEN i % 2 = 0 THEN (i // 2048) * 3 "
         "ELSE (i // 2048) * 3 + 60 END AS BIGINT)",
    "s": "'v' || CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
         "AS VARCHAR)",
    "i32": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
           "AS INTEGER)",
    "d": "DATE '2020-01-01' + CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 "
         "ELSE (i // 2048) * 3 + 60 END AS INTEGER)",
    "f": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
         "AS DOUBLE) / 4",
    "dec": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
           "AS DECIMAL(12, 2)) / 4",
}


def _literal(column: str, v: int, duck: bool) -> str:
    day = dt.date(2020, 1, 1) + dt.timedelta(days=v)
    return {"k": f"{v}", "s": f"'v{v}'", "i32": f"{v}",
            "d": f"DATE '{day.isoformat()}'", "f": f"{v / 4!r}",
            "dec": f"CAST({v} AS DECIMAL(12, 2)) / 4" if duck else str(v / 4)}[column]


def test_duckdb_written_files(tmp_path):
    write_parquet(tmp_path, ", ".join(f"{expr} AS {name}" for name, expr in DUCK_COLUMNS.items()),
                  files=2, rows=4 * 2048, row_group_size=2048)
    assert pq.ParquetFile(tmp_path / "duck-0.parquet").metadata.num_row_groups > 1
    # row group g (of 8, over both files) holds 3g and 3g + 60: values in, between, outside
    values = [-1, 0, 1, 2, 3, 4, 6, 9, 20, 21, 22, 30, 59, 60, 61, 63, 81, 82]
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity)
        minmax = collect(tmp_path, granularity, dictionaries=None)
        assert stats.metadata["dictionaries"]["problems"] == []
        if DUCKDB_MAJOR < 2:  # DuckDB 1.x writes no encoding statistics: no sets, all kept
            assert "value_set" not in stats.table.column_names
        else:  # DuckDB 2 does: every chunk has its set
            sets = stats.table.column("value_set").combine_chunks()
            assert all(sets.field(name).null_count == 0 for name in DUCK_COLUMNS), granularity
        cases = []
        for name in DUCK_COLUMNS:
            for v in values:
                a, b = v, v + 60
                for op in ("=", "!="):
                    cases.append(tuple(f"{name} {op} {_literal(name, a, d)}"
                                       for d in (False, True)))
                for op in ("IN", "NOT IN"):
                    for extra in ("", ", NULL"):
                        cases.append(tuple(
                            f"{name} {op} ({_literal(name, a, d)}, {_literal(name, b, d)}"
                            f"{extra})" for d in (False, True)))
                cases.append(tuple(f"NOT ({name} = {_literal(name, a, d)}) OR k = 5"
                                   for d in (False, True)))
        pruned = check_oracle(stats, minmax, cases, granularity)
        assert pruned > 0 or DUCKDB_MAJOR < 2, granularity


# ------------------------------------------------------------------------------ drift


def test_schema_drift_int32_and_int64(tmp_path):
    pq.write_table(pa.table({"c": pa.array([1, 5, None, -(2**31), 2**31 - 1, 5], pa.int32())}),
                   tmp_path / "a.parquet", row_group_size=3)
    pq.write_table(pa.table({"c": pa.array([2, 6, None, 6, 2**40, 6], pa.int64())}),
                   tmp_path / "b.parquet", row_group_size=3)
    lits = [1, 2, 5, 6, 3, 2**40, -(2**40), 2**31 - 1, -(2**31), 2**31, 0, 2**63 - 1]
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity)
        assert stats.table.schema.field("value_set").type.field("c").type.value_type == \
            pa.int64()
        rows = container_rows(stats, ("c",))
        preds = []
        for v in lits:
            s = pa.scalar(v, pa.int64())
            preds += [("eq", "c", s), ("ne", "c", s), ("nin", "c", [s, pa.scalar(5, pa.int64())])]
        check(stats, rows, preds)
        for v in lits:
            if -(2**31) <= v < 2**31:
                s = pa.scalar(v, pa.int32())
                check(stats, rows, [("eq", "c", s), ("ne", "c", s)])
    stats = collect(tmp_path)
    assert kept(stats, "c NOT IN (6, 2)") == {str(tmp_path / f) for f in
                                                ("a.parquet#rg=0", "a.parquet#rg=1",
                                                 "b.parquet#rg=1")}


def test_schema_drift_string_and_large_string(tmp_path):
    pq.write_table(pa.table({"c": pa.array(["a", "b", None, "é"], pa.string())}),
                   tmp_path / "a.parquet", row_group_size=2)
    pq.write_table(pa.table({"c": pa.array(["b", "b", "日本", None], pa.large_string())}),
                   tmp_path / "b.parquet", row_group_size=2)
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity)
        assert all(s is not None for s in value_sets(stats).values())
        rows = container_rows(stats, ("c",))
        preds = []
        for v in ["a", "b", "é", "日本", "", "zz"]:
            for t in (pa.string(), pa.large_string()):
                s = pa.scalar(v, t)
                preds += [("eq", "c", s), ("ne", "c", s), ("in", "c", [s]), ("nin", "c", [s])]
        check(stats, rows, preds)
    assert kept(collect(tmp_path), "c != 'b'") == {str(tmp_path / f) for f in (
        "a.parquet#rg=0", "a.parquet#rg=1", "b.parquet#rg=1")}


# ------------------------------------------------------------------------------ hypothesis


@st.composite
def lakes(draw):
    kind = draw(st.sampled_from(["int64", "string"]))
    if kind == "int64":
        pool = draw(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 5),
                             min_size=1, max_size=6, unique=True))
        lit = st.sampled_from(pool) | st.integers(-6, 6)
    else:
        pool = draw(st.lists(st.text(st.sampled_from("ab\xe9\u65e5"), max_size=3),
                             min_size=1, max_size=6, unique=True))
        lit = st.sampled_from(pool) | st.text(st.sampled_from("ab\xe9"), max_size=3)
    files = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 20))
        values = draw(st.lists(st.none() | st.sampled_from(pool), min_size=n, max_size=n))
        files.append((values, draw(st.integers(1, 8))))
    atom = st.tuples(st.sampled_from(["eq", "ne"]), st.just("c"), lit) | st.tuples(
        st.sampled_from(["in", "nin"]), st.just("c"), st.lists(st.none() | lit, min_size=1,
                                                               max_size=4))
    preds = draw(st.lists(atom | st.tuples(st.sampled_from(["and", "or"]), atom, atom)
                          | st.tuples(st.just("not"), atom), min_size=1, max_size=8))
    return kind, files, preds


def _scalars(p, t):
    if p[0] in ("eq", "ne"):
        return (p[0], p[1], pa.scalar(p[2], t))
    if p[0] in ("in", "nin"):
        return (p[0], p[1], [None if v is None else pa.scalar(v, t) for v in p[2]])
    return (p[0],) + tuple(_scalars(q, t) for q in p[1:])


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lakes())
def test_random_lakes_sound(tmp_path_factory, case):
    kind, files, preds = case
    root = tmp_path_factory.mktemp("dict_lake")
    t = pa.int64() if kind == "int64" else pa.string()
    for k, (values, rg_size) in enumerate(files):
        pq.write_table(pa.table({"c": pa.array(values, t)}), root / f"p{k}.parquet",
                       row_group_size=rg_size)
    preds = [_scalars(p, t) for p in preds]
    for granularity in ("row_group", "file"):
        stats = collect(root, granularity)
        rows = {cid: [(r[0], None) for r in rs]
                for cid, rs in container_rows(stats, ("c",)).items()}
        if "value_set" in stats.table.schema.names:
            check(stats, rows, preds)
        else:
            check(stats, rows, preds, exact=False)


# ------------------------------------------------------------------------------ API


def test_api_errors(tmp_path):
    pq.write_table(pa.table({"c": ["a", "b"], "n": [1, 2]}), tmp_path / "a.parquet")
    with pytest.raises(StatsError):
        collect(tmp_path, dictionaries=5)
    with pytest.raises(StatsError, match="nope") as info:
        collect(tmp_path, dictionaries=["nope"])
    assert info.value.column == "nope"
    for bad in (0, -1, 1.5):
        with pytest.raises(StatsError, match="dictionary_bytes"):
            collect(tmp_path, dictionary_bytes=bad)
    stats = collect(tmp_path, dictionaries=["c"])
    typ = stats.table.schema.field("value_set").type
    assert [typ.field(i).name for i in range(typ.num_fields)] == ["c"]
    assert collect(tmp_path, dictionaries="n").table.schema.field("value_set").type.field(
        "n").type.value_type == pa.int64()


def test_item_outside_the_type_does_not_disable_the_set(tmp_path):
    pq.write_table(pa.table({"c": pa.array([1, 100], pa.int8())}), tmp_path / "a.parquet")
    stats = collect(tmp_path)
    assert kept(stats, "c IN (5, 6)") == set()  # the set decides without the far item
    assert kept(stats, "c IN (5, 1000)") == set()
    assert kept(stats, "c NOT IN (1, 100, 1000)") == set()
