"""The lake of ``bench/test_bench_bloom.py``: Parquet files whose keys are unsorted, so that
min/max statistics prune nothing and only the Bloom filters can.

Every file holds ``k`` (int64, even numbers drawn uniformly from [0, 2**62)) and ``s`` (16
random characters of ``[0-9a-z]``), 1,000 to 5,000 rows, one row group, and a split-block Bloom
filter per column sized by pyarrow for the file's row count at :data:`FPP`. The draws are
seeded, so that a lake is the same on every run. A key absent from every file is an odd ``k``
or an ``s`` holding an upper-case letter: both lie within every file's min/max range.

>>> import tempfile
>>> lake = write_lake(tempfile.mkdtemp(), 3)
>>> len(lake.files), lake.k_samples.shape, lake.s_samples.shape
(3, (3, 8), (3, 8))
>>> bool((lake.k_samples % 2 == 0).all()), bool((absent_k(4, 0) % 2 == 1).all())
(True, True)
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: the false-positive rate the filters are sized for
FPP = 0.01
MIN_ROWS, MAX_ROWS = 1_000, 5_000
#: keys of each file kept for the lookups (the first ones of the file)
SAMPLES = 8
_ALPHABET = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", np.uint8)


@dataclass(frozen=True)
class Lake:
    """A written lake: its directory, its files in order, ``SAMPLES`` keys of each file
    (``k_samples[i]``, ``s_samples[i]``: present in file ``i``) and its row count."""

    root: str
    files: list[str]
    k_samples: np.ndarray
    s_samples: np.ndarray
    rows: int


def _strings(rng: np.random.Generator, n: int) -> np.ndarray:
    return _ALPHABET[rng.integers(0, len(_ALPHABET), (n, 16))].view("S16").ravel().astype(str)


def write_lake(root: str, num_files: int, seed: int = 0) -> Lake:
    """Write ``num_files`` files ``f00000.parquet``... into ``root`` (which must exist)."""
    rng = np.random.default_rng(seed)
    files, ks, ss, rows = [], [], [], 0
    for i in range(num_files):
        n = int(rng.integers(MIN_ROWS, MAX_ROWS + 1))
        k = rng.integers(0, 2**61, n, dtype=np.int64) * 2
        s = _strings(rng, n)
        path = os.path.join(root, f"f{i:05d}.parquet")
        pq.write_table(pa.table({"k": k, "s": s}), path,
                       bloom_filter_options={"k": {"ndv": n, "fpp": FPP},
                                             "s": {"ndv": n, "fpp": FPP}})
        files.append(path)
        ks.append(k[:SAMPLES])
        ss.append(s[:SAMPLES])
        rows += n
    return Lake(root, files, np.array(ks), np.array(ss), rows)


def absent_k(n: int, seed: int = 1) -> np.ndarray:
    """``n`` int64 keys no file holds (odd), spread over the files' min/max range."""
    return np.random.default_rng(seed).integers(0, 2**61, n, dtype=np.int64) * 2 + 1


def absent_s(n: int, seed: int = 1) -> np.ndarray:
    """``n`` strings no file holds (an upper-case letter last), within the min/max range."""
    s = _strings(np.random.default_rng(seed), n)
    return np.array([v[:15] + "Q" for v in s])


def footer_bytes(paths: list[str]) -> int:
    """Sum over the files of their footer length (the little-endian u32 before the closing
    ``PAR1``) plus those 8 bytes: what a footer reader must read at least."""
    total = 0
    for p in paths:
        with open(p, "rb") as fh:
            fh.seek(-8, os.SEEK_END)
            tail = fh.read(8)
        assert tail[4:] == b"PAR1", p
        total += struct.unpack("<I", tail[:4])[0] + 8
    return total


def in_bound(files: int, present_files: int, values: int, fpp: float = FPP) -> float:
    """The files an ``IN`` of ``values`` keys (present in ``present_files`` files) should keep
    at most, on average: the files holding one, and each other file with the probability that
    one of the ``values`` probes is a false positive, ``1 - (1 - fpp) ** values``."""
    return present_files + (files - present_files) * (1 - (1 - fpp) ** values)
