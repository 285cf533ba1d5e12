"""A local filesystem that counts the bytes read through it, for pyarrow and for DuckDB.

``CountingFileSystem()`` is a ``pyarrow.fs.PyFileSystem`` over the local disk whose
``bytes_read`` grows by every byte any opened file returns; pass it to ``pq.ParquetFile``,
``ds.dataset`` or ``pe.scan`` (through a dataset). ``duckdb_counting(con)`` registers an fsspec
filesystem under the ``count://`` protocol on a DuckDB connection and returns its counter, so
that ``read_parquet('count:///abs/path.parquet')`` is measured the same way.

>>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
>>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
>>> pq.write_table(pa.table({"x": [1, 2]}), path)
>>> fs = CountingFileSystem()
>>> _ = pq.read_table(path, filesystem=fs)
>>> fs.bytes_read > 0
True
"""

from __future__ import annotations

import io
import os
import threading

import pyarrow as pa
import pyarrow.fs as pafs


class Counter:
    """A thread-safe byte counter."""

    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        with self._lock:
            self.value += n


class _CountingFile(io.RawIOBase):
    def __init__(self, path: str, counter: Counter):
        self._f = open(path, "rb", buffering=0)
        self._counter = counter

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=0):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def readinto(self, buffer):
        n = self._f.readinto(buffer)
        self._counter.add(n or 0)
        return n

    def read(self, size=-1):
        data = self._f.read(size)
        self._counter.add(len(data))
        return data

    def close(self):
        self._f.close()
        super().close()


class _Handler(pafs.FileSystemHandler):
    def __init__(self, counter: Counter):
        self.local = pafs.LocalFileSystem()
        self.counter = counter

    def __eq__(self, other):
        return isinstance(other, _Handler) and other.counter is self.counter

    def __ne__(self, other):
        return not self == other

    def get_type_name(self):
        return "counting"

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def open_input_file(self, path):
        return pa.PythonFile(_CountingFile(path, self.counter), mode="r")

    def open_input_stream(self, path):
        return self.open_input_file(path)

    def create_dir(self, path, recursive):
        raise OSError("read-only")

    def delete_dir(self, path):
        raise OSError("read-only")

    def delete_dir_contents(self, path, missing_dir_ok=False):
        raise OSError("read-only")

    def delete_root_dir_contents(self):
        raise OSError("read-only")

    def delete_file(self, path):
        raise OSError("read-only")

    def move(self, src, dest):
        raise OSError("read-only")

    def copy_file(self, src, dest):
        raise OSError("read-only")

    def open_output_stream(self, path, metadata):
        raise OSError("read-only")

    def open_append_stream(self, path, metadata):
        raise OSError("read-only")


class CountingFileSystem(pafs.PyFileSystem):
    """The local disk, counting the bytes read (``bytes_read``; ``reset()`` starts over)."""

    def __init__(self):
        counter = Counter()
        super().__init__(_Handler(counter))
        self._counter = counter

    @property
    def bytes_read(self) -> int:
        return self._counter.value

    def reset(self) -> None:
        self._counter.value = 0


def duckdb_counting(con) -> Counter:
    """Register a ``count://`` fsspec filesystem on the DuckDB connection ``con``.

    DuckDB reads one opened file from several I/O threads (even with ``threads = 1``), each
    seeking and then reading: the position is therefore kept per thread and every read is
    positional (``os.pread``), or one thread's seek would move another's read and DuckDB would
    see corrupt pages."""
    from fsspec.implementations.local import LocalFileOpener, LocalFileSystem

    counter = Counter()

    class _Opener(LocalFileOpener):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._thread = threading.local()

        def seek(self, offset, whence=0):
            start = {0: 0, 1: self.tell(), 2: os.fstat(self.f.fileno()).st_size}[whence]
            self._thread.pos = start + offset
            return self._thread.pos

        def tell(self):
            return getattr(self._thread, "pos", 0)

        def read(self, size=-1):
            pos = self.tell()
            if size is None or size < 0:
                size = os.fstat(self.f.fileno()).st_size - pos
            data = os.pread(self.f.fileno(), size, pos)
            self._thread.pos = pos + len(data)
            counter.add(len(data))
            return data

        def readinto(self, buffer):
            data = self.read(len(buffer))
            memoryview(buffer)[:len(data)] = data
            return len(data)

    class _Local(LocalFileSystem):
        protocol = "count"

        def _open(self, path, mode="rb", **kwargs):
            return _Opener(self._strip_protocol(path), mode, fs=self, **kwargs)

    con.register_filesystem(_Local())
    return counter


def bytes_read(engine: str, fn, path: str) -> int:
    """The bytes ``fn(path, fs_or_con)`` reads: through DuckDB's ``count://`` filesystem where
    ``engine`` is a DuckDB one (one thread: its fsspec reads race with several), else through
    a :class:`CountingFileSystem`."""
    if engine.startswith("duckdb"):
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads = 1")
        counter = duckdb_counting(con)
        fn("count://" + path, con)
        return counter.value
    fs = CountingFileSystem()
    fn(path, fs)
    return fs.bytes_read
