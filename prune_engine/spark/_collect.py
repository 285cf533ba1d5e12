"""``collect_stats``: the statistics of a Parquet lake, read by Spark's executors.

The driver lists the source exactly as ``pe.collect_stats`` does (same files, same order, the
partition values typed over all files) and hands the list to a Spark job: a DataFrame of file
paths, cut into slices, each slice read in an executor through ``mapInArrow`` by the same
code as the local ``collect_stats`` (footers; and the column data when n-gram indexes are
asked for). Each task sends its statistics back as one Arrow IPC stream; the driver merges
the slices in listing order. The result is the table ``pe.collect_stats`` makes of the same
files, metadata included (sizes and modification times as the executors saw them).

The executors need prune_engine installed (as for any Python code Spark runs). The job shows
in the Spark UI as ``prune_engine: statistics of N files``.
"""

from __future__ import annotations

import io
import json
import math
from typing import Sequence

import pyarrow as pa

from prune_engine.errors import StatsError
from prune_engine.stats.dictionary import MAX_BYTES
from prune_engine.stats.nans import declare_nan_free, nan_free_names
from prune_engine.stats.table import StatsTable
from prune_engine.spark._jobs import job_description, numba_cache_dir, use_numba_cache
from prune_engine.spark._session import is_connect
from prune_engine.spark._workers import checked_on_failure

#: files per Spark task unless ``files_per_task`` says otherwise (and at least one task per
#: core): a task's fixed cost (a Python worker, imports) is about that of 1,000 footers
FILES_PER_TASK = 1_000

#: the most bytes of listing (as JSON) sent with the task's function rather than in the rows
#: of a parallelized frame (PySpark broadcasts a function above 1 MB)
INLINE_BYTES = 1 << 20

_OUT = "slice long, ipc binary, error string"
_OUT_SCHEMA = pa.schema([("slice", pa.int64()), ("ipc", pa.binary()), ("error", pa.string())])


def collect_stats(spark, source, granularity: str = "row_group",
                  columns: Sequence[str] | None = None, *, ngram=None, gram_size: int = 3,
                  ngram_case_insensitive: bool = False, on_error: str = "raise",
                  files_per_task: int | None = None, bloom=None, dictionaries=None,
                  dictionary_bytes: int = MAX_BYTES, compute_missing: bool = False,
                  nan_free: Sequence[str] | None = None) -> StatsTable:
    """Statistics of every Parquet file of ``source``, with the footers (and n-gram indexes,
    Bloom filters, dictionaries) read by Spark's executors: the same table as
    ``pe.collect_stats(source, ...)``.

    ``source`` is what ``pe.collect_stats`` takes (a directory, a glob, a list of paths, a
    ``pyarrow.dataset.Dataset``), or the name of a table of the session catalog, or a
    DataFrame that reads files (their files are collected); ``granularity``, ``columns``,
    ``ngram``, ``gram_size``, ``ngram_case_insensitive``, ``on_error``, ``bloom``,
    ``dictionaries``, ``dictionary_bytes`` and ``nan_free`` (float columns declared free of
    NaN) mean what they mean there.
    ``files_per_task``: files per Spark task (default: 1,000, and at least one task per core).
    ``compute_missing=True``: the executors also read the column chunks whose footers have
    no statistics (Spark's INT96 timestamps) and compute them, in the same job; see
    ``pe.collect_stats``.
    Files pyarrow cannot open or list (a scheme, or credentials, only the session's Hadoop
    configuration knows) get exact statistics per file from a Spark aggregation of their
    rows, as :func:`stats_from_dataframe` makes them: ``granularity="file"`` without indexes
    only (:mod:`~prune_engine.spark._through_spark`).

    Example::

        import prune_engine.spark as pes
        stats = pes.collect_stats(spark, "lake/", granularity="file")
    """
    from prune_engine.stats.listing import list_source, partition_types

    from prune_engine.spark._hadoop import session_filesystems
    from prune_engine.spark._source import source_frame, source_roots
    from prune_engine.spark._through_spark import collect_through_spark, or_through_spark

    roots = source_roots(spark, source)
    session_filesystems(spark, roots)
    options = collect_options(granularity, columns, ngram=ngram, gram_size=gram_size,
                              ngram_case_insensitive=ngram_case_insensitive,
                              on_error=on_error, bloom=bloom, dictionaries=dictionaries,
                              dictionary_bytes=dictionary_bytes,
                              compute_missing=compute_missing, nan_free=nan_free)
    listing = or_through_spark(roots, lambda: list_source(roots), lambda: None)
    if listing is None:
        stats = collect_through_spark(source_frame(spark, source), roots, options)
        return declare_nan_free(stats, options["nan_free"])
    stats = collect_files(spark, listing.files, partition_types(listing.files, listing.typed),
                          options, files_per_task)
    return declare_nan_free(stats, options["nan_free"])


