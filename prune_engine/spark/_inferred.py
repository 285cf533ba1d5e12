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

Spark's listing is kept too. When a source of local paths is opened, everything under its
paths is walked first (:func:`~prune_engine.spark._files.local_tree`: every entry Spark's
listing can see, with its kind and permissions, and a file's size, modification time, inode
and status-change time; about 12 ms for 2,000 files); when the walk is the same after Spark
opened it, Spark's roots are the paths walked and every file Spark listed is in the walk as
Spark saw it, the opened frame is remembered with it, and a later open whose walk is the
same again returns that very frame: Spark neither lists nor infers (about 60 ms of a
2,000-file lake on ``local[2]``). Spark's listing is a function of the names, kinds, sizes and
times under the paths, the reader options and the settings, all of which are then the same,
so it would list the same files. Nothing is kept for a path of another filesystem (an object
store's listing is Spark's own cost either way), one Spark globs, or a tree holding a
symbolic link (its target is not walked); a frame is returned to its own session only, and
the 16 most recently opened frames are kept. The one Hadoop setting Spark's listing reads,
its path filter (``mapreduce.input.pathFilter.class``, in the session's settings or the
context's Hadoop configuration), is part of what must be the same.

Not remembered: a source given with a schema, a table (the catalog holds its schema), a
format other than Parquet, files pyarrow cannot reach (listing them is a Spark job:
:mod:`~prune_engine.spark._through_spark`), and a session that cannot list its settings
(a Spark Connect client older than 4.0). A file rewritten between Spark's inference and the
identities read just after it is seen as it is after; plain Spark has the same window
between a load and its scan.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable

from prune_engine.spark._session import is_connect, session_key, sql_settings

#: per session, format, paths, options and settings: what the last inference gave
_MEMORY: dict[tuple, "_Inferred"] = {}
_LOCK = threading.Lock()
#: sources remembered at most (the oldest go first)
_MOST = 256
#: opened frames kept at most (each holds Spark's listing of its source)
_MOST_FRAMES = 16
_PATH_FILTER = "mapreduce.input.pathFilter.class"
#: where a frame opened here keeps the identities of the files listed for it
IDENTITIES = "_prune_engine_identities"


@dataclass(frozen=True)
class _Inferred:
    schema: Any                       # the StructType Spark inferred, or None: never reused
    files: tuple                      # ((file key, identity), ...) of every file listed
    checked: bool = False             # a load with the schema gave it back
    frame: Any = None                 # the source as Spark opened it, while ``tree`` holds
    tree: tuple | None = None         # (the local tree, the Hadoop path filter) then


def load_remembered(spark, format: str, paths: list[str], options: dict | None,
                    load: Callable[[Any], Any]):
    """``load(schema)`` (a DataFrame of the source read with ``schema``, or inferring it for
    None) with the schema remembered for this source when nothing it rests on changed, else
    ``load(None)``, remembering what Spark inferred; the very frame opened last time when
    nothing under the local paths changed since (see the module doc)."""
    from prune_engine.spark._files import local_tree
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
    walked = local_tree(paths)
    tree = None if walked is None else (walked, _path_filter(spark))
    if known is not None and known.frame is not None and tree is not None \
            and tree == known.tree and known.frame.sparkSession is spark:
        return known.frame  # (its files' identities, read when it was opened, still hold)
    if known is not None and known.schema is None:
        return load(None)  # a load with the schema gave another one back: not reused
    if known is not None:
        try:
            frame = load(known.schema)
            if _listed_identities(frame) == known.files:
                if known.checked:
                    return _opened(key, known, frame, tree, paths)
                same = frame.schema == known.schema
                checked = _Inferred(known.schema if same else None, known.files, True)
                _remember(key, checked)
                if same:
                    return _opened(key, checked, frame, tree, paths)
        except Exception:  # noqa: BLE001 - Spark's own error comes from the load below
            pass
    frame = load(None)
    try:
        files = _listed_identities(frame)
        schema = frame.schema
    except Exception:  # noqa: BLE001 - a source Spark cannot read: its error comes on use
        return frame
    return _opened(key, _Inferred(schema, files), frame, tree, paths)


def _opened(key: tuple, inferred: _Inferred, frame, before: tuple | None, paths: list[str]):
    """``frame``, remembered with ``inferred`` and ``before`` (the local tree and the path
    filter before it was opened) when they are the same after, Spark's roots are the paths
    walked, and the tree holds every file Spark listed, as Spark saw it."""
    from prune_engine.spark._files import file_key, local_tree, tree_identities
    from prune_engine.spark._source import listing

    kept = replace(inferred, frame=None, tree=None)
    if before is not None and (local_tree(paths), _path_filter(frame.sparkSession)) == before \
            and set(listing(frame, keep=True)[1]) == {file_key(p) for p in paths}:
        seen = tree_identities(before[0])
        if all(seen.get(k) == identity for k, identity in inferred.files):
            kept = replace(inferred, frame=frame, tree=before)
    _remember(key, kept)
    return frame


def _path_filter(spark) -> tuple:
    """The Hadoop path filter Spark's listing applies: the session's setting, and on a
    classic session the context's Hadoop configuration."""
    hadoop = None if is_connect(spark) else \
        spark.sparkContext._jsc.hadoopConfiguration().get(_PATH_FILTER)
    return spark.conf.get(_PATH_FILTER, None), hadoop


def _remember(key: tuple, inferred: _Inferred) -> None:
    with _LOCK:
        _MEMORY.pop(key, None)
        while len(_MEMORY) >= _MOST:
            _MEMORY.pop(next(iter(_MEMORY)))
        _MEMORY[key] = inferred
        framed = [k for k, v in _MEMORY.items() if v.frame is not None]
        for old in framed[:max(0, len(framed) - _MOST_FRAMES)]:  # the oldest let go
            _MEMORY[old] = replace(_MEMORY[old], frame=None, tree=None)


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
