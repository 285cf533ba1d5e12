"""The numba kernel behind :mod:`prune_engine.stats.avro`: one pass over Avro records.

A schema arrives flattened into arrays (one entry per node: its kind, an argument, where its
children start in ``children``, and the output slot of a node whose values are wanted, else
-1). The kernel walks each record with an explicit stack (no recursion) and appends one
*tape* entry per value decoded at a wanted node: the slot, the record number, an integer
(an int, long, boolean, enum symbol, or a byte length) and a position in ``data`` (where the
bytes of a string, bytes, fixed, float or double start). A null reached through a union is an
entry with ``pos == -1`` in the union's slot, so the entries of a map's keys and values pair up
one to one. Unwanted values are skipped at the cost of reading their lengths.

Every size, length, count and varint read from ``data`` (and every ``fixed`` size from the
schema) is checked before it moves the read position, in a form that cannot overflow
(``size > end - p``, never ``p + size > end``): malformed data returns a negative status (see
``ERRORS`` in ``avro``) instead of reading outside the buffer. numba checks no index, so this
is the kernel's whole memory safety. The Python twin of each kernel is its own source run
uncompiled (``decode.py_func``), where numpy does check every index; the tests run hostile
inputs through both and require the same answer.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# node kinds (avro.KINDS maps the schema's type names to these)
NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, FIXED, RECORD, ENUM, ARRAY, UNION = \
    range(13)

# statuses
OK, TRUNCATED, BAD_VARINT, BAD_LENGTH, BAD_UNION, TOO_DEEP, TRAILING, BAD_BOOLEAN = \
    0, -1, -2, -3, -4, -5, -6, -7


@njit(cache=True, nogil=True)
def _long(data, p, end):
    """A zigzag varint at ``p``: (value, next position); position -1 past the end, -2 when
    longer than 10 bytes or wider than 64 bits (a 10th byte above 1)."""
    shift = 0
    acc = np.uint64(0)
    while True:
        if p < 0 or p >= end:
            return 0, -1
        if shift > 63:
            return 0, -2
        b = np.uint64(data[p])
        if shift == 63 and b > np.uint64(1):
            return 0, -2
        p += 1
        acc |= (b & np.uint64(0x7F)) << np.uint64(shift)
        if b < np.uint64(0x80):
            break
        shift += 7
    value = np.int64(acc >> np.uint64(1)) ^ -np.int64(acc & np.uint64(1))
    return value, p


@njit(cache=True, nogil=True)
def decode(data, count, kinds, args, first, children, slots, root, depth,
           out_slot, out_rec, out_int, out_pos):
    """Decode ``count`` records of node ``root`` from ``data``; fill the tape arrays.

    Returns (status, entries written). ``depth`` bounds the stack (the schema's depth plus
    one); the tape arrays hold one entry per byte of ``data`` at least, which suffices: every
    entry but a zero-field record's consumes a byte or more.
    """
    end = data.shape[0]
    stack_node = np.empty(depth, np.int64)
    stack_state = np.empty(depth, np.int64)
    p = 0
    n = 0
    for r in range(count):
        sp = 1
        stack_node[0] = root
        stack_state[0] = 0
        while sp > 0:
            node = stack_node[sp - 1]
            kind = kinds[node]
            slot = slots[node]
            if kind == RECORD:
                field = stack_state[sp - 1]
                if field < args[node]:
                    stack_state[sp - 1] = field + 1
                    if sp >= depth:
                        return TOO_DEEP, n
                    stack_node[sp] = children[first[node] + field]
                    stack_state[sp] = 0
                    sp += 1
                else:
                    sp -= 1
                continue
            if kind == ARRAY:
                left = stack_state[sp - 1]
                if left == 0:  # a new block: its item count (negative: a byte size follows)
                    left, p = _long(data, p, end)
                    if p < 0:
                        return TRUNCATED if p == -1 else BAD_VARINT, n
                    if left == 0:
                        sp -= 1
                        continue
                    if left < 0:  # (checked before negating: -(-2**63) overflows)
                        if left < -(end - p + 1):
                            return BAD_LENGTH, n
                        left = -left
                        size, p = _long(data, p, end)
                        if p < 0:
                            return TRUNCATED if p == -1 else BAD_VARINT, n
                        if size < 0 or size > end - p:
                            return BAD_LENGTH, n
                    if left > end - p + 1:
                        return BAD_LENGTH, n
                    stack_state[sp - 1] = left
                    continue
                stack_state[sp - 1] = left - 1
                if sp >= depth:
                    return TOO_DEEP, n
                stack_node[sp] = children[first[node]]
                stack_state[sp] = 0
                sp += 1
                continue
            if kind == UNION:
                branch, p = _long(data, p, end)
                if p < 0:
                    return TRUNCATED if p == -1 else BAD_VARINT, n
                if branch < 0 or branch >= args[node]:
                    return BAD_UNION, n
                stack_node[sp - 1] = children[first[node] + branch]
                stack_state[sp - 1] = 0
                continue
            # a primitive: decode it, emit it when wanted, pop it
            value = 0
            start = p
            if kind == NULL:
                start = -1
            elif kind == BOOLEAN:
                if p >= end:
                    return TRUNCATED, n
                value = data[p]
                if value > 1:  # (Avro writes 0 or 1; readers differ on other bytes)
                    return BAD_BOOLEAN, n
                p += 1
            elif kind == INT or kind == LONG or kind == ENUM:
                value, p = _long(data, p, end)
                if p < 0:
                    return TRUNCATED if p == -1 else BAD_VARINT, n
                if kind == ENUM and (value < 0 or value >= args[node]):
                    return BAD_UNION, n
            elif kind == FLOAT or kind == DOUBLE:
                size = 4 if kind == FLOAT else 8
                if size > end - p:
                    return TRUNCATED, n
                p += size
            elif kind == BYTES or kind == STRING:
                value, p = _long(data, p, end)
                if p < 0:
                    return TRUNCATED if p == -1 else BAD_VARINT, n
                if value < 0:
                    return BAD_LENGTH, n
                if value > end - p:
                    return TRUNCATED, n
                start = p
                p += value
            elif kind == FIXED:
                value = args[node]
                if value < 0:
                    return BAD_LENGTH, n
                if value > end - p:
                    return TRUNCATED, n
                p += value
            if slot >= 0:
                if n >= out_slot.shape[0]:
                    return BAD_LENGTH, n
                out_slot[n] = slot
                out_rec[n] = r
                out_int[n] = value
                out_pos[n] = start
                n += 1
            sp -= 1
    if p != end:
        return TRAILING, n
    return OK, n


@njit(cache=True, nogil=True)
def blocks(raw, p, sync):
    """The data blocks of a container file from byte ``p`` (just after the header's sync
    marker): per block its record count, first byte and size. Status TRUNCATED when a block
    runs past the end or is not followed by ``sync``, BAD_VARINT / BAD_LENGTH as ``decode``."""
    end = raw.shape[0]
    cap = max(end - p, 0) // (2 + sync.shape[0]) + 1
    counts = np.empty(cap, np.int64)
    starts = np.empty(cap, np.int64)
    sizes = np.empty(cap, np.int64)
    n = 0
    while p < end:
        count, p = _long(raw, p, end)
        if p < 0:
            return TRUNCATED if p == -1 else BAD_VARINT, counts[:n], starts[:n], sizes[:n], 0
        size, p = _long(raw, p, end)
        if p < 0:
            return TRUNCATED if p == -1 else BAD_VARINT, counts[:n], starts[:n], sizes[:n], 0
        if count < 0 or size < 0:
            return BAD_LENGTH, counts[:n], starts[:n], sizes[:n], p
        if size > end - p - sync.shape[0]:  # (not p + size > ...: that can overflow)
            return TRUNCATED, counts[:n], starts[:n], sizes[:n], p
        for i in range(sync.shape[0]):
            if raw[p + size + i] != sync[i]:
                return TRUNCATED, counts[:n], starts[:n], sizes[:n], p
        counts[n] = count
        starts[n] = p
        sizes[n] = size
        n += 1
        p += size + sync.shape[0]
    return OK, counts[:n], starts[:n], sizes[:n], p
