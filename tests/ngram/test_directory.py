"""The directory decodes what the Python decoder decodes, and rejects every malformed entry.

Malformed entries are made by editing real ones field by field (version, gram size, number
of sections, kinds, folds, counts, length), with the checksum re-sealed or not, so that each
structural rule is reached, not only the checksum.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.errors import IndexCorruptError
from prune_engine.ngram.build import build_index
from prune_engine.ngram.directory import BAD_VERSION, CORRUPT, OK, directory
from prune_engine.ngram.format import (
    KIND_EXACT, KIND_SBBF, TRAILER_BYTES, VERSION, decode_entry, encode_entry, xxh64,
)
from tests.budget import examples

VALUES = ["checkout", "home", "ab", ""] + [f"/cart/{i}" for i in range(200)]
#: entries of one and two sections (plain, folded), exact and filters
ENTRIES = [blob for ci in (False, True) for mode in ("exact", "bloom")
           for blob in build_index(pa.array(VALUES), np.array([0, 1, 3, 4, 204]),
                                   case_insensitive=ci, mode=mode).to_pylist()]


def expected_status(blob: bytes) -> int:
    """The status the directory must give: the Python decoder's verdict."""
    try:
        decode_entry(blob)
    except IndexCorruptError as e:
        return BAD_VERSION if "unknown format version" in str(e) else CORRUPT
    return OK


def sealed(blob: bytes) -> bytes:
    """``blob`` with its trailer recomputed over the bytes before it."""
    body = blob[:-TRAILER_BYTES]
    return body + struct.pack("<Q", xxh64(body))


def assert_same_as_python(blobs: list) -> None:
    d = directory(pa.array(blobs, pa.binary()))
    for i, blob in enumerate(blobs):
        if blob is None:
            assert (d.status[i], d.gram_size[i]) == (OK, 0)
            assert d.kind[:, i].tolist() == [-1, -1], "a null entry has nothing to probe"
            continue
        status = expected_status(blob)
        assert d.status[i] == status, f"entry {i}: {blob[:24].hex()}"
        if status != OK:
            assert d.gram_size[i] == 0 and d.kind[:, i].tolist() == [-1, -1]
            continue
        entry = decode_entry(blob)
        assert d.gram_size[i] == entry.gram_size
        folds = {struct.unpack_from("<B", blob, 5 + 8 * s)[0]: sec
                 for s, sec in enumerate(entry.sections)}
        for fold in (0, 1):
            sec = folds.get(fold)
            if sec is None:
                assert d.kind[fold, i] == -1, "a missing section has nothing to probe"
                continue
            assert (d.kind[fold, i], d.count[fold, i]) == (sec.kind, sec.count)
            start = int(d.position[fold, i])
            payload = bytes(d.data[start:start + 8 * sec.count if sec.kind == KIND_EXACT
                                   else start + 32 * sec.count])
            if sec.kind == KIND_EXACT:
                assert struct.unpack(f"<{sec.count}Q", payload) == sec.payload
            else:
                assert payload == b"".join(struct.pack("<8I", *b) for b in sec.payload)


def test_good_entries_decode_as_the_python_decoder_does():
    assert_same_as_python(ENTRIES + [None])
    assert directory(pa.array(ENTRIES, pa.binary())).gram_sizes == (3,)


def test_hand_made_entries():
    exact = encode_entry(3, [(KIND_EXACT, 0, [5, 9])])
    two = encode_entry(2, [(KIND_EXACT, 1, [1]), (KIND_SBBF, 0, [tuple(range(8))])])
    assert_same_as_python([
        exact, two,
        encode_entry(3, [(KIND_EXACT, 0, [])]),                       # no gram: fine
        encode_entry(3, [(KIND_SBBF, 0, [])]),                        # a filter of no block
        encode_entry(3, [(KIND_EXACT, 0, [1]), (KIND_EXACT, 0, [2])]),  # the same fold twice
        encode_entry(9, [(KIND_EXACT, 0, [1])]),                      # gram size above 8
        encode_entry(0, [(KIND_EXACT, 0, [1])]),                      # gram size 0
        encode_entry(3, []),                                          # no section
        sealed(bytes([VERSION + 1]) + exact[1:]),                     # unknown version
        exact[:-1], exact + b"\0" * 8, sealed(exact + b"\0" * 8),     # trailing bytes
        b"", b"\x01" * 19, sealed(b"\x01\x03\x01\x00" + b"\0" * 16),  # too short, at the limit
    ])


@pytest.mark.parametrize("offset", [0, 3])
def test_a_sliced_chunk_decodes_its_own_entries(offset):
    index = pa.array(ENTRIES, pa.binary()).slice(offset)
    d = directory(index)
    assert d.status.tolist() == [OK] * len(index)
    assert d.count[0].tolist() == [decode_entry(b).sections[0].count for b in ENTRIES[offset:]]


FIELDS = st.sampled_from(["version", "gram_size", "sections", "kind", "fold", "count", "byte",
                          "truncate", "extend"])


@settings(max_examples=examples(300), deadline=None)
@given(which=st.integers(0, len(ENTRIES) - 1), field=FIELDS, slot=st.integers(0, 1),
       value=st.integers(0, 2**32 - 1), reseal=st.booleans())
def test_edited_entries_decode_as_the_python_decoder_does(which, field, slot, value, reseal):
    blob = bytearray(ENTRIES[which])
    at = 4 + 8 * slot
    if field == "version":
        blob[0] = value % 256
    elif field == "gram_size":
        blob[1] = value % 10
    elif field == "sections":
        blob[2] = value % 4
    elif field == "kind":
        blob[at] = value % 3
    elif field == "fold":
        blob[at + 1] = value % 3
    elif field == "count":
        blob[at + 4:at + 8] = struct.pack("<I", value if value % 2 else value % 64)
    elif field == "byte":
        blob[value % len(blob)] ^= 1 + value % 255
    elif field == "truncate":
        del blob[len(blob) - 1 - value % len(blob):]
    else:
        blob += bytes(8 * (1 + value % 3))
    blob = bytes(blob)
    if reseal and len(blob) >= TRAILER_BYTES:
        blob = sealed(blob)
    assert_same_as_python([ENTRIES[0], blob, None])
