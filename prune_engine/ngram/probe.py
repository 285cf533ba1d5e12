"""Probe the n-gram index: may each container hold a value matching a LIKE, =/IN or regex?

Each function returns ``np.ndarray[bool]`` with one entry per container: ``True`` = the
container may hold a matching value (keep), ``False`` = its index proves that none matches.
A null entry keeps. The query's grams are derived and hashed once (:mod:`.pattern`), then one
numba call tests every container of a chunk (:func:`._kernels.probe_entries`), reading only
the filter blocks it needs.

Every entry is decoded and verified (structure and checksum) once per Arrow buffer, into a
:class:`~.directory.Directory` of its sections. A corrupt or unknown-version entry raises
:class:`~prune_engine.errors.IndexCorruptError` naming the container; with
``on_invalid="keep"`` it is kept and the number of such containers is reported as a warning.

>>> import numpy as np, pyarrow as pa
>>> from prune_engine.ngram.build import build_index_column
>>> index = build_index_column(pa.array(["GET /api/v1/users", "POST /login"]), np.array([0, 1, 2]),
...                            case_insensitive=True)
>>> like_may_match(index, "%/api/%").tolist()
[True, False]
>>> like_may_match(index, "post%", case_insensitive=True).tolist()
[False, True]
>>> regex_may_match(index, "v[0-9]/(users|groups)").tolist()
[True, False]
>>> equals_may_match(index, ["POST /login", "GET /"]).tolist()
[False, True]
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from prune_engine.errors import IndexCorruptError, NgramError
from prune_engine.expr import like
from prune_engine.ngram.directory import BAD_VERSION, OK, directory
from prune_engine.ngram.format import gram_bytes, xxh64
from prune_engine.ngram.pattern import dnf, equals_query, like_query, regex_query


def like_may_match(index: pa.Array, pattern: str, escape: str | None = None,
                   case_insensitive: bool = False, *, on_invalid: str = "raise",
                   containers: pa.Array | None = None) -> np.ndarray:
    """Containers that may hold a value ``LIKE pattern`` (``ILIKE`` with ``case_insensitive``).

    Only an explicit ``escape`` character escapes (DuckDB); ``%`` is any run, ``_`` one code
    point. ILIKE probes the folded gram set and keeps containers indexed without one.
    """
    if not isinstance(pattern, str):
        raise NgramError(f"LIKE pattern must be a string, not {type(pattern).__name__}")
    like.parse_like(pattern, escape)  # SQL rejects these patterns: so do we, before any probing
    return _may_match(index, lambda n: like_query(pattern, n, escape, case_insensitive),
                      bool(case_insensitive), on_invalid, containers)


def equals_may_match(index: pa.Array, values: Sequence[str], *, on_invalid: str = "raise",
                     containers: pa.Array | None = None) -> np.ndarray:
    """Containers that may hold any of ``values`` (``col = v`` or ``col IN (...)``).

    Null values match nothing; with no non-null value no container can match.
    """
    if isinstance(values, (str, bytes)) or not all(v is None or isinstance(v, str) for v in values):
        raise NgramError("values must be a sequence of strings (or None)")
    values = list(values)
    return _may_match(index, lambda n: equals_query(values, n), False, on_invalid, containers)


def regex_may_match(index: pa.Array, pattern: str, *, on_invalid: str = "raise",
                    containers: pa.Array | None = None) -> np.ndarray:
    """Containers that may hold a value in which RE2 ``pattern`` finds a match (a search)."""
    if not isinstance(pattern, str):
        raise NgramError(f"regex pattern must be a string, not {type(pattern).__name__}")
    return _may_match(index, lambda n: regex_query(pattern, n), False, on_invalid, containers)


def compile_query(query: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The arrays of a gram query for :func:`._kernels.probe_entries`: the query as an OR of
    ANDs (:func:`.pattern.dnf`), term ``t`` being the gram hashes ``term_hashes[
    term_offsets[t]:term_offsets[t + 1]]``. The few grams of a query are hashed here, in Python."""
    from prune_engine.ngram import _kernels as K

    terms = dnf(query)
    hashes = {g: xxh64(gram_bytes(g)) for term in terms for g in sorted(term)}
    term_hashes = [hashes[g] for term in terms for g in sorted(term)]
    term_offsets = np.cumsum([0] + [len(term) for term in terms], dtype=np.int64)
    return K.ro(np.array(term_hashes, np.uint64), np.uint64), K.ro(term_offsets, np.int64)


