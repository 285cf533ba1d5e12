"""``collect_stats`` / ``update_stats``: the statistics table of a Parquet lake, from footers.

The steps, each a small function below or in the module named:

1. list the source (a directory walked recursively, a glob, a list of paths, or a
   ``pyarrow.dataset.Dataset``) with each file's Hive-style ``key=value`` partition folders,
   size and modification time (:mod:`prune_engine.stats.listing`);
2. read the footers in parallel threads (a progress bar on a terminal), each failure a clear
   per-file error (one line naming the file, whatever the bytes made the reader raise), or
   with ``on_error="skip"`` a listed skip whose row has unknown statistics, so that no later
   query prunes it; a bad file never costs another file its statistics;
3. turn the files of each distinct schema into statistics in one vectorized pass
   (:mod:`prune_engine.stats.parquet`; what a file says that cannot be true is unknown, with
   one warning per file and ``metadata["untrusted_statistics"]``: :mod:`.trust`), add the
   partition values (typed, and as exact ``min = max`` statistics, so partition pruning is
   ordinary pruning);
4. unify the schemas across files (a column missing in a file is unknown there; int32 -> int64
   and float -> double widen: :mod:`prune_engine.stats.unify`). A file whose types cannot
   join the others' (a column of strings where most files hold integers) is that file's
   error, as an unreadable file is: the schema of the most files wins (:func:`_conflicts`),
   here, in :func:`merge_parts` (over the files of every slice) and in :func:`update_stats`
   (over the kept and the new files), and the other files' statistics stay as they are.

:func:`collect_part` runs steps 2 and 3 on a slice of one listing where the files are read (a
Spark executor), with the partition types of the whole listing
(:func:`~prune_engine.stats.listing.partition_types`), and
:func:`merge_parts` does step 4 over the slices: together the table ``collect_stats`` makes.

>>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
>>> root = tempfile.mkdtemp()
>>> os.makedirs(os.path.join(root, "year=2024"))
>>> pq.write_table(pa.table({"x": [1, 5]}), os.path.join(root, "year=2024", "a.parquet"))
>>> stats = pe.collect_stats(root, granularity="file", progress=False)
>>> stats.column("min_values").to_pylist(), stats.column("partition_values").to_pylist()
([{'x': 1, 'year': 2024}], [{'year': 2024}])
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._lazy import LazyModule
from prune_engine.bloom import format as bloom_format
from prune_engine.errors import StatsError, listed, one_line
from prune_engine.stats import dictionary, layout
from prune_engine.stats import computed as computed_stats
from prune_engine.stats import footers as footer_record
from prune_engine.stats.filesystems import resolve
from prune_engine.stats.from_arrow import LeafStats, ngram_columns, stats_table
from prune_engine.stats.listing import (Listing, SourceFile, identify, list_source,
                                        partition_arrays, unchanged as same_file)
from prune_engine.stats.nans import check_dictionaries, declare_nan_free, nan_free_names
from prune_engine.stats.parquet import FOOTER_KERNELS, FileFooter, group_stats, read_footer
from prune_engine.stats.table import StatsTable, as_stats_table
from prune_engine.stats.unify import concat_stats, conform_table, plain_type

__all__ = ["collect_stats", "update_stats"]

#: the footer kernels' slot numbers, loaded (with numba) only where footers are decoded
_thrift = LazyModule("prune_engine.stats._thrift")

GRANULARITIES = ("row_group", "file")


# ------------------------------------------------------------------------------ reading


def _read_one(f: SourceFile, columns, filesystem, indexes: dict):
    """The file's :class:`FileFooter`, or a one-line message naming it: whatever a corrupt
    file makes the reader raise is that file's error, never the lake's."""
    try:
        return read_footer(f.location, f.path, columns, filesystem, **indexes)
    except StatsError as e:
        return f"{f.path}: {one_line(str(e))}"
    except (OSError, pa.ArrowException, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return f"{f.path}: not a readable Parquet file: {one_line(reason)}"
    except Exception as e:  # noqa: BLE001 - bytes no reader expects: this file's error only
        return f"{f.path}: not a readable Parquet file: {type(e).__name__}: {one_line(str(e))}"


def _progress(total: int, progress: bool | None):
    show = (sys.stderr.isatty() if progress is None else bool(progress)) and total > 1
    if not show:  # no tqdm at all: even a disabled bar makes a multiprocessing lock, whose
        return contextlib.nullcontext(_NoBar())  # imports cost a Spark task 0.1 s
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="file", desc="reading footers", leave=False)


class _NoBar:
    def update(self, n: int) -> None:
        pass


def read_footers(files: list[SourceFile], columns, filesystem, threads: int | None,
                 progress: bool | None, indexes: dict | None = None) -> list:
    """Each file's :class:`FileFooter`, or the error text for a file that failed.

    Files go to the threads in batches (a task per file costs more than decoding its footer);
    with ``threads=1`` they are read in this thread. The default is one thread per core: local
    footers are decoded faster than they are read; more threads only help a filesystem with
    latency (pass ``threads=``).
    """
    workers = threads or min(8, os.cpu_count() or 2)
    size = max(1, min(64, len(files) // (4 * workers)))
    batches = [files[i:i + size] for i in range(0, len(files), size)]

    def read(batch: list[SourceFile]) -> list:
        return [_read_one(f, columns, filesystem, indexes or {}) for f in batch]

    results: list = []
    with _progress(len(files), progress) as bar:
        # while numba compiles, the kernels' Python twins decode, in this thread only (they
        # hold the GIL); the rest goes to the threads once the compiled kernels are ready
        FOOTER_KERNELS.get(len(files))
        while batches and not FOOTER_KERNELS.ready:
            out = read(batches.pop(0))
            results.extend(out)
            bar.update(len(out))
        if workers == 1:
            done = map(read, batches)
        else:
            pool = ThreadPoolExecutor(workers)
            done = pool.map(read, batches)
        try:
            for out in done:
                results.extend(out)
                bar.update(len(out))
        finally:
            if workers != 1:
                pool.shutdown(cancel_futures=True)
    return results


# ------------------------------------------------------------------------------ assembling


def partition_stats(name: str, values: pa.Array, known: np.ndarray,
                    num_records: np.ndarray) -> LeafStats:
    """Exact ``min = max`` statistics of a partition column (every row of a container holds
    its partition value); the null count is all or nothing, unknown where ``known`` is False.
    Partitions from folders and from a table format's log alike."""
    is_null = np.asarray(values.is_null().to_numpy(zero_copy_only=False))
    nulls = np.where(is_null, num_records, 0)
    field = pa.field(name, values.type)
    return LeafStats(field, values, values, pa.field(name, pa.int64()),
                     pa.array(nulls, pa.int64(), mask=~known))


