"""The row-level oracle: DuckDB evaluates a predicate on the actual rows of every container.

``SET TimeZone='UTC'`` makes a timestamp literal without zone, compared with a zoned column,
read as UTC (prune_engine's rule). Many predicates over one table are answered in one query
(``count(*) FILTER (WHERE p)`` per predicate, grouped by container); when DuckDB rejects one of
them the batch falls back to one query per predicate, and the rejected ones answer ``None``;
DuckDB's messages for them are counted in :attr:`DuckOracle.errors`, so that a test that finds
too few answers can say why in DuckDB's own words.

>>> import pyarrow as pa
>>> t = pa.table({"__cid": ["a", "a", "b"], "x": [1, 5, None]})
>>> DuckOracle().matching(t, ["x > 3", "x IS NULL", "x >"])
[{'a'}, {'b'}, None]
"""

from __future__ import annotations

import collections
import contextlib
import re

import duckdb
import pyarrow as pa

from .data import CID

_HEX_LITERAL = re.compile(r"(?<![\w'])[xX]'([0-9A-Fa-f]*)'")

#: the installed DuckDB's major version: 1.x and 2.x read a few things differently
DUCKDB_MAJOR = int(duckdb.__version__.split(".")[0])


def load_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """``table`` as the temporary table ``name`` of ``con``: a copy, not a view of the Arrow
    data, because DuckDB 1.x pushes a filter into an Arrow scan, where NaN compares as in
    pyarrow (never equal, never greater) instead of as in SQL. DuckDB 1.x also reads a
    zoned nanosecond timestamp as microseconds: such a column is loaded zone-less, the
    same instants in the oracle's UTC session."""
    if DUCKDB_MAJOR < 2:
        table = table.cast(pa.schema([
            f.with_type(pa.timestamp("ns")) if pa.types.is_timestamp(f.type) and f.type.unit == "ns"
            and f.type.tz is not None else f for f in table.schema]))
    con.register("__arrow_input", table)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM __arrow_input")
    finally:
        con.unregister("__arrow_input")


def portable_sql(sql: str) -> str:
    """DuckDB SQL that means the same on DuckDB 1.x and 2.x: a hex literal ``X'ff'`` (a BLOB
    on 2.x, the text ``'xff'`` on 1.x) becomes ``from_hex('ff')``.

    >>> portable_sql("b < X'ff00' AND s = 'x'")
    "b < from_hex('ff00') AND s = 'x'"
    """
    return _HEX_LITERAL.sub(r"from_hex('\1')", sql)


def connect() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection as the oracles use it: a UTC session on one thread. Close it when
    done: DuckDB 1.x reserves about 19 GB of address space per open database, and a test
    process holding a few can no longer fork (Spark's gateway launch fails with ENOMEM)."""
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.execute("SET threads=1")
    return con


class DuckOracle:
    """DuckDB on the rows; each question opens a connection, loads the table, and closes it."""

    def __init__(self):
        #: the first line of each error DuckDB raised on a predicate, with how often
        self.errors: collections.Counter[str] = collections.Counter()
        self.con = None

    @contextlib.contextmanager
    def _session(self, table: pa.Table):
        self.table = table
        self.con = connect()
        load_table(self.con, "t", table)
        try:
            yield
        finally:
            self.con.close()
            self.con = None

    def matching(self, table: pa.Table, predicates: list[str]) -> list[set[str] | None]:
        """For each predicate (DuckDB SQL), the ids of the containers holding a matching row,
        or ``None`` when DuckDB rejects the predicate."""
        predicates = [portable_sql(p) for p in predicates]
        with self._session(table):
            try:
                return self._batch(predicates)
            except duckdb.Error:
                self._recover()
                return [self._one(p) for p in predicates]

    def _recover(self):
        """A fresh connection after an internal DuckDB error (a few casts at the very ends of
        the timestamp range fail inside DuckDB and invalidate the database)."""
        try:
            self.con.execute("SELECT 1").fetchall()
        except duckdb.Error:
            self.con.close()
            self.con = connect()
            load_table(self.con, "t", self.table)

    def _batch(self, predicates: list[str]) -> list[set[str]]:
        if not predicates:
            return []
        counts = ", ".join(f"count(*) FILTER (WHERE {p})" for p in predicates)
        rows = self.con.execute(f"SELECT {CID}, {counts} FROM t GROUP BY {CID}").fetchall()
        return [{row[0] for row in rows if row[i + 1] > 0} for i in range(len(predicates))]

    def _one(self, predicate: str) -> set[str] | None:
        try:
            return self._batch([predicate])[0]
        except duckdb.Error as e:
            self.errors[str(e).splitlines()[0]] += 1
            self._recover()
            return None

    def witnesses(self, table: pa.Table, predicate: str, cid: str, limit: int = 5) -> pa.Table:
        """Up to ``limit`` rows of container ``cid`` on which ``predicate`` is TRUE."""
        quoted = cid.replace("'", "''")
        with self._session(table):
            return self.con.sql(f"SELECT * FROM t WHERE {CID} = '{quoted}' AND ({portable_sql(predicate)}) "
                                f"LIMIT {limit}").to_arrow_table()


def write_parquet(folder, select: str, files: int, rows: int, row_group_size: int) -> None:
    """``files`` Parquet files written by DuckDB into ``folder`` (``duck-0.parquet``, ...):
    ``SELECT {select}`` over ``i`` counting up through all files, ``rows`` a file, in row
    groups of ``row_group_size``."""
    con = connect()
    try:
        for f in range(files):
            path = f"{folder}/duck-{f}.parquet"
            con.execute(f"COPY (SELECT {select} FROM (SELECT i + {f * rows} AS i FROM "
                        f"range({rows}) r(i)) ORDER BY i) TO '{path}' "
                        f"(FORMAT parquet, ROW_GROUP_SIZE {row_group_size})")
    finally:
        con.close()


def tagged_rows(stats) -> pa.Table:
    """The rows of every container of ``stats`` (read from its ``path`` and ``row_group``),
    each tagged with its container id in :data:`CID`: the table :class:`DuckOracle` asks."""
    import pyarrow.parquet as pq

    parts = []
    for cid, path, rg in zip(stats.column("container").to_pylist(),
                             stats.column("path").to_pylist(),
                             stats.column("row_group").to_pylist()):
        pf = pq.ParquetFile(path)
        part = pf.read() if rg is None else pf.read_row_group(rg)
        parts.append(part.append_column(CID, pa.array([cid] * part.num_rows, pa.string())))
    return pa.concat_tables(parts)
