"""``stats_from_delta``: per-file statistics of a Delta table, from its transaction log.

A Delta table records every data file's row count, min / max values and null counts in its
log (the ``add`` actions). Reading them costs one metadata read, not one footer per file. The
result is laid out as ``collect_stats(..., granularity="file")`` lays out the same files: one
row per live data file of the version, ``container`` and ``path`` the table root joined with
the file's URL-decoded relative path, ``row_group`` null, ``min_values`` / ``max_values`` /
``null_count`` structs mirroring the table schema (its Arrow types as ``deltalake`` gives them:
timestamps in microseconds, which hold every Delta timestamp from year 1 to 9999), typed
``partition_values``, and the partition columns as exact ``min = max`` statistics.

What is read: ``deltalake`` opens the table, replays its log and names the version's live
files (files a delete, update or compaction removed are not listed, even while still on disk
before VACUUM), its schema and partition values. Each live file's statistics are read as the
log wrote them, as JSON text (:mod:`prune_engine.stats.delta_log`), and parsed here with
exact numbers: ``deltalake`` parses them as float64, which cannot hold a decimal past 15
digits and forgets in which type a bound was written.

``metadata["delta"]`` records the table root, the version and ``deletion_vectors``: the
``path`` of every file whose ``add`` action carries a deletion vector (some of its rows are
deleted: a reader must apply it); ``schema`` (the log's schema, Delta's JSON) and
``column_mapping`` (the mode, when the table sets one) tell a scan the table's columns.
``metadata["untrusted_statistics"]`` maps each file whose statistics were partly unusable to
the reasons (see "Bad statistics" below).

How, at Arrow's speed: the statistics texts of all files are parsed at once by Arrow's JSON
reader, with a schema made from the table's (``delta_log.parse_objects``: a text can never
shift another file's row), and each column's bounds are computed for all files at once
(:mod:`prune_engine.stats.delta_values`, whose bulk readers give the answers of the reference
readers value by value). A file Arrow refuses (a value of the wrong kind, a text that is not
one JSON object) or might read otherwise than Python's ``json`` is read by the reference, in
Python, alone: its problems are found and named there. Decimal columns need each value's text
(its digits say whether it may be a float64 of delta-rs), which Arrow does not keep: a table
with one has every file's statistics also read by Python's ``json``, a cost per file.

The log's statistics are turned into TRUE bounds (a wrong bound prunes a file that holds a
matching row); what Delta writers store, and what is done with it:

- Columns without statistics (past ``delta.dataSkippingNumIndexedCols``, binary columns,
  lists and maps) and files without any are unknown (null), never 0 or empty. Lists and maps
  get element fields (as ``collect_stats`` makes them) whose statistics are all unknown: a
  Delta null count of an array counts null rows, not null elements.
- Type widening (``delta.typeChanges`` in a field's metadata): a file may have been written
  before any of the changes, and its statistics are in the type it was written in. Every
  widening Delta allows is exact on the log's text (integers to wider integers, to double or
  to decimal; date to timestamp_ntz, a date being midnight; decimal precision and scale
  increases) except float to double: a float bound is the float nearest its text, which reads
  as a double that may differ from the text's double (``3.4`` in a float column's log is the
  float that reads as 3.4000000953674316). A double column that was ever a float (or whose
  type history cannot be read) gets, for every file, the double interval that holds every
  double the float can be: one float step below the min and above the max. (The log does not
  say when a file was written, so every file may be an old one.)
- Timestamps are stored to the millisecond, cut down (delta-rs and Spark): the min is a lower
  bound, the max is widened to the last instant of its millisecond. A text with a zone offset
  is an instant; for a timestamp_ntz column a ``Z`` or ``+00:00`` text is its wall clock. A
  text whose zone is in doubt (no offset for a zoned column, another offset for a
  timestamp_ntz one: the writer's session zone) is widened by 18 hours each way.
- Strings: writers cut long values (delta-rs at 64 bytes, the max then incremented; Spark at
  ``delta.dataSkippingStringPrefixLength`` UTF-16 units, default 32, the max followed by a
  tie-breaker that is not above every continuation in UTF-8 order). A min is a prefix, so a
  lower bound. A max that may be cut (at least half the prefix length in code points) keeps
  only what every writer copies verbatim, all but its last character, and the last of those
  that can be is incremented: above every string with that prefix. Shorter maxes are exact.
- Decimals: Spark writes the exact value; delta-rs writes a float64 (so at most 17
  significant digits, and not always the nearest one) or, at scale 0, an int64 that a value
  past int64 saturates to. The text is parsed exactly. It is trusted as is when it cannot be
  a float64 of delta-rs (more than 17 significant digits, none past the scale), when the
  precision is at most 15 (a float64 then round-trips the value), or when it is an integer;
  else it is widened by the float64 error (2**-50 of the value) and two units of the scale.
  An integer at int64's limit may be saturated: a max at ``2**63 - 1`` or a min at
  ``-2**63`` is unknown. Bounds are rounded outward to the scale and kept in the type's range.
- Floats: a NaN bound is unknown; a zero min becomes ``-0.0`` and a zero max ``+0.0``; a
  float32 bound is widened by one float32 step (decimal text parsed through float64 may land
  one step off). ``nan_count`` stays unknown: the log has none.
- Binary columns: bounds unknown (Delta writers store none; the JSON form is undefined).
- Deletion vectors: ``numRecords`` counts the rows written to a file; ``num_records`` here is
  that minus the deletion vector's ``cardinality``, the rows the version holds. Bounds stay
  bounds (a deletion only removes values). With a deletion vector or ``tightBounds: false``, a
  null count means something only when it is 0 (no live row is null) or ``numRecords`` (every
  live row is null); any other is unknown.
- Column mapping (``delta.columnMapping.mode`` ``name`` or ``id``): the log keys statistics by
  physical column names; each column of the current schema finds its statistics by the
  physical name its schema field records, so renamed columns keep theirs.

Bad statistics lose only themselves: a file's statistics that are not JSON, not an object, or
hold a value of the wrong kind (a number where a date is expected, a negative or impossible
count, a min above its max) are unknown for that file, or that column of it, with one warning
per file. A log that cannot be read, or that lacks the ``add`` action of a live file, is a
:class:`~prune_engine.errors.StatsError` naming the table.

>>> import tempfile, pyarrow as pa, prune_engine as pe
>>> from deltalake import write_deltalake
>>> root = tempfile.mkdtemp()
>>> write_deltalake(root, pa.table({"x": [1, 5], "day": ["mon", "mon"]}), partition_by=["day"])
>>> write_deltalake(root, pa.table({"x": [9, 7], "day": ["tue", "tue"]}), partition_by=["day"],
...                 mode="append")
>>> stats = pe.stats_from_delta(root)
>>> sorted(zip(stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()),
...        key=str)
[({'x': 1, 'day': 'mon'}, {'x': 5, 'day': 'mon'}), ({'x': 7, 'day': 'tue'}, {'x': 9, 'day': 'tue'})]
>>> pe.prune(stats, "x > 6").to_pylist().count(True), stats.metadata["delta"]["version"]
(1, 1)
"""

