"""numba kernels: a Parquet page index (ColumnIndex + OffsetIndex, Thrift compact) decoded into
flat integer arrays.

The page index lies after the row groups; :func:`decode_page_index` takes the bytes read from
there (one buffer, followed by one zero byte, as :mod:`._thrift` takes a footer) and the place
of each column chunk's two structs in it, and moves bytes only: it says nothing about whether
a page's statistics are true (that is :mod:`prune_engine.stats.page_index`'s).

What is read (``parquet.thrift`` field ids): OffsetIndex 1 page_locations
(PageLocation 1 offset, 2 compressed_page_size, 3 first_row_index, all required); ColumnIndex
1 null_pages, 2 min_values, 3 max_values, 4 boundary_order, 5 null_counts (optional). Every
other field (level histograms, unencoded sizes, fields of newer versions) is skipped by
:func:`skip`.

numba checks no bounds, so every number read from the bytes is checked before it moves a
position or indexes an array: a struct must end inside its own place; a list's size against
the bytes left in that place (a PageLocation takes at least 7 bytes, so a chunk has at most
``length // 7`` pages, which sizes the output), binary lengths likewise; every read past the
end returns the padding zero byte. A chunk whose structs do not decode, or whose lists
disagree in length, is *malformed* (status 2), never an exception: the caller reads it whole.
The functions of :mod:`._thrift` that read bytes are reused; the Python twins
(:mod:`prune_engine._warm`) take their twins.
"""

from __future__ import annotations

from numba import njit

if __name__.endswith("[python]"):  # this module's Python twins: _thrift's twins too
    from prune_engine._warm import twins_of

    _t = twins_of("prune_engine.stats._thrift", (
        "as_input", "flattened", "ints", "int_array", "byte", "zigzag", "length", "field",
        "list_header"))
    as_input, flattened, ints, int_array = _t.as_input, _t.flattened, _t.ints, _t.int_array
    byte, zigzag, length, field, list_header = (_t.byte, _t.zigzag, _t.length, _t.field,
                                                 _t.list_header)
else:
    from prune_engine.stats._thrift import (as_input, byte, field, flattened, int_array, ints,
                                            length, list_header, zigzag)

from prune_engine.stats._thrift import (  # noqa: E402 - plain constants
    MAX_DEPTH, T_BINARY, T_BYTE, T_DOUBLE, T_FALSE, T_I16, T_I32, T_I64, T_LIST, T_MAP,
    T_SET, T_STOP, T_STRUCT, T_TRUE)

#: slots of a place row (positions in the buffer; -1 = the chunk has no such struct)
(I_COLUMN_INDEX_POS, I_COLUMN_INDEX_LEN, I_OFFSET_INDEX_POS, I_OFFSET_INDEX_LEN) = range(4)
NUM_PLACE = 4
#: slots of a chunk row: status, first page row, pages, boundary order (-1 = not said)
(K_STATUS, K_FIRST, K_PAGES, K_BOUNDARY) = range(4)
NUM_CHUNK_OUT = 4
#: chunk statuses
NO_INDEX, DECODED, MALFORMED = 0, 1, 2
#: slots of a page row: null page (1 / 0), bound places in the buffer (length -1 = none),
#: null count (-1 = not given), offset and compressed size in the file, first row index
(P_NULL_PAGE, P_MIN_START, P_MIN_LEN, P_MAX_START, P_MAX_LEN, P_NULLS, P_OFFSET, P_SIZE,
 P_FIRST_ROW) = range(9)
NUM_PAGE = 9
#: the fewest bytes a PageLocation takes (three field headers, three varints, a stop)
MIN_LOCATION = 7


