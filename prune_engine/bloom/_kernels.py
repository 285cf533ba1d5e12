"""numba kernel of the Bloom filter probe: may each filter hold one of the hashes?

The logic is in :mod:`.probe` (which containers, which hashes, the bits of each hash); this
kernel only runs the loop over containers and hashes that numpy cannot run without building
a containers x hashes matrix. Compiled on first use and cached (``cache=True``); it releases
the GIL. Its Python twin is the same source run by Python (``probe.py_func``), which the
tests hold it to.

numba does not check bounds, so the kernel checks every index it takes from its inputs (the
caller, :class:`.probe._Filters`, has validated the entries already; this is the last line):
a row outside ``out``, or a filter whose words do not lie inside ``words`` (a negative start,
a block count that is not a positive power of two, an end past the array), is answered
"maybe" (True: keep) and never read.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def probe(words, starts, blocks, rows, high, masks, out):
    """For each filter ``c`` in ``rows``: ``out[c]`` = some hash ``k`` has all eight bits
    ``masks[k]`` set in block ``(high[k] * blocks[c]) >> 32`` of the filter, whose u32 words
    start at ``words[starts[c]]``; True where the filter is not a valid place in ``words``.
    ``high`` holds 32-bit block selectors (``h >> 32``)."""
    size = len(words)
    filters = min(len(starts), len(blocks))
    whole = masks.shape[1] >= 8  # eight words of bits per hash, or no probe at all
    for j in range(rows.size):
        c = rows[j]
        if c < 0 or c >= len(out):
            continue
        if c >= filters or not whole:
            out[c] = True
            continue
        start = np.int64(starts[c])
        count = np.int64(blocks[c])
        # a positive power of two of whole blocks, inside words (no overflow: count < 2**31)
        if start < 0 or count <= 0 or count >= (1 << 31) or (count & (count - 1)) != 0 \
                or start > size or count * 8 > size - start:
            out[c] = True
            continue
        nb = np.uint64(count)
        hit = False
        for k in range(min(high.size, masks.shape[0])):
            selector = np.uint64(high[k]) & np.uint64(0xFFFFFFFF)
            b = start + np.int64((selector * nb) >> np.uint64(32)) * 8
            ok = True
            for i in range(8):
                if words[b + i] & masks[k, i] != masks[k, i]:
                    ok = False
                    break
            if ok:
                hit = True
                break
        out[c] = hit