from __future__ import annotations

import json
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field as dataclass_field
from decimal import Decimal
from typing import Sequence
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError, one_line
from prune_engine.stats import layout
from prune_engine.stats.collect import partition_stats
from prune_engine.stats.delta_log import (
    LiveAdds, LogAdd, LogCommits, live_add_columns, parse_objects, read_commits,
)
from prune_engine.stats.delta_values import (
    Bad, bound_array, is_count, json_type, needs_text, read_column, reader, replaced,
    space_type,
)
from prune_engine.stats.from_arrow import (
    LeafStats, column_stats, is_collection, stats_table, struct_stats,
)
from prune_engine.stats.table import StatsTable

__all__ = ["stats_from_delta"]

#: field-metadata key under which a column-mapped Delta schema records a column's physical name
PHYSICAL_NAME = b"delta.columnMapping.physicalName"
#: the Delta table property that turns column mapping on
MAPPING_MODE = "delta.columnMapping.mode"
#: Spark's default prefix length (UTF-16 units) of string statistics
DEFAULT_STRING_PREFIX = 32
#: the keys of a file's statistics object
_STRUCTS = {"mins": "minValues", "maxs": "maxValues", "nulls": "nullCount"}


# ------------------------------------------------------------------------------ opening


def _open_and_read(root: str, version) -> tuple[object, LogCommits, "_Early | None"]:
    """The table as ``deltalake`` opens it, its log's commits for the version it opened, and
    their statistics read early (see :class:`_Early`; None: not read).

    The work overlaps: ``deltalake`` opens the table in a worker thread (it releases the GIL
    and uses one core) while this thread reads and parses the commits of ``version`` (None:
    of the newest commit listed), and their statistics with the schema the commits record.
    Should those not be the version ``deltalake`` opened (a commit landed in between), or
    should the early read fail, the commits are read again for its version: so
    ``deltalake``'s error (a path that is no Delta table) comes first, and the commits' own
    errors are raised as they would be alone."""
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or version < 0):
        raise StatsError(f"version must be a non-negative int (a table version), "
                         f"not {version!r}")
    opening = _worker().submit(_open, root, version)
    try:
        commits: LogCommits | None = read_commits(root, version)
    except StatsError:
        commits = None
    early = _Early.read(commits) if commits is not None else None
    table = opening.result()
    if commits is None or commits.version != table.version():
        return table, read_commits(root, table.version()), None
    return table, commits, early


