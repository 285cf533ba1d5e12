"""The statistics' files checked against the source as Spark lists it now.

Statistics describe files as they were when collected. Before they decide anything, every
file they name is looked at now (:func:`check_files`):

- a file outside the source's roots is not the source's (the statistics may cover more);
- a *gone* file holds no rows of the source as it is now, and plain Spark does not read it:
  it is skipped, with a warning (``missing="raise"``: an error);
- a *changed* file (its size, modification time, or for a local file its inode or ctime
  differ from those recorded) may hold anything now: it is never excluded;
- every other file is as the statistics describe it.

Excluding a file needs only that it be unchanged: a file kept that could have been skipped
costs time, never rows. An answer that rests on a file's rows being *read* (a top-k
threshold, the rows a ``LIMIT`` counts on, a ``COUNT`` taken from ``num_records``) needs
more: the file must also be one that Spark lists for the source now
(:meth:`CheckedFiles.vouching`). A file Spark does not list (hidden, or left out by a reader
option such as ``pathGlobFilter`` or ``modifiedAfter``) is not read, whatever its statistics
say.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow.compute as pc

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable
from prune_engine.spark._files import changed, file_key, identities, recorded_identity
from prune_engine.spark._hadoop import session_filesystems
from prune_engine.spark._inferred import IDENTITIES
from prune_engine.spark._source import listing

Missing = Literal["raise", "skip"]


@dataclass
class CheckedFiles:
    """The distinct files of a statistics table (``keys``, file keys, in the order first
    named; ``index``: each container's file), as the source has them now: ``inside`` its
    roots, ``gone`` and ``changed`` (keys), the ``sizes`` of those there, ``listed``, the
    files Spark lists for the source (as Spark names them), and its ``roots`` (keys)."""

    keys: list[str]
    index: np.ndarray
    inside: np.ndarray
    gone: list[str] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    sizes: dict[str, int] = field(default_factory=dict)
    listed: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)

    def kept(self, mask: np.ndarray) -> np.ndarray:
        """Per file: whether ``mask`` keeps any of its containers."""
        return np.bincount(self.index, weights=mask, minlength=len(self.keys)) > 0

    def excluded(self, kept: np.ndarray) -> tuple[list[str], list[str]]:
        """``(excluded, read)``: the files of the source that no kept container needs and
        that are unchanged, and those that would be but changed (so they are read)."""
        out, read = [], []
        gone = set(self.gone)
        for key, inside, keep in zip(self.keys, self.inside, kept):
            if not inside or keep or key in gone:
                continue
            (read if key in self.changed else out).append(key)
        return out, read

    def vouching(self) -> np.ndarray:
        """Per container: whether its file will be read as the statistics describe it
        (inside the roots, there, unchanged, and listed by Spark for the source)."""
        listed = {file_key(p) for p in self.listed}
        gone = set(self.gone)
        ok = np.array([inside and key in listed and key not in gone and key not in self.changed
                       for key, inside in zip(self.keys, self.inside)], dtype=bool)
        return ok[self.index] if len(self.index) else np.zeros(0, bool)


def check_files(base, stats: StatsTable, missing: Missing = "skip") -> CheckedFiles:
    """The files of ``stats`` checked against the source ``base`` reads (see the module
    doc); a gone file is an error with ``missing="raise"``, else a warning. Called by the
    public function itself (the warning names its caller's line)."""
    if missing not in ("raise", "skip"):
        raise ValueError(f"missing must be 'raise' or 'skip', not {missing!r}")
    listed, roots = listing(base)
    session_filesystems(base.sparkSession, roots)
    paths, index = container_files(stats)
    keys = [file_key(p) for p in paths]
    prefixes = tuple(r if r.endswith("/") else r + "/" for r in roots)
    exact = set(roots)
    inside = np.array([k in exact or k.startswith(prefixes) for k in keys], dtype=bool)
    checked = CheckedFiles(keys, index, inside, listed=listed, roots=list(roots))
    ours = [k for k, i in zip(keys, inside) if i]
    known = vars(base).get(IDENTITIES) or {}  # read when the source was opened, just before
    now = {k: known[k] for k in ours if k in known}
    now.update(identities([k for k in ours if k not in now], roots, base.sparkSession))
    checked.gone = [k for k in ours if now[k] is None]
    if checked.gone:
        _missing(checked.gone, missing)
    recorded = {file_key(p): v for p, v in (stats.metadata.get("files") or {}).items()}
    checked.changed = {k for k in ours if now[k] is not None
                       and changed(recorded_identity(recorded.get(k)), now[k])}
    checked.sizes = {k: now[k][0] for k in ours if now[k] is not None}
    return checked


def container_files(stats: StatsTable) -> tuple[list[str], np.ndarray]:
    """The distinct files of the statistics (their ``path``, or the container id when there
    is no ``path`` column), in the order first named, and each container's index among
    them."""
    name = layout.PATH if layout.PATH in stats.table.column_names else layout.CONTAINER
    paths = stats.table.column(name).combine_chunks()
    if paths.null_count:
        raise StatsError(f"the statistics' {name!r} column has nulls: every container needs "
                         "the file it lives in", column=name)
    distinct = pc.unique(paths)
    index = np.asarray(pc.index_in(paths, value_set=distinct).to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    return distinct.to_pylist(), index


def _missing(gone: list[str], missing: Missing) -> None:
    shown = ", ".join(gone[:5]) + (f" (and {len(gone) - 5} more)" if len(gone) > 5 else "")
    if missing == "raise":
        raise StatsError(f"{len(gone)} file(s) in the statistics no longer exist: {shown}; "
                         "collect the statistics again, or leave out missing='raise' to skip them",
                         containers=gone[:10])
    warnings.warn(f"skipping {len(gone)} file(s) in the statistics that no longer exist: "
                  f"{shown} (the statistics are older than the source: collect them again)",
                  stacklevel=4)  # the caller of read, join or count