def probe_section(gram_size: np.ndarray, kind: np.ndarray, count: np.ndarray,
                  position: np.ndarray, data: np.ndarray, n: int, query: tuple) -> np.ndarray:
    """May-match mask of the entries of one directory section (:class:`Directory`) for one
    compiled query (:func:`compile_query`): the kernel, with the arrays it works in."""
    from prune_engine.ngram import _kernels as K

    term_hashes, term_offsets = query
    ncont = len(kind)
    longest = int(np.diff(term_offsets).max()) if len(term_offsets) > 1 else 0
    out = np.zeros(ncont, np.bool_)
    K.probe_entries(gram_size, kind, count, position, data, n, term_hashes, term_offsets, out,
                    np.zeros(ncont, np.int64), np.zeros(ncont, np.int64),
                    np.zeros(K.ORDER_SAMPLE, np.int64), np.zeros(longest, np.int64),
                    np.zeros(longest, np.int64))
    return out


def _may_match(index, make_query: Callable[[int], tuple | None], folded: bool,
               on_invalid: str, containers) -> np.ndarray:
    if on_invalid not in ("raise", "keep"):
        raise NgramError(f"on_invalid must be 'raise' or 'keep', not {on_invalid!r}")
    chunks = _chunks(index)
    total = sum(len(c) for c in chunks)
    if containers is not None and len(containers) != total:
        raise NgramError(f"containers has {len(containers)} ids for {total} index entries")
    keep = np.ones(total, np.bool_)
    status = np.zeros(total, np.int8)
    queries: dict[int, tuple] = {}
    start = 0
    section = 1 if folded else 0
    for chunk in chunks:
        d = directory(chunk)
        part = slice(start, start + len(chunk))
        start += len(chunk)
        status[part] = d.status
        for n in d.gram_sizes or (3,):
            if n not in queries:
                queries[n] = make_query(n)
            query = queries[n]
            if query is None:  # no value can match: only containers without an index keep
                keep[part] &= d.gram_size == 0
                continue
            keep[part] &= probe_section(d.gram_size, d.kind[section], d.count[section],
                                        d.position[section], d.data, n, compile_query(query))
    bad = np.nonzero(status != OK)[0]
    if len(bad):
        keep[bad] = True
        if on_invalid == "raise":
            i = int(bad[0])
            name = containers[i].as_py() if containers is not None else i
            what = "unknown version" if status[i] == BAD_VERSION else "corrupt bytes"
            raise IndexCorruptError(
                f"n-gram index of container {name!r} is invalid ({what}); "
                f"{len(bad)} container(s) affected; on_invalid='keep' keeps them", name)
        warnings.warn(f"kept {len(bad)} container(s) whose n-gram index is corrupt or of an "
                      f"unknown version", stacklevel=3)
    return keep


def _chunks(index) -> list[pa.Array]:
    if isinstance(index, pa.ChunkedArray):
        chunks = list(index.chunks)
    elif isinstance(index, pa.Array):
        chunks = [index]
    else:
        raise NgramError(f"index must be a pyarrow binary array, not {type(index).__name__}")
    for c in chunks:
        if not (pa.types.is_binary(c.type) or pa.types.is_large_binary(c.type)
                or pa.types.is_null(c.type)):
            raise NgramError(f"index must be a binary column (one entry per container), not {c.type}")
    return chunks
