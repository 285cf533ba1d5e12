"""Files as the statistics name them, as Spark names them, and whether they changed.

Statistics name a file by the path they were collected from (a local path, or a URI with a
scheme). Spark's ``_metadata.file_path`` is the file's URI in Hadoop's form: ``file:`` and the
absolute path for a local file, with the characters that ``java.net.URI`` does not allow in a
path percent-encoded as UTF-8 (space, ``%``, ``#``, ``?``, brackets, control and space
characters, ...), while other non-ASCII characters and ``=`` stay as they are. Both are
brought to one key (:func:`file_key`: a local absolute path, or the decoded URI) to be matched,
and :func:`spark_file_path` builds Spark's form from the key.

A file's identity is its size and modification time (at millisecond precision, Hadoop's),
and for a local file also its inode and status-change time (ctime), which a rewrite in place
changes even when it keeps the size and sets the modification time back; :func:`identities`
reads them now, for local paths with ``os.stat`` and for URIs through ``pyarrow.fs``
(listing the roots where many files of an object store are asked for), with an S3 object's
ETag where boto3 lists it (:mod:`~prune_engine.stats.etags`: without it, a rewrite of an
object with the same size within the same second is not detected).

>>> spark_file_path(file_key("/data/p=a b/f 1%=é#.parquet"))
'file:/data/p=a%20b/f%201%25=é%23.parquet'
>>> file_key("file:/data/p=a%20b/x.parquet")
'/data/p=a b/x.parquet'
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from urllib.parse import unquote, urlsplit

#: what makes a URI's path differ from its text: percent-escapes, a query, a fragment
_ENCODED = re.compile(r"[%?#]")
#: runs of characters java.net.URI may quote in a path (all but the ASCII it leaves alone)
_MAYBE_QUOTED = re.compile(r"[^A-Za-z0-9_\-!.~'()*,;:$&+=/@]+")
#: the characters Hadoop's glob patterns give a meaning (GlobPattern)
_GLOB = re.compile(r"[\\\[\]{}*?]")
#: Unicode categories java.net.URI quotes outside ASCII (space and control characters)
_QUOTED_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc"})


def file_key(path: str) -> str:
    """The one name of a file, however it is written: a normalized absolute local path for
    local files (plain or ``file:`` URIs, percent-decoded), else ``scheme://authority/path``
    with the path decoded."""
    if path.startswith(("/", "file:")) or "://" in path:
        return _key(path)
    return os.path.normpath(os.path.abspath(path))  # relative: to the working folder now


@functools.lru_cache(maxsize=1 << 16)  # the same names come back at every read of a source
def _key(path: str) -> str:
    if path.startswith("file:/") and not _ENCODED.search(path):  # nothing quoted: no parsing
        local = path[7:] if path.startswith("file:///") else path[5:]
        if local[1:2] != "/":  # not an authority's (file://host/...) nor a UNC-like //path
            return os.path.normpath(local)
    if "://" in path or path.startswith("file:"):
        parts = urlsplit(path)
        if parts.scheme == "file":
            return os.path.normpath(unquote(parts.path))
        return f"{parts.scheme}://{parts.netloc}{unquote(parts.path)}"
    return os.path.normpath(path)


def _quote_run(match: re.Match) -> str:
    out = []
    for ch in match.group():
        if not ch.isascii() and unicodedata.category(ch) not in _QUOTED_CATEGORIES:
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    return "".join(out)


def _quote(path: str) -> str:
    return _MAYBE_QUOTED.sub(_quote_run, path)


def spark_file_path(key: str) -> str:
    """Spark's ``_metadata.file_path`` of the file with key ``key`` (see the module doc)."""
    if "://" in key:
        parts = urlsplit(key)
        return f"{parts.scheme}://{parts.netloc}{_quote(unquote(parts.path))}"
    return "file:" + _quote(key)


def hadoop_path(key: str, *, literal: bool = False) -> str:
    """The path Hadoop's ``Path(String)`` reads as the file with key ``key``: the key with
    its scheme (``file:`` for a local file), not percent-encoded (Hadoop quotes it).
    ``literal=True``: for a path Spark globs (a path given to ``load``), the glob
    characters ``\\ [ ] { } * ?`` escaped with a backslash, so that the pattern matches the
    file itself (a path without them is not globbed at all).

    >>> hadoop_path("/data/p=a b/f%[1].parquet")
    'file:/data/p=a b/f%[1].parquet'
    >>> print(hadoop_path("/data/p=a b/f%[1].parquet", literal=True))
    file:/data/p=a b/f%\\[1\\].parquet
    """
    path = key if "://" in key else "file:" + key
    return _GLOB.sub(r"\\\g<0>", path) if literal else path