@dataclass(frozen=True)
class _Early:
    """The statistics of the commits' adds, parsed by Arrow before ``deltalake`` has named
    the table's schema, with the schema the newest ``metaData`` of the commits records: used
    only when it is the one the JSON schema of ``deltalake``'s schema makes (``schema``).
    ``rows``: the rows of ``LogCommits.rows`` parsed, ``parsed`` their statistics."""

    schema: pa.Schema
    rows: np.ndarray
    parsed: pa.Table

    @staticmethod
    def read(commits: LogCommits) -> "_Early | None":
        if commits.schema is None or not commits.rows.num_rows:
            return None
        text, partition_names = commits.schema
        try:
            from deltalake import Schema
            schema = pa.schema(Schema.from_json(text).to_arrow())
        except Exception:  # a schema deltalake does not take: it will say so when it opens
            return None
        json_schema = _json_schema([c for c in schema if c.name not in partition_names])
        rows = commits.rows
        adds = np.flatnonzero(np.asarray(pc.and_(rows.column("path").is_valid(),
                                                 rows.column("odd").is_null())
                                         .to_numpy(zero_copy_only=False)))
        if json_schema is None or not len(adds):
            return None
        stats = rows.column("stats").combine_chunks()
        got, parsed = parse_objects(stats if len(adds) == rows.num_rows
                                    else stats.take(pa.array(adds)), json_schema)
        return _Early(json_schema, adds[got], parsed)


_WORKER: tuple[int, ThreadPoolExecutor] | None = None


def _worker() -> ThreadPoolExecutor:
    """The thread that opens tables with ``deltalake``: one for the process, made at the first
    call (a thread started per call costs more than the overlap saves on small tables); a
    forked child, which has not its parent's thread, makes its own."""
    global _WORKER
    if _WORKER is None or _WORKER[0] != os.getpid():
        _WORKER = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="prune_engine-delta"))
    return _WORKER[1]


def _open(source: str, version: int | None):
    """The table at ``source`` as ``deltalake`` opens it, at ``version`` (None: the newest)."""
    try:
        from deltalake import DeltaTable
    except ImportError:  # pragma: no cover - deltalake is installed with the dev tools
        raise StatsError("stats_from_delta needs the deltalake package "
                         "(pip install deltalake)") from None
    if version is not None:
        try:
            return DeltaTable(source, version=version)
        except Exception as e:  # no such version, or no table: the newest tells which
            problem = e
    try:
        latest = DeltaTable(source)
    except Exception as e:  # deltalake raises TableNotFoundError, DeltaError, OSError
        raise StatsError(one_line(f"{source}: not a Delta table, or its _delta_log cannot be "
                                  f"read: {_first_line(e)}", 390), containers=[source]) from None
    if version is None:
        return latest
    raise StatsError(one_line(f"{source}: the Delta table has no loadable version "
                              f"{version}; its newest is {latest.version()} (old versions "
                              f"vanish when their log files are cleaned up): "
                              f"{_first_line(problem)}", 390), containers=[source]) from None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _file_path(root: str, relative: str) -> str:
    """Where a file of the log lives, as ``collect_stats`` names a listed file: the root
    joined with the URL-decoded relative path (an absolute URI stays absolute)."""
    decoded = unquote(relative)
    if "://" in relative or relative.startswith("file:"):
        url = urlparse(relative)
        return unquote(url.path) if url.scheme == "file" else decoded
    if "://" in root:
        return root.rstrip("/") + "/" + decoded
    return os.path.join(root, decoded)


def _file_paths(root: str, relative: pa.Array) -> pa.Array:
    """:func:`_file_path` of every path: joined by Arrow where a path is plain (relative, no
    ``%`` escape, no ``:``), by :func:`_file_path` where not."""
    plain = pc.invert(pc.match_substring_regex(relative, "[%:]|^/"))
    if "://" in root:
        prefix = root.rstrip("/") + "/"
    else:
        prefix = os.path.join(root, "")
    joined = pc.binary_join_element_wise(prefix, relative, "")
    rest = np.flatnonzero(~np.asarray(plain.to_numpy(zero_copy_only=False)))
    if not len(rest):
        return joined
    others = [_file_path(root, p) for p in relative.take(pa.array(rest)).to_pylist()]
    return replaced(joined, rest, pa.array(others, pa.string()))


# ------------------------------------------------------------------------------ one file


@dataclass
class _File:
    """One file's statistics as its ``add`` action states them (raw JSON values), and the
    problems found in them: the reference reader's view of a file."""

    records: int | None = None  # numRecords: the rows written to the file
    live: int | None = None  # the rows of the version (numRecords less the deletion vector's)
    mins: dict | None = None
    maxs: dict | None = None
    nulls: dict | None = None
    loose_nulls: bool = False  # only 0 and numRecords mean something (wide bounds or a DV)
    problems: list[str] = dataclass_field(default_factory=list)


