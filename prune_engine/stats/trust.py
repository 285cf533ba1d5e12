"""Impossible statistics: what a Parquet file says that cannot be true is unknown, not trusted.

A footer, a Bloom filter or a dictionary page can say things no valid file says (a writer's
bug, a corrupt copy, a mutated file). Trusting them can prune a container that holds matching
rows, the one unforgivable bug; so the chunk that says them reads as unknown: its bounds, its
null and NaN counts, its Bloom filter and its dictionary (a good chunk of the same file is
still used). :mod:`.parquet` applies the checks and keeps the reasons, and ``collect_stats``
warns once per file (``metadata["untrusted_statistics"]``). Each chunk is judged on its own
bytes and its file's layout, never on another file's, so a corrupt file never changes another
file's statistics.

What is impossible, and why:

- **counts** (:func:`impossible_counts`): a negative count (-1 is the footer's "not given");
  more nulls than values (``num_values`` counts nulls too), or, outside lists and maps, than
  the row group's rows; more NaNs than non-null values. And a value count that contradicts
  the row group's row count: every row has exactly one value of a leaf outside lists and
  maps, at least one of a leaf inside them, a row group of no rows none; the row count is then
  unknown too (a row group of 0 rows would match nothing), as is every row count of a file
  whose own row count is not their sum.
- **bounds** (:func:`impossible_order`): a min above the max, compared in the column's Arrow
  type; a boolean bound byte other than 0 or 1 (pyarrow and parquet-java read bit 0 of it,
  but no writer of booleans sets the other bits: a reader that guesses may read FALSE as
  TRUE, so no guess is made).
- **Bloom filters** (:func:`bloom_denies`): a filter that answers "absent" for the chunk's
  own exact min or max (a bound is one of the chunk's values where the writer says it is
  exact, or, unless it says not, where it is a fixed-width value of its full width; a zero
  float bound may be either zero; a NaN bound proves nothing); a filter that cannot lie where
  the footer puts it (:class:`Layout`: past the end of the file, inside the footer, over any
  chunk's pages; Arrow, parquet-java and DuckDB write filters after the last row group); a
  footer length other than the header's (:mod:`prune_engine.bloom.read`).
- **dictionary pages** (:func:`misplaced_dictionary`): a page outside its own chunk's pages,
  or whose chunk's pages overlap another chunk's; a page whose CRC-32 does not match its
  bytes (:mod:`.dictionary`).

A filter or page that is merely unusable (another algorithm, a codec pyarrow lacks, over the
cap) is left out with a reason instead: it says nothing impossible.

>>> rows = np.full((2, _thrift.NUM_SELECTED), -1)
>>> rows[:, _thrift.S_NULLS], rows[:, _thrift.S_NUM_VALUES] = [57, 0], [25, 25]
>>> bad, _ = impossible_counts(rows, np.array([25, 25]), np.zeros(2, bool))
>>> bad.tolist(), describe("x", False, False, rows[0], 25, None, None, False)
([True, False], 'x: 57 nulls in 25 values and 25 rows')
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._lazy import LazyModule
from prune_engine.bloom import encoding as bloom_encoding
from prune_engine.bloom import format as bloom_format

__all__ = ["Layout", "impossible_counts", "impossible_order", "describe", "bloom_denies",
           "misplaced_dictionary"]

#: the footer kernels' slot numbers (numba loads only where footers are decoded)
_thrift = LazyModule("prune_engine.stats._thrift")

#: physical types whose bounds are the values themselves (nothing a writer truncates)
FIXED_WIDTH = {"INT32": 4, "INT64": 8, "FLOAT": 4, "DOUBLE": 8}


# ------------------------------------------------------------------------------ places


@dataclass(frozen=True)
class Layout:
    """Where a file's bytes lie: pages and indexes in ``[4, end)`` (past the leading magic, up
    to the footer); each column chunk's pages from its first page (its dictionary page, if it
    has one before its data pages) over its ``total_compressed_size`` bytes. ``starts`` and
    ``ends`` are those extents' bounds, each sorted (chunks whose extent is not given, or
    runs out of the file, are left out: they cannot prove another place wrong).

    >>> lay = Layout(100, np.array([4, 50]), np.array([50, 90]))
    >>> lay.misplaced(90, 99), lay.misplaced(40, 60), lay.misplaced(4, 30, own=1)
    (None, "overlaps 2 column chunks' pages", None)
    """

    end: int
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, chunks: np.ndarray, end: int) -> "Layout":
        """The layout of a file whose footer starts at ``end``, from the chunk rows of
        :func:`._thrift.decode_footer`."""
        dict_off, data_off = chunks[:, _thrift.C_DICT_OFF], chunks[:, _thrift.C_DATA_OFF]
        total = chunks[:, _thrift.C_TOTAL]
        start = np.where((dict_off > 0) & (dict_off < data_off), dict_off, data_off)
        known = (chunks[:, _thrift.C_TYPE] >= 0) & (start >= 4) & (start < end) & (total > 0) \
            & (total <= end)  # (no overflow below)
        known &= start + np.where(known, total, 0) <= end
        return cls(end, np.sort(start[known]), np.sort((start + total)[known]))

    def overlaps(self, start: int, stop: int) -> int:
        """How many chunks' pages overlap the bytes ``[start, stop)``."""
        return int(np.searchsorted(self.starts, stop, "left")
                   - np.searchsorted(self.ends, start, "right"))

    def misplaced(self, start: int, stop: int, own: int = 0) -> str | None:
        """Why the bytes ``[start, stop)`` cannot hold what the footer says (None: they can):
        outside the file's pages, or over the pages of more chunks than ``own``."""
        if not 4 <= start < stop <= self.end:
            return f"bytes {start} to {stop} lie outside the file's pages (4 to {self.end})"
        n = self.overlaps(start, stop)
        return f"overlaps {n} column chunks' pages" if n > own else None


