"""The command line: ``prune-engine COMMAND ...`` (also ``python -m prune_engine.cli COMMAND``).

Commands: ``stats`` (collect and save statistics), ``prune`` (which files a predicate keeps),
``explain`` (per container: kept or pruned, and why), ``scan`` (a pruned read into a Parquet
file), ``demo`` and ``spark-demo`` (:mod:`prune_engine.demo`), ``bench`` (the benchmark
harness of a source checkout). Each is a thin layer over the public functions: what it prints
is what ``pe.prune``, ``pe.explain`` and ``pe.scan`` return.

Conventions, the same for every command:

- results go to stdout, fit for pipes: no colours; a progress bar only on stderr, and only when
  stderr is a terminal. A closed pipe (``| head``) ends the command quietly.
- ``--format`` on every command that prints results: ``table`` for people (the default),
  ``json`` (one object on one line), and where a listing fits ``csv`` (``prune``, ``explain``)
  and ``paths`` (``prune``). ``--limit N`` bounds a listing: by default 20 rows in a table and
  every row in ``json``, ``csv`` and ``paths``; ``--limit 0`` lists all.
- ``--on-error skip`` (``stats``, ``scan``): an unreadable file is skipped, with a warning line
  on stderr, and listed in the JSON's ``skipped_files``.
- every error is ONE line on stderr, ``prune-engine: error: ...`` saying what and where, never a
  traceback (an internal error too, unless ``PRUNE_ENGINE_TRACEBACK`` is set); warnings are one
  line too (``prune-engine: warning: ...``).
- exit codes: 0 done; 2 the command cannot run as given: a usage mistake, or input that
  prune_engine rejects (every :class:`~prune_engine.PruneEngineError`: a missing source,
  malformed SQL, an unknown column, a type mismatch, a file that is not a statistics file, an
  output it cannot write, a missing optional dependency such as pyspark), or ``bench`` outside
  a source checkout; 1 a failure outside prune_engine while running (an operating-system
  error, an internal error; ``bench`` passes the harness's code on); 141 stdout was closed
  early (as for SIGPIPE); 130 interrupted.
"""

from __future__ import annotations

import argparse
import csv
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
#: set (to anything) in the environment: an internal error shows its traceback
TRACEBACK_VARIABLE = "PRUNE_ENGINE_TRACEBACK"
#: the --format choices of each command that prints results (the first is the default)
FORMATS = {"stats": ("table", "json"), "prune": ("table", "json", "csv", "paths"),
           "explain": ("table", "json", "csv"), "scan": ("table", "json")}
ON_ERROR = ("raise", "skip")


class CommandError(Exception):
    """An error the command line reports as one line, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        self.code = code
        super().__init__(message)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake reported as one line (not the usage block)."""

    def error(self, message: str):
        raise CommandError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------------------------ output


def _emit_json(obj) -> None:
    """One JSON object on one line."""
    print(json.dumps(obj))


def _emit_csv(header: list[str], rows) -> None:
    """RFC 4180 CSV (a header line, then the rows; ``None`` as an empty field)."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def _limit(args, default: int | None) -> int | None:
    """How many rows a listing shows: ``--limit N`` (0: all), else the format's default."""
    if args.limit is None:
        return default
    return args.limit or None


def _more(total: int, shown: int) -> None:
    if shown < total:
        print(f"... {total - shown} more (--limit 0 shows them all)")


def _warn_skipped(skipped: list[dict]) -> None:
    """Each skipped file as one warning line on stderr."""
    for item in skipped:
        error = " ".join(str(item["error"]).split())
        text = error if error.startswith(item["path"]) else f"{item['path']}: {error}"
        print(f"{PROG}: warning: skipped {text}", file=sys.stderr)


# ------------------------------------------------------------------------------ stats


