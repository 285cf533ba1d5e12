"""Build the n-gram index of one string column: one index entry (bytes) per container.

Per container, the distinct grams of its values (``n`` code points of ``START + value + END``)
are hashed with xxHash64 and stored as an exact sorted array while small, else as a Parquet
split-block Bloom filter sized for ``fpp``; an entry above ``max_bytes`` is null (no index: the
container is always kept). With ``case_insensitive=True`` a second, case-folded set is stored
for ILIKE (fold: :mod:`.fold`). The work is one numba kernel over the Arrow buffers, run on
batches of containers by several threads (it releases the GIL); the kernel allocates nothing,
and asks for bigger arrays when a container needs them.

>>> import numpy as np, pyarrow as pa
>>> from prune_engine.ngram.probe import like_may_match
>>> values = pa.array(["/cart/checkout", "/home", "/search?q=tea", "/about"])
>>> index = build_index_column(values, np.array([0, 2, 4]))
>>> like_may_match(index, "%checkout%").tolist()
[True, False]
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from prune_engine.errors import NgramError
from prune_engine.ngram.format import MAX_GRAM_SIZE, bits_per_gram

#: default byte cap of one container's entry (like Parquet's default Bloom filter cap)
DEFAULT_MAX_BYTES = 1 << 20
#: a gram set is stored exactly while it holds at most this many grams (8 bytes each)
EXACT_MAX_GRAMS = 512
_MODES = {"auto": 0, "exact": 1, "bloom": 2}
#: most rows per kernel call (each call converts only its own offsets to int64)
BATCH_ROWS = 1 << 20
#: fewest rows per kernel call when the containers are split across threads
THREAD_MIN_ROWS = 1 << 15


def build_index_column(values: pa.Array | pa.ChunkedArray, group_offsets: np.ndarray, *,
                       gram_size: int = 3, case_insensitive: bool = False, fpp: float = 0.01,
                       max_bytes: int = DEFAULT_MAX_BYTES, progress: bool = False,
                       threads: int | None = None) -> pa.BinaryArray:
    """One index entry per container; null where the entry would exceed ``max_bytes``.

    ``values`` is a string column whose rows are ordered by container; container ``i`` owns
    rows ``group_offsets[i]:group_offsets[i + 1]``. The result is ``pa.binary()`` (or
    ``pa.large_binary()`` if the entries together exceed 2 GiB). Batches of containers are
    built on ``threads`` threads (default: the CPUs this process may use).
    """
    return build_index(values, group_offsets, gram_size=gram_size,
                       case_insensitive=case_insensitive, fpp=fpp, max_bytes=max_bytes,
                       progress=progress, threads=threads)


def build_index(values: pa.Array | pa.ChunkedArray, group_offsets: np.ndarray, *,
                gram_size: int = 3, case_insensitive: bool = False, fpp: float = 0.01,
                max_bytes: int = DEFAULT_MAX_BYTES, progress: bool = False, mode: str = "auto",
                exact_max_grams: int = EXACT_MAX_GRAMS, threads: int | None = None) -> pa.BinaryArray:
    """:func:`build_index_column` with the representation exposed for tests and benchmarks.

    ``mode`` is ``"auto"`` (exact up to ``exact_max_grams`` grams, else Bloom), ``"exact"`` or
    ``"bloom"``. Batches of containers are built on ``threads`` threads (default: the CPUs
    this process may use); the result does not depend on it.

    >>> import numpy as np, pyarrow as pa
    >>> index = build_index(pa.array(["abc"]), np.array([0, 1]), mode="bloom")
    >>> from prune_engine.ngram.format import decode_entry
    >>> decode_entry(index[0].as_py()).sections[0].kind  # KIND_SBBF
    1
    """
    offsets, data, valid = string_buffers(values, "values")
    groups = _check_groups(group_offsets, len(valid))
    _check_options(gram_size, fpp, max_bytes, mode, exact_max_grams)
    threads = _threads(threads)
    job = _Job(offsets, data, valid, groups, int(gram_size), bool(case_insensitive),
               bits_per_gram(fpp), int(max_bytes), int(exact_max_grams), _MODES[mode])
    rows = int(groups[-1] - groups[0])
    per_batch = min(BATCH_ROWS, max(THREAD_MIN_ROWS, rows // (4 * threads)))
    batches = _batches(groups, min(per_batch, max(1, rows // 100)) if progress else per_batch)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=rows, unit="row", desc="n-gram index")

    def build(batch):
        part = job.build(*batch)
        if bar is not None:
            bar.update(int(groups[batch[1]] - groups[batch[0]]))
        return part

    try:
        if threads > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(threads, len(batches))) as pool:
                parts = list(pool.map(build, batches))
        else:
            parts = [build(b) for b in batches]
    finally:
        if bar is not None:
            bar.close()
    return _to_binary(*_concat_parts(parts))


def _threads(threads: int | None) -> int:
    if threads is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1
    if not isinstance(threads, (int, np.integer)) or threads < 1:
        raise NgramError(f"threads must be a positive integer, not {threads!r}")
    return int(threads)


class _Job:
    """One index build: its input buffers and settings; :meth:`build` encodes a batch."""

    def __init__(self, offsets, data, valid, groups, n, case_insensitive, bits_per_gram,
                 max_bytes, exact_max, mode):
        from prune_engine.ngram import _kernels as K
        from prune_engine.ngram.fold import fold_table

        self.offsets, self.data, self.valid, self.groups = offsets, data, valid, groups
        # the fold is read only for the folded section (its table takes 0.1 s to make)
        fold = fold_table() if case_insensitive else np.arange(128, dtype=np.int32)
        ascii_bytes = np.arange(128)
        amaps = np.full(512, -1, np.int64)  # bytes as indexed, plain then folded; -1: not ASCII
        amaps[:128], amaps[256:384] = ascii_bytes, fold[:128]
        self.settings = (n, K.ro(fold, np.int32), case_insensitive, bits_per_gram, max_bytes,
                         exact_max, mode, K.ro(amaps, np.int64))
        self.exact_max = exact_max

    def _ascii(self, offsets: np.ndarray) -> bool:
        """Can :func:`._kernels.build_entries_ascii` encode the rows of ``offsets``: are their
        grams of at most 3 ASCII bytes? (A first build of ASCII strings then compiles only
        that smaller kernel.)"""
        from prune_engine.ngram import _kernels as K

        values = self.data[offsets[0]:offsets[-1]]
        return self.settings[0] <= K.SMALL_GRAM_MAX and (values.size == 0 or values.max() < 0x80)

    def build(self, lo: int, hi: int):
        """(entry offsets, entry bytes, entry valid) of containers ``lo..hi``, from their rows
        only. The kernel allocates nothing: it stops where an array is too small, and
        continues from there once it is grown."""
        from prune_engine.ngram import _kernels as K
        from prune_engine.ngram.format import MAX_GRAM_SIZE

        first, last = self.groups[lo], self.groups[hi]
        offsets = K.ro(self.offsets[first:last + 1], np.int64)
        groups = K.ro(self.groups[lo:hi + 1] - first, np.int64)
        ncont = hi - lo
        rows = np.diff(groups)
        grams = offsets[groups[1:]] - offsets[groups[:-1]] + 2 * rows  # most grams a container has
        most = int(grams.max()) if ncont else 1
        scratch = {
            "bits": np.zeros(K.BITMAP_WORDS, np.uint64),
            "small": np.zeros(min(most, 1 << (8 * K.SMALL_GRAM_MAX)) + 1, np.uint32),
            "table": np.zeros(4 * K.TABLE_START, np.uint64),
            "others": np.zeros(K.TABLE_START, np.uint64),
            "hashes": np.zeros(self.exact_max + 1, np.uint64),
            "spare": np.zeros(self.exact_max + 1, np.uint64),
        }
        count, ring = np.zeros(257, np.int64), np.zeros(MAX_GRAM_SIZE, np.int64)
        lanes, need = np.zeros(5, np.uint64), np.zeros(2, np.int64)
        # entries rarely take more than half a byte per byte of data (np.zeros maps lazily)
        out = np.zeros((int(offsets[-1] - offsets[0]) // 2 + 64 * ncont + 4096) // 8 * 8, np.uint8)
        out_off, out_ok = np.zeros(ncont + 1, np.int64), np.zeros(ncont, np.bool_)
        kernel = K.build_entries_ascii if self._ascii(offsets) else K.build_entries
        start = 0
        while True:
            start = kernel(offsets, self.data, self.valid[first:last], groups, *self.settings,
                           scratch["bits"], scratch["small"], scratch["table"], scratch["others"],
                           scratch["hashes"], scratch["spare"], count, ring, lanes, out,
                           out.view(np.uint32), out_off, out_ok, need, start)
            if start == ncont:
                return _sealed(out[:out_off[-1]].copy(), out_off, out_ok)
            what, size = int(need[0]), int(need[1])
            if what == K.NEED_OUT:
                grown = np.zeros(max(2 * out.size, 2 * size) // 8 * 8, np.uint8)  # u32 words inside
                grown[:out_off[start]] = out[:out_off[start]]
                out = grown
            else:
                names = {K.NEED_TABLE: ["table"], K.NEED_OTHERS: ["others"],
                         K.NEED_HASHES: ["hashes", "spare"]}[what]
                for name in names:
                    scratch[name] = np.zeros(max(2 * scratch[name].size, size), np.uint64)


def _sealed(data: np.ndarray, offsets: np.ndarray, ok: np.ndarray):
    """The entries with their trailing checksums written (:func:`._kernels.checksums`)."""
    from prune_engine.ngram import _kernels as K

    words = np.zeros((5, len(ok)), np.uint64)  # the checksums, then words only probes read
    K.checksums(K.ro(data, np.uint8), K.ro(offsets, np.int64), K.ro(ok, np.bool_), *words)
    sums = words[0]
    ends = offsets[1:][ok]
    data.view(np.uint64)[(ends - 8) // 8] = sums[ok]  # entries are whole 8-byte words
    return offsets, data, ok


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
