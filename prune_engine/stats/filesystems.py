"""Where a source's files live: the local disk, or any filesystem pyarrow or fsspec reaches.

A source names its filesystem in one of three ways:

- a local path, or a ``file:`` URI: the local disk, read with plain ``open``;
- a URI that ``pyarrow.fs.FileSystem.from_uri`` resolves (``s3://bucket/lake``, Hadoop's
  ``s3a://`` as ``s3://``, ``gs://...``, ``abfs://...``, ``hdfs://host:port/...``; S3 options
  such as ``?endpoint_override=...&scheme=http`` ride in the query), else one that fsspec
  resolves (``memory://...``, and any fsspec protocol installed);
- an explicit ``filesystem=``: a ``pyarrow.fs.FileSystem`` or an fsspec filesystem (wrapped
  as ``pyarrow.fs.PyFileSystem(FSSpecHandler(fs))``); paths are that filesystem's (a
  ``scheme://`` in front of them is dropped).

Files keep the name the user gave them: a remote file is named by its URI (the prefix of the
source's URI, then the filesystem path), so statistics say where each file is, and
:class:`Location` turns a name back into the filesystem's path.

A remote directory is listed once, recursively (one listing call: sizes and modification
times come with it); globs are local only. Footers are then read with ranged reads, in
parallel threads (:mod:`prune_engine.stats.collect`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import urlsplit

from prune_engine.errors import StatsError


@dataclass(frozen=True)
class Location:
    """A pyarrow filesystem, and how its paths and the files' names (URIs) map: a name is
    ``prefix`` then the path without its ``root`` (``s3://`` + ``bucket/lake/f.parquet``; Azure
    names the container in the authority: ``abfss://c@account.dfs.core.windows.net/`` +
    ``lake/f.parquet`` for the path ``c/lake/f.parquet``, root ``c/``).

    >>> azure = Location(None, "abfss://c@a.dfs.core.windows.net/", "c/")
    >>> azure.name("c/lake/f.parquet"), azure.path("abfss://c@a.dfs.core.windows.net/lake")
    ('abfss://c@a.dfs.core.windows.net/lake/f.parquet', 'c/lake')
    """

    filesystem: Any
    prefix: str = ""
    root: str = ""

    def name(self, path: str) -> str:
        """The file's name (its URI) from its path on the filesystem."""
        if self.root and path.rstrip("/") + "/" == self.root:
            return self.prefix  # the root itself (a container)
        return self.prefix + (path[len(self.root):] if path.startswith(self.root) else path)

    def path(self, name: str) -> str:
        """The file's path on the filesystem from its name."""
        if self.prefix and name.startswith(self.prefix):
            return self.root + name[len(self.prefix):]
        return name


def as_pyarrow(filesystem):
    """A ``pyarrow.fs.FileSystem`` for ``filesystem`` (pyarrow's own, or an fsspec one)."""
    import pyarrow.fs as pafs

    if isinstance(filesystem, pafs.FileSystem):
        return filesystem
    try:
        from fsspec import AbstractFileSystem
    except ImportError:  # pragma: no cover - fsspec absent: only pyarrow filesystems
        AbstractFileSystem = ()
    if AbstractFileSystem and isinstance(filesystem, AbstractFileSystem):
        return pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    raise TypeError(f"filesystem must be a pyarrow.fs.FileSystem or an fsspec filesystem, not "
                    f"{type(filesystem).__name__}")


def is_remote_uri(text: str) -> bool:
    """A URI with a scheme other than ``file`` (``C:\\`` style drive letters are not)."""
    scheme = urlsplit(text).scheme
    return "://" in text and len(scheme) > 1 and scheme != "file"


def resolve(source, filesystem=None) -> tuple[Location | None, Any]:
    """``(Location, source as that filesystem's paths)``, or ``(None, source)`` for the local
    disk. ``source`` is a string or a sequence of strings."""
    texts = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    texts = [os.fspath(t) for t in texts]
    if filesystem is not None:
        fs = as_pyarrow(filesystem)
        paths = [t.split("://", 1)[1] if "://" in t else t for t in texts]
        return Location(fs), paths[0] if isinstance(source, (str, os.PathLike)) else paths
    remote = [is_remote_uri(t) for t in texts]
    if not any(remote):
        return None, source
    if not all(remote):
        raise StatsError("a source mixes local paths and URIs; give one kind")
    resolved, known = [], {}
    for text in texts:  # one filesystem per scheme, host and options
        parts = urlsplit(text)
        key = (parts.scheme, parts.netloc, parts.query)
        if key in known:
            resolved.append((known[key], known[key].path(text.split("?", 1)[0])))
        else:
            resolved.append(_from_uri(text))
            known[key] = resolved[-1][0]
    prefixes = {loc.prefix for loc, _ in resolved}
    if len(prefixes) != 1 or len(set(known)) != 1:
        raise StatsError(f"a list of URIs must share one filesystem, not {sorted(prefixes)}")
    location = resolved[0][0]
    paths = [p for _, p in resolved]
    return location, paths[0] if isinstance(source, (str, os.PathLike)) else paths


#: Hadoop's names of schemes pyarrow knows by another (a file keeps the name it was given)
_ALIASES = {"s3a": "s3", "s3n": "s3"}

