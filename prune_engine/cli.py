"""The command line: ``prune-engine COMMAND ...`` (also ``python -m prune_engine.cli COMMAND``).

Commands: ``stats`` (collect and save statistics), ``prune`` (which files a predicate keeps),
``explain`` (per container: kept or pruned, and why), ``scan`` (a pruned read into a Parquet
file), ``demo`` and ``spark-demo`` (:mod:`prune_engine.demo`), ``bench`` (the benchmark
harness of a source checkout). Each is a thin layer over the public functions: what it prints
is what ``pe.prune``, ``pe.explain`` and ``pe.scan`` return.

Conventions, the same for every command:

- results go to stdout, fit for pipes: no colours; a progress bar only on stderr, and only when
  stderr is a terminal. A closed pipe (``| head``) ends the command quietly.
- every error is ONE line on stderr, ``prune-engine: error: ...``, never a traceback; warnings
  are one line too (``prune-engine: warning: ...``).
- exit codes: 0 done; 2 the command cannot run as given: a usage mistake, or input that
  prune_engine rejects (every :class:`~prune_engine.PruneEngineError`: a missing source,
  malformed SQL, an unknown column, a type mismatch, a file that is not a statistics file, an
  output it cannot write), or ``bench`` outside a source checkout; 1 a failure outside
  prune_engine while running (an operating-system error; ``bench`` passes the harness's code
  on); 141 stdout was closed early (as for SIGPIPE); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

PROG = "prune-engine"
#: the exit codes (see the module doc)
EXIT_USAGE = 2
EXIT_FAILURE = 1
EXIT_PIPE = 141
EXIT_INTERRUPTED = 130
FORMATS = ("table", "json", "paths")


class CommandError(Exception):
    """An error the command line reports as one line, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        self.code = code
        super().__init__(message)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake reported as one line (not the usage block)."""

    def error(self, message: str):
        raise CommandError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------------------------ stats


def _stats(args) -> None:
    import prune_engine as pe

    started = time.perf_counter()
    table_format = "Delta log" if args.delta else "Iceberg manifests" if args.iceberg else None
    if table_format and (args.ngram or args.granularity == "row_group" or args.threads
                         or args.bloom is not None or args.dictionaries is not None
                         or args.compute_missing):
        raise CommandError(f"--{'delta' if args.delta else 'iceberg'} reads per-file statistics "
                           "from the table's metadata: it takes --granularity file, and no "
                           "--ngram, --bloom, --dictionaries, --compute-missing or --threads")
    if args.version is not None and not args.delta:
        raise CommandError("--version is a Delta table's version: it needs --delta")
    if args.delta:
        stats = pe.stats_from_delta(args.source, version=args.version)
    elif args.iceberg:
        stats = pe.stats_from_iceberg(_iceberg_catalog(args.iceberg), args.source)
    else:
        stats = pe.collect_stats(args.source, granularity=args.granularity, ngram=args.ngram,
                                 threads=args.threads,
                                 bloom=True if args.bloom == [] else args.bloom,
                                 dictionaries=True if args.dictionaries == []
                                 else args.dictionaries, compute_missing=args.compute_missing)
    stats.save(args.output)
    took = f"{time.perf_counter() - started:.2f} s"
    if table_format:
        print(f"{stats.num_rows} containers (files) from the {table_format} in {took}, "
              f"saved to {args.output}")
        return
    files = len(stats.metadata.get("files") or {})
    noun = "row groups" if args.granularity == "row_group" else "files"
    bloom = stats.metadata.get("bloom")
    extra = f", {bloom['bytes_read']:,} bytes of Bloom filters" if bloom else ""
    computed = stats.metadata.get("computed")
    if computed and computed["columns"]:
        extra += (f", statistics of {', '.join(computed['columns'])} computed from the data of "
                  f"{computed['containers']} containers")
    print(f"{stats.num_rows} containers ({noun}) of {files} files in {took}{extra}, saved to "
          f"{args.output}")


def _iceberg_catalog(name: str):
    """The PyIceberg catalog ``name``, configured as PyIceberg reads it (``~/.pyiceberg.yaml``
    or ``PYICEBERG_CATALOG__<NAME>__<PROPERTY>`` variables)."""
    from prune_engine.errors import StatsError

    try:
        from pyiceberg.catalog import load_catalog
    except ImportError:
        raise StatsError("--iceberg needs PyIceberg: pip install 'prune_engine[iceberg]'") from None
    try:
        return load_catalog(name)
    except (ValueError, KeyError, NotImplementedError) as err:
        raise StatsError(f"cannot load the Iceberg catalog {name!r}: {err}") from None


# ------------------------------------------------------------------------------ prune


def prune_report(stats, sql: str) -> dict:
    """What ``pe.prune(stats, sql)`` keeps, per container and per file, as the JSON object
    ``prune --format json`` prints.

    A file is skipped whole when none of its containers is kept; its size is the one recorded
    when the statistics were collected (``stats.metadata["files"]``). ``bytes_total`` and
    ``bytes_skipped`` are null when the statistics record no size for some file: the
    statistics layout has no byte-size column, and row-group sizes are not recorded at all.

    >>> import pyarrow as pa
    >>> stats = pa.table({"container": ["a#0", "a#1", "b#0"], "path": ["a", "a", "b"],
    ...     "num_records": [2, 2, 2], "min_values": [{"x": 0}, {"x": 5}, {"x": 7}],
    ...     "max_values": [{"x": 3}, {"x": 6}, {"x": 9}],
    ...     "null_count": [{"x": 0}, {"x": 0}, {"x": 0}]})
    >>> r = prune_report(stats, "x < 4")
    >>> r["kept_containers"], r["kept_paths"], r["files_total"], r["bytes_skipped"]
    (['a#0'], ['a'], 2, None)
    """
    import pyarrow.compute as pc

    import prune_engine as pe
    from prune_engine.stats import layout
    from prune_engine.stats.table import as_stats_table

    stats = as_stats_table(stats)
    mask = pe.prune(stats, sql)
    paths, kept = stats.files_kept(mask.to_numpy(zero_copy_only=False))
    kept = kept.tolist()
    recorded = stats.metadata.get("files") or {}
    sizes = [(recorded.get(p) or [None])[0] for p in paths]
    known = all(s is not None for s in sizes)
    return {
        "predicate": sql,
        "containers_total": stats.num_rows,
        "containers_kept": pc.sum(mask).as_py() or 0,
        "files_total": len(paths),
        "files_kept": sum(kept),
        "bytes_total": sum(sizes) if known else None,
        "bytes_skipped": sum(s for s, k in zip(sizes, kept) if not k) if known else None,
        "kept_paths": [p for p, k in zip(paths, kept) if k],
        "kept_containers": stats.column(layout.CONTAINER).filter(mask).to_pylist(),
    }


def _prune(args) -> None:
    import prune_engine as pe

    report = prune_report(pe.read_stats(args.stats), args.sql)
    if args.format == "json":
        print(json.dumps(report))
    elif args.format == "paths":
        for path in report["kept_paths"]:
            print(path)
    else:
        _print_prune_table(report)


def _print_prune_table(r: dict) -> None:
    total, kept = r["containers_total"], r["containers_kept"]
    pruned = 100 * (1 - kept / total) if total else 0.0
    print(f"kept {kept} of {total} containers ({pruned:.0f}% pruned), "
          f"in {r['files_kept']} of {r['files_total']} files")
    skipped = r["files_total"] - r["files_kept"]
    if r["bytes_skipped"] is None:
        print(f"skipped {skipped} files whole; bytes skipped: unknown (the statistics record "
              "no file sizes)")
    else:
        inside = "; row groups pruned inside the files read are not counted" \
            if total != r["files_total"] else ""
        print(f"skipped {skipped} files whole: {_size(r['bytes_skipped'])} of "
              f"{_size(r['bytes_total'])} (file sizes recorded with the statistics{inside})")
    print("kept paths:" if r["kept_paths"] else "kept paths: none")
    for path in r["kept_paths"]:
        print(f"  {path}")


def _size(n: int) -> str:
    """``132647`` -> ``'132.6 kB'`` (decimal units, as ``ls -lh --si``)."""
    value, unit = float(n), "B"
    for larger in ("kB", "MB", "GB", "TB"):
        if value < 1000:
            break
        value, unit = value / 1000, larger
    return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"


# ------------------------------------------------------------------------------ explain


def _explain(args) -> None:
    import prune_engine as pe

    report = pe.explain(pe.read_stats(args.stats), args.sql)
    containers = report.column("container").to_pylist()
    keep = report.column("keep").to_pylist()
    reasons = report.column("reason").to_pylist()
    pruned = [(c, r) for c, k, r in zip(containers, keep, reasons) if not k]
    print(f"pruned {len(pruned)} of {len(containers)} containers"
          + (", because the statistics prove empty:" if pruned else ""))
    counts: dict[str, int] = {}
    for _, reason in pruned:
        counts[reason or "?"] = counts.get(reason or "?", 0) + 1
    for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {count:6d}  {reason}")
    rows = [("keep" if k else "prune", c, r or ("may match" if k else "?"))
            for c, k, r in zip(containers, keep, reasons) if args.all or not k]
    shown = rows if args.limit == 0 else rows[:args.limit]
    if shown:
        print()
        width = max(len(c) for _, c, _ in shown)
        for verdict, container, reason in shown:
            print(f"{verdict:<5}  {container:<{width}}  {reason}")
    if len(shown) < len(rows):
        print(f"... {len(rows) - len(shown)} more (--limit 0 shows them all)")


# ------------------------------------------------------------------------------ scan


def _scan(args) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import prune_engine as pe

    started = time.perf_counter()
    stats = pe.read_stats(args.stats) if args.stats else None
    table, summary = pe.scan(args.source, where=args.where, columns=args.columns, stats=stats,
                             flatten=args.flatten, return_summary=True)
    try:
        pq.write_table(table, args.output)
    except (OSError, pa.ArrowException) as e:
        raise pe.ScanError(f"{args.output}: cannot write the result: {e}") from None
    print(f"wrote {table.num_rows} rows to {args.output}; read {summary.row_groups_read} of "
          f"{summary.row_groups_total} row groups in {summary.files_read} of "
          f"{summary.files_total} files ({time.perf_counter() - started:.2f} s)")


def column_paths(text: str) -> list[str]:
    """Split ``--columns`` at commas outside backticks: ``a.b,`x,y`.z`` -> two paths.

    >>> column_paths("user.address.city,`a,b`.c, price")
    ['user.address.city', '`a,b`.c', 'price']
    """
    out, current, quoted = [], [], False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        if ch == "," and not quoted:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    out.append("".join(current).strip())
    if any(not p for p in out):
        raise argparse.ArgumentTypeError(f"empty column path in {text!r}")
    return out


# ------------------------------------------------------------------------------ demos, bench


def _demo(args) -> None:
    from prune_engine.demo import run_demo

    run_demo(args.dir)


def _spark_demo(args) -> None:
    from prune_engine.demo import run_spark_demo

    run_spark_demo(args.dir)


def bench_script() -> Path:
    """Where the benchmark harness lives: ``bench/run.py`` of the source checkout that the
    package is installed from (an editable install)."""
    import prune_engine

    return Path(prune_engine.__file__).resolve().parents[1] / "bench" / "run.py"


def _bench(args) -> int:
    script = bench_script()
    if not script.is_file():
        raise CommandError("the benchmarks live in a source checkout of prune_engine (run "
                           f"'make bench' there); there is no {script}")
    argv = [sys.executable, str(script)]
    if args.quick:
        argv.append("--quick")
    if args.output is not None:
        argv += ["--output", str(args.output.resolve())]  # the harness runs in the checkout
    return subprocess.run(argv, cwd=script.parents[1]).returncode


# ------------------------------------------------------------------------------ the parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or a positive integer, not {text!r}")
    return value


def _command(sub, name: str, help: str, example: str, run) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                            epilog=f"example:\n{example}",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(run=run)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``prune-engine`` argument parser, one sub-command per command."""
    parser = _Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Decide which files and Parquet row groups a query can skip, from "
                    "statistics.",
        epilog="""examples:
  prune-engine stats lake/ -o stats.parquet --ngram url
  prune-engine prune stats.parquet "country = 'IS' AND amount > 900"
  prune-engine prune stats.parquet "amount > 900" --format paths | xargs ls -l
  prune-engine scan lake/ --where "amount > 900" --columns ts,client.os -o out.parquet

exit codes: 0 done; 2 the command cannot run as given (a usage mistake, or input prune_engine
rejects: a missing file, malformed SQL, an unknown column, ...); 1 a failure while running
(an operating-system error); 141 the output pipe was closed. Errors are one line on stderr.""")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _command(sub, "stats", "collect the statistics of a Parquet lake and save them",
                 "  prune-engine stats lake/ -o stats.parquet --granularity row_group "
                 "--ngram url\n  prune-engine stats lake/ -o stats.parquet --bloom user_id"
                 "\n  prune-engine stats 'lake/day=2024-03-0*/*.parquet' -o "
                 "march.parquet --granularity file\n  prune-engine stats warehouse/events -o "
                 "events.parquet --granularity file --delta\n  prune-engine stats db.events -o "
                 "events.parquet --granularity file --iceberg prod", _stats)
    p.add_argument("source", metavar="SOURCE",
                   help="a Parquet file, a directory (Hive key=value folders are partitions) "
                        "or a glob; with --delta a Delta table, with --iceberg a table name")
    p.add_argument("-o", "--output", required=True, metavar="STATS",
                   help="the statistics file to write (Parquet)")
    p.add_argument("--granularity", choices=("row_group", "file"), default="row_group",
                   help="one container per row group (default) or per file")
    p.add_argument("--ngram", action="extend", nargs="+", metavar="COLUMN",
                   help="string columns to index for LIKE '%%...%%' (reads their data)")
    p.add_argument("--bloom", nargs="*", metavar="COLUMN",
                   help="read the Parquet Bloom filters the files carry (of these columns; "
                        "with no column, of every column) for = and IN")
    p.add_argument("--dictionaries", nargs="*", metavar="COLUMN",
                   help="read the dictionary pages of fully dictionary-encoded chunks (of these "
                        "columns; with no column, of every column) as exact value sets for =, "
                        "IN, != and NOT IN")
    p.add_argument("--compute-missing", action="store_true",
                   help="read the column chunks whose footers have no statistics (INT96 "
                        "timestamps as Spark writes them, writers that skip statistics) and "
                        "compute them")
    p.add_argument("--threads", type=_positive, metavar="N",
                   help="footer-reading threads (default: one per core)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--delta", action="store_true",
                        help="SOURCE is a Delta table: per-file statistics from its log")
    source.add_argument("--iceberg", metavar="CATALOG",
                        help="SOURCE is an Iceberg table's name in this PyIceberg catalog: "
                             "per-file statistics from its manifests")
    p.add_argument("--version", type=_count, metavar="N",
                   help="with --delta: the table version (default: the latest)")

    p = _command(sub, "prune", "the containers and files a predicate keeps",
                 "  prune-engine prune stats.parquet \"country = 'IS' AND amount > 900\"\n"
                 "  prune-engine prune stats.parquet \"url LIKE '%/gift-card/%'\" --format "
                 "paths | xargs ls -l", _prune)
    p.add_argument("stats", metavar="STATS", help="a statistics file (prune-engine stats -o)")
    p.add_argument("sql", metavar="SQL", help="a SQL WHERE predicate")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table: for people (default); json: one object (containers_total, "
                        "containers_kept, files_total, files_kept, bytes_total, bytes_skipped "
                        "(null: not recorded), kept_paths, kept_containers); paths: one kept "
                        "file per line")

    p = _command(sub, "explain", "per container: kept or pruned, and the part of the "
                 "predicate its statistics proved empty",
                 "  prune-engine explain stats.parquet \"country = 'IS' AND amount > 900\" "
                 "--limit 5", _explain)
    p.add_argument("stats", metavar="STATS", help="a statistics file (prune-engine stats -o)")
    p.add_argument("sql", metavar="SQL", help="a SQL WHERE predicate")
    p.add_argument("--all", action="store_true",
                   help="list the kept containers too (default: only the pruned)")
    p.add_argument("--limit", type=_count, default=20, metavar="N",
                   help="list at most N containers (default 20; 0: all)")

    p = _command(sub, "scan", "read the matching rows of the kept row groups into a Parquet "
                 "file, only the columns asked for",
                 "  prune-engine scan lake/ --where \"amount > 900\" --columns ts,client.os,"
                 "items.price \\\n      -o out.parquet --stats stats.parquet", _scan)
    p.add_argument("source", metavar="SOURCE",
                   help="a Parquet file, a directory (Hive key=value folders are partitions) "
                        "or a glob")
    p.add_argument("--where", metavar="SQL", help="a SQL WHERE predicate (default: every row)")
    p.add_argument("--columns", type=column_paths, action="extend", metavar="PATHS",
                   help="comma-separated column paths, nested with dots (default: all)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the Parquet file to write")
    p.add_argument("--stats", metavar="STATS",
                   help="statistics to prune with (default: read from the footers now)")
    p.add_argument("--flatten", action="store_true",
                   help="one top-level column per path (a_b_c) instead of nested structs")

    p = _command(sub, "demo", "generate a lake, collect statistics, prune and scan a few "
                 "queries", "  prune-engine demo --dir demo-lake/", _demo)
    p.add_argument("--dir", type=Path, default=None,
                   help="write the lake here (default: a temp dir)")
    p = _command(sub, "spark-demo", "the same lake in local Spark: statistics job, pruned "
                 "read and join (needs Java 17, pyspark)", "  prune-engine spark-demo",
                 _spark_demo)
    p.add_argument("--dir", type=Path, default=None,
                   help="write the lake here (default: a temp dir)")

    p = _command(sub, "bench", "run the benchmark harness (bench/run.py of a source "
                 "checkout)", "  prune-engine bench --quick --output results/", _bench)
    p.add_argument("--quick", action="store_true", help="a short run")
    p.add_argument("--output", type=Path, metavar="DIR", help="where the harness writes")
    return parser


