"""Dictionary pages as exact value sets: what a column chunk holds, read at planning time.

A chunk whose data pages are all dictionary-encoded (the footer's ``encoding_stats`` say so:
every data page ``PLAIN_DICTIONARY`` or ``RLE_DICTIONARY``) holds only values of its
dictionary page, which precedes the data pages (``dictionary_page_offset`` up to
``data_page_offset``). Reading that one page gives the chunk's values as a set, so ``x = v``,
``IN``, ``!=`` and ``NOT IN`` can prune where min/max cannot (``x != 'a'`` prunes a chunk
whose only value is ``'a'``). Values are converted to the column's Arrow type as the bounds are
(:func:`prune_engine.stats.parquet.convert_values`).

Unknown (no set, the container keeps) when: the footer has no encoding statistics, or a data
page is not dictionary-encoded; the page is larger than the cap (``max_bytes``, compressed or
not); its header is not a dictionary page of PLAIN values; its codec is not one pyarrow
decompresses (UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD, LZ4_RAW); its values do not fill its
bytes exactly (a count too small would give too small a set); a value does not convert
exactly (a NaN, which compares unlike itself in sets, makes the whole set unknown); booleans
(bit-packed) and INT96.

Impossible (the chunk's statistics are then all unknown, with a warning for the file: see
:mod:`prune_engine.stats.parquet`): a page whose header carries a CRC-32 (parquet-java writes
one by default, Arrow on request: of the page's compressed bytes) that its bytes do not match,
and a page the footer places outside its own chunk's pages.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> from prune_engine.stats.parquet import read_footer
>>> buf = io.BytesIO()
>>> pq.write_table(pa.table({"c": ["b", "a", "b", None]}), buf)
>>> f = read_footer(pa.BufferReader(buf.getvalue()), "mem", dictionaries=True)
>>> f.dictionaries["c"][0].to_pylist()
['b', 'a']
"""

from __future__ import annotations

import struct
import zlib
from typing import Callable

import numpy as np
import pyarrow as pa

from prune_engine._compact import ThriftError, read_struct

#: the default cap of a dictionary page's bytes (compressed and uncompressed)
MAX_BYTES = 8 << 10
#: room for a page header next to its capped body
HEADER_BYTES = 256
#: Parquet codecs pyarrow decompresses, by their Thrift number
CODECS = {0: None, 1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}
DICTIONARY_PAGE = 2
PLAIN, PLAIN_DICTIONARY = 0, 2
#: bytes per value of the fixed-width physical types
WIDTHS = {"INT32": 4, "INT64": 8, "FLOAT": 4, "DOUBLE": 8}


class PageError(ValueError):
    """A dictionary page that cannot be read as one."""


class PageCorruptError(PageError):
    """A dictionary page that cannot be what the file says: its checksum fails."""


def page_values(page: bytes, codec: int, max_bytes: int) -> tuple[int, bytes]:
    """``(number of values, their PLAIN bytes)`` of the dictionary page at the start of
    ``page`` (its header, then its body); :class:`PageError` if it is none."""
    try:
        header, at = read_struct(page, 0)
    except ThriftError as e:
        raise PageError(f"bad page header: {e}") from None
    dictionary = header.get(7)
    size, compressed = header.get(2), header.get(3)
    if header.get(1) != DICTIONARY_PAGE or not isinstance(dictionary, dict):
        raise PageError("not a dictionary page")
    if dictionary.get(2, PLAIN) not in (PLAIN, PLAIN_DICTIONARY):
        raise PageError(f"dictionary encoding {dictionary.get(2)} is not PLAIN")
    count = dictionary.get(1)
    if not all(isinstance(v, int) and v >= 0 for v in (size, compressed, count)):
        raise PageError("the page header lacks its sizes")
    if size > max_bytes:
        raise PageError(f"{size} bytes exceed the cap of {max_bytes}")
    body = page[at:at + compressed]
    if len(body) != compressed:
        raise PageError("the page is cut short")
    crc = header.get(4)
    if isinstance(crc, int) and zlib.crc32(body) != crc & 0xFFFFFFFF:
        raise PageCorruptError(f"its CRC-32 {crc & 0xFFFFFFFF:#010x} does not match its bytes' "
                               f"{zlib.crc32(body):#010x}")
    if codec not in CODECS:
        raise PageError(f"codec {codec} is not supported")
    if CODECS[codec] is not None:
        try:
            body = pa.Codec(CODECS[codec]).decompress(body, decompressed_size=size).to_pybytes()
        except (pa.ArrowException, ValueError) as e:
            raise PageError(f"cannot decompress: {e}") from None
    if len(body) != size:
        raise PageError("the page decompresses to another size than it says")
    return count, body


def split_plain(body: bytes, count: int, physical: str, width: int | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(data, start, length)`` of each of ``count`` PLAIN values of ``physical`` type."""
    data = np.frombuffer(body, np.uint8)
    fixed = WIDTHS.get(physical) or (width if physical == "FIXED_LEN_BYTE_ARRAY" else None)
    if fixed:
        if count * fixed != len(body):
            raise PageError(f"{len(body)} bytes for {count} values of {fixed} bytes")
        return data, np.arange(count, dtype=np.int64) * fixed, np.full(count, fixed, np.int64)
    if physical != "BYTE_ARRAY":
        raise PageError(f"{physical} values are not read")
    start, length = np.zeros(count, np.int64), np.zeros(count, np.int64)
    at = 0
    for i in range(count):
        if at + 4 > len(body):
            raise PageError("fewer bytes than values")
        n = struct.unpack_from("<I", body, at)[0]
        start[i], length[i] = at + 4, n
        at += 4 + n
    if at != len(body):
        raise PageError(f"{len(body)} bytes for {count} values, which take {at}")
    return data, start, length


def read_dictionaries(read_at: Callable[[int, int], bytes], places: list[tuple[int, int, int]],
                      max_bytes: int) -> tuple[list[tuple[int, bytes] | None], list[str],
                                                dict[int, str]]:
    """The decompressed PLAIN bodies (with their value counts) of the dictionary pages at
    ``places`` (``(offset, length, codec)``, offset -1 = none); None where not readable; the
    reasons of those that failed (not those without a page or over the cap); and, by place,
    why a page is impossible (its checksum fails: the chunk is then untrusted)."""
    out: list = [None] * len(places)
    problems: list[str] = []
    impossible: dict[int, str] = {}
    for i, (offset, length, codec) in enumerate(places):
        if offset < 0 or length <= 0 or length > max_bytes + HEADER_BYTES:
            continue  # no page, or one larger than the cap: not read
        try:
            out[i] = page_values(read_at(length, offset), codec, max_bytes)
        except PageCorruptError as e:
            impossible[i] = f"at offset {offset} is corrupt: {e}"
        except PageError as e:
            if "exceed the cap" not in str(e):
                problems.append(f"the dictionary page at offset {offset} is not usable: {e}")
    return out, problems, impossible
