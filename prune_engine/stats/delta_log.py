"""The ``add`` actions of a Delta table's live files, as its log wrote them.

Bytes apart from policy: this module only finds and reads the log's files and hands back each
wanted file's ``add`` action as written (its ``stats`` JSON text, untouched, and its deletion
vector's presence and ``cardinality``); :mod:`prune_engine.stats.delta` decides what they mean.
``deltalake`` has already replayed the log and named the version's live files; what it does not
give is the statistics as text (it parses numbers as float64, which loses decimals past 15
digits and cannot say whether a bound was written in an older type) nor which files carry a
deletion vector.

What is read, for version ``v``: the JSON commits after the newest complete checkpoint at or
below ``v``, up to ``v``, and, only when some wanted path is not added there, that checkpoint
(classic ``n.checkpoint.parquet``, multi-part ``n.checkpoint.o.p.parquet``, or V2
``n.checkpoint.<uuid>.json|parquet`` with its ``_sidecars``), its files one by one until every
wanted path is found. The newest ``add`` of a path is the one that holds (an ``add`` of a path
already in the table replaces it, e.g. to attach a deletion vector; within one commit the later
line). Log compaction files are not needed and not read.

How: the commits are parsed at once by Arrow's JSON reader into columns (``add.path``,
``add.stats``, ``add.deletionVector.cardinality``), and Parquet checkpoints by Arrow, so that the
cost per file is Arrow's, not Python's. Arrow refuses a whole buffer for one bad line (and text
that is not UTF-8, which its reader would otherwise take into its strings unchecked); then each
commit is parsed alone, and a commit Arrow refuses is read line by line by Python's ``json``
(the reference, :func:`_json_actions`), so a corrupt line loses only itself. A line that is not
UTF-8 JSON is skipped there: a live file whose ``add`` it held is then not found, and
:mod:`~prune_engine.stats.delta` refuses the table (``deltalake`` itself refuses such a log when
it opens it). An ``add`` whose ``stats`` is not a string, or whose ``deletionVector`` is not an
object with an integer (or no) ``cardinality``, is handed back as written (``odd``), for the
reader of the statistics to judge.

The statistics texts of many files are parsed at once the same way (:func:`parse_objects`), as
the lines of one buffer, framed so that a text can never shift another file's row; a text Arrow
refuses, or might read otherwise than Python's ``json``, is left to the reference reader.

A log this module cannot list or read, or a commit missing between the checkpoint and ``v``,
is a :class:`~prune_engine.errors.StatsError` naming the table: the statistics of a version
are not guessed from another.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.json as pajson
import pyarrow.parquet as pq

from prune_engine.errors import StatsError, one_line

__all__ = ["LiveAdds", "LogAdd", "LogCommits", "live_add_columns", "live_adds",
           "parse_objects", "read_commits", "read_json_lines"]

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CLASSIC = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_PART = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2 = re.compile(r"^(\d{20})\.checkpoint\.[0-9A-Fa-f-]{36}\.(json|parquet)$")

_VECTOR = pa.struct([("cardinality", pa.int64())])
#: what Arrow's JSON reader takes from a commit's line (every other field is skipped: the
#: table's schema is only looked at, see ``LogCommits.schema``), and from a V2 checkpoint's,
#: which may also name sidecar files
_ADD = pa.field("add", pa.struct([("path", pa.string()), ("stats", pa.string()),
                                   ("deletionVector", _VECTOR)]))
_LINE = pa.schema([_ADD, ("metaData", pa.struct([("schemaString", pa.string()),
                                                 ("partitionColumns", pa.list_(pa.string()))]))])
_CHECKPOINT_LINE = pa.schema([_ADD, ("sidecar", pa.struct([("path", pa.string())]))])
#: the add actions of one log file as columns; ``odd`` indexes the adds kept as written
_ROWS = pa.schema([("path", pa.string()), ("stats", pa.string()), ("vector", pa.bool_()),
                   ("cardinality", pa.int64()), ("odd", pa.int64())])
_INT64 = (-2 ** 63, 2 ** 63 - 1)
#: Arrow's JSON reader splits its input into blocks, parsed in parallel threads (for inputs
#: of a few blocks: on smaller ones threads cost more than they save), and refuses a line
#: longer than one: blocks of a quarter of the input, from 128 KiB to 512 KiB (the fastest,
#: measured on commits and statistics of 200 to 20,000 files), or of the longest line
_MIN_BLOCK = 1 << 17
_BLOCK = 1 << 19
_MAX_BLOCK = 2 ** 31 - 1


@dataclass(frozen=True)
class LogAdd:
    """One ``add`` action as written: ``stats`` its statistics' JSON text, ``deletion_vector``
    its deletion vector descriptor (a dict); each None when absent, and whatever the log holds
    there when it is not what the protocol says."""

    stats: object | None
    deletion_vector: object | None


@dataclass(frozen=True)
class LiveAdds:
    """The newest ``add`` action of each wanted path, one row per path in the order asked.

    ``found``: whether the log holds one; ``stats``: its statistics' JSON text (null when
    absent); ``vector``: it carries a deletion vector; ``cardinality``: that vector's
    cardinality (null when absent or null). ``odd`` maps a row whose ``stats`` or deletion
    vector does not have the protocol's shape to its :class:`LogAdd` as written (its columns
    above are then null and False).
    """

    found: np.ndarray
    stats: pa.Array
    vector: np.ndarray
    cardinality: pa.Array
    odd: dict[int, LogAdd]
    #: the row of ``LogCommits.rows`` each add is, -1 for one from the checkpoint or none
    source: np.ndarray | None = None

    def add(self, row: int) -> LogAdd:
        """Row ``row`` as a :class:`LogAdd` (a deletion vector shown by its cardinality)."""
        if row in self.odd:
            return self.odd[row]
        vector = {"cardinality": self.cardinality[row].as_py()} if self.vector[row] else None
        return LogAdd(self.stats[row].as_py(), vector)


def live_adds(root: str, version: int, paths: Sequence[str]) -> dict[str, LogAdd]:
    """The newest ``add`` action of each of ``paths`` (as the log spells them) at ``version``
    of the Delta table at ``root``; a path the log does not hold is left out.

    >>> import tempfile, pyarrow as pa
    >>> from deltalake import DeltaTable, write_deltalake
    >>> root = tempfile.mkdtemp()
    >>> write_deltalake(root, pa.table({"x": [1, 2]}))
    >>> path = DeltaTable(root).get_add_actions(flatten=True).column("path")[0].as_py()
    >>> add = live_adds(root, 0, [path])[path]
    >>> add.stats.startswith('{"numRecords":2'), add.deletion_vector
    (True, None)
    """
    paths = list(paths)
    adds = live_add_columns(read_commits(root, version), pa.array(paths, pa.string()))
    return {p: adds.add(i) for i, p in enumerate(paths) if adds.found[i]}


@dataclass
class LogCommits:
    """The JSON commits of one version of a Delta log, read: their ``add`` actions (``rows``,
    as ``_ROWS``, oldest first: in the order of the commits and of their lines; ``odd`` the
    adds kept as written), and the checkpoint files below them, read only when a wanted path
    is not added in the commits."""

    root: str
    version: int
    fs: pafs.FileSystem
    log_dir: str
    checkpoint: list[str]
    rows: pa.Table
    odd: list[LogAdd]
    #: the newest ``metaData`` of the commits as Arrow read them: its schema string and
    #: partition columns (None: none there, or a commit read line by line); a hint only,
    #: ``deltalake``'s reading of the table is the one that holds
    schema: tuple[str, list[str]] | None = None


def read_commits(root: str, version: int | None) -> LogCommits:
    """The commits of ``version`` of the Delta table at ``root`` (None: of the newest commit
    the log lists), read and parsed."""
    fs, log_dir = _log_location(root)
    names = _list(fs, log_dir, root)
    if version is None:
        version = max((int(m.group(1)) for m in map(_COMMIT.match, names) if m), default=-1)
    commits, checkpoint = _plan(names, version, root)
    data = [_read_bytes(fs, f"{log_dir}/{name}", root) for name in reversed(commits)]
    odd: list[LogAdd] = []
    rows, schema = _commit_rows(data, odd) if data else (_ROWS.empty_table(), None)
    return LogCommits(root, version, fs, log_dir, checkpoint, rows, odd, schema)


def live_add_columns(log: LogCommits, paths: pa.Array) -> LiveAdds:
    """:func:`live_adds` as columns, one row per path of ``paths`` (a string array), from the
    commits ``log`` read and, where needed, its checkpoint."""
    wanted = paths.cast(pa.string())
    commits = log.rows
    newest = commits.num_rows - 1
    found = [commits.column("path").combine_chunks().take(np.arange(newest, -1, -1))]
    tables = [commits]
    if log.checkpoint and not _all_found(wanted, found):
        for rows in _checkpoint_rows(log.fs, log.log_dir, log.checkpoint, log.root, log.odd):
            found.append(rows.column("path").combine_chunks())
            tables.append(rows)
            if _all_found(wanted, found):
                break
    where = pc.index_in(wanted, value_set=pa.chunked_array(found, pa.string()))
    at = pc.fill_null(where, 0).to_numpy()  # a row of the commits (newest first) or after
    at = np.where(at <= newest, newest - at, at)
    picked = (pa.concat_tables(tables) if len(tables) > 1 else commits).take(
        pa.array(at, mask=~np.asarray(where.is_valid().to_numpy(zero_copy_only=False))))
    has = np.asarray(where.is_valid().to_numpy(zero_copy_only=False))
    vector = np.asarray(pc.fill_null(picked.column("vector").combine_chunks(), False)
                        .to_numpy(zero_copy_only=False))
    odd_at = picked.column("odd").combine_chunks()
    rows_odd = np.flatnonzero(np.asarray(odd_at.is_valid().to_numpy(zero_copy_only=False)))
    index = np.asarray(pc.fill_null(odd_at, 0).to_numpy(zero_copy_only=False))
    return LiveAdds(has, picked.column("stats").combine_chunks(), vector,
                    picked.column("cardinality").combine_chunks(),
                    {int(i): log.odd[int(index[i])] for i in rows_odd},
                    np.where(has & (at <= newest), at, -1))


def _all_found(wanted: pa.Array, found: list) -> bool:
    known = pa.chunked_array(found, pa.string())
    return pc.all(pc.is_in(wanted, value_set=known)).as_py() is not False


# ------------------------------------------------------------------------------ files


def _log_location(root: str) -> tuple[pafs.FileSystem, str]:
    try:
        if "://" in root:
            fs, base = pafs.FileSystem.from_uri(root)
        else:
            fs, base = pafs.LocalFileSystem(), os.path.abspath(root)
    except (pa.ArrowException, ValueError, OSError) as e:
        raise _error(root, "cannot open its log's file system", e) from None
    return fs, base.rstrip("/") + "/_delta_log"


def _list(fs: pafs.FileSystem, log_dir: str, root: str) -> list[str]:
    try:
        infos = fs.get_file_info(pafs.FileSelector(log_dir, recursive=False))
    except (pa.ArrowException, OSError) as e:
        raise _error(root, "cannot list its _delta_log", e) from None
    return [info.base_name for info in infos if info.type == pafs.FileType.File]


def _read_bytes(fs: pafs.FileSystem, path: str, root: str) -> pa.Buffer:
    try:
        with fs.open_input_file(path) as f:
            return f.read_buffer()
    except (pa.ArrowException, OSError) as e:
        raise _error(root, f"cannot read {path.rsplit('/', 1)[-1]} of its log", e) from None


def _error(root: str, what: str, e: BaseException) -> StatsError:
    why = one_line(str(e), 200) or type(e).__name__
    return StatsError(one_line(f"{root}: Delta table: {what}: {why}", 390), containers=[root])


def _plan(names: Sequence[str], version: int, root: str) -> tuple[list[str], list[str]]:
    """The commit files to read (newest first) and the checkpoint files (empty: none)."""
    commits = {}
    checkpoints: dict[int, list[list[str]]] = {}
    parts: dict[tuple[int, int], dict[int, str]] = {}
    for name in names:
        if m := _COMMIT.match(name):
            commits[int(m.group(1))] = name
        elif (m := _CLASSIC.match(name)) or (m := _V2.match(name)):
            checkpoints.setdefault(int(m.group(1)), []).append([name])
        elif m := _PART.match(name):
            n, part, total = int(m.group(1)), int(m.group(2)), int(m.group(3))
            parts.setdefault((n, total), {})[part] = name
    for (n, total), got in parts.items():
        if total > 0 and set(got) == set(range(1, total + 1)):
            checkpoints.setdefault(n, []).append([got[i] for i in range(1, total + 1)])
    below = [n for n in checkpoints if n <= version]
    start = max(below) if below else -1
    missing = [n for n in range(start + 1, version + 1) if n not in commits]
    if missing:
        after = f"checkpoint {start}" if below else "no checkpoint"
        raise StatsError(one_line(f"{root}: Delta table: its log lacks commit {missing[0]}, "
                                  f"needed for version {version} (after {after})", 390),
                         containers=[root])
    ordered = [commits[n] for n in range(version, start, -1)]
    return ordered, (sorted(checkpoints[start])[0] if below else [])


# ------------------------------------------------------------------------------ JSON lines


def read_json_lines(data: bytes | pa.Buffer, schema: pa.Schema) -> pa.Table | None:
    """The objects of newline-delimited JSON ``data`` as a table of ``schema`` (fields not in
    it are skipped), parsed by Arrow; None when Arrow refuses the text (a line that is not a
    JSON object, or a value of another kind than ``schema`` says: Arrow converts nothing
    silently), and before Arrow sees it when the text is not UTF-8 (Arrow's reader would take
    invalid bytes into its strings) or has a line that does not start with ``{`` (Arrow's
    reader crashes the process on a line starting with ``null`` at the start of one of its
    blocks; a JSON object starts with ``{``, and Delta writes no blank or indented lines).
    Blank lines are skipped; a line holding several objects gives several rows."""
    size = len(data)
    if not size:
        return None
    try:
        codecs.utf_8_decode(data, "strict", True)
    except UnicodeDecodeError:
        return None
    longest = _objects_longest_line(data)
    if longest is None:
        return None
    block = min(max(size // 4, _MIN_BLOCK), _BLOCK)
    options = pajson.ReadOptions(block_size=min(max(block, longest + 1), _MAX_BLOCK),
                                 use_threads=size > 2 * _MIN_BLOCK)
    parse = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        return pajson.read_json(pa.BufferReader(data), read_options=options,
                                parse_options=parse)
    except (pa.ArrowException, ValueError):
        return None


def _objects_longest_line(data: bytes | pa.Buffer) -> int | None:
    """The length of the longest line of ``data`` (its break counted), None when a line does
    not start with ``{`` (lines end at ``\n`` or ``\r``, as Arrow's reader ends them; an
    empty line is no line)."""
    text = np.frombuffer(data, np.uint8)
    breaks = np.flatnonzero((text == ord("\n")) | (text == ord("\r")))
    starts = np.concatenate(([0], breaks + 1))
    first = text[starts[starts < len(text)]]
    if not np.all((first == ord("{")) | (first == ord("\n")) | (first == ord("\r"))):
        return None
    if not len(breaks):
        return len(text)
    return int(max(np.diff(breaks).max(initial=0), breaks[0], len(text) - breaks[-1]))


def _commit_rows(datas: list[pa.Buffer], odd: list[LogAdd]
                 ) -> tuple[pa.Table, tuple[str, list[str]] | None]:
    """The add actions of the commits ``datas`` (oldest first), in their order, and the
    newest ``metaData``'s schema string and partition columns, when Arrow read every commit."""
    whole = read_json_lines(datas[0] if len(datas) == 1 else b"\n".join(datas), _LINE)
    if whole is not None:
        return _arrow_rows(whole.column("add")), _newest_schema(whole.column("metaData"))
    pieces = []  # some line Arrow refuses: each commit alone, the refused ones line by line
    for data in datas:
        parsed = read_json_lines(data, _LINE)
        pieces.append(_python_rows(_json_actions(data, "add"), odd) if parsed is None
                      else _arrow_rows(parsed.column("add")))
    return pa.concat_tables(pieces), None


def _newest_schema(metadata: pa.ChunkedArray) -> tuple[str, list[str]] | None:
    """The schema string and partition columns of the last ``metaData`` action, if any."""
    metadata = metadata.combine_chunks()
    present = np.flatnonzero(np.asarray(metadata.is_valid().to_numpy(zero_copy_only=False)))
    if not len(present):
        return None
    newest = metadata[int(present[-1])].as_py()
    if not isinstance(newest.get("schemaString"), str):
        return None
    return newest["schemaString"], [c for c in newest.get("partitionColumns") or [] if c]


def _arrow_rows(adds: pa.ChunkedArray | pa.Array) -> pa.Table:
    """Add actions parsed by Arrow (a struct column like ``_LINE``'s ``add``) as ``_ROWS``; a
    line without one (or without a path) gives a row whose path is null, which no wanted
    path matches."""
    adds = adds.combine_chunks() if isinstance(adds, pa.ChunkedArray) else adds
    path, stats, vector = adds.flatten()  # null where the line holds no add
    return pa.table([path, stats, vector.is_valid(), vector.flatten()[0],
                     pa.nulls(len(adds), pa.int64())], schema=_ROWS)


def _json_actions(data: bytes | pa.Buffer, kind: str) -> list[dict]:
    """The actions of one ``kind`` ("add", "sidecar") of JSON lines (a commit or a V2
    checkpoint), in file order, each a dict with a string ``path``: the reference reader, a
    line at a time (a line that is not UTF-8 JSON is skipped)."""
    out = []
    for line in memoryview(data).tobytes().split(b"\n"):
        try:
            action = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            continue
        body = action.get(kind) if isinstance(action, dict) else None
        if isinstance(body, dict) and isinstance(body.get("path"), str):
            out.append(body)
    return out


def _python_rows(adds: Iterable[dict], odd: list[LogAdd]) -> pa.Table:
    """Add actions as Python objects (each a dict with a string ``path``) as ``_ROWS``; an add
    whose stats or deletion vector has not the protocol's shape is appended to ``odd`` as
    written, and its row points there."""
    columns: list[list] = [[], [], [], [], []]
    for add in adds:
        path, stats, vector = add["path"], add.get("stats"), add.get("deletionVector")
        cardinality = vector.get("cardinality") if isinstance(vector, dict) else None
        if (_text(path) and (stats is None or _text(stats))
                and (vector is None or (isinstance(vector, dict) and (
                    cardinality is None or _int64(cardinality))))):
            row = [path, stats, vector is not None, cardinality, None]
        elif _text(path):
            odd.append(LogAdd(stats, vector))
            row = [path, None, False, None, len(odd) - 1]
        else:
            continue  # a path Arrow cannot hold is no path of a live file
        for column, value in zip(columns, row):
            column.append(value)
    return pa.table([pa.array(c, f.type) for c, f in zip(columns, _ROWS)], schema=_ROWS)


def _text(value) -> bool:
    """Whether ``value`` is a string that UTF-8 (and so Arrow) can hold."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, from a \\ud800 escape
        return False
    return True


def _int64(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and \
        _INT64[0] <= value <= _INT64[1]


# ------------------------------------------------------------------------------ checkpoints


def _checkpoint_rows(fs: pafs.FileSystem, log_dir: str, files: list[str], root: str,
                     odd: list[LogAdd]) -> Iterator[pa.Table]:
    """The add actions of a checkpoint's files and of the sidecars they name, a file at a
    time."""
    sidecars: list[str] = []
    for name in files:
        path = f"{log_dir}/{name}"
        if name.endswith(".json"):
            data = _read_bytes(fs, path, root)
            parsed = read_json_lines(data, _CHECKPOINT_LINE)
            if parsed is None:
                sidecars += [car["path"] for car in _json_actions(data, "sidecar")]
                yield _python_rows(_json_actions(data, "add"), odd)
            else:
                sidecars += _sidecar_paths(parsed.column("sidecar"))
                yield _arrow_rows(parsed.column("add"))
        else:
            adds, cars = _parquet_rows(fs, path, root, odd)
            sidecars += cars
            yield adds
    for car in sidecars:  # they live in _delta_log/_sidecars, whatever the path says
        name = unquote(car).rstrip("/").rsplit("/", 1)[-1]
        yield _parquet_rows(fs, f"{log_dir}/_sidecars/{name}", root, odd)[0]


def _sidecar_paths(cars: pa.ChunkedArray | pa.Array) -> list[str]:
    """The paths of the sidecar files a checkpoint names (one that is not UTF-8 names none:
    its adds are then not found)."""
    cars = cars.combine_chunks() if isinstance(cars, pa.ChunkedArray) else cars
    if not pa.types.is_struct(cars.type) or cars.type.get_field_index("path") < 0:
        return []
    out = []
    for path in pc.struct_field(cars, "path"):
        try:
            value = path.as_py()
        except UnicodeDecodeError:
            continue
        if isinstance(value, str):
            out.append(value)
    return out


def _parquet_rows(fs: pafs.FileSystem, path: str, root: str, odd: list[LogAdd]
                  ) -> tuple[pa.Table, list[str]]:
    """The add actions (as ``_ROWS``) and the sidecar paths of a Parquet checkpoint (or
    sidecar) file."""
    try:
        with fs.open_input_file(path) as f:
            parquet = pq.ParquetFile(f)
            schema = parquet.schema_arrow
            columns = []
            for action, wanted in (("add", ("path", "stats", "deletionVector")),
                                   ("sidecar", ("path",))):
                typ = schema.field(action).type if action in schema.names else None
                if typ is not None and pa.types.is_struct(typ):
                    columns += [f"{action}.{k}" for k in wanted if typ.get_field_index(k) >= 0]
            table = parquet.read(columns=columns) if columns else None
    except (pa.ArrowException, OSError, ValueError) as e:
        raise _error(root, f"cannot read checkpoint file {path.rsplit('/', 1)[-1]}", e) from None
    adds, cars = _ROWS.empty_table(), []
    if table is None:
        return adds, cars
    if "add" in table.column_names:
        adds = _checkpoint_adds(table.column("add").combine_chunks(), odd)
    if "sidecar" in table.column_names:
        cars = _sidecar_paths(table.column("sidecar"))
    return adds, cars


def _checkpoint_adds(add: pa.StructArray, odd: list[LogAdd]) -> pa.Table:
    """A checkpoint's ``add`` column as ``_ROWS``: by Arrow when its fields have the protocol's
    types, else value by value."""
    typ = add.type
    fields = {typ.field(i).name: typ.field(i).type for i in range(typ.num_fields)}
    if "path" not in fields:
        return _ROWS.empty_table()
    stats_type = fields.get("stats", pa.string())
    vector_type = fields.get("deletionVector", _VECTOR)
    cardinality_type = vector_type.field("cardinality").type \
        if pa.types.is_struct(vector_type) and vector_type.get_field_index("cardinality") >= 0 \
        else pa.int64()
    if (_is_text(fields["path"]) and _is_text(stats_type) and pa.types.is_struct(vector_type)
            and pa.types.is_integer(cardinality_type) and cardinality_type != pa.uint64()
            and _utf8(add, ("path", "stats"))):
        n = len(add)
        path = pc.struct_field(add, "path").cast(pa.string())
        stats = pc.struct_field(add, "stats").cast(pa.string()) if "stats" in fields \
            else pa.nulls(n, pa.string())
        if "deletionVector" in fields:
            vectors = pc.struct_field(add, "deletionVector")
            vector = vectors.is_valid()
            cardinality = pc.struct_field(vectors, "cardinality").cast(pa.int64()) \
                if vector_type.get_field_index("cardinality") >= 0 else pa.nulls(n, pa.int64())
        else:
            vector, cardinality = pa.array(np.zeros(n, bool)), pa.nulls(n, pa.int64())
        table = pa.table([path, stats, vector, cardinality, pa.nulls(n, pa.int64())],
                         schema=_ROWS)
        return table.filter(path.is_valid())
    return _python_rows(filter(None, map(_checkpoint_add, add)), odd)


def _utf8(add: pa.StructArray, names: Sequence[str]) -> bool:
    """Whether the string fields ``names`` of ``add`` are valid UTF-8 (Parquet's reader does
    not check)."""
    for name in names:
        if add.type.get_field_index(name) >= 0:
            try:
                add.field(name).validate(full=True)
            except pa.ArrowInvalid:
                return False
    return True


def _checkpoint_add(add: pa.StructScalar) -> dict | None:
    """One add of a checkpoint whose fields have not the protocol's types, as Python values (a
    string that is not UTF-8 as its bytes, a struct holding one as ``b""``: present, and not
    of the protocol's shape); None when it has no path."""
    if not add.is_valid:
        return None
    out = {}
    for name, value in add.items():
        try:
            out[name] = value.as_py()
        except UnicodeDecodeError:
            out[name] = value.cast(pa.binary()).as_py() if _is_text(value.type) else b""
    return out if isinstance(out.get("path"), str) else None


def _is_text(typ: pa.DataType) -> bool:
    return pa.types.is_string(typ) or pa.types.is_large_string(typ) or \
        pa.types.is_string_view(typ)


# ------------------------------------------------------------------------------ statistics


#: texts Arrow's JSON reader reads otherwise than Python's ``json`` (the reference), each a
#: substring to look for in all texts and the pattern of the texts to leave out: the number
#: words ``-NaN``, ``Inf`` and ``-Inf`` (Python refuses them, and takes ``Infinity``), and
#: ``tightBounds`` written as null (Python tells it from absent; Arrow cannot), also when
#: its key is spelled with a ``\u`` escape
_ARROW_ONLY = (("-NaN", "-NaN"), ("Inf", "Inf([^i]|$)"),
               ("tightBounds", r'"tightBounds"\s*:\s*null'),
               ("\\u", r'\\u[^"]*"\s*:\s*null'))


def parse_objects(texts: pa.Array, schema: pa.Schema) -> tuple[np.ndarray, pa.Table]:
    """Parse many JSON texts, each meant to be one object, by Arrow's JSON reader with
    ``schema`` (see :func:`read_json_lines`); returns the indexes of the texts parsed and their
    table, a row each in that order. A null text reads as ``{}``. The texts left out are for
    the reference reader (Python's ``json``): those Arrow refuses, and those it would read
    otherwise than the reference does (see ``_ARROW_ONLY``).

    The texts are parsed as the lines of one buffer, so no text may shift another's row: a
    text with a line break, or not starting with ``{`` (blank, ``null``, anything but an
    object), is left out; every other line then gives at least one row or an error, so a
    piece of ``k`` lines that gives ``k`` rows gives one per line. A piece that does not is
    split in two, down to single texts.

    >>> rows, table = parse_objects(pa.array(['{"a": 1}', '{"a": "x"}', None, '[1]']),
    ...                             pa.schema([("a", pa.int64())]))
    >>> rows.tolist(), table.column("a").to_pylist()
    ([0, 2], [1, None])
    """
    lines = pc.fill_null(texts.cast(pa.string()), "{}")
    usable = np.asarray(pc.fill_null(pc.starts_with(lines, "{"), False)
                        .to_numpy(zero_copy_only=False))
    text = _values(lines)
    for needle in ("\n", "\r"):
        if needle.encode() in text:
            usable &= ~_matches(pc.match_substring(lines, needle))
    for needle, pattern in _ARROW_ONLY:
        if _holds(text, needle):
            usable &= ~_matches(pc.match_substring_regex(lines, pattern))
    rows = np.flatnonzero(usable)
    if len(rows) < len(lines):
        lines = lines.take(pa.array(rows))
    if not len(rows):
        return rows, schema.empty_table()
    framed = pc.binary_join_element_wise(lines, "\n", "")  # each text and its line break
    offsets = np.frombuffer(framed.buffers()[1], np.int32)[framed.offset:]
    tables: list[pa.Table] = []
    kept: list[np.ndarray] = []
    _parse_piece(framed.buffers()[2], offsets, 0, len(rows), schema, tables, kept)
    taken = np.concatenate(kept) if kept else np.zeros(0, np.int64)
    return rows[taken], (pa.concat_tables(tables) if tables else schema.empty_table())


def _parse_piece(data: pa.Buffer, offsets: np.ndarray, start: int, stop: int,
                 schema: pa.Schema, tables: list, kept: list) -> None:
    """Parse lines ``[start, stop)``; on a refusal or a row count that is not the line count,
    each half alone."""
    table = read_json_lines(data[int(offsets[start]):int(offsets[stop])], schema)
    if table is not None and table.num_rows == stop - start:
        tables.append(table)
        kept.append(np.arange(start, stop))
    elif stop - start > 1:
        middle = (start + stop) // 2
        _parse_piece(data, offsets, start, middle, schema, tables, kept)
        _parse_piece(data, offsets, middle, stop, schema, tables, kept)


def _values(strings: pa.Array) -> bytes:
    """The characters of every string of ``strings`` one after the other."""
    offsets = np.frombuffer(strings.buffers()[1], np.int32)[strings.offset:]
    data = strings.buffers()[2]
    if data is None or not len(strings):
        return b""
    return data[int(offsets[0]):int(offsets[len(strings)])].to_pybytes()


def _holds(text: bytes, needle: str) -> bool:
    """Whether ``text`` holds ``needle``; its first capital letter or backslash, rare in
    statistics, is looked for first (a search for one byte is the fastest)."""
    rare = next((c for c in needle if c.isupper() or c == "\\"), "")
    return rare.encode() in text and needle.encode() in text


def _matches(mask: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False))