@njit(cache=True, nogil=True)
def skip(buf, pos, t, in_list, stack):
    """The position after one value of type ``t`` (``in_list``: a list element, where a
    boolean takes a byte); ``len(buf)`` when it runs past the end or is malformed."""
    end = len(buf)
    depth = 0
    while True:
        if t == T_TRUE or t == T_FALSE:
            if in_list:
                pos += 1
        elif t == T_BYTE:
            pos += 1
        elif t == T_I16 or t == T_I32 or t == T_I64:
            _, pos = zigzag(buf, pos)
        elif t == T_DOUBLE:
            pos += 8
        elif t == T_BINARY:
            size, pos = length(buf, pos)
            pos += size
        elif t == T_STRUCT or t == T_LIST or t == T_SET or t == T_MAP:
            if depth >= MAX_DEPTH:
                return end
            at = 3 * depth
            if t == T_STRUCT:
                stack[at], stack[at + 1], stack[at + 2] = 0, 0, 0
            elif t == T_MAP:
                size, pos = length(buf, pos)
                stack[at], stack[at + 1] = 2, 2 * size
                stack[at + 2] = byte(buf, pos) if size > 0 else 0
                pos += 1 if size > 0 else 0
            else:
                size, types, pos = list_header(buf, pos)
                stack[at], stack[at + 1], stack[at + 2] = 1, size, types
            depth += 1
        else:
            return end  # an unknown type (a stop where a value must be)
        if pos >= end:
            return end
        # the next value, from the innermost container not yet done
        while True:
            if depth == 0:
                return pos
            at = 3 * (depth - 1)
            if stack[at] == 0:  # a struct: the next field, or its end
                fid, t, pos = field(buf, pos, stack[at + 1])
                if t == T_STOP:
                    depth -= 1
                    continue
                stack[at + 1] = fid
                in_list = False
                break
            left = stack[at + 1]
            if left == 0:
                depth -= 1
                continue
            stack[at + 1] = left - 1
            types = stack[at + 2]
            if stack[at] == 1:
                t = types
            else:  # a map: key, value, key, value, ...
                t = (types >> 4) if left % 2 == 0 else (types & 0x0F)
            in_list = True
            break


@njit(cache=True, nogil=True)
def _offset_index(buf, pos, end, pages, first, room, stack):
    """Decode one OffsetIndex at ``pos`` (ending by ``end``) into page rows from ``first``
    (at most ``room``); returns the page count, or -1 when malformed."""
    count = -1
    last = 0
    while True:
        fid, t, pos = field(buf, pos, last)
        if t == T_STOP or pos > end:
            break
        last = fid
        if fid == 1 and t == T_LIST and count < 0:
            size, elem, pos = list_header(buf, pos)
            if elem != T_STRUCT or size > room or size * MIN_LOCATION > end - pos:
                return -1
            for i in range(size):
                o = (first + i) * NUM_PAGE
                for j in range(NUM_PAGE):  # (rows a malformed chunk left are written again)
                    pages[o + j] = -1
                got = 0
                inner = 0
                while True:
                    fid2, t2, pos = field(buf, pos, inner)
                    if t2 == T_STOP or pos > end:
                        break
                    inner = fid2
                    if fid2 == 1 and t2 == T_I64:
                        pages[o + P_OFFSET], pos = zigzag(buf, pos)
                        got |= 1
                    elif fid2 == 2 and t2 == T_I32:
                        pages[o + P_SIZE], pos = zigzag(buf, pos)
                        got |= 2
                    elif fid2 == 3 and t2 == T_I64:
                        pages[o + P_FIRST_ROW], pos = zigzag(buf, pos)
                        got |= 4
                    else:
                        pos = skip(buf, pos, t2, False, stack)
                if got != 7 or pos > end:
                    return -1
            count = size
        else:
            pos = skip(buf, pos, t, False, stack)
    return count if pos <= end else -1


