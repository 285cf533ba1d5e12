"""The benchmark harness (``bench/run.py``, ``report.py``, ``plots.py``, ``peer_check.py``).

The report is rendered from a small hand-made pytest-benchmark JSON whose ratios are known; the
peer check fails on a peer that prunes what the rewrite keeps and notes a more conservative
one; ``run.main`` runs a tiny suite end to end (one passing, one failing on the peer check).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import peer_check  # noqa: E402
import plots  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def keep_mask(engine, size, scenario, seconds, kept, containers, more=0, less=0):
    """One test_keep_mask entry as pytest-benchmark writes it."""
    return {"group": f"{size} {scenario}", "name": f"test_keep_mask[{size}-{engine}-{scenario}]",
            "fullname": f"bench/test_bench_prune.py::test_keep_mask[{size}-{engine}-{scenario}]",
            "stats": {"median": seconds, "min": seconds, "mean": seconds},
            "extra_info": {"engine": engine, "size": size, "scenario": scenario, "kept": kept,
                           "containers": containers, "differs_from_floor": more,
                           "more_conservative": more, "less_conservative": less}}


def other(name, group, seconds, **info):
    return {"group": group, "name": name, "fullname": name,
            "stats": {"median": seconds, "min": seconds, "mean": seconds}, "extra_info": info}


#: floor times; prune is 2x and 8x the floor at 1k (geomean 4x), duckdb 100x everywhere
FLOOR = {("1k", "eq_int"): 1e-6, ("1k", "like_prefix"): 2e-6,
         ("10k", "eq_int"): 1e-5, ("10k", "like_prefix"): 2e-5}
PRUNE_RATIO = {("1k", "eq_int"): 2.0, ("1k", "like_prefix"): 8.0,
               ("10k", "eq_int"): 1.0, ("10k", "like_prefix"): 1.0}


@pytest.fixture
def data() -> dict:
    benchmarks = []
    for (size, scenario), floor in FLOOR.items():
        n = 1000 if size == "1k" else 10_000
        benchmarks += [keep_mask("floor", size, scenario, floor, n // 10, n),
                       keep_mask("prune", size, scenario, floor * PRUNE_RATIO[size, scenario],
                                 n // 10, n),
                       keep_mask("duckdb", size, scenario, floor * 100, n // 10, n),
                       keep_mask("pyiceberg", size, scenario, floor * 1000, n // 4, n,
                                 more=n // 4 - n // 10)]
    benchmarks += [
        other("fc_cold", "first_call", 0.4, engine="prune", scenario="eq_int", cache="cold",
              import_s=0.35, parse_s=4e-4, compile_s=1e-3, evaluate_s=5e-4, first_s=1.9e-3,
              second_s=6e-4),
        other("jit_cold", None, 9.0, seconds_in_process=8.5, cache="cold",
              what="import + n-gram build + probe"),
        other("size_exact", "ngram size vs fpr", 0.03, mode="exact", fpp=None, fpr=0.0,
              absent_pairs=100, bytes_per_container=30_000.0, parquet_bytes_per_container=18_000.0),
        other("size_bloom", "ngram size vs fpr", 0.02, mode="bloom", fpp=0.01, fpr=0.008,
              absent_pairs=100, bytes_per_container=5_000.0, parquet_bytes_per_container=18_000.0),
    ]
    return {"benchmarks": benchmarks, "machine_info": {"cpu": {"brand_raw": "Test CPU"}}}


def test_headline_has_the_geomean_ratios_of_the_numbers(data):
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in report.headline(data).splitlines() if line.startswith("| 1")}
    columns = report.ENGINES
    assert set(rows) == {"1k", "10k"}
    assert rows["1k"][columns.index("prune")] == "4.0×", "geomean of 2x and 8x"
    assert rows["10k"][columns.index("prune")] == "1.0×"
    assert rows["1k"][columns.index("duckdb")] == "100.0×"
    assert rows["1k"][columns.index("polars")] == "—", "an engine not in the run"


def test_peer_check_table_notes_the_more_conservative_peer(data):
    table = report.peer_check_table(report.load_results(data)[0])
    lines = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert set(lines) == {"floor", "duckdb", "pyiceberg"}
    assert "| 4 | 4 | — | — |" in lines["duckdb"]
    # 150 more at 1k (x2 predicates) and 1,500 at 10k (x2): 3,300 containers in 4 cases
    assert "| 4 | 0 | 4 cases, 3,300 containers (eq_int, like_prefix) | — |" in lines["pyiceberg"]


def test_report_puts_first_calls_apart_and_draws_the_plots(data, tmp_path):
    saved = plots.save_all(data, tmp_path)
    assert [name for name, _ in saved] == ["time_vs_containers.png", "ratio_to_floor.png",
                                           "pruning_rate.png", "ngram_size_vs_fpr.png"]
    for name, _ in saved:
        assert (tmp_path / name).read_bytes()[:8] == PNG, f"{name} should be a PNG"
    text = report.report(data, plots=saved)
    first_calls = text.index("## First-call costs")
    assert all(text.index(f"]({name})") < first_calls for name, _ in saved)
    for warm in ("## Keep-mask time per call", "## n-gram index: size against"):
        assert text.index(warm) < first_calls, "warm numbers come before the first calls"
    assert "| eq_int | cold | 350 ms | 400 µs | 1.00 ms | 500 µs | 1.90 ms | 600 µs |" in text
    assert "| import + n-gram build + probe | cold | 8.50 (target 3 s — MISS) |" in text
    assert "| bloom 1% | 5.0 kB | 27.8% | 0.80% | 20.0 ms |" in text, "5,000 / 18,000 bytes"
    assert "Machine: Test CPU" in text


def test_a_run_without_keep_mask_results_has_no_headline_or_prune_plots(data, tmp_path):
    only_ngram = {**data, "benchmarks": [b for b in data["benchmarks"]
                                         if b["group"] == "ngram size vs fpr"]}
    assert report.headline(only_ngram) == ""
    assert [name for name, _ in plots.save_all(only_ngram, tmp_path)] == ["ngram_size_vs_fpr.png"]


# -- the peer check ------------------------------------------------------------------------

REWRITE = np.array([True, True, False, False, False])
PRUNE = np.array([True, True, True, False, False])  # keeps one more than the rewrite


def test_peer_check_fails_on_a_less_conservative_peer():
    unsound = np.array([True, False, True, False, False])  # prunes container 1, rewrite keeps
    with pytest.raises(peer_check.UnsoundPeerError, match=r"prunes 1 container.*\[1\]"):
        peer_check.check("duckdb", unsound, PRUNE, REWRITE, exact=False)


def test_peer_check_notes_a_more_conservative_peer():
    more = np.array([True, True, True, True, False])
    checked = peer_check.check("pyiceberg", more, PRUNE, REWRITE, exact=False)
    assert (checked.kept, checked.more_conservative, checked.less_conservative) == (4, 1, 0)
    assert checked.differs_from_rewrite == 2


def test_peer_check_allows_pruning_what_only_prune_keeps():
    """Less conservative than pe.prune is fine where the rewrite prunes too."""
    checked = peer_check.check("duckdb", REWRITE, PRUNE, REWRITE, exact=True)
    assert (checked.more_conservative, checked.less_conservative) == (0, 1)


def test_peer_check_holds_exact_peers_to_the_rewrite():
    with pytest.raises(peer_check.PeerMismatchError, match="keeps 1 container"):
        peer_check.check("polars", PRUNE, PRUNE, REWRITE, exact=True)
    with pytest.raises(ValueError, match="different lengths"):
        peer_check.check("polars", PRUNE[:3], PRUNE, REWRITE, exact=False)


# -- run.main end to end on a tiny suite -----------------------------------------------------

TINY_SUITE = '''
import numpy as np
import peer_check

def test_keep_mask(benchmark):
    rewrite = np.array([True, False])
    mask = np.array([{mask}])
    checked = peer_check.check("duckdb", mask, rewrite, rewrite, exact=False)
    benchmark.extra_info.update(engine="duckdb", size="1k", scenario="eq_int", kept=checked.kept,
                                containers=2, more_conservative=checked.more_conservative,
                                less_conservative=checked.less_conservative)
    benchmark.pedantic(lambda: None, rounds=3)
'''


def _tiny_run(tmp_path, monkeypatch, mask: str) -> tuple[int, Path]:
    suite = tmp_path / "test_tiny.py"
    suite.write_text(textwrap.dedent(TINY_SUITE.format(mask=mask)))
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "PARTS", [run.Part("tiny", str(suite))])
    monkeypatch.setenv("PYTHONPATH", str(BENCH))
    out = tmp_path / "out"
    return run.main(["--output", str(out)]), out


def test_run_writes_the_report_results_and_latest_copy(tmp_path, monkeypatch, capsys):
    code, out = _tiny_run(tmp_path, monkeypatch, "True, True")
    assert code == 0
    data = json.loads((out / "results.json").read_text())
    assert [b["extra_info"]["more_conservative"] for b in data["benchmarks"]] == [1]
    assert "data" not in data["benchmarks"][0]["stats"], "per-round timings are left out"
    assert "machine_info" not in data and "commit_info" not in data, "host and checkout names"
    assert data["run"]["parts"][0]["result"] == "passed"
    assert {"cpu", "cores", "memory_gb", "os", "python"} <= set(data["run"]["machine"])
    text = (out / "report.md").read_text()
    assert "| tiny | passed | 1 |" in text and "1 cases, 1 containers (eq_int)" in text
    assert (tmp_path / ".benchmarks" / "latest" / "report.md").read_text() == text
    assert (out / "raw" / "tiny.json").exists() and (out / "time_vs_containers.png").exists()
    assert f"report: {out / 'report.md'}" in capsys.readouterr().out


def test_run_fails_when_a_peer_prunes_what_the_rewrite_keeps(tmp_path, monkeypatch, capsys):
    code, out = _tiny_run(tmp_path, monkeypatch, "False, False")
    assert code == 1
    printed = capsys.readouterr().out
    assert "UnsoundPeerError: duckdb prunes 1 container(s)" in printed
    assert "FAILED parts: tiny" in printed
    assert "| tiny | FAILED (pytest exit 1) | 0 |" in (out / "report.md").read_text()