def _stats(args) -> None:
    import prune_engine as pe

    started = time.perf_counter()
    table_format = "Delta log" if args.delta else "Iceberg manifests" if args.iceberg else None
    if table_format and (args.ngram or args.granularity == "row_group" or args.threads
                         or args.bloom is not None or args.dictionaries is not None
                         or args.compute_missing or args.on_error is not None or args.nan_free):
        raise CommandError(f"--{'delta' if args.delta else 'iceberg'} reads per-file statistics "
                           "from the table's metadata: it takes --granularity file, and no "
                           "--ngram, --bloom, --dictionaries, --compute-missing, --nan-free, "
                           "--threads or --on-error")
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
                                 else args.dictionaries, compute_missing=args.compute_missing,
                                 nan_free=args.nan_free, on_error=args.on_error or "raise")
    stats.save(args.output)
    seconds = time.perf_counter() - started
    skipped = list(stats.metadata.get("skipped_files") or [])
    bloom = stats.metadata.get("bloom")
    computed = stats.metadata.get("computed")
    granularity = "file" if table_format else args.granularity
    summary = {
        "output": str(args.output),
        "source": args.source,
        "source_format": "delta" if args.delta else "iceberg" if args.iceberg else "parquet",
        "granularity": granularity,
        "containers": stats.num_rows,
        "files": stats.num_rows if table_format else len(stats.metadata.get("files") or {}),
        "seconds": round(seconds, 3),
        "skipped_files": skipped,
        "bloom_bytes_read": bloom["bytes_read"] if bloom else None,
        "computed": computed or None,
    }
    _warn_skipped(skipped)
    if args.format == "json":
        _emit_json(summary)
        return
    took = f"{seconds:.2f} s"
    if table_format:
        print(f"{stats.num_rows} containers (files) from the {table_format} in {took}, "
              f"saved to {args.output}")
        return
    noun = "row groups" if args.granularity == "row_group" else "files"
    extra = f", {bloom['bytes_read']:,} bytes of Bloom filters" if bloom else ""
    if computed and computed["columns"]:
        extra += (f", statistics of {', '.join(computed['columns'])} computed from the data of "
                  f"{computed['containers']} containers")
    if skipped:
        extra += f", {len(skipped)} unreadable files skipped (their containers always kept)"
    print(f"{stats.num_rows} containers ({noun}) of {summary['files']} files in {took}{extra}, "
          f"saved to {args.output}")


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

    stats = pe.read_stats(args.stats)
    report = prune_report(stats, args.sql)
    if args.format == "json":
        limit = _limit(args, None)
        if limit is not None:  # the counts still say how many there are
            report["kept_paths"] = report["kept_paths"][:limit]
            report["kept_containers"] = report["kept_containers"][:limit]
        _emit_json(report)
    elif args.format == "paths":
        for path in report["kept_paths"][:_limit(args, None)]:
            print(path)
    elif args.format == "csv":
        _emit_csv(["path", "kept", "containers", "containers_kept", "bytes"],
                  [[p, "true" if k else "false", n, c, b]
                   for p, k, n, c, b in _prune_files(stats, args.sql)[:_limit(args, None)]])
    else:
        _print_prune_table(report, _limit(args, 20))


def _prune_files(stats, sql: str) -> list[list]:
    """One row per file, in the order the statistics first list them: its path, whether it is
    read, its containers and how many of them are kept, its recorded size (None: unknown)."""
    import numpy as np

    import prune_engine as pe
    from prune_engine.stats import layout
    from prune_engine.stats.table import as_stats_table

    stats = as_stats_table(stats)
    mask = np.asarray(pe.prune(stats, sql).to_numpy(zero_copy_only=False), bool)
    paths, kept = stats.files_kept(mask)
    name = layout.PATH if layout.PATH in stats.table.column_names else layout.CONTAINER
    where = {p: i for i, p in enumerate(paths)}
    index = np.array([where[p] for p in stats.column(name).to_pylist()], np.int64)
    total = np.bincount(index, minlength=len(paths))
    kept_count = np.bincount(index, weights=mask, minlength=len(paths)).astype(np.int64)
    recorded = stats.metadata.get("files") or {}
    return [[p, bool(k), int(t), int(c), (recorded.get(p) or [None])[0]]
            for p, k, t, c in zip(paths, kept, total, kept_count)]


