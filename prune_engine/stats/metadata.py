"""What ``StatsTable.metadata`` holds, key by key, and the check it passes when read from a file.

The metadata is a JSON object saved with the statistics (:mod:`.io`): facts about how they were
made that later calls read back. A saved file is untrusted input, so :func:`check_metadata`
checks every key the library reads against the shape its readers rely on, and
:func:`~prune_engine.read_stats` refuses a file whose metadata has another shape, whole and
naming the file, instead of ``scan``, ``aggregate`` or ``update_stats`` failing later on a
misread value (a ``KeyError``, a ``binascii.Error`` from a schema that is not base64, ...).

========================  =================================================  =================
key                       shape                                              read by
========================  =================================================  =================
``files``                 ``{path: [size, mtime_ns, inode, ctime_ns]}``      update_stats,
                          (size and mtime an integer or null; inode and      scan, the CLI,
                          ctime, or an ETag, optional integers)              Spark
``footers``               ``{path: [schema id, row groups]}`` (no more row   scan
                          groups than the file has bytes, where ``files``
                          records its size)
``schemas``               ``{schema id: Arrow IPC schema in base64}``        scan
                          (required with ``footers``)
``skipped_files``         ``[{"path": str, "error": str}]``                  the CLI
``collect``               the options of ``collect_stats`` (below)           update_stats,
                                                                             Spark
``computed``              ``{"columns": [str], "containers": int >= 0}``     the CLI
``bloom``                 ``{"problems": [str], "bytes_read": int >= 0}``    the CLI
``dictionaries``          ``{"problems": [str]}``                            merge_parts
``refresh``               ``{"reused", "changed", "new", "gone",             Spark
                          "reread": int >= 0}``
``part``                  ``{"known", "ngram", "requested": [str],           merge_parts
                          "paths": {option: [str]}, "types": {Arrow IPC
                          schema in base64: [path]}, "on_error": str}``
``untrusted_statistics``  ``{path: [str, ...]}`` (at least one reason)       update_stats
``delta``                 ``{"table": str, "version": int,                   scan, aggregate,
                          "deletion_vectors": [str], "schema": str,          Spark
                          "column_mapping": str}``
``iceberg``               ``{"table": str, "snapshot_id": int, "schema_id":  scan, aggregate,
                          int, "schema": {...}, "delete_files": int,         Spark, explain
                          "deletes": [{...}], "unused_statistics":
                          [{...}]}``
========================  =================================================  =================

``collect`` holds ``granularity`` (``"row_group"`` or ``"file"``), ``columns``, ``ngram`` and
``nan_free`` (null or a list of names), ``gram_size`` (1 to 8), ``ngram_case_insensitive`` and
``compute_missing`` (booleans), ``bloom`` and ``dictionaries`` (null, true or a list of names)
and ``dictionary_bytes`` (a positive integer); each may be missing (its default).

Keys the library does not read are left alone (a caller may keep its own facts there), and so
are keys that nothing reads inside a known object. The entries of ``iceberg["deletes"]`` are
checked where they are read (:mod:`.snapshot`). Every Arrow schema of ``schemas`` is
decoded once here, so that a scan never meets one it cannot read.

>>> check_metadata({"files": {"a.parquet": [10, 5]}, "mine": object()}) is None
True
>>> print(check_metadata({"files": {"a.parquet": [10, "5"]}}))
metadata["files"]["a.parquet"][1] should be an integer or null, not '5'
>>> print(check_metadata({"collect": {"gram_size": 0}}))
metadata["collect"]["gram_size"] should be an integer in 1..8, not 0
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

import pyarrow as pa

__all__ = ["check_metadata"]

#: a check: None when ``value`` has the shape, else what is wrong (``where`` names the value)
Check = Callable[[Any, str], "str | None"]


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _scalar(test: Callable[[Any], bool], what: str) -> Check:
    def check(value, where):
        return None if test(value) else f"{where} should be {what}, not {_show(value)}"
    return check


STRING = _scalar(lambda v: isinstance(v, str), "a string")
BOOLEAN = _scalar(lambda v: isinstance(v, bool), "true or false")
COUNT = _scalar(lambda v: _is_int(v) and 0 <= v < 2**63, "an integer in 0..2**63-1")
ROW_GROUPS = _scalar(lambda v: _is_int(v) and 0 <= v < 2**31, "an integer in 0..2**31-1")
INTEGER = _scalar(_is_int, "an integer")
INTEGER_OR_NULL = _scalar(lambda v: v is None or _is_int(v), "an integer or null")
STRING_OR_NULL = _scalar(lambda v: v is None or isinstance(v, str), "a string or null")
NUMBER = _scalar(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
NULL = _scalar(lambda v: v is None, "null")


def _list_of(item: Check, least: int = 0) -> Check:
    def check(value, where):
        if not isinstance(value, list):
            return f"{where} should be a list, not {_show(value)}"
        if len(value) < least:
            return f"{where} should have at least {least} item(s), not {len(value)}"
        for i, x in enumerate(value):
            why = item(x, f"{where}[{i}]")
            if why:
                return why
        return None
    return check


def _dict_of(item: Check) -> Check:
    """An object from strings (paths, ids) to values of one shape."""
    def check(value, where):
        if not isinstance(value, dict):
            return f"{where} should be an object, not {_show(value)}"
        for k, x in value.items():
            why = STRING(k, f"{where} key") or item(x, f"{where}[{json.dumps(k)}]")
            if why:
                return why
        return None
    return check


def _record(fields: dict[str, Check], required: tuple[str, ...] = ()) -> Check:
    """An object whose known keys have their shapes (other keys are left alone)."""
    def check(value, where):
        if not isinstance(value, dict):
            return f"{where} should be an object, not {_show(value)}"
        for k in required:
            if k not in value:
                return f"{where} lacks {k!r}"
        for k, item in fields.items():
            if k in value:
                why = item(value[k], f"{where}[{json.dumps(k)}]")
                if why:
                    return why
        return None
    return check


def _either(*checks: Check, what: str) -> Check:
    def check(value, where):
        if all(c(value, where) for c in checks):
            return f"{where} should be {what}, not {_show(value)}"
        return None
    return check


def _identity(value, where):
    """A file's recorded identity (:attr:`.listing.SourceFile.identity`)."""
    if not isinstance(value, list) or len(value) > 4:
        return f"{where} should be a list of at most 4 integers, not {_show(value)}"
    for i, x in enumerate(value):
        why = (INTEGER_OR_NULL if i < 2 else INTEGER)(x, f"{where}[{i}]")
        if why:
            return why
    return None


