"""Soundness of Bloom filter pruning: a container (file or row group) holding a row equal to
one of the probed values is never pruned; and the filters do prune (values absent from a
container, inside its min/max range, are pruned by the filter alone).

The oracle is the actual rows of each container, read back with pyarrow and compared by
value (``-0.0`` equals ``0.0``; NaN is taken to equal NaN, the stricter demand).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import prune_engine as pe
from prune_engine.expr import nodes
from prune_engine.expr.from_arrow import scalar_literal
from tests.bloom.writer import needs_bloom_writer
from tests.budget import examples
from tests.oracle.duck import DuckOracle, tagged_rows, write_parquet

D = decimal.Decimal
NAN = float("nan")
ROWS_PER_GROUP = 24
GROUPS_PER_FILE = 4
FILES = 3


# ------------------------------------------------------------------------------ the oracle


def keys(arr: pa.Array | pa.ChunkedArray) -> list:
    """Comparable Python values of ``arr`` (None for null): temporal values as their integers,
    floats with -0.0 as 0.0 and NaN as a marker."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        arr = arr.cast(pa.int64() if pa.types.is_timestamp(t) or pa.types.is_date64(t)
                       else pa.int32())
    out = []
    for v in arr.to_pylist():
        if isinstance(v, float):
            v = "NaN" if math.isnan(v) else v + 0.0
        out.append(v)
    return out


def scalar_key(s: pa.Scalar):
    return keys(pa.array([s], s.type))[0]


def _temporal(t):
    return pa.types.is_timestamp(t) or pa.types.is_date(t)


def rows_by_container(stats, column: str = "c") -> dict[str, set]:
    """The values of ``column`` in every container of ``stats``."""
    out = {}
    cache = {}
    for cid, path, rg in zip(stats.column("container").to_pylist(),
                             stats.column("path").to_pylist(),
                             stats.column("row_group").to_pylist()):
        pf = cache.get(path) or cache.setdefault(path, pq.ParquetFile(path))
        data = pf.read([column]) if rg is None else pf.read_row_group(rg, [column])
        out[cid] = set(keys(data.column(column)))
    return out


def kept(stats, expr) -> set[str]:
    mask = pe.prune(stats, expr)
    assert len(mask) == stats.num_rows and mask.null_count == 0
    return {c for c, k in zip(stats.column("container").to_pylist(), mask.to_pylist()) if k}


def check_oracle(stats, minmax, cases: list[tuple[str, str]], granularity: str) -> int:
    """Each ``(ours, DuckDB's)`` predicate: every container DuckDB finds a match in is kept;
    returns how many containers ``minmax`` keeps that ``stats`` prunes."""
    answers = DuckOracle().matching(tagged_rows(stats), [theirs for _, theirs in cases])
    pruned = 0
    for (ours, theirs), matching in zip(cases, answers):
        assert matching is not None, theirs
        keep = kept(stats, ours)
        assert matching <= keep, (ours, granularity, sorted(matching - keep))
        pruned += len(kept(minmax, ours) - keep)
    return pruned


def check(stats, rows: dict[str, set], exprs_and_values, minmax=None) -> tuple[int, int]:
    """Assert soundness of each ``(expr, keys)``; return (containers min/max alone keeps,
    containers kept with the filters) over the probes matching no row anywhere in them."""
    by_minmax = by_bloom = 0
    for expr, wanted in exprs_and_values:
        keep = kept(stats, expr)
        matching = {cid for cid, vals in rows.items() if vals & wanted}
        assert matching <= keep, (f"unsound: {expr} pruned {sorted(matching - keep)} "
                                  f"holding {wanted}")
        if minmax is not None:
            base = kept(minmax, expr)
            assert keep <= base | matching  # the filters never keep what min/max prunes
            absent = set(rows) - matching
            by_minmax += len(base & absent)
            by_bloom += len(keep & absent)
    return by_minmax, by_bloom