#: the Locations registered for the URIs under a prefix (``s3a://bucket/``): :func:`register`
_REGISTERED: dict[str, Location] = {}


def register(prefix: str, filesystem, root: str = "") -> None:
    """Read the URIs under ``prefix`` (``scheme://authority/``) with ``filesystem`` (pyarrow or
    fsspec) in this process, instead of the one ``from_uri`` would build, at the paths
    ``root`` + the rest of the URI: how a filesystem configured elsewhere (a Spark session's
    Hadoop settings: endpoint, credentials) reaches every listing, footer read and identity
    check of those files. The files keep their URIs as names.

    >>> import pyarrow.fs as pafs
    >>> register("demo://bucket/", pafs.LocalFileSystem(), root="bucket/")
    >>> location, path = resolve("demo://bucket/lake")
    >>> location.name(path), path
    ('demo://bucket/lake', 'bucket/lake')
    >>> unregister("demo://bucket/")
    """
    if "://" not in prefix or not prefix.endswith("/"):
        raise ValueError(f"a prefix is scheme://authority/, not {prefix!r}")
    _REGISTERED[prefix] = Location(as_pyarrow(filesystem), prefix, root)


def unregister(prefix: str) -> None:
    """Forget :func:`register`'s filesystem for ``prefix``."""
    _REGISTERED.pop(prefix, None)


def registered(names: Sequence[str]) -> list[Location]:
    """The registrations (:func:`register`) that serve any of ``names``."""
    return [loc for p, loc in _REGISTERED.items() if any(x.startswith(p) for x in names)]


def _from_uri(uri: str) -> tuple[Location, str]:
    import pyarrow as pa
    import pyarrow.fs as pafs

    for prefix, location in _REGISTERED.items():
        if uri.startswith(prefix):
            return location, location.path(uri.split("?", 1)[0]).rstrip("/")
    scheme = urlsplit(uri).scheme
    try:
        fs, path = pafs.FileSystem.from_uri(
            _ALIASES[scheme] + uri[len(scheme):] if scheme in _ALIASES else uri)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as first:
        try:
            from fsspec.core import url_to_fs

            fsspec_fs, path = url_to_fs(uri)
        except (ImportError, ValueError) as e:
            raise StatsError(f"{uri}: no filesystem for this URI ({first}; fsspec: {e})",
                             containers=[uri]) from None
        fs = as_pyarrow(fsspec_fs)
    return _located(fs, uri.split("?", 1)[0], path)


def _located(fs, base: str, path: str) -> tuple[Location, str]:
    """The :class:`Location` that maps ``base`` (a URI without its query) to ``path`` (its
    path on ``fs``), and the path: the folders both end with are shared, what precedes them
    is the name's prefix and the path's root.

    >>> _located(None, "s3://bucket/lake", "bucket/lake")
    (Location(filesystem=None, prefix='s3://', root=''), 'bucket/lake')
    >>> _located(None, "abfss://c@a.dfs.core.windows.net/lake", "c/lake")[0].root
    'c/'
    """
    ends, parts = base.rstrip("/").split("/"), path.rstrip("/").split("/")
    k = 0
    while k < min(len(ends), len(parts)) and ends[-1 - k] == parts[-1 - k] and parts[-1 - k]:
        k += 1
    prefix = "/".join(ends[:len(ends) - k]) + "/"
    root = "/".join(parts[:len(parts) - k])
    location = Location(fs, prefix, root + "/" if root or k < len(parts) else "")
    return location, path.rstrip("/") or path


def list_remote(paths: Sequence[str], location: Location, is_data, suffixes, parts_of):
    """The data files under ``paths`` on ``location``'s filesystem, each as
    ``(name, relative folder parts, size, mtime_ns, path, etag)``, sorted by path within a
    root (``etag``: :func:`~prune_engine.stats.etags.object_etags`, None where unknown).
    ``is_data(name)``, ``suffixes`` and ``parts_of(relative_dir)`` are the listing rules."""
    import pyarrow.fs as pafs

    from prune_engine.stats.etags import object_etags

    fs = location.filesystem
    out = []
    for root in paths:
        if any(ch in root for ch in "*?["):
            raise StatsError(f"{location.name(root)}: globs are read on the local disk only; "
                             "give the folder", containers=[location.name(root)])
        etags = object_etags(fs, [root])  # before the listing: never newer than what is read
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.File:
            out.append((location.name(info.path), parts_of(os.path.dirname(info.path)),
                        info.size, info.mtime_ns, info.path, etags.get(info.path)))
            continue
        if info.type != pafs.FileType.Directory:
            raise StatsError(f"{location.name(root)}: no such file or directory",
                             containers=[location.name(root)])
        found = []
        base = root.rstrip("/")
        for item in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
            if item.type != pafs.FileType.File:
                continue
            relative = item.path[len(base):].lstrip("/")
            pieces = relative.split("/")
            if not all(is_data(p) for p in pieces) or not pieces[-1].lower().endswith(suffixes):
                continue
            found.append((location.name(item.path), parts_of("/".join(pieces[:-1])),
                          item.size, item.mtime_ns, item.path, etags.get(item.path)))
        if not found:
            raise StatsError(f"{location.name(root)}: no Parquet files (*.parquet) in this "
                             "directory", containers=[location.name(root)])
        out.extend(sorted(found, key=lambda f: f[4]))
    return out
