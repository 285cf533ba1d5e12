"""Speed of ``pe.prune`` against its peers and the numpy floor (issue #2, Speed).

One pytest-benchmark group per (size, predicate), e.g. ``"1M and6"``, holding one benchmark per
engine:

    prune      pe.prune(table, sql) on a plain pa.Table (parse + compile + evaluate, warm)
    plan       plan.evaluate(stats) with the plan compiled and the StatsTable built beforehand
    floor      one numpy pass over the touched stats columns, prepared beforehand (lower bound)
    duckdb     the min/max rewrite in SQL over the same Arrow table (one thread)
    datafusion the same SQL in DataFusion's Python bindings over the same table (one partition)
    pyarrow    the rewrite as unfused pyarrow.compute calls
    polars     the rewrite as Polars expressions over the same Arrow table (one thread)
    pyiceberg  PyIceberg's InclusiveMetricsEvaluator, one DataFile per container
    python     a plain loop over to_pylist() rows

pyiceberg and python are not run above ``peers.MAX_CONTAINERS`` (minutes at 1M; the report
says so).
``extra_info`` records the engine, size, predicate and containers kept, how many differ from
the floor's mask, and how many the engine keeps beyond pe.prune (``more_conservative``) or
prunes where pe.prune keeps (``less_conservative``). Each mask is checked before it is timed
(``peer_check.py``): no engine may prune a container the floor keeps, and the peers must match
it exactly (except PyIceberg's known imprecision); pe.prune's extra keeps are reported, not
failed (tests/test_bench_peers.py holds pe.prune to the rewrite).

The ``first_call`` group measures the cost of a first ``pe.prune`` in a fresh process, step by
step (import, parse, compile, first evaluation), with an empty numba cache ("cold") and then
with the cache it left ("warm"); the ``compile`` group times an uncached ``pe.compile`` alone
in a warm process. ``--bench-sizes`` chooses the sizes (1k, 10k, 100k, 1M by default),
``--bench-rounds`` caps the rounds of slow calls.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import peer_check
import peers
from first_call import prepare_cache, run_fresh
from peers import MAX_CONTAINERS, PEERS, knowingly_less_precise, to_numpy
from synthetic import make_stats, scenarios

import prune_engine as pe

#: benchmarked sizes: label -> number of containers
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}
ENGINES = ["prune", "plan", *PEERS]
SCENARIO_IDS = [sc.id for sc in scenarios(SIZES["1k"])]
#: a call whose warm-up is slower than this is timed over a few pedantic rounds instead of
#: pytest-benchmark's calibration
SLOW_CALL_S = 0.25
BENCH_DIR = Path(__file__).resolve().parent


def pytest_generate_tests(metafunc):
    if "size" in metafunc.fixturenames:
        wanted = {s.strip() for s in metafunc.config.getoption("--bench-sizes").split(",")}
        unknown = sorted(wanted - set(SIZES) - {""})
        if unknown:
            raise pytest.UsageError(f"unknown --bench-sizes {unknown}; choose from {list(SIZES)}")
        sizes = [s for s in SIZES if s in wanted]
        if "engine" in metafunc.fixturenames:  # peers too slow for a size are not run there
            pairs = [(s, e) for s in sizes for e in ENGINES
                     if SIZES[s] <= MAX_CONTAINERS.get(e, SIZES[s])]
            metafunc.parametrize(("size", "engine"), pairs, ids=[f"{s}-{e}" for s, e in pairs])
        else:
            metafunc.parametrize("size", sizes)


@lru_cache(maxsize=None)
def stats(size: str):
    """The synthetic stats table of a size, built once per session."""
    return make_stats(SIZES[size])


@lru_cache(maxsize=None)
def rows(size: str) -> list[dict]:
    return stats(size).to_pylist()


@lru_cache(maxsize=None)
def iceberg_files(size: str) -> list:
    return peers.iceberg_files(stats(size))


@lru_cache(maxsize=None)
def scenario(size: str, scenario_id: str):
    return {sc.id: sc for sc in scenarios(SIZES[size])}[scenario_id]


@lru_cache(maxsize=4)
def floor_mask(size: str, scenario_id: str) -> np.ndarray:
    return to_numpy(PEERS["floor"](stats(size), scenario(size, scenario_id).pred)())


@lru_cache(maxsize=4)
def prune_mask(size: str, scenario_id: str) -> np.ndarray:
    return to_numpy(pe.prune(stats(size), scenario(size, scenario_id).sql))


def make_call(engine: str, size: str, scenario_id: str):
    """The timed callable of ``engine``, with all of its preparation done."""
    table, sc = stats(size), scenario(size, scenario_id)
    sql = sc.sql  # rendered once: the timed call must not pay for building its SQL text
    if engine == "prune":
        return lambda: pe.prune(table, sql)
    if engine == "plan":
        plan, wrapped = pe.compile(sql, table.schema), pe.StatsTable(table)
        return lambda: plan.evaluate(wrapped)
    if engine == "python":
        return peers.python_peer(table, sc.pred, rows(size))
    if engine == "pyiceberg":
        return peers.iceberg_peer(table, sc.pred, iceberg_files(size))
    return PEERS[engine](table, sc.pred)


@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_keep_mask(benchmark, rounds, scenario_id, size, engine):
    call = make_call(engine, size, scenario_id)
    start = time.perf_counter()
    mask = to_numpy(call())  # warm-up: caches, JIT, and the answer for extra_info
    warm_up_s = time.perf_counter() - start
    exact = engine not in ("prune", "plan") and \
        not knowingly_less_precise(engine, scenario(size, scenario_id).pred)
    checked = peer_check.check(engine, mask, prune_mask(size, scenario_id),
                               floor_mask(size, scenario_id), exact=exact)
    benchmark.group = f"{size} {scenario_id}"
    benchmark.extra_info.update(engine=engine, size=size, scenario=scenario_id,
                                containers=SIZES[size], kept=checked.kept,
                                differs_from_floor=checked.differs_from_rewrite,
                                more_conservative=checked.more_conservative,
                                less_conservative=checked.less_conservative)
    if warm_up_s > SLOW_CALL_S:
        benchmark.pedantic(call, rounds=rounds(3), iterations=1)
    else:
        benchmark(call)


@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_compile(benchmark, scenario_id):
    """``pe.compile`` alone (parse + rewrite + lower), warm process, not served from its cache:
    each round gets the SQL with one more trailing space, a new text that parses the same."""
    sc, schema = scenario("1k", scenario_id), stats("1k").schema
    rounds = iter(range(10_000))
    benchmark.group = "compile"
    benchmark.extra_info.update(engine="compile", scenario=scenario_id)
    benchmark.pedantic(pe.compile, setup=lambda: ((sc.sql + " " * next(rounds), schema), {}),
                       rounds=30, warmup_rounds=1)


_FIRST_CALL = """
import json, sys, time
start = time.perf_counter()
import prune_engine as pe
from prune_engine.expr.sql import parse_sql
imported = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from synthetic import make_stats, scenarios
table = make_stats(1000)
sql = {sc.id: sc.sql for sc in scenarios(1000)}[sys.argv[2]]
t0 = time.perf_counter(); expr = parse_sql(sql)
t1 = time.perf_counter(); plan = pe.compile(expr, table.schema)
t2 = time.perf_counter(); plan.evaluate(table)
t3 = time.perf_counter(); pe.prune(table, sql)
t4 = time.perf_counter()
print(json.dumps({"import_s": imported - start, "parse_s": t1 - t0, "compile_s": t2 - t1,
                  "evaluate_s": t3 - t2, "first_s": t3 - t0, "second_s": t4 - t3}))
"""


@pytest.mark.parametrize("cache", ["cold", "warm"])
@pytest.mark.parametrize("scenario_id", SCENARIO_IDS)
def test_first_call(benchmark, scenario_id, cache, tmp_path_factory):
    """First pruning of a fresh process at 1k containers; the benchmark's own time is the whole
    process, ``extra_info`` holds the seconds of the import, the first parse, compile and
    evaluation (``first_s`` their sum) and of a second, warm ``pe.prune`` of the same text."""
    cache_dir = tmp_path_factory.getbasetemp() / f"numba_cache_{scenario_id}"

    def run() -> dict:
        return json.loads(run_fresh(_FIRST_CALL, str(cache_dir), str(BENCH_DIR), scenario_id))

    prepare_cache(cache, cache_dir, run)
    result = {}
    benchmark.group = "first_call"
    benchmark.pedantic(lambda: result.update(run()), rounds=1)
    benchmark.extra_info.update(engine="prune", scenario=scenario_id, cache=cache, **result)
    assert result["first_s"] > 0
