"""The directory of an n-gram index chunk: every entry's header decoded and verified once.

A probe reads only the directory and the filter bytes it tests (:mod:`.probe`). The headers
sit at fixed offsets from each entry's start (:mod:`.format`): the build's checksum kernel
(:func:`._kernels.checksums`) reads their bytes in its pass over each entry, and numpy decodes
and checks them for all entries at once. A process that builds and probes compiles no decoder
of its own (0.5 s of a cold first call); the decode takes about twice as long as a kernel's
did (34 against 17 ms for 200,000 entries, once per chunk).

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

from prune_engine.errors import IndexCorruptError
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
#: the fixed header, one section slot and the trailer: a shorter entry is corrupt (as in
#: :func:`.format.decode_entry`), and a longer one has the 20 bytes read for two slots
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

    An entry is CORRUPT unless its offsets lie inside ``data`` and it has one or two sections
    of distinct folds, each exact or a filter of at least one block, whose payloads end where
    the trailer begins, and the trailer is the checksum of the bytes before it. Every position
    handed to a kernel (the entries' bytes here, the payloads a probe reads) is checked first:
    the kernels do not check bounds. Offsets of another length than ``valid`` + 1 are an
    :class:`~prune_engine.errors.IndexCorruptError`.
    """
    from prune_engine.ngram import _kernels as K

    n = len(valid)
    if len(offsets) != n + 1:
        raise IndexCorruptError(f"n-gram index chunk of {n} entries has {len(offsets)} offsets, "
                                f"not {n + 1}")
    start = np.asarray(offsets[:-1], np.int64)
    length = np.diff(np.asarray(offsets, np.int64))
    # the entry's bytes lie inside the data buffer (as they do in any valid Arrow array; an
    # array built over raw buffers need not be one): only then is a byte of it read
    inside = (start >= 0) & (length >= 0) & (start <= len(data) - length)
    long_enough = valid & inside & (length >= _SHORTEST)
    words = np.zeros((5, n), np.uint64)  # (checksum, byte 0-7, 8-15, 16-19, trailer)
    K.checksums(K.ro(data, np.uint8), K.ro(offsets, np.int64), K.ro(long_enough, np.bool_),
                *words)
    sums, words = words[0], words[1:]
    byte = words.view(np.uint8).reshape(4, n, 8)  # byte i of entry c: byte[i // 8, c, i % 8]
    version, n_gram, sections = byte[0, :, 0], byte[0, :, 1], byte[0, :, 2]
    versioned = long_enough & (version == VERSION)
    ok = versioned & (1 <= sections) & (sections <= 2) & (1 <= n_gram) & (n_gram <= MAX_GRAM_SIZE)
    q = start + np.where(sections == 2, header_bytes(2), header_bytes(1))
    found = []
    # the slots of the two sections: bytes 4-11 and 12-19 (for one section: payload bytes)
    for k, fold, cnt, present in ((byte[0, :, 4], byte[0, :, 5], words[1] & np.uint64(0xFFFFFFFF),
                                   ok.copy()),
                                  (byte[1, :, 4], byte[1, :, 5], words[2], ok & (sections == 2))):
        cnt = cnt.astype(np.int64)
        good = (fold <= FOLD_LOWER) & ((k == KIND_EXACT) | ((k == KIND_SBBF) & (cnt > 0)))
        ok &= ~present | good
        found.append((present, k, fold, cnt, q.copy()))
        q += np.where(present, np.where(k == KIND_EXACT, 8, BLOCK_BYTES) * cnt, 0)
    ok &= ~found[1][0] | (found[0][2] != found[1][2])  # two sections of different folds
    ok &= (q + TRAILER_BYTES == start + length) & (sums == words[3])
    status = np.where(ok | ~valid, OK, np.where(long_enough & ~versioned, BAD_VERSION, CORRUPT))
    gram_size = np.where(ok, n_gram, 0).astype(np.int8)
    kind = np.full((2, n), -1, np.int8)
    count = np.zeros((2, n), np.int64)
    position = np.zeros((2, n), np.int64)
    for present, k, fold, cnt, pos in found:
        for f in (0, 1):  # a good entry has at most one section of each fold
            put = ok & present & (fold == f)
            kind[f] = np.where(put, k, kind[f])
            count[f] = np.where(put, cnt, count[f])
            position[f] = np.where(put, pos, position[f])
    return status.astype(np.int8), gram_size, kind, count, position