def _footer(value, where):
    """A file's footer record (:mod:`.footers`): its schema id and number of row groups (a
    Parquet footer lists at most 2**31 - 1)."""
    if not isinstance(value, list) or len(value) != 2:
        return f"{where} should be [schema id, row groups], not {_show(value)}"
    return STRING(value[0], f"{where}[0]") or ROW_GROUPS(value[1], f"{where}[1]")


def _schema(value, where):
    """An Arrow schema in IPC, base64 (:mod:`.footers`), which must decode."""
    why = STRING(value, where)
    if why:
        return why
    try:
        pa.ipc.read_schema(pa.py_buffer(base64.b64decode(value, validate=True)))
    except Exception:  # noqa: BLE001 - binascii.Error, ArrowInvalid, OSError ("Invalid
        # flatbuffers message"), ...: pyarrow on untrusted bytes, all meaning "not a schema"
        return f"{where} is not an Arrow schema in base64"
    return None


def _gram_size(value, where):
    if _is_int(value) and 1 <= value <= 8:
        return None
    return f"{where} should be an integer in 1..8, not {_show(value)}"


NAMES = _list_of(STRING)
NAMES_OR_NULL = _either(NAMES, NULL, what="null or a list of names")
INDEX_OPTION = _either(NAMES, NULL, _scalar(lambda v: v is True, "true"),
                       what="null, true or a list of names")

COLLECT = _record({
    "granularity": _scalar(lambda v: v in ("row_group", "file", None),
                           "'row_group', 'file' or null"),
    "columns": NAMES_OR_NULL,
    "ngram": NAMES_OR_NULL,
    "nan_free": NAMES_OR_NULL,
    "gram_size": _gram_size,
    "ngram_case_insensitive": BOOLEAN,
    "compute_missing": BOOLEAN,
    "bloom": INDEX_OPTION,
    "dictionaries": INDEX_OPTION,
    "dictionary_bytes": _scalar(lambda v: _is_int(v) and v >= 1, "a positive integer"),
})

#: every key the library reads, with its shape (see the module doc)
KEYS: dict[str, Check] = {
    "files": _dict_of(_identity),
    "footers": _dict_of(_footer),
    "schemas": _dict_of(_schema),
    "skipped_files": _list_of(_record({"path": STRING, "error": STRING}, ("path", "error"))),
    "collect": COLLECT,
    "computed": _record({"columns": NAMES, "containers": COUNT}, ("columns", "containers")),
    "bloom": _record({"problems": _list_of(STRING), "bytes_read": COUNT}, ("problems",)),
    "dictionaries": _record({"problems": _list_of(STRING)}, ("problems",)),
    "refresh": _record({"reused": COUNT, "changed": COUNT, "new": COUNT, "gone": COUNT,
                        "reread": COUNT, "seconds": NUMBER},
                       ("reused", "changed", "new", "gone")),
    "part": _record({"known": NAMES, "ngram": NAMES, "requested": NAMES,
                     "paths": _dict_of(NAMES), "types": _dict_of(NAMES), "on_error": STRING},
                    ("known", "ngram", "requested", "paths")),
    "untrusted_statistics": _dict_of(_list_of(STRING, least=1)),
    "delta": _record({"table": STRING_OR_NULL, "version": INTEGER_OR_NULL,
                      "deletion_vectors": NAMES, "schema": STRING,
                      "column_mapping": STRING}),
    "iceberg": _record({"table": STRING_OR_NULL, "snapshot_id": INTEGER_OR_NULL,
                        "schema_id": INTEGER_OR_NULL, "schema": _record({}),
                        "delete_files": _either(COUNT, NULL, what="an integer >= 0 or null"),
                        "deletes": _list_of(_record({})),
                        "unused_statistics": _list_of(_record({}))}),
}


def _together(metadata: dict) -> str | None:
    """The rules between keys: footers need their schemas, and a file's row groups are no
    more than its bytes (where its size is recorded)."""
    footers = metadata.get("footers")
    if footers is None:
        return None
    if "schemas" not in metadata:
        return 'metadata["footers"] needs metadata["schemas"]'
    files = metadata.get("files") or {}
    for path, (_, groups) in footers.items():
        size = (files.get(path) or [None])[0]
        if size is not None and groups > size:
            return (f'metadata["footers"][{json.dumps(path)}] records {groups} row groups in '
                    f"a file of {size} bytes")
    return None


def check_metadata(metadata: Any) -> str | None:
    """None when ``metadata`` (a statistics table's, parsed from JSON) has the shape every
    reader relies on (see the module doc), else one line saying what is wrong first."""
    if not isinstance(metadata, dict):
        return f"the metadata should be an object, not {_show(metadata)}"
    return _record(KEYS)(metadata, "metadata") or _together(metadata)
