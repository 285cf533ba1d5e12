"""Each engine's keep-mask checked against pe.prune's and the rewrite's, before it is timed.

The benchmark times engines that should all answer the same question. Two references:

- the rewrite: the floor's mask (:func:`peers.floor_peer`, the min/max rewrite of
  DataFusion's ``PruningPredicate`` over the same statistics). It keeps every container that
  the statistics cannot prove empty, so any engine that prunes one of them loses rows;
- pe.prune's mask: what prune_engine keeps.

Per engine and (size, predicate) :func:`check` counts the containers where the engine is
*more conservative* than pe.prune (it keeps, pe.prune prunes: a precision gap, reported) and
*less conservative* (it prunes, pe.prune keeps). Less conservative is allowed only where the
rewrite prunes too (pe.prune keeps more than the rewrite there); where the rewrite keeps, the
engine is unsound and the run fails (:class:`UnsoundPeerError`). A peer that claims to compute
the rewrite exactly (``exact=True``) must match it container for container, or the timing
compares different work (:class:`PeerMismatchError`).

>>> import numpy as np
>>> rewrite = np.array([True, True, False, False])
>>> prune = np.array([True, True, False, False])
>>> check("pyiceberg", np.array([True, True, True, False]), prune, rewrite, exact=False)
PeerCheck(engine='pyiceberg', kept=3, more_conservative=1, less_conservative=0, differs_from_rewrite=1)
>>> try:
...     check("duckdb", np.array([True, False, False, False]), prune, rewrite, exact=False)
... except UnsoundPeerError as error:
...     print(error)
duckdb prunes 1 container(s) that the rewrite keeps (e.g. [1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class UnsoundPeerError(AssertionError):
    """An engine pruned a container whose statistics do not prove it empty."""


class PeerMismatchError(AssertionError):
    """An engine that should compute the rewrite exactly keeps more than it."""


@dataclass(frozen=True)
class PeerCheck:
    """Counts of one engine's mask against pe.prune's and the rewrite's (see the module doc)."""

    engine: str
    kept: int
    more_conservative: int
    less_conservative: int
    differs_from_rewrite: int


def check(engine: str, mask: np.ndarray, prune: np.ndarray, rewrite: np.ndarray, *,
          exact: bool) -> PeerCheck:
    """Compare ``mask`` (True = keep) with pe.prune's and the rewrite's masks; raise
    :class:`UnsoundPeerError` where ``engine`` prunes a container the rewrite keeps and, with
    ``exact``, :class:`PeerMismatchError` where it keeps one the rewrite prunes."""
    mask, prune, rewrite = (np.asarray(m, dtype=bool) for m in (mask, prune, rewrite))
    if not mask.shape == prune.shape == rewrite.shape:
        raise ValueError(f"{engine}: masks of different lengths {mask.shape}, {prune.shape}, "
                         f"{rewrite.shape}")
    unsound = np.flatnonzero(rewrite & ~mask)
    if unsound.size:
        raise UnsoundPeerError(f"{engine} prunes {unsound.size} container(s) that the rewrite "
                               f"keeps (e.g. {unsound[:5].tolist()})")
    extra = np.flatnonzero(mask & ~rewrite)
    if exact and extra.size:
        raise PeerMismatchError(f"{engine} keeps {extra.size} container(s) that the rewrite "
                                f"prunes (e.g. {extra[:5].tolist()}): it is not computing the "
                                "same rewrite")
    return PeerCheck(engine=engine, kept=int(mask.sum()),
                     more_conservative=int((mask & ~prune).sum()),
                     less_conservative=int((prune & ~mask).sum()),
                     differs_from_rewrite=int(extra.size))
