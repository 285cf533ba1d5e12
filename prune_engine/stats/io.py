"""Saved statistics tables: one Parquet file, with its format version, metadata and checksum.

What a file holds (format version 2):

- the statistics table, as Parquet (the Arrow schema stored, so types come back exactly);
- in the footer's key-value metadata: :data:`~prune_engine.stats.layout.FORMAT_VERSION_KEY`,
  the ``StatsTable.metadata`` as JSON (:data:`METADATA_KEY`: skipped files, file sizes and
  times for ``update_stats``, ...; its shape is :mod:`.metadata`'s), and
  :data:`CHECKSUM_KEY`, the BLAKE2b-256 digest (64 hex digits) of the whole file as written
  with those 64 digits all ``"0"``.

The checksum covers every byte of the file, data pages, footer, schema and metadata alike:
:func:`seal` writes the file with the digits zeroed, hashes it, and writes the digest over
the zeros (the same number of bytes, so nothing moves); :func:`read_stats` finds the digest in
the footer, zeroes it again and compares. One flipped bit anywhere, or a file cut short, is
refused whole, before any statistics are used.

What is trusted, and why: nothing in a file until it is checked. Before any data is read, the
footer must carry a known format version (a file of another tool, or of a newer prune_engine,
is refused). A version-2 file must carry its checksum, and match it. Files of version 1 (saved
before the checksum existed) are still read, without one. In both versions the metadata must
have the shape its readers rely on (:func:`.metadata.check_metadata`) and the table's columns
the types the layout gives them (those it has: a table may lack some), so a file that
``read_stats`` returns never fails later in ``scan``, ``aggregate`` or ``update_stats`` for
its shape. Every refusal is a :class:`~prune_engine.StatsError` whose one-line message
starts with the file's name.

>>> import os, tempfile, pyarrow as pa, prune_engine as pe
>>> path = os.path.join(tempfile.mkdtemp(), "stats.parquet")
>>> pe.StatsTable(pa.table({"container": ["a"], "num_records": [3]}), {"k": 1}).save(path)
>>> back = pe.read_stats(path)
>>> back.column("num_records").to_pylist(), back.metadata
([3], {'k': 1})
>>> data = bytearray(open(path, "rb").read()); data[4] ^= 1
>>> _ = open(path, "wb").write(data)
>>> pe.read_stats(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
prune_engine.errors.StatsError: .../stats.parquet: corrupt statistics file: its checksum ...
"""

from __future__ import annotations

import hashlib
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

from prune_engine.errors import MAX_MESSAGE, StatsError, StatsFileNotFoundError, about, one_line
from prune_engine.stats import layout
from prune_engine.stats.metadata import check_metadata
from prune_engine.stats.table import StatsTable, as_stats_table
from prune_engine.stats.validate import check_layout

__all__ = ["save_stats", "read_stats", "seal", "METADATA_KEY", "CHECKSUM_KEY"]

METADATA_KEY = b"prune_engine.metadata"
CHECKSUM_KEY = b"prune_engine.checksum"
#: the format version from which a file carries its checksum
CHECKSUM_VERSION = 2
#: what the digest's place holds while the file is hashed
_ZEROS = b"0" * 64
#: the Thrift compact bytes between a key-value entry's key and its 64-byte value (the value's
#: field header, then its length): they pin the one place of the digest in the footer
_VALUE_HEAD = b"\x18\x40"


def save_stats(stats, path, filesystem=None) -> None:
    """Write ``stats`` (a ``StatsTable`` or ``pa.Table``) to the Parquet file ``path`` (a
    local path, a URI, or a path on ``filesystem``, as :func:`read_stats` takes them), with
    its checksum (see the module doc). Metadata that :func:`read_stats` would refuse (not
    JSON, or not of the shape of :mod:`.metadata`) is refused here instead."""
    stats = as_stats_table(stats)
    try:
        extra = json.dumps(stats.metadata).encode()
    except (TypeError, ValueError, RecursionError) as e:
        raise _unsaved(f"the statistics metadata cannot be saved as JSON: {e}") from None
    why = check_metadata(json.loads(extra))
    if why:
        raise _unsaved(f"the statistics metadata cannot be saved: {why}")
    table = stats.table.replace_schema_metadata({
        **{k: v for k, v in (stats.table.schema.metadata or {}).items() if k != CHECKSUM_KEY},
        layout.FORMAT_VERSION_KEY: str(layout.FORMAT_VERSION).encode(),
        METADATA_KEY: extra,
    })
    name = os.fspath(path)
    try:
        data = seal(table)
    except (OSError, pa.ArrowException) as e:
        raise _unsaved(f"{name}: cannot write the statistics: {e}") from None
    where, fs = _where(name, filesystem)
    try:
        if fs is None:
            with open(where, "wb") as f:
                f.write(data)
        else:
            with fs.open_output_stream(where) as f:
                f.write(data)
    except (OSError, pa.ArrowException) as e:
        raise _unsaved(f"{name}: cannot write the statistics: {e}") from None