def collect(root, granularity, **kw):
    return pe.collect_stats(str(root), granularity=granularity, progress=False, **kw)


# ------------------------------------------------------------------------------ the types



def _ints(lo, hi, rng):
    vals = {lo, lo + 1, hi, hi - 1, 0 if lo <= 0 else lo + 2, 1, -1 if lo < 0 else 3}
    vals |= {rng.randint(lo, hi) for _ in range(40)}
    vals |= {rng.randint(max(lo, -100), min(hi, 100)) for _ in range(30)}
    return sorted(vals)


def _floats(rng, f32):
    fmax = float(np.finfo(np.float32).max) if f32 else float(np.finfo(np.float64).max)
    tiny = float(np.finfo(np.float32).smallest_subnormal) if f32 else 5e-324
    vals = [0.0, NAN, math.inf, -math.inf, fmax, -fmax, tiny, -tiny, 1.0, 1.5, -2.25, 0.5, 3.0]
    vals += [rng.uniform(-1e6, 1e6) for _ in range(40)]
    vals += [float(rng.randint(-50, 50)) / 4 for _ in range(30)]
    if f32:
        vals = [float(np.float32(v)) for v in vals]
    return vals


def _strings(rng):
    prefix = "common-prefix-" * 6
    vals = ["", "a", "é", "日本語", "\U0001F600", "z" * 100, prefix, prefix + "a", prefix + "b"]
    vals += [prefix + str(i) for i in range(10)]
    vals += ["".join(rng.choice("abcé日") for _ in range(rng.randint(1, 8))) for _ in range(50)]
    return sorted(set(vals))


def _bytes(rng, width=None):
    vals = set() if width else {b"", b"\x00", b"\x00\x00", b"\xff" * 3}
    if width:
        vals |= {b"\x00" * width, b"\xff" * width, b"\x00" * (width - 1) + b"\x01"}
    while len(vals) < 70:
        vals.add(bytes(rng.randrange(256) for _ in range(width or rng.randint(1, 40))))
    return sorted(vals)


def _decimals(precision, scale, rng):
    top = 10**precision - 1
    unscaled = {-top, -top + 1, top, top - 1, 0, 1, -1}
    unscaled |= {rng.randint(-top, top) for _ in range(40)}
    unscaled |= {rng.randint(-300, 300) for _ in range(30)}
    return sorted(D(u).scaleb(-scale, decimal.Context(prec=60)) for u in unscaled)