def _print_prune_table(r: dict, limit: int | None) -> None:
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
    shown = r["kept_paths"][:limit]
    for path in shown:
        print(f"  {path}")
    _more(len(r["kept_paths"]), len(shown))


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

    stats = pe.read_stats(args.stats)
    report = pe.explain(stats, args.sql, pages=args.pages)
    names = report.column_names
    records = [dict(zip(names, values)) for values in zip(
        *(report.column(name).to_pylist() for name in names))]
    pages = _pages_summary(stats, records) if args.pages else None
    pruned = [r for r in records if not r["keep"]]
    answers = {a: sum(r["answer"] == a for r in records) for a in ("none", "some", "all")}
    counted = _counted(r["reason"] for r in pruned)
    kept_counted = _counted(r["kept_because"] for r in records if r["keep"])
    rows = [r for r in records if args.all or not r["keep"]]
    if args.format == "json":
        shown = rows[:_limit(args, None)]
        _emit_json({
            "predicate": args.sql,
            "containers_total": len(records),
            "containers_pruned": len(pruned),
            "answers": answers,
            "reasons": dict(counted),
            "kept_reasons": dict(kept_counted),
            "containers": shown,
            "containers_omitted": len(rows) - len(shown),
            **({"pages": pages} if pages else {}),
        })
        return
    if args.format == "csv":
        _emit_csv(names, [["true" if v is True else "false" if v is False else
                           _ranges_text(v) if k == "row_ranges" else v
                           for k, v in r.items()] for r in rows[:_limit(args, None)]])
        return
    print(f"pruned {len(pruned)} of {len(records)} containers"
          + (", because the statistics prove empty:" if pruned else ""))
    for reason, count in counted:
        print(f"  {count:6d}  {reason}")
    print(f"answers: {answers['none']} NONE (no row matches), {answers['some']} SOME (may "
          f"match), {answers['all']} ALL (every row matches)")
    if kept_counted:
        print(f"kept {len(records) - len(pruned)}, because:")
        for reason, count in kept_counted[:_limit(args, 20)]:
            print(f"  {count:6d}  {reason}")
        _more(len(kept_counted), len(kept_counted[:_limit(args, 20)]))
    if pages:
        print(f"pages: {pages['rows_selected']} of {pages['rows_kept']} rows of the kept row "
              f"groups may match, in {pages['ranges']} row ranges"
              + (f" ({pages['row_groups_without_ranges']} kept row groups have none)"
                 if pages["row_groups_without_ranges"] else ""))
    shown = [(r["answer"].upper(), r["container"],
              ((r["kept_because"] or "may match") if r["keep"] else r["reason"] or "?")
              + (f"  [rows {r['rows_selected']}: {_ranges_text(r['row_ranges'])}]"
                 if pages and r["keep"] and r["rows_selected"] is not None else ""))
             for r in rows[:_limit(args, 20)]]
    if shown:
        print()
        width = max(len(c) for _, c, _ in shown)
        for verdict, container, reason in shown:
            print(f"{verdict:<5}  {container:<{width}}  {reason}")
    _more(len(rows), len(shown))


def _pages_summary(stats, records: list[dict]) -> dict:
    """``explain --pages``: over the kept row groups that have row ranges, their rows
    (``num_records``), the rows the ranges select, how many ranges, and how many kept row
    groups select none (every page pruned)."""
    table = stats.table if hasattr(stats, "table") else stats
    counts = (table.column("num_records").to_pylist() if "num_records" in table.column_names
              else [None] * len(records))
    paged = [(r, c) for r, c in zip(records, counts)
             if r["keep"] and r["rows_selected"] is not None]
    return {"rows_kept": sum(c or 0 for _, c in paged),
            "rows_selected": sum(r["rows_selected"] for r, _ in paged),
            "ranges": sum(len(r["row_ranges"]) for r, _ in paged),
            "row_groups_without_ranges": sum(r["rows_selected"] == 0 for r, _ in paged)}


def _ranges_text(ranges: list[dict] | None) -> str | None:
    """Row ranges as ``start+count`` joined by ``;`` (``0+100;400+50``); None stays None."""
    if ranges is None:
        return None
    return ";".join(f"{r['row_start']}+{r['row_count']}" for r in ranges)


