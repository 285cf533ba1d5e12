"""``prune-engine explain ... --pages``: the row ranges of each kept row group, from the page
index, in each format, equal to ``pe.explain(..., pages=True)``; a file gone since the
statistics were taken fails in one line naming it."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine import cli

SQL = "a = 5 OR b = 1707"


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_pages") / "lake"
    root.mkdir()
    for f in range(2):
        a = np.arange(f * 2000, (f + 1) * 2000, dtype=np.int64)
        pq.write_table(pa.table({"a": a, "b": a + 700 * (1 - 2 * f)}), root / f"p{f}.parquet",
                       row_group_size=500, write_page_index=True, data_page_size=256,
                       write_batch_size=40)
    return root


@pytest.fixture(scope="module")
def stats_file(lake):
    path = lake.parent / "stats.parquet"
    assert cli.main(["stats", str(lake), "-o", str(path)]) == 0
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def expected(stats_file) -> list[dict]:
    return pe.explain(pe.read_stats(stats_file), SQL, pages=True).to_pylist()


def test_json_has_the_ranges_of_pe_explain(stats_file, capsys):
    code, out, err = run(capsys, "explain", stats_file, SQL, "--pages", "--all",
                         "--format", "json")
    assert code == 0 and err == "" and out.count("\n") == 1, "one object on one line"
    report = json.loads(out)
    want = expected(stats_file)
    assert report["containers"] == want, "each container with rows_selected and row_ranges"
    kept = [r for r in want if r["keep"]]
    assert report["pages"] == {
        "rows_kept": 500 * len(kept),
        "rows_selected": sum(r["rows_selected"] for r in kept),
        "ranges": sum(len(r["row_ranges"]) for r in kept),
        "row_groups_without_ranges": 0}
    assert 0 < report["pages"]["rows_selected"] < 200, "pages pruned inside the row groups"


def test_csv_has_two_more_columns(stats_file, capsys):
    code, out, _ = run(capsys, "explain", stats_file, SQL, "--pages", "--all",
                       "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0][-2:] == ["rows_selected", "row_ranges"]
    for row, r in zip(rows[1:], expected(stats_file), strict=True):
        assert row[-2] == str(r["rows_selected"])
        assert row[-1] == ";".join(f"{x['row_start']}+{x['row_count']}" for x in r["row_ranges"])


def test_table_says_the_rows_selected(stats_file, capsys):
    code, out, _ = run(capsys, "explain", stats_file, SQL, "--pages", "--all")
    want = expected(stats_file)
    total = sum(r["rows_selected"] for r in want)
    kept = sum(r["keep"] for r in want)
    assert code == 0
    assert f"pages: {total} of {500 * kept} rows of the kept row groups may match" in out
    for r in want:
        if r["keep"]:
            text = ";".join(f"{x['row_start']}+{x['row_count']}" for x in r["row_ranges"])
            assert f"[rows {r['rows_selected']}: {text}]" in out, r["container"]


def test_without_pages_no_page_index_is_read(stats_file, capsys):
    _, out, _ = run(capsys, "explain", stats_file, SQL, "--all", "--format", "json")
    report = json.loads(out)
    assert "pages" not in report and "rows_selected" not in report["containers"][0]
    _, out, _ = run(capsys, "explain", stats_file, SQL, "--format", "csv")
    assert out.splitlines()[0] == "container,keep,reason,kept_because,answer"


def test_a_missing_file_fails_in_one_line(tmp_path, capsys):
    path = tmp_path / "gone.parquet"
    pq.write_table(pa.table({"a": range(100)}), path, write_page_index=True)
    stats = tmp_path / "stats.parquet"
    assert cli.main(["stats", str(path), "-o", str(stats)]) == 0
    path.unlink()
    capsys.readouterr()
    code, out, err = run(capsys, "explain", stats, "a = 5", "--pages")
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "gone.parquet" in err, err