def _index_entries(footers: list[FileFooter], by_file: bool, held, merge
                   ) -> dict[str, tuple[int, list]]:
    """Index entries of files sharing one schema, per leaf path some file holds items of
    (``held(footer)``: path -> one item per row group, None = unknown): per row group
    ``merge(footer, path, [item])``, or per file ``merge`` of the items of its row groups that
    hold values (None if one of those is unknown). Returns path -> (leaf number, entries)."""
    plan = footers[0].plan
    width = len(plan.leaves)
    leaf_of = {plan.paths.get(leaf.index): j for j, leaf in enumerate(plan.leaves)}
    out = {}
    for name in dict.fromkeys(p for f in footers for p in held(f)):
        j = leaf_of[name]
        entries = []
        for f in footers:
            items = held(f).get(name) or [None] * len(f.num_rows)
            if not by_file:
                entries.extend(None if x is None else merge(f, name, [x]) for x in items)
                continue
            nulls = f.rows[j::width, _thrift.S_NULLS].tolist()
            values = f.rows[j::width, _thrift.S_NUM_VALUES].tolist()
            # a row group whose counts say "no value" holds none, unless they are untrusted
            used = [x for r, (x, n, v) in enumerate(zip(items, nulls, values))
                    if not 0 <= n == v or (r, j) in f.untrusted]
            known = used and all(x is not None for x in used)
            entries.append(merge(f, name, used) if known else None)
        out[name] = (j, entries)
    return out


def _bloom_column(footers: list[FileFooter], by_file: bool) -> pa.StructArray | None:
    """The ``bloom_filter`` entries of files sharing one schema: per row group, or per file
    the union of its row groups' filters."""
    entries = _index_entries(
        footers, by_file, _INDEXES["bloom"].held,
        lambda f, name, filters: bloom_format.encode_entry(f.bloom_tokens[name],
                                                           bloom_format.combine(filters)))
    if not entries:
        return None
    return pa.StructArray.from_arrays([pa.array(e, pa.binary()) for _, e in entries.values()],
                                      names=list(entries))


def _value_set_column(footers: list[FileFooter], by_file: bool) -> pa.StructArray | None:
    """The ``value_set`` entries of files sharing one schema: each row group's dictionary
    values, or per file their union."""
    entries = _index_entries(
        footers, by_file, _INDEXES["dictionaries"].held,
        lambda f, name, sets: sets[0] if len(sets) == 1 else pa.concat_arrays(sets).unique())
    if not entries:
        return None
    arrays = []
    for j, sets in entries.values():
        offsets = np.zeros(len(sets) + 1, np.int32)
        np.cumsum([0 if e is None else len(e) for e in sets], out=offsets[1:])
        known = [e for e in sets if e is not None]
        flat = pa.concat_arrays(known) if known else pa.array([], footers[0].plan.leaves[j].target)
        arrays.append(pa.ListArray.from_arrays(pa.array(offsets), flat,
                                               mask=pa.array([e is None for e in sets])))
    return pa.StructArray.from_arrays(arrays, names=list(entries))


def _group_table(footers: list[FileFooter], file_index: np.ndarray, granularity: str,
                 parts: dict[str, pa.Array], known: dict[str, np.ndarray]) -> pa.Table:
    """The stats rows of files sharing one schema; ``file_index``: their listing positions,
    kept in an ``__order`` column for the final sort. ``parts`` / ``known`` are per file."""
    top, num_records, row_group = group_stats(footers, granularity)
    by_file = granularity == "file"
    local = np.arange(len(footers))
    per_container = local if by_file else np.repeat(local, [len(f.num_rows) for f in footers])
    paths = [f.path for f in footers]
    if by_file:
        path_col = pa.array(paths, pa.string())
        ids = paths
        rg_col = pa.nulls(len(paths), pa.int32())
    else:
        counts = [len(f.num_rows) for f in footers]
        path_col = pa.array(np.repeat(np.array(paths, dtype=object), counts).tolist(), pa.string())
        rg_col = pa.array(row_group, pa.int32())
        ids = [f"{p}#rg={r}" for p, r in zip(path_col.to_pylist(), row_group.tolist())]
    data_names = {s.min_field.name for s in top}
    take = pa.array(per_container)
    counted = num_records >= 0  # a row count the file contradicts is unknown (-1)
    for name, values in parts.items():
        if name not in data_names:
            top.append(partition_stats(name, values.take(take),
                                       known[name][per_container] & counted,
                                       np.maximum(num_records, 0)))
    extra = {}
    if parts:
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            [v.take(take) for v in parts.values()], names=list(parts))
    blooms = _bloom_column(footers, by_file)
    if blooms is not None:
        extra[layout.BLOOM_FILTER] = blooms
    sets = _value_set_column(footers, by_file)
    if sets is not None:
        extra[layout.VALUE_SET] = sets
    table = stats_table(ids, pa.array(num_records, pa.int64(), mask=~counted), top, extra=extra,
                        leading={layout.PATH: path_col, layout.ROW_GROUP: rg_col})
    return table.append_column("__order", pa.array(file_index[per_container]))


def _skipped_table(files: list[SourceFile], index: np.ndarray, parts: dict[str, pa.Array],
                   num_records: int | None = None) -> pa.Table:
    """Rows of files whose footers were not read: statistics unknown (skipped files), or
    ``num_records=0`` (empty files)."""
    take = pa.array(index)
    columns = {
        layout.CONTAINER: pa.array([files[i].path for i in index], pa.string()),
        layout.PATH: pa.array([files[i].path for i in index], pa.string()),
        layout.ROW_GROUP: pa.nulls(len(index), pa.int32()),
        layout.NUM_RECORDS: pa.array([num_records] * len(index), pa.int64()),
    }
    if parts:
        columns[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            [v.take(take) for v in parts.values()], names=list(parts))
    columns["__order"] = pa.array(index, pa.int64())
    return pa.table(columns)