def collect_options(granularity: str = "row_group", columns: Sequence[str] | None = None, *,
                    ngram=None, gram_size: int = 3, ngram_case_insensitive: bool = False,
                    on_error: str = "raise", bloom=None, dictionaries=None,
                    dictionary_bytes: int = MAX_BYTES, compute_missing: bool = False,
                    nan_free: Sequence[str] | None = None) -> dict:
    """The options of a statistics job, as ``collect_part`` takes them in the executors."""
    from prune_engine.stats.collect import index_names

    return {"granularity": granularity, "columns": None if columns is None else list(
        [columns] if isinstance(columns, str) else columns), "ngram": ngram,
        "gram_size": gram_size, "ngram_case_insensitive": ngram_case_insensitive,
        "on_error": on_error, "bloom": index_names(bloom, "bloom"),
        "dictionaries": index_names(dictionaries, "dictionaries"),
        "dictionary_bytes": dictionary_bytes, "compute_missing": compute_missing,
        "nan_free": nan_free_names(nan_free)}


def collect_files(spark, files, types: pa.Schema, options: dict,
                  files_per_task: int | None = None) -> StatsTable:
    """The statistics job over ``files`` (listed SourceFiles, partition ``types`` of the whole
    listing), with ``options`` as ``collect_part`` takes them."""
    from prune_engine.stats.collect import merge_parts
    from prune_engine.stats.filesystems import registered

    per_task = files_per_task or FILES_PER_TASK
    tasks = max(1, min(len(files), max(_parallelism(spark), math.ceil(len(files) / per_task))))
    size = math.ceil(len(files) / tasks)
    # what the listing knows of a file's identity travels with it (an object's size,
    # modification time and ETag: no request per file in the executors; never newer than
    # the content they read, so a file changed in between is collected again next time)
    rows = [(k, json.dumps([[f.path, f.partitions, f.size, f.mtime_ns, f.etag]
                            for f in files[k * size:(k + 1) * size]]))
            for k in range(tasks)]
    filesystems = registered([f.path for f in files])  # how the driver reaches them
    # one slice per task, without a shuffle: the slices travel with the task's function and
    # the tasks get their slice numbers from spark.range (a Connect client cannot parallelize;
    # a classic session's first parallelize job costs most of a second more than this); a
    # large listing goes in the rows of a parallelized frame, so that no task unpickles all
    texts = [text for _, text in rows]
    if is_connect(spark) or sum(map(len, texts)) <= INLINE_BYTES:
        frame = spark.range(0, tasks, 1, tasks).withColumnRenamed("id", "slice")
        task = _slice_task(types, options, numba_cache_dir(), filesystems, texts)
    else:
        frame = spark.createDataFrame(spark.sparkContext.parallelize(rows, tasks),
                                      "slice long, files string")
        task = _slice_task(types, options, numba_cache_dir(), filesystems)
    kinds = [name for name, key in (("n-grams", "ngram"), ("Bloom filters", "bloom"),
                                    ("dictionaries", "dictionaries"),
                                    ("computing missing statistics", "compute_missing"))
             if options[key]]
    # no probe of the workers first (a job of its own): only a failed job asks them why
    with checked_on_failure(spark), job_description(
            spark, f"prune_engine: statistics of {len(files)} files "
                   f"({', '.join([options['granularity'], *kinds])})"):
        out = frame.mapInArrow(task, _OUT).collect()
    answers = sorted(out, key=lambda r: r["slice"])
    for row in answers:
        if row["error"] is not None:  # the executor's StatsError, raised here as it was there
            error = json.loads(row["error"])
            raise StatsError(error["message"], error["column"], error["containers"])
    return merge_parts([_read_part(row["ipc"]) for row in answers])


