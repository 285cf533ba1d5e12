"""Plain-Python reference of the n-gram index: what the numba kernels must compute, slowly.

Tests compare every kernel with its twin here (same gram hashes, same bytes, same masks), and
the exact-set mode of this module is the "Python set" baseline of the benchmark (the design of
the closed Paimon proposal: a set of grams per container, probed one container at a time).

Gram hashes are the format's (:func:`.format.xxh64` of :func:`.format.gram_bytes`).

>>> sorted(grams("ab", 3))
[(97, 98, 1114113), (1114112, 97, 98)]
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from prune_engine.ngram.fold import fold_cp
from prune_engine.ngram.format import (
    END_MARK, FOLD_LOWER, FOLD_NONE, KIND_EXACT, KIND_SBBF, SALTS, START_MARK, bits_per_gram,
    decode_entry, encode_entry, gram_bytes, xxh64,
)


def gram_hash(gram: Sequence[int]) -> int:
    """The hash of a gram (of code points), as the format defines it."""
    return xxh64(gram_bytes(gram))


def grams(value: str, n: int, fold: bool = False) -> set[tuple[int, ...]]:
    """The grams of one value: windows of ``n`` code points over ``START + value + END``."""
    cps = [START_MARK] + [fold_cp(ord(c)) if fold else ord(c) for c in value] + [END_MARK]
    return {tuple(cps[i:i + n]) for i in range(len(cps) - n + 1)}


def container_hashes(values: Iterable[str | None], n: int, fold: bool = False) -> set[int]:
    """Distinct gram hashes of one container's values (nulls have no grams)."""
    out: set[int] = set()
    for v in values:
        if v is not None:
            out |= {gram_hash(g) for g in grams(v, n, fold)}
    return out


def sbbf_blocks(hashes: Iterable[int], nblocks: int) -> list[list[int]]:
    """A Parquet split-block Bloom filter of ``nblocks`` blocks holding ``hashes``."""
    blocks = [[0] * 8 for _ in range(nblocks)]
    for h in hashes:
        block = blocks[((h >> 32) * nblocks) >> 32]
        for i, salt in enumerate(SALTS):
            block[i] |= 1 << ((((h & 0xFFFFFFFF) * salt) & 0xFFFFFFFF) >> 27)
    return blocks


def sbbf_contains(blocks: Sequence[Sequence[int]], h: int) -> bool:
    block = blocks[((h >> 32) * len(blocks)) >> 32]
    return all(block[i] >> ((((h & 0xFFFFFFFF) * salt) & 0xFFFFFFFF) >> 27) & 1
               for i, salt in enumerate(SALTS))


def build_entry(values: Sequence[str | None], n: int = 3, *, case_insensitive: bool = False,
                fpp: float = 0.01, exact_max: int = 512, mode: str = "auto") -> bytes:
    """One container's index entry, byte for byte what the build kernel writes."""
    sections = []
    for fold in ([FOLD_NONE, FOLD_LOWER] if case_insensitive else [FOLD_NONE]):
        hashes = container_hashes(values, n, fold == FOLD_LOWER)
        nblocks = max(1, math.ceil(len(hashes) * bits_per_gram(fpp) / 256.0))
        exact = mode == "exact" or (mode == "auto" and (
            len(hashes) <= exact_max or 8 * len(hashes) <= 32 * nblocks))
        if exact:
            sections.append((KIND_EXACT, fold, hashes))
        else:
            sections.append((KIND_SBBF, fold, sbbf_blocks(hashes, nblocks)))
    return encode_entry(n, sections)


def entry_has(blob: bytes, h: int, folded: bool = False) -> bool | None:
    """Is gram hash ``h`` (maybe) in the entry's plain or folded set? None: no such set."""
    for sec in decode_entry(blob).sections:
        if sec.fold == (FOLD_LOWER if folded else FOLD_NONE):
            if sec.kind == KIND_EXACT:
                return h in set(sec.payload)
            return sbbf_contains(sec.payload, h)
    return None


def evaluate(query, present) -> bool:
    """Evaluate a gram query tree (see :mod:`.pattern`) with ``present(gram) -> bool``."""
    op = query[0]
    if op == "true":
        return True
    if op == "gram":
        return present(query[1])
    if op == "and":
        return all(evaluate(q, present) for q in query[1])
    return any(evaluate(q, present) for q in query[1])


def may_match(blob: bytes | None, query, folded: bool = False) -> bool:
    """Reference probe of one entry: may the container hold a value matching ``query``?"""
    if blob is None:
        return True
    entry = decode_entry(blob)
    sec = [s for s in entry.sections if s.fold == (FOLD_LOWER if folded else FOLD_NONE)]
    if not sec:
        return True
    sec = sec[0]
    if sec.kind == KIND_EXACT:
        members = set(sec.payload)
        return evaluate(query, lambda g: gram_hash(g) in members)
    return evaluate(query, lambda g: sbbf_contains(sec.payload, gram_hash(g)))