def misplaced_dictionary(layout: Layout | None, offset: int, length: int,
                         total: int) -> str | None:
    """Why a dictionary page at ``offset``, ``length`` bytes before its chunk's first data
    page, cannot be there (None: it can): its chunk's pages (``total`` bytes from it) must
    hold it and a data page, lie in the file's pages, and overlap no other chunk's.

    >>> lay = Layout(100, np.array([4, 50]), np.array([50, 90]))
    >>> misplaced_dictionary(lay, 4, 10, 46), misplaced_dictionary(lay, 4, 46, 46)
    (None, "at offset 4 (46 bytes before the data pages) does not fit its chunk's 46 bytes")
    """
    if offset < 0 or layout is None:
        return None
    if not 0 < length < total:
        return (f"at offset {offset} ({length} bytes before the data pages) does not fit its "
                f"chunk's {total} bytes")
    why = layout.misplaced(offset, offset + total, own=1)
    return None if why is None else f"at offset {offset}: its chunk {why}"


# ------------------------------------------------------------------------------ counts, bounds


def impossible_counts(rows: np.ndarray, group_rows: np.ndarray, repeated: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(impossible, contradicted)`` per chunk: counts that cannot be, and value counts that
    contradict the row group's row count (a subset of the first). ``rows``: :mod:`._thrift`
    ``S_*`` rows; ``group_rows``: each one's row-group row count; ``repeated``: whether its
    leaf is inside a list or map (see the module doc).

    >>> rows = np.full((4, _thrift.NUM_SELECTED), -1)
    >>> rows[:, _thrift.S_NULLS] = [0, 57, 2, 0]
    >>> rows[:, _thrift.S_NUM_VALUES] = [25, 25, 25, 7]
    >>> bad, contradicted = impossible_counts(rows, np.array([25, 25, 25, 0]), np.zeros(4, bool))
    >>> bad.tolist(), contradicted.tolist()
    ([False, True, False, True], [False, False, False, True])
    """
    nulls, values, nans = (rows[:, s] for s in (_thrift.S_NULLS, _thrift.S_NUM_VALUES,
                                                _thrift.S_NANS))
    has_nulls, has_values = nulls >= 0, values >= 0
    bad = (nulls < -1) | (values < -1) | (nans < -1)
    bad |= has_nulls & has_values & (nulls > values)
    bad |= has_nulls & ~repeated & (nulls > group_rows)
    non_null = values - np.where(has_nulls, np.minimum(np.maximum(nulls, 0), values), 0)
    bad |= (nans >= 0) & has_values & (nans > non_null)
    contradicted = has_values & np.where(repeated, (values < group_rows)
                                         | ((group_rows == 0) & (values > 0)),
                                         values != group_rows)
    return bad | contradicted, contradicted


def impossible_order(mins: pa.Array, maxs: pa.Array) -> np.ndarray:
    """Per chunk: is its min above its max (compared in their Arrow type)?

    >>> impossible_order(pa.array([1, 5, None]), pa.array([2, 4, 0])).tolist()
    [False, True, False]
    """
    try:
        above = pc.greater(mins, maxs)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return np.zeros(len(mins), bool)  # a type without an order: no bound of it is used
    return np.asarray(pc.fill_null(above, False).to_numpy(zero_copy_only=False), bool)


def describe(name: str, boolean: bool, repeated: bool, row: np.ndarray, group_rows: int,
             lo, hi, order: bool) -> str:
    """One line: why a chunk of leaf ``name`` is impossible (``row``: its :mod:`._thrift` row;
    ``lo`` / ``hi``: its bounds as read; ``order``: its bounds, not its counts, are why)."""
    nulls, values, nans = (int(row[s]) for s in (_thrift.S_NULLS, _thrift.S_NUM_VALUES,
                                                 _thrift.S_NANS))
    if order:
        if boolean and (lo is None or hi is None or lo <= hi):
            return f"{name}: a boolean bound byte other than 0 or 1"
        return f"{name}: min {_short(lo)} above max {_short(hi)}"
    if values >= 0 and (values < group_rows or (group_rows == 0 < values) if repeated
                        else values != group_rows):
        return f"{name}: {values} values contradict the row group's {group_rows} rows"
    if nans >= 0 and values >= 0 and nans > values - max(nulls, 0):
        return f"{name}: {nans} NaNs and {max(nulls, 0)} nulls in {values} values"
    return f"{name}: {nulls} nulls in {values} values and {group_rows} rows"


def _short(value) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------------ Bloom filters


def bloom_denies(words: np.ndarray, physical: str, width: int | None,
                 bounds: list[tuple[str, bytes, int]]) -> str | None:
    """The side (``"min"`` / ``"max"``) whose exact bound the chunk's Bloom filter ``words``
    answers "absent" for, else None. ``bounds``: ``(side, raw bytes, exact flag)`` (1 / 0 as
    the footer says, -1 not said); a filter hashes the plain encoding of each value, which is
    a bound's raw bytes.

    >>> import numpy as np
    >>> bloom_denies(np.zeros(8, np.uint32), "INT64", None, [("min", bytes(8), -1)])
    'min'
    >>> bloom_denies(np.zeros(8, np.uint32), "BYTE_ARRAY", None, [("min", b"a", -1)])
    """
    width = FIXED_WIDTH.get(physical, width)
    for side, raw, exact in bounds:
        if exact == 0 or (exact != 1 and (width is None or len(raw) != width)):
            continue  # not known to be one of the chunk's values
        encodings = [raw]
        if physical in ("FLOAT", "DOUBLE"):
            if len(raw) not in (4, 8):
                continue
            code = "<f" if len(raw) == 4 else "<d"
            value = struct.unpack(code, raw)[0]
            if value != value:
                continue  # NaN: many bit patterns
            if value == 0:  # a zero bound is written -0.0 (min) or +0.0 (max): either
                encodings = [struct.pack(code, 0.0), struct.pack(code, -0.0)]
        if not bloom_format.may_hold(words, bloom_encoding.hashes(encodings)).any():
            return side
    return None
