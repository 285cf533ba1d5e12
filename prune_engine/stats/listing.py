"""The files of a Parquet source, with their Hive partition values and their identity.

Before any footer is read, a source (a directory walked recursively, a glob, a list of paths,
or a ``pyarrow.dataset.Dataset``) becomes a :class:`Listing`: its data files in a stable order
(folders and files whose names start with ``.`` or ``_`` are not data), each a
:class:`SourceFile` with the raw strings of its ``key=value`` partition folders
(:func:`list_source`), then its size and modification time (:func:`identify`). The partition
strings are typed over the whole listing (:func:`partition_arrays`: int64 when every value is
an integer, date32 when every value is an ISO date, else string; a dataset's own partition
types win; ``__HIVE_DEFAULT_PARTITION__`` is null).

A module of its own because ``collect_stats``, ``pe.scan`` and the Spark collector must see a
source alike: the same files, in the same order, with the same partition types
(:func:`partition_types` hands those types to slices of a listing collected apart).

>>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
>>> root = tempfile.mkdtemp()
>>> for day in ("2024-03-01", "2024-03-02"):
...     os.makedirs(os.path.join(root, f"day={day}"))
...     pq.write_table(pa.table({"x": [1]}), os.path.join(root, f"day={day}", "a.parquet"))
>>> listing = list_source(root)
>>> [f.partitions for f in listing.files]
[{'day': '2024-03-01'}, {'day': '2024-03-02'}]
>>> partition_types(listing.files)
day: date32[day]
"""

from __future__ import annotations

import datetime as dt
import glob as globlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import unquote, urlsplit

import pyarrow as pa

from prune_engine.errors import StatsError
from prune_engine.stats.etags import folders_of, object_etags
from prune_engine.stats.filesystems import Location, list_remote, resolve

if TYPE_CHECKING:
    import pyarrow.dataset
    import pyarrow.fs

