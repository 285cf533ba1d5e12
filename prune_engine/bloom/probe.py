"""Probe the ``bloom_filter`` column: may each container hold one of some values?

``x = v`` and ``x IN (...)`` (and a join's key set) keep a container only where its Parquet
Bloom filter may hold one of the values. Per container the answer is "maybe" (keep) or "no"
(the values are absent: a Bloom filter has no false negatives). A null entry, an encoding the
values cannot be put in exactly (:func:`~.encoding.plain_bytes` is None), and a corrupt entry
keep; the last one raises :class:`~prune_engine.errors.IndexCorruptError` unless
``on_invalid="keep"``.

The values are encoded and hashed once per distinct encoding (usually one per table); each
hash's block selector and eight bit masks are computed in numpy, and one numba loop
(:mod:`._kernels`) tests every container, reading one 32-byte block per hash.

>>> import numpy as np, pyarrow as pa
>>> from prune_engine.bloom.format import encode_entry
>>> from prune_engine.bloom.encoding import value_hashes
>>> words = np.zeros(8, np.uint32)
>>> h = value_hashes([42], pa.int64(), "int64")
>>> for i, m in enumerate(bit_masks(h)[1][0]): words[i] |= m
>>> index = pa.array([encode_entry("int64", [words]), None])
>>> may_contain(index, [42], pa.int64()).tolist(), may_contain(index, [7], pa.int64()).tolist()
([True, True], [False, True])
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pyarrow as pa

from prune_engine.bloom.encoding import value_hashes
from prune_engine.bloom.format import BLOCK_BYTES, bit_masks, entry_layout, header_length
from prune_engine.errors import IndexCorruptError
from prune_engine.evaluate import membership


class _Filters:
    """The filters of a binary column's valid entries, flat: for filter ``i``, its container
    ``entry[i]``, its first u32 word ``starts[i]`` in ``words`` and its ``blocks[i]``; and each
    container's ``token`` (None: no entry, or a corrupt one, listed in ``bad``)."""

    def __init__(self, array: pa.Array, containers):
        n = len(array)
        self.token = np.full(n, None, dtype=object)
        self.bad = np.zeros(0, np.int64)
        self.entry = self.starts = self.blocks = np.zeros(0, np.int64)
        self.words = np.zeros(0, np.uint32)
        valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False)) if n else \
            np.zeros(0, bool)
        if pa.types.is_null(array.type) or not valid.any():
            return
        offset_type = np.int64 if pa.types.is_large_binary(array.type) else np.int32
        offsets = np.frombuffer(array.buffers()[1], offset_type,
                                count=array.offset + n + 1)[array.offset:].astype(np.int64)
        buf = array.buffers()[2]
        data = np.frombuffer(buf, np.uint8) if buf is not None else np.zeros(0, np.uint8)
        ends = offsets[1:]
        idx = np.flatnonzero(valid)
        # the common case: entries that start with the first one's header (magic, version,
        # token), read in numpy; the others one by one
        first = int(idx[0])
        bad = np.zeros(n, bool)
        same = np.zeros(n, bool)
        try:
            token, _, _ = entry_layout(bytes(data[offsets[first]:ends[first]]))
        except IndexCorruptError:
            token = None
        if token is not None:
            hl = header_length(token)
            ref = data[offsets[first]:offsets[first] + hl]
            fits = idx[ends[idx] - offsets[idx] >= hl + 4]
            same[fits[(data[offsets[fits, None] + np.arange(hl)] == ref).all(axis=1)]] = True
        rows = np.flatnonzero(same)
        entry, starts, blocks = [np.zeros(0, np.int64)] * 3
        if len(rows):
            at = offsets[rows] + hl
            count = _u32(data, at)
            bits = at + (4 + 4 * count + 7) // 8 * 8
            fits = (count > 0) & (bits <= ends[rows])
            bad[rows[~fits]] = True
            rows, at, count, bits = rows[fits], at[fits], count[fits], bits[fits]
            owner = np.repeat(np.arange(len(rows)), count)  # each filter's entry, 0..rows
            entry = rows[owner]
            first_of = np.cumsum(count) - count
            j = np.arange(len(entry)) - first_of[owner]
            blocks = _u32(data, at[owner] + 4 + 4 * j)
            within = np.cumsum(blocks) - blocks
            within -= within[first_of][owner]
            starts = bits[owner] + BLOCK_BYTES * within
            total = np.bincount(owner, weights=blocks, minlength=len(rows)) * BLOCK_BYTES
            odd = ((blocks & (blocks - 1)) != 0) | (blocks == 0)  # not a power of two
            wrong = (bits + total != ends[rows]) | (
                np.bincount(owner, weights=odd, minlength=len(rows)) > 0)
            bad[rows[wrong]] = True
            self.token[rows[~wrong]] = token
        pieces = [(entry, starts, blocks)]
        for i in idx[~same[idx]]:  # other headers (rare): one by one
            try:
                tok, bits, sizes = entry_layout(bytes(data[offsets[i]:ends[i]]), _name(containers, i))
            except IndexCorruptError:
                bad[i] = True
                continue
            self.token[i] = tok
            sizes = np.array(sizes, np.int64)
            pieces.append((np.full(len(sizes), i), offsets[i] + bits + BLOCK_BYTES * (
                np.cumsum(sizes) - sizes), sizes))
        entry, starts, blocks = (np.concatenate(p).astype(np.int64) for p in zip(*pieces))
        keep = ~bad[entry]
        self.entry, starts, self.blocks = entry[keep], starts[keep], blocks[keep]
        self.token[bad] = None
        self.bad = np.flatnonzero(bad)
        # u32 words: a view of the Arrow bytes where the bitsets are aligned, else a copy
        if buf is not None and buf.address % 4 == 0 and (starts % 4 == 0).all():
            self.words = np.frombuffer(buf, np.uint32, count=data.size // 4)
            self.starts = starts // 4
        else:
            sizes = self.blocks * BLOCK_BYTES
            at = data[np.repeat(starts, sizes) + np.arange(sizes.sum()) - np.repeat(
                np.cumsum(sizes) - sizes, sizes)]
            self.words = np.frombuffer(at.tobytes(), np.uint32)
            self.starts = (np.cumsum(sizes) - sizes) // 4


def _u32(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian u32 at each byte position ``at`` of ``data``."""
    b = data[at[:, None] + np.arange(4)].astype(np.int64)
    return b[:, 0] | b[:, 1] << 8 | b[:, 2] << 16 | b[:, 3] << 24


def _name(containers, i: int):
    return containers[i].as_py() if containers is not None else i


#: probes (filters x hashes) worth a second thread
PARALLEL_PROBES = 1 << 19


def _probe(filters: _Filters, rows: np.ndarray, high: np.ndarray, masks: np.ndarray,
           hit: np.ndarray) -> None:
    """The kernel over ``rows``, split across threads when there are many probes (the kernel
    releases the GIL; each part writes its own rows of ``hit``)."""
    from prune_engine.bloom import _kernels

    def run(start: int, stop: int) -> None:
        _kernels.probe(filters.words, filters.starts, filters.blocks, rows[start:stop], high,
                       masks, hit)

    membership.run_split(run, len(rows), len(rows) * len(high) // PARALLEL_PROBES)


def may_contain(index: pa.Array | pa.ChunkedArray, values: Sequence, stats_type: pa.DataType,
                *, on_invalid: str = "raise", containers: pa.Array | None = None) -> np.ndarray:
    """For each container: may its filter hold one of ``values`` (coerced literals of the
    statistics' ``stats_type``; see :func:`~.encoding.plain_bytes`)? True where unknown."""

    if on_invalid not in ("raise", "keep"):
        raise ValueError(f"on_invalid must be 'raise' or 'keep', not {on_invalid!r}")
    if isinstance(index, pa.ChunkedArray):
        index = index.combine_chunks() if index.num_chunks != 1 else index.chunk(0)
    filters = _Filters(index, containers)
    if len(filters.bad):
        name = _name(containers, int(filters.bad[0]))
        if on_invalid == "raise":
            raise IndexCorruptError(
                f"Bloom filter entry of container {name!r} is corrupt or of an unknown version; "
                f"{len(filters.bad)} container(s) affected; on_invalid='keep' keeps them", name)
        warnings.warn(f"kept {len(filters.bad)} container(s) whose Bloom filter entry is "
                      f"corrupt or of an unknown version", stacklevel=2)
    keep = np.ones(len(index), bool)
    hit = np.zeros(len(filters.entry), bool)
    tokens = filters.token[filters.entry]
    for tok in set(tokens):
        rows = np.flatnonzero(tokens == tok)
        h = value_hashes([v for v in values if v is not None], stats_type, tok)
        if h is None:
            hit[rows] = True  # a value whose encoding is unknown here: keep
            continue
        if not h.size:
            continue  # no value of this encoding can equal one of them
        high, masks = bit_masks(np.unique(h))
        _probe(filters, rows, high, np.ascontiguousarray(masks), hit)
    indexed = filters.token != None  # noqa: E711
    keep[indexed] = np.bincount(filters.entry, weights=hit, minlength=len(index))[indexed] > 0
    return keep