def identities(keys: list[str], roots: list[str] = (),
               spark=None) -> dict[str, tuple[int, ...] | None]:
    """``(size, modification time in ms[, inode, ctime_ns | etag])`` of each file now; None
    for a file that is gone. ``roots``: the folders (file keys) holding ``keys``: many files
    of an object store are found by listing them (a request per thousand files) rather than
    one request each. Files pyarrow cannot reach (or is refused) are listed by ``spark``
    (:mod:`~prune_engine.spark._through_spark`)."""
    out: dict[str, tuple[int, ...] | None] = {}
    remote: dict[str, list[str]] = {}
    for key in keys:
        if "://" in key:  # by scheme and authority: one filesystem each
            scheme, rest = key.split("://", 1)
            remote.setdefault(f"{scheme}://{rest.split('/', 1)[0]}/", []).append(key)
            continue
        try:
            st = os.stat(key)
        except OSError:
            out[key] = None
            continue
        out[key] = _local_identity(st)
    if remote:
        from prune_engine.spark._through_spark import or_through_spark, spark_identities_of

    for prefix, group in remote.items():
        under = [r for r in roots if r.startswith(prefix) or r + "/" == prefix]
        out.update(or_through_spark(prefix, lambda: _remote_identities(group, under),
                                    lambda: spark_identities_of(spark, group, under)))
    return out


#: above this many files of one object store, their roots are listed instead of asking for
#: each file
LIST_OVER = 16


def local_tree(paths: list[str]) -> tuple | None:
    """Every entry under ``paths`` (local paths or ``file:`` URIs: the folders walked) as
    ``(path, mode, identity)`` (the kind and permissions; a file's identity as
    :func:`identities` reads it, None for a folder, whose names are walked), sorted: equal
    snapshots mean that nothing under the paths that Spark's listing can see was added,
    removed, renamed, rewritten or touched in between. Names starting with ``.`` are left out,
    as Spark's listing leaves them out whatever they hold (Hadoop's ``.crc`` files: half of a
    lake Spark wrote on a local disk); names starting with ``_`` are kept (Spark reads some
    of them: ``_metadata``, ``_x=1`` partition folders). None where this cannot be said: a
    path of another filesystem, with glob characters (Spark globs it), that is missing, or a
    symbolic link anywhere (a link's target is not watched)."""
    import stat

    entries = []
    for path in paths:
        if ("://" in path and not path.startswith("file:")) or _GLOB.search(path):
            return None
        root = file_key(path)
        try:
            found = [(root, os.stat(root, follow_symlinks=False))]
        except OSError:
            return None
        while found:
            name, st = found.pop()
            if stat.S_ISLNK(st.st_mode):
                return None
            if not stat.S_ISDIR(st.st_mode):
                entries.append((name, st.st_mode, _local_identity(st)))
                continue
            entries.append((name, st.st_mode, None))
            try:
                with os.scandir(name) as it:
                    found.extend((e.path, e.stat(follow_symlinks=False)) for e in it
                                 if not e.name.startswith("."))
            except OSError:
                return None
    return tuple(sorted(entries))


def tree_identities(tree: tuple) -> dict[str, tuple[int, ...]]:
    """The files of a :func:`local_tree` snapshot with their identities."""
    return {name: identity for name, _, identity in tree if identity is not None}


def _local_identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """A local file's identity from its status: size, modification time in ms (Hadoop's
    precision), inode, status-change time in ns."""
    return st.st_size, st.st_mtime_ns // 1_000_000, st.st_ino, st.st_ctime_ns


def _remote_identities(keys: list[str], roots: list[str]) -> dict[str, tuple[int, ...] | None]:
    import pyarrow.fs as pafs

    from prune_engine.stats.etags import object_etags
    from prune_engine.stats.filesystems import resolve

    location, paths = resolve(keys)
    fs = location.filesystem
    if roots and len(keys) > LIST_OVER:
        folders = resolve(roots)[1]
        etags = object_etags(fs, folders)  # before the listing: never newer than it
        found = {}
        for root in folders:
            info = fs.get_file_info(root)
            listed = fs.get_file_info(pafs.FileSelector(root.rstrip("/"), recursive=True)) \
                if info.type == pafs.FileType.Directory else [info]
            found.update((i.path, i) for i in listed)
        infos = [found.get(p) for p in paths]
    else:
        etags = object_etags(fs, paths)
        infos = fs.get_file_info(paths)
    out = {}
    for key, path, info in zip(keys, paths, infos):
        if info is None or info.type != pafs.FileType.File:
            out[key] = None
        else:
            etag = etags.get(path)
            out[key] = (info.size, (info.mtime_ns or 0) // 1_000_000,
                        *(() if etag is None else (etag,)))
    return out


def recorded_identity(entry) -> tuple[int, ...] | None:
    """A statistics table's recorded ``[size, mtime_ns, (inode, ctime_ns | etag)]`` as
    ``(size, mtime in ms, ...)``."""
    if not entry or entry[0] is None or entry[1] is None:
        return None
    return (int(entry[0]), int(entry[1]) // 1_000_000, *(int(v) for v in entry[2:4]))


def changed(recorded: tuple | None, now: tuple) -> bool:
    """Whether the file differs from its recorded identity in a field both know."""
    from prune_engine.stats.listing import agree

    return recorded is not None and not agree(recorded, now)
