"""How a value becomes the bytes a Parquet Bloom filter hashed, and their hashes.

A writer hashes the *plain encoding* of each value in the column's *physical* type. The
statistics hold values in the column's Arrow type, which may differ from one file to the next
(int32 in old files, int64 in new; milliseconds here, microseconds there), so each file's
entry names its encoding with a token (:func:`token`), and a probe turns its values into that
encoding (:func:`plain_bytes`):

================  =======================  ==================================================
token             physical (logical)       a value of the statistics' type becomes
================  =======================  ==================================================
``int32/int64``   INT32 / INT64            the integer, 4 / 8 bytes little-endian, if it fits
``uint32/64``     INT32 / INT64 (UINT)     the integer as unsigned
``date32``        INT32 (DATE)             days since 1970-01-01
``ts:ms|us|ns``   INT64 (TIMESTAMP)        the integer in that unit, if exact
``dec32:S``       INT32 / INT64 (DECIMAL)  the unscaled integer at scale S, if exact
``dec64:S``
``decfixed:W:S``  FIXED_LEN_BYTE_ARRAY     the unscaled integer, W bytes big-endian
``float/double``  FLOAT / DOUBLE           IEEE bits; zero as both +0.0 and -0.0
``bytes``         BYTE_ARRAY               a string's UTF-8, a binary's bytes
``fixed:W``       FIXED_LEN_BYTE_ARRAY     the bytes, if W long
================  =======================  ==================================================

Every other column (INT96 and TIME, booleans, decimals in BYTE_ARRAY, whose width a writer
chooses, Float16, intervals) has no token, and a value that cannot be encoded exactly (NaN,
whose bits vary; a float64 that no float32 equals; a timestamp finer than the unit) gives
None: the probe keeps, never guesses.

Hashes are xxHash64 with seed 0, computed in numpy for all values of one length at once
(:func:`xxh64_rows`), equal to :func:`prune_engine.ngram.format.xxh64` byte for byte.

>>> [b.hex() for b in plain_bytes(-1, pa.int64(), "int32")]
['ffffffff']
>>> plain_bytes(1_500, pa.timestamp("us"), "ts:ms")   # 1.5 ms: no millisecond equals it
[]
>>> hex(int(hashes([b"abc"])[0]))
'0x44bc2cf5ad770999'
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa

from prune_engine._arrow_types import DAY_NS, UNIT_NS, is_string_type, unit_ns

_INT_FORMATS = {"int32": ("<i", -(2**31), 2**31 - 1), "int64": ("<q", -(2**63), 2**63 - 1),
                "uint32": ("<I", 0, 2**32 - 1), "uint64": ("<Q", 0, 2**64 - 1)}
_UNITS = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}


def token(physical: str, kind: str, via: pa.DataType | None, scale: int = 0,
          width: int | None = None) -> str | None:
    """The encoding token of a Parquet leaf (see the module doc), or None when its encoding
    cannot be known for sure. ``kind`` is :mod:`prune_engine.stats.parquet`'s reading of the
    leaf ("int", "uint", "dec_int", "dec_bytes", "float", "bytes", ...), ``via`` the Arrow type
    of its physical values there.

    >>> token("INT64", "int", pa.timestamp("us", "UTC")), token("FIXED_LEN_BYTE_ARRAY", "dec_bytes", None, 2, 16)
    ('ts:us', 'decfixed:16:2')
    """
    bits = {"INT32": "32", "INT64": "64"}.get(physical)
    if kind in ("int", "uint") and bits:
        if via is not None and pa.types.is_timestamp(via):
            return f"ts:{via.unit}" if physical == "INT64" and via.unit != "s" else None
        if via is not None and pa.types.is_date32(via):
            return "date32" if physical == "INT32" else None
        if via is None or pa.types.is_integer(via):
            return ("uint" if kind == "uint" else "int") + bits
        return None  # TIME, durations: no domain prunes them
    if kind == "dec_int" and bits:
        return f"dec{bits}:{scale}"
    if kind == "dec_bytes" and physical == "FIXED_LEN_BYTE_ARRAY" and width:
        return f"decfixed:{width}:{scale}"
    if kind == "float" and physical in ("FLOAT", "DOUBLE"):
        return physical.lower()
    if kind == "bytes":
        if physical == "BYTE_ARRAY":
            return "bytes"
        if physical == "FIXED_LEN_BYTE_ARRAY" and width:
            return f"fixed:{width}"
    return None


def _rescale(value: int, have: int, want: int) -> int | None:
    """``value * have / want`` when it is an integer, else None."""
    q, r = divmod(value * have, want)
    return None if r else q


def plain_bytes(value, stats_type: pa.DataType, tok: str) -> list[bytes] | None:
    """The plain encodings a row equal to ``value`` (a coerced literal of the statistics'
    ``stats_type``: an integer, the integer of a date or timestamp in its unit, a decimal's
    unscaled integer, a float, a string or bytes) may have been hashed as, for token ``tok``;
    [] when no value of that encoding can equal it, None when unknown (keep)."""
    kind, _, rest = tok.partition(":")
    if isinstance(value, bool):
        return None
    if kind in _INT_FORMATS:
        if not (isinstance(value, int) and pa.types.is_integer(stats_type)):
            return None
        fmt, lo, hi = _INT_FORMATS[kind]
        return [struct.pack(fmt, value)] if lo <= value <= hi else []
    if kind in ("date32", "ts"):
        have = unit_ns(stats_type)
        if not isinstance(value, int) or have is None:
            return None
        v = _rescale(value, have, DAY_NS if kind == "date32" else UNIT_NS[rest])
        if v is None:
            return []
        fmt, lo, hi = _INT_FORMATS["int32" if kind == "date32" else "int64"]
        return [struct.pack(fmt, v)] if lo <= v <= hi else []
    if kind in ("dec32", "dec64", "decfixed"):
        if not (isinstance(value, int) and pa.types.is_decimal(stats_type)):
            return None
        width, _, scale = rest.rpartition(":")
        v = _rescale(value, 10 ** int(scale), 10 ** stats_type.scale) \
            if int(scale) < stats_type.scale else value * 10 ** (int(scale) - stats_type.scale)
        if v is None:
            return []
        if kind == "decfixed":
            try:
                return [v.to_bytes(int(width), "big", signed=True)]
            except OverflowError:
                return []
        fmt, lo, hi = _INT_FORMATS["int32" if kind == "dec32" else "int64"]
        return [struct.pack(fmt, v)] if lo <= v <= hi else []
    if kind in ("float", "double"):
        if not (isinstance(value, (int, float)) and pa.types.is_floating(stats_type)):
            return None
        x = float(value)
        if math.isnan(x):
            return None  # NaN has many bit patterns
        fmt = "<f" if kind == "float" else "<d"
        with np.errstate(over="ignore"):
            if kind == "float" and float(np.float32(x)) != x:  # compared as doubles
                return None
        return [struct.pack(fmt, x), struct.pack(fmt, -x)] if x == 0 else [struct.pack(fmt, x)]
    if kind in ("bytes", "fixed"):
        if isinstance(value, str) and is_string_type(stats_type):
            raw = value.encode("utf-8", "surrogatepass")
        elif isinstance(value, (bytes, bytearray, memoryview)) and not is_string_type(stats_type):
            raw = bytes(value)
        else:
            return None
        if kind == "fixed" and len(raw) != int(rest):
            return []
        return [raw]
    return None


def value_hashes(values: list, stats_type: pa.DataType, tok: str) -> np.ndarray | None:
    """The hashes of every encoding of ``values`` (:func:`plain_bytes`, then :func:`hashes`);
    None when one value's encoding is unknown. Integers are encoded in one numpy pass.

    >>> value_hashes([1, 2**40], pa.int64(), "int32").size   # 2**40 is no int32
    1
    """
    kind = tok.partition(":")[0]
    if kind in _INT_FORMATS and pa.types.is_integer(stats_type) \
            and all(type(v) is int for v in values):
        fmt, lo, hi = _INT_FORMATS[kind]
        fitting = [v for v in values if lo <= v <= hi]
        width = struct.calcsize(fmt)
        rows = np.array(fitting, f"<{'u' if kind[0] == 'u' else 'i'}{width}")
        return xxh64_rows(rows.view(np.uint8).reshape(len(fitting), width))
    encoded = [plain_bytes(v, stats_type, tok) for v in values]
    if any(e is None for e in encoded):
        return None
    return hashes([b for e in encoded for b in e])


# ------------------------------------------------------------------------------ xxHash64

_M = np.uint64
_P1, _P2, _P3, _P4, _P5 = (_M(0x9E3779B185EBCA87), _M(0xC2B2AE3D27D4EB4F),
                           _M(0x165667B19E3779F9), _M(0x85EBCA77C2B2AE63),
                           _M(0x27D4EB2F165667C5))


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _M(r)) | (x >> _M(64 - r))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl(acc + lane * _P2, 31) * _P1


def xxh64_rows(rows: np.ndarray) -> np.ndarray:
    """xxHash64 (seed 0) of each row of a uint8 matrix (values of one length), as uint64."""
    m, n = rows.shape
    rows = np.ascontiguousarray(rows, np.uint8)

    def word(p: int, size: int) -> np.ndarray:
        out = np.zeros(m, np.uint64)
        for i in range(size):
            out |= rows[:, p + i].astype(np.uint64) << _M(8 * i)
        return out

    with np.errstate(over="ignore"):
        p = 0
        if n >= 32:
            v = [np.full(m, _P1 + _P2), np.full(m, _P2), np.zeros(m, np.uint64),
                 np.full(m, _M(0) - _P1)]
            while p + 32 <= n:
                v = [_round(v[i], word(p + 8 * i, 8)) for i in range(4)]
                p += 32
            h = _rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)
            for lane in v:
                h = (h ^ _round(np.zeros(m, np.uint64), lane)) * _P1 + _P4
        else:
            h = np.full(m, _P5)
        h = h + _M(n)
        while p + 8 <= n:
            h = _rotl(h ^ _round(np.zeros(m, np.uint64), word(p, 8)), 27) * _P1 + _P4
            p += 8
        if p + 4 <= n:
            h = _rotl(h ^ (word(p, 4) * _P1), 23) * _P2 + _P3
            p += 4
        while p < n:
            h = _rotl(h ^ (rows[:, p].astype(np.uint64) * _P5), 11) * _P1
            p += 1
        h ^= h >> _M(33)
        h *= _P2
        h ^= h >> _M(29)
        h *= _P3
        return h ^ (h >> _M(32))


def hashes(values: list[bytes]) -> np.ndarray:
    """xxHash64 of each byte string, as uint64 (values grouped by length, one numpy pass per
    length)."""
    out = np.zeros(len(values), np.uint64)
    by_length: dict[int, list[int]] = {}
    for i, v in enumerate(values):
        by_length.setdefault(len(v), []).append(i)
    for length, idx in by_length.items():
        rows = np.frombuffer(b"".join(values[i] for i in idx), np.uint8).reshape(len(idx), length)
        out[idx] = xxh64_rows(rows)
    return out
