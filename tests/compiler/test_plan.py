"""Compiling pauses the cyclic garbage collector (plan.gc_paused) and leaves it as it was."""

from __future__ import annotations

import gc
import threading

import pyarrow as pa

import prune_engine as pe
from prune_engine.compiler import plan

SCHEMA = pa.schema([("container", pa.string()), ("num_records", pa.int64()),
                    ("min_values", pa.struct([("x", pa.int64())])),
                    ("max_values", pa.struct([("x", pa.int64())])),
                    ("null_count", pa.struct([("x", pa.int64())]))])


def test_compiling_pauses_the_collector_and_restores_it():
    seen = []
    original = plan._compile

    def spy(expr, schema):
        seen.append(gc.isenabled())
        return original(expr, schema)

    was = gc.isenabled()
    try:
        gc.enable()
        plan._compile = spy
        plan._compile_cached.cache_clear()
        pe.compile("x > 1 AND x < 7", SCHEMA)
        assert seen == [False], "paused while compiling"
        assert gc.isenabled(), "running again after"
        gc.disable()
        pe.compile("x > 2 AND x < 8", SCHEMA)
        assert not gc.isenabled(), "a collector the caller stopped stays stopped"
    finally:
        plan._compile = original
        (gc.enable if was else gc.disable)()


def test_nested_and_concurrent_pauses_resume_once_the_last_ends():
    was = gc.isenabled()
    gc.enable()
    try:
        inside, release = threading.Event(), threading.Event()

        def hold():
            with plan.gc_paused():
                inside.set()
                release.wait(10)

        other = threading.Thread(target=hold)
        other.start()
        inside.wait(10)
        with plan.gc_paused():
            with plan.gc_paused():
                assert not gc.isenabled()
        assert not gc.isenabled(), "the other thread still compiles"
        release.set()
        other.join(10)
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
