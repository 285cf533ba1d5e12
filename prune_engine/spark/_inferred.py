"""The schema Spark infers for a source of paths, remembered while nothing it rests on changes.

``spark.read.parquet(path)`` infers the schema at every load: it reads a footer (the first
data file by path, or the summary files; every file with ``mergeSchema``), converts it under
the session's settings, and types the partition columns from the folder names. ``pes.read``,
``pes.join`` and ``pes.count`` open their source at every call; on a 2,000-file lake the
inference is a third of that (about 50 ms of 115 ms on ``local[2]``).

So the first open of a source infers as Spark does and remembers the schema with what the
inference read: the paths, format and options, the session's ``spark.sql.*`` settings, and
every file Spark listed with its identity (size and modification time, and for a local file
its inode and status-change time: :func:`~prune_engine.spark._files.identities`). A later open
loads the source with that schema (Spark lists the files and infers nothing), lists it, and
uses it only when the same files are listed with the same identities under the same settings;
otherwise Spark infers again, and that schema is remembered. Spark's inference reads nothing
else, so it would infer the same schema. The first load with a remembered schema checks that
it gives that very schema back; where it does not, the source is never loaded with one.

Not remembered: a source given with a schema, a table (the catalog holds its schema), a
format other than Parquet, files pyarrow cannot reach (listing them is a Spark job:
:mod:`~prune_engine.spark._through_spark`), and a session that cannot list its settings
(a Spark Connect client older than 4.0). A file rewritten between Spark's inference and the
identities read just after it is seen as it is after; plain Spark has the same window
between a load and its scan.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from prune_engine.spark._session import session_key, sql_settings

#: per session, format, paths, options and settings: what the last inference gave
_MEMORY: dict[tuple, "_Inferred"] = {}
_LOCK = threading.Lock()
#: sources remembered at most (the oldest go first)
_MOST = 256
#: where a frame opened here keeps the identities of the files listed for it
IDENTITIES = "_prune_engine_identities"


@dataclass(frozen=True)
class _Inferred:
    schema: Any                       # the StructType Spark inferred, or None: never reused
    files: tuple                      # ((file key, identity), ...) of every file listed
    checked: bool = False             # a load with the schema gave it back


def load_remembered(spark, format: str, paths: list[str], options: dict | None,
                    load: Callable[[Any], Any]):
    """``load(schema)`` (a DataFrame of the source read with ``schema``, or inferring it for
    None) with the schema remembered for this source when nothing it rests on changed, else
    ``load(None)``, remembering what Spark inferred (see the module doc)."""
    from prune_engine.spark._hadoop import session_filesystems
    from prune_engine.spark._through_spark import all_reached

    if format.lower() != "parquet":
        return load(None)
    session_filesystems(spark, paths)
    if not all_reached(paths):
        return load(None)  # listing files pyarrow cannot reach costs more than inferring
    settings = sql_settings(spark)
    if settings is None:
        return load(None)
    key = (session_key(spark), tuple(paths), tuple(sorted((options or {}).items())), settings)
    with _LOCK:
        known = _MEMORY.get(key)
    if known is not None and known.schema is None:
        return load(None)  # a load with the schema gave another one back: not reused
    if known is not None:
        try:
            frame = load(known.schema)
            if _listed_identities(frame) == known.files:
                if known.checked:
                    return frame
                same = frame.schema == known.schema
                _remember(key, _Inferred(known.schema if same else None, known.files, True))
                if same:
                    return frame
        except Exception:  # noqa: BLE001 - Spark's own error comes from the load below
            pass
    frame = load(None)
    try:
        files = _listed_identities(frame)
        schema = frame.schema
    except Exception:  # noqa: BLE001 - a source Spark cannot read: its error comes on use
        return frame
    _remember(key, _Inferred(schema, files))
    return frame


def _remember(key: tuple, inferred: _Inferred) -> None:
    with _LOCK:
        _MEMORY.pop(key, None)
        while len(_MEMORY) >= _MOST:
            _MEMORY.pop(next(iter(_MEMORY)))
        _MEMORY[key] = inferred


def forget() -> None:
    """Forget every remembered schema."""
    with _LOCK:
        _MEMORY.clear()


def _listed_identities(frame) -> tuple:
    """Every file Spark lists for ``frame`` with its identity now, sorted (the listing and
    the identities are kept on the frame for :func:`~prune_engine.spark._checked.check_files`)."""
    from prune_engine.spark._files import file_key, identities
    from prune_engine.spark._source import listing

    listed, roots = listing(frame, keep=True)  # their filesystems registered by the caller
    keys = sorted({file_key(u) for u in listed})
    now = identities(keys, roots, frame.sparkSession)
    vars(frame)[IDENTITIES] = now
    return tuple((k, now[k]) for k in keys)
