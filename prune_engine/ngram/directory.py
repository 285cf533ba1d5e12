"""The directory of an n-gram index chunk: every entry's header decoded and verified once.

A probe reads only the directory and the filter bytes it tests (:mod:`.probe`). The headers
sit at fixed offsets from each entry's start (:mod:`.format`), so they are decoded with numpy
for all entries at once; the checksums are the build's kernel (:func:`._kernels.checksums`),
so a process that only probes compiles two small kernels, not a decoder of its own.

The directories of the last few chunks are remembered, and the chunks held, so that their
memory cannot be reused under a remembered address.

>>> import numpy as np, pyarrow as pa
>>> from prune_engine.ngram.build import build_index_column
>>> entry = build_index_column(pa.array(["checkout"]), np.array([0, 1]))[0].as_py()
>>> d = directory(pa.array([entry, None, b"not an entry"], pa.binary()))
>>> d.status.tolist(), d.gram_size.tolist(), d.kind[0].tolist()  # OK, OK (null), CORRUPT
([0, 0, 1], [3, 0, 0], [0, -1, -1])
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from prune_engine.ngram.format import (
    BLOCK_BYTES, FOLD_LOWER, KIND_EXACT, KIND_SBBF, MAX_GRAM_SIZE, TRAILER_BYTES, VERSION,
    header_bytes,
)

#: per-entry status
OK = 0
CORRUPT = 1
BAD_VERSION = 2
#: how many index chunks keep their decoded :class:`Directory` (and are held)
DIRECTORY_CACHE_SIZE = 16
#: the fixed part of the header, two section slots, and the trailer: the smallest entry with
#: one section is this long, so the bytes of both slots can be read from every entry
_SHORTEST = 4 + 8 + TRAILER_BYTES
_directories: OrderedDict = OrderedDict()


class Directory(NamedTuple):
    """Every entry of one index chunk, decoded and verified once (:func:`read_directory`).

    ``kind``, ``count`` and ``position`` (of the payload in ``data``) have one row for the plain
    and one for the folded section; a probe reads only them and the filter bytes it tests.
    """

    chunk: pa.Array  # held: its buffers stay alive, so their addresses key the cache soundly
    data: np.ndarray
    status: np.ndarray
    gram_size: np.ndarray
    kind: np.ndarray
    count: np.ndarray
    position: np.ndarray
    gram_sizes: tuple  # the distinct gram sizes of the good entries


def directory(chunk: pa.Array) -> Directory:
    """The :class:`Directory` of ``chunk`` (binary, large binary or null), remembered for the
    last few chunks."""
    from prune_engine.ngram import _kernels as K
    from prune_engine.ngram.build import arrow_buffers

    bufs = chunk.buffers()
    key = tuple((b.address, b.size) if b is not None else None for b in bufs) + (
        chunk.offset, len(chunk), str(chunk.type))
    if key in _directories:
        _directories.move_to_end(key)
        return _directories[key]
    if pa.types.is_null(chunk.type):
        n = len(chunk)
        offsets, data, valid = np.zeros(n + 1, np.int64), np.zeros(0, np.uint8), np.zeros(n, np.bool_)
    else:
        offsets, data, valid = arrow_buffers(chunk)
    status, gram_size, kind, count, position = read_directory(offsets, data, valid)
    d = Directory(chunk, K.ro(data, np.uint8), K.ro(status, np.int8), K.ro(gram_size, np.int8),
                  K.ro(kind, np.int8), K.ro(count, np.int64), K.ro(position, np.int64),
                  tuple(int(g) for g in np.unique(gram_size) if g > 0))
    _directories[key] = d
    while len(_directories) > DIRECTORY_CACHE_SIZE:
        _directories.popitem(last=False)
    return d


def read_directory(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray):
    """Decode and verify the entries ``data[offsets[c]:offsets[c + 1]]`` where ``valid``.

    Returns ``(status, gram_size, kind, count, position)``: per entry its status (OK, CORRUPT
    for a bad structure or checksum, BAD_VERSION) and gram size (0 for null and bad entries);
    per section, in a plain and a folded row, its kind (-1: nothing to probe, for null and bad
    entries and a missing section), count and payload position in ``data``.

    An entry is CORRUPT unless it has one or two sections of distinct folds, each exact or a
    filter of at least one block, whose payloads end where the trailer begins, and the trailer
    is the checksum of the bytes before it.
    """
    from prune_engine.ngram import _kernels as K

    n = len(valid)
    status = np.zeros(n, np.int8)
    gram_size = np.zeros(n, np.int8)
    kind = np.full((2, n), -1, np.int8)
    count = np.zeros((2, n), np.int64)
    position = np.zeros((2, n), np.int64)
    start = np.asarray(offsets[:-1], np.int64)
    length = np.diff(np.asarray(offsets, np.int64))
    rows = np.flatnonzero(valid & (length >= _SHORTEST))
    status[valid & (length < _SHORTEST)] = CORRUPT
    head = data[start[rows, None] + np.arange(_SHORTEST - TRAILER_BYTES)]  # (rows, 12): in bounds
    versioned = head[:, 0] == VERSION
    status[rows[~versioned]] = BAD_VERSION
    rows, head = rows[versioned], head[versioned]
    s, end = start[rows], start[rows] + length[rows]
    sections = head[:, 2].astype(np.int64)
    ok = (1 <= sections) & (sections <= 2) & (1 <= head[:, 1]) & (head[:, 1] <= MAX_GRAM_SIZE)
    two = ok & (sections == 2)
    # the second slot lies in the entry only when it has two sections (else: payload bytes)
    slot2 = data[np.where(two, s + 12, s)[:, None] + np.arange(8)]
    q = s + np.where(two, header_bytes(2), header_bytes(1))
    fold_seen = np.full(len(rows), -1, np.int64)
    found = []
    for slot, present in ((head[:, 4:12], ok.copy()), (slot2, two)):
        k, fold = slot[:, 0].astype(np.int64), slot[:, 1].astype(np.int64)
        cnt = slot[:, 4:8].astype(np.int64) @ (np.int64(1) << np.arange(0, 32, 8))
        good = ((fold <= FOLD_LOWER) & (fold != fold_seen)
                & ((k == KIND_EXACT) | ((k == KIND_SBBF) & (cnt > 0))))
        ok &= ~present | good
        found.append((present, k, fold, cnt, q.copy()))
        q += np.where(present, np.where(k == KIND_EXACT, 8, BLOCK_BYTES) * cnt, 0)
        fold_seen = np.where(present, fold, fold_seen)
    ok &= q + TRAILER_BYTES == end
    checked = np.zeros(n, np.bool_)
    checked[rows[ok]] = True
    sums = np.zeros(n, np.uint64)
    K.checksums(K.ro(data, np.uint8), K.ro(offsets, np.int64), K.ro(checked, np.bool_), sums)
    trailer = data[end[ok, None] - TRAILER_BYTES + np.arange(TRAILER_BYTES)]
    ok[ok] = sums[rows[ok]] == np.ascontiguousarray(trailer).view("<u8").ravel()
    status[rows[~ok]] = CORRUPT
    good = rows[ok]
    gram_size[good] = head[ok, 1]
    for present, k, fold, cnt, pos in found:
        put = ok & present
        kind[fold[put], rows[put]] = k[put]
        count[fold[put], rows[put]] = cnt[put]
        position[fold[put], rows[put]] = pos[put]
    return status, gram_size, kind, count, position