def _temporal_ints(lo, hi, step, rng):
    vals = {lo, hi, lo + step, hi - step, 0, step, -step}
    vals |= {rng.randint(lo // step, hi // step) * step for _ in range(40)}
    vals |= {rng.randint(-60, 60) * step for _ in range(20)}
    vals |= {rng.randint(lo, hi) for _ in range(10)}  # sub-unit parts for finer units
    return sorted(v for v in vals if lo <= v <= hi)


def universe(t: pa.DataType, seed: int) -> pa.Array:
    """Many distinct values of ``t``, limits included, sorted (NaN included for floats)."""
    rng = random.Random(seed)
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        return pa.array(_ints(int(info.min), int(info.max), rng), t)
    if pa.types.is_floating(t):
        return pa.array(_floats(rng, t == pa.float32()), t)
    if pa.types.is_string(t):
        return pa.array(_strings(rng), t)
    if pa.types.is_fixed_size_binary(t):
        return pa.array(_bytes(rng, t.byte_width), t)
    if pa.types.is_binary(t):
        return pa.array(_bytes(rng), t)
    if pa.types.is_decimal(t):
        return pa.array(_decimals(t.precision, t.scale, rng), t)
    if pa.types.is_date32(t):
        # the range of Python dates, so that every value can be a literal
        lo, hi = -719162, 2932896
        return pa.array(_temporal_ints(lo, hi, 1, rng), pa.int32()).cast(t)
    if pa.types.is_timestamp(t):
        per_day = {"ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}[t.unit]
        lo, hi = (-(2**63), 2**63 - 1) if t.unit == "ns" else (-719162 * per_day,
                                                                   2932896 * per_day)
        if t.unit == "ns":
            lo, hi = lo + 1, hi  # int64 min is the null sentinel of some readers
        return pa.array(_temporal_ints(lo, hi, per_day // 24, rng), pa.int64()).cast(t)
    raise AssertionError(t)


TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(),
    pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float32(), pa.float64(), pa.string(), pa.binary(), pa.binary(4),
    pa.decimal128(5, 2), pa.decimal128(15, 3), pa.decimal128(30, 4), pa.date32(),
    pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
    pa.timestamp("ms", "UTC"), pa.timestamp("us", "UTC"), pa.timestamp("ns", "UTC"),
    pa.timestamp("ms", "America/Los_Angeles"), pa.timestamp("us", "America/Los_Angeles"),
    pa.timestamp("ns", "America/Los_Angeles"),
]


def sql_literal(s: pa.Scalar) -> str | None:
    """The SQL literal of ``s`` that the SQL front end reads as the same value, or None."""
    t, v = s.type, s.as_py() if not _temporal(s.type) else None
    if pa.types.is_integer(t):
        return str(v)
    if pa.types.is_floating(t):
        if math.isnan(v):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(v):
            return f"CAST('{'-' if v < 0 else ''}inf' AS DOUBLE)"
        return repr(v) if t == pa.float64() else f"CAST({repr(v)} AS FLOAT)"
    if pa.types.is_string(t):
        return "'" + v.replace("'", "''") + "'" if "\0" not in v else None
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return f"X'{v.hex()}'"
    if pa.types.is_decimal(t):
        return str(v)
    if pa.types.is_date32(t):
        try:
            return f"DATE '{s.as_py().isoformat()}'"
        except (ValueError, OverflowError):
            return None
    if pa.types.is_timestamp(t):
        ns = pa.array([s.value], pa.int64()).cast(pa.int64()).to_pylist()[0] * \
            {"ms": 10**6, "us": 10**3, "ns": 1}[t.unit]
        sec, frac = divmod(ns, 10**9)
        try:
            wall = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec)
        except OverflowError:
            return None
        if wall.year < 1000:
            return None
        return f"TIMESTAMP '{wall.isoformat(sep=' ')}.{frac:09d}'"
    return None


def write_lake(root, t: pa.DataType, present: pa.Array, seed: int, **write_kw) -> None:
    """FILES files of GROUPS_PER_FILE row groups; each row group draws a few values of
    ``present`` (plus nulls); one row group is all null."""
    rng = random.Random(seed)
    n = len(present)
    for f in range(FILES):
        idx: list[int | None] = []
        for g in range(GROUPS_PER_FILE):
            if f == 1 and g == 2:
                idx += [None] * ROWS_PER_GROUP
                continue
            pool = rng.sample(range(n), min(n, 6))
            idx += [None if rng.random() < 0.1 else rng.choice(pool)
                    for _ in range(ROWS_PER_GROUP)]
        if f == 0:  # the limits (first and last values) live in file 0
            idx[0], idx[1] = 0, n - 1
        values = present.take(pa.array(idx, pa.int64()))
        if pa.types.is_floating(t) and f == 2:  # -0.0 (and no +0.0) in one row group
            py = values.to_pylist()
            py[:3] = [-0.0, -0.0, NAN]
            py = [1.0 if v == 0 and math.copysign(1, v) > 0 and i < ROWS_PER_GROUP else v
                  for i, v in enumerate(py)]
            values = pa.array(py, t)
        pq.write_table(pa.table({"c": values, "other": pa.array(range(len(idx)))}),
                       os.path.join(str(root), f"part-{f}.parquet"),
                       row_group_size=ROWS_PER_GROUP,
                       bloom_filter_options={"c": {"ndv": 16, "fpp": 0.01}}, **write_kw)


def split(u: pa.Array):
    """``(present, absent)``: every other value of the sorted universe, limits present."""
    n = len(u)
    present_idx = sorted({0, n - 1} | set(range(0, n, 2)))
    absent_idx = [i for i in range(n) if i not in present_idx]
    return u.take(pa.array(present_idx)), u.take(pa.array(absent_idx))


def probes(t: pa.DataType, present: pa.Array, absent: pa.Array, seed: int):
    """``(scalars, in_lists)`` to probe with: every value, neighbours, lists mixing them."""
    rng = random.Random(seed)
    scalars = [present[i] for i in range(len(present))] + [absent[i] for i in range(len(absent))]
    if pa.types.is_floating(t):
        extra = [-0.0, NAN, float(np.nextafter(1.5, 2.0)), float(np.nextafter(0.0, 1.0))]
        scalars += [pa.scalar(x, t) for x in extra]
    in_lists = [[rng.choice(scalars) for _ in range(rng.randint(2, 5))] for _ in range(12)]
    in_lists += [[absent[i] for i in rng.sample(range(len(absent)), 3)] for _ in range(4)]
    return scalars, in_lists


def _plain(s: pa.Scalar) -> bool:
    """The builder makes a plain literal of ``s`` (not a typed text for sub-microsecond
    nanoseconds, nor an opaque one for a value Python cannot hold)."""
    return isinstance(scalar_literal(s), nodes.Literal)


def _builder_cases(scalars, in_lists):
    out = [(pe.col("c") == s, {scalar_key(s)}) for s in scalars]
    # isin() with a non-plain literal crashes the compiler, with or without Bloom filters
    # (test_isin_with_nanosecond_scalar below): leave those out of the lists
    out += [(pe.col("c").isin(lst), {scalar_key(s) for s in lst}) for lst in in_lists
            if all(_plain(s) for s in lst)]
    return out


def _sql_cases(scalars, in_lists):
    out = []
    for s in scalars:
        lit = sql_literal(s)
        if lit is not None:
            out.append((f"c = {lit}", {scalar_key(s)}))
    for lst in in_lists:
        lits = [sql_literal(s) for s in lst]
        if all(x is not None for x in lits):
            out.append((f"c IN ({', '.join(lits)})", {scalar_key(s) for s in lst}))
    return out


def _write_kw(t):
    return {"store_decimal_as_integer": True} if pa.types.is_decimal(t) else {}


@needs_bloom_writer
@pytest.mark.parametrize("t", TYPES, ids=str)
def test_every_type_sound_and_pruning(tmp_path, t):
    seed = TYPES.index(t)
    u = universe(t, seed)
    present, absent = split(u)
    write_lake(tmp_path, t, present, seed, **_write_kw(t))
    if pa.types.is_decimal(t):  # the physical types the decimals are meant to test
        phys = pq.ParquetFile(tmp_path / "part-0.parquet").metadata.row_group(0).column(0)
        assert phys.physical_type == {5: "INT32", 15: "INT64", 30: "FIXED_LEN_BYTE_ARRAY"}[
            t.precision]
    scalars, in_lists = probes(t, present, absent, seed)
    absent_keys = set(keys(absent))
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity, bloom=True)
        assert stats.metadata["bloom"]["problems"] == []
        entries = stats.table.column("bloom_filter").combine_chunks().field("c")
        # the all-null row group may have a filter or none; every other container has one
        assert entries.null_count <= 1
        minmax = collect(tmp_path, granularity)
        rows = rows_by_container(stats)
        cases = _builder_cases(scalars, in_lists) + _sql_cases(scalars, in_lists)
        check(stats, rows, cases)
        # the filters prune: values absent everywhere, inside the containers' ranges
        only_absent = [(e, w) for e, w in cases if w <= absent_keys and "NaN" not in w]
        by_minmax, by_bloom = check(stats, rows, only_absent, minmax)
        assert by_minmax > 0
        assert by_bloom <= 0.2 * by_minmax, (granularity, by_minmax, by_bloom)


@needs_bloom_writer
def test_explain_names_the_bloom_filter(tmp_path):
    t = pa.int64()
    present, absent = split(universe(t, 3))
    write_lake(tmp_path, t, present, 3)
    stats = collect(tmp_path, "row_group", bloom=True)
    reasons = []
    for i in range(len(absent)):
        reasons += pe.explain(stats, pe.col("c") == absent[i]).column("reason").to_pylist()
    assert any(r and r.endswith("(Bloom filter of c)") for r in reasons)


def test_isin_with_nanosecond_scalar(tmp_path):
    """A builder IN item that is not a plain literal (a cast the rewrite keeps) keeps."""
    t = pa.timestamp("ns")
    pq.write_table(pa.table({"c": pa.array([0, 1001], t)}), tmp_path / "a.parquet")
    stats = collect(tmp_path, "row_group")
    assert pe.prune(stats, pe.col("c").isin([pa.scalar(1001, t)])).to_pylist() == [True]


# ------------------------------------------------------------------------------ bloom=[names]


@needs_bloom_writer
def test_bloom_names_select_columns(tmp_path):
    t = pa.int64()
    present, absent = split(universe(t, 4))
    write_lake(tmp_path, t, present, 4)
    stats = collect(tmp_path, "row_group", bloom=["c"])
    assert stats.table.schema.field("bloom_filter").type == pa.struct([("c", pa.binary())])
    rows = rows_by_container(stats)
    scalars, in_lists = probes(t, present, absent, 4)
    check(stats, rows, _builder_cases(scalars, in_lists))


# ------------------------------------------------------------------------------ DuckDB writer


DUCK_COLUMNS = {
    # value of row i in row group g = i // 2048: two values per row group, far apart, so
    # that min/max spans many absent values
    "k": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END AS BIGINT)",
    "s": "'v' || CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
         "AS VARCHAR)",
    "d": "DATE '2020-01-01' + CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 "
         "ELSE (i // 2048) * 3 + 60 END AS INTEGER)",
    "ts": "TIMESTAMP '2020-01-01' + to_hours(CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 "
          "ELSE (i // 2048) * 3 + 60 END AS BIGINT))",
    "f": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
         "AS DOUBLE) / 4",
    "dec": "CAST(CASE WHEN i % 2 = 0 THEN (i // 2048) * 3 ELSE (i // 2048) * 3 + 60 END "
           "AS DECIMAL(12, 2)) / 4",
}


def _duck_literal(column: str, v: int) -> str:
    return {"k": f"{v}", "s": f"'v{v}'", "d": f"DATE '2020-01-01' + INTERVAL ({v}) DAY",
            "ts": f"TIMESTAMP '2020-01-01' + INTERVAL ({v}) HOUR", "f": f"{v / 4!r}",
            "dec": f"CAST({v} AS DECIMAL(12, 2)) / 4"}[column]


def _pe_literal(column: str, v: int) -> str:
    day = dt.date(2020, 1, 1) + dt.timedelta(days=v)
    hour = dt.datetime(2020, 1, 1) + dt.timedelta(hours=v)
    return {"k": f"{v}", "s": f"'v{v}'", "d": f"DATE '{day.isoformat()}'",
            "ts": f"TIMESTAMP '{hour.isoformat(sep=' ')}'", "f": f"{v / 4!r}",
            "dec": str(D(v) / 4)}[column]


def test_duckdb_written_files(tmp_path):
    write_parquet(tmp_path, ", ".join(f"{expr} AS {name}" for name, expr in DUCK_COLUMNS.items()),
                  files=2, rows=8 * 2048, row_group_size=2048)
    assert pq.ParquetFile(tmp_path / "duck-0.parquet").metadata.num_row_groups > 1
    values = range(-2, 16 * 3 + 64)
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity, bloom=True)
        minmax = collect(tmp_path, granularity)
        assert stats.metadata["bloom"]["problems"] == []
        bloom = stats.table.column("bloom_filter").combine_chunks()
        for name in DUCK_COLUMNS:
            assert bloom.field(name).null_count < len(bloom), name
        cases = []
        for name in DUCK_COLUMNS:
            for v in values:
                cases += [(f"{name} = {_pe_literal(name, v)}", f"{name} = {_duck_literal(name, v)}"),
                          (f"{name} IN ({_pe_literal(name, v)}, {_pe_literal(name, v + 1)})",
                           f"{name} IN ({_duck_literal(name, v)}, {_duck_literal(name, v + 1)})")]
        assert check_oracle(stats, minmax, cases, granularity) > 0, granularity