def _check_columns(columns, footers: list[FileFooter], parts) -> tuple[str, ...] | None:
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = [columns]
    columns = tuple(columns)
    known = set(parts)
    for f in footers:
        known.update(f.plan.known)
    missing = [c for c in columns if c not in known]
    if missing:
        raise StatsError(f"columns= names {missing[0]!r}, which no file has; known columns: "
                         f"{listed(sorted(known))}", column=missing[0])
    return columns


def _ngram_index(table: pa.Table, names: list[str], files: dict[str, SourceFile], filesystem,
                 gram_size: int, case_insensitive: bool) -> pa.StructArray:
    """Read the indexed string columns (only them) and build one index per container."""
    import pyarrow.parquet as pq
    from prune_engine.ngram.build import build_index_column

    paths = table.column(layout.PATH).to_pylist()
    groups = table.column(layout.ROW_GROUP).to_pylist()
    counts = table.column(layout.NUM_RECORDS).to_pylist()
    pieces: dict[str, list] = {n: [] for n in names}
    offsets = [0]
    opened: dict[str, Any] = {}
    for path, rg, count in zip(paths, groups, counts):
        if count is None:  # a skipped file: no values, no index
            offsets.append(offsets[-1])
            continue
        pf = opened.get(path)
        if pf is None:
            pf = opened[path] = pq.ParquetFile(files[path].location, filesystem=filesystem)
        present = [n for n in names if n in pf.schema_arrow.names]
        data = pf.read(present) if rg is None else pf.read_row_group(rg, present)
        for n in names:
            pieces[n].append(data.column(n) if n in present else pa.nulls(data.num_rows,
                                                                            pa.string()))
        offsets.append(offsets[-1] + data.num_rows)
    group_offsets = np.array(offsets, np.int64)
    skipped = pa.array([c is None for c in counts])
    arrays = []
    for n in names:
        chunks = [c.cast(pa.large_string()) for c in pieces[n]]
        values = pa.chunked_array(chunks, pa.large_string()).combine_chunks()
        built = build_index_column(values, group_offsets, gram_size=gram_size,
                                   case_insensitive=case_insensitive)
        arrays.append(pc.if_else(skipped, pa.scalar(None, built.type), built))
    return pa.StructArray.from_arrays(arrays, fields=[pa.field(n, a.type)
                                                      for n, a in zip(names, arrays)])


def index_names(value, option: str) -> bool | list[str] | None:
    """``bloom=`` / ``dictionaries=`` as read_footer takes it (and metadata keeps it): None,
    True, or a list of column names."""
    if value is None or value is False:
        return None
    if value is True:
        return True
    names = [value] if isinstance(value, str) else list(value) \
        if isinstance(value, (list, tuple, set)) else [value]
    if not all(isinstance(b, str) for b in names):
        raise StatsError(f"{option}= takes True or column names, not {value!r}")
    return names or None


@dataclass(frozen=True)
class _Index:
    """An index option of ``collect_stats``: what it reads, the leaves it cannot read, a
    footer's items of it (leaf path -> one per row group) and the reasons some were left out."""

    what: str
    unreadable: str
    held: Callable[[FileFooter], dict]
    problems: Callable[[FileFooter], list]


_INDEXES = {
    "bloom": _Index("Bloom filter", "INT96, TIME, BOOLEAN or Float16",
                    lambda f: f.blooms, lambda f: f.bloom_problems),
    "dictionaries": _Index("dictionary page", "INT96, BOOLEAN or Float16",
                           lambda f: f.dictionaries, lambda f: f.dictionary_problems),
}


def _check_names(option: str, names, known: set[str], present) -> None:
    """Every name ``bloom=`` (``dictionaries=``) gives is a column (``known``) and reaches a
    leaf it can read (``present``: the dotted leaf paths)."""
    if not isinstance(names, list):
        return
    what, types = _INDEXES[option].what, _INDEXES[option].unreadable
    for name in names:
        if name not in known:
            raise StatsError(f"{option}= names {name!r}, which no file has; known columns: "
                             f"{listed(sorted(known))}", column=name)
        if not any(p == name or p.startswith(name + ".") for p in present):
            raise StatsError(f"{option}= names {name!r}, which has no leaf whose {what} "
                             f"can be read (outside lists and maps, of a type other than "
                             f"{types})", column=name)


#: ``metadata`` key: per file, the statistics it holds that cannot be true (read as unknown)
UNTRUSTED = "untrusted_statistics"


def _refuse(errors: list[tuple[int, str]], files: list[SourceFile]) -> None:
    """The :class:`StatsError` of failing files (``on_error="raise"``, ``errors``: their
    listing positions and one-line errors, in listing order): the first one's message, and
    how many more, on one line."""
    _refuse_paths([m for _, m in errors], [files[i].path for i, _ in errors])


def _refuse_paths(messages: list[str], paths: list[str]) -> None:
    """:func:`_refuse` of files named by their paths."""
    more = f" (and {len(messages) - 1} more failing files)" if len(messages) > 1 else ""
    raise StatsError(one_line(messages[0], 390 - len(more)) + more, containers=paths[:10])


def _group_tables(footers: dict[int, FileFooter], indices: list[int], granularity: str,
                  parts: dict[str, pa.Array], known: dict[str, np.ndarray]
                  ) -> tuple[list[pa.Table], list[tuple[int, str]]]:
    """The stats rows of files sharing one schema (listing positions ``indices``), and the
    files that could not be assembled, with their one-line errors. Should the group fail as a
    whole, each file is tried alone: one bad file never costs the others their statistics."""

    def table(subset: list[int]) -> pa.Table:
        index = np.array(subset, np.int64)
        sub = {k: v.take(pa.array(index)) for k, v in parts.items()}
        sub_known = {k: v[index] for k, v in known.items()}
        return _group_table([footers[i] for i in subset], index, granularity, sub, sub_known)

    try:
        return [table(indices)], []
    except Exception:  # noqa: BLE001 - each file is tried alone below
        pass
    built, failed = [], []
    for i in indices:
        try:
            built.append(table([i]))
        except Exception as e:  # noqa: BLE001 - this file's error only
            failed.append((i, f"{footers[i].path}: its statistics cannot be assembled: "
                              f"{type(e).__name__}: {one_line(str(e))}"))
    return built, failed