def _parse_file(add: LogAdd) -> _File:
    """The statistics of one ``add`` action; whatever is malformed is left unknown and
    named in ``problems``.

    >>> f = _parse_file(LogAdd('{"numRecords": 3, "minValues": 5}', None))
    >>> f.records, f.mins, f.problems
    (3, None, ['minValues is not an object'])
    """
    out = _File()
    vector = add.deletion_vector
    cardinality: int | None = 0  # rows deleted; None: unknown
    if vector is not None:
        out.loose_nulls = True
        given = vector.get("cardinality") if isinstance(vector, dict) else None
        cardinality = given if is_count(given) else None
        if cardinality is None:
            out.problems.append("its deletion vector has no valid cardinality")
    if add.stats is None:
        return out
    if not isinstance(add.stats, str):
        out.problems.append("its stats are not a JSON string")
        return out
    try:
        stats = json.loads(add.stats, parse_float=Decimal)
    except (ValueError, RecursionError):
        out.problems.append("its stats are not JSON")
        return out
    if not isinstance(stats, dict):
        out.problems.append("its stats are not a JSON object")
        return out
    records = stats.get("numRecords")
    if isinstance(records, int) and is_count(records):
        out.records = records
        if cardinality is not None and cardinality <= records:
            out.live = records - cardinality
        elif cardinality is not None:
            out.problems.append("its deletion vector deletes more rows than numRecords")
    elif records is not None:
        out.problems.append("numRecords is not a count")
    tight = stats.get("tightBounds", True)
    if not isinstance(tight, bool):
        out.problems.append("tightBounds is not a boolean")
        tight = False
    out.loose_nulls |= not tight
    for attr, key in _STRUCTS.items():
        value = stats.get(key)
        if isinstance(value, dict):
            setattr(out, attr, value)
        elif value is not None:
            out.problems.append(f"{key} is not an object")
    return out


def _dig(stats: dict | None, keys: Sequence[str]):
    """The raw value at ``keys`` of a file's statistics struct: None when absent, a Bad when
    a struct holds something that is not an object."""
    value = stats
    for key in keys:
        if value is None:
            return None
        if type(value) is not dict:
            return Bad("not an object")
        value = value.get(key)
    return value


# ------------------------------------------------------------------------------ all files


@dataclass
class _Log:
    """Every live file's statistics, row ``i`` the ``i``-th file: the files Arrow parsed
    (``bulk``: their rows; ``parsed``: their statistics objects, a row each in that order;
    ``objects``: the same as Python's ``json`` reads them, where a column needs a number's
    text)
    and the others, read by the reference (``slow``: their rows; ``files``: a :class:`_File`
    each). ``records``, ``live`` (null: unknown) and ``loose`` are every file's, ``problems``
    the bulk files' (the others' are in their ``_File``)."""

    bulk: np.ndarray
    parsed: dict[str, pa.StructArray]
    objects: list[dict] | None
    slow: np.ndarray
    files: list[_File]
    records: np.ndarray
    has_records: np.ndarray
    live: np.ndarray
    has_live: np.ndarray
    loose: np.ndarray
    problems: dict[int, list[str]]

    def merged(self, bulk: pa.Array, slow: pa.Array) -> pa.Array:
        """One array over every file, from the bulk files' values and the slow files'."""
        if not len(self.slow):
            return bulk
        if not len(self.bulk):
            return slow
        order = np.empty(len(self.bulk) + len(self.slow), np.int64)
        order[self.bulk] = np.arange(len(self.bulk))
        order[self.slow] = len(self.bulk) + np.arange(len(self.slow))
        return pa.concat_arrays([bulk, slow]).take(pa.array(order))

    def problem(self, at: np.ndarray | list, why: str) -> None:
        """Record ``why`` for the bulk files at positions ``at`` (of ``bulk``)."""
        for i in at:
            self.problems.setdefault(int(self.bulk[i]), []).append(why)

    def all_problems(self) -> dict[int, list[str]]:
        """Every file's problems (by row, in row order), each named once."""
        out = dict(self.problems)
        out.update((int(row), f.problems) for row, f in zip(self.slow, self.files) if f.problems)
        return {row: list(dict.fromkeys(out[row])) for row in sorted(out)}


