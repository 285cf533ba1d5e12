"""The demo reads every query's result through ``pe.scan`` with a nested projection, and
finds the rows DuckDB finds over every row group (it exits on a mismatch)."""

from __future__ import annotations

import io

from prune_engine.demo import DEMO_COLUMNS, DEMO_QUERIES, run_demo


def test_demo_scans_nested_columns(tmp_path):
    out = io.StringIO()
    run_demo(tmp_path, out=out)
    text = out.getvalue()
    assert any("." in c for c in DEMO_COLUMNS), "a nested projection"
    assert text.count("pe.scan read") == len(DEMO_QUERIES)
    assert text.count("same rows as a full scan") == len(DEMO_QUERIES)
    assert "client={'os':" in text and "items=[{'price':" in text, "the nested shape is shown"