def _conflicts(groups: list[tuple[pa.Schema, list[int]]]) -> dict[int, str]:
    """Of groups of files (each: the schema of their statistics, and the files' listing
    positions), the groups whose schema cannot join the others' (:mod:`.unify`), each with
    the reason on one line: the schemas of the most files win (then the first listed), so
    that a corrupt footer that changes a column's type, or one file written with another
    type, is that file's error, not the lake's. The one rule of :func:`_collect`,
    :func:`merge_parts` and :func:`refresh`."""
    try:
        concat_stats([schema.empty_table() for schema, _ in groups])
        return {}
    except StatsError:
        pass
    order = sorted(range(len(groups)), key=lambda g: (-len(groups[g][1]),
                                                      min(groups[g][1], default=0)))
    kept: list[int] = []
    failed: dict[int, str] = {}
    for g in order:
        try:
            concat_stats([groups[k][0].empty_table() for k in kept + [g]])
            kept.append(g)
        except StatsError as e:
            failed[g] = one_line(str(e))
    return failed


def _types_record(tables: list[pa.Table], files: list[SourceFile]) -> dict[str, list[str]]:
    """Per distinct schema of the files' statistics (Arrow IPC, base64), the files that have
    it: what :func:`merge_parts` needs to find, across slices, the files whose types cannot
    join the others' (a slice's table holds its files' types unified already)."""
    out: dict[str, list[str]] = {}
    for t in tables:
        schema = t.schema.remove(t.schema.get_field_index("__order"))
        key = base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")
        out.setdefault(key, []).extend(files[i].path
                                       for i in sorted(set(t.column("__order").to_pylist())))
    return out


def _unjoinable(path: str, why: str) -> str:
    """The error of a file whose statistics' types cannot join the other files'."""
    return f"{path}: its schema does not unify with the other files': {why}"


def _compatible(tables: list[pa.Table], files: list[SourceFile]
                ) -> tuple[list[pa.Table], list[tuple[int, str]]]:
    """The stats rows of files of different schemas that unify, and the files whose schema
    cannot join the others' (:func:`_conflicts`), with their one-line errors."""
    groups = [(t.schema, sorted(set(t.column("__order").to_pylist()))) for t in tables]
    failed = _conflicts(groups)
    kept = [t for g, t in enumerate(tables) if g not in failed]
    errors = [(i, _unjoinable(files[i].path, why)) for g, why in failed.items()
              for i in groups[g][1]]
    return kept, errors


def _data_schema(schemas: list[pa.Schema]) -> pa.Schema:
    """The top-level columns of the files' Arrow schemas (the files whose statistics are
    kept, so their types unify), for the names and types ``ngram=`` checks: each column in
    its plain type (a ``string_view`` is a string: :func:`.unify.plain_type`), the first
    file's, or the first that is not all-null (a ``null`` column)."""
    types: dict[str, pa.DataType] = {}
    for schema in schemas:
        for f in schema:
            if f.name not in types or pa.types.is_null(types[f.name]):
                types[f.name] = plain_type(f.type)
    return pa.schema(list(types.items()))


def _warn_untrusted(untrusted: dict[str, list[str]]) -> None:
    """One warning per file whose footer says what cannot be (read as unknown)."""
    for path, problems in untrusted.items():
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        warnings.warn(one_line(f"{path}: statistics that cannot be true are read as unknown "
                               f"(the containers keep): {problems[0]}", 380) + more,
                      stacklevel=4)


def _warn_problems(problems: list[str], what: str) -> None:
    if problems:
        warnings.warn(one_line(f"{len(problems)} {what}(s) could not be used and are left out "
                               f"(those containers keep): {problems[0]}", 390), stacklevel=4)