def _read_log(adds: LiveAdds, schema: pa.Schema | None, with_objects: bool,
              early: _Early | None = None) -> _Log:
    """Every file's statistics: by Arrow with the JSON ``schema`` (None: no file), the rest by
    the reference; ``with_objects``: the bulk files' statistics also as Python's ``json``
    reads them. ``early``: the commits' statistics parsed already with ``schema``."""
    n = len(adds.found)
    bulk, parsed = np.zeros(0, np.int64), None
    if schema is not None and n > len(adds.odd):
        candidates = np.ones(n, bool)
        candidates[list(adds.odd)] = False
        pieces = []
        if early is not None:  # the files added in the commits: parsed, or refused there
            position = np.full(adds.source.max(initial=-1) + 1, -1, np.int64)
            position[early.rows[early.rows < len(position)]] = \
                np.flatnonzero(early.rows < len(position))
            source = np.where(candidates, adds.source, -1)
            known = np.flatnonzero(source >= 0)
            at = position[source[known]]
            pieces.append((known[at >= 0], early.parsed.take(pa.array(at[at >= 0]))))
            candidates[known] = False
        candidates = np.flatnonzero(candidates)
        if len(candidates):
            stats = adds.stats if len(candidates) == n else \
                adds.stats.take(pa.array(candidates))
            got, table = parse_objects(stats, schema)
            pieces.append((candidates[got], table))
        bulk = np.concatenate([rows for rows, _ in pieces]) if pieces else bulk
        parsed = pa.concat_tables([table for _, table in pieces]) if pieces else None
        if parsed is None or not len(bulk):
            bulk, parsed = np.zeros(0, np.int64), None
    objects = None
    if with_objects and len(bulk):
        objects, keep = _python_objects(adds.stats.take(pa.array(bulk)).to_pylist())
        if not keep.all():
            bulk, parsed = bulk[keep], parsed.filter(pa.array(keep))
            objects = [o for o, k in zip(objects, keep) if k]
    slow = np.ones(n, bool)
    slow[bulk] = False
    slow = np.flatnonzero(slow)
    files = [_parse_file(adds.add(int(i))) for i in slow]
    log = _Log(bulk, {}, objects, slow, files, np.zeros(n, np.int64), np.zeros(n, bool),
               np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool), {})
    if len(bulk):
        log.parsed = {key: parsed.column(key).combine_chunks() for key in _STRUCTS.values()}
        _bulk_files(log, adds, parsed)
    for row, f in zip(slow, files):
        log.has_records[row], log.records[row] = f.records is not None, f.records or 0
        log.has_live[row], log.live[row] = f.live is not None, f.live or 0
        log.loose[row] = f.loose_nulls
    return log


def _python_objects(texts: list) -> tuple[list[dict], np.ndarray]:
    """The texts as Python's ``json`` reads them (numbers with a fraction as Decimal), and
    which it reads (as objects): Arrow reads some that Python does not (nested past Python's
    recursion limit), and those are then read by the reference."""
    out, keep = [], np.ones(len(texts), bool)
    for i, text in enumerate(texts):
        try:
            value = {} if text is None else json.loads(text, parse_float=Decimal)
        except (ValueError, RecursionError):
            value = None
        keep[i] = isinstance(value, dict)
        out.append(value if keep[i] else {})
    return out, keep


def _bulk_files(log: _Log, adds: LiveAdds, parsed: pa.Table) -> None:
    """:func:`_parse_file` for the bulk files, at once: their row counts, live rows, whether
    their null counts are loose, and the problems of each."""
    bulk = log.bulk
    given = parsed.column("numRecords").combine_chunks()
    records = np.asarray(pc.fill_null(given, 0).to_numpy(zero_copy_only=False), np.int64)
    valid = np.asarray(given.is_valid().to_numpy(zero_copy_only=False))
    vector = adds.vector[bulk]
    cardinality = adds.cardinality.take(pa.array(bulk))
    deleted = np.asarray(pc.fill_null(cardinality, -1).to_numpy(zero_copy_only=False), np.int64)
    deleted = np.where(vector, deleted, 0)
    known = deleted >= 0  # a vector without a valid cardinality: unknown
    counted = valid & (records >= 0)
    more = counted & known & (deleted > records)
    log.problem(np.flatnonzero(~known), "its deletion vector has no valid cardinality")
    log.problem(np.flatnonzero(valid & ~counted), "numRecords is not a count")
    log.problem(np.flatnonzero(more), "its deletion vector deletes more rows than numRecords")
    log.records[bulk], log.has_records[bulk] = records, counted
    log.live[bulk], log.has_live[bulk] = records - deleted, counted & known & ~more
    tight = np.asarray(pc.fill_null(parsed.column("tightBounds").combine_chunks(), True)
                       .to_numpy(zero_copy_only=False))
    log.loose[bulk] = vector | ~tight


# ------------------------------------------------------------------------------ columns


def physical_name(field: pa.Field) -> str:
    """The name a column-mapped Delta table's data files and statistics give the field
    ``field`` of its schema (``delta.columnMapping.physicalName``; its own name when it has
    none or the name is not text)."""
    meta = field.metadata or {}
    try:
        return meta[PHYSICAL_NAME].decode() if PHYSICAL_NAME in meta else field.name
    except UnicodeDecodeError:
        return field.name


def _json_schema(columns: Sequence[pa.Field]) -> pa.Schema | None:
    """The schema Arrow's JSON reader parses a file's statistics object with: the columns'
    statistics under their physical names, each bound in :func:`json_type`. None when two
    columns read there share a physical name (the reference then reads every file)."""
    bounds, counts = _json_fields(columns, True), _json_fields(columns, False)
    if bounds is None or counts is None:
        return None
    return pa.schema([("numRecords", pa.int64()), ("tightBounds", pa.bool_()),
                      ("minValues", pa.struct(bounds)), ("maxValues", pa.struct(bounds)),
                      ("nullCount", pa.struct(counts))])