# ------------------------------------------------------------------------------ drift


@needs_bloom_writer
def test_schema_drift_int32_and_int64(tmp_path):
    a = pa.array([1, 5, 9, None, -(2**31), 2**31 - 1] * 4, pa.int32())
    b = pa.array([2, 6, 2**40, -(2**40), None, 7] * 4, pa.int64())
    opts = {"c": {"ndv": 16, "fpp": 0.01}}
    pq.write_table(pa.table({"c": a}), tmp_path / "a.parquet", row_group_size=6,
                   bloom_filter_options=opts)
    pq.write_table(pa.table({"c": b}), tmp_path / "b.parquet", row_group_size=6,
                   bloom_filter_options=opts)
    lits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 2**40, -(2**40), 2**31 - 1, -(2**31), 2**31, -(2**31) - 1,
            2**40 + 1, 0, 2**63 - 1, -(2**63)]
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity, bloom=True)
        assert stats.table.schema.field("min_values").type.field("c").type == pa.int64()
        rows = rows_by_container(stats)
        cases = [(f"c = {v}", {v}) for v in lits]
        cases += [(f"c IN ({v}, {w})", {v, w}) for v, w in zip(lits, lits[3:])]
        cases += [(pe.col("c") == pa.scalar(v, pa.int64()), {v}) for v in lits]
        cases += [(pe.col("c") == pa.scalar(v, pa.int32()), {v}) for v in lits
                  if -(2**31) <= v < 2**31]
        minmax = collect(tmp_path, granularity)
        check(stats, rows, cases)
        by_minmax, by_bloom = check(stats, rows, [(f"c = {v}", {v}) for v in (3, 4, 8)], minmax)
        assert by_bloom < by_minmax