@njit(cache=True, nogil=True)
def _column_index(buf, pos, end, pages, first, count, stack):
    """Decode one ColumnIndex at ``pos`` (ending by ``end``) into the ``count`` page rows from
    ``first``; returns the boundary order (-1 = not said), or -2 when malformed (a list not
    of ``count`` elements, a required list missing, a bound outside its place)."""
    seen = 0
    boundary = -1
    last = 0
    while True:
        fid, t, pos = field(buf, pos, last)
        if t == T_STOP or pos > end:
            break
        last = fid
        if 1 <= fid <= 5 and fid != 4 and t == T_LIST and (seen >> fid) & 1 == 0:
            size, elem, pos = list_header(buf, pos)
            if size != count or size > end - pos:
                return -2
            seen |= 1 << fid
            for i in range(size):
                o = (first + i) * NUM_PAGE
                if fid == 1:
                    if elem != T_TRUE and elem != T_FALSE:
                        return -2
                    b = byte(buf, pos)
                    pos += 1
                    if b != 0 and b != 1 and b != 2:
                        return -2
                    pages[o + P_NULL_PAGE] = 1 if b == 1 else 0
                elif fid == 5:
                    if elem != T_I64:
                        return -2
                    pages[o + P_NULLS], pos = zigzag(buf, pos)
                else:
                    if elem != T_BINARY:
                        return -2
                    n, pos = length(buf, pos)
                    if n > end - pos:
                        return -2
                    slot = P_MIN_START if fid == 2 else P_MAX_START
                    pages[o + slot], pages[o + slot + 1] = pos, n
                    pos += n
                if pos > end:
                    return -2
        elif fid == 4 and t == T_I32:
            boundary, pos = zigzag(buf, pos)
        else:
            pos = skip(buf, pos, t, False, stack)
    if pos > end or (seen & 0b1110) != 0b1110:  # null_pages, min_values, max_values required
        return -2
    return boundary


@njit(cache=True, nogil=True)
def decode_page_index(buf, places):
    """Decode the page index of column chunks: ``buf`` is the bytes read followed by one zero
    byte; ``places`` int64[chunks, NUM_PLACE] (``I_*``: each struct's position and length in
    ``buf``, -1 = absent).

    Returns ``(chunks, pages)``: int64[chunks, NUM_CHUNK_OUT] (``K_*``: status ``NO_INDEX``,
    ``DECODED`` or ``MALFORMED``, the chunk's first page row and page count, its boundary
    order) and int64[pages, NUM_PAGE] (``P_*``; bound places are positions in ``buf``, valid
    only where the chunk is ``DECODED``).
    """
    buf, flat = as_input(buf), flattened(places)
    n = len(flat) // NUM_PLACE
    end_of_buf = len(buf) - 1  # the padding byte is not data
    capacity = 0
    for k in range(n):
        size = flat[k * NUM_PLACE + I_OFFSET_INDEX_LEN]
        if 0 < size <= end_of_buf:
            capacity += size // MIN_LOCATION
    out = ints(n * NUM_CHUNK_OUT, -1)
    pages = ints(max(capacity, 1) * NUM_PAGE, -1)
    stack = ints(3 * MAX_DEPTH, 0)
    used = 0
    for k in range(n):
        c = k * NUM_CHUNK_OUT
        at = k * NUM_PLACE
        ci_pos, ci_len = flat[at + I_COLUMN_INDEX_POS], flat[at + I_COLUMN_INDEX_LEN]
        oi_pos, oi_len = flat[at + I_OFFSET_INDEX_POS], flat[at + I_OFFSET_INDEX_LEN]
        out[c + K_STATUS] = NO_INDEX
        out[c + K_FIRST] = used
        out[c + K_PAGES] = 0
        if ci_pos < 0 or oi_pos < 0:
            continue
        out[c + K_STATUS] = MALFORMED
        if ci_len <= 0 or oi_len <= 0 or ci_pos > end_of_buf - ci_len \
                or oi_pos > end_of_buf - oi_len:
            continue
        count = _offset_index(buf, oi_pos, oi_pos + oi_len, pages, used,
                              min(oi_len // MIN_LOCATION, capacity - used), stack)
        if count < 0:
            continue
        boundary = _column_index(buf, ci_pos, ci_pos + ci_len, pages, used, count, stack)
        if boundary == -2:
            continue
        out[c + K_STATUS] = DECODED
        out[c + K_PAGES] = count
        out[c + K_BOUNDARY] = boundary
        used += count
    return (int_array(out, n * NUM_CHUNK_OUT).reshape((n, NUM_CHUNK_OUT)),
            int_array(pages, used * NUM_PAGE).reshape((used, NUM_PAGE)))
