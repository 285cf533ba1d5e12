"""Oracles for footer statistics: the rows themselves (exact stats of each row group's data) and
DuckDB's ``parquet_metadata()`` (an independent footer reader)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import prune_engine as pe
from prune_engine.stats import layout
from tests.oracle.duck import DUCKDB_MAJOR


def plain(typ: pa.DataType) -> pa.DataType:
    """``typ`` with timestamps as int64 ticks (nanoseconds survive ``to_pylist``)."""
    if pa.types.is_timestamp(typ):
        return pa.int64()
    if pa.types.is_struct(typ):
        return pa.struct([pa.field(f.name, plain(f.type), metadata=f.metadata) for f in typ])
    return typ


def rows(stats, column):
    values = stats.column(column)
    return values.cast(plain(values.type)).to_pylist()


def get(row, path):
    for key in path:
        if row is None:
            return None
        row = row[key]
    return row


def leaf_info(stats):
    """[(leaf path, arrow type, is element)] in Parquet column order."""
    out = []

    def walk(typ, path, element):
        for f in typ:
            el = element or layout.is_element_field(f)
            if pa.types.is_struct(f.type):
                walk(f.type, path + (f.name,), el)
            else:
                out.append((path + (f.name,), f.type, el))

    walk(stats.schema.field(layout.MIN_VALUES).type, (), False)
    return out


def is_neg_zero(v):
    return isinstance(v, float) and v == 0 and math.copysign(1, v) < 0


def check_against_rows(path, stats):
    """Soundness: every bound is a true bound of the row group's data, counts exact or unknown."""
    pf = pq.ParquetFile(path)
    leaves = leaf_info(stats)
    mins, maxs = rows(stats, "min_values"), rows(stats, "max_values")
    nulls, counts = rows(stats, "null_count"), stats.column("num_records").to_pylist()
    groups = stats.column("row_group").to_pylist()
    for i, rg in enumerate(groups):
        exact = pe.stats_from_arrow(pf.read_row_group(rg))
        assert counts[i] == exact.column("num_records")[0].as_py()
        e_min, e_max = rows(exact, "min_values")[0], rows(exact, "max_values")[0]
        e_null = rows(exact, "null_count")[0]
        for leaf, _, element in leaves:
            where = f"{path} rg {rg} leaf {'.'.join(leaf)}"
            lo, hi, x_lo, x_hi = get(mins[i], leaf), get(maxs[i], leaf), get(e_min, leaf), \
                get(e_max, leaf)
            if x_lo is not None:
                assert lo is None or lo <= x_lo, f"{where}: min {lo!r} above the data's {x_lo!r}"
                assert hi is None or hi >= x_hi, f"{where}: max {hi!r} below the data's {x_hi!r}"
                if is_neg_zero(x_lo) and lo is not None:
                    assert is_neg_zero(lo), f"{where}: data has -0.0, min must be -0.0"
            nc, x_nc = get(nulls[i], leaf), get(e_null, leaf)
            if nc is not None and x_nc is not None:
                if element:
                    assert nc >= x_nc, f"{where}: element null count {nc} < {x_nc}"
                else:
                    assert nc == x_nc, f"{where}: null count {nc} != {x_nc}"


_TS = re.compile(r"^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[+-]\d\d(?::?\d\d)?)?$")
_UNIT = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def parse_duckdb(text: str | None, typ: pa.DataType):
    """A DuckDB ``stats_min_value`` string as the Python value our stats hold for ``typ``."""
    if text is None:
        return None
    if pa.types.is_boolean(typ):
        return text == "true"
    if pa.types.is_integer(typ):
        return int(text)
    if pa.types.is_floating(typ):
        return float(text)
    if pa.types.is_decimal(typ):
        if typ.precision > 38 and DUCKDB_MAJOR < 2:  # DuckDB 1.x reads those as doubles, wrongly
            return None
        return decimal.Decimal(text)
    if pa.types.is_date(typ):
        return dt.date.fromisoformat(text)
    if pa.types.is_timestamp(typ):
        if typ.unit == "ns" and typ.tz is not None and DUCKDB_MAJOR < 2:
            return None  # DuckDB 1.x reads zoned nanoseconds as microseconds
        m = _TS.match(text)
        y, mo, d, h, mi, s, frac = m.groups()
        seconds = (dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s))
                   - dt.datetime(1970, 1, 1)) // dt.timedelta(seconds=1)
        scale = _UNIT[typ.unit]
        sub = int(((frac or "") + "000000000")[:9]) * scale // 10**9
        return seconds * scale + sub
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        return re.sub(rb"\\x([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                      text.encode("utf-8"))
    return text


def check_against_duckdb(path, stats, exact=True):
    """Our row-group stats agree with DuckDB's reading of the footer, or are more conservative.

    ``exact``: also require that every bound DuckDB reads, we read too (and equal).
    """
    leaves = leaf_info(stats)
    mins, maxs = rows(stats, "min_values"), rows(stats, "max_values")
    nulls = rows(stats, "null_count")
    index = {rg: i for i, rg in enumerate(stats.column("row_group").to_pylist())}
    meta = duckdb.connect().sql(
        "SELECT row_group_id, column_id, stats_min_value, stats_max_value, stats_null_count, type "
        f"FROM parquet_metadata('{path}')").fetchall()
    assert len(meta) == len(index) * len(leaves), "one DuckDB row per row group and leaf"
    for rg, col, d_min, d_max, d_null, physical in meta:
        leaf, typ, element = leaves[col]
        i = index[rg]
        where = f"{path} rg {rg} leaf {'.'.join(leaf)} ({typ})"
        lo, hi = get(mins[i], leaf), get(maxs[i], leaf)
        x_lo, x_hi = parse_duckdb(d_min, typ), parse_duckdb(d_max, typ)
        if physical == "INT96":
            assert lo is None and hi is None, f"{where}: INT96 bounds are unknown"
        if lo is not None and x_lo is not None:
            assert lo <= x_lo, f"{where}: min {lo!r} vs DuckDB {x_lo!r}"
        if hi is not None and x_hi is not None:
            assert hi >= x_hi, f"{where}: max {hi!r} vs DuckDB {x_hi!r}"
        if exact and physical != "INT96":  # whatever DuckDB reads, we read (ours may know more)
            assert x_lo is None or lo == x_lo, f"{where}: min {lo!r} vs DuckDB {x_lo!r}"
            assert x_hi is None or hi == x_hi, f"{where}: max {hi!r} vs DuckDB {x_hi!r}"
        nc = get(nulls[i], leaf)
        if nc is not None and d_null is not None:
            assert nc == d_null, f"{where}: null count {nc} vs DuckDB {d_null}"
        if exact and d_null is not None:
            assert nc == d_null, f"{where}: null count unknown but DuckDB reads {d_null}"