def _collect(listing: Listing, granularity: str, columns, ngram, gram_size: int,
             ngram_case_insensitive: bool, on_error: str, progress, threads, *,
             bloom=None, dictionaries=None, dictionary_bytes: int = dictionary.MAX_BYTES,
             empty_files: str = "error", part: bool = False,
             compute_missing: bool = False, nan_free: list[str] | None = None) -> StatsTable:
    """The statistics of the listed files. ``part=True``: the files are a slice of a larger
    listing (:func:`collect_part`), so ``columns``, ``ngram``, ``bloom`` and ``dictionaries``
    names missing here are not errors (:func:`merge_parts` checks them over all slices); what
    this slice knows is kept in ``metadata["part"]``. ``empty_files="rows"``: a file of 0
    bytes is a container of no rows (as Spark reads a folder), not an unreadable file.
    ``nan_free``: columns declared free of NaN, which no dictionary page read may contradict
    (the caller applies the declaration to the whole table: :func:`.nans.declare_nan_free`)."""
    if granularity not in GRANULARITIES:
        raise StatsError(f"granularity must be one of {GRANULARITIES}, not {granularity!r}")
    if on_error not in ("raise", "skip"):
        raise StatsError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    files = listing.files
    identify(files, listing.filesystem)
    selected = None if columns is None else (tuple([columns]) if isinstance(columns, str)
                                             else tuple(columns))
    chosen = {"bloom": index_names(bloom, "bloom"),
              "dictionaries": index_names(dictionaries, "dictionaries")}
    if not isinstance(dictionary_bytes, int) or dictionary_bytes < 1:
        raise StatsError(f"dictionary_bytes must be a positive integer, not {dictionary_bytes!r}")
    if empty_files not in ("error", "rows"):
        raise StatsError(f"empty_files must be 'error' or 'rows', not {empty_files!r}")
    empty = {i for i, f in enumerate(files) if f.size == 0} if empty_files == "rows" else set()
    read = iter(read_footers([f for i, f in enumerate(files) if i not in empty], selected,
                             listing.filesystem, threads, progress,
                             {**chosen, "dictionary_bytes": dictionary_bytes}))
    results = [None if i in empty else next(read) for i in range(len(files))]
    errors = [(i, r) for i, r in enumerate(results) if isinstance(r, str)]
    if errors and on_error == "raise":
        _refuse(errors, files)
    footers = {i: r for i, r in enumerate(results) if r is not None and not isinstance(r, str)}
    check_dictionaries(footers.values(), nan_free)
    # per index option: the leaf paths some file holds items of, and the items left out
    found = {option: (sorted({p for f in footers.values() for p in index.held(f)}),
                      [p for f in footers.values() for p in index.problems(f)])
             for option, index in _INDEXES.items()}
    parts = partition_arrays(files, listing.typed)
    known = {k: np.array([k in f.partitions for f in files], bool) for k in parts}
    if not part:
        every = set(parts).union(*(f.plan.known for f in footers.values()))
        for option, (paths, _) in found.items():
            _check_names(option, chosen[option], every, paths)
    if selected is not None:
        # validated against every file's full column list: a name no file has is an error
        if not part:
            _check_columns(selected, list(footers.values()), parts)
        parts = {k: v for k, v in parts.items()
                 if any(c == k for c in selected)} if parts else parts
        known = {k: known[k] for k in parts}
    by_key: dict[tuple, list[int]] = {}
    for i, footer in footers.items():
        by_key.setdefault(footer.key, []).append(i)
    tables = []
    for indices in by_key.values():
        built, failed = _group_tables(footers, indices, granularity, parts, known)
        tables.extend(built)
        errors.extend(failed)
    tables, conflicting = _compatible(tables, files)
    errors.extend(conflicting)
    types = _types_record(tables, files) if part else None
    for i, _ in errors:
        footers.pop(i, None)
    errors.sort()
    if errors and on_error == "raise":
        _refuse(errors, files)
    untrusted = {f.path: f.problems() for f in footers.values() if f.problems()}
    if errors:
        tables.append(_skipped_table(files, np.array([i for i, _ in errors], np.int64), parts))
    if empty:
        tables.append(_skipped_table(files, np.array(sorted(empty), np.int64), parts,
                                     num_records=0))
    table = concat_stats(tables)
    if table.num_rows:
        rg = table.column(layout.ROW_GROUP).fill_null(-1).to_numpy()
        table = table.take(pa.array(np.lexsort((rg, table.column("__order").to_numpy()))))
    if "__order" in table.column_names:
        table = table.drop_columns(["__order"])
    for name in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT):
        if name not in table.column_names:  # every file skipped: nothing known
            table = table.append_column(name, pa.nulls(table.num_rows, pa.struct([])))
    computed = None
    if compute_missing:
        table, computed = computed_stats.compute_missing(
            table, listing.filesystem, {f.path: f.location for f in files}, parts)
    names = []
    requested = [] if ngram is None else ([ngram] if isinstance(ngram, str) else list(ngram))
    if ngram is not None:
        unified = _data_schema([f.plan.schema for f in footers.values()])
        if part:  # the names this slice has; merge_parts checks the others exist somewhere
            ngram = [n for n in requested if n in unified.names]
        names = ngram_columns(ngram, unified)
    if names:
        table = table.append_column(layout.NGRAM_INDEX, _ngram_index(
            table, names, {f.path: f for f in files}, listing.filesystem, gram_size,
            ngram_case_insensitive))
    record = footer_record.Record()
    for i, f in footers.items():
        record.add(files[i].path, f.plan.schema, len(f.num_rows))
    metadata = {
        **record.metadata(),
        "skipped_files": [{"path": files[i].path, "error": m} for i, m in errors],
        UNTRUSTED: untrusted,
        "files": {f.path: f.identity for i, f in enumerate(files)
                  if i in footers or i in empty},
        "collect": {"granularity": granularity, "columns": list(selected) if selected else None,
                    "ngram": names or None, "gram_size": gram_size,
                    "ngram_case_insensitive": ngram_case_insensitive, **chosen,
                    "dictionary_bytes": dictionary_bytes, "compute_missing": compute_missing},
    }
    if computed is not None:
        metadata["computed"] = computed
    for option, (_, problems) in found.items():
        if chosen[option]:
            metadata[option] = {"problems": problems}
            if not part:
                _warn_problems(problems, _INDEXES[option].what)
    if not part:
        _warn_untrusted(untrusted)
    if chosen["bloom"]:
        metadata["bloom"]["bytes_read"] = sum(f.bloom_bytes for f in footers.values())
    if part:
        known = set(listing.typed.names if listing.typed is not None else ())
        for f in footers.values():
            known.update(f.plan.known)
        metadata["part"] = {"known": sorted(known), "ngram": names, "requested": requested,
                            "paths": {option: paths for option, (paths, _) in found.items()},
                            "types": types, "on_error": on_error}
    return StatsTable(table, metadata)


# ------------------------------------------------------------------------------ in slices


def collect_part(files: Sequence[SourceFile], partition_schema: pa.Schema,
                 granularity: str = "row_group", columns: Sequence[str] | None = None, *,
                 ngram=None, gram_size: int = 3, ngram_case_insensitive: bool = False,
                 on_error: str = "raise", threads: int | None = 1, bloom=None,
                 dictionaries=None, dictionary_bytes: int = dictionary.MAX_BYTES,
                 empty_files: str = "error", compute_missing: bool = False,
                 nan_free: Sequence[str] | None = None) -> StatsTable:
    """The statistics of a slice of a listing (:func:`~prune_engine.stats.listing.list_source`),
    with the partition types of the whole listing
    (:func:`~prune_engine.stats.listing.partition_types`); :func:`merge_parts` joins the slices
    into the table ``collect_stats`` makes of the whole listing. Runs where the files are read
    (e.g. in Spark executors). ``empty_files="rows"``: a file of 0 bytes is a container of no
    rows, as Spark reads a folder (the default, ``"error"``, is ``collect_stats``'s).
    ``nan_free``: declared NaN-free columns, which no dictionary page read may contradict (the
    declaration itself is applied to the merged table: :func:`.nans.declare_nan_free`)."""
    files = list(files)
    location, paths = resolve([f.path for f in files]) if files else (None, [])
    if location is not None:  # files named by URIs: read through their filesystem
        for f, path in zip(files, paths):
            f.fs_path = path
    listing = Listing(files, location.filesystem if location else None, partition_schema)
    return _collect(listing, granularity, columns, ngram, gram_size, ngram_case_insensitive,
                    on_error, False, threads, bloom=bloom, dictionaries=dictionaries,
                    dictionary_bytes=dictionary_bytes, empty_files=empty_files, part=True,
                    compute_missing=compute_missing, nan_free=nan_free_names(nan_free))


