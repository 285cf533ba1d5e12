"""Build the n-gram index of one string column: one index entry (bytes) per container.

Per container, the distinct grams of its values (``n`` code points of ``START + value + END``)
are hashed with xxHash64 and stored as an exact sorted array while small, else as a Parquet
split-block Bloom filter sized for ``fpp``; an entry above ``max_bytes`` is null (no index: the
container is always kept). With ``case_insensitive=True`` a second, case-folded set is stored
for ILIKE (fold: :mod:`.fold`). The work is one numba kernel over the Arrow buffers.

>>> import numpy as np, pyarrow as pa
>>> from prune_engine.ngram.probe import like_may_match
>>> values = pa.array(["/cart/checkout", "/home", "/search?q=tea", "/about"])
>>> index = build_index_column(values, np.array([0, 2, 4]))
>>> like_may_match(index, "%checkout%").tolist()
[True, False]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from prune_engine.errors import NgramError
from prune_engine.ngram.format import MAX_GRAM_SIZE, bits_per_gram

#: default byte cap of one container's entry (like Parquet's default Bloom filter cap)
DEFAULT_MAX_BYTES = 1 << 20
#: a gram set is stored exactly while it holds at most this many grams (8 bytes each)
EXACT_MAX_GRAMS = 512
_MODES = {"auto": 0, "exact": 1, "bloom": 2}
#: rows per kernel call (each call converts only its own offsets to int64)
BATCH_ROWS = 1 << 20


def build_index_column(values: pa.Array | pa.ChunkedArray, group_offsets: np.ndarray, *,
                       gram_size: int = 3, case_insensitive: bool = False, fpp: float = 0.01,
                       max_bytes: int = DEFAULT_MAX_BYTES, progress: bool = False) -> pa.BinaryArray:
    """One index entry per container; null where the entry would exceed ``max_bytes``.

    ``values`` is a string column whose rows are ordered by container; container ``i`` owns
    rows ``group_offsets[i]:group_offsets[i + 1]``. The result is ``pa.binary()`` (or
    ``pa.large_binary()`` if the entries together exceed 2 GiB).
    """
    return build_index(values, group_offsets, gram_size=gram_size,
                       case_insensitive=case_insensitive, fpp=fpp, max_bytes=max_bytes,
                       progress=progress)


def build_index(values: pa.Array | pa.ChunkedArray, group_offsets: np.ndarray, *,
                gram_size: int = 3, case_insensitive: bool = False, fpp: float = 0.01,
                max_bytes: int = DEFAULT_MAX_BYTES, progress: bool = False, mode: str = "auto",
                exact_max_grams: int = EXACT_MAX_GRAMS) -> pa.BinaryArray:
    """:func:`build_index_column` with the representation exposed for tests and benchmarks.

    ``mode`` is ``"auto"`` (exact up to ``exact_max_grams`` grams, else Bloom), ``"exact"`` or
    ``"bloom"``.

    >>> import numpy as np, pyarrow as pa
    >>> index = build_index(pa.array(["abc"]), np.array([0, 1]), mode="bloom")
    >>> from prune_engine.ngram.format import decode_entry
    >>> decode_entry(index[0].as_py()).sections[0].kind  # KIND_SBBF
    1
    """
    from prune_engine.ngram import _kernels as K
    from prune_engine.ngram.fold import fold_table

    offsets, data, valid = string_buffers(values, "values")
    groups = _check_groups(group_offsets, len(valid))
    _check_options(gram_size, fpp, max_bytes, mode, exact_max_grams)
    args = (K.ro(fold_table(), np.int32), bool(case_insensitive), bits_per_gram(fpp),
            int(max_bytes), int(exact_max_grams), _MODES[mode])

    def build(lo: int, hi: int):
        """Entries of containers ``lo..hi``, from their rows only (int64 offsets made for them)."""
        first, last = groups[lo], groups[hi]
        out_off, out_data, out_ok = K.build_entries(
            K.ro(offsets[first:last + 1], np.int64), data, valid[first:last],
            K.ro(groups[lo:hi + 1] - first, np.int64), int(gram_size), *args)
        return out_off, out_data[:out_off[-1]].copy(), out_ok  # the kernel's buffer has slack

    rows = int(groups[-1] - groups[0])
    batches = _batches(groups, min(BATCH_ROWS, max(1, rows // 100)) if progress else BATCH_ROWS)
    if not progress:
        return _to_binary(*_concat_parts([build(lo, hi) for lo, hi in batches]))
    from tqdm.auto import tqdm

    parts = []
    with tqdm(total=rows, unit="row", desc="n-gram index") as bar:
        for lo, hi in batches:
            parts.append(build(lo, hi))
            bar.update(int(groups[hi] - groups[lo]))
    return _to_binary(*_concat_parts(parts))


def _batches(groups: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Consecutive container ranges ``(lo, hi)`` of about ``rows`` rows each (at least one
    container each; none when there is no container).

    >>> _batches(np.array([0, 5, 10, 12, 30]), 10)
    [(0, 2), (2, 4)]
    """
    targets = np.arange(groups[0] + rows, groups[-1], rows)
    cuts = np.unique(np.concatenate([[0], np.searchsorted(groups, targets), [len(groups) - 1]]))
    return [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:])]