def seal(table: pa.Table) -> bytes:
    """The bytes of a statistics file holding ``table`` (whose schema metadata carries the
    format version and the metadata JSON), with its checksum (see the module doc)."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({CHECKSUM_KEY: _ZEROS})
    data = bytearray(sink.getvalue().to_pybytes())
    at = _digest_at(data, _ZEROS)
    if at is None:  # a Parquet writer that lays out its footer otherwise
        raise StatsError("cannot save the statistics: the checksum's place is not found in "
                         "the footer pyarrow wrote")
    data[at:at + len(_ZEROS)] = _digest(data, at).encode()
    return bytes(data)


def _digest(data, at: int) -> str:
    """The checksum of the file ``data`` whose digest starts at ``at``: BLAKE2b-256 of its
    bytes with the digest's 64 as ``"0"`` (hashed in place, without a copy)."""
    view = memoryview(data)
    h = hashlib.blake2b(view[:at], digest_size=32)
    h.update(_ZEROS)
    h.update(view[at + len(_ZEROS):])
    return h.hexdigest()


def _digest_at(data, value: bytes) -> int | None:
    """Where ``value``, the checksum's, starts in the file ``data``: in its footer, after the
    checksum's key, once. None when it is not there exactly once."""
    footer = int.from_bytes(data[-8:-4], "little") if len(data) >= 12 else -1
    if not 0 <= footer <= len(data) - 12:
        return None
    start = len(data) - 8 - footer
    pattern = CHECKSUM_KEY + _VALUE_HEAD + value
    at = bytes(data[start:len(data) - 8]).find(pattern)
    if at < 0 or bytes(data[start + at + 1:len(data) - 8]).find(pattern) >= 0:
        return None
    return start + at + len(CHECKSUM_KEY) + len(_VALUE_HEAD)


def read_stats(path: str | os.PathLike[str], filesystem=None) -> StatsTable:
    """Read the statistics table that ``StatsTable.save`` (or ``prune-engine stats -o``) wrote
    to ``path``: a local path, a ``file://`` URI, a URI of any filesystem pyarrow or fsspec
    resolves (``s3://bucket/stats.parquet``), or a path on ``filesystem`` (a pyarrow or
    fsspec filesystem).

    Anything else is a clear error naming ``path``: a missing file is a
    :class:`~prune_engine.errors.StatsFileNotFoundError` (both a ``StatsError`` and a
    ``FileNotFoundError``); a directory, a file that is not Parquet, a Parquet file that is
    not a statistics file, or one written by a newer prune_engine (a higher format version)
    is a :class:`~prune_engine.StatsError`, raised before any data is read. So is a file that
    does not match its checksum, or whose metadata or columns have the wrong shape (see the
    module doc): it is refused whole.

    >>> import os, tempfile, pyarrow as pa, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "stats.parquet")
    >>> pe.StatsTable(pa.table({"container": ["a"], "num_records": [3]})).save(path)
    >>> pe.read_stats(path).num_rows
    1
    >>> pe.read_stats(os.path.join(os.path.dirname(path), "nope.parquet"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    prune_engine.errors.StatsFileNotFoundError: .../nope.parquet: no such statistics file
    """
    name = os.fspath(path)
    where, fs = _where(name, filesystem)
    if fs is None and os.path.isdir(where):
        raise _refuse(name, "a directory, not a statistics file (prune-engine stats -o writes "
                      "one file)")
    footer = _read(name, lambda: _key_values(pq.read_metadata(where, filesystem=fs)))
    version = _version(name, footer)
    source = where
    if CHECKSUM_KEY in footer or version >= CHECKSUM_VERSION:
        data = _read(name, lambda: _read_bytes(where, fs))
        # from here on, only these bytes are read: the footer again, then what it checks
        footer = _read(name, lambda: _key_values(pq.read_metadata(pa.BufferReader(data))))
        version = _version(name, footer)
        value = footer.get(CHECKSUM_KEY)
        if value is None:
            raise _refuse(name, f"corrupt statistics file: format version {version} carries "
                          "a checksum, and this file has none")
        at = _digest_at(data, value) if len(value) == len(_ZEROS) else None
        if at is None:
            raise _refuse(name, "corrupt statistics file: its checksum is not where it belongs")
        if _digest(data, at).encode() != value:
            raise _refuse(name, "corrupt statistics file: its checksum does not match its "
                          "content")
        source = pa.BufferReader(data)
    try:
        extra = json.loads(footer.get(METADATA_KEY, b"{}"))
    except (ValueError, RecursionError):
        raise _refuse(name, "corrupt statistics metadata (not JSON)") from None
    why = check_metadata(extra)
    if why:
        raise _refuse(name, f"corrupt statistics metadata: {why}")
    table = _read(name, lambda: pq.read_table(source, filesystem=fs if source is where
                                              else None))
    why = _check_columns(table.schema)
    if why:
        raise _refuse(name, f"not a statistics table: {why}")
    meta = dict(table.schema.metadata or {})
    for key in (layout.FORMAT_VERSION_KEY, METADATA_KEY, CHECKSUM_KEY, b"ARROW:schema"):
        meta.pop(key, None)
    return StatsTable(table.replace_schema_metadata(meta or None), extra)


