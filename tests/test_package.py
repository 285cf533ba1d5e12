"""The package's top level: its entry points are functions, whatever subpackage was imported."""

import importlib

import prune_engine as pe


def test_entry_points_stay_functions_after_their_subpackages_load():
    for module in ("prune_engine.scanning.api", "prune_engine.compiler.plan", "prune_engine.stats.collect"):
        importlib.import_module(module)
    for name in ("scan", "scan_batches", "compile", "prune", "explain", "collect_stats", "update_stats",
                 "stats_from_delta", "stats_from_iceberg"):
        assert callable(getattr(pe, name)), f"pe.{name} is {getattr(pe, name)!r}"
    assert pe.scan.__module__ == "prune_engine.scanning.api"
    assert pe.compile.__module__ == "prune_engine.api"