def _json_fields(columns: Sequence[pa.Field], bounds: bool) -> list[pa.Field] | None:
    out: list[pa.Field] = []
    for column in columns:
        typ = column.type
        if is_collection(typ):
            continue
        if pa.types.is_struct(typ):
            inner = _json_fields(list(typ), bounds)
            if inner is None:
                return None
            read = pa.struct(inner) if inner else None
        else:
            read = json_type(column) if bounds else pa.int64()
        if read is None:
            continue
        if any(f.name == physical_name(column) for f in out):
            return None
        out.append(pa.field(physical_name(column), read))
    return out


def _needs_text(columns: Sequence[pa.Field]) -> bool:
    """Whether some column read in bulk needs its values as Python's ``json`` reads them."""
    for column in columns:
        if pa.types.is_struct(column.type):
            if _needs_text(list(column.type)):
                return True
        elif not is_collection(column.type) and needs_text(column):
            return True
    return False


def _unknown_elements(field: pa.Field, n: int) -> LeafStats:
    """Element statistics of a list or map column, all unknown, shaped as ``collect_stats``
    shapes them."""
    shaped = column_stats(field.name, pa.array([], field.type), np.zeros(0, np.int64), n)
    return LeafStats(shaped.min_field, pa.nulls(n, shaped.mins.type),
                     pa.nulls(n, shaped.maxs.type), shaped.null_field,
                     pa.nulls(n, shaped.nulls.type), shaped.nan_field,
                     None if shaped.nans is None else pa.nulls(n, shaped.nans.type))


def _field_stats(field: pa.Field, keys: tuple[str, ...], log: _Log, n: int, cut_at: int,
                 shown: str) -> LeafStats:
    """Statistics of one column (``keys``: its physical path in the log's structs; ``shown``:
    its name in warnings)."""
    name, typ = field.name, field.type
    if is_collection(typ):
        return _unknown_elements(field, n)
    keys = keys + (physical_name(field),)
    if pa.types.is_struct(typ):
        children = [_field_stats(typ.field(i), keys, log, n, cut_at,
                                 f"{shown}.{typ.field(i).name}")
                    for i in range(typ.num_fields)]
        return struct_stats(name, children, n)
    if not log.files:
        lows, highs, counts = _bulk_leaf(field, keys, log, cut_at, shown)
    elif not len(log.bulk):
        lows, highs, counts = _slow_leaf(field, keys, log.files, cut_at, shown)
    else:
        lows, highs, counts = (log.merged(b, s) for b, s in zip(
            _bulk_leaf(field, keys, log, cut_at, shown),
            _slow_leaf(field, keys, log.files, cut_at, shown)))
    return LeafStats(pa.field(name, typ), bound_array(lows, typ), bound_array(highs, typ),
                     pa.field(name, pa.int64()), counts)


def _slow_leaf(field: pa.Field, keys: tuple[str, ...], files: Sequence[_File], cut_at: int,
               shown: str) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Bounds (in their space) and null counts of one leaf for the files read by the
    reference, value by value."""
    read = reader(field, cut_at)
    counts = _settle([raw if raw is None or type(raw) is Bad else _null_count(raw, f)
                      for raw, f in zip(_raw_values(files, "nulls", keys), files)],
                     files, f"{shown}: null count")
    lows: list = [None] * len(files)
    highs: list = [None] * len(files)
    if read is not None:
        lows, highs = ([raw if raw is None or type(raw) is Bad else read(raw, lower)
                        for raw in _raw_values(files, struct, keys)]
                       for struct, lower in (("mins", True), ("maxs", False)))
        lows, highs = _settle(lows, files, f"{shown}: min"), _settle(highs, files, f"{shown}: max")
        for i, (low, high) in enumerate(zip(lows, highs)):
            if low is not None and high is not None and low > high:
                files[i].problems.append(f"{shown}: min above max")
                lows[i] = highs[i] = None
    space = space_type(field.type)
    return pa.array(lows, space), pa.array(highs, space), pa.array(counts, pa.int64())


def _null_count(raw, f: _File):
    if raw is None:
        return None
    if not is_count(raw) or (f.records is not None and raw > f.records):
        return Bad("an impossible null count")
    if not f.loose_nulls:
        return raw
    if raw == 0:
        return 0  # no row is null: no live row is
    return f.live if raw == f.records else None  # every row is null: every live row is


def _raw_values(files: Sequence[_File], struct: str, keys: tuple[str, ...]) -> list:
    """Each file's raw value at ``keys`` of its ``struct`` ("mins", "maxs" or "nulls")."""
    structs = [getattr(f, struct) for f in files]
    if len(keys) == 1:  # a top-level column: the struct is a dict or None
        key = keys[0]
        return [None if s is None else s.get(key) for s in structs]
    return [_dig(s, keys) for s in structs]


def _settle(values: list, files: Sequence[_File], shown: str) -> list:
    """``values`` with each Bad made unknown and recorded as a problem of its file."""
    for i, value in enumerate(values):
        if type(value) is Bad:
            files[i].problems.append(f"{shown} {value.why}")
            values[i] = None
    return values


