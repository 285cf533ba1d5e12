"""Run every benchmark suite of ``bench/`` and write one report (issue #12).

    python bench/run.py [--quick] [--output DIR]

Each part is one pytest-benchmark suite, run in its own process from the repository root:
``prune`` (pe.prune and its peers over 1k, 10k, 100k and 1M containers, compile latency, first
calls), ``ngram`` (index build, probe, size against false-positive rate, JIT first call),
``collect`` (collect_stats over a lake of footers), ``scan`` (pe.scan against pyarrow and
DuckDB), ``pages`` (a point lookup through the page index, the row ranges of an OR) and
``spark`` (the read and the join on local Spark). The output directory (default
``.benchmarks/<UTC time>/``, and a copy in ``.benchmarks/latest/``) receives:

    raw/<part>.json     the suite's pytest-benchmark JSON, as written
    logs/<part>.log     the suite's pytest output
    results.json        every part merged, per-round timings left out, with the run's machine,
                        package versions, date, wall time and parts (``"run"``)
    report.md           the tables (``report.py``) and the plots (``plots.py``, PNG files)

A part fails when one of its benchmarks fails, and a peer that prunes a container the rewrite
keeps fails its benchmark (``peer_check.py``); the run then exits with 1, after writing the
report of what did run.

``--quick`` is the smoke test of CI (under 3 minutes on 2 cores): 1k and 10k containers, one
round of the slow benchmarks, small lakes and data sets (through the suites' own options and
environment variables), and without the first calls that only repeat others (the prune first
call of two predicates, no collect or Spark-executor JIT first call) or Spark's statistics job.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import plots
import report

ROOT = Path(__file__).resolve().parents[1]
#: the packages whose versions the report states
PACKAGES = ["prune_engine", "pyarrow", "numpy", "numba", "sqlglot", "duckdb", "datafusion",
            "polars", "pyiceberg", "pyspark", "pytest-benchmark"]
#: pytest-benchmark's calibration in a quick run: short, but at least three rounds
QUICK_ARGS = ["--bench-rounds=1", "--benchmark-max-time=0.01", "--benchmark-min-rounds=3"]


@dataclass(frozen=True)
class Part:
    """One suite: its file, and what ``--quick`` changes (pytest arguments, environment, and
    a sentence for the report saying what it leaves out)."""

    name: str
    path: str
    quick_args: list[str] = field(default_factory=list)
    quick_env: dict[str, str] = field(default_factory=dict)
    quick_left_out: str = ""


PARTS = [
    Part("prune", "bench/test_bench_prune.py",
         ["--bench-sizes=1k,10k", "-k", "not test_first_call or eq_int or like_url"], {},
         "100k and 1M containers; first calls of predicates other than eq_int and like_url"),
    Part("ngram", "bench/test_bench_ngram.py", [],
         {"NGRAM_BENCH_CONTAINERS": "100", "NGRAM_BENCH_ROWS": "1000",
          "NGRAM_BENCH_HIGH_ENTROPY_ROWS": "500"},
         "100 containers of 1,000 strings (full: 1,000 of 10,000)"),
    Part("collect", "bench/test_bench_collect.py", ["-k", "not first_call"],
         {"COLLECT_BENCH_FILES": "200"}, "200 files (full: 2,000); the JIT first call"),
    Part("scan", "bench/test_bench_scan.py", [], {"SCAN_BENCH_ROWS": "80000"},
         "80,000 rows (full: 800,000)"),
    Part("bloom", "bench/test_bench_bloom.py", ["-k", "not first_call and not spark"],
         {"BLOOM_BENCH_FILES": "200"},
         "200 files (full: 2,000); the JIT first call; the Spark lake"),
    Part("tables", "bench/test_bench_tables.py", [], {"TABLES_BENCH_FILES": "200"},
         "a Delta and an Iceberg table of 200 files (full: 2,000)"),
    Part("s3", "bench/test_bench_object_store.py", [], {"OBJECT_BENCH_FILES": "100"},
         "100 files (full: 500)"),
    Part("lake", "bench/test_bench_spark_lake.py", [], {"SPARK_LAKE_BENCH_FILES": "200"},
         "200 files (full: 2,000)"),
    Part("spark", "bench/test_bench_spark.py", ["-k", "not executor_first_call and not collect"],
         {"SPARK_BENCH_FILES": "200"},
         "200 files (full: 2,000); the statistics job; the executors' first call"),
    Part("pages", "bench/test_bench_pages.py", [], {"PAGES_BENCH_ROWS": "200000"},
         "a file of 200,000 rows (full: 2,000,000)"),
    Part("topk", "bench/test_bench_topk.py", ["-k", "not first_call"],
         {"TOPK_BENCH_FILES": "200", "TOPK_BENCH_CONTAINERS": "100000"},
         "lakes of 200 files (full: 2,000); 100,000 containers (full: 1,000,000); the first call"),
]


def main(argv: list[str] | None = None) -> int:
    """Run the suites, write the report; 0 when every part passed, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the smoke test: small sizes, one round of slow benchmarks (< 3 min)")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="directory for the report (default .benchmarks/<UTC time>/)")
    args = parser.parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc)
    out = (args.output or ROOT / ".benchmarks" / started.strftime("%Y%m%dT%H%M%SZ")).resolve()
    for sub in ("raw", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)

    run = {"mode": "quick" if args.quick else "full",
           "started": started.strftime("%Y-%m-%d %H:%M UTC"), "commit": _commit(),
           "machine": machine(), "packages": package_versions(), "parts": []}
    clock = time.perf_counter()
    for part in PARTS:
        run["parts"].append(run_part(part, out, args.quick))
    run["wall_s"] = time.perf_counter() - clock

    data = results(out, run)
    (out / "results.json").write_text(json.dumps(data, indent=1))
    (out / "report.md").write_text(report.report(data, plots=plots.save_all(data, out)))
    latest = ROOT / ".benchmarks" / "latest"
    if latest.resolve() != out:
        shutil.rmtree(latest, ignore_errors=True)
        shutil.copytree(out, latest)

    failed = [p["name"] for p in run["parts"] if p["result"] != "passed"]
    print(f"\nreport: {out / 'report.md'} (a copy in {latest}); "
          f"wall time {report.fmt_duration(run['wall_s'])}\n")
    print(report.headline(data) or "no keep-mask results")
    if failed:
        print(f"\nFAILED parts: {', '.join(failed)} (see their logs in {out / 'logs'})")
    return 1 if failed else 0


