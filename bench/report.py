"""Turn a pytest-benchmark JSON of ``bench/test_bench_prune.py`` (or ``test_bench_spark.py``) into
Markdown tables.

    python bench/report.py bench.json [more.json ...] [--stat median|min|mean]

Several JSON files are merged, a later file's entry replacing an earlier one's for the same
benchmark (so that a rerun of a few benchmarks can patch a full run).

Prints, per size and predicate, the time of ``pe.prune`` (and ``plan.evaluate``) and of each
peer, each with its ratio to the numpy floor; the geometric mean of those ratios over the
predicates at each size; the issue #2 targets checked against this run; the first-call costs
(fresh process, numba cache cold and warm) and the warm ``pe.compile`` times; for
``bench/test_bench_scan.py``, the scan time and bytes read of each engine. For the Spark
suite: each scenario's time against plain Spark, files scanned, the driver time spent pruning,
the executors' first-call costs, and the issue #9 targets.

>>> results = [Result("1k", "eq_int", "floor", 2e-6, 10, 1000),
...            Result("1k", "eq_int", "prune", 4e-6, 10, 1000)]
>>> print(ratio_table(results).splitlines()[2])
| 1k | eq_int | 99.0% | 4.00 µs (2.0×) | — | 2.00 µs | — | — | — | — | — |
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from dataclasses import dataclass

ENGINES = ["prune", "plan", "floor", "duckdb", "pyarrow", "polars", "pyiceberg", "python"]
PEER_ENGINES = ["duckdb", "pyarrow", "polars", "pyiceberg", "python"]
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
    """One timed (size, predicate, engine): ``seconds`` is the chosen statistic per call."""

    size: str
    scenario: str
    engine: str
    seconds: float
    kept: int
    containers: int


def load_results(data: dict, stat: str = "median") -> tuple[list[Result], list[dict]]:
    """The keep-mask results and the other entries (first call, compile) of a benchmark JSON."""
    results, others = [], []
    for bench in data["benchmarks"]:
        info = bench.get("extra_info", {})
        if "containers" in info:
            results.append(Result(info["size"], info["scenario"], info["engine"],
                                  bench["stats"][stat], info["kept"], info["containers"]))
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
    rows = [o for o in others if o["group"] == "first_call"]
    if not rows:
        return ""
    lines = ["| predicate | numba cache | import | first prune | second prune |",
             "|---|---|---:|---:|---:|"]
    for o in sorted(rows, key=lambda o: (o["scenario"], o["cache"])):
        lines.append(f"| {o['scenario']} | {o['cache']} | {fmt_time(o['import_s'])} | "
                     f"{fmt_time(o['first_s'])} | {fmt_time(o['second_s'])} |")
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
    #10 targets) and the first build + probe of a fresh process, numba cache cold and warm."""
    lines = []
    builds = [o for o in others if "strings_per_ms" in o and "kind" in o]
    if builds:
        lines += ["| n-gram build data | strings / ms | target |", "|---|---:|---:|"]
        for o in builds:
            target = NGRAM_BUILD_TARGETS.get(o["kind"])
            verdict = "—" if target is None else (
                f"{target:,} — {'PASS' if o['strings_per_ms'] >= target else 'MISS'}")
            lines.append(f"| {o['kind']} | {o['strings_per_ms']:,.0f} | {verdict} |")
    first = [o for o in others if "seconds_in_process" in o]
    if first:
        lines += ["", "| n-gram first build + probe | numba cache | seconds (in process) |",
                  "|---|---|---:|"]
        for o in first:
            cache = o.get("cache", "?")
            lines.append(f"| import + build + probe | {cache} | {o['seconds_in_process']:.2f} |")
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
    first = [o for o in others if o["group"] == "spark first call"]
    if first:
        lines += ["", "| executors' numba cache | Python workers' first job | first prune job | "
                  "second prune job |", "|---|---:|---:|---:|"]
        for o in sorted(first, key=lambda o: o["engine"]):
            lines.append(f"| {o['engine']} | {fmt_time(o['python_job_s'])} | "
                         f"{fmt_time(o['first_job_s'])} | {fmt_time(o['second_job_s'])} |")
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


def not_run_note(results: list[Result]) -> str:
    from peers import MAX_CONTAINERS

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


def report(data: dict, stat: str = "median") -> str:
    """The whole Markdown report of one benchmark JSON."""
    results, others = load_results(data, stat)
    parts = []
    if results:
        parts += [f"## Keep-mask time per call ({stat}; ratio to the numpy floor)",
                  ratio_table(results), not_run_note(results),
                  "## Geometric mean of the ratio to the floor, over predicates",
                  geomean_table(results), "## Targets (issue #2)",
                  "\n".join(target_lines(results)),
                  "## Targets (issue #10)", "\n".join(string_target_lines(results))]
    if spark_table(others):
        parts += [f"## prune_engine on Spark, end to end ({stat})", spark_table(others),
                  "## Targets (issue #9)", "\n".join(spark_target_lines(others))]
    if first_call_table(others):
        parts += ["## First call, fresh process, 1k containers", first_call_table(others)]
    if compile_table(others):
        parts += [f"## pe.compile alone, uncached, warm process ({stat})", compile_table(others)]
    if ngram_table(others):
        parts += [f"## n-gram index (target first call under {NGRAM_FIRST_CALL_TARGET_S:g} s cold)",
                  ngram_table(others)]
    if scan_table(others):
        parts += [f"## Scan: time ({stat}; ratio to pe.scan) and bytes read", scan_table(others)]
    machine = data.get("machine_info", {})
    parts.append(f"Machine: {machine.get('cpu', {}).get('brand_raw', '?')}, "
                 f"Python {machine.get('python_version', '?')}; "
                 f"run {data.get('datetime', '?')}.")
    return "\n\n".join(p for p in parts if p)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", nargs="+", help="--benchmark-json files of bench/test_bench_prune.py")
    parser.add_argument("--stat", default="median", choices=["median", "min", "mean"])
    args = parser.parse_args(argv)
    runs = []
    for path in args.json:
        with open(path) as fh:
            runs.append(json.load(fh))
    print(report(merge(runs), args.stat))


if __name__ == "__main__":
    main()
