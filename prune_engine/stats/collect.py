"""``collect_stats`` / ``update_stats``: the statistics table of a Parquet lake, from footers.

The steps, each a small function below:

1. list the source (a directory walked recursively, a glob, a list of paths, or a
   ``pyarrow.dataset.Dataset``) with each file's Hive-style ``key=value`` partition folders,
   size and modification time;
2. read the footers in parallel threads (a progress bar on a terminal), each failure a clear
   per-file error, or with ``on_error="skip"`` a listed skip whose row has unknown statistics,
   so that no later query prunes it;
3. turn the files of each distinct schema into statistics in one vectorized pass
   (:mod:`prune_engine.stats.parquet`), add the partition values (typed, and as exact
   ``min = max`` statistics, so partition pruning is ordinary pruning);
4. unify the schemas across files (a column missing in a file is unknown there; int32 -> int64
   and float -> double widen; an incompatible change is an error).

:func:`collect_part` runs steps 2 and 3 on a slice of one listing where the files are read (a
Spark executor), with the partition types of the whole listing (:func:`partition_types`), and
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

import datetime as dt
import glob as globlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.from_arrow import LeafStats, ngram_columns, stats_table
from prune_engine.stats.parquet import FileFooter, group_stats, read_footer
from prune_engine.stats.table import StatsTable, as_stats_table

__all__ = ["collect_stats", "update_stats"]

GRANULARITIES = ("row_group", "file")
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
PARQUET_SUFFIXES = (".parquet", ".parq")


@dataclass
class SourceFile:
    """One file of the source: where it is, its partition values, and its identity."""

    path: str
    partitions: dict[str, Any] = field(default_factory=dict)  # raw strings (None = Hive null)
    size: int | None = None
    mtime_ns: int | None = None


class _Listing:
    def __init__(self, files: list[SourceFile], filesystem=None, typed=None):
        self.files = files
        self.filesystem = filesystem
        #: partition types already known (from a pyarrow Dataset), else inferred from strings
        self.typed: pa.Schema | None = typed


# ------------------------------------------------------------------------------ listing


def _hive_parts(relative_dir: str) -> dict[str, str | None]:
    parts = {}
    for piece in relative_dir.replace("\\", "/").split("/"):
        if "=" in piece:
            key, _, value = piece.partition("=")
            value = unquote(value)
            parts[unquote(key)] = None if value == HIVE_NULL else value
    return parts


def _is_data_name(name: str) -> bool:
    return not name.startswith((".", "_"))


def _walk(root: str) -> list[SourceFile]:
    def fail(error: OSError):
        raise StatsError(f"{error.filename}: cannot list the directory: {error.strerror}",
                         containers=[error.filename])

    out = []
    for folder, dirs, names in os.walk(root, onerror=fail):
        dirs[:] = sorted(d for d in dirs if _is_data_name(d))
        rel = os.path.relpath(folder, root)
        parts = _hive_parts("" if rel == "." else rel)
        for name in sorted(names):
            if _is_data_name(name) and name.lower().endswith(PARQUET_SUFFIXES):
                out.append(SourceFile(os.path.join(folder, name), dict(parts)))
    if not out:
        raise StatsError(f"{root}: no Parquet files (*.parquet) in this directory",
                         containers=[root])
    return out


def _list_paths(paths: Sequence) -> list[SourceFile]:
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            out.extend(_walk(p))
        else:
            out.append(SourceFile(p, _hive_parts(os.path.dirname(p))))
    return out


def _list_dataset(dataset) -> _Listing:
    import pyarrow.dataset as ds

    files = []
    for fragment in dataset.get_fragments():
        keys = ds.get_partition_keys(fragment.partition_expression)
        files.append(SourceFile(fragment.path, dict(keys)))
    names = {k for f in files for k in f.partitions}
    typed = pa.schema([dataset.schema.field(n) for n in dataset.schema.names if n in names])
    return _Listing(files, getattr(dataset, "filesystem", None), typed)


def list_source(source) -> _Listing:
    """The files of ``source`` with their partition values (raw strings), in a stable order."""
    try:
        import pyarrow.dataset as ds

        if isinstance(source, ds.Dataset):
            if not isinstance(source, ds.FileSystemDataset):
                raise StatsError(f"a {type(source).__name__} has no files to read footers from")
            listing = _list_dataset(source)
            if not listing.files:
                raise StatsError("the dataset holds no files")
            return listing
    except ImportError:  # pragma: no cover - pyarrow.dataset is part of pyarrow wheels
        pass
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if os.path.isdir(text):
            return _Listing(_walk(text))
        if os.path.exists(text):
            return _Listing(_list_paths([text]))
        if any(ch in text for ch in "*?["):
            matches = sorted(p for p in globlib.glob(text, recursive=True) if os.path.isfile(p))
            if not matches:
                raise StatsError(f"{text}: the pattern matches no files", containers=[text])
            return _Listing(_list_paths(matches))
        raise StatsError(f"{text}: no such file or directory", containers=[text])
    if isinstance(source, (list, tuple)):
        if not source:
            raise StatsError("the list of paths is empty")
        return _Listing(_list_paths(source))
    raise StatsError("source must be a directory, a glob, a list of paths or a "
                     f"pyarrow.dataset.Dataset, not {type(source).__name__}")


def _identify(files: list[SourceFile], filesystem) -> None:
    """Fill size and modification time (None when the file cannot be stat'ed)."""
    if filesystem is not None:
        infos = filesystem.get_file_info([f.path for f in files])
        for f, info in zip(files, infos):
            f.size = info.size
            f.mtime_ns = info.mtime_ns
        return
    for f in files:
        try:
            st = os.stat(f.path)
        except OSError:
            continue
        f.size, f.mtime_ns = st.st_size, st.st_mtime_ns


# ------------------------------------------------------------------------------ partitions


def _infer_partition_type(values: list[str]) -> pa.DataType:
    present = [v for v in values if v is not None]
    if not present:
        return pa.string()
    try:
        for v in present:
            int(v)
        return pa.int64()
    except ValueError:
        pass
    try:
        for v in present:
            if len(v) != 10:
                raise ValueError(v)
            dt.date.fromisoformat(v)
        return pa.date32()
    except ValueError:
        return pa.string()


def _partition_arrays(files: list[SourceFile], typed: pa.Schema | None) -> dict[str, pa.Array]:
    """Per partition key, one typed value per file; ``None`` where the file lacks the key or
    the value is the Hive null (told apart by :func:`_partition_known`)."""
    keys = list(dict.fromkeys(k for f in files for k in f.partitions))
    out = {}
    for key in keys:
        raw = [f.partitions.get(key) for f in files]
        if typed is not None and key in typed.names:
            typ = typed.field(key).type
            if all(v is None or isinstance(v, str) for v in raw):  # raw folder names
                out[key] = pa.array(raw, pa.string()).cast(typ)
            else:
                out[key] = pa.array(raw, typ)
            continue
        typ = _infer_partition_type(raw)
        strings = pa.array(raw, pa.string())
        out[key] = strings if typ == pa.string() else strings.cast(typ)
    return out


# ------------------------------------------------------------------------------ schema drift


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def unify_types(a: pa.DataType, b: pa.DataType, where: str) -> pa.DataType:
    """The type both ``a`` and ``b`` convert to exactly, or a :class:`StatsError`."""
    if a == b:
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields = {f.name: f for f in a}
        for f in b:
            if f.name in fields:
                old = fields[f.name]
                if layout.is_element_field(old) != layout.is_element_field(f):
                    raise StatsError(f"column {where}{f.name}: a list/map in some files, not in "
                                     "others", column=f"{where}{f.name}")
                merged = unify_types(old.type, f.type, f"{where}{f.name}.")
                fields[f.name] = pa.field(f.name, merged, metadata=old.metadata)
            else:
                fields[f.name] = f
        return pa.struct(list(fields.values()))
    if _is_int(a) and _is_int(b):
        sa, sb = pa.types.is_signed_integer(a), pa.types.is_signed_integer(b)
        if sa == sb:
            return a if a.bit_width >= b.bit_width else b
        unsigned, signed = (b, a) if sa else (a, b)
        if signed.bit_width > unsigned.bit_width:
            return signed
        if unsigned.bit_width < 64:
            return pa.int64()
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return a if a.bit_width >= b.bit_width else b
    for small, large in ((pa.string(), pa.large_string()), (pa.binary(), pa.large_binary())):
        if {a, b} == {small, large}:
            return large
    if pa.types.is_decimal(a) and pa.types.is_decimal(b):
        scale = max(a.scale, b.scale)
        precision = max(a.precision - a.scale, b.precision - b.scale) + scale
        if precision <= 76:
            return pa.decimal128(precision, scale) if precision <= 38 else \
                pa.decimal256(precision, scale)
    if pa.types.is_timestamp(a) and pa.types.is_timestamp(b) and a.tz == b.tz:
        order = "smun"
        return a if order.index(a.unit[0]) >= order.index(b.unit[0]) else b
    raise StatsError(f"column {where.rstrip('.') or '?'} changes type across files: {a} vs {b}",
                     column=where.rstrip("."))


def conform(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` in the unified ``target`` type: missing struct fields become null (unknown)."""
    if array.type == target:
        return array
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        names = [f.name for f in array.type]
        children = [conform(array.field(names.index(f.name)), f.type) if f.name in names
                    else pa.nulls(len(array), f.type) for f in target]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    return array.cast(target)


def concat_stats(tables: Sequence[pa.Table]) -> pa.Table:
    """Concatenate stats tables of different files, unifying their schemas (see above)."""
    tables = [t for t in tables if t is not None]
    columns: dict[str, pa.Field] = {}
    for table in tables:
        for f in table.schema:
            if f.name in columns:
                merged = unify_types(columns[f.name].type, f.type, "" if f.name in
                                     layout.STAT_STRUCTS else f"{f.name}.")
                columns[f.name] = pa.field(f.name, merged)
            else:
                columns[f.name] = f
    schema = pa.schema(list(columns.values()))
    conformed = []
    for table in tables:
        arrays = []
        for f in schema:
            if f.name in table.column_names:
                arrays.append(conform(table.column(f.name).combine_chunks(), f.type))
            else:
                arrays.append(pa.nulls(table.num_rows, f.type))
        conformed.append(pa.Table.from_arrays(arrays, schema=schema))
    return pa.concat_tables(conformed) if conformed else pa.table({})


# ------------------------------------------------------------------------------ reading


def _read_one(f: SourceFile, columns, filesystem):
    try:
        return read_footer(f.path, f.path, columns, filesystem)
    except StatsError as e:
        return f"{f.path}: {e}"
    except (OSError, pa.ArrowException, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return f"{f.path}: not a readable Parquet file: {reason}"


def _progress(total: int, progress: bool | None):
    show = (sys.stderr.isatty() if progress is None else bool(progress)) and total > 1
    if show:
        from tqdm.auto import tqdm
    else:  # a disabled bar: tqdm.auto would look for (and warn about) notebook widgets
        from tqdm import tqdm
    return tqdm(total=total, disable=not show, unit="file", desc="reading footers",
                leave=False)


def read_footers(files: list[SourceFile], columns, filesystem, threads: int | None,
                 progress: bool | None) -> list:
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
        return [_read_one(f, columns, filesystem) for f in batch]

    results: list = []
    with _progress(len(files), progress) as bar:
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


def _partition_stats(name: str, values: pa.Array, known: np.ndarray,
                     num_records: np.ndarray) -> LeafStats:
    """Exact ``min = max`` statistics of a partition column; null count all or nothing."""
    is_null = np.asarray(values.is_null().to_numpy(zero_copy_only=False))
    nulls = np.where(is_null, num_records, 0)
    field = pa.field(name, values.type)
    return LeafStats(field, values, values, pa.field(name, pa.int64()),
                     pa.array(nulls, pa.int64(), mask=~known))


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
    for name, values in parts.items():
        if name not in data_names:
            top.append(_partition_stats(name, values.take(take), known[name][per_container],
                                        num_records))
    extra = {}
    if parts:
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            [v.take(take) for v in parts.values()], names=list(parts))
    table = stats_table(ids, num_records, top, extra=extra,
                        leading={layout.PATH: path_col, layout.ROW_GROUP: rg_col})
    return table.append_column("__order", pa.array(file_index[per_container]))


def _skipped_table(files: list[SourceFile], index: np.ndarray, parts: dict[str, pa.Array]
                   ) -> pa.Table:
    take = pa.array(index)
    columns = {
        layout.CONTAINER: pa.array([files[i].path for i in index], pa.string()),
        layout.PATH: pa.array([files[i].path for i in index], pa.string()),
        layout.ROW_GROUP: pa.nulls(len(index), pa.int32()),
        layout.NUM_RECORDS: pa.nulls(len(index), pa.int64()),
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
                         f"{', '.join(sorted(known))}", column=missing[0])
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
            pf = opened[path] = pq.ParquetFile(path, filesystem=filesystem)
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


def _collect(listing: _Listing, granularity: str, columns, ngram, gram_size: int,
             ngram_case_insensitive: bool, on_error: str, progress, threads, *,
             part: bool = False) -> StatsTable:
    """The statistics of the listed files. ``part=True``: the files are a slice of a larger
    listing (:func:`collect_part`), so ``columns`` and ``ngram`` names missing here are not
    errors (:func:`merge_parts` checks them over all slices); what this slice knows is kept
    in ``metadata["part"]``."""
    if granularity not in GRANULARITIES:
        raise StatsError(f"granularity must be one of {GRANULARITIES}, not {granularity!r}")
    if on_error not in ("raise", "skip"):
        raise StatsError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    files = listing.files
    _identify(files, listing.filesystem)
    selected = None if columns is None else (tuple([columns]) if isinstance(columns, str)
                                             else tuple(columns))
    results = read_footers(files, selected, listing.filesystem, threads, progress)
    errors = [(i, r) for i, r in enumerate(results) if isinstance(r, str)]
    if errors and on_error == "raise":
        i, message = errors[0]
        more = f" (and {len(errors) - 1} more failing files)" if len(errors) > 1 else ""
        raise StatsError(message + more, containers=[files[i].path for i, _ in errors[:10]])
    footers = {i: r for i, r in enumerate(results) if not isinstance(r, str)}
    parts = _partition_arrays(files, listing.typed)
    known = {k: np.array([k in f.partitions for f in files], bool) for k in parts}
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
        index = np.array(indices, np.int64)
        sub = {k: v.take(pa.array(index)) for k, v in parts.items()}
        sub_known = {k: v[index] for k, v in known.items()}
        tables.append(_group_table([footers[i] for i in indices], index, granularity, sub,
                                   sub_known))
    if errors:
        tables.append(_skipped_table(files, np.array([i for i, _ in errors], np.int64), parts))
    table = concat_stats(tables)
    if table.num_rows:
        rg = table.column(layout.ROW_GROUP).fill_null(-1).to_numpy()
        table = table.take(pa.array(np.lexsort((rg, table.column("__order").to_numpy()))))
    if "__order" in table.column_names:
        table = table.drop_columns(["__order"])
    for name in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT):
        if name not in table.column_names:  # every file skipped: nothing known
            table = table.append_column(name, pa.nulls(table.num_rows, pa.struct([])))
    names = []
    requested = [] if ngram is None else ([ngram] if isinstance(ngram, str) else list(ngram))
    if ngram is not None:
        schemas = [f.plan.schema for f in footers.values()]
        unified = pa.unify_schemas(schemas, promote_options="permissive") if schemas \
            else pa.schema([])
        if part:  # the names this slice has; merge_parts checks the others exist somewhere
            ngram = [n for n in requested if n in unified.names]
        names = ngram_columns(ngram, unified)
    if names:
        table = table.append_column(layout.NGRAM_INDEX, _ngram_index(
            table, names, {f.path: f for f in files}, listing.filesystem, gram_size,
            ngram_case_insensitive))
    metadata = {
        "skipped_files": [{"path": files[i].path, "error": m} for i, m in errors],
        "files": {f.path: [f.size, f.mtime_ns] for i, f in enumerate(files) if i in footers},
        "collect": {"granularity": granularity, "columns": list(selected) if selected else None,
                    "ngram": names or None, "gram_size": gram_size,
                    "ngram_case_insensitive": ngram_case_insensitive},
    }
    if part:
        known = set(listing.typed.names if listing.typed is not None else ())
        for f in footers.values():
            known.update(f.plan.known)
        metadata["part"] = {"known": sorted(known), "ngram": names, "requested": requested}
    return StatsTable(table, metadata)


# ------------------------------------------------------------------------------ in slices


def partition_types(files: Sequence[SourceFile], typed: pa.Schema | None = None) -> pa.Schema:
    """The type of each partition key over all ``files`` (as one ``collect_stats`` infers
    it), so that slices of the listing collected apart type their partitions alike."""
    return pa.schema([(k, v.type) for k, v in _partition_arrays(list(files), typed).items()])


def collect_part(files: Sequence[SourceFile], partition_schema: pa.Schema,
                 granularity: str = "row_group", columns: Sequence[str] | None = None, *,
                 ngram=None, gram_size: int = 3, ngram_case_insensitive: bool = False,
                 on_error: str = "raise", threads: int | None = 1) -> StatsTable:
    """The statistics of a slice of a listing (:func:`list_source`), with the partition types
    of the whole listing (:func:`partition_types`); :func:`merge_parts` joins the slices into
    the table ``collect_stats`` makes of the whole listing. Runs where the files are read
    (e.g. in Spark executors)."""
    listing = _Listing(list(files), None, partition_schema)
    return _collect(listing, granularity, columns, ngram, gram_size, ngram_case_insensitive,
                    on_error, False, threads, part=True)


def merge_parts(parts: Sequence[StatsTable]) -> StatsTable:
    """The statistics of a whole listing from its slices (:func:`collect_part`, in listing
    order): rows and metadata concatenated, schemas unified, and the ``columns`` / ``ngram``
    names checked over all slices as ``collect_stats`` checks them over all files."""
    parts = list(parts)
    if not parts:
        raise StatsError("no statistics to merge: the listing was empty")
    options = dict(parts[0].metadata["collect"])
    known = set().union(*(p.metadata["part"]["known"] for p in parts))
    for name in options.get("columns") or ():
        if name not in known:
            raise StatsError(f"columns= names {name!r}, which no file has; known columns: "
                             f"{', '.join(sorted(known))}", column=name)
    present = set().union(*(p.metadata["part"]["ngram"] for p in parts))
    wanted = parts[0].metadata["part"]["requested"]
    for name in wanted:
        if name not in present:
            raise StatsError(f"ngram= names {name!r}, which is not a column of the data; "
                             f"columns: {', '.join(sorted(known))}", column=name)
    table = concat_stats([p.table for p in parts])
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
    options["ngram"] = wanted or None
    metadata = {"skipped_files": [s for p in parts for s in p.metadata["skipped_files"]],
                "files": files, "collect": options}
    return StatsTable(table, metadata)


def collect_stats(source, granularity: str = "row_group", columns: Sequence[str] | None = None,
                  *, ngram=None, gram_size: int = 3, ngram_case_insensitive: bool = False,
                  on_error: str = "raise", progress: bool | None = None,
                  threads: int | None = None) -> StatsTable:
    """Statistics of every Parquet file of ``source``, from the footers only.

    ``source``: a directory (walked recursively; Hive ``key=value`` folders become typed
    ``partition_values`` and exact statistics), a glob, a list of paths, or a
    ``pyarrow.dataset.Dataset``. One row per row group (``granularity="row_group"``, container
    ``"path#rg=N"``) or per file (``"file"``, container ``"path"``, ``row_group`` null).
    ``columns`` limits the columns (top-level names or dotted struct paths). ``ngram`` names
    string columns to index (this reads those columns' data). ``on_error="skip"`` lists
    unreadable files in ``metadata["skipped_files"]`` and gives them a row with unknown
    statistics (always kept). ``progress``: a bar on stderr (default: only on a terminal).
    ``threads``: footer-reading threads (default: one per core; more for remote storage).

    >>> import io, os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"s": ["b", "a", "c"]}), path, row_group_size=2)
    >>> stats = pe.collect_stats(path, progress=False)
    >>> stats.column("row_group").to_pylist(), stats.column("max_values").to_pylist()
    ([0, 1], [{'s': 'b'}, {'s': 'c'}])
    """
    listing = list_source(source)
    return _collect(listing, granularity, columns, ngram, gram_size, ngram_case_insensitive,
                    on_error, progress, threads)


def update_stats(stats, source, *, on_error: str | None = None, progress: bool | None = None,
                 threads: int | None = None) -> StatsTable:
    """``stats`` brought up to date with ``source``: rows of deleted files dropped, new and
    changed files (by path, size and modification time) read, unchanged files not re-read.

    The collection options (granularity, columns, n-grams) are the ones ``stats`` was made
    with (its metadata); files skipped last time are tried again.

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
    known = stats.metadata.get("files") or {}
    if layout.PATH not in stats.table.column_names:
        raise StatsError("update_stats needs a 'path' column in the statistics (made by "
                         "collect_stats)", column=layout.PATH)
    granularity = options.get("granularity")
    if granularity is None:
        granularity = "file" if stats.table.column(layout.ROW_GROUP).null_count == \
            stats.num_rows else "row_group" if layout.ROW_GROUP in stats.table.column_names \
            else "file"
    listing = list_source(source)
    _identify(listing.files, listing.filesystem)
    unchanged = {f.path for f in listing.files
                 if f.path in known and f.size is not None
                 and list(known[f.path]) == [f.size, f.mtime_ns]}
    fresh = [f for f in listing.files if f.path not in unchanged]
    old_paths = stats.table.column(layout.PATH).to_pylist()
    keep = pa.array([p in unchanged for p in old_paths])
    kept = stats.table.filter(keep)
    if fresh:
        new = _collect(_Listing(fresh, listing.filesystem, listing.typed), granularity,
                       options.get("columns"), options.get("ngram"),
                       options.get("gram_size", 3), options.get("ngram_case_insensitive", False),
                       on_error or "raise", progress, threads)
        table = concat_stats([kept, new.table])
        new_meta = new.metadata
    else:
        table, new_meta = kept, {"skipped_files": [], "files": {}}
    order = {f.path: i for i, f in enumerate(listing.files)}
    rank = np.array([order.get(p, len(order)) for p in table.column(layout.PATH).to_pylist()])
    rg = table.column(layout.ROW_GROUP).fill_null(-1).to_numpy() \
        if layout.ROW_GROUP in table.column_names else np.zeros(table.num_rows)
    table = table.take(pa.array(np.lexsort((rg, rank))))
    files = {p: known[p] for p in unchanged}
    files.update(new_meta.get("files", {}))
    metadata = {**stats.metadata, "files": files,
                "skipped_files": new_meta.get("skipped_files", [])}
    return StatsTable(table, metadata)