def run_part(part: Part, out: Path, quick: bool) -> dict:
    """Run one suite in its own pytest process; its result, wall time and benchmark count."""
    raw, log = out / "raw" / f"{part.name}.json", out / "logs" / f"{part.name}.log"
    raw.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", part.path, "-q", "-p", "no:cacheprovider",
           f"--benchmark-json={raw}"]
    env = dict(os.environ)
    if quick:
        cmd += QUICK_ARGS + part.quick_args
        env.update(part.quick_env)
    print(f"{part.name:8s} ...", end=" ", flush=True)
    start = time.perf_counter()
    with open(log, "w") as fh:
        code = subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh,
                              stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - start
    count = len(json.loads(raw.read_text())["benchmarks"]) if raw.exists() else 0
    result = "passed" if code == 0 else f"FAILED (pytest exit {code})"
    print(f"{result}, {count} benchmarks, {report.fmt_duration(seconds)}", flush=True)
    if code:  # the failed tests and their exceptions' messages ("E   ..." lines)
        lines = log.read_text().splitlines()
        shown = [ln for ln in lines if ln.startswith(("FAILED", "ERROR", "E   "))]
        for line in list(dict.fromkeys(shown))[:30] or lines[-20:]:
            print(f"    {line}")
    return {"name": part.name, "result": result, "benchmarks": count, "seconds": seconds,
            "left_out": part.quick_left_out if quick else ""}


def results(out: Path, run: dict) -> dict:
    """The parts' JSON merged, with ``run`` in place of pytest-benchmark's machine and commit
    records (host and checkout names) and without the per-round timings (``stats["data"]``)."""
    raws = [json.loads(p.read_text()) for p in sorted((out / "raw").glob("*.json"))]
    data = report.merge(raws) if raws else {"benchmarks": []}
    for bench in data["benchmarks"]:
        bench["stats"].pop("data", None)
    return {key: value for key, value in data.items()
            if key not in ("machine_info", "commit_info")} | {"run": run}


def machine() -> dict:
    """CPU model, cores, memory, OS, Python and Java of this machine, and its load now."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):
        memory = float("nan")
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable, "memory_gb": memory,
            "os": platform.platform(), "python": platform.python_version(), "java": _java(),
            "load_average": load}


def package_versions() -> dict[str, str]:
    """The installed version of each of :data:`PACKAGES`."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _java() -> str:
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "no Java"
    return (done.stderr.strip().splitlines() or ["Java ?"])[0].replace('"', "")


def _commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + (" with uncommitted changes" if dirty else "")


if __name__ == "__main__":
    sys.exit(main())
