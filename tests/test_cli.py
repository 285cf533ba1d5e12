"""The command line agrees with the library it wraps, and fails in one line.

Most cases run ``main([...])`` in this process; a few run ``python -m prune_engine.cli`` to
see the real exit codes, stderr and a closed pipe. The lake is the demo's, small: 3 days x 2
files x 4 row groups of 50 rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from importlib.metadata import entry_points

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from prune_engine import cli
from prune_engine.demo import make_lake
from tests.bloom.writer import needs_bloom_writer

QUERIES = [
    "country = 'IS' AND amount > 400",          # row groups pruned inside every file
    "day = DATE '2024-03-02'",                  # whole files pruned (a partition)
    "user_id IN (17, 5100)",                    # users cluster by file
    "url LIKE '%/gift-card/%'",                 # the n-gram index
    "amount < 0",                               # nothing kept
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli") / "lake"
    make_lake(root, days=3, files_per_day=2, rows_per_file=200, row_group_size=50)
    return root


@pytest.fixture(scope="module")
def stats_file(lake):
    path = lake.parent / "stats.parquet"
    assert cli.main(["stats", str(lake), "-o", str(path), "--ngram", "url"]) == 0
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def kept_paths(stats, sql: str) -> list[str]:
    """The files with at least one container ``pe.prune`` keeps, in the order the statistics
    first list them."""
    keep = pe.prune(stats, sql).to_pylist()
    paths = stats.column("path").to_pylist()
    kept = {p for p, k in zip(paths, keep) if k}
    return [p for p in dict.fromkeys(paths) if p in kept]


# ------------------------------------------------------------------------------ stats


def test_stats_saves_what_collect_stats_returns(lake, stats_file, capsys):
    expected = pe.collect_stats(lake, ngram=["url"], progress=False)
    saved = pe.read_stats(stats_file)
    assert saved.table.equals(expected.table), "the saved table is collect_stats' table"
    assert saved.metadata == expected.metadata, "with its metadata (file sizes, options)"
    code, out, err = run(capsys, "stats", lake, "-o", lake.parent / "files.parquet",
                         "--granularity", "file", "--threads", "1")
    assert code == 0 and err == "", "no progress bar when stderr is not a terminal"
    assert out.startswith("6 containers (files) of 6 files in ") and out.count("\n") == 1
    by_file = pe.read_stats(lake.parent / "files.parquet")
    assert by_file.column("row_group").null_count == 6, "file granularity: no row groups"


@needs_bloom_writer
def test_stats_with_bloom_filters(tmp_path, capsys):
    import pyarrow.parquet as pq

    lake = tmp_path / "lake"
    lake.mkdir()
    for i, k in enumerate([[11, 52, 7], [903, 4, 66]]):
        pq.write_table(pa.table({"k": k, "v": ["a", "b", "c"]}), lake / f"f{i}.parquet",
                       bloom_filter_options={"k": {"ndv": 10}})
    for argv, fields in ((["--bloom"], ["k"]), (["--bloom", "k"], ["k"]), ([], None)):
        out_file = tmp_path / "stats.parquet"
        code, out, err = run(capsys, "stats", lake, "-o", out_file, "--granularity", "file",
                             *argv)
        assert code == 0 and err == "", err
        stats = pe.read_stats(out_file)
        if fields is None:
            assert "bloom_filter" not in stats.schema.names and "Bloom" not in out
            continue
        assert [f.name for f in stats.schema.field("bloom_filter").type] == fields
        assert "bytes of Bloom filters" in out
        assert pe.prune(stats, "k = 52").to_pylist() == [True, False], "min/max alone keep both"
        assert pe.prune(stats, "k IN (66, 1000)").to_pylist() == [False, True]
    code, _, err = run(capsys, "stats", lake, "-o", tmp_path / "x.parquet", "--bloom", "v", "w")
    assert code == 2 and "bloom= names 'w'" in err


def test_stats_with_dictionaries(tmp_path, capsys):
    import pyarrow.parquet as pq

    lake = tmp_path / "lake"
    lake.mkdir()
    for i in range(2):
        pq.write_table(pa.table({"v": ["a", "b", "c"]}), lake / f"f{i}.parquet")
    code, _, err = run(capsys, "stats", lake, "-o", tmp_path / "d.parquet", "--dictionaries")
    assert code == 0 and err == "", err
    stats = pe.read_stats(tmp_path / "d.parquet")
    assert pe.prune(stats, "v != 'a'").to_pylist() == [True] * 2, "b and c are not 'a'"
    assert pe.prune(stats, "v NOT IN ('a', 'b', 'c')").to_pylist() == [False] * 2


def test_stats_of_a_delta_table(tmp_path, capsys):
    from deltalake import write_deltalake

    root = tmp_path / "delta"
    write_deltalake(str(root), pa.table({"x": [1, 5], "p": ["a", "a"]}), partition_by=["p"])
    write_deltalake(str(root), pa.table({"x": [7, 9], "p": ["b", "b"]}), mode="append",
                    partition_by=["p"])
    for version, files in ((None, 2), (0, 1)):
        out_file = tmp_path / f"delta_{version}.parquet"
        argv = ["stats", root, "-o", out_file, "--granularity", "file", "--delta"]
        code, out, err = run(capsys, *argv, *(["--version", version] if version is not None else []))
        assert code == 0 and err == "", err
        assert out.startswith(f"{files} containers (files) from the Delta log in "), out
        expected = pe.stats_from_delta(str(root), version=version)
        assert pe.read_stats(out_file).table.equals(expected.table)
    saved = pe.read_stats(tmp_path / "delta_None.parquet")
    assert pe.prune(saved, "x > 6").to_pylist() == ["p=b" in p for p in saved.column("path").to_pylist()]


def test_stats_of_an_iceberg_table(tmp_path):
    """The catalog is configured as PyIceberg reads it, by environment variables (read when
    PyIceberg is first imported: so in a process of its own)."""
    from pyiceberg.catalog.sql import SqlCatalog

    uri, warehouse = f"sqlite:///{tmp_path}/c.db", f"file://{tmp_path}"
    catalog = SqlCatalog("lake", uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=pa.schema([("x", pa.int64())]))
    table.append(pa.table({"x": [1, 5]}))
    table.append(pa.table({"x": [7, 9]}))
    env = dict(os.environ, PYICEBERG_CATALOG__LAKE__TYPE="sql", PYICEBERG_CATALOG__LAKE__URI=uri,
               PYICEBERG_CATALOG__LAKE__WAREHOUSE=warehouse)
    out_file = tmp_path / "iceberg.parquet"
    done = subprocess.run([sys.executable, "-m", "prune_engine.cli", "stats", "db.t", "-o",
                           str(out_file), "--granularity", "file", "--iceberg", "lake"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("2 containers (files) from the Iceberg manifests in ")
    saved = pe.read_stats(out_file)
    assert saved.table.equals(pe.stats_from_iceberg(catalog, "db.t").table)
    assert pe.prune(saved, "x > 6").to_pylist() == [False, True]
    missing = subprocess.run([sys.executable, "-m", "prune_engine.cli", "stats", "db.nope", "-o",
                              str(out_file), "--granularity", "file", "--iceberg", "lake"],
                             env=env, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    assert "db.nope" in missing.stderr


# ------------------------------------------------------------------------------ prune


@pytest.mark.parametrize("sql", QUERIES)
def test_prune_paths_are_the_kept_files(stats_file, capsys, sql):
    stats = pe.read_stats(stats_file)
    code, out, err = run(capsys, "prune", stats_file, sql, "--format", "paths")
    assert code == 0 and err == ""
    assert out.splitlines() == kept_paths(stats, sql), "exactly the files pe.prune keeps"


@pytest.mark.parametrize("sql", QUERIES)
def test_prune_json_agrees_with_pe_prune(stats_file, capsys, sql):
    stats = pe.read_stats(stats_file)
    mask = pe.prune(stats, sql)
    code, out, _ = run(capsys, "prune", stats_file, sql, "--format", "json")
    report = json.loads(out)
    assert code == 0 and out.count("\n") == 1, "one object on one line"
    assert report["containers_total"] == 24
    assert report["containers_kept"] == pc.sum(mask).as_py()
    assert report["kept_containers"] == stats.column("container").filter(mask).to_pylist()
    assert report["kept_paths"] == kept_paths(stats, sql)
    files = sorted(set(stats.column("path").to_pylist()))
    assert report["files_total"] == 6 and report["files_kept"] == len(report["kept_paths"])
    sizes = {f: os.path.getsize(f) for f in files}
    assert report["bytes_total"] == sum(sizes.values()), "the sizes on disk"
    assert report["bytes_skipped"] == sum(s for f, s in sizes.items()
                                          if f not in report["kept_paths"])


def test_prune_table_for_people(stats_file, capsys):
    sql = "day = DATE '2024-03-02'"
    code, out, _ = run(capsys, "prune", stats_file, sql)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "kept 8 of 24 containers (67% pruned), in 2 of 6 files", \
        "one day of three: its 2 files, 4 row groups each"
    assert lines[1].startswith("skipped 4 files whole: ") and "kB of " in lines[1]
    assert [line.strip() for line in lines[3:]] == kept_paths(pe.read_stats(stats_file), sql)


def test_prune_lists_files_in_the_statistics_order():
    """Regression: the files were grouped with ``Table.group_by``, whose output order Arrow
    does not promise even on one thread; CI once saw a kept file listed out of place."""
    names = ["z", "b", "z", "a", "b", "c"] * 50
    stats = pa.table({
        "container": [f"{p}#{i}" for i, p in enumerate(names)],
        "path": pa.chunked_array([names[:7], names[7:150], names[150:]]),
        "num_records": [1] * len(names),
        "min_values": [{"x": i % 7} for i in range(len(names))],
        "max_values": [{"x": i % 7} for i in range(len(names))],
        "null_count": [{"x": 0}] * len(names)})
    for sql in ("x < 3", "x = 4", "x > 100", "x >= 0"):
        report = cli.prune_report(stats, sql)
        assert report["kept_paths"] == kept_paths(stats, sql), sql
        assert report["files_total"] == 4 and report["files_kept"] == len(report["kept_paths"])


def test_prune_without_recorded_sizes_says_so(tmp_path, capsys):
    path = tmp_path / "plain.parquet"
    pe.StatsTable(pa.table({
        "container": ["a", "b"], "num_records": [2, 2],
        "min_values": [{"x": 0}, {"x": 6}], "max_values": [{"x": 4}, {"x": 9}],
        "null_count": [{"x": 0}, {"x": 0}]})).save(path)
    code, out, _ = run(capsys, "prune", path, "x > 5")
    assert code == 0 and "bytes skipped: unknown" in out, "no sizes: not invented"
    _, out, _ = run(capsys, "prune", path, "x > 5", "--format", "json")
    report = json.loads(out)
    assert report["bytes_skipped"] is None and report["bytes_total"] is None
    assert report["kept_paths"] == ["b"], "without a path column, the container is the file"


# ------------------------------------------------------------------------------ explain


def test_explain_lists_the_pruned_with_their_reason(stats_file, capsys):
    sql = "country = 'IS' AND amount > 400"
    expected = pe.explain(pe.read_stats(stats_file), sql)
    pruned = expected.filter(pc.invert(expected.column("keep")))
    code, out, _ = run(capsys, "explain", stats_file, sql, "--limit", "0")
    assert code == 0
    assert out.startswith(f"pruned {pruned.num_rows} of 24 containers")
    rows = [line.split() for line in out.splitlines() if line.startswith("NONE ")]
    assert [r[1] for r in rows] == pruned.column("container").to_pylist()
    for line, reason in zip([x for x in out.splitlines() if x.startswith("NONE ")],
                            pruned.column("reason").to_pylist()):
        assert line.endswith(f"  {reason}"), "each pruned container with pe.explain's reason"
    answers = expected.column("answer").to_pylist()
    assert f"answers: {answers.count('none')} NONE (no row matches), {answers.count('some')} " \
        f"SOME (may match), {answers.count('all')} ALL (every row matches)" in out


def test_explain_all_and_limit(stats_file, capsys):
    sql = "country = 'IS'"
    keep = pe.explain(pe.read_stats(stats_file), sql).column("keep").to_pylist()
    _, out, _ = run(capsys, "explain", stats_file, sql, "--all", "--limit", "0")
    verdicts = [line.split()[0] for line in out.splitlines()
                if line.startswith(("NONE ", "SOME ", "ALL "))]
    answers = pe.explain(pe.read_stats(stats_file), sql).column("answer").to_pylist()
    assert verdicts == [a.upper() for a in answers], "every container, in order"
    assert [a != "none" for a in answers] == keep
    _, out, _ = run(capsys, "explain", stats_file, sql, "--all", "--limit", "3")
    assert out.splitlines()[-1] == "... 21 more (--limit 0 shows them all)"


# ------------------------------------------------------------------------------ scan


@pytest.mark.parametrize("sql, flatten", [("country = 'IS' AND amount > 100", False),
                                           ("country = 'IS' AND amount > 100", True),
                                           ("day = DATE '2024-03-02' AND user_id < 9000", False)])
def test_scan_writes_what_pe_scan_returns(lake, stats_file, tmp_path, capsys, sql, flatten):
    out_file = tmp_path / "out.parquet"
    argv = ["scan", lake, "--where", sql, "--columns", "ts,client.os", "--columns",
            "items.price", "-o", out_file, "--stats", stats_file]
    code, out, _ = run(capsys, *argv, *(["--flatten"] if flatten else []))
    stats = pe.read_stats(stats_file)
    expected = pe.scan(lake, where=sql, columns=["ts", "client.os", "items.price"],
                       stats=stats, flatten=flatten)
    assert code == 0 and expected.num_rows > 0
    assert pq.read_table(out_file).equals(expected), "the file holds pe.scan's table"
    kept = pc.sum(pe.prune(stats, sql)).as_py()
    files = len(kept_paths(stats, sql))
    assert out.startswith(f"wrote {expected.num_rows} rows to {out_file}; read {kept} of 24 "
                          f"row groups in {files} of 6 files"), "what pe.prune keeps"


def test_scan_top_k_and_limit(lake, stats_file, tmp_path, capsys):
    out_file = tmp_path / "top.parquet"
    code, out, _ = run(capsys, "scan", lake, "--order-by", "ts DESC", "--limit", "5",
                       "--columns", "ts", "-o", out_file, "--stats", stats_file)
    expected = pe.scan(lake, columns=["ts"], order_by="ts DESC", limit=5,
                       stats=pe.read_stats(stats_file))
    assert code == 0 and pq.read_table(out_file).equals(expected)
    assert expected.column("ts").to_pylist() == sorted(
        pq.read_table(lake, columns=["ts"]).column("ts").to_pylist(), reverse=True)[:5]
    assert "read 1 of 24 row groups in 1 of 6 files" in out
    code, out, _ = run(capsys, "scan", lake, "--where", "amount > 0", "--limit", "7", "-o",
                       out_file, "--format", "json")
    assert code == 0 and json.loads(out)["rows"] == pq.read_table(out_file).num_rows == 7
    code, _, err = run(capsys, "scan", lake, "--order-by", "ts", "-o", out_file)
    assert code == 2 and "limit" in err


def test_scan_without_where_or_stats_reads_everything(lake, tmp_path, capsys):
    out_file = tmp_path / "all.parquet"
    code, out, _ = run(capsys, "scan", lake, "--columns", "user_id", "-o", out_file)
    assert code == 0 and "read 24 of 24 row groups in 6 of 6 files" in out
    assert pq.read_table(out_file).num_rows == 6 * 200


def test_column_paths_split_outside_backticks():
    assert cli.column_paths("a.b, `x,y`.z,c") == ["a.b", "`x,y`.z", "c"]


# ------------------------------------------------------------------------------ errors


def _errors(lake, stats_file, tmp_path):
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1 this is no parquet file")
    data_file = next(lake.rglob("*.parquet"))
    return {
        "missing source": (["stats", tmp_path / "nowhere", "-o", tmp_path / "s.parquet"],
                           "no such file or directory"),
        "bad SQL": (["prune", stats_file, "amount > AND 5"], "(line 1, column"),
        "unknown column": (["prune", stats_file, "nope > 1"], "unknown column 'nope'"),
        "type mismatch": (["explain", stats_file, "url > 5"], "cannot compare"),
        "corrupt stats": (["prune", garbage, "amount > 1"], "not a readable statistics file"),
        "not stats": (["prune", data_file, "amount > 1"], "not a prune_engine statistics"),
        "missing stats": (["explain", tmp_path / "none.parquet", "amount > 1"], "none.parquet"),
        "bad format": (["prune", stats_file, "amount > 1", "--format", "xml"],
                       "invalid choice: 'xml'"),
        "bad threads": (["stats", lake, "-o", tmp_path / "s.parquet", "--threads", "0"],
                        "positive integer"),
        "unknown path": (["scan", lake, "--columns", "client.nope", "-o",
                          tmp_path / "o.parquet"], "client.nope"),
        "no command": ([], "required: COMMAND"),
        "delta by row group": (["stats", lake, "-o", tmp_path / "s.parquet", "--delta"],
                               "it takes --granularity file"),
        "version without delta": (["stats", lake, "-o", tmp_path / "s.parquet", "--granularity",
                                   "file", "--version", "1"], "--version is a Delta table's"),
        "not a delta table": (["stats", lake, "-o", tmp_path / "s.parquet", "--granularity",
                               "file", "--delta"], "Delta"),
    }


@pytest.mark.parametrize("case", ["missing source", "bad SQL", "unknown column",
                                  "type mismatch", "corrupt stats", "not stats",
                                  "missing stats", "bad format", "bad threads", "unknown path",
                                  "no command", "delta by row group", "version without delta",
                                  "not a delta table"])
def test_errors_are_one_line_exit_2(lake, stats_file, tmp_path, capsys, case):
    argv, needle = _errors(lake, stats_file, tmp_path)[case]
    code, out, err = run(capsys, *argv)
    assert code == 2, f"{case}: the command cannot run as given"
    assert out == "", "nothing on stdout"
    assert err.count("\n") == 1 and err.startswith("prune-engine: error: "), err
    assert needle in err, err


def test_warnings_are_one_line(stats_file, capsys, monkeypatch):
    def noisy(stats, sql):
        warnings.warn("first line\n  second line")
        return {"kept_paths": []}

    monkeypatch.setattr(cli, "prune_report", noisy)
    code, out, err = run(capsys, "prune", stats_file, "amount > 1", "--format", "paths")
    assert code == 0 and err == "prune-engine: warning: first line second line\n"


def test_os_failures_while_running_exit_1(stats_file, capsys, monkeypatch):
    def full_disk(stats, sql):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "prune_report", full_disk)
    code, out, err = run(capsys, "prune", stats_file, "amount > 1")
    assert code == 1 and out == ""
    assert err == "prune-engine: error: [Errno 28] No space left on device\n"


def test_bench_outside_a_checkout(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "bench_script", lambda: tmp_path / "bench" / "run.py")
    code, out, err = run(capsys, "bench", "--quick")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "source checkout" in err and "make bench" in err


@pytest.mark.parametrize("command", ["stats", "prune", "explain", "scan", "demo",
                                     "spark-demo", "bench"])
def test_every_command_has_help_with_an_example(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and f"usage: prune-engine {command}" in out
    assert "\nexample:\n  prune-engine " + command in out


def test_installed_as_a_console_script():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "prune-engine"]
    assert script.value == "prune_engine.cli:main"


# ------------------------------------------------------------------------------ real processes


def _module(*argv, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "prune_engine.cli", *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_process_exit_codes_and_stderr(stats_file):
    proc = _module("prune", stats_file, "nope > 1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == b""
    assert err.decode().startswith("prune-engine: error: unknown column 'nope'")
    assert err.count(b"\n") == 1 and b"Traceback" not in err
    proc = _module("prune", stats_file, "day = DATE '2024-03-02'", "--format", "paths")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == b""
    assert out.decode().splitlines() == kept_paths(pe.read_stats(stats_file),
                                                   "day = DATE '2024-03-02'")


def test_closed_pipe_ends_quietly(stats_file):
    """As ``prune-engine explain ... | head -0``: the reader is gone before the first write."""
    proc = _module("explain", stats_file, "amount > 1", "--all", "--limit", "0")
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == cli.EXIT_PIPE
    assert err == b"", "no BrokenPipeError traceback"


# ------------------------------------------------------------------------------ formats (#22)


@pytest.fixture(scope="module")
def bad_lake(lake, tmp_path_factory):
    """The lake with one file that is not Parquet (a truncated upload, say)."""
    import shutil

    root = tmp_path_factory.mktemp("bad") / "lake"
    shutil.copytree(lake, root)
    broken = sorted(root.rglob("*.parquet"))[2]
    broken.write_bytes(b"PAR1 not parquet at all")
    return root, str(broken)


@pytest.mark.parametrize("command, formats", [("stats", "table,json"),
                                              ("prune", "table,json,csv,paths"),
                                              ("explain", "table,json,csv"),
                                              ("scan", "table,json")])
def test_help_documents_the_formats(capsys, command, formats):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and f"--format {{{formats}}}" in out
    help_text = " ".join(out.split())
    for name in formats.split(","):
        assert f"{name}:" in help_text, f"{command} --help says what --format {name} prints"
    if command in ("stats", "scan"):
        assert "--on-error {raise,skip}" in out and "skipped_files" in help_text


def test_prune_csv_is_one_row_per_file(stats_file, capsys):
    import csv
    import io

    sql = "day = DATE '2024-03-02' AND country = 'IS'"
    stats = pe.read_stats(stats_file)
    code, out, err = run(capsys, "prune", stats_file, sql, "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["path", "kept", "containers", "containers_kept", "bytes"]
    assert [r["path"] for r in rows] == list(dict.fromkeys(stats.column("path").to_pylist()))
    kept = kept_paths(stats, sql)
    assert [r["path"] for r in rows if r["kept"] == "true"] == kept
    assert all(r["kept"] in ("true", "false") for r in rows)
    mask = pe.prune(stats, sql).to_pylist()
    for r in rows:
        mine = [k for p, k in zip(stats.column("path").to_pylist(), mask) if p == r["path"]]
        assert (int(r["containers"]), int(r["containers_kept"])) == (len(mine), sum(mine))
        assert int(r["bytes"]) == os.path.getsize(r["path"]), "the size recorded on disk"


def test_prune_limit(stats_file, capsys):
    sql = "amount > 1"  # keeps every file
    _, out, _ = run(capsys, "prune", stats_file, sql, "--limit", "2")
    lines = out.splitlines()
    assert [line.strip() for line in lines[3:5]] == kept_paths(pe.read_stats(stats_file), sql)[:2]
    assert lines[5:] == ["... 4 more (--limit 0 shows them all)"]
    _, out, _ = run(capsys, "prune", stats_file, sql, "--format", "paths", "--limit", "3")
    assert out.splitlines() == kept_paths(pe.read_stats(stats_file), sql)[:3], "as | head -3"
    _, out, _ = run(capsys, "prune", stats_file, sql, "--format", "json", "--limit", "1")
    report = json.loads(out)
    assert len(report["kept_paths"]) == 1 and len(report["kept_containers"]) == 1
    assert report["files_kept"] == 6 and report["containers_kept"] == 24, "counts stay whole"
    _, out, _ = run(capsys, "prune", stats_file, sql, "--format", "csv", "--limit", "0")
    assert len(out.splitlines()) == 7, "a header and every file"


def test_prune_table_lists_at_most_20_paths_by_default(tmp_path, capsys):
    path = tmp_path / "many.parquet"
    n = 25
    pe.StatsTable(pa.table({
        "container": [f"f{i}" for i in range(n)], "num_records": [1] * n,
        "min_values": [{"x": i} for i in range(n)], "max_values": [{"x": i} for i in range(n)],
        "null_count": [{"x": 0}] * n})).save(path)
    _, out, _ = run(capsys, "prune", path, "x >= 0")
    assert [line for line in out.splitlines() if line.startswith("  ")] == \
        [f"  f{i}" for i in range(20)]
    assert out.splitlines()[-1] == "... 5 more (--limit 0 shows them all)"
    _, out, _ = run(capsys, "prune", path, "x >= 0", "--format", "paths")
    assert out.splitlines() == [f"f{i}" for i in range(n)], "scripts get every path"


def test_explain_json_agrees_with_pe_explain(stats_file, capsys):
    sql = "country = 'IS' AND amount > 400"
    expected = pe.explain(pe.read_stats(stats_file), sql).to_pylist()
    code, out, err = run(capsys, "explain", stats_file, sql, "--format", "json")
    assert code == 0 and err == "" and out.count("\n") == 1, "one object on one line"
    report = json.loads(out)
    pruned = [r for r in expected if not r["keep"]]
    assert report["predicate"] == sql and report["containers_total"] == len(expected)
    assert report["containers_pruned"] == len(pruned)
    assert report["containers"] == pruned, "the pruned containers, every one, with reasons"
    assert report["containers_omitted"] == 0
    assert sum(report["reasons"].values()) == len(pruned)
    _, out, _ = run(capsys, "explain", stats_file, sql, "--format", "json", "--all", "--limit",
                    "5")
    report = json.loads(out)
    assert report["containers"] == expected[:5] and report["containers_omitted"] == 19


def test_explain_csv(stats_file, capsys):
    import csv
    import io

    sql = "country = 'IS'"
    expected = pe.explain(pe.read_stats(stats_file), sql).to_pylist()
    code, out, _ = run(capsys, "explain", stats_file, sql, "--format", "csv", "--all")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0] == ["container", "keep", "reason", "kept_because", "answer"]
    assert rows[1:] == [[r["container"], "true" if r["keep"] else "false", r["reason"] or "",
                         r["kept_because"] or "", r["answer"]] for r in expected]


def test_nan_free_lets_float_ranges_prune_and_explain_says_why(lake, stats_file, tmp_path,
                                                                 capsys):
    sql = "amount > 450"
    _, out, _ = run(capsys, "explain", stats_file, sql, "--all", "--limit", "0")
    assert out.startswith("pruned 0 of 24 containers"), "pyarrow writes no NaN counts"
    assert f"  {sql}: may hold NaN: nan_count unknown" in out, "the kept ones say why"
    declared = tmp_path / "nan_free.parquet"
    code, _, err = run(capsys, "stats", lake, "-o", declared, "--nan-free", "amount")
    assert code == 0 and err == ""
    stats = pe.read_stats(declared)
    assert stats.metadata["collect"]["nan_free"] == ["amount"], "the promise is saved with it"
    code, out, _ = run(capsys, "explain", declared, sql, "--format", "json", "--all")
    report = json.loads(out)
    assert code == 0 and report["containers_pruned"] > 0, "the range prunes now"
    assert not any("NaN" in reason for reason in report["kept_reasons"]), report
    for row in report["containers"]:
        path, group = row["container"].split("#rg=")
        amounts = pq.ParquetFile(path).read_row_group(int(group), ["amount"]).column(0)
        assert row["keep"] or not pc.any(pc.greater(amounts, 450)).as_py(), \
            f"{row['container']} holds an amount > 450 but was pruned"
        assert (row["reason"] is None) == row["keep"] == (row["kept_because"] is not None)
    code, out, err = run(capsys, "stats", lake, "-o", declared, "--nan-free", "amount,country")
    assert code == 2 and out == "" and "only float columns can hold NaN" in err


def test_stats_json(lake, tmp_path, capsys):
    out_file = tmp_path / "s.parquet"
    code, out, err = run(capsys, "stats", lake, "-o", out_file, "--granularity", "file",
                         "--format", "json")
    assert code == 0 and err == "" and out.count("\n") == 1
    summary = json.loads(out)
    assert summary["output"] == str(out_file) and summary["source_format"] == "parquet"
    assert (summary["containers"], summary["files"], summary["granularity"]) == (6, 6, "file")
    assert summary["skipped_files"] == [] and summary["bloom_bytes_read"] is None
    assert summary["seconds"] >= 0


def test_stats_on_error(bad_lake, tmp_path, capsys):
    root, broken = bad_lake
    out_file = tmp_path / "s.parquet"
    code, out, err = run(capsys, "stats", root, "-o", out_file)
    assert code == 2 and out == "" and err.count("\n") == 1, "raise: the default"
    assert err.startswith(f"prune-engine: error: {broken}: ") and "Traceback" not in err
    code, out, err = run(capsys, "stats", root, "-o", out_file, "--on-error", "skip",
                         "--format", "json")
    assert code == 0
    summary = json.loads(out)
    assert [s["path"] for s in summary["skipped_files"]] == [broken]
    assert err.splitlines() == [f"prune-engine: warning: skipped {broken}: "
                                + summary["skipped_files"][0]["error"].split(": ", 1)[1]]
    stats = pe.read_stats(out_file)
    assert stats.metadata["skipped_files"] == summary["skipped_files"]
    assert pe.prune(stats, "amount < 0").to_pylist().count(True) == 1, \
        "the skipped file's container has unknown statistics: always kept"
    _, out, err = run(capsys, "stats", root, "-o", out_file, "--on-error", "skip")
    assert "1 unreadable files skipped" in out and err.count("\n") == 1


def test_on_error_needs_parquet_footers(lake, tmp_path, capsys):
    code, _, err = run(capsys, "stats", lake, "-o", tmp_path / "s.parquet", "--granularity",
                       "file", "--delta", "--on-error", "skip")
    assert code == 2 and "no --ngram, --bloom" in err and "--on-error" in err


def test_scan_json(lake, stats_file, tmp_path, capsys):
    out_file = tmp_path / "o.parquet"
    sql = "country = 'IS' AND amount > 100"
    code, out, err = run(capsys, "scan", lake, "--where", sql, "--stats", stats_file, "-o",
                         out_file, "--format", "json")
    assert code == 0 and err == ""
    summary = json.loads(out)
    table, expected = pe.scan(lake, where=sql, stats=pe.read_stats(stats_file),
                              return_summary=True)
    assert summary["rows"] == table.num_rows == pq.read_table(out_file).num_rows
    assert (summary["files_total"], summary["files_read"], summary["row_groups_total"],
            summary["row_groups_read"]) == (expected.files_total, expected.files_read,
                                            expected.row_groups_total, expected.row_groups_read)
    assert summary["skipped_files"] == [] and summary["output"] == str(out_file)


@pytest.mark.parametrize("where", [None, "amount > 400"])
def test_scan_on_error(bad_lake, tmp_path, capsys, where):
    root, broken = bad_lake
    out_file = tmp_path / "o.parquet"
    argv = ["scan", root, "-o", out_file, "--columns", "user_id,amount"]
    argv += ["--where", where] if where else []
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, "raise: the default"
    assert err.startswith(f"prune-engine: error: {broken}: not a readable Parquet file")
    code, out, err = run(capsys, *argv, "--on-error", "skip", "--format", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert [s["path"] for s in summary["skipped_files"]] == [broken]
    assert err.startswith(f"prune-engine: warning: skipped {broken}: ") and err.count("\n") == 1
    good = [str(p) for p in sorted(root.rglob("*.parquet")) if str(p) != broken]
    expected = pe.scan(good, where=where, columns=["user_id", "amount"])
    assert pq.read_table(out_file).equals(expected), "the rows of every other file"
    assert summary["files_total"] == 6, "the skipped file is one of the source's"
    if where is None:
        assert summary["files_read"] == 5
    assert summary["rows"] == expected.num_rows


# -------------------------------------------------------------------------- one-line errors (#22)


def test_missing_stats_file_says_so(tmp_path, capsys):
    code, out, err = run(capsys, "prune", tmp_path / "nope.parquet", "x > 1")
    assert code == 2 and out == ""
    assert err == f"prune-engine: error: {tmp_path / 'nope.parquet'}: no such statistics file\n"


@pytest.mark.parametrize("argv, needle", [
    (["scan", "{lake}", "--where", "amount > AND 1", "-o", "{tmp}/o.parquet"], "(line 1, column"),
    (["scan", "{lake}", "--where", "nope > 1", "-o", "{tmp}/o.parquet"], "'nope'"),
    (["explain", "{stats}", "amount >"], "(line 1, column"),
    (["prune", "{lake}", "x > 1"], "a directory, not a statistics file"),
])
def test_more_user_errors_are_one_line(lake, stats_file, tmp_path, capsys, argv, needle):
    argv = [a.format(lake=lake, stats=stats_file, tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("prune-engine: error: ") and needle in err


def test_spark_demo_without_pyspark_is_one_line(capsys, monkeypatch):
    for name in [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if it were not installed
    code, out, err = run(capsys, "spark-demo")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("prune-engine: error: the Spark demo needs pyspark")
    assert "pip install 'prune_engine[spark]'" in err


def test_spark_demo_without_pyspark_in_a_process():
    code = ("import sys; sys.modules['pyspark'] = None; from prune_engine.cli import main; "
            "raise SystemExit(main(['spark-demo']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "needs pyspark" in done.stderr, done.stderr


def test_spark_that_cannot_start_is_one_line():
    """No Java: pyspark raises its own error types from getOrCreate."""
    from prune_engine.demo import _local_session
    from prune_engine.errors import MissingDependencyError

    class Builder:
        def master(self, *_):
            return self

        appName = config = master

        def getOrCreate(self):
            raise RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited before "
                               "sending its port number.\nmore detail")

    class FakeSession:
        builder = Builder()

    with pytest.raises(MissingDependencyError) as err:
        _local_session(FakeSession)
    assert err.value.package == "java" and "\n" not in str(err.value)
    assert "JAVA_GATEWAY_EXITED" in str(err.value) and "Java 17" in str(err.value)


def test_internal_errors_are_one_line_exit_1(stats_file, capsys, monkeypatch):
    def bug(stats, sql):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "prune_report", bug)
    monkeypatch.delenv(cli.TRACEBACK_VARIABLE, raising=False)
    code, out, err = run(capsys, "prune", stats_file, "amount > 1")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith("prune-engine: error: internal error: ZeroDivisionError: division "
                          "by zero (a bug: please report it; PRUNE_ENGINE_TRACEBACK=1 shows")
    monkeypatch.setenv(cli.TRACEBACK_VARIABLE, "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["prune", str(stats_file), "amount > 1"])


def test_a_missing_package_elsewhere_is_one_line(stats_file, capsys, monkeypatch):
    def needs(stats, sql):
        raise ModuleNotFoundError("No module named 'deltalake'", name="deltalake")

    monkeypatch.setattr(cli, "prune_report", needs)
    code, _, err = run(capsys, "prune", stats_file, "amount > 1")
    assert code == 2 and err == ("prune-engine: error: a Python package this command needs is "
                                 "not installed: No module named 'deltalake'\n")
