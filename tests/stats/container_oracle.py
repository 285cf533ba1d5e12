"""The row-level oracle of a statistics table made from Parquet files: DuckDB reads each
container's rows from the file itself (``read_parquet`` with ``file_row_number``, a reader of
its own: INT96 timestamps of any year, as Spark writes them) and counts the rows a predicate
matches; ``pe.prune``, ``pe.classify`` and ``pe.explain`` must agree with it (no container
that holds a matching row pruned, no container called "all" that holds another row)."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq

import prune_engine as pe


def _spans(stats, truth: dict | None = None) -> list[tuple[str, int, int]]:
    """Per container: its file (``truth`` maps a corrupted file to the good one it was made
    of, whose rows it holds), and its rows' first and last-plus-one row numbers."""
    paths = [(truth or {}).get(p, p) for p in stats.column("path").to_pylist()]
    groups = stats.column("row_group").to_pylist()
    out = []
    for path, rg in zip(paths, groups):
        meta = pq.read_metadata(path)
        if rg is None:
            out.append((path, 0, meta.num_rows))
        else:
            first = sum(meta.row_group(i).num_rows for i in range(rg))
            out.append((path, first, first + meta.row_group(rg).num_rows))
    return out


def _in_microseconds(con, source: str) -> str:
    """``source`` with its nanosecond timestamp columns as DuckDB's TIMESTAMP (microseconds),
    which holds every year: exact, as asserted (DuckDB refuses to compare a nanosecond column
    with a literal past 2262, which no nanosecond value equals)."""
    columns = [name for name, typ, *_ in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
               if typ.startswith("TIMESTAMP_NS")]
    for c in columns:
        inexact = con.execute(f"SELECT count(*) FROM {source} WHERE epoch_ns({c}) % 1000 != 0")
        assert inexact.fetchone()[0] == 0, f"{c}: nanoseconds the oracle cannot compare"
    casts = ", ".join(f"CAST({c} AS TIMESTAMP) AS {c}" for c in columns)
    return f"(SELECT * REPLACE ({casts}) FROM {source})" if columns else source


def matching(stats, where: str, truth: dict | None = None) -> list[tuple[int, int]]:
    """Per container: (rows matching ``where``, rows), as DuckDB reads the file (or the good
    file ``truth`` names for it)."""
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    out = []
    for path, lo, hi in _spans(stats, truth):
        source = f"read_parquet('{path}', file_row_number=true)"
        query = ("SELECT count(*) FILTER (WHERE {where}), count(*) FROM {source} "
                 f"WHERE file_row_number >= {lo} AND file_row_number < {hi}")
        try:
            out.append(con.execute(query.format(where=where, source=source)).fetchone())
        except duckdb.ConversionException:
            out.append(con.execute(query.format(
                where=where, source=_in_microseconds(con, source))).fetchone())
    return out


def check_sound(stats, predicates, *, expect_pruned: dict | None = None,
                truth: dict | None = None) -> None:
    """Every predicate: prune keeps each container holding a matching row, classify's "all"
    holds no other row, explain's ``keep`` is prune's mask. ``expect_pruned``: predicate ->
    the mask prune must give (so that a test also shows what prunes); ``truth``: the good
    file (path) of each corrupted one, whose rows the oracle reads."""
    for where in predicates:
        keep = pe.prune(stats, where).to_pylist()
        kinds = pe.classify(stats, where).to_pylist()
        explained = pe.explain(stats, where).column("keep").to_pylist()
        assert explained == keep, f"{where}: explain's keep is prune's mask"
        for i, ((hits, total), k, kind) in enumerate(zip(matching(stats, where, truth), keep,
                                                                 kinds)):
            assert k or hits == 0, f"{where}: container {i} pruned but {hits} rows match"
            assert kind != "all" or hits == total, (f"{where}: container {i} called 'all' but "
                                                    f"{total - hits} of {total} rows do not match")
        if expect_pruned and where in expect_pruned:
            assert keep == expect_pruned[where], f"{where}: {keep}"
