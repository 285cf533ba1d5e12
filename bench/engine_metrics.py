"""Files and row groups an engine opens for one query, read from the engine's own metrics after
the query ran, and the table ``bench/test_bench_bloom.py`` prints at its end.

Every function returns the same keys, for a benchmark's ``extra_info``: ``files_opened`` (files
whose footer the query reads: the engine must open them to decide), ``row_groups_read`` (row
groups whose data pages it reads) and engine-specific details. ``row_groups_total`` comes from
the footers (:func:`row_groups`), the same for every engine.

>>> pruning_count("1 total → 0 matched"), pruning_count("0 total → 0 matched")
(1, 0)
>>> pruning_count("1.20 K total → 3 matched")
Traceback (most recent call last):
ValueError: not an exact count: '1.20 K total → 3 matched'
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pyarrow.parquet as pq

#: rows of :func:`note`: one per benchmark that measured its files and row groups
ROWS: list[dict] = []


def row_groups(paths: list[str]) -> tuple[int, set[int]]:
    """The row groups of ``paths`` (from their footers) and the set of their row counts."""
    total, sizes = 0, set()
    for path in paths:
        meta = pq.read_metadata(path)
        total += meta.num_row_groups
        sizes.update(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    return total, sizes


_PRUNING = re.compile(r"(\S+) total → (\S+) matched")


def pruning_count(text: str, matched: bool = False) -> int:
    """The total (or matched) count of a DataFusion pruning metric as it prints (the Python
    API gives no value for them). Counts from 1,000 print rounded ("1.20 K"): refused."""
    m = _PRUNING.fullmatch(text.strip())
    if m is None or not (m[1].isdigit() and m[2].isdigit()):
        raise ValueError(f"not an exact count: {text!r}")
    return int(m[2] if matched else m[1])


def datafusion_scan(df) -> dict:
    """The parquet scans of ``df`` (a datafusion DataFrame, after ``collect``/``to_arrow_table``:
    ``df.execution_plan()`` then returns the executed plan, with its metrics).

    ``files_opened``: the distinct files among the scan's per-file metrics (the opener of each
    reads its footer, or finds it in the session's metadata cache); ``file_ranges_opened``:
    DataFusion's ``files_opened`` (a file split between two partitions counts twice);
    ``row_groups_read``: the row groups left after statistics (``row_groups_pruned_statistics``:
    matched), minus those the Bloom filters (``row_groups_pruned_bloom_filter``: total minus
    matched), the dynamic filters and a limit prune; ``rows_scanned``: the scan's output rows
    (every row of the row groups read: filter pushdown into the decoder is off by default)."""
    per_file: Counter = Counter()
    files, ranges, rows = set(), 0, 0
    for node in _df_nodes(df.execution_plan()):
        if not node.display().startswith("DataSourceExec"):
            continue
        metrics = node.metrics()
        for m in metrics.metrics():
            name, labels = m.name, m.labels()
            if "filename" in labels:
                files.add(labels["filename"])
            if name in ("row_groups_pruned_statistics", "row_groups_pruned_bloom_filter",
                        "limit_pruned_row_groups"):
                per_file[name] += pruning_count(repr(m))
                per_file[name + "_matched"] += pruning_count(repr(m), matched=True)
            elif name in ("row_groups_pruned_dynamic_filter", "bytes_scanned"):
                per_file[name] += int(m.value or 0)
        ranges += metrics.sum_by_name("files_opened") or 0
        rows += metrics.output_rows or 0
    scanned = per_file["row_groups_pruned_statistics"]
    bloom = per_file["row_groups_pruned_bloom_filter"] - per_file[
        "row_groups_pruned_bloom_filter_matched"]
    limit = per_file["limit_pruned_row_groups"] - per_file["limit_pruned_row_groups_matched"]
    return {"files_opened": len(files), "file_ranges_opened": ranges,
            "row_groups_read": per_file["row_groups_pruned_statistics_matched"] - bloom - limit
            - per_file["row_groups_pruned_dynamic_filter"],
            "row_groups_examined": scanned,
            "row_groups_pruned_statistics": scanned
            - per_file["row_groups_pruned_statistics_matched"],
            "row_groups_pruned_bloom_filter": bloom, "rows_scanned": rows,
            "bytes_scanned": per_file["bytes_scanned"]}


def _df_nodes(node):
    yield node
    for child in node.children():
        yield from _df_nodes(child)


def duckdb_scan(con, sql: str) -> dict:
    """``EXPLAIN (ANALYZE, FORMAT JSON)`` of ``sql`` (one more run): the parquet scans' ``Total
    Files Read`` and ``row_groups_scanned`` (of ``total_row_groups_to_scan``)."""
    plan = json.loads(con.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}").fetchall()[0][1])
    files = read = total = 0
    stack = list(plan["operator"])
    while stack:
        op = stack.pop()
        stack.extend(op.get("children", []))
        if op.get("name") == "READ_PARQUET":
            files += int(op["extra_info"]["Total Files Read"])
            read += int(op["row_groups_scanned"])
            total += int(op["total_row_groups_to_scan"])
    return {"files_opened": files, "row_groups_read": read, "row_groups_to_scan": total}


def pyarrow_scan(dataset, expr) -> dict:
    """What ``dataset.count_rows(filter=expr)`` reads: every fragment's footer, and the row
    groups its min/max statistics keep (``split_by_row_group``: the same statistics test)."""
    fragments = list(dataset.get_fragments(filter=expr))
    return {"files_opened": len(fragments),
            "row_groups_read": sum(len(f.split_by_row_group(expr)) for f in fragments)}


def spark_scan(df) -> dict:
    """The file scans (``FileSourceScanExec``) of ``df``'s last run: ``number of files read``
    (``numFiles``: each task opens its files' footers) and ``number of output rows``."""
    files = rows = 0
    for scan in _spark_scans(df._jdf.queryExecution().executedPlan()):
        metrics = scan.metrics()
        files += int(metrics.apply("numFiles").value())
        rows += int(metrics.apply("numOutputRows").value())
    return {"files_opened": files, "rows_scanned": rows}


def _spark_scans(node):
    name = node.getClass().getSimpleName()
    if name == "AdaptiveSparkPlanExec":
        yield from _spark_scans(node.executedPlan())
        return
    if name.endswith("QueryStageExec"):
        yield from _spark_scans(node.plan())
        return
    if name == "FileSourceScanExec":
        yield node
    children = node.children()
    for i in range(children.size()):
        yield from _spark_scans(children.apply(i))


def note(benchmark, lake: str) -> None:
    """Keep a benchmark's files and row groups (its ``extra_info``) and median time for
    :func:`table`."""
    info = benchmark.extra_info
    stats = getattr(benchmark, "stats", None)
    ROWS.append({"lake": lake, "query": info.get("scenario", "?"), "engine": info["engine"],
                 "files": info.get("files"), "files_opened": info.get("files_opened"),
                 "row_groups_read": info.get("row_groups_read"),
                 "row_groups_total": info.get("row_groups_total"),
                 "seconds": stats.stats.median if stats else None})


def table(rows: list[dict] | None = None) -> str:
    """The rows of :func:`note` as a Markdown table.

    >>> print(table([{"lake": "pyarrow", "query": "k = v", "engine": "datafusion", "files": 200,
    ...               "files_opened": 200, "row_groups_read": 3, "row_groups_total": 200,
    ...               "seconds": 0.0123}]).splitlines()[2])
    | pyarrow | k = v | datafusion | 200 | 200 | 3 / 200 | 12.3 ms |
    """
    rows = ROWS if rows is None else rows
    if not rows:
        return ""
    first = {}
    for r in rows:  # each lake's queries together, the engines in the order they ran
        first.setdefault((r["lake"], r["query"]), len(first))
    rows = sorted(rows, key=lambda r: first[r["lake"], r["query"]])
    lines = ["| lake | query | engine | files | files opened | row groups read / total | "
             "time (median) |", "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        read = ("—" if r["row_groups_read"] is None
                else f"{r['row_groups_read']:,} / {r['row_groups_total']:,}")
        opened = "—" if r["files_opened"] is None else f"{r['files_opened']:,}"
        lines.append(f"| {r['lake']} | {r['query']} | {r['engine']} | {r['files']:,} | "
                     f"{opened} | {read} | {_time(r['seconds'])} |")
    return "\n".join(lines)


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def print_table(config, title: str) -> None:
    """Print :func:`table` past pytest's output capture (at the end of a suite)."""
    text = table()
    if not text:
        return
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n\n{title}\n\n{text}\n", flush=True)
