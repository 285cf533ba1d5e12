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

import duckdb
import pyarrow as pa

from .data import CID


class DuckOracle:
    """One DuckDB connection, reused; :meth:`matching` registers the table it is given."""

    def __init__(self):
        #: the first line of each error DuckDB raised on a predicate, with how often
        self.errors: collections.Counter[str] = collections.Counter()
        self._connect()

    def _connect(self):
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone='UTC'")
        self.con.execute("SET threads=1")

    def matching(self, table: pa.Table, predicates: list[str]) -> list[set[str] | None]:
        """For each predicate (DuckDB SQL), the ids of the containers holding a matching row,
        or ``None`` when DuckDB rejects the predicate."""
        self.table = table
        self.con.register("t", table)
        try:
            try:
                return self._batch(predicates)
            except duckdb.Error:
                self._recover()
                return [self._one(p) for p in predicates]
        finally:
            self.con.unregister("t")

    def _recover(self):
        """A fresh connection after an internal DuckDB error (a few casts at the very ends of
        the timestamp range fail inside DuckDB and invalidate the database)."""
        try:
            self.con.execute("SELECT 1").fetchall()
        except duckdb.Error:
            self._connect()
            self.con.register("t", self.table)

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
        self.con.register("t", table)
        try:
            quoted = cid.replace("'", "''")
            return self.con.sql(f"SELECT * FROM t WHERE {CID} = '{quoted}' AND ({predicate}) LIMIT {limit}").to_arrow_table()
        finally:
            self.con.unregister("t")
