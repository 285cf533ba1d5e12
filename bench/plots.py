"""The benchmark report's pictures: one function per figure, from a loaded benchmark JSON.

Each function returns a ``matplotlib.figure.Figure`` built without pyplot (no global state, no
display needed: ``bench/run.py`` saves PNGs with the Agg canvas, a notebook shows the figure
as it is), or None when the run holds nothing to draw. :func:`save_all` writes every figure
of a run and returns the (file, caption) pairs for ``report.report``.

- :func:`time_vs_containers`: time per call against the number of containers, log-log, for
  pe.prune, its plan, the numpy floor and every peer (geometric mean over the predicates);
- :func:`ratio_to_floor`: per predicate, each engine's time as a multiple of the floor's at
  the largest size;
- :func:`pruning_rate`: per predicate, the share of containers pe.prune prunes (and the
  engines that prune less);
- :func:`ngram_size_vs_fpr`: the n-gram index's bytes per container against its measured
  false-positive rate, per kind of index;
- :func:`lake_times`: on a lake Spark wrote, plain Spark, prune_engine and the floor (plain
  Spark handed the kept files), per scenario and session.

>>> data = {"benchmarks": [
...     {"group": "1k eq_int", "stats": {"median": 2e-6},
...      "extra_info": {"engine": "floor", "size": "1k", "scenario": "eq_int", "kept": 10,
...                     "containers": 1000}}]}
>>> time_vs_containers(data).axes[0].get_xscale(), ngram_size_vs_fpr(data)
('log', None)
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from report import (ENGINES, LAKE_FLOOR, SIZE_ORDER, fmt_bytes, geomean, index_kind,
                    lake_cells, load_results)

#: line styles that set pe.prune and the floor apart from the peers
_STYLE = {"prune": {"lw": 3, "color": "black"}, "plan": {"lw": 1.5, "color": "black", "ls": ":"},
          "floor": {"lw": 1.5, "color": "grey", "ls": "--"}}


def _largest(results) -> str:
    return max({r.size for r in results}, key=SIZE_ORDER.index)


def time_vs_containers(data: dict, stat: str = "median") -> Figure | None:
    """Geometric mean over the predicates of each engine's time per call, per size (log-log)."""
    results, _ = load_results(data, stat)
    if not results:
        return None
    times: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        times[r.engine][r.containers].append(r.seconds)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for engine in [e for e in ENGINES if e in times]:
        sizes = sorted(times[engine])
        ax.plot(sizes, [geomean(times[engine][n]) for n in sizes], marker="o", label=engine,
                **_STYLE.get(engine, {}))
    ax.set(xscale="log", yscale="log", xlabel="containers",
           ylabel=f"time per call, s ({stat}, geomean over predicates)",
           title="Keep-mask time against the number of containers")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(ncol=2, fontsize="small")
    return fig