# ------------------------------------------------------------------------------ main


def _one_line(error: BaseException) -> str:
    """The error's message on one line (a SQL error: its position and the text up to it)."""
    from prune_engine.errors import SqlParseError

    text = str(error).strip()
    if isinstance(error, SqlParseError):
        lines = error.sql.splitlines() or [""]
        before = lines[min(max(error.line, 1), len(lines)) - 1][:max(error.col, 0)].strip()
        shown = before if len(before) <= 40 else "..." + before[-37:]
        return text.splitlines()[0] + (f", after {shown!r}" if shown else "")
    return " ".join(line.strip() for line in text.splitlines()) or type(error).__name__


def _warn(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code (see the module doc)."""
    from prune_engine.errors import PruneEngineError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warn
            try:
                args = build_parser().parse_args(argv)
            except SystemExit as done:  # --help
                return int(done.code or 0)
            code = args.run(args)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code or 0
    except CommandError as e:
        return _fail(str(e), e.code)
    except PruneEngineError as e:
        return _fail(_one_line(e), EXIT_USAGE)
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_PIPE
    except OSError as e:
        return _fail(_one_line(e), EXIT_FAILURE)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush into the closed pipe
    does not print a BrokenPipeError of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass


if __name__ == "__main__":
    raise SystemExit(main())
