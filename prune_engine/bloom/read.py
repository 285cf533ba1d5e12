"""Read column chunks' Bloom filters from a Parquet file, at the offsets its footer gives.

Writers put a file's filters next to each other (parquet-java and Arrow after the last row
group, before the footer), so the places are sorted and read in a few ranged reads: places
closer than :data:`GAP` merge into one read. A place without a length (``bloom_filter_length``
is recent) is read as a guess of :data:`HEADER_GUESS` bytes, then the rest once the header
gives the size. A filter that cannot be trusted (a header that is not a split-block xxHash
filter, a size past the end of the file) is left out with the reason, never guessed.

>>> header = bytes([0x15, 0x40, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0])
>>> data = b"PAR1" + header + bytes(32)          # a filter of 32 bytes at offset 4
>>> words, problems = read_filters(lambda n, at: data[at:at + n], len(data), [(4, -1), (99, -1)])
>>> len(words[0]), words[1], problems
(8, None, ['the Bloom filter offset 99 lies past the end of the file (51 bytes)'])
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from prune_engine.bloom.format import HeaderError, parse_header

#: places closer than this many bytes are read in one request
GAP = 64 << 10
#: bytes read for a header whose filter length the footer does not give
HEADER_GUESS = 64


def read_filters(read_at: Callable[[int, int], bytes], file_size: int,
                 places: list[tuple[int, int]]) -> tuple[list[np.ndarray | None], list[str]]:
    """The u32 words of the filters at ``places`` (``(offset, length)``, the length -1 when
    unknown), None where there is none that can be trusted; and the reasons for those left
    out. ``read_at(nbytes, offset)`` reads the file."""
    out: list[np.ndarray | None] = [None] * len(places)
    problems: list[str] = []
    order = sorted((o, n, i) for i, (o, n) in enumerate(places) if o >= 0)
    spans: list[list] = []  # [start, end, [(offset, length, i)]]
    for o, n, i in order:
        end = o + (n if n > 0 else HEADER_GUESS)
        if spans and o - spans[-1][1] <= GAP:
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2].append((o, n, i))
        else:
            spans.append([o, end, [(o, n, i)]])
    for start, end, members in spans:
        past = [o for o, _, _ in members if o >= file_size]
        problems.extend(f"the Bloom filter offset {o} lies past the end of the file "
                        f"({file_size} bytes)" for o in past)
        members = [m for m in members if m[0] < file_size]
        if not members:
            continue
        data = read_at(min(end, file_size) - start, start)
        for o, n, i in members:
            raw = data[o - start:o - start + n] if n > 0 else data[o - start:]
            try:
                size, header = parse_header(raw)
            except HeaderError as e:
                problems.append(f"the Bloom filter at offset {o} is not usable: {e}")
                continue
            if 0 < n != header + size:
                problems.append(f"the Bloom filter at offset {o} has {header + size} bytes, "
                                f"the footer says {n}")
                continue
            if o + header + size > file_size:
                problems.append(f"the Bloom filter at offset {o} ({header + size} bytes) runs "
                                f"past the end of the file ({file_size} bytes)")
                continue
            bits = raw[header:header + size]
            if len(bits) < size:
                bits = read_at(size, o + header)
            out[i] = np.frombuffer(bits, "<u4").astype(np.uint32)
    return out, problems