def string_buffers(values, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, uint8 bytes, bool valid) of a string column: read-only, zero-copy offsets
    (int32 or int64, as stored) and bytes."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if not isinstance(values, pa.Array):
        raise NgramError(f"{what} must be a pyarrow string array, not {type(values).__name__}")
    t = values.type
    if pa.types.is_string_view(t):
        values = values.cast(pa.large_string())
    elif not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise NgramError(f"{what} must be a string column, not {t}")
    return arrow_buffers(values)


def arrow_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, uint8 data, bool valid) of a string or binary array; the offsets keep their
    stored width (int32 or int64): a kernel call converts only the part it reads."""
    from prune_engine.ngram import _kernels as K

    bufs = arr.buffers()
    width = np.int64 if arr.type in (pa.large_string(), pa.large_binary()) else np.int32
    if bufs[1] is None:
        offsets = np.zeros(len(arr) + 1, width)
    else:
        offsets = np.frombuffer(bufs[1], width)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
    else:
        valid = np.ones(len(arr), np.bool_)
    return K.ro(offsets, width), K.ro(data, np.uint8), K.ro(valid, np.bool_)


def _check_groups(group_offsets, num_rows: int) -> np.ndarray:
    groups = np.asarray(group_offsets)
    if groups.ndim != 1 or groups.size < 1 or not np.issubdtype(groups.dtype, np.integer):
        raise NgramError("group_offsets must be a 1-d integer array of num_containers + 1 offsets")
    groups = groups.astype(np.int64)
    if groups[0] < 0 or groups[-1] > num_rows or np.any(np.diff(groups) < 0):
        raise NgramError(f"group_offsets must be non-decreasing within [0, {num_rows}] "
                         f"(the number of values); got {groups[0]}..{groups[-1]}")
    return groups


def _check_options(gram_size, fpp, max_bytes, mode, exact_max_grams) -> None:
    if not isinstance(gram_size, (int, np.integer)) or not 1 <= gram_size <= MAX_GRAM_SIZE:
        raise NgramError(f"gram_size must be an integer in 1..{MAX_GRAM_SIZE}, not {gram_size!r}")
    if not isinstance(fpp, (float, int)) or not 0.0 < fpp < 1.0:
        raise NgramError(f"fpp must be a false-positive rate in (0, 1), not {fpp!r}")
    if not isinstance(max_bytes, (int, np.integer)) or max_bytes < 0:
        raise NgramError(f"max_bytes must be a non-negative integer, not {max_bytes!r}")
    if mode not in _MODES:
        raise NgramError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
    if not isinstance(exact_max_grams, (int, np.integer)) or exact_max_grams < 0:
        raise NgramError(f"exact_max_grams must be a non-negative integer, not {exact_max_grams!r}")


def _concat_parts(parts):
    offs, datas, oks = [np.zeros(1, np.int64)], [], []
    base = 0
    for off, data, ok in parts:
        offs.append(off[1:] + base)
        base += len(data)
        datas.append(data)
        oks.append(ok)
    return (np.concatenate(offs), np.concatenate(datas) if datas else np.zeros(0, np.uint8),
            np.concatenate(oks) if oks else np.zeros(0, np.bool_))


def _to_binary(offsets: np.ndarray, data: np.ndarray, ok: np.ndarray) -> pa.Array:
    large = offsets[-1] > np.iinfo(np.int32).max
    off = offsets if large else offsets.astype(np.int32)
    validity = None if ok.all() else pa.array(ok).buffers()[1]
    return pa.Array.from_buffers(pa.large_binary() if large else pa.binary(), len(ok),
                                 [validity, pa.py_buffer(off), pa.py_buffer(data)],
                                 null_count=int(len(ok) - ok.sum()))