def _bulk_leaf(field: pa.Field, keys: tuple[str, ...], log: _Log, cut_at: int, shown: str
               ) -> tuple[pa.Array, pa.Array, pa.Array]:
    """:func:`_slow_leaf` for the files Arrow parsed, at once."""
    space = space_type(field.type)
    if not len(log.bulk):  # no file at all
        return pa.nulls(0, space), pa.nulls(0, space), pa.nulls(0, pa.int64())
    counts = _bulk_null_counts(_member(log.parsed["nullCount"], keys), log, shown)
    if json_type(field) is None:
        nothing = pa.nulls(len(log.bulk), space)
        return nothing, nothing, counts
    bounds = []
    for key, lower, which in (("minValues", True, "min"), ("maxValues", False, "max")):
        texts = [_dig(o.get(key), keys) for o in log.objects] if needs_text(field) else None
        values, bad = read_column(field, cut_at, _member(log.parsed[key], keys), lower, texts)
        for i, why in bad:
            log.problem([i], f"{shown}: {which} {why}")
        bounds.append(values)
    lows, highs = bounds
    above = pc.fill_null(pc.greater(lows, highs), False)
    if above.true_count:
        log.problem(np.flatnonzero(np.asarray(above.to_numpy(zero_copy_only=False))),
                    f"{shown}: min above max")
        lows, highs = (pc.if_else(above, pa.scalar(None, space), a) for a in (lows, highs))
    return lows, highs, counts


def _member(struct: pa.StructArray, keys: tuple[str, ...]) -> pa.Array:
    """The child of ``struct`` at ``keys`` (null where a parent is null)."""
    for key in keys:
        struct = pc.struct_field(struct, key)
    return struct


def _bulk_null_counts(given: pa.Array, log: _Log, shown: str) -> pa.Array:
    """:func:`_null_count` for the bulk files, at once."""
    bulk = log.bulk
    counts = np.asarray(pc.fill_null(given, 0).to_numpy(zero_copy_only=False), np.int64)
    present = np.asarray(given.is_valid().to_numpy(zero_copy_only=False))
    records, has_records = log.records[bulk], log.has_records[bulk]
    bad = present & ((counts < 0) | (has_records & (counts > records)))
    log.problem(np.flatnonzero(bad), f"{shown}: null count an impossible null count")
    loose = log.loose[bulk]
    every = has_records & (counts == records)  # every row is null: every live row is
    known = present & ~bad & (~loose | (counts == 0) | (every & log.has_live[bulk]))
    values = np.where(loose & (counts != 0), log.live[bulk], counts)
    return pa.array(values, pa.int64(), mask=~known)


# ------------------------------------------------------------------------------ partitions


def _child(parent: pa.Array | None, name: str) -> pa.Array | None:
    """The child ``name`` of a struct array, None when absent. A null parent makes the
    child null."""
    if parent is None or not pa.types.is_struct(parent.type) \
            or parent.type.get_field_index(name) < 0:
        return None
    child = parent.field(name)
    if parent.null_count:
        child = pc.if_else(parent.is_valid(), child, pa.scalar(None, child.type))
    return child


def _partition_values(raw: pa.Array | None, typ: pa.DataType, n: int
                      ) -> tuple[pa.Array, np.ndarray]:
    """A partition column's values as ``typ``, and where they are known: a value the log has
    but that does not read as ``typ`` (or a column the log lacks) is unknown, not a null
    partition, which would claim that every row of the file is NULL.

    >>> values, known = _partition_values(pa.array(["2024-01-02", "x", None]), pa.date32(), 3)
    >>> values.to_pylist()[0], known.tolist()
    (datetime.date(2024, 1, 2), [True, False, True])
    """
    if raw is None:
        return pa.nulls(n, typ), np.zeros(n, bool)
    was_null = np.asarray(raw.is_null().to_numpy(zero_copy_only=False))
    try:
        values = raw if raw.type == typ else raw.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):  # value by value
        values = pa.array([_cast_one(v, typ) for v in raw.to_pylist()], typ)
    is_null = np.asarray(values.is_null().to_numpy(zero_copy_only=False))
    return values, ~(is_null & ~was_null)


def _cast_one(value, typ: pa.DataType):
    try:
        return pa.scalar(value).cast(typ).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None


def _partition_columns(actions: pa.Table, schema: pa.Schema, names: Sequence[str],
                       num_records: pa.Array) -> tuple[list[LeafStats], pa.Array]:
    """Exact statistics of the partition columns, and their typed values."""
    n = actions.num_rows
    raw = actions.column("partition").combine_chunks() \
        if "partition" in actions.column_names else None
    counts = np.asarray(pc.fill_null(num_records, 0).to_numpy(zero_copy_only=False))
    unknown_count = np.asarray(num_records.is_null().to_numpy(zero_copy_only=False))
    values, top = {}, []
    for name in names:
        field = schema.field(name)
        found = _child(raw, name)
        values[name], known = _partition_values(
            found if found is not None else _child(raw, physical_name(field)), field.type, n)
        is_null = np.asarray(values[name].is_null().to_numpy(zero_copy_only=False))
        top.append(partition_stats(name, values[name], known & ~(is_null & unknown_count),
                                   counts))
    typed = pa.StructArray.from_arrays(list(values.values()), names=list(values)) if n else \
        pa.array([], pa.struct([(k, v.type) for k, v in values.items()]))
    return top, typed


