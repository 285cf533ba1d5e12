"""The one family of errors prune_engine raises.

Every error a user can see derives from :class:`PruneEngineError`; third-party exceptions
(sqlglot, pyarrow, numba) are caught at the boundary and re-raised as one of these, with
structured fields that tests and callers can read instead of parsing the message.
"""

from __future__ import annotations

import errno
import os
from typing import Iterable, Sequence

#: the longest message a refusal has: one line under 400 characters, naming its file first
MAX_MESSAGE = 399


def one_line(text: str, limit: int = 240) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters:
    how another library's message enters one of ours.

    >>> one_line("bad\\n  thing " + "x" * 300, 20)
    'bad thing xxxxxxx...'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def listed(names: Iterable[str], limit: int = 200) -> str:
    """``names`` joined by commas, cut after as many as fit ``limit`` characters (then
    ``"... (count)"``): a list of columns or containers that fits one message.

    >>> listed([f"c{i}" for i in range(100)], 30)
    'c0, c1, c2, c3, c4, ... (100)'
    """
    names = [one_line(n, 80) for n in names]
    text = ", ".join(names)
    if len(text) <= limit:
        return text
    shown: list[str] = []
    for name in names:
        if len(", ".join(shown + [name])) + 12 > limit:
            break
        shown.append(name)
    return ", ".join(shown + ["..."]) + f" ({len(names)})"


def about(name: str, text: str) -> str:
    """The message ``"<name>: <text>"`` of a refusal of the file ``name``, on one line of at
    most :data:`MAX_MESSAGE` characters: the name's control characters escaped and the name
    cut to 200 characters, the text folded to one line and cut to the rest.

    >>> about("m.avro", "bad\\n  block")
    'm.avro: bad block'
    >>> len(about("x" * 500, "y" * 500)) < 400
    True
    """
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(name))
    if len(shown) > 200:
        shown = shown[:197] + "..."
    return f"{shown}: {one_line(text, MAX_MESSAGE - len(shown) - 2)}"


class PruneEngineError(Exception):
    """Root of every error prune_engine raises."""


class SqlParseError(PruneEngineError, ValueError):
    """Malformed SQL text; ``line`` and ``col`` (1-based) point at the fault.

    >>> import prune_engine as pe
    >>> try:
    ...     pe.compile("x > AND 5", None)
    ... except pe.SqlParseError as e:
    ...     (e.line, e.col)
    (1, 7)
    """

    def __init__(self, message: str, sql: str, line: int, col: int):
        self.sql = sql
        self.line = line
        self.col = col
        super().__init__(f"{message} (line {line}, column {col})\n  {_highlight(sql, line, col)}")


def _highlight(sql: str, line: int, col: int) -> str:
    lines = sql.splitlines() or [""]
    text = lines[min(max(line, 1), len(lines)) - 1]
    return f"{text}\n  {' ' * max(col - 1, 0)}^"


class UnknownColumnError(PruneEngineError, KeyError):
    """A predicate names a column the statistics table does not describe."""

    def __init__(self, column: str, known: Sequence[str]):
        self.column = column
        self.known = list(known)
        super().__init__(f"unknown column {one_line(repr(column), 120)}; the statistics know: "
                         f"{listed(self.known)}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class TypeMismatchError(PruneEngineError, TypeError):
    """A predicate compares values of types that cannot be compared (e.g. a string column to 5)."""


class PatternError(PruneEngineError, ValueError):
    """A malformed LIKE or regular-expression pattern (e.g. a dangling ESCAPE character)."""


class NgramError(PruneEngineError, ValueError):
    """Bad input to the n-gram index: a non-string column, bad offsets or options, or a LIKE
    pattern that SQL itself rejects (a pattern ending in its escape character)."""


class StatsError(PruneEngineError, ValueError):
    """A malformed statistics table: a missing or mistyped column, or impossible values.

    ``column`` names the offending stats column and ``containers`` lists (up to ten of) the
    first offending containers, when the fault is per container.
    """

    def __init__(self, message: str, column: str | None = None, containers: Sequence = ()):
        self.column = column
        self.containers = list(containers)
        super().__init__(message)


class StatsFileNotFoundError(StatsError, FileNotFoundError):
    """A statistics file that is not there; ``path`` (and ``filename``, as for any
    ``FileNotFoundError``) names it.

    >>> import prune_engine as pe
    >>> try:
    ...     pe.read_stats("nope.parquet")
    ... except FileNotFoundError as e:
    ...     (e.path, str(e))
    ('nope.parquet', 'nope.parquet: no such statistics file')
    """

    def __init__(self, path: str):
        super().__init__(f"{path}: no such statistics file", containers=[path])
        self.path = self.filename = path
        self.errno, self.strerror = errno.ENOENT, os.strerror(errno.ENOENT)

    def __str__(self) -> str:  # OSError would print "[Errno 2] ..."
        return self.args[0]


class MissingDependencyError(PruneEngineError, ImportError):
    """An optional dependency that a feature needs is not installed (or cannot start, as
    Spark without Java); ``package`` names it and the message says how to install it.

    >>> e = MissingDependencyError("spark-demo needs pyspark: pip install 'prune_engine[spark]'",
    ...                            package="pyspark")
    >>> e.package
    'pyspark'
    """

    def __init__(self, message: str, package: str):
        super().__init__(message, name=package)
        self.package = package


class IndexCorruptError(PruneEngineError, ValueError):
    """Index bytes (n-gram, bloom) that fail their checksum or carry an unknown version."""

    def __init__(self, message: str, container=None):
        self.container = container
        super().__init__(message)


class ColumnPathError(PruneEngineError, KeyError):
    """A projection path the data does not have: unknown, through a scalar, or ambiguous.

    ``path`` is the path as given, ``nearest`` the closest existing path (or None), and
    ``candidates`` the quoted spellings an ambiguous path could mean.

    >>> e = ColumnPathError("unknown column path 'user.cty'", "user.cty", nearest="user.city")
    >>> (e.path, e.nearest)
    ('user.cty', 'user.city')
    """

    def __init__(self, message: str, path: str, nearest: str | None = None,
                 candidates: Sequence[str] = ()):
        self.path = path
        self.nearest = nearest
        self.candidates = list(candidates)
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class ScanError(PruneEngineError, ValueError):
    """The scan cannot give an exact answer: a row filter it cannot evaluate with SQL
    semantics, a file it cannot read, or statistics that do not describe the files.

    ``path`` names the file when the fault is in one."""

    def __init__(self, message: str, path: str | None = None):
        self.path = path
        super().__init__(message)