def ratio_to_floor(data: dict, stat: str = "median") -> Figure | None:
    """Per predicate at the largest size: each engine's time over the floor's (log scale)."""
    results, _ = load_results(data, stat)
    if not results:
        return None
    size = _largest(results)
    cell = {(r.scenario, r.engine): r.seconds for r in results if r.size == size}
    predicates = list(dict.fromkeys(r.scenario for r in results if r.size == size))
    engines = [e for e in ENGINES if e != "floor" and any((p, e) in cell for p in predicates)]
    fig = Figure(figsize=(12, 4.5), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(engines)
    x = np.arange(len(predicates))
    for i, engine in enumerate(engines):
        ratios = [cell[p, engine] / cell[p, "floor"] if (p, engine) in cell and (p, "floor") in cell
                  else np.nan for p in predicates]
        ax.bar(x + i * width, ratios, width, label=engine,
               color="black" if engine == "prune" else None)
    ax.axhline(1, color="grey", ls="--")
    ax.set_xticks(x + width * (len(engines) - 1) / 2, predicates, rotation=45, ha="right")
    ax.set(yscale="log", ylabel=f"time / floor time ({size} containers)",
           title="Time per call as a multiple of the numpy floor, per predicate")
    ax.legend(fontsize="small", ncol=3)
    return fig


def pruning_rate(data: dict, stat: str = "median") -> Figure | None:
    """Per predicate at the largest size: the share of containers pe.prune prunes, beside every
    engine that prunes less on some predicate (the more conservative ones)."""
    results, _ = load_results(data, stat)
    size = results and _largest(results)
    pruned = {(r.scenario, r.engine): 1 - r.kept / r.containers for r in results if r.size == size}
    predicates = list(dict.fromkeys(p for p, e in pruned if e == "prune"))
    if not predicates:
        return None
    engines = ["prune"] + [e for e in ENGINES if e != "prune" and any(
        (p, e) in pruned and pruned[p, e] < pruned[p, "prune"] for p in predicates)]
    fig = Figure(figsize=(7, 0.22 * len(predicates) * len(engines) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    height = 0.8 / len(engines)
    y = np.arange(len(predicates))[::-1]
    for i, engine in enumerate(engines):
        ax.barh(y - i * height, [100 * pruned.get((p, engine), np.nan) for p in predicates],
                height, label=engine, color="tab:green" if engine == "prune" else None)
    ax.set_yticks(y - height * (len(engines) - 1) / 2, predicates)
    ax.set(xlim=(0, 100), xlabel="containers pruned (%)",
           title=f"Pruning rate per predicate ({size} containers)")
    ax.legend(fontsize="small", loc="lower right")
    return fig


def ngram_size_vs_fpr(data: dict, stat: str = "median") -> Figure | None:
    """The n-gram index's bytes per container against its measured false-positive rate per
    absent gram, one point per kind of index (the Bloom filters' targets in their names); the
    dotted line is the strings' own Parquet size."""
    _, others = load_results(data, stat)
    rows = sorted((o for o in others if "bytes_per_container" in o),
                  key=lambda o: o["bytes_per_container"])
    if not rows:
        return None
    points: dict[tuple[float, float], list[str]] = defaultdict(list)  # kinds that coincide
    for o in rows:
        points[o["bytes_per_container"], 100 * o["fpr"]].append(index_kind(o))
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for (size, rate), kinds in points.items():
        ax.plot(size, rate, "o", color="black" if "exact" in kinds else "tab:blue")
        ax.annotate(" = ".join(kinds), (size, rate), textcoords="offset points", xytext=(6, 4),
                    fontsize="small")
    ax.axvline(rows[0]["parquet_bytes_per_container"], color="grey", ls=":",
               label="the strings' own Parquet size")
    ax.set(xscale="log", xlabel="index bytes per container",
           ylabel="false positives per absent gram (%)",
           title="n-gram index: size against false-positive rate")
    ax.set_ylim(bottom=-1)
    ax.margins(x=0.2)
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend(fontsize="small")
    return fig


#: every figure of the report: (file name, caption, function)
def lake_times(data: dict, stat: str = "median") -> Figure | None:
    """``bench/test_bench_spark_lake.py``: per scenario and session, the time of plain Spark,
    of prune_engine, and of the floor (plain Spark handed the files prune_engine keeps), log
    scale, with prune_engine's speed-up over plain Spark on its bar."""
    _, others = load_results(data, stat)
    cells = lake_cells(others)
    if not cells:
        return None
    cases = list(cells)
    engines = [("plain", "plain Spark", "tab:grey"), ("prune_engine", "prune_engine", "black"),
               (LAKE_FLOOR, "floor: plain Spark, kept files only", "tab:green")]
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(engines)
    x = np.arange(len(cases))
    for i, (engine, label, color) in enumerate(engines):
        seconds = [cells[c][engine]["seconds"] if engine in cells[c] else np.nan for c in cases]
        bars = ax.bar(x + i * width, seconds, width, label=label, color=color)
        if engine == "prune_engine":
            ax.bar_label(bars, [f"{cells[c]['plain']['seconds'] / t:.1f}×"
                                for c, t in zip(cases, seconds)], fontsize="small")
    ax.set_xticks(x + width, [f"{g.removeprefix('lake ')}\n{s}" for g, s in cases])
    files = next((f"{o['files']:,}-file " for o in others
                  if o.get("group") == "lake saved stats" and o.get("files")), "")
    ax.set(yscale="log", ylabel=f"seconds to the collected rows ({stat})",
           title=f"A {files}lake Spark wrote: 1% of the files match")
    ax.legend(fontsize="small")
    return fig


FIGURES = [
    ("time_vs_containers.png", "time per call against containers", time_vs_containers),
    ("ratio_to_floor.png", "ratio to the floor per predicate", ratio_to_floor),
    ("pruning_rate.png", "pruning rate per predicate", pruning_rate),
    ("ngram_size_vs_fpr.png", "n-gram index size against false-positive rate", ngram_size_vs_fpr),
    ("lake_times.png", "a lake Spark wrote: plain Spark, prune_engine and the floor", lake_times),
]


def save_all(data: dict, out_dir: Path, stat: str = "median") -> list[tuple[str, str]]:
    """Write the PNG of every figure the run can draw into ``out_dir``; (file, caption) pairs."""
    saved = []
    for name, caption, draw in FIGURES:
        fig = draw(data, stat)
        if fig is not None:
            fig.savefig(Path(out_dir) / name, dpi=100)
            saved.append((name, caption))
    return saved