def merge_parts(parts: Sequence[StatsTable]) -> StatsTable:
    """The statistics of a whole listing from its slices (:func:`collect_part`, in listing
    order): rows and metadata concatenated, schemas unified, and the ``columns`` / ``ngram``
    names checked over all slices as ``collect_stats`` checks them over all files. A file
    whose types cannot join the other slices' files' is that file's error, as in
    ``collect_stats`` (by the types each slice recorded per file: :func:`_join_parts`)."""
    parts = list(parts)
    if not parts:
        raise StatsError("no statistics to merge: the listing was empty")
    options = dict(parts[0].metadata["collect"])
    known = set().union(*(p.metadata["part"]["known"] for p in parts))
    for name in options.get("columns") or ():
        if name not in known:
            raise StatsError(f"columns= names {name!r}, which no file has; known columns: "
                             f"{listed(sorted(known))}", column=name)
    for option in _INDEXES:
        _check_names(option, options.get(option), known,
                     set().union(*(p.metadata["part"]["paths"][option] for p in parts)))
    present = set().union(*(p.metadata["part"]["ngram"] for p in parts))
    wanted = parts[0].metadata["part"]["requested"]
    for name in wanted:
        if name not in present:
            raise StatsError(f"ngram= names {name!r}, which is not a column of the data; "
                             f"columns: {listed(sorted(known))}", column=name)
    try:
        table = concat_stats([p.table for p in parts])
        unjoined: dict[str, str] = {}
    except StatsError:
        table, unjoined = _join_parts(parts)
    index_type = table.schema.field(layout.NGRAM_INDEX).type \
        if layout.NGRAM_INDEX in table.column_names else None
    if index_type is not None and [f.name for f in index_type] != wanted:  # requested order
        index = table.column(layout.NGRAM_INDEX).combine_chunks()
        table = table.set_column(table.column_names.index(layout.NGRAM_INDEX),
                                 layout.NGRAM_INDEX, pa.StructArray.from_arrays(
                                     [index.field(n) for n in wanted],
                                     fields=[index.type.field(n) for n in wanted]))
    files: dict = {}
    for p in parts:
        files.update(p.metadata["files"])
    skipped = [s for p in parts for s in p.metadata["skipped_files"]]
    if unjoined:  # those files are skipped: tried again by the next update_stats
        files = {k: v for k, v in files.items() if k not in unjoined}
        rank = {path: i for i, path in enumerate(_listed_paths(parts))}
        skipped = sorted(skipped + [{"path": k, "error": m} for k, m in unjoined.items()],
                         key=lambda s: rank.get(s["path"], len(rank)))
    options["ngram"] = wanted or None
    untrusted = {k: v for p in parts for k, v in p.metadata.get(UNTRUSTED, {}).items()
                 if k not in unjoined}
    _warn_untrusted(untrusted)
    metadata = {**footer_record.merge([p.metadata for p in parts],
                                      set(files) if unjoined else None),
                "skipped_files": skipped,
                UNTRUSTED: untrusted,
                "files": files, "collect": options}
    for option, index in _INDEXES.items():
        if options.get(option):
            metadata[option] = {"problems": [x for p in parts
                                             for x in p.metadata[option]["problems"]]}
            _warn_problems(metadata[option]["problems"], index.what)
    if options.get("bloom"):
        metadata["bloom"]["bytes_read"] = sum(p.metadata["bloom"]["bytes_read"] for p in parts)
    if options.get("compute_missing"):
        metadata["computed"] = {
            "columns": sorted(set().union(*(p.metadata["computed"]["columns"] for p in parts))),
            "containers": sum(p.metadata["computed"]["containers"] for p in parts)}
    return StatsTable(table, metadata)


#: the statistics columns whose types are those of the files' columns
_TYPED = (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT, layout.NAN_COUNT,
          layout.VALUE_SET, layout.BLOOM_FILTER)


def _listed_paths(parts: Sequence[StatsTable]) -> list[str]:
    """The files of the slices, in listing order (those of a slice's rows, then any file of
    no row group its ``types`` record names)."""
    paths: dict[str, None] = {}
    for p in parts:
        paths.update(dict.fromkeys(p.table.column(layout.PATH).to_pylist()))
        for named in (p.metadata["part"].get("types") or {}).values():
            paths.update(dict.fromkeys(named))
    return list(paths)


def _join_parts(parts: Sequence[StatsTable]) -> tuple[pa.Table, dict[str, str]]:
    """The slices' rows as one table when the types of some files cannot join the others'
    (:func:`_conflicts` over every slice's files, by the types each slice recorded): those
    files are that many errors (path -> one line, in listing order), a one-line
    :class:`StatsError` naming the first with ``on_error="raise"``, else each a row of
    unknown statistics (as ``collect_stats`` skips a file); the other files' rows are
    brought to the types of the files that join, unchanged otherwise."""
    records = [p.metadata["part"].get("types") for p in parts]
    if any(r is None for r in records):  # slices of an older release: no per-file types
        concat_stats([p.table for p in parts])  # raises the lake's error, as it did
    rank = {path: i for i, path in enumerate(_listed_paths(parts))}
    groups: dict[str, list[str]] = {}
    for record in records:
        for text, paths in record.items():
            groups.setdefault(text, []).extend(paths)
    texts = list(groups)
    schemas = {t: pa.ipc.read_schema(pa.py_buffer(base64.b64decode(t))) for t in texts}
    failed = _conflicts([(schemas[t], sorted(rank[p] for p in groups[t])) for t in texts])
    unjoined = {path: _unjoinable(path, why) for g, why in failed.items()
                for path in groups[texts[g]]}
    unjoined = dict(sorted(unjoined.items(), key=lambda item: rank[item[0]]))
    if not unjoined:  # the files' types join: the conflict is elsewhere, the lake's error
        concat_stats([p.table for p in parts])
    if parts[0].metadata["part"].get("on_error", "raise") == "raise":
        _refuse_paths(list(unjoined.values()), list(unjoined))
    joined = {texts[g] for g in range(len(texts)) if g not in failed}
    tables = []
    for p, record in zip(parts, records):
        tables.extend(_part_rows(p.table, unjoined, [schemas[t] for t in record if t in joined],
                                 rank))
    table = concat_stats(tables)
    rg = table.column(layout.ROW_GROUP).fill_null(-1).to_numpy()
    table = table.take(pa.array(np.lexsort((rg, table.column("__order").to_numpy()))))
    return table.drop_columns(["__order"]), unjoined