def _counted(reasons) -> list[tuple[str, int]]:
    """Each distinct reason with how many containers give it, the most frequent first."""
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason or "?"] = counts.get(reason or "?", 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


# ------------------------------------------------------------------------------ scan


def _scan(args) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import prune_engine as pe

    started = time.perf_counter()
    stats = pe.read_stats(args.stats) if args.stats else None
    (table, summary), skipped = _scan_skipping(
        lambda source: pe.scan(source, where=args.where, columns=args.columns, stats=stats,
                               flatten=args.flatten, return_summary=True,
                               order_by=args.order_by, limit=args.limit),
        args.source, args.on_error == "skip")
    try:
        pq.write_table(table, args.output)
    except (OSError, pa.ArrowException) as e:
        raise pe.ScanError(f"{args.output}: cannot write the result: {e}") from None
    seconds = time.perf_counter() - started
    _warn_skipped(skipped)
    if args.format == "json":
        _emit_json({"output": str(args.output), "rows": table.num_rows,
                    "files_total": summary.files_total + len(skipped),
                    "files_read": summary.files_read,
                    "row_groups_total": summary.row_groups_total,
                    "row_groups_read": summary.row_groups_read, "seconds": round(seconds, 3),
                    "skipped_files": skipped})
        return
    also = f", {len(skipped)} unreadable files skipped" if skipped else ""
    print(f"wrote {table.num_rows} rows to {args.output}; read {summary.row_groups_read} of "
          f"{summary.row_groups_total} row groups in {summary.files_read} of "
          f"{summary.files_total + len(skipped)} files{also} ({seconds:.2f} s)")


#: the ``ScanError`` messages of a file that cannot be read (``--on-error skip`` skips it)
_UNREADABLE = ("not a readable Parquet file", "no Arrow schema for its Parquet schema",
               "cannot read row groups")


def _scan_skipping(scan, source, skip: bool):
    """``scan(source)``, and the files skipped: with ``skip``, a file that cannot be read
    (its footer, or a row group's pages) is left out of the source and the scan runs again
    on the rest (``pe.scan`` plans before it reads, so each unreadable file costs one more
    pass over the footers)."""
    from prune_engine.errors import ScanError

    skipped: list[dict] = []
    files = None
    while True:
        try:
            return scan(source if files is None else files), skipped
        except ScanError as e:
            if not skip or e.path is None or not any(m in str(e) for m in _UNREADABLE):
                raise
            if files is None:
                from prune_engine.stats.listing import list_source

                files = [f.path for f in list_source(source).files]
            if e.path not in files:
                raise
            files.remove(e.path)
            skipped.append({"path": e.path, "error": _one_line(e)})
            if not files:
                raise ScanError(f"every file of {source} is unreadable; the first: "
                                f"{skipped[0]['error']}", skipped[0]["path"]) from None


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


def _format(parser: argparse.ArgumentParser, command: str, help: str) -> None:
    choices = FORMATS[command]
    parser.add_argument("--format", choices=choices, default=choices[0], help=help)


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
  prune-engine explain stats.parquet "amount > 900" --format json | jq .reasons
  prune-engine scan lake/ --where "amount > 900" --columns ts,client.os -o out.parquet

output: --format table (for people, the default) | json (one object on one line) | csv
(prune, explain) | paths (prune); --limit N bounds a listing (0: all). See each command's
--help for the fields.

exit codes: 0 done; 2 the command cannot run as given (a usage mistake, or input prune_engine
rejects: a missing file, malformed SQL, an unknown column, a missing optional package, ...);
1 a failure while running (an operating-system error, an internal error); 141 the output
pipe was closed. Errors are one line on stderr.""")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _command(sub, "stats", "collect the statistics of a Parquet lake and save them",
                 "  prune-engine stats lake/ -o stats.parquet --granularity row_group "
                 "--ngram url\n  prune-engine stats lake/ -o stats.parquet --bloom user_id"
                 "\n  prune-engine stats lake/ -o stats.parquet --nan-free amount,price"
                 "\n  prune-engine stats 'lake/day=2024-03-0*/*.parquet' -o "
                 "march.parquet --granularity file\n  prune-engine stats warehouse/events -o "
                 "events.parquet --granularity file --delta\n  prune-engine stats db.events -o "
                 "events.parquet --granularity file --iceberg prod\n  prune-engine stats lake/ -o "
                 "stats.parquet --on-error skip --format json", _stats)
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
    p.add_argument("--nan-free", type=column_paths, action="extend", metavar="COLUMNS",
                   help="comma-separated float columns you promise hold no NaN: their "
                        "nan_count is 0, so ranges (>, >=) prune on them (a NaN there loses "
                        "the rows only it matches; one the footers count is an error)")
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
    p.add_argument("--on-error", choices=ON_ERROR, default=None,
                   help="an unreadable file: raise: an error (default); skip: a warning on "
                        "stderr, the file listed in the JSON's skipped_files and in the "
                        "statistics (metadata), its containers with unknown statistics "
                        "(always kept)")
    _format(p, "stats", "table: one line for people (default); json: one object (output, "
            "source, source_format, granularity, containers, files, seconds, skipped_files "
            "[{path, error}], bloom_bytes_read, computed)")

    p = _command(sub, "prune", "the containers and files a predicate keeps",
                 "  prune-engine prune stats.parquet \"country = 'IS' AND amount > 900\"\n"
                 "  prune-engine prune stats.parquet \"url LIKE '%/gift-card/%'\" --format "
                 "paths | xargs ls -l\n  prune-engine prune stats.parquet \"amount > 900\" "
                 "--format csv > files.csv", _prune)
    p.add_argument("stats", metavar="STATS", help="a statistics file (prune-engine stats -o)")
    p.add_argument("sql", metavar="SQL", help="a SQL WHERE predicate")
    _format(p, "prune", "table: for people (default); json: one object (predicate, "
            "containers_total, containers_kept, files_total, files_kept, bytes_total, "
            "bytes_skipped (null: not recorded), kept_paths, kept_containers); csv: one row "
            "per file (path, kept, containers, containers_kept, bytes); paths: one kept file "
            "per line")
    p.add_argument("--limit", type=_count, default=None, metavar="N",
                   help="list at most N files (table: default 20; json: at most N kept_paths "
                        "and kept_containers, the counts stay whole; csv, paths: default all; "
                        "0: all)")

    p = _command(sub, "explain", "per container: NONE, SOME or ALL of its rows match, and "
                 "why: the part of the predicate its statistics proved empty, or the tests "
                 "that could not prune it",
                 "  prune-engine explain stats.parquet \"country = 'IS' AND amount > 900\" "
                 "--limit 5\n  prune-engine explain stats.parquet \"amount > 900\" --all "
                 "--format csv > containers.csv", _explain)
    p.add_argument("stats", metavar="STATS", help="a statistics file (prune-engine stats -o)")
    p.add_argument("sql", metavar="SQL", help="a SQL WHERE predicate")
    p.add_argument("--all", action="store_true",
                   help="list the kept containers too (default: only the pruned)")
    p.add_argument("--limit", type=_count, default=None, metavar="N",
                   help="list at most N containers (table: default 20; json, csv: default "
                        "all; 0: all)")
    p.add_argument("--pages", action="store_true",
                   help="also read the page index of the files of the kept row groups: per "
                        "row group the rows that may match (rows_selected) and their "
                        "row_ranges (start+count within the row group; null for a container "
                        "that is not a row group)")
    _format(p, "explain", "table: for people (default); json: one object (predicate, "
            "containers_total, containers_pruned, answers {none, some, all: count}, reasons "
            "{reason: count}, kept_reasons {kept_because: count}, containers [{container, "
            "keep, reason, kept_because, answer}], containers_omitted by --limit; with "
            "--pages each container also has rows_selected and row_ranges [{row_start, "
            "row_count}], and pages {rows_kept, rows_selected, ranges, "
            "row_groups_without_ranges}); csv: container, keep, reason (empty where kept), "
            "kept_because (empty where pruned), answer, and with --pages rows_selected, "
            "row_ranges (start+count;...)")

    p = _command(sub, "scan", "read the matching rows of the kept row groups into a Parquet "
                 "file, only the columns asked for",
                 "  prune-engine scan lake/ --where \"amount > 900\" --columns ts,client.os,"
                 "items.price \\\n      -o out.parquet --stats stats.parquet\n  prune-engine "
                 "scan lake/ --where \"amount > 900\" -o out.parquet --on-error skip --format "
                 "json\n  prune-engine scan lake/ --order-by \"ts DESC\" --limit 100 -o "
                 "latest.parquet", _scan)
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
    p.add_argument("--limit", type=_count, default=None, metavar="K",
                   help="at most K rows (SQL LIMIT): the containers where every row matches "
                        "are read first, and reading stops at K rows")
    p.add_argument("--order-by", metavar="ORDER",
                   help="with --limit: the first K rows in this order, 'column [ASC|DESC] "
                        "[NULLS FIRST|LAST]' (top-k: containers that cannot hold one are "
                        "not read)")
    p.add_argument("--on-error", choices=ON_ERROR, default="raise",
                   help="an unreadable file (footer or pages): raise: an error (default); "
                        "skip: a warning on stderr, listed in the JSON's skipped_files, and "
                        "the rows of the other files")
    _format(p, "scan", "table: one line for people (default); json: one object (output, rows, "
            "files_total, files_read, row_groups_total, row_groups_read, seconds, "
            "skipped_files [{path, error}])")

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
    except ImportError as e:  # an optional dependency that no prune_engine check caught
        if (e.name or "").startswith("prune_engine") or os.environ.get(TRACEBACK_VARIABLE):
            raise
        return _fail(f"a Python package this command needs is not installed: {_one_line(e)}",
                     EXIT_USAGE)
    except Exception as e:  # a bug in prune_engine or below it: still one line
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        return _fail(f"internal error: {type(e).__name__}: {_one_line(e)} (a bug: please "
                     f"report it; {TRACEBACK_VARIABLE}=1 shows the traceback)", EXIT_FAILURE)


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