@needs_bloom_writer
def test_schema_drift_timestamp_units_and_decimal_scales(tmp_path):
    ms = pa.array([0, 1_000, 86_400_000, 1_500, None], pa.timestamp("ms", "UTC"))
    us = pa.array([0, 2_000_000, 1_500_000, 1_500_001, None], pa.timestamp("us", "UTC"))
    opts = {"c": {"ndv": 16, "fpp": 0.01}}
    pq.write_table(pa.table({"c": ms}), tmp_path / "a.parquet", bloom_filter_options=opts)
    pq.write_table(pa.table({"c": us}), tmp_path / "b.parquet", bloom_filter_options=opts)
    probe_us = [0, 1_000_000, 1_500_000, 1_500_001, 2_000_000, 86_400_000_000, 3, 7_000]
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity, bloom=True)
        typ = stats.table.schema.field("min_values").type.field("c").type
        rows = rows_by_container(stats)
        # rows keys are in each file's own unit: compare as microseconds
        rows = {cid: {v * 1000 if "a.parquet" in cid else v for v in vals if v is not None}
                for cid, vals in rows.items()}
        cases = [(pe.col("c") == pa.scalar(v, pa.timestamp("us", "UTC")), {v}) for v in probe_us]
        check(stats, rows, cases)
        assert typ.unit in ("us", "ns")


