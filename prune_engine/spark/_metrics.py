"""``files_scanned``: how many files Spark's file scans opened in a DataFrame's last run.

Read from the executed plan's SQL metrics: the ``numFiles`` metric of every file scan node
(``FileSourceScanExec``), adaptive plans and their query stages included. On a classic
session the plan is read in the JVM; over Spark Connect (Spark 4) from the metrics the server
sends with the result (``DataFrame.executionInfo``), so the DataFrame itself must have been
collected (``collect``, ``toPandas``, ``toArrow``). A reused exchange
is counted where it ran. Adaptive execution may replace a finished part of the plan (a join
whose other side turned out empty becomes an empty relation), and with it the metrics of the
scans under it: those count as zero.
"""

from __future__ import annotations

from prune_engine.errors import PruneEngineError
from prune_engine.spark._session import is_connect


def files_scanned(df) -> int:
    """Files opened by the file scans of ``df``'s last run (run an action first).

    Example::

        import prune_engine.spark as pes
        df = pes.read(spark, "lake/", "id = 42", stats=stats)
        rows = df.collect()
        pes.files_scanned(df)   # e.g. 3: the files kept
    """
    if is_connect(df):
        return _connect_scan_count(df)
    return sum(_scan_counts(df._jdf.queryExecution().executedPlan()))


def _connect_scan_count(df) -> int:
    info = getattr(df, "executionInfo", None)
    metrics = info.metrics if info is not None else None
    if metrics is None:
        raise PruneEngineError("files_scanned on Spark Connect reads the metrics of the "
                               "DataFrame's last run: collect this DataFrame first (Spark 4)")
    total = 0
    for node in metrics._metrics:
        if node.name.startswith("Scan "):
            total += sum(int(m.value) for m in node.metrics if m.name == "numFiles")
    return total


def _scan_counts(node) -> list[int]:
    name = node.getClass().getSimpleName()
    if name == "AdaptiveSparkPlanExec":
        return _scan_counts(node.executedPlan())
    if name.endswith("QueryStageExec"):
        return _scan_counts(node.plan())
    if name == "ReusedExchangeExec":
        return []
    out = [int(node.metrics().apply("numFiles").value())] if name == "FileSourceScanExec" else []
    children = node.children()
    for i in range(children.size()):
        out.extend(_scan_counts(children.apply(i)))
    return out
