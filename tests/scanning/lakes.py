"""Small random lakes for the LIMIT, top-k and aggregate tests, and DuckDB's answers on them.

Files of several row groups: integers at their limits, floats with NaN, -0.0 and infinities,
strings, zoned timestamps, NULLs, empty and all-NULL row groups.
"""

from __future__ import annotations

import math

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

NAN, INF = float("nan"), float("inf")
I64 = (-(2 ** 63), 2 ** 63 - 1)
TYPES = {"i": pa.int64(), "f": pa.float64(), "s": pa.string(),
         "t": pa.timestamp("us", tz="UTC")}
PREDICATES = ["i > 0", "i <= 3", "f > 0.5", "f < 0 OR f IS NULL", "s >= 'm'", "s LIKE 'a%'",
              "i IS NOT NULL AND f IS NOT NULL", "NOT (i BETWEEN -5 AND 5)", "f = f",
              "t >= TIMESTAMP '2024-01-01 00:00:00'", "i IN (1, 2, 3, 7)", None]


def value(rnd, column):
    if rnd.random() < 0.15:
        return None
    if column == "i":
        return rnd.choice([*I64, I64[0] + 1, I64[1] - 1, 0, rnd.randint(-10, 10)])
    if column == "f":
        return rnd.choice([NAN, -0.0, 0.0, INF, -INF, 1e308, rnd.uniform(-2, 2)])
    if column == "s":
        return rnd.choice(["", "a", "ab", "m", "zz", "é", "\U0001f600", rnd.choice("abmz") * 3])
    return rnd.choice([0, 1, -1, 1_704_067_200_000_000, 253_402_300_799_999_999,
                       -62_135_596_800_000_000])  # 9999-12-31 and 0001-01-01


def lake(rnd, tmp_path, clustered: bool) -> list[str]:
    paths = []
    for i in range(rnd.randint(1, 4)):
        n = rnd.randint(0, 25)
        data = {c: [value(rnd, c) for _ in range(n)] for c in TYPES}
        if clustered and n:  # sorted keys, as lakes clustered on a column are
            data["i"] = sorted((x for x in data["i"] if x is not None)) + \
                [None] * sum(x is None for x in data["i"])
        if rnd.random() < 0.2:
            data["f"] = [None] * n  # an all-NULL column
        path = str(tmp_path / f"part-{i}.parquet")
        pq.write_table(pa.table({c: pa.array(v, TYPES[c]) for c, v in data.items()}), path,
                       row_group_size=rnd.randint(1, 10))
        paths.append(path)
    return paths


def sort_key(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, float) and v == 0:
        return 0.0  # -0.0 = 0.0 in SQL: the same sort key
    return v


def duck(paths, where, order, k):
    """DuckDB's answer, over a copy of the rows: a filter pushed into its Parquet reader
    compares NaN as IEEE does (NaN > 0.5 is FALSE there, TRUE in SQL)."""
    return duck_table(pa.concat_tables([pq.read_table(p) for p in paths]), where, order, k)


def duck_table(table, where, order, k):
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.register("rows", table)
    con.execute("CREATE TEMP TABLE t AS SELECT * FROM rows")
    sql = "SELECT * FROM t" + (f" WHERE {where}" if where else "")
    if order:
        sql += f" ORDER BY {order}"
    return con.sql(sql + (f" LIMIT {k}" if k is not None else "")).to_arrow_table()