def _part_rows(table: pa.Table, unjoined: dict[str, str], schemas: list[pa.Schema],
               rank: dict[str, int]) -> list[pa.Table]:
    """A slice's rows without the files of ``unjoined``: the other files' rows in the types
    of their own statistics (``schemas``: the slice's schemas that join), and one row of
    unknown statistics per unjoined file; each row with its file's listing rank
    (``__order``)."""
    paths = table.column(layout.PATH).to_pylist()
    bad = np.array([p in unjoined for p in paths], bool)
    good = table.filter(pa.array(~bad))
    target = concat_stats([s.empty_table() for s in schemas]).schema if schemas else \
        pa.schema([])
    good = conform_table(good, pa.schema(
        [target.field(f.name) if f.name in target.names else f for f in good.schema
         if f.name not in _TYPED or f.name in target.names]))
    good = good.append_column("__order", pa.array([rank[p] for p in paths if p not in unjoined],
                                                  pa.int64()))
    first = {}
    for i, path in enumerate(paths):
        if bad[i]:
            first.setdefault(path, i)
    rows = table.take(pa.array(list(first.values()), pa.int64()))
    columns = {layout.CONTAINER: pa.array(list(first), pa.string()),
               layout.PATH: pa.array(list(first), pa.string()),
               layout.ROW_GROUP: pa.nulls(len(first), pa.int32()),
               layout.NUM_RECORDS: pa.nulls(len(first), pa.int64())}
    if layout.PARTITION_VALUES in table.column_names:
        columns[layout.PARTITION_VALUES] = rows.column(layout.PARTITION_VALUES)
    columns["__order"] = pa.array([rank[p] for p in first], pa.int64())
    return [good, pa.table(columns)]


def collect_stats(source, granularity: str = "row_group", columns: Sequence[str] | None = None,
                  *, ngram=None, gram_size: int = 3, ngram_case_insensitive: bool = False,
                  on_error: str = "raise", progress: bool | None = None,
                  threads: int | None = None, bloom=None, dictionaries=None,
                  dictionary_bytes: int = dictionary.MAX_BYTES,
                  compute_missing: bool = False, nan_free: Sequence[str] | None = None,
                  filesystem=None) -> StatsTable:
    """Statistics of every Parquet file of ``source``, from the footers only (and, on
    request, from the data of the column chunks whose footers have none).

    ``source``: a directory (walked recursively; Hive ``key=value`` folders become typed
    ``partition_values`` and exact statistics), a glob, a list of paths, or a
    ``pyarrow.dataset.Dataset``; paths may be ``file://`` URIs or URIs of any filesystem pyarrow
    or fsspec resolves (``s3://bucket/lake``, ``gs://...``, ``hdfs://...``), or paths on
    ``filesystem`` (a ``pyarrow.fs.FileSystem`` or an fsspec filesystem); a remote file is named
    by its URI in the statistics. Footers are read with ranged reads (one request for a footer
    under 64 KiB, besides the file's opening), ``threads`` at a time. One row per row group
    (``granularity="row_group"``, container ``"path#rg=N"``) or per file (``"file"``, container
    ``"path"``, ``row_group`` null). ``columns`` limits the columns (top-level names or dotted
    struct paths). ``ngram`` names string columns to index (this reads those columns' data), as
    n-grams of ``gram_size`` characters, folded to lower case with ``ngram_case_insensitive``.
    ``on_error="skip"`` lists unreadable files in ``metadata["skipped_files"]`` and gives them a
    row with unknown statistics (always kept); ``"raise"`` (the default) raises a one-line
    :class:`~prune_engine.StatsError` naming the first. A file whose column types cannot join
    the other files' (strings where most files hold integers) is such a file: the schema of the
    most files wins. A ``string_view`` or ``binary_view`` column (as some writers store it) has
    ``string`` / ``binary`` statistics. Statistics a file holds that cannot be true (more nulls
    than rows, a min above the max, a Bloom filter that denies its own bounds, a dictionary page
    whose checksum fails, ...) are unknown in that column chunk, with one warning per file;
    ``metadata["untrusted_statistics"]`` maps each such file to its reasons. ``progress``: a bar
    on stderr (default: only on a terminal). ``threads``: footer-reading threads (default: one
    per core; more for remote storage). ``bloom``: True (every column) or column names: read the
    Parquet Bloom filters the files carry (in the same pass as the footers) into a
    ``bloom_filter`` column, per container (a file's is the union of its row groups'); ``=`` and
    ``IN`` then prune on them. A filter that cannot be trusted is left out with a warning (its
    container keeps); ``metadata["bloom"]`` gives the bytes read and the reasons.
    ``dictionaries``: True or column names: the dictionary pages (of at most
    ``dictionary_bytes``) of chunks whose data pages are all dictionary-encoded become exact
    value sets in a ``value_set`` column (a file's: the union of its row groups'); ``=``,
    ``IN``, ``!=`` and ``NOT IN`` prune on them. ``compute_missing=True``: the chunks whose
    footers give no min, max or null count (INT96 timestamps, as Spark writes by default;
    writers that skip statistics) are read and their statistics computed
    (:mod:`prune_engine.stats.computed`); ``metadata["computed"]`` says which columns and how
    many containers. ``nan_free``: float columns (dotted paths for struct fields) the caller
    promises hold no NaN: their ``nan_count`` is 0 in every container, so ``>``, ``>=``, ``!=``
    and ``NOT IN`` prune on them (a float whose NaN count is unknown may hold NaN, which sorts
    above every number). Writers rarely record NaN counts (pyarrow and Spark do not), so without
    it float ranges prune only where ``dictionaries`` prove a chunk free of NaN. A NaN in a
    declared column loses the rows that only it matches; a NaN count above 0 in the footers (or
    computed, or in a dictionary page read) is a :class:`~prune_engine.StatsError` instead
    (:mod:`prune_engine.stats.nans`). The names are kept in ``metadata["collect"]``.

    >>> import io, os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"s": ["b", "a", "c"]}), path, row_group_size=2)
    >>> stats = pe.collect_stats(path, progress=False)
    >>> stats.column("row_group").to_pylist(), stats.column("max_values").to_pylist()
    ([0, 1], [{'s': 'b'}, {'s': 'c'}])
    """
    names = nan_free_names(nan_free)
    listing = list_source(source, filesystem)
    stats = _collect(listing, granularity, columns, ngram, gram_size, ngram_case_insensitive,
                     on_error, progress, threads, bloom=bloom, dictionaries=dictionaries,
                     dictionary_bytes=dictionary_bytes, compute_missing=compute_missing,
                     nan_free=names)
    return declare_nan_free(stats, names)


