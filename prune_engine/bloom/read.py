"""Read column chunks' Bloom filters from a Parquet file, at the offsets its footer gives.

Writers put a file's filters next to each other (parquet-java, Arrow and DuckDB after the last
row group, before the footer), so the places are sorted and read in a few ranged reads: places
closer than :data:`GAP` merge into one read. A place without a length (``bloom_filter_length``
is recent) is read as a guess of :data:`HEADER_GUESS` bytes, then the rest once the header
gives the size.

What the footer and the header say is checked before it moves a read: a filter is one of

- **impossible** (its chunk's statistics are then untrusted, :mod:`prune_engine.stats.parquet`):
  an offset or length that no file can have (negative, a length of 0), a filter that does not
  lie inside the file, or that the caller's ``allowed`` refuses (over a column chunk's pages),
  a footer length other than the header's;
- **unusable** (left out with the reason; its container keeps): a header that is not a
  split-block xxHash filter of a power-of-two number of blocks (another algorithm, a newer
  format), or a filter over the :data:`~.format.MAX_BITSET_BYTES` cap;
- read: its u32 words.

>>> header = bytes([0x15, 0x40, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0])
>>> data = b"PAR1" + header + bytes(32)          # a filter of 32 bytes at offset 4
>>> words, problems, impossible = read_filters(lambda n, at: data[at:at + n], len(data),
...                                            [(4, -1), (99, -1), (-1, -1)])
>>> len(words[0]), words[1], words[2], problems, impossible
(8, None, None, [], {1: 'at offset 99 lies past the end of the file (51 bytes)'})
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from prune_engine.bloom.format import MAX_BITSET_BYTES, HeaderError, parse_header

#: places closer than this many bytes are read in one request
GAP = 64 << 10
#: bytes read for a header whose filter length the footer does not give
HEADER_GUESS = 64
#: the most bytes a header takes (four small fields; writers use about 15)
MAX_HEADER = 256


def read_filters(read_at: Callable[[int, int], bytes], file_size: int,
                 places: list[tuple[int, int]],
                 allowed: Callable[[int, int], str | None] | None = None
                 ) -> tuple[list[np.ndarray | None], list[str], dict[int, str]]:
    """The u32 words of the filters at ``places`` (``(offset, length)``; ``(-1, -1)`` for no
    filter, a length of -1 when unknown), None where there is none that can be used; the
    reasons for those left out as unusable; and, by place, why a filter is impossible (see the
    module doc). ``read_at(nbytes, offset)`` reads the file; ``allowed(start, end)`` says why
    the bytes ``[start, end)`` cannot hold a filter (None: they can)."""
    out: list[np.ndarray | None] = [None] * len(places)
    problems: list[str] = []
    impossible: dict[int, str] = {}

    def misplaced(start: int, end: int) -> str | None:
        if end > file_size:
            return f"at offset {start} lies past the end of the file ({file_size} bytes)"
        why = allowed(start, end) if allowed is not None else None
        return None if why is None else f"at offset {start}: {why}"

    order = []
    for i, (o, n) in enumerate(places):
        if o == -1 and n == -1:
            continue  # no filter
        if o < 0 or n < -1 or n == 0:
            impossible[i] = f"has an impossible place (offset {o}, length {n})"
            continue
        why = misplaced(o, o + max(n, 1))
        if why is not None:
            impossible[i] = why
        elif n > MAX_BITSET_BYTES + MAX_HEADER:
            problems.append(f"the Bloom filter at offset {o} ({n} bytes) exceeds the cap of "
                            f"{MAX_BITSET_BYTES} bytes")
        else:
            order.append((o, n, i))
    order.sort()
    spans: list[list] = []  # [start, end, [(offset, length, i)]]
    for o, n, i in order:
        end = o + (n if n > 0 else HEADER_GUESS)
        if spans and o - spans[-1][1] <= GAP:
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2].append((o, n, i))
        else:
            spans.append([o, end, [(o, n, i)]])
    for start, end, members in spans:
        data = read_at(min(end, file_size) - start, start)
        for o, n, i in members:
            raw = data[o - start:o - start + n] if n > 0 else data[o - start:]
            try:
                size, header = parse_header(raw)
            except HeaderError as e:
                problems.append(f"the Bloom filter at offset {o} is not usable: {e}")
                continue
            if 0 < n != header + size:
                impossible[i] = (f"at offset {o} has {header + size} bytes, the footer says "
                                 f"{n}")
                continue
            why = misplaced(o, o + header + size)
            if why is not None:
                impossible[i] = why
                continue
            bits = raw[header:header + size]
            if len(bits) < size:
                bits = read_at(size, o + header)
            if len(bits) != size:  # the file changed while read
                impossible[i] = f"at offset {o} was cut short"
                continue
            out[i] = np.frombuffer(bits, "<u4").astype(np.uint32)
    return out, problems, impossible
