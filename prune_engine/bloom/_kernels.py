"""numba kernel of the Bloom filter probe: may each filter hold one of the hashes?

The logic is in :mod:`.probe` (which containers, which hashes, the bits of each hash); this
kernel only runs the loop over containers and hashes that numpy cannot run without building
a containers x hashes matrix. Compiled on first use and cached (``cache=True``); it releases
the GIL.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def probe(words, starts, blocks, rows, high, masks, out):
    """For each filter ``c`` in ``rows``: ``out[c]`` = some hash ``k`` has all eight bits
    ``masks[k]`` set in block ``(high[k] * blocks[c]) >> 32`` of the filter, whose u32 words
    start at ``words[starts[c]]``."""
    for j in range(rows.size):
        c = rows[j]
        nb = np.uint64(blocks[c])
        start = starts[c]
        hit = False
        for k in range(high.size):
            b = start + np.int64((high[k] * nb) >> np.uint64(32)) * 8
            ok = True
            for i in range(8):
                if words[b + i] & masks[k, i] != masks[k, i]:
                    ok = False
                    break
            if ok:
                hit = True
                break
        out[c] = hit