__all__ = ["SourceFile", "Listing", "list_source", "identify", "partition_arrays",
           "partition_types", "HIVE_NULL", "PARQUET_SUFFIXES"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
PARQUET_SUFFIXES = (".parquet", ".parq")


@dataclass
class SourceFile:
    """One file of the source: where it is, its partition values, and its identity."""

    path: str
    partitions: dict[str, Any] = field(default_factory=dict)  # raw strings (None = Hive null)
    size: int | None = None
    mtime_ns: int | None = None
    #: a local file's inode and status-change time: a rewrite in place with the same size
    #: and the old modification time set back still changes its ctime
    inode: int | None = None
    ctime_ns: int | None = None
    #: the file's path on the listing's filesystem, when its name (a URI) differs
    fs_path: str | None = None
    #: an object's ETag as a number, where its listing gives it
    #: (:mod:`~prune_engine.stats.etags`): a rewrite of the same size within the second of
    #: the old one's modification time still changes it
    etag: int | None = None

    @property
    def location(self) -> str:
        """Where to open the file: its path on the listing's filesystem."""
        return self.fs_path or self.path

    @property
    def identity(self) -> list[int]:
        """What a statistics table records of the file (``metadata["files"]``): size and
        modification time, and for a local file its inode and ctime, for an object its ETag
        where known."""
        more = [self.inode, self.ctime_ns] if self.inode is not None else \
            [self.etag] if self.etag is not None else []
        return [self.size, self.mtime_ns, *more]


def unchanged(recorded, identity: list) -> bool:
    """Whether a file whose statistics recorded ``recorded`` is still the same file: every
    field both record agrees (statistics from older versions record size and mtime only).

    >>> unchanged([10, 5], [10, 5, 77, 9]), unchanged([10, 5, 77, 8], [10, 5, 77, 9])
    (True, False)
    """
    return bool(recorded) and identity[0] is not None and agree(recorded, identity)


def agree(recorded, identity) -> bool:
    """Whether two identities agree on every field both hold (a shorter one holds fewer)."""
    common = min(len(recorded), len(identity))
    return list(recorded[:common]) == list(identity[:common])


class Listing:
    """The files of a source (:func:`list_source`), the filesystem to read them with (None:
    the local one), and the partition types when the source knows them."""

    def __init__(self, files: list[SourceFile], filesystem: pyarrow.fs.FileSystem | None = None,
                 typed: pa.Schema | None = None):
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


def local_path(text: str) -> str:
    """A ``file:`` URI as the local path it names (percent-decoded); other text as it is.

    >>> local_path("file:///data/a%20b/x.parquet"), local_path("file:/data/y"), local_path("z")
    ('/data/a b/x.parquet', '/data/y', 'z')
    """
    if not text.startswith("file:"):
        return text
    parts = urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise StatsError(f"{text}: a file URI of another host ({parts.netloc}) is not local",
                         containers=[text])
    return unquote(parts.path)


def _list_paths(paths: Sequence) -> list[SourceFile]:
    out = []
    for p in paths:
        p = local_path(os.fspath(p))
        if os.path.isdir(p):
            out.extend(_walk(p))
        else:
            out.append(SourceFile(p, _hive_parts(os.path.dirname(p))))
    return out


def _list_remote(paths, location: Location) -> Listing:
    found = list_remote([paths] if isinstance(paths, str) else paths, location, _is_data_name,
                        PARQUET_SUFFIXES, _hive_parts)
    files = [SourceFile(name, dict(parts), size, mtime, fs_path=path, etag=etag)
             for name, parts, size, mtime, path, etag in found]
    return Listing(files, location.filesystem)


def _list_dataset(dataset: pyarrow.dataset.FileSystemDataset) -> Listing:
    import pyarrow.dataset as ds

    files = []
    for fragment in dataset.get_fragments():
        keys = ds.get_partition_keys(fragment.partition_expression)
        files.append(SourceFile(fragment.path, dict(keys)))
    names = {k for f in files for k in f.partitions}
    typed = pa.schema([dataset.schema.field(n) for n in dataset.schema.names if n in names])
    return Listing(files, getattr(dataset, "filesystem", None), typed)


def list_source(source, filesystem=None) -> Listing:
    """The files of ``source`` with their partition values (raw strings), in a stable order.

    ``source``: a directory (walked recursively), a glob, a path or a list of paths (a
    directory among them is walked), or a ``pyarrow.dataset.FileSystemDataset``; anything
    else, or a source without files, is a :class:`StatsError`. Paths may be ``file:`` URIs or
    URIs of other filesystems (``s3://...``), or paths on ``filesystem`` (a pyarrow or fsspec
    filesystem): see :mod:`prune_engine.stats.filesystems`.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> root = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(root, "y=2024", "_tmp"))
    >>> pq.write_table(pa.table({"x": [1]}), os.path.join(root, "y=2024", "a.parquet"))
    >>> pq.write_table(pa.table({"x": [1]}), os.path.join(root, "y=2024", "_tmp", "b.parquet"))
    >>> [(os.path.relpath(f.path, root), f.partitions) for f in list_source(root).files]
    [('y=2024/a.parquet', {'y': '2024'})]
    """
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
    if isinstance(source, (str, os.PathLike, list, tuple)) and source:
        location, paths = resolve(source, filesystem)
        if location is not None:
            return _list_remote(paths, location)
    if isinstance(source, (str, os.PathLike)):
        text = local_path(os.fspath(source))
        if os.path.isdir(text):
            return Listing(_walk(text))
        if os.path.exists(text):
            return Listing(_list_paths([text]))
        if any(ch in text for ch in "*?["):
            matches = sorted(p for p in globlib.glob(text, recursive=True) if os.path.isfile(p))
            if not matches:
                raise StatsError(f"{text}: the pattern matches no files", containers=[text])
            return Listing(_list_paths(matches))
        raise StatsError(f"{text}: no such file or directory", containers=[text])
    if isinstance(source, (list, tuple)):
        if not source:
            raise StatsError("the list of paths is empty")
        return Listing(_list_paths(source))
    raise StatsError("source must be a directory, a glob, a list of paths or a "
                     f"pyarrow.dataset.Dataset, not {type(source).__name__}")


def identify(files: list[SourceFile], filesystem: pyarrow.fs.FileSystem | None) -> None:
    """Fill size and modification time, and for local files inode and ctime (None when the
    file cannot be stat'ed).

    With a ``filesystem`` (a listed ``pyarrow.dataset.Dataset``), asks it, and S3 for the
    objects' ETags (:mod:`~prune_engine.stats.etags`); else ``os.stat``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.parquet")
    >>> with open(path, "wb") as out:
    ...     _ = out.write(b"1234")
    >>> files = [SourceFile(path), SourceFile(path + ".gone")]
    >>> identify(files, None)
    >>> [f.size for f in files], files[0].mtime_ns == os.stat(path).st_mtime_ns
    ([4, None], True)
    """
    if filesystem is not None:
        todo = [f for f in files if f.size is None or f.mtime_ns is None]  # a remote listing
        if not todo:
            return
        locations = [f.location for f in todo]
        etags = object_etags(filesystem, folders_of(locations))  # before: never newer
        for f, info in zip(todo, filesystem.get_file_info(locations)):
            f.size = info.size
            f.mtime_ns = info.mtime_ns
            f.etag = etags.get(f.location)
        return
    for f in files:
        try:
            st = os.stat(f.path)
        except OSError:
            continue
        f.size, f.mtime_ns, f.inode, f.ctime_ns = \
            st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns


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


def partition_arrays(files: list[SourceFile], typed: pa.Schema | None) -> dict[str, pa.Array]:
    """Per partition key, one typed value per file; ``None`` where the file lacks the key or
    the value is the Hive null (``key in file.partitions`` tells them apart).

    A key in ``typed`` (a dataset's partition schema) takes that type; the others are
    inferred from all the files' strings: int64, date32 (``YYYY-MM-DD``), else string.

    >>> files = [SourceFile("a", {"y": "2023", "c": "IS"}), SourceFile("b", {"y": None})]
    >>> {k: v.to_pylist() for k, v in partition_arrays(files, None).items()}
    {'y': [2023, None], 'c': ['IS', None]}
    """
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


def partition_types(files: Sequence[SourceFile], typed: pa.Schema | None = None) -> pa.Schema:
    """The type of each partition key over all ``files`` (as one ``collect_stats`` infers
    it), so that slices of the listing collected apart type their partitions alike.

    >>> partition_types([SourceFile("a", {"y": "2023"}), SourceFile("b", {"y": "x"})])
    y: string
    """
    return pa.schema([(k, v.type) for k, v in partition_arrays(list(files), typed).items()])