def _parallelism(spark) -> int:
    """Spark's default parallelism (the cores of a classic session's cluster; a Connect
    client cannot ask, and reads ``spark.default.parallelism`` or assumes 8)."""
    if not is_connect(spark):
        return spark.sparkContext.defaultParallelism
    return int(spark.conf.get("spark.default.parallelism", None) or 8)


def _slice_task(types: pa.Schema, options: dict, cache_dir: str | None, filesystems: list,
                slices: list[str] | None = None):
    """The function each task runs: its slices' statistics as Arrow IPC bytes (or the
    :class:`StatsError` a slice met, for the driver to raise). The slices' files come in the
    rows (a ``files`` column), or with the function (``slices``); ``filesystems``: those the
    driver registered for them (:mod:`prune_engine.spark._hadoop`), registered here too."""
    def run(batches):
        from prune_engine.stats.filesystems import register

        use_numba_cache(cache_dir)
        for location in filesystems:
            register(location.prefix, location.filesystem, location.root)
        for batch in batches:
            numbers = batch.column("slice").to_pylist()
            texts = [slices[k] for k in numbers] if slices is not None else \
                batch.column("files").to_pylist()
            for k, text in zip(numbers, texts):
                try:
                    out = {"ipc": [_write_part(_collect_slice(text, types, options))],
                           "error": [None]}
                except StatsError as e:  # bad input: the driver raises it as it is
                    out = {"ipc": [None], "error": [json.dumps(
                        {"message": e.args[0], "column": e.column, "containers": e.containers},
                        default=str)]}
                yield pa.RecordBatch.from_pydict({"slice": [k], **out}, schema=_OUT_SCHEMA)
    return run


def _collect_slice(text: str, types: pa.Schema, options: dict) -> StatsTable:
    """One slice's statistics, in an executor (``text``: its files as JSON)."""
    from prune_engine.stats.collect import collect_part
    from prune_engine.stats.listing import SourceFile

    files = [SourceFile(path, dict(parts), size, mtime_ns, etag=etag)
             for path, parts, size, mtime_ns, etag in json.loads(text)]
    return collect_part(files, types, options["granularity"], options["columns"],
                        ngram=options["ngram"], gram_size=options["gram_size"],
                        ngram_case_insensitive=options["ngram_case_insensitive"],
                        on_error=options["on_error"], threads=1, bloom=options["bloom"],
                        dictionaries=options["dictionaries"], empty_files="rows",
                        dictionary_bytes=options["dictionary_bytes"],
                        compute_missing=options["compute_missing"],
                        nan_free=options.get("nan_free"))


def _write_part(stats: StatsTable) -> bytes:
    table = stats.table.replace_schema_metadata(
        {**(stats.table.schema.metadata or {}), b"prune_engine.part": json.dumps(stats.metadata)})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _read_part(data: bytes) -> StatsTable:
    table = pa.ipc.open_stream(pa.py_buffer(bytes(data))).read_all()
    meta = dict(table.schema.metadata or {})
    metadata = json.loads(meta.pop(b"prune_engine.part"))
    return StatsTable(table.replace_schema_metadata(meta or None), metadata)