def _prefix_length(configuration: dict) -> int:
    try:
        return int(configuration.get("delta.dataSkippingStringPrefixLength",
                                     DEFAULT_STRING_PREFIX))
    except (TypeError, ValueError):
        return DEFAULT_STRING_PREFIX


def _warn(root: str, paths: pa.Array, problems: dict[int, list[str]]) -> None:
    """One warning per file whose statistics were partly unusable."""
    for row, found in problems.items():
        what = one_line("; ".join(found), 200)
        path = paths[row].as_py()
        warnings.warn(f"prune_engine: Delta table {root}: the statistics of {path} are "
                      f"partly unusable, left unknown: {what}", stacklevel=3)


# ------------------------------------------------------------------------------ entry point


def stats_from_delta(path, version: int | None = None) -> StatsTable:
    """Per-file statistics of the Delta table at ``path`` (a directory or a URI deltalake
    opens), at ``version`` (default: the newest), read from its transaction log.

    One row per live data file, laid out as ``collect_stats(files, granularity="file")`` lays
    out those files (see the module doc for how the log's values become true bounds);
    ``metadata["delta"]`` records the table root, the version read, the paths of the files
    with deletion vectors, the table's schema (Delta's JSON) and its column mapping mode. A path that is no Delta table, a version the log does not have, or
    a log that cannot be read is a :class:`StatsError`.

    >>> import tempfile, pyarrow as pa, prune_engine as pe
    >>> from deltalake import write_deltalake
    >>> root = tempfile.mkdtemp()
    >>> write_deltalake(root, pa.table({"s": ["apple", "kiwi"]}))
    >>> write_deltalake(root, pa.table({"s": ["pear"]}), mode="append")
    >>> pe.stats_from_delta(root, version=0).column("max_values").to_pylist()
    [{'s': 'kiwi'}]
    """
    root = os.fspath(path)
    table, commits, early = _open_and_read(root, version)
    try:
        schema = pa.schema(table.schema().to_arrow())
        meta = table.metadata()
        actions = pa.table(table.get_add_actions(flatten=False))
    except Exception as e:  # deltalake's own errors: the table cannot be read as a whole
        raise StatsError(one_line(f"{root}: the Delta table's files cannot be listed: "
                                  f"{_first_line(e)}", 390), containers=[root]) from None
    partition_names: Sequence[str] = list(meta.partition_columns)
    cut_at = max(1, _prefix_length(dict(meta.configuration or {})) // 2)
    logged = actions.column("path").combine_chunks()
    adds = live_add_columns(commits, logged)
    if not adds.found.all():
        missing = logged.filter(pa.array(~adds.found))
        raise StatsError(one_line(f"{root}: the Delta log holds no add action for "
                                  f"{len(missing)} live file(s), e.g. {missing[0]}", 390),
                         containers=[root])
    n = len(logged)
    columns = [column for column in schema if column.name not in partition_names]
    json_schema = _json_schema(columns)
    if early is not None and (json_schema is None or not early.schema.equals(json_schema)):
        early = None
    log = _read_log(adds, json_schema, _needs_text(columns), early)
    num_records = pa.array(log.live, pa.int64(), mask=~log.has_live)
    top = [_field_stats(column, (), log, n, cut_at, column.name) for column in columns]
    extra = {}
    if partition_names:
        parts, extra[layout.PARTITION_VALUES] = _partition_columns(
            actions, schema, partition_names, num_records)
        top += parts
    paths = _file_paths(root, logged)
    problems = log.all_problems()
    _warn(root, paths, problems)
    out = stats_table(paths, num_records, top, extra=extra, leading={
        layout.PATH: paths, layout.ROW_GROUP: pa.nulls(n, pa.int32())})
    vectors = adds.vector.copy()
    vectors[[row for row, add in adds.odd.items() if add.deletion_vector is not None]] = True
    deleted = paths.filter(pa.array(vectors)).to_pylist()
    untrusted = {paths[row].as_py(): found for row, found in problems.items()}
    # the schema's keys sorted: deltalake gives a field's metadata in an order of its own
    recorded = {"table": root, "version": table.version(), "deletion_vectors": deleted,
                "schema": json.dumps(json.loads(table.schema().to_json()), sort_keys=True)}
    mode = dict(meta.configuration or {}).get(MAPPING_MODE)
    if mode is not None:
        recorded["column_mapping"] = mode
    return StatsTable(out, {"delta": recorded,
                            "untrusted_statistics": untrusted})
