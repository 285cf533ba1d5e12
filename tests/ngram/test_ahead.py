"""Kernels compiled ahead by a helper process (ngram/_ahead.py): on a cold numba cache the
checksum and probe kernels come from the helper while the build kernel compiles here; a warm
cache, one CPU or the switch start no helper; a helper that fails or hangs changes nothing
but the time."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa

from prune_engine.ngram import _ahead
from prune_engine.ngram.build import build_index_column
from prune_engine.ngram.probe import like_may_match

VALUES = ["/cart/checkout", "/home", "/search?q=tea", "/about"]
GROUPS = [0, 2, 4]

#: a first build and probe in a fresh process; prints what it compiled itself, whether it
#: started a helper, the index and the mask (``setup`` runs first)
FIRST_CALL = """
import json, sys, time
import numpy as np, pyarrow as pa
from numba.core import event
compiled = []

class Count(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__name__)

    def on_end(self, e):
        pass

event.register("numba:compile", Count())
from prune_engine.ngram import _ahead
{setup}
from prune_engine.ngram.build import build_index_column
from prune_engine.ngram.probe import like_may_match
index = build_index_column(pa.array({values!r}), np.array({groups!r}))
mask = like_may_match(index, "%checkout%")
running = _ahead._proc is not None and _ahead._proc.poll() is None
print(json.dumps({{"compiled": compiled, "helper": _ahead._started, "running": running,
                   "index": [None if v is None else v.hex() for v in index.to_pylist()],
                   "mask": mask.tolist()}}))
"""


def first_call(cache_dir, setup: str = "", values: list[str] = VALUES, **env) -> dict:
    code = FIRST_CALL.format(setup=textwrap.dedent(setup), values=values, groups=GROUPS)
    run_env = {k: v for k, v in os.environ.items() if k != _ahead.ENV}
    run_env.update(NUMBA_CACHE_DIR=str(cache_dir), **env)
    done = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def expected() -> dict:
    """The index and mask of this process (whatever compiled its kernels)."""
    index = build_index_column(pa.array(VALUES), np.array(GROUPS))
    return {"index": [v.hex() for v in index.to_pylist()],
            "mask": like_may_match(index, "%checkout%").tolist()}


def kernels(result: dict) -> set[str]:
    return set(result["compiled"]) & {"build_entries_ascii", "checksums", "probe_entries"}


def test_a_cold_first_build_takes_the_next_kernels_from_a_helper_and_a_warm_one_starts_none(
        tmp_path):
    cold = first_call(tmp_path / "cache")
    assert cold["helper"] is True
    assert kernels(cold) == {"build_entries_ascii"}, "checksums and probe came from the helper"
    assert "_collect" not in cold["compiled"], "the ASCII kernel leaves the general collector out"
    assert {k: cold[k] for k in ("index", "mask")} == expected() and cold["mask"] == [True, False]
    warm = first_call(tmp_path / "cache")
    assert warm["helper"] is False and kernels(warm) == set(), "all loaded from the cache"
    assert {k: warm[k] for k in ("index", "mask")} == expected()


def test_the_general_build_kernel_is_cached_too(tmp_path):
    """Both build kernels are one closure, told apart by a constant: each has its own entry in
    numba's cache, which a new process finds."""
    values = ["/panier/écran", "/日本/検索", "/home", "/about"]
    first = first_call(tmp_path / "cache", values=values)
    assert "build_entries" in first["compiled"] and "build_entries_ascii" not in first["compiled"]
    again = first_call(tmp_path / "cache", values=values)
    assert kernels(again) == set() and "build_entries" not in again["compiled"]
    assert again["index"] == first["index"]


def test_switched_off_everything_compiles_here(tmp_path):
    result = first_call(tmp_path / "cache", **{_ahead.ENV: "0"})
    assert result["helper"] is False
    assert kernels(result) == {"build_entries_ascii", "checksums", "probe_entries"}
    assert {k: result[k] for k in ("index", "mask")} == expected()


def fake_python(folder, body: str) -> str:
    """An executable named ``python`` that runs the shell ``body`` instead."""
    folder.mkdir()
    path = folder / "python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_helper_that_cannot_start_or_fails_leaves_the_compile_here(tmp_path):
    for i, executable in enumerate([str(tmp_path / "nonexistent" / "python"),
                                    fake_python(tmp_path / "fails", "exit 1")]):
        result = first_call(tmp_path / f"cache{i}", setup=f"sys.executable = {executable!r}")
        assert result["helper"] is True, "it was tried"
        assert kernels(result) == {"build_entries_ascii", "checksums", "probe_entries"}
        assert {k: result[k] for k in ("index", "mask")} == expected()


def test_a_helper_that_hangs_is_waited_for_no_longer_than_its_limit(tmp_path):
    setup = f"""
        sys.executable = {fake_python(tmp_path / "hangs", "sleep 20")!r}
        _ahead.WAIT_S = 0.2
    """
    result = first_call(tmp_path / "cache", setup=setup)
    assert result["helper"] is True and result["running"] is True, "done before the helper"
    assert kernels(result) == {"build_entries_ascii", "checksums", "probe_entries"}
    assert {k: result[k] for k in ("index", "mask")} == expected()


def test_a_child_forked_while_the_helper_runs_waits_for_nothing(tmp_path):
    code = textwrap.dedent(f"""
        import os, sys
        from prune_engine.ngram import _ahead
        sys.executable = {fake_python(tmp_path / "hangs", "sleep 20")!r}
        _ahead.start(("checksums", "probe_entries"))
        assert _ahead._started and set(_ahead._ready) == {{"checksums", "probe_entries"}}
        pid = os.fork()
        if pid == 0:
            os._exit(0 if not _ahead._ready else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        _ahead._proc.kill()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={k: v for k, v in os.environ.items() if k != _ahead.ENV})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "0"


def test_one_cpu_an_embedding_program_or_the_switch_starts_no_helper(monkeypatch):
    monkeypatch.setattr(_ahead, "_started", False)
    monkeypatch.delenv(_ahead.ENV, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python3.11")
    assert _ahead.allowed()
    monkeypatch.setenv(_ahead.ENV, "0")
    assert not _ahead.allowed()
    monkeypatch.delenv(_ahead.ENV)
    monkeypatch.setattr(sys, "executable", "/usr/bin/uwsgi")
    assert not _ahead.allowed()
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python3.11")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not _ahead.allowed()