def _float_drift(tmp_path):
    f32 = float(np.float32(0.1))
    opts = {"c": {"ndv": 16, "fpp": 0.01}}
    pq.write_table(pa.table({"c": pa.array([1.5, -0.0, f32, 3.0], pa.float32())}),
                   tmp_path / "a.parquet", row_group_size=2, bloom_filter_options=opts)
    pq.write_table(pa.table({"c": pa.array([0.1, 2.0, 0.0, 3.0], pa.float64())}),
                   tmp_path / "b.parquet", row_group_size=2, bloom_filter_options=opts)
    return f32


@needs_bloom_writer
def test_schema_drift_float32_and_float64(tmp_path):
    f32 = _float_drift(tmp_path)
    lits = [1.5, 0.0, -0.0, f32, 0.1, 2.0, 3.0, 2.5, 1.25]
    for granularity in ("row_group", "file"):
        stats = collect(tmp_path, granularity, bloom=True)
        rows = rows_by_container(stats)
        cases = [(f"c = {v!r}", {v + 0.0}) for v in lits]
        cases += [(pe.col("c") == pa.scalar(v, pa.float64()), {v + 0.0}) for v in lits]
        cases += [(f"c IN ({v!r}, 2.5)", {v + 0.0, 2.5}) for v in lits]
        check(stats, rows, cases)


