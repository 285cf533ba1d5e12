"""Turn the pytest-benchmark JSON of the ``bench/`` suites into one Markdown report.

    python bench/report.py bench.json [more.json ...] [--stat median|min|mean]

Several JSON files are merged, a later file's entry replacing an earlier one's for the same
benchmark (so that a rerun of a few benchmarks can patch a full run). ``bench/run.py`` runs
every suite, adds the run's machine, date and wall time (``data["run"]``) and the plots
(``plots.py``), and writes the report to ``report.md``.

The report opens with the run and its machine and the headline table (each engine's time per
call as a multiple of the numpy floor, geometric mean over the predicates, per size); then,
per size and predicate, the time of ``pe.prune`` (and ``plan.evaluate``) and of each peer with
its ratio to the floor; each peer's answers against pe.prune's (more or less conservative);
the issue #2 and #10 targets; the warm ``pe.compile`` times; ``collect_stats`` against its
peers; the n-gram build and its index size against the false-positive rate; for
``bench/test_bench_scan.py``, the scan time and bytes read of each engine; for the Spark suite,
each scenario's time against plain Spark, files scanned, the driver time spent pruning, and
the issue #9 targets; for ``bench/test_bench_bloom.py``, the files the Bloom filters keep
against their bound and min/max alone, ``IN`` of 1,000 keys against 5 ms, collect with the
filters against 5,000 files/s and their bytes against the footers', and the lookup end to end
against pe.scan; for ``bench/test_bench_tables.py``, a Delta and an Iceberg table's statistics
against their footers (target 10x) and the files ``k IN`` 200 and 201 values keeps (PyIceberg's
plan_files gives up above 200); for ``bench/test_bench_topk.py``, the files and row groups
``ORDER BY ts DESC LIMIT 100`` and ``COUNT(*) WHERE ts >= ...`` read per engine (target: 2 files
on a clustered lake) and ``pe.classify`` against ``pe.prune`` (target 1.5×). The first-call
costs (fresh process: import, parse, compile, numba JIT with a cold and a warm cache) come
last, in a section of their own.

>>> results = [Result("1k", "eq_int", "floor", 2e-6, 10, 1000),
...            Result("1k", "eq_int", "prune", 4e-6, 10, 1000)]
>>> print(ratio_table(results).splitlines()[2])
| 1k | eq_int | 99.0% | 4.00 µs (2.0×) | — | 2.00 µs | — | — | — | — | — | — |
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from dataclasses import dataclass

from peers import MAX_CONTAINERS, PEERS

ENGINES = ["prune", "plan", *PEERS]
PEER_ENGINES = [e for e in PEERS if e != "floor"]
SIZE_ORDER = ["1k", "10k", "100k", "1M"]
#: issue #2 targets
FLOOR_RATIO_TARGET = 2.0
WARM_1K_TARGET_S = 100e-6
#: issue #10 targets: every string test within 2x of the floor at the largest size, and IN of
#: 3 values within 2x of = on the same column
STRING_FLOOR_TARGET = 2.0
IN3_VS_EQ_TARGET = 2.0
IN3_VS_EQ = {"in3_int": "eq_int", "in3_url": "eq_url"}
#: issue #9 target: prune_engine on Spark at least this much faster end to end than plain Spark
SPARK_SPEEDUP_TARGET = 3.0


@dataclass(frozen=True)
class Result:
    """One timed (size, predicate, engine): ``seconds`` is the chosen statistic per call;
    ``more_conservative`` / ``less_conservative`` count the containers the engine keeps where
    pe.prune prunes and the reverse (``peer_check.py``; None in runs before the check)."""

    size: str
    scenario: str
    engine: str
    seconds: float
    kept: int
    containers: int
    more_conservative: int | None = None
    less_conservative: int | None = None


def load_results(data: dict, stat: str = "median") -> tuple[list[Result], list[dict]]:
    """The keep-mask results and the other entries (first call, compile) of a benchmark JSON."""
    results, others = [], []
    for bench in data["benchmarks"]:
        info = bench.get("extra_info", {})
        if "containers" in info:
            results.append(Result(info["size"], info["scenario"], info["engine"],
                                  bench["stats"][stat], info["kept"], info["containers"],
                                  info.get("more_conservative"), info.get("less_conservative")))
        else:
            others.append({**info, "group": bench["group"], "seconds": bench["stats"][stat]})
    return results, others


def fmt_time(seconds: float) -> str:
    """Seconds in a readable unit.

    >>> fmt_time(3.2e-5), fmt_time(0.0123), fmt_time(2.5)
    ('32.0 µs', '12.3 ms', '2.50 s')
    """
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            value = seconds / scale
            break
    else:
        unit, value = "ns", seconds * 1e9
    return f"{value:#.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _by_cell(results: list[Result]) -> dict[tuple[str, str], dict[str, Result]]:
    cells: dict[tuple[str, str], dict[str, Result]] = defaultdict(dict)
    for r in results:
        cells[r.size, r.scenario][r.engine] = r
    order = {s: i for i, s in enumerate(SIZE_ORDER)}
    return dict(sorted(cells.items(), key=lambda kv: order.get(kv[0][0], len(order))))


def ratio_table(results: list[Result]) -> str:
    """Per size and predicate: the share pruned, and each engine's time (ratio to the floor)."""
    lines = ["| size | predicate | pruned | " + " | ".join(ENGINES) + " |",
             "|---|---|---:|" + "---:|" * len(ENGINES)]
    for (size, scenario), row in _by_cell(results).items():
        floor = row.get("floor")
        ref = row.get("prune") or floor
        pruned = f"{1 - ref.kept / ref.containers:.1%}" if ref else "—"
        cells = []
        for engine in ENGINES:
            r = row.get(engine)
            if r is None:
                cells.append("—")
            elif engine == "floor" or floor is None:
                cells.append(fmt_time(r.seconds))
            else:
                cells.append(f"{fmt_time(r.seconds)} ({r.seconds / floor.seconds:.1f}×)")
        lines.append(f"| {size} | {scenario} | {pruned} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def geomean_ratios(results: list[Result]) -> dict[str, dict[str, float]]:
    """size -> engine -> geometric mean over predicates of (engine time / floor time)."""
    ratios: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (size, _), row in _by_cell(results).items():
        if "floor" in row:
            for engine, r in row.items():
                ratios[size][engine].append(r.seconds / row["floor"].seconds)
    return {size: {e: geomean(v) for e, v in per.items()} for size, per in ratios.items()}


def geomean_table(results: list[Result]) -> str:
    lines = ["| size | " + " | ".join(ENGINES) + " |", "|---|" + "---:|" * len(ENGINES)]
    for size, per in geomean_ratios(results).items():
        lines.append(f"| {size} | " + " | ".join(
            f"{per[e]:.1f}×" if e in per else "—" for e in ENGINES) + " |")
    return "\n".join(lines)


def peer_check_table(results: list[Result]) -> str:
    """Per engine, its answers against pe.prune's over every (size, predicate) of the run: the
    cases it keeps exactly what pe.prune keeps, keeps more (more conservative: a precision gap
    of that engine, named with the predicates) or keeps less where the rewrite also prunes
    (pe.prune keeps more than the rewrite there). Pruning what the rewrite keeps fails the run
    before any timing (``peer_check.py``), so it never reaches a report."""
    cases: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.engine != "prune" and r.more_conservative is not None:
            cases[r.engine].append(r)
    if not cases:
        return ""
    lines = ["| engine | cases | same as pe.prune | more conservative than pe.prune | "
             "less conservative, where the rewrite prunes too |", "|---|---:|---:|---|---|"]
    for engine in [e for e in ENGINES if e in cases]:
        rs = cases[engine]
        more = [r for r in rs if r.more_conservative]
        less = [r for r in rs if r.less_conservative]
        same = sum(1 for r in rs if not r.more_conservative and not r.less_conservative)
        lines.append(f"| {engine} | {len(rs)} | {same} | "
                     f"{_conservative(more, 'more_conservative')} | "
                     f"{_conservative(less, 'less_conservative')} |")
    return "\n".join(lines)


def _conservative(rs: list[Result], field: str) -> str:
    """"N cases, M containers (predicates...)" or "—"."""
    if not rs:
        return "—"
    containers = sum(getattr(r, field) for r in rs)
    names = ", ".join(dict.fromkeys(r.scenario for r in rs))
    return f"{len(rs)} cases, {containers:,} containers ({names})"


def target_lines(results: list[Result]) -> list[str]:
    """The issue #2 speed targets, each with its value in this run and PASS / MISS."""
    out = []
    g = geomean_ratios(results)
    big = max(g, key=lambda s: SIZE_ORDER.index(s) if s in SIZE_ORDER else -1, default=None)
    if big and "prune" in g[big]:
        v = g[big]["prune"]
        out.append(f"- prune within {FLOOR_RATIO_TARGET:g}× of the floor at {big} (geomean): "
                   f"{v:.2f}× — {'PASS' if v <= FLOOR_RATIO_TARGET else 'MISS'}")
    losses = []
    for (size, scenario), row in _by_cell(results).items():
        if "prune" in row:
            faster = [e for e in PEER_ENGINES if e in row and row[e].seconds < row["prune"].seconds]
            losses += [f"{size} {scenario}: {e}" for e in faster]
    if any("prune" in row for row in _by_cell(results).values()):
        out.append("- prune faster than every peer at every size: "
                   + ("PASS" if not losses else f"MISS ({'; '.join(losses)})"))
    warm = [row["prune"].seconds for (size, _), row in _by_cell(results).items()
            if size == "1k" and "prune" in row]
    if warm:
        out.append(f"- warm prune at 1k under {fmt_time(WARM_1K_TARGET_S)}: slowest predicate "
                   f"{fmt_time(max(warm))} — {'PASS' if max(warm) < WARM_1K_TARGET_S else 'MISS'}")
    return out


def string_scenarios() -> set[str]:
    """The benchmarked predicates that test a string column."""
    import pyarrow as pa
    from peers import columns_of
    from synthetic import DATA_TYPES, scenarios

    strings = {c for c, t in DATA_TYPES.items() if pa.types.is_string(t)}
    return {sc.id for sc in scenarios(1000) if strings & set(columns_of(sc.pred))}


def string_target_lines(results: list[Result]) -> list[str]:
    """The issue #10 targets on the largest size of this run, each with PASS / MISS."""
    cells = _by_cell(results)
    sizes = [size for size, _ in cells]
    big = max(sizes, key=lambda s: SIZE_ORDER.index(s) if s in SIZE_ORDER else -1, default=None)
    out = []
    ratios = {sc: row["prune"].seconds / row["floor"].seconds for (size, sc), row in cells.items()
              if size == big and sc in string_scenarios() and "prune" in row and "floor" in row}
    if ratios:
        worst = max(ratios, key=ratios.get)
        out.append(f"- every string test within {STRING_FLOOR_TARGET:g}× of the floor at {big}: "
                   f"worst {worst} {ratios[worst]:.2f}× — "
                   f"{'PASS' if ratios[worst] <= STRING_FLOOR_TARGET else 'MISS'}")
    pairs = {f"{a}/{b}": cells[big, a]["prune"].seconds / cells[big, b]["prune"].seconds
             for a, b in IN3_VS_EQ.items()
             if "prune" in cells.get((big, a), {}) and "prune" in cells.get((big, b), {})}
    if pairs:
        ok = all(v <= IN3_VS_EQ_TARGET for v in pairs.values())
        out.append(f"- IN of 3 values within {IN3_VS_EQ_TARGET:g}× of = at {big}: "
                   + ", ".join(f"{k} {v:.2f}×" for k, v in pairs.items())
                   + f" — {'PASS' if ok else 'MISS'}")
    return out


def first_call_table(others: list[dict]) -> str:
    """The first pruning of a fresh process, step by step (``test_bench_prune.py``)."""
    rows = [o for o in others if o["group"] == "first_call"]
    if not rows:
        return ""
    steps = ["import_s", "parse_s", "compile_s", "evaluate_s", "first_s", "second_s"]
    lines = ["| predicate | numba cache | import | parse | compile | first evaluation | "
             "first prune (sum) | second prune |", "|---|---|" + "---:|" * len(steps)]
    for o in sorted(rows, key=lambda o: (o["scenario"], o["cache"])):
        cells = [fmt_time(o[k]) if k in o else "—" for k in steps]
        lines.append(f"| {o['scenario']} | {o['cache']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def compile_table(others: list[dict]) -> str:
    rows = [o for o in others if o["group"] == "compile"]
    if not rows:
        return ""
    return "\n".join(["| predicate | pe.compile |", "|---|---:|"] + [
        f"| {o['scenario']} | {fmt_time(o['seconds'])} |" for o in rows])


#: issue #10 targets of the n-gram build (strings per ms, every CPU) and of its first call
NGRAM_BUILD_TARGETS = {"high-entropy-ascii": 5000, "high-entropy-mixed": 2500}
NGRAM_FIRST_CALL_TARGET_S = 3.0


def ngram_table(others: list[dict]) -> str:
    """``bench/test_bench_ngram.py``: build throughput per kind of data (against the issue
    #10 targets)."""
    builds = [o for o in others if "strings_per_ms" in o and "kind" in o]
    if not builds:
        return ""
    lines = ["| n-gram build data | strings / ms | target |", "|---|---:|---:|"]
    for o in builds:
        target = NGRAM_BUILD_TARGETS.get(o["kind"])
        verdict = "—" if target is None else (
            f"{target:,} — {'PASS' if o['strings_per_ms'] >= target else 'MISS'}")
        lines.append(f"| {o['kind']} | {o['strings_per_ms']:,.0f} | {verdict} |")
    return "\n".join(lines)


def index_kind(o: dict) -> str:
    """The label of an index kind of the size / false-positive benchmark.

    >>> index_kind({"mode": "bloom", "fpp": 0.01}), index_kind({"mode": "exact", "fpp": None})
    ('bloom 1%', 'exact')
    """
    return o["mode"] if o["fpp"] is None else f"{o['mode']} {o['fpp'] * 100:g}%"


def ngram_size_table(others: list[dict]) -> str:
    """``test_index_size_vs_fpr``: per kind of index, its bytes per container (and as a share
    of the strings' own Parquet size), its measured false-positive rate and build time."""
    rows = [o for o in others if "bytes_per_container" in o]
    if not rows:
        return ""
    lines = ["| index | bytes / container | share of the strings' Parquet size | "
             "false positives per absent gram | build |", "|---|---:|---:|---:|---:|"]
    for o in sorted(rows, key=lambda o: o["bytes_per_container"]):
        lines.append(f"| {index_kind(o)} | {fmt_bytes(o['bytes_per_container'])} | "
                     f"{o['bytes_per_container'] / o['parquet_bytes_per_container']:.1%} | "
                     f"{o['fpr']:.2%} | {fmt_time(o['seconds'])} |")
    return "\n".join(lines)


def jit_first_call_table(others: list[dict]) -> str:
    """The numba-backed first calls (``first_call.measure``): seconds in a fresh process."""
    rows = [o for o in others if "seconds_in_process" in o]
    if not rows:
        return ""
    lines = ["| work in a fresh process | numba cache | seconds |", "|---|---|---:|"]
    for o in sorted(rows, key=lambda o: (o.get("what", "?"), o.get("cache", "?"))):
        verdict = ""
        if "n-gram" in o.get("what", "") and o.get("cache") == "cold":
            ok = o["seconds_in_process"] <= NGRAM_FIRST_CALL_TARGET_S
            verdict = f" (target {NGRAM_FIRST_CALL_TARGET_S:g} s — {'PASS' if ok else 'MISS'})"
        lines.append(f"| {o.get('what', '?')} | {o.get('cache', '?')} | "
                     f"{o['seconds_in_process']:.2f}{verdict} |")
    return "\n".join(lines)


def collect_table(others: list[dict]) -> str:
    """``bench/test_bench_collect.py``: per engine, the time to read every footer of the lake,
    files per second and the time as a multiple of ``collect_stats``'."""
    rows = [o for o in others if "files_per_s" in o and _group([o], "collect ")]
    if not rows:
        return ""
    base = next((o["seconds"] for o in rows if o["engine"] == "collect_stats"), None)
    lines = ["| lake | engine | time | files / s | vs collect_stats |", "|---|---|---:|---:|---:|"]
    for o in rows:
        ratio = f"{o['seconds'] / base:.1f}×" if base else "—"
        lines.append(f"| {o['group']} | {o['engine']} | {fmt_time(o['seconds'])} | "
                     f"{o['files_per_s']:,.0f} | {ratio} |")
    return "\n".join(lines)


def fmt_bytes(n: float) -> str:
    """Bytes in a readable unit.

    >>> fmt_bytes(7_903_839), fmt_bytes(2048)
    ('7.9 MB', '2.0 kB')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def scan_table(others: list[dict]) -> str:
    """``bench/test_bench_scan.py``: per group and engine, time (ratio to pe.scan) and bytes
    read (ratio to the selected leaves' column chunks)."""
    rows = [o for o in others if "bytes_read" in o]
    if not rows:
        return ""
    lines = ["| scan | engine | time | bytes read | bytes / leaf chunks |",
             "|---|---|---:|---:|---:|"]
    base = {o["group"]: o["seconds"] for o in rows if o["engine"] == "pe.scan"}
    for o in rows:
        ratio = f" ({o['seconds'] / base[o['group']]:.1f}×)" if o["group"] in base else ""
        lines.append(f"| {o['group']} | {o['engine']} | {fmt_time(o['seconds'])}{ratio} | "
                     f"{fmt_bytes(o['bytes_read'])} | {o['bytes_read'] / o['leaf_bytes']:.2f} |")
    return "\n".join(lines)


def spark_table(others: list[dict]) -> str:
    """bench/test_bench_spark.py: per scenario, each side's time, files scanned and the
    driver time prune_engine spent; the speed-up over plain Spark."""
    rows = [o for o in others if o["group"] in ("spark filter", "spark join", "spark collect")]
    if not rows:
        return ""
    lines = ["| scenario | engine | time | vs plain | files scanned | pruning (driver) |",
             "|---|---|---:|---:|---:|---:|"]
    for group in ("spark filter", "spark join", "spark collect"):
        cell = {o["engine"]: o for o in rows if o["group"] == group}
        base = cell.get("plain") or cell.get("pe.collect_stats")
        for engine, o in cell.items():
            ratio = f"{base['seconds'] / o['seconds']:.1f}×" if base and o is not base else "—"
            scanned = f"{o['files_scanned']:,}" if "files_scanned" in o else "—"
            if "kept" in o:
                scanned += f" (kept {o['kept']:,})"
            prune = fmt_time(o["prune_s"]) if "prune_s" in o else "—"
            if "keys_s" in o:
                prune += f" + keys {fmt_time(o['keys_s'])}"
            lines.append(f"| {group} | {engine} | {fmt_time(o['seconds'])} | {ratio} | "
                         f"{scanned} | {prune} |")
    return "\n".join(lines)


def spark_first_call_table(others: list[dict]) -> str:
    """A fresh Spark session's first ``prune_dataframe`` job, executors' numba cache cold and
    warm (``test_executor_first_call``)."""
    first = [o for o in others if o["group"] == "spark first call"]
    if not first:
        return ""
    lines = ["| executors' numba cache | Python workers' first job | first prune job | "
             "second prune job |", "|---|---:|---:|---:|"]
    for o in sorted(first, key=lambda o: o["engine"]):
        lines.append(f"| {o['engine']} | {fmt_time(o['python_job_s'])} | "
                     f"{fmt_time(o['first_job_s'])} | {fmt_time(o['second_job_s'])} |")
    return "\n".join(lines)


def spark_first_collect_table(others: list[dict]) -> str:
    """A fresh session's first ``pes.collect_stats`` job, executors' numba cache cold and warm
    (``test_executor_first_collect``)."""
    rows = [o for o in others if o["group"] == "spark first collect"]
    if not rows:
        return ""
    lines = ["| executors' numba cache | files | first statistics job | second job |",
             "|---|---:|---:|---:|"]
    for o in sorted(rows, key=lambda o: o["engine"]):
        lines.append(f"| {o['engine']} | {o['files']:,} | {fmt_time(o['first_job_s'])} | "
                     f"{fmt_time(o['second_job_s'])} |")
    return "\n".join(lines)


def spark_target_lines(others: list[dict]) -> list[str]:
    """Issue #9: >= 3x end to end on both queries, files scanned equal to the kept count."""
    out = []
    for group in ("spark filter", "spark join"):
        cell = {o["engine"]: o for o in others if o["group"] == group}
        if "plain" in cell and "prune_engine" in cell:
            ours, plain = cell["prune_engine"], cell["plain"]
            speedup = plain["seconds"] / ours["seconds"]
            ok = speedup >= SPARK_SPEEDUP_TARGET and ours["files_scanned"] == ours["kept"]
            out.append(f"- {group}: {speedup:.1f}× plain Spark (target {SPARK_SPEEDUP_TARGET:g}×), "
                       f"{ours['files_scanned']:,} files scanned, {ours['kept']:,} kept — "
                       f"{'PASS' if ok else 'MISS'}")
    return out


def object_store_table(others: list[dict]) -> str:
    """``bench/test_bench_object_store.py``: statistics of a lake on a local S3 API, files per
    second, against pyarrow reading the same footers."""
    rows = _group(others, "object store collect")
    if not rows:
        return ""
    lines = ["| engine | files | threads | time | files/s |", "|---|---:|---:|---:|---:|"]
    for o in rows:
        lines.append(f"| {o['engine']} | {o['files']:,} | {o['threads']} | "
                     f"{fmt_time(o['seconds'])} | {o['files'] / o['seconds']:,.0f} |")
    return "\n".join(lines)


#: bench/test_bench_spark_lake.py targets (issue #21): speed-ups over plain Spark on a lake
#: Spark wrote, the Connect ratios within 20% of the classic ones, the saved statistics' refresh
LAKE_TARGETS = {"lake filter ts": 4.0, "lake filter id": 5.0, "lake join": 5.0}
#: the lake bench's scenarios in its table: the targets', and the id filter through Spark (a
#: filesystem pyarrow cannot open)
LAKE_GROUPS = (*LAKE_TARGETS, "lake through Spark, filter id")
LAKE_CONNECT_TOLERANCE = 0.2
LAKE_SAVED_STATS_TARGET_S = 0.1


def lake_cells(others: list[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    """(group, session) -> {engine: row} of ``bench/test_bench_spark_lake.py``'s scenarios
    that ran both plain Spark and prune_engine."""
    out = {}
    for group in LAKE_GROUPS:
        for kind in ("classic", "connect"):
            cell = {o["engine"]: o for o in _group(others, group) if o.get("session") == kind}
            if "plain" in cell and "prune_engine" in cell:
                out[(group, kind)] = cell
    return out


#: the lake bench's floor engine: plain Spark handed the files prune_engine keeps
LAKE_FLOOR = "plain, kept files only"


def lake_table(others: list[dict]) -> str:
    """``bench/test_bench_spark_lake.py``: per scenario and session, both sides' times, the
    speed-up, the floor (plain Spark handed the kept files) with the best speed-up it allows,
    and the files scanned; the saved statistics' refresh."""
    cells = lake_cells(others)
    if not cells:
        return ""
    lines = ["| scenario | session | plain Spark | prune_engine | speed-up | floor (kept files "
             "only) | speed-up at the floor | files scanned (plain / ours) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (group, kind), cell in cells.items():
        plain, ours, floor = cell["plain"], cell["prune_engine"], cell.get(LAKE_FLOOR)
        at_floor = "— | —" if floor is None else \
            f"{fmt_time(floor['seconds'])} | {plain['seconds'] / floor['seconds']:.1f}×"
        lines.append(f"| {group} | {kind} | {fmt_time(plain['seconds'])} | "
                     f"{fmt_time(ours['seconds'])} | {plain['seconds'] / ours['seconds']:.1f}× | "
                     f"{at_floor} | "
                     f"{plain['files_scanned']:,} / {ours['files_scanned']:,} |")
    for o in _group(others, "lake saved stats"):
        lines.append(f"| saved statistics, nothing changed ({o['files']:,} files) | "
                     f"{o['session']} | — | {fmt_time(o['seconds'])} | — | — | — | — |")
    return "\n".join(lines)


def lake_target_lines(others: list[dict]) -> list[str]:
    cells = lake_cells(others)
    out = []
    for group, target in LAKE_TARGETS.items():
        if (group, "classic") not in cells:
            continue
        cell = cells[(group, "classic")]
        speedup = cell["plain"]["seconds"] / cell["prune_engine"]["seconds"]
        out.append(f"- {group}: {speedup:.1f}× plain Spark (target {target:g}×) — "
                   f"{'PASS' if speedup >= target else 'MISS'}")
        if (group, "connect") in cells:
            c_cell = cells[(group, "connect")]
            c_speedup = c_cell["plain"]["seconds"] / c_cell["prune_engine"]["seconds"]
            ok = c_speedup >= speedup * (1 - LAKE_CONNECT_TOLERANCE)
            out.append(f"- {group} over Connect: {c_speedup:.1f}× (within "
                       f"{LAKE_CONNECT_TOLERANCE:.0%} of classic's {speedup:.1f}×) — "
                       f"{'PASS' if ok else 'MISS'}")
    for o in _group(others, "lake saved stats"):
        ok = o["seconds"] <= LAKE_SAVED_STATS_TARGET_S
        out.append(f"- saved statistics of {o['files']:,} files, {o['session']}: "
                   f"{fmt_time(o['seconds'])} (target {fmt_time(LAKE_SAVED_STATS_TARGET_S)}) — "
                   f"{'PASS' if ok else 'MISS'}")
    return out


#: bench/test_bench_bloom.py targets: IN of 1,000 keys over 2,000 files' statistics, and the
#: collect speed with the Bloom filters
BLOOM_IN_1000_TARGET_S = 5e-3
BLOOM_COLLECT_TARGET_FILES_PER_S = 5_000
#: bench/test_bench_tables.py target: a table's statistics this much faster than its footers
TABLES_SPEEDUP_TARGET = 10.0


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _group(others: list[dict], prefix: str) -> list[dict]:
    return [o for o in others if (o["group"] or "").startswith(prefix)]


def bloom_kept_table(others: list[dict]) -> str:
    """``bench/test_bench_bloom.py``: files kept with the Bloom filters against their bound and
    against min/max alone, the false positives on absent keys, and the time of pe.prune.

    >>> print(bloom_kept_table([{"group": "bloom kept 200 files", "scenario": "k IN 100",
    ...     "files": 200, "kept": 128, "kept_minmax": 200, "expected": 163.4, "bound": 167.4,
    ...     "seconds": 2.3e-4}]).splitlines()[2])
    | k IN 100 | 200 | 128 | 167.4 (expected 163.4) — PASS | 200 | — | 230 µs |
    """
    rows = _group(others, "bloom kept")
    if not rows:
        return ""
    lines = ["| predicate | files | kept with Bloom | bound | kept by min/max alone | "
             "absent keys: kept (false-positive rate) | pe.prune |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for o in rows:
        if "kept_mean" in o:  # point lookups: mean over several present keys
            kept, value = f"{o['kept_mean']:.2f} mean, {o['kept_max']} max", o["kept_mean"]
            minmax = f"{o['kept_minmax_mean']:.1f}"
            absent = f"{o['absent_kept_mean']:.2f} ({o['fpp_measured']:.2%})"
            bound = f"{o['bound']:.1f}"
        else:
            kept, value, absent = f"{o['kept']:,}", o["kept"], "—"
            minmax = f"{o['kept_minmax']:,}"
            bound = f"{o['bound']:.1f} (expected {o['expected']:.1f})"
        lines.append(f"| {o['scenario']} | {o['files']:,} | {kept} | {bound} — "
                     f"{_verdict(value <= o['bound'])} | {minmax} | {absent} | "
                     f"{fmt_time(o['seconds'])} |")
    return "\n".join(lines)


def bloom_in_table(others: list[dict]) -> str:
    """``test_in_1000``: the time of ``IN`` (1,000 keys) over the file statistics, with the
    Bloom probes (``pe.prune``, ``compiled``) and min/max alone, against the 5 ms target."""
    rows = _group(others, "bloom IN 1000")
    if not rows:
        return ""
    lines = [f"| predicate | engine | files | kept | expected | time | target "
             f"{fmt_time(BLOOM_IN_1000_TARGET_S)} |", "|---|---|---:|---:|---:|---:|---|"]
    for o in rows:
        target = o.get("target_s", BLOOM_IN_1000_TARGET_S)
        lines.append(f"| {o['scenario']} | {o['engine']} | {o['files']:,} | {o['kept']:,} | "
                     f"{o['expected']:,.1f} | {fmt_time(o['seconds'])} | "
                     f"{_verdict(o['seconds'] <= target)} |")
    return "\n".join(lines)


def bloom_collect_table(others: list[dict]) -> str:
    """``test_collect``: collect_stats with and without the Bloom filters, files per second
    against the target, and the Bloom bytes read next to the footers' bytes."""
    rows = _group(others, "bloom collect")
    if not rows:
        return ""
    lines = [f"| engine | files | time | files / s | target {BLOOM_COLLECT_TARGET_FILES_PER_S:,} "
             "files / s | Bloom bytes read | footer bytes | Bloom / footer bytes |",
             "|---|---:|---:|---:|---|---:|---:|---:|"]
    for o in rows:
        per_s = o["files"] / o["seconds"]
        bloom = "bloom_bytes" in o
        lines.append(
            f"| {o['engine']} | {o['files']:,} | {fmt_time(o['seconds'])} | {per_s:,.0f} | "
            + (_verdict(per_s >= o.get("target_files_per_s", BLOOM_COLLECT_TARGET_FILES_PER_S))
               if bloom else "—")
            + f" | {fmt_bytes(o['bloom_bytes']) if bloom else '—'} | "
            f"{fmt_bytes(o['footer_bytes'])} | "
            + (f"{o['bloom_bytes'] / o['footer_bytes']:.1f}×" if bloom else "—") + " |")
    return "\n".join(lines)


def _opened(o: dict) -> str:
    """Files opened and row groups read of a lookup (``bench/engine_metrics.py``)."""
    files = f"{o['files_opened']:,}" if "files_opened" in o else "—"
    groups = (f"{o['row_groups_read']:,} / {o['row_groups_total']:,}"
              if "row_groups_read" in o else "—")
    return f"{files} | {groups}"


def bloom_lookup_table(others: list[dict]) -> str:
    """``test_lookup_*``: ``count(*) WHERE k = v`` and ``s = v`` end to end, each engine's time
    as a multiple of pe.scan's on the same query (the peers probe the Bloom filters while
    scanning, pe.scan beforehand), with the files each opened and the row groups it read."""
    rows = _group(others, "bloom lookup") + _group(others, "bloom string lookup")
    if not rows:
        return ""
    base = {o["group"]: o["seconds"] for o in rows if o["engine"] == "pe.scan"}
    lines = ["| query | engine | files | time | vs pe.scan | rows | files read / kept | "
             "files opened | row groups read / total |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for o in rows:
        ratio = f"{o['seconds'] / base[o['group']]:.2f}×" if o["group"] in base else (
            f"{o['vs_pe_scan']:.2f}×" if "vs_pe_scan" in o else "—")
        files = o.get("files_read", o.get("kept"))
        lines.append(f"| {o.get('scenario', 'k = v')} | {o['engine']} | {o['files']:,} | "
                     f"{fmt_time(o['seconds'])} | {ratio} | {o.get('rows', '—')} | "
                     f"{'—' if files is None else f'{files:,}'} | {_opened(o)} |")
    return "\n".join(lines)


def bloom_spark_table(others: list[dict]) -> str:
    """The Spark-written lake: ``pes.collect_stats`` with the Bloom filters, and ``k = v`` end
    to end, plain Spark against ``pes.read``."""
    rows = _group(others, "bloom spark")
    if not rows:
        return ""
    lines = ["| scenario | engine | time | vs plain | files scanned | files opened | "
             "row groups read / total | notes |", "|---|---|---:|---:|---:|---:|---:|---|"]
    plain = {o["group"]: o["seconds"] for o in rows if o["engine"] == "plain"}
    for o in rows:
        ratio = (f"{plain[o['group']] / o['seconds']:.1f}×"
                 if o["group"] in plain and o["engine"] != "plain" else "—")
        scanned = f"{o['files_scanned']:,}" if "files_scanned" in o else "—"
        if "kept" in o:
            scanned += f" (kept {o['kept']:,})"
        if "bloom_bytes" in o:
            notes = (f"{o['files'] / o['seconds']:,.0f} files / s; "
                     f"Bloom {fmt_bytes(o['bloom_bytes'])} "
                     f"(local {fmt_bytes(o['local_bloom_bytes'])}), "
                     f"footers {fmt_bytes(o['footer_bytes'])}; k = v keeps {o['kept_k']:,} "
                     f"(local {o['local_kept_k']:,}), s = v {o['kept_s']:,}")
        else:
            notes = f"pruning {fmt_time(o['prune_s'])}" if "prune_s" in o else "—"
        lines.append(f"| {o['group']} | {o['engine']} | {fmt_time(o['seconds'])} | {ratio} | "
                     f"{scanned} | {_opened(o)} | {notes} |")
    return "\n".join(lines)


def bloom_target_lines(others: list[dict]) -> list[str]:
    """The Bloom targets: IN of 1,000 keys under 5 ms (set at 2,000 files), collect with the
    filters at 5,000 files / s or more, and point lookups within their bound."""
    out = []
    ins = [o for o in _group(others, "bloom IN 1000") if o["engine"] == "pe.prune"]
    if ins:
        ok = all(o["seconds"] <= BLOOM_IN_1000_TARGET_S for o in ins)
        out.append(f"- IN of 1,000 keys at {ins[0]['files']:,} files under "
                   f"{fmt_time(BLOOM_IN_1000_TARGET_S)} (target set at 2,000 files): "
                   + ", ".join(f"{o['scenario']} {fmt_time(o['seconds'])}" for o in ins)
                   + f" — {_verdict(ok)}")
    collect = [o for o in _group(others, "bloom collect") if "bloom_bytes" in o]
    for o in collect:
        per_s = o["files"] / o["seconds"]
        out.append(f"- collect_stats with the Bloom filters at {BLOOM_COLLECT_TARGET_FILES_PER_S:,}"
                   f" files / s or more: {per_s:,.0f} over {o['files']:,} files — "
                   f"{_verdict(per_s >= BLOOM_COLLECT_TARGET_FILES_PER_S)}")
    points = [o for o in _group(others, "bloom kept") if "kept_mean" in o]
    if points:
        ok = all(o["kept_mean"] <= o["bound"] for o in points)
        out.append("- point lookups keep at most 1 + 2 × FPP × files on average: "
                   + ", ".join(f"{o['scenario']} {o['kept_mean']:.2f} of {o['bound']:.1f}"
                               for o in points) + f" — {_verdict(ok)}")
    return out


def tables_stats_table(others: list[dict]) -> str:
    """``bench/test_bench_tables.py``: a Delta and an Iceberg table's statistics from their log
    or manifests against ``collect_stats`` of their data files (the footers), files per
    second and the speed-up over the footers (target 10×).

    >>> print(tables_stats_table([
    ...     {"group": "tables stats 200 files", "engine": "collect_stats", "format": "delta",
    ...      "files": 200, "seconds": 8e-3},
    ...     {"group": "tables stats 200 files", "engine": "stats_from_delta", "format": "delta",
    ...      "files": 200, "seconds": 4e-3}]).splitlines()[3])
    | delta | stats_from_delta | 200 | 4.00 ms | 50,000 | 2.0× — MISS |
    """
    rows = _group(others, "tables stats")
    if not rows:
        return ""
    footers = {o["format"]: o["seconds"] for o in rows if o["engine"] == "collect_stats"}
    lines = ["| format | engine | files | time | files / s | speed-up over the footers "
             f"(target {TABLES_SPEEDUP_TARGET:g}×) |", "|---|---|---:|---:|---:|---|"]
    for o in sorted(rows, key=lambda o: (o["format"], o["engine"] != "collect_stats")):
        if o["engine"] == "collect_stats" or o["format"] not in footers:
            speedup = "—"
        else:
            v = footers[o["format"]] / o["seconds"]
            speedup = f"{v:.1f}× — {_verdict(v >= TABLES_SPEEDUP_TARGET)}"
        lines.append(f"| {o['format']} | {o['engine']} | {o['files']:,} | "
                     f"{fmt_time(o['seconds'])} | {o['files'] / o['seconds']:,.0f} | {speedup} |")
    return "\n".join(lines)


def tables_in_table(others: list[dict]) -> str:
    """``k IN`` (200 and 201 values from a few files): per engine, the files kept (and the
    time of the call), against the files holding a value."""
    rows = _group(others, "tables IN")
    if not rows:
        return ""
    engines = list(dict.fromkeys(o["engine"] for o in rows))
    lines = ["| IN values | files | files holding a value | " + " | ".join(engines) + " |",
             "|---:|---:|---:|" + "---:|" * len(engines)]
    for group in dict.fromkeys(o["group"] for o in rows):
        cell = {o["engine"]: o for o in rows if o["group"] == group}
        first = next(iter(cell.values()))
        kept = [f"{cell[e]['kept']:,} ({fmt_time(cell[e]['seconds'])})" if e in cell else "—"
                for e in engines]
        lines.append(f"| {first['values']} | {first['files']:,} | {first['held']:,} | "
                     + " | ".join(kept) + " |")
    return "\n".join(lines)


def tables_target_lines(others: list[dict]) -> list[str]:
    """Each table format's statistics 10× faster than its footers; pe.prune keeps exactly the
    files holding a value where PyIceberg's plan_files gives up (IN above 200 values)."""
    out = []
    rows = _group(others, "tables stats")
    footers = {o["format"]: o for o in rows if o["engine"] == "collect_stats"}
    for o in rows:
        if o["engine"] != "collect_stats" and o["format"] in footers:
            base = footers[o["format"]]["seconds"]
            v = base / o["seconds"]
            out.append(f"- {o['engine']} at least {TABLES_SPEEDUP_TARGET:g}× faster than the "
                       f"footers of its {o['files']:,} files (target set at 2,000 files): "
                       f"{v:.1f}× "
                       f"({fmt_time(o['seconds'])} against {fmt_time(base)})"
                       f" — {_verdict(v >= TABLES_SPEEDUP_TARGET)}")
    for group in dict.fromkeys(o["group"] for o in _group(others, "tables IN")):
        cell = {o["engine"]: o for o in others if o["group"] == group}
        ours = [o for e, o in cell.items() if e.startswith("pe.prune")]
        peer = cell.get("pyiceberg plan_files")
        if not ours:
            continue
        first = ours[0]
        exact = all(o["kept"] == o["held"] for o in ours)
        text = (f"- IN of {first['values']} values over {first['files']:,} files: pe.prune keeps "
                + ", ".join(f"{o['kept']:,}" for o in ours) + f" ({first['held']:,} hold a value)")
        if peer:
            text += f", PyIceberg plan_files {peer['kept']:,}"
            if peer.get("gives_up"):
                text += " (gives up)"
        out.append(text + f" — {_verdict(exact)}")
    return out


#: bench/test_bench_pages.py targets (issue #35): a point lookup's bytes read and time as
#: fractions of pyarrow.dataset's for the same filter
PAGES_BYTES_TARGET = 1 / 40
PAGES_TIME_TARGET = 1 / 10


def pages_target_lines(others: list[dict]) -> list[str]:
    """``bench/test_bench_pages.py``: the point lookup's bytes and time against
    pyarrow.dataset's; the rows and pages of the OR across two columns against its row
    groups'."""
    out = []
    for o in _group(others, "pages point lookup"):
        if o["engine"].startswith("pe.scan") and "bytes_vs_dataset" in o:
            b, t = o["bytes_vs_dataset"], o["time_vs_dataset"]
            out.append(f"- point lookup, {o['file_rows']:,} rows, {o['pages_per_chunk']} pages a "
                       f"chunk, {o.get('layout', '')}: {o['engine']} reads "
                       f"{fmt_bytes(o['bytes_read'])}, {b:.3f} of "
                       f"pyarrow.dataset's bytes (target ≤ {PAGES_BYTES_TARGET:.3f}) — "
                       f"{_verdict(b <= PAGES_BYTES_TARGET)}; time {t:.2f}× (target ≤ "
                       f"{PAGES_TIME_TARGET:.2f}) — {_verdict(t <= PAGES_TIME_TARGET)}")
    for o in _group(others, "pages OR two columns"):
        out.append(f"- {o['where']}: pe.prune_rows selects {o['rows_selected']:,} of the "
                   f"{o['row_group_rows']:,} rows of the row groups that may match "
                   f"({o['pages_selected']} of {o['row_group_pages']} pages of key) in "
                   f"{fmt_time(o['seconds'])} — {_verdict(o['pages_selected'] < o['row_group_pages'])}")
    return out


#: bench/test_bench_topk.py targets (issue #23): files a top-k and a count read on the
#: clustered lake, and classify's time as a multiple of prune's
TOPK_FILES_TARGET = 2
TOPK_CLASSIFY_RATIO_TARGET = 1.5


def _topk_rows(others: list[dict]) -> list[dict]:
    """The order and count rows of ``bench/test_bench_topk.py``: ORDER BY before COUNT, the
    clustered lake before the unclustered one, the engines in the order they ran."""
    rows = _group(others, "topk order") + _group(others, "topk count")
    return sorted(rows, key=lambda o: (o["group"].startswith("topk count"),
                                       o.get("lake") != "clustered"))


def _count(o: dict, key: str) -> str:
    return "—" if o.get(key) is None else f"{o[key]:,}"


def topk_table(others: list[dict]) -> str:
    """``bench/test_bench_topk.py``: ``ORDER BY ts DESC LIMIT 100`` and ``COUNT(*) WHERE ts >=
    ...`` per lake and engine: time (and as a multiple of prune_engine's with row-group
    statistics), files whose footer it opened, files whose data it read (against the target
    of 2 on the clustered lake), row groups and rows read, and the rows returned (the count).

    >>> print(topk_table([{"group": "topk order clustered 200 files", "lake": "clustered",
    ...     "scenario": "ORDER BY ts DESC LIMIT 100",
    ...     "engine": "pe.scan (row-group stats)", "files": 200, "files_opened": 200,
    ...     "files_read": 1, "row_groups_read": 1, "row_groups_total": 800, "rows": 100,
    ...     "target_files": 2, "meets_target": True, "seconds": 0.02}]).splitlines()[2])
    | ORDER BY ts DESC LIMIT 100 | clustered | pe.scan (row-group stats) | 20.0 ms | 1.00× | 200 | 1 (≤ 2: PASS) | 1 / 800 | — | 100 |
    """
    rows = _topk_rows(others)
    if not rows:
        return ""
    base = {o["group"]: o["seconds"] for o in rows
            if o["engine"].endswith("(row-group stats)")}
    lines = ["| query | lake | engine | time | vs prune_engine | files opened | files read | "
             "row groups read / total | rows scanned | rows |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for o in rows:
        ratio = f"{o['seconds'] / base[o['group']]:.2f}×" if o["group"] in base else "—"
        read = _count(o, "files_read")
        if "target_files" in o:
            read += f" (≤ {o['target_files']}: {_verdict(o['meets_target'])})"
        groups = ("—" if o.get("row_groups_read") is None
                  else f"{o['row_groups_read']:,} / {o['row_groups_total']:,}")
        lines.append(f"| {o.get('scenario', '?')} | {o.get('lake', '?')} | {o['engine']} | "
                     f"{fmt_time(o['seconds'])} | {ratio} | {_count(o, 'files_opened')} | "
                     f"{read} | {groups} | {_count(o, 'rows_scanned')} | {_count(o, 'rows')} |")
    return "\n".join(lines)


def _classify_pairs(others: list[dict]) -> list[tuple[dict, dict]]:
    """(pe.prune, pe.classify) rows of each predicate of ``topk classify``."""
    rows = _group(others, "topk classify")
    cells: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for o in rows:
        cells[o["group"], o["scenario"]][o["engine"]] = o
    return [(c["pe.prune"], c["pe.classify"]) for c in cells.values()
            if "pe.prune" in c and "pe.classify" in c]


def topk_classify_table(others: list[dict]) -> str:
    """``pe.classify`` against ``pe.prune`` over one statistics table: the containers of each
    answer, both times, classify's as a multiple of prune's (the medians' ratio, and the
    median ratio of back-to-back pairs) against the 1.5× target.

    >>> print(topk_classify_table([
    ...     {"group": "topk classify 1000000 containers", "scenario": "ts range",
    ...      "engine": "pe.prune", "stats_containers": 1000000, "seconds": 4e-4},
    ...     {"group": "topk classify 1000000 containers", "scenario": "ts range",
    ...      "engine": "pe.classify", "stats_containers": 1000000, "n_none": 899999,
    ...      "n_some": 2, "n_all": 99999, "classify_over_prune_paired": 1.9,
    ...      "seconds": 8e-4}]).splitlines()[2])
    | ts range | 1,000,000 | 899,999 / 2 / 99,999 | 400 µs | 800 µs | 2.00× | 1.90× | MISS |
    """
    pairs = _classify_pairs(others)
    if not pairs:
        return ""
    lines = ["| predicate | containers | none / some / all | pe.prune | pe.classify | "
             "classify / prune | paired | target "
             f"{TOPK_CLASSIFY_RATIO_TARGET:g}× |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for prune, cls in pairs:
        ratio = cls["seconds"] / prune["seconds"]
        paired = cls.get("classify_over_prune_paired")
        lines.append(f"| {cls['scenario']} | {cls['stats_containers']:,} | "
                     f"{cls['n_none']:,} / {cls['n_some']:,} / {cls['n_all']:,} | "
                     f"{fmt_time(prune['seconds'])} | {fmt_time(cls['seconds'])} | "
                     f"{ratio:.2f}× | {'—' if paired is None else f'{paired:.2f}×'} | "
                     f"{_verdict(ratio <= TOPK_CLASSIFY_RATIO_TARGET)} |")
    return "\n".join(lines)


def topk_target_lines(others: list[dict]) -> list[str]:
    """Issue #23: on the clustered lake, top-k reads at most 2 files (plain Spark, DuckDB and
    pyarrow.dataset alongside) and the count only the boundary files; classify within 1.5×
    of prune."""
    out = []
    rows = [o for o in _topk_rows(others) if o.get("lake") == "clustered"]
    for kind, what in (("order", f"ORDER BY ts DESC LIMIT 100 reads at most "
                                 f"{TOPK_FILES_TARGET} files"),
                       ("count", "COUNT(*) WHERE ts >= … reads only the 1–2 boundary files")):
        cell = [o for o in rows if o["group"].startswith(f"topk {kind} ")]
        ours = [o for o in cell if "target_files" in o]
        if not ours:
            continue
        others_read = [o for o in cell if "target_files" not in o]
        text = (f"- {what}, on the clustered lake of {ours[0]['files']:,} files: "
                + ", ".join(f"{o['engine']} {o['files_read']:,}" for o in ours))
        if others_read:
            text += "; row groups the others read: " + ", ".join(
                f"{o['engine']} {_count(o, 'row_groups_read')} of {o['row_groups_total']:,}"
                + (f" (footers of {o['files_opened']:,} files)"
                   if o.get("files_opened") is not None else "")
                for o in others_read)
        out.append(text + f" — {_verdict(all(o['meets_target'] for o in ours))}")
    pairs = _classify_pairs(others)
    if pairs:
        ratios = [(cls["scenario"], cls["seconds"] / prune["seconds"],
                   cls.get("classify_over_prune_paired")) for prune, cls in pairs]
        out.append(f"- classify at most {TOPK_CLASSIFY_RATIO_TARGET:g}× prune's time over "
                   f"{pairs[0][1]['stats_containers']:,} containers: "
                   + ", ".join(f"{name} {r:.2f}×" + (f" (paired {p:.2f}×)" if p else "")
                               for name, r, p in ratios)
                   + f" — {_verdict(all(r <= TOPK_CLASSIFY_RATIO_TARGET for _, r, _ in ratios))}")
    return out


def not_run_note(results: list[Result]) -> str:
    sizes = {r.size: r.containers for r in results}
    skipped = [f"{e} above {limit:,} containers" for e, limit in MAX_CONTAINERS.items()
               if any(n > limit for n in sizes.values())]
    return ("Not run (minutes per call): " + "; ".join(skipped) + ".") if skipped else ""


def merge(runs: list[dict]) -> dict:
    """One benchmark JSON from several, later runs replacing earlier entries of the same name.

    >>> merge([{"benchmarks": [{"fullname": "a", "v": 1}, {"fullname": "b", "v": 1}]},
    ...        {"benchmarks": [{"fullname": "a", "v": 2}]}])["benchmarks"]
    [{'fullname': 'a', 'v': 2}, {'fullname': 'b', 'v': 1}]
    """
    by_name: dict[str, dict] = {}
    for run in runs:
        by_name.update((b["fullname"], b) for b in run["benchmarks"])
    return {**runs[0], "benchmarks": list(by_name.values())}


def run_header(data: dict) -> str:
    """The run (mode, date, wall time, commit), its machine and package versions, and the
    parts run (``data["run"]``, written by ``bench/run.py``); for a plain pytest-benchmark
    JSON, what it records of the machine."""
    run = data.get("run")
    if run is None:
        machine = data.get("machine_info", {})
        return (f"Machine: {machine.get('cpu', {}).get('brand_raw', '?')}, "
                f"Python {machine.get('python_version', '?')}; run {data.get('datetime', '?')}.")
    m = run["machine"]
    lines = [
        f"- Run: {run['mode']}, started {run['started']}, wall time "
        f"{fmt_duration(run['wall_s'])}; commit {run['commit']}",
        f"- Machine: {m['cpu']}, {m['usable_cores']} of {m['cores']} cores usable, "
        f"{m['memory_gb']:.1f} GB memory; {m['os']}; Python {m['python']}; {m['java']}; "
        f"load average at the start {m['load_average']}",
        "- Packages: " + ", ".join(f"{k} {v}" for k, v in run["packages"].items()),
        "", "| part | result | benchmarks | wall time | what was left out |",
        "|---|---|---:|---:|---|",
    ]
    for part in run["parts"]:
        lines.append(f"| {part['name']} | {part['result']} | {part['benchmarks']} | "
                     f"{fmt_duration(part['seconds'])} | {part['left_out'] or '—'} |")
    return "\n".join(lines)


def fmt_duration(seconds: float) -> str:
    """A wall time in minutes and seconds.

    >>> fmt_duration(7.24), fmt_duration(135.6)
    ('7.2 s', '2 min 16 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {round(seconds % 60):d} s"


def headline(data: dict, stat: str = "median") -> str:
    """The headline table: each engine's time per call as a multiple of the numpy floor's,
    geometric mean over the predicates, per size ("" when the run has no keep-mask results)."""
    results, _ = load_results(data, stat)
    if not results:
        return ""
    predicates = len({r.scenario for r in results})
    return (f"Time per call as a multiple of the numpy floor ({stat}; geometric mean over "
            f"{predicates} predicates; lower is better):\n\n" + geomean_table(results))


def report(data: dict, stat: str = "median", plots: list[tuple[str, str]] = ()) -> str:
    """The whole Markdown report of one benchmark JSON; ``plots`` are (PNG file, caption)
    pairs shown after the headline."""
    results, others = load_results(data, stat)
    parts = ["# prune_engine benchmarks", run_header(data)]
    if results:
        parts += ["## Headline: pe.prune and its peers against the floor", headline(data, stat)]
    parts += [f"![{caption}]({file})" for file, caption in plots]
    if results:
        parts += [f"## Keep-mask time per call ({stat}; ratio to the numpy floor)",
                  ratio_table(results), not_run_note(results),
                  "## Peers' answers against pe.prune's", peer_check_table(results),
                  "## Targets (issue #2)", "\n".join(target_lines(results)),
                  "## Targets (issue #10)", "\n".join(string_target_lines(results))]
    sections = [
        (f"## pe.compile alone, uncached, warm process ({stat})", compile_table(others)),
        (f"## collect_stats: footers of a lake ({stat})", collect_table(others)),
        ("## n-gram index: build throughput", ngram_table(others)),
        (f"## n-gram index: size against false-positive rate ({stat} build time)",
         ngram_size_table(others)),
        (f"## Scan: time ({stat}; ratio to pe.scan) and bytes read", scan_table(others)),
        (f"## prune_engine on Spark, end to end ({stat})", spark_table(others)),
    ]
    parts += [part for title, table in sections if table for part in (title, table)]
    if spark_table(others):
        parts += ["## Targets (issue #9)", "\n".join(spark_target_lines(others))]
    bloom = [
        (f"## Bloom filters: files kept ({stat} time of pe.prune)", bloom_kept_table(others)),
        (f"## Bloom filters: IN of 1,000 keys ({stat})", bloom_in_table(others)),
        (f"## Bloom filters: collect_stats ({stat})", bloom_collect_table(others)),
        (f"## Bloom filters: point lookup end to end ({stat}; ratio to pe.scan)",
         bloom_lookup_table(others)),
        (f"## Bloom filters: a lake written by Spark ({stat})", bloom_spark_table(others)),
        ("## Targets (Bloom filters)", "\n".join(bloom_target_lines(others))),
        (f"## Delta and Iceberg: table statistics against the footers ({stat})",
         tables_stats_table(others)),
        (f"## Delta and Iceberg: files kept by k IN (n values) ({stat} time per call)",
         tables_in_table(others)),
        ("## Targets (Delta and Iceberg)", "\n".join(tables_target_lines(others))),
        (f"## Statistics from an S3 API on localhost ({stat})", object_store_table(others)),
        (f"## A lake Spark wrote, classic and Connect sessions ({stat})", lake_table(others)),
        ("## Targets (issue #21)", "\n".join(lake_target_lines(others))),
        (f"## Top-k and COUNT from the statistics: files and row groups read ({stat})",
         topk_table(others)),
        (f"## pe.classify against pe.prune ({stat})", topk_classify_table(others)),
        ("## Targets (issue #23)", "\n".join(topk_target_lines(others))),
        ("## Targets (issue #35: pages)", "\n".join(pages_target_lines(others))),
    ]
    parts += [part for title, table in bloom if table for part in (title, table)]
    first = [("### pe.prune at 1k containers, step by step", first_call_table(others)),
             ("### numba kernels", jit_first_call_table(others)),
             ("### Spark executors", spark_first_call_table(others)),
             ("### Spark executors: the first statistics job", spark_first_collect_table(others))]
    if any(table for _, table in first):
        parts += ["## First-call costs (fresh process; none of them is in the numbers above)"]
        parts += [part for title, table in first if table for part in (title, table)]
    return "\n\n".join(p for p in parts if p) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", nargs="+", help="--benchmark-json files of the bench/ suites")
    parser.add_argument("--stat", default="median", choices=["median", "min", "mean"])
    args = parser.parse_args(argv)
    runs = []
    for path in args.json:
        with open(path) as fh:
            runs.append(json.load(fh))
    print(report(merge(runs), args.stat))


if __name__ == "__main__":
    main()