def _read(name: str, read):
    """``read()``, its failures refused as failures to read the statistics file ``name``."""
    try:
        return read()
    except FileNotFoundError:  # not there, or removed since its footer was read
        raise StatsFileNotFoundError(name) from None
    except Exception as e:  # noqa: BLE001 - pyarrow on corrupt bytes: OSError, ArrowInvalid,
        # and also UnicodeDecodeError (a column name), IndexError, ...: all mean "unreadable"
        raise _refuse(name, f"not a readable statistics file: {type(e).__name__}: {e}") \
            from None


def _key_values(footer: pq.FileMetaData) -> dict[bytes, bytes]:
    return dict(footer.metadata or {})


def _read_bytes(where: str, fs) -> bytes:
    if fs is None:
        with open(where, "rb") as f:
            return f.read()
    with fs.open_input_file(where) as f:
        return f.read()


def _version(name: str, footer: dict[bytes, bytes]) -> int:
    """The format version in a statistics file's footer (its key-value metadata), which this
    build must read."""
    raw = footer.get(layout.FORMAT_VERSION_KEY)
    if raw is None:
        raise _refuse(name, "not a prune_engine statistics file (no format version in its "
                      "metadata)")
    try:
        version = int(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise _refuse(name, f"corrupt statistics format version {raw[:20]!r}") from None
    if version > layout.FORMAT_VERSION:
        raise _refuse(name, f"statistics format version {version} is newer than this "
                      f"prune_engine reads ({layout.FORMAT_VERSION}); upgrade prune_engine")
    if version < 1:
        raise _refuse(name, f"invalid statistics format version {version}")
    return version


def _check_columns(schema: pa.Schema) -> str | None:
    """What is wrong with the columns of a saved table, or None: the columns it has must have
    the layout's types (:func:`.validate.check_layout`; a table may lack some: one saved for
    ``aggregate``'s counts only has no bounds)."""
    for name, test, what in ((layout.CONTAINER, _is_text, "strings"),
                             (layout.PATH, _is_text, "strings"),
                             (layout.ROW_GROUP, pa.types.is_integer, "integers")):
        if name in schema.names and not test(schema.field(name).type):
            return f"column {name!r} should hold {what}, not {schema.field(name).type}"
    complete = schema
    for name, placeholder in ((layout.NUM_RECORDS, pa.int64()),
                              (layout.MIN_VALUES, pa.struct([])),
                              (layout.MAX_VALUES, pa.struct([])),
                              (layout.NULL_COUNT, pa.struct([]))):
        if name not in complete.names:
            complete = complete.append(pa.field(name, placeholder))
    try:
        check_layout(complete)
    except StatsError as e:
        return str(e)
    return None


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _refuse(name: str, why: str) -> StatsError:
    """The refusal of the statistics file ``name``: a one-line message that starts with it."""
    return StatsError(about(name, why), containers=[name])


def _unsaved(why: str) -> StatsError:
    """A refusal to save, on one line."""
    return StatsError(one_line(why, MAX_MESSAGE))


def _where(path, filesystem):
    """``(path, pyarrow filesystem or None)`` of a statistics file (see :func:`read_stats`)."""
    from prune_engine.stats.filesystems import resolve
    from prune_engine.stats.listing import local_path

    location, where = resolve(os.fspath(path), filesystem)
    if location is None:
        return local_path(where), None
    return where, location.filesystem