@needs_bloom_writer
def test_schema_drift_float_beyond_float32_range(tmp_path):
    _float_drift(tmp_path)
    stats = collect(tmp_path, "row_group", bloom=True)
    assert pe.prune(stats, "c = 1e300").to_pylist() == [False] * stats.num_rows


# ------------------------------------------------------------------------------ hypothesis


@st.composite
def lakes(draw):
    kind = draw(st.sampled_from(["int64", "string"]))
    if kind == "int64":
        pool = draw(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-20, 20),
                             min_size=1, max_size=20, unique=True))
    else:
        pool = draw(st.lists(st.text(st.sampled_from("ab\xe9\u65e5\0"), max_size=6),
                             min_size=1, max_size=20, unique=True))
    files = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 30))
        values = draw(st.lists(st.none() | st.sampled_from(pool), min_size=n, max_size=n))
        files.append((values, draw(st.integers(1, 10)), draw(st.sampled_from([4, 64, 1000]))))
    lit = st.sampled_from(pool) | (st.integers(-(2**63), 2**63 - 1) | st.integers(-25, 25)
                                   if kind == "int64" else
                                   st.text(st.sampled_from("ab\xe9\u65e5"), max_size=6))
    literals = draw(st.lists(lit, min_size=1, max_size=8))
    in_lists = draw(st.lists(st.lists(lit, min_size=1, max_size=4), max_size=3))
    return kind, files, literals, in_lists


@needs_bloom_writer
@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lakes())
def test_random_lakes_sound(tmp_path_factory, case):
    kind, files, literals, in_lists = case
    root = tmp_path_factory.mktemp("bloom_lake")
    t = pa.int64() if kind == "int64" else pa.string()
    for k, (values, rg_size, ndv) in enumerate(files):
        pq.write_table(pa.table({"c": pa.array(values, t)}), root / f"p{k}.parquet",
                       row_group_size=rg_size, bloom_filter_options={"c": {"ndv": ndv}})
    for granularity in ("row_group", "file"):
        stats = collect(root, granularity, bloom=True)
        rows = rows_by_container(stats)
        cases = [(pe.col("c") == pa.scalar(v, t), {v}) for v in literals]
        cases += [(pe.col("c").isin([pa.scalar(v, t) for v in lst]), set(lst)) for lst in in_lists]
        if kind == "int64":
            cases += [(f"c = {v}", {v}) for v in literals]
        else:
            cases += [(f"c = '{v}'", {v}) for v in literals if "\0" not in v]
        check(stats, rows, cases)