def update_stats(stats, source, *, on_error: str | None = None, progress: bool | None = None,
                 threads: int | None = None, filesystem=None) -> StatsTable:
    """``stats`` brought up to date with ``source``: rows of deleted files dropped, new and
    changed files (by path, size and modification time) read, unchanged files not re-read.

    The collection options (granularity, columns, n-grams, indexes, ``nan_free``) are the
    ones ``stats`` was made with (its metadata); files skipped last time are tried again.
    ``on_error``, ``progress``, ``threads`` and ``filesystem`` mean what they mean for
    :func:`collect_stats` (``on_error`` defaults to ``"raise"``). ``metadata["refresh"]``
    counts the files reused, changed, new and gone. A new file whose column types cannot join
    the kept files' is that file's error, as in ``collect_stats``: every file is then read
    again (``metadata["refresh"]["reread"]`` counts the unchanged ones), so that the schema of
    the most files wins and the result is what ``collect_stats`` gives.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> root = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"x": [1]}), os.path.join(root, "a.parquet"))
    >>> stats = pe.collect_stats(root, granularity="file", progress=False)
    >>> pq.write_table(pa.table({"x": [7]}), os.path.join(root, "b.parquet"))
    >>> pe.update_stats(stats, root, progress=False).column("max_values").to_pylist()
    [{'x': 1}, {'x': 7}]
    """
    stats = as_stats_table(stats)
    options = dict(stats.metadata.get("collect") or {})
    if layout.PATH not in stats.table.column_names:
        raise StatsError("update_stats needs a 'path' column in the statistics (made by "
                         "collect_stats)", column=layout.PATH)
    granularity = options.get("granularity")
    if granularity is None:
        granularity = "file" if stats.table.column(layout.ROW_GROUP).null_count == \
            stats.num_rows else "row_group" if layout.ROW_GROUP in stats.table.column_names \
            else "file"
    listing = list_source(source, filesystem)
    names = nan_free_names(options.get("nan_free"))

    def collect(files: list[SourceFile]) -> StatsTable:
        return _collect(Listing(files, listing.filesystem, listing.typed), granularity,
                        options.get("columns"), options.get("ngram"),
                        options.get("gram_size", 3), options.get("ngram_case_insensitive", False),
                        on_error or "raise", progress, threads, bloom=options.get("bloom"),
                        dictionaries=options.get("dictionaries"),
                        dictionary_bytes=options.get("dictionary_bytes", dictionary.MAX_BYTES),
                        compute_missing=options.get("compute_missing", False), nan_free=names)
    return declare_nan_free(refresh(stats, listing, collect), names)


def refresh(stats: StatsTable, listing: Listing, collect) -> StatsTable:
    """``stats`` made current for ``listing``: the rows of files that are gone or changed are
    dropped, ``collect(files)`` gives the statistics of new and changed files, and the rows
    follow the listing's order. ``metadata["refresh"]`` counts the files reused, changed,
    new and gone. A new file whose types cannot join the kept files' makes every file read
    again (``collect(listing.files)``; ``"reread"`` counts the unchanged ones), so that the
    result is the statistics of the whole listing, each file whose types cannot join the
    others' its own error (:func:`_conflicts`), never the lake's. The one refresh of
    :func:`update_stats` and of Spark's reuse of saved statistics (``prune_engine.spark``).
    """
    known = stats.metadata.get("files") or {}
    identify(listing.files, listing.filesystem)
    unchanged = {f.path for f in listing.files if same_file(known.get(f.path), f.identity)}
    fresh = [f for f in listing.files if f.path not in unchanged]
    old_paths = stats.table.column(layout.PATH).to_pylist()
    kept = stats.table.filter(pa.array([p in unchanged for p in old_paths]))
    reread = 0
    if fresh:
        new = collect(fresh)
        try:
            table = concat_stats([kept, new.table])
        except StatsError:
            # a new file's types cannot join the kept files': every file is read again, so
            # that the schema of most files wins and the others are errors (or skipped), as
            # collect_stats decides (one file of another type never stops the lake)
            if unchanged:
                reread, unchanged = len(unchanged), set()
                new = collect(listing.files)
            table = new.table
        new_meta = new.metadata
    else:
        table, new_meta = kept, {"skipped_files": [], "files": {},
                                 **footer_record.Record().metadata()}
    order = {f.path: i for i, f in enumerate(listing.files)}
    rank = np.array([order.get(p, len(order)) for p in table.column(layout.PATH).to_pylist()])
    rg = table.column(layout.ROW_GROUP).fill_null(-1).to_numpy() \
        if layout.ROW_GROUP in table.column_names else np.zeros(table.num_rows)
    table = table.take(pa.array(np.lexsort((rg, rank))))
    files = {p: known[p] for p in unchanged}
    files.update(new_meta.get("files", {}))
    metadata = {**stats.metadata, "files": files,
                **footer_record.merge([stats.metadata, new_meta], set(files)),
                "skipped_files": new_meta.get("skipped_files", []),
                UNTRUSTED: {**{p: v for p, v in (stats.metadata.get(UNTRUSTED) or {}).items()
                               if p in unchanged}, **new_meta.get(UNTRUSTED, {})},
                "refresh": {"reused": len(unchanged),
                            "changed": sum(f.path in known for f in fresh),
                            "new": sum(f.path not in known for f in fresh),
                            "gone": len(set(known) - {f.path for f in listing.files})}}
    if reread:
        metadata["refresh"]["reread"] = reread
    return StatsTable(table, metadata)
