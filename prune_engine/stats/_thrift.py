"""numba kernels: a Parquet footer (Thrift compact protocol) decoded into flat integer arrays.

pyarrow's metadata API builds a Python object per column chunk and per statistic, which costs
about half a millisecond per file of 100 chunks; these kernels read the same bytes in tens of
microseconds, without the GIL, so footers decode in parallel threads. Only what statistics need
is decoded (the ``parquet.thrift`` field ids are in the comments); everything else is skipped
field by field, so footers of newer format versions decode too.

- :func:`decode_footer` walks ``FileMetaData``: a per-file ``info`` vector (``F_*`` slots) and
  one row per column chunk (``C_*`` slots; byte positions of the bounds into the footer).
- :func:`select_stats` keeps the chunks of the wanted leaves, applies the trust flags, and copies
  their bound bytes into one small buffer (so a collection over many files keeps kilobytes, not
  each whole footer).

Malformed bytes raise ``ValueError`` (never a read out of bounds); the caller turns that into a
per-file error. numba checks no bounds, so every number read from the bytes is checked before
it moves a position or indexes an array: a binary length and a list or map size against the
bytes left (as unsigned 64-bit, so a negative or huge one is refused), nesting against the
stack, and every read past the end returns the padding zero byte; :func:`select_stats` checks
that its chunk rows are whole row groups, its leaves inside them and each bound's place inside
the footer. Unknown values are ``-1``. The plain logic (which bound to trust) is in
:mod:`prune_engine.stats.parquet`; these kernels only move bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# compact protocol type codes
T_STOP, T_TRUE, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET, \
    T_MAP, T_STRUCT = range(13)

#: slots of the per-file info vector
(F_NUM_ROWS, F_SCHEMA_START, F_SCHEMA_END, F_CREATED_BY_OFF, F_CREATED_BY_LEN, F_ARROW_OFF,
 F_ARROW_LEN, F_COLUMN_ORDERS, F_TYPE_ORDERS, F_ROW_GROUPS, F_COLUMNS) = range(11)
NUM_INFO = 11

#: slots of a column chunk row
(C_TYPE, C_NUM_VALUES, C_NULLS, C_MIN_OFF, C_MIN_LEN, C_MAX_OFF, C_MAX_LEN, C_OLD_MIN_OFF,
 C_OLD_MIN_LEN, C_OLD_MAX_OFF, C_OLD_MAX_LEN, C_BLOOM_OFF, C_BLOOM_LEN, C_CODEC, C_DATA_OFF,
 C_DICT_OFF, C_DICT_ONLY, C_NANS, C_TOTAL, C_MAX_EXACT, C_MIN_EXACT, C_OFFSET_INDEX_OFF,
 C_OFFSET_INDEX_LEN, C_COLUMN_INDEX_OFF, C_COLUMN_INDEX_LEN) = range(25)
NUM_CHUNK = 25

#: slots of a :func:`select_stats` row
(S_MIN_START, S_MIN_LEN, S_MAX_START, S_MAX_LEN, S_NULLS, S_NUM_VALUES, S_BLOOM_OFF,
 S_BLOOM_LEN, S_CODEC, S_DICT_OFF, S_DICT_LEN, S_NANS, S_MIN_EXACT, S_MAX_EXACT, S_START,
 S_TOTAL, S_COLUMN_INDEX_OFF, S_COLUMN_INDEX_LEN, S_OFFSET_INDEX_OFF, S_OFFSET_INDEX_LEN,
 S_DATA_OFF) = range(21)
NUM_SELECTED = 21
#: Parquet page types of data pages, and the encodings of dictionary-encoded data
DATA_PAGE, DATA_PAGE_V2 = 0, 3
PLAIN_DICTIONARY, RLE_DICTIONARY = 2, 8

MAX_DEPTH = 64
ARROW_SCHEMA_KEY = np.frombuffer(b"ARROW:schema", dtype=np.uint8)


@njit(cache=True, nogil=True, inline="always")
def byte(buf, pos):
    """The byte at ``pos``, or past the end the zero byte that pads ``buf`` (a Thrift stop).

    (A clamped index, not a branch: numba's loops run several times faster.)
    """
    return np.int64(buf[min(pos, len(buf) - 1)])


def _twin_byte(buf, pos):
    return buf[pos] if pos < len(buf) else buf[-1]


@njit(cache=True, nogil=True, inline="always")
def bad_position(buf):
    """The position that marks a malformed footer: past the end, where every read is a stop.

    The kernels do not raise while decoding (a ``raise`` inside numba's inner loops makes them
    several times slower); :func:`decode_footer` raises once when it ends past the end.
    """
    return len(buf)


@njit(cache=True, nogil=True, inline="always")
def uvarint(buf, pos):
    """An unsigned LEB128 varint (list sizes and binary lengths); at most 10 bytes, bits past
    the 64th dropped."""
    result = np.uint64(0)
    shift = 0
    while shift < 64:
        b = byte(buf, pos)
        pos += 1
        result |= np.uint64(b & 0x7F) << np.uint64(shift)
        if b < 0x80:
            return result, pos
        shift += 7
    return result, bad_position(buf)


_MASK64 = (1 << 64) - 1


def _twin_uvarint(buf, pos):
    result = shift = 0
    end = len(buf)
    while shift < 64:
        b = buf[pos] if pos < end else buf[-1]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _MASK64, pos
        shift += 7
    return result & _MASK64, end



@njit(cache=True, nogil=True, inline="always")
def zigzag(buf, pos):
    """A zigzag varint (i16, i32, i64 fields) as int64."""
    u, pos = uvarint(buf, pos)
    v = (u >> np.uint64(1)) ^ (np.uint64(0) - (u & np.uint64(1)))
    return np.int64(v), pos


def _twin_zigzag(buf, pos):
    u, pos = _twin_uvarint(buf, pos)
    return (u >> 1) ^ -(u & 1), pos


@njit(cache=True, nogil=True, inline="always")
def length(buf, pos):
    """A byte or element count; one that runs past the end marks the footer malformed."""
    u, pos = uvarint(buf, pos)
    end = len(buf) - 1
    if pos > end or u > np.uint64(end - pos):
        return 0, bad_position(buf)
    return np.int64(u), pos


def _twin_length(buf, pos):
    u, pos = _twin_uvarint(buf, pos)
    end = len(buf) - 1
    if pos > end or u > end - pos:
        return 0, len(buf)
    return u, pos


@njit(cache=True, nogil=True, inline="always")
def field(buf, pos, last):
    """A struct field header: (field id, type, pos); type ``T_STOP`` ends the struct."""
    b = byte(buf, pos)
    pos += 1
    if b == 0:
        return 0, T_STOP, pos
    delta = b >> 4
    if delta == 0:
        fid, pos = zigzag(buf, pos)
    else:
        fid = last + delta
    return fid, b & 0x0F, pos


@njit(cache=True, nogil=True, inline="always")
def list_header(buf, pos):
    """(size, element type, pos) of a list or set."""
    b = byte(buf, pos)
    pos += 1
    size = b >> 4
    if size == 15:
        size, pos = length(buf, pos)
    elif pos >= len(buf):
        size = 0
    return size, b & 0x0F, pos


# -- storage: numpy arrays in the compiled kernels; in their Python twins (prune_engine._warm)
# Python lists and bytes, whose items are plain ints (numpy scalars are several times slower
# in Python). Every array the kernels index is flat (a 2-D index is ``row * width + slot``).


@njit(cache=True, nogil=True, inline="always")
def as_input(buf):
    """The footer bytes as the kernels index them."""
    return buf


def _twin_as_input(buf):
    return buf.tobytes()


@njit(cache=True, nogil=True, inline="always")
def flattened(values):
    """An input array, flat, as the kernels index it."""
    return values.ravel()


def _twin_flattened(values):
    return values.ravel().tolist()


@njit(cache=True, nogil=True, inline="always")
def ints(size, fill):
    """``size`` int64 set to ``fill``."""
    return np.full(size, fill, np.int64)


def _twin_ints(size, fill):
    return [fill] * size


@njit(cache=True, nogil=True, inline="always")
def int_array(values, size):
    """The first ``size`` of ``values`` (from :func:`ints`) as an int64 array."""
    return values[:size]


def _twin_int_array(values, size):
    return np.array(values[:size], np.int64)


@njit(cache=True, nogil=True, inline="always")
def new_bytes(size):
    """``size`` bytes to fill."""
    return np.empty(size, np.uint8)


def _twin_new_bytes(size):
    return bytearray(size)


@njit(cache=True, nogil=True, inline="always")
def as_bytes(data):
    """Bytes from :func:`new_bytes` as a uint8 array."""
    return data


def _twin_as_bytes(data):
    return np.frombuffer(data, np.uint8)


# the structs the walker reads (a value of any other kind is skipped); a list's kind says
# what to note when it starts or ends
(K_SKIP, K_FILE, K_ROW_GROUP, K_CHUNK, K_META, K_STATS, K_KEY_VALUE, K_ORDER, K_SCHEMA,
 K_ROW_GROUPS, K_ORDERS, K_ENCODING_STATS) = range(12)
# slots of a walker frame: mode (struct, list or map), count (a struct's last field id, a
# container's elements left), element types, kind, element kind, four notes
_MODE, _COUNT, _TYPES, _KIND, _ELEM, _X1, _X2, _X3, _X4 = range(9)
_FRAME = 9
_STRUCT, _LIST, _MAP = range(3)
# where an integer or binary value goes: nowhere, a chunk row, ``info``, row counts, the frame
D_NONE, D_CHUNK, D_INFO, D_ROWS, D_FRAME = range(5)


@njit(cache=True, nogil=True)
def _walk(buf, info, chunks, rows, stack):
    """The loop of :func:`decode_footer`; returns ``(chunks, row groups, bad)``.

    The output arrays are parameters, never reassigned here: an array variable reassigned
    inside a numba loop is reference-counted on every iteration (atomic operations that cost
    more than the whole walk). Chunks and row groups past the arrays' sizes are counted but
    not stored; the caller then walks again with arrays of the right size.
    """
    capacity = len(chunks) // NUM_CHUNK
    end = len(buf)
    rows_size = len(rows)
    k = 0  # column chunks so far (the current one while inside it)
    r = 0  # row groups so far
    bad = False
    stack[_MODE] = _STRUCT
    stack[_KIND] = K_FILE
    stack[_COUNT] = 0
    depth = 1
    pos = 0
    while depth > 0 and not bad:
        at = (depth - 1) * _FRAME  # the top frame's first slot
        dest, slot, kind, elem = D_NONE, 0, K_SKIP, K_SKIP
        if stack[at + _MODE] == _STRUCT:
            fid, t, pos = field(buf, pos, stack[at + _COUNT])
            parent = stack[at + _KIND]
            if t == T_STOP:
                if parent == K_CHUNK:
                    k += 1
                elif parent == K_ROW_GROUP:
                    columns = k - stack[at + _X1]
                    if r == 0:
                        info[F_COLUMNS] = columns
                    bad = columns != info[F_COLUMNS]
                    r += 1
                elif parent == K_ENCODING_STATS and k < capacity:
                    page, encoding = stack[at + _X1], stack[at + _X2]
                    if (page == DATA_PAGE or page == DATA_PAGE_V2) \
                            and encoding != PLAIN_DICTIONARY and encoding != RLE_DICTIONARY:
                        # a data page not dictionary-encoded
                        chunks[k * NUM_CHUNK + C_DICT_ONLY] = 0
                elif parent == K_KEY_VALUE and stack[at + _X2] == ARROW_SCHEMA_KEY.size \
                        and stack[at + _X4] >= 0:
                    same = True
                    for i in range(ARROW_SCHEMA_KEY.size):
                        same = same and buf[stack[at + _X1] + i] == ARROW_SCHEMA_KEY[i]
                    if same:
                        info[F_ARROW_OFF] = stack[at + _X3]
                        info[F_ARROW_LEN] = stack[at + _X4]
                depth -= 1
                continue
            stack[at + _COUNT] = fid
            in_container = False
            if parent == K_FILE:
                if fid == 2 and t == T_LIST:
                    kind = K_SCHEMA
                    info[F_SCHEMA_START] = pos
                elif fid == 3 and t == T_I64:
                    dest, slot = D_INFO, F_NUM_ROWS
                elif fid == 4 and t == T_LIST:
                    kind, elem = K_ROW_GROUPS, K_ROW_GROUP
                elif fid == 5 and t == T_LIST:
                    elem = K_KEY_VALUE
                elif fid == 6 and t == T_BINARY:
                    dest, slot = D_INFO, F_CREATED_BY_OFF
                elif fid == 7 and t == T_LIST:
                    kind, elem = K_ORDERS, K_ORDER
            elif parent == K_ROW_GROUP:
                if fid == 1 and t == T_LIST:
                    elem = K_CHUNK
                elif fid == 3 and t == T_I64:
                    dest, slot = D_ROWS, r
            elif parent == K_CHUNK:
                if fid == 3 and t == T_STRUCT:
                    elem = K_META
                elif (fid == 4 or fid == 6) and t == T_I64:
                    dest, slot = D_CHUNK, C_OFFSET_INDEX_OFF if fid == 4 else C_COLUMN_INDEX_OFF
                elif (fid == 5 or fid == 7) and t == T_I32:
                    dest, slot = D_CHUNK, C_OFFSET_INDEX_LEN if fid == 5 else C_COLUMN_INDEX_LEN
            elif parent == K_META:
                if fid == 1 and t == T_I32:
                    dest, slot = D_CHUNK, C_TYPE
                elif fid == 5 and t == T_I64:
                    dest, slot = D_CHUNK, C_NUM_VALUES
                elif fid == 12 and t == T_STRUCT:
                    elem = K_STATS
                elif fid == 4 and t == T_I32:
                    dest, slot = D_CHUNK, C_CODEC
                elif fid == 7 and t == T_I64:
                    dest, slot = D_CHUNK, C_TOTAL
                elif fid == 9 and t == T_I64:
                    dest, slot = D_CHUNK, C_DATA_OFF
                elif fid == 11 and t == T_I64:
                    dest, slot = D_CHUNK, C_DICT_OFF
                elif fid == 13 and t == T_LIST:
                    elem = K_ENCODING_STATS
                    if k < capacity:
                        chunks[k * NUM_CHUNK + C_DICT_ONLY] = 1  # until a page says otherwise
                elif fid == 14 and t == T_I64:
                    dest, slot = D_CHUNK, C_BLOOM_OFF
                elif fid == 15 and t == T_I32:
                    dest, slot = D_CHUNK, C_BLOOM_LEN
            elif parent == K_STATS:
                if t == T_BINARY and (fid == 1 or fid == 2 or fid == 5 or fid == 6):
                    dest = D_CHUNK
                    slot = C_OLD_MAX_OFF if fid == 1 else C_OLD_MIN_OFF if fid == 2 else \
                        C_MAX_OFF if fid == 5 else C_MIN_OFF
                elif fid == 3 and t == T_I64:
                    dest, slot = D_CHUNK, C_NULLS
                elif fid == 9 and t == T_I64:
                    dest, slot = D_CHUNK, C_NANS
                elif (fid == 7 or fid == 8) and (t == T_TRUE or t == T_FALSE):
                    dest, slot = D_CHUNK, C_MAX_EXACT if fid == 7 else C_MIN_EXACT
            elif parent == K_KEY_VALUE:
                if (fid == 1 or fid == 2) and t == T_BINARY:
                    dest, slot = D_FRAME, _X1 if fid == 1 else _X3
            elif parent == K_ENCODING_STATS:
                if (fid == 1 or fid == 2) and t == T_I32:
                    dest, slot = D_FRAME, _X1 if fid == 1 else _X2
            elif parent == K_ORDER:
                if fid == 1 and t == T_STRUCT:
                    info[F_TYPE_ORDERS] += 1
        else:
            left = stack[at + _COUNT]
            if left == 0:
                if stack[at + _KIND] == K_SCHEMA:
                    info[F_SCHEMA_END] = pos
                depth -= 1
                continue
            stack[at + _COUNT] = left - 1
            types = stack[at + _TYPES]
            if stack[at + _MODE] == _LIST:
                t = types
            else:  # a map: key, value, key, value, ...
                t = (types >> 4) if left % 2 == 0 else (types & 0x0F)
            in_container = True
            elem = stack[at + _ELEM]
        # the value of type t
        if t == T_TRUE or t == T_FALSE:
            if in_container:
                pos += 1
            elif dest == D_CHUNK and k < capacity:  # in a struct, the value is the type
                chunks[k * NUM_CHUNK + slot] = 1 if t == T_TRUE else 0
        elif t == T_BYTE:
            pos += 1
        elif t == T_I16 or t == T_I32 or t == T_I64:
            value, pos = zigzag(buf, pos)
            if dest == D_CHUNK and k < capacity:
                chunks[k * NUM_CHUNK + slot] = value
            elif dest == D_INFO:
                info[slot] = value
            elif dest == D_ROWS and slot < rows_size:
                rows[slot] = value
            elif dest == D_FRAME:
                stack[at + slot] = value
        elif t == T_DOUBLE:
            pos += 8
        elif t == T_BINARY:
            size, pos = length(buf, pos)
            if dest == D_CHUNK and k < capacity:
                chunks[k * NUM_CHUNK + slot], chunks[k * NUM_CHUNK + slot + 1] = pos, size
            elif dest == D_INFO:
                info[slot], info[slot + 1] = pos, size
            elif dest == D_FRAME:
                stack[at + slot], stack[at + slot + 1] = pos, size
            pos += size
        elif (t == T_STRUCT or t == T_LIST or t == T_SET or t == T_MAP) and depth < MAX_DEPTH:
            new = depth * _FRAME  # the new frame's first slot
            for i in range(_X1, _FRAME):
                stack[new + i] = -1
            stack[new + _COUNT] = 0
            stack[new + _KIND] = kind
            stack[new + _ELEM] = K_SKIP
            if t == T_STRUCT:
                stack[new + _MODE] = _STRUCT
                stack[new + _KIND] = elem
                if elem == K_ROW_GROUP:
                    stack[new + _X1] = k
                    if r < rows_size:
                        rows[r] = -1
                elif elem == K_CHUNK and k < capacity:
                    for i in range(NUM_CHUNK):
                        chunks[k * NUM_CHUNK + i] = -1
            elif t == T_MAP:
                size, pos = length(buf, pos)
                stack[new + _MODE] = _MAP
                stack[new + _COUNT] = 2 * size
                stack[new + _TYPES] = byte(buf, pos) if size > 0 else 0
                pos += 1 if size > 0 else 0
            else:
                count, stack[new + _TYPES], pos = list_header(buf, pos)
                stack[new + _MODE] = _LIST
                stack[new + _COUNT] = count
                stack[new + _ELEM] = elem
                if kind == K_ROW_GROUPS:
                    bad = info[F_ROW_GROUPS] >= 0  # a second list of row groups
                    info[F_ROW_GROUPS] = count
                elif kind == K_ORDERS:
                    info[F_COLUMN_ORDERS] = count
            depth += 1
        else:
            bad = True  # an unknown type, or nested over MAX_DEPTH levels
        bad = bad or pos >= end
    return k, r, bad or pos >= end


@njit(cache=True, nogil=True)
def decode_footer(buf):
    """Decode ``FileMetaData``: ``buf`` is the footer bytes (without the length and magic)
    followed by one zero byte, which every read past the end returns.

    Returns ``(info, chunks, row_counts)``: ``info`` int64[NUM_INFO] (``F_*``), ``chunks``
    int64[row groups * columns, NUM_CHUNK] row-group major (``C_*``; offsets into ``buf``),
    ``row_counts`` int64[row groups].

    One loop walks the whole footer with an explicit stack (no call per field: numba's calls
    cost more than the walk). What is read, by struct (``parquet.thrift`` field ids):
    FileMetaData 2 schema (raw bytes), 3 num_rows, 4 row_groups, 5 key_value_metadata
    (``ARROW:schema``), 6 created_by, 7 column_orders; RowGroup 1 columns, 3 num_rows;
    ColumnChunk 3 meta_data, 4 offset_index_offset, 5 offset_index_length,
    6 column_index_offset, 7 column_index_length (the page index); ColumnMetaData 1 type,
    4 codec, 5 num_values, 7 total_compressed_size, 9 data_page_offset, 11 dictionary_page_offset, 12 statistics,
    13 encoding_stats, 14 bloom_filter_offset, 15 bloom_filter_length; Statistics 1 max,
    2 min (deprecated), 3 null_count, 5 max_value, 6 min_value, 7 is_max_value_exact,
    8 is_min_value_exact (1 true, 0 false), 9 nan_count (parquet-format 2.13, PARQUET-2249);
    PageEncodingStats 1 page_type, 2 encoding (``C_DICT_ONLY``: 1 when every data page is
    dictionary-encoded, 0 when one is not, -1 without encoding statistics).
    """
    buf = as_input(buf)
    stack = ints(MAX_DEPTH * _FRAME, 0)
    info = ints(NUM_INFO, -1)
    # a column chunk with its metadata takes well over 32 bytes: one walk for real footers
    capacity = max(256, len(buf) // 32)
    chunks = ints(capacity * NUM_CHUNK, -1)
    rows = ints(capacity, -1)
    for _ in range(2):
        for i in range(NUM_INFO):
            info[i] = -1
        info[F_COLUMN_ORDERS] = 0
        info[F_TYPE_ORDERS] = 0
        k, r, bad = _walk(buf, info, chunks, rows, stack)
        if bad or (k <= capacity and r <= len(rows)):
            break
        capacity = k
        chunks = ints(k * NUM_CHUNK, -1)
        rows = ints(r, -1)
    if r == 0:
        info[F_COLUMNS] = 0
    if bad or info[F_SCHEMA_START] < 0 or info[F_SCHEMA_END] < 0 or info[F_ROW_GROUPS] != r \
            or k != r * info[F_COLUMNS]:
        raise ValueError("the footer is truncated or malformed (or lacks a schema or row "
                         "groups)")
    return (int_array(info, NUM_INFO), int_array(chunks, k * NUM_CHUNK).reshape((k, NUM_CHUNK)),
            int_array(rows, r))


@njit(cache=True, nogil=True)
def select_stats(buf, chunks, columns, leaf_index, leaf_type, trust_new, trust_old, use_new):
    """The statistics of the leaves ``leaf_index`` in every row group, bounds compacted.

    A bound is taken from ``min_value`` / ``max_value`` where ``use_new`` and
    ``trust_new[j]``, else from the deprecated ``min`` / ``max`` where ``trust_old[j]``, and
    only when the chunk's physical type is ``leaf_type[j]``. Returns ``(bytes, rows)``: the
    bound bytes, and int64[row groups * leaves, NUM_SELECTED] (``S_*``; starts into ``bytes``,
    length -1 = unknown; the Bloom filter's offset and length in the file, -1 = none; the
    codec, the dictionary page's offset and length where every data page uses it, and the
    NaN count, -1 = none; the bounds' exactness flags, 1 / 0, -1 = not said; where the chunk's
    pages start and their total compressed size, -1 = unknown; the offset and length in the
    file of the chunk's column index (only where ``min_value`` / ``max_value`` are trusted:
    its page bounds follow the same column orders) and offset index, -1 = none; the first
    data page's offset).

    ``chunks`` must be :func:`decode_footer`'s (whole row groups of ``columns`` chunks, bound
    places inside ``buf``); anything else raises ``ValueError`` rather than read outside.
    """
    buf, flat = as_input(buf), flattened(chunks)
    leaf_index, leaf_type = flattened(leaf_index), flattened(leaf_type)
    trust_new, trust_old = flattened(trust_new), flattened(trust_old)
    leaves = len(leaf_index)
    if columns < 0 or len(flat) % NUM_CHUNK != 0:
        raise ValueError("malformed chunk rows")
    rows_in = len(flat) // NUM_CHUNK
    groups = rows_in // columns if columns > 0 else 0
    if groups * columns != rows_in or len(leaf_type) != leaves or len(trust_new) != leaves \
            or len(trust_old) != leaves:
        raise ValueError("the chunk rows are not whole row groups of the schema's columns")
    for j in range(leaves):
        if leaf_index[j] < 0 or leaf_index[j] >= columns:
            raise ValueError("a leaf index outside the schema's columns")
    size_of_buf = len(buf)
    n = groups * leaves
    out = ints(n * NUM_SELECTED, -1)
    source = ints(n, -1)  # the chunk row's first bound slot
    total = 0
    for k in range(n):
        c = ((k // leaves) * columns + leaf_index[k % leaves]) * NUM_CHUNK
        j = k % leaves
        o = k * NUM_SELECTED
        if flat[c + C_TYPE] != leaf_type[j]:
            continue
        out[o + S_NULLS] = flat[c + C_NULLS]
        out[o + S_NUM_VALUES] = flat[c + C_NUM_VALUES]
        out[o + S_BLOOM_OFF] = flat[c + C_BLOOM_OFF]
        out[o + S_BLOOM_LEN] = flat[c + C_BLOOM_LEN]
        out[o + S_CODEC] = flat[c + C_CODEC]
        out[o + S_NANS] = flat[c + C_NANS]
        out[o + S_MIN_EXACT] = flat[c + C_MIN_EXACT]
        out[o + S_MAX_EXACT] = flat[c + C_MAX_EXACT]
        # the chunk's pages start at its dictionary page, if it has one before its data pages
        dict_off, data_off = flat[c + C_DICT_OFF], flat[c + C_DATA_OFF]
        out[o + S_START] = dict_off if 0 < dict_off < data_off else data_off
        out[o + S_TOTAL] = flat[c + C_TOTAL]
        out[o + S_OFFSET_INDEX_OFF] = flat[c + C_OFFSET_INDEX_OFF]
        out[o + S_OFFSET_INDEX_LEN] = flat[c + C_OFFSET_INDEX_LEN]
        out[o + S_DATA_OFF] = data_off
        # the dictionary page of a chunk whose data pages all use it: it lies before them
        if flat[c + C_DICT_ONLY] == 1 and 0 < dict_off < data_off:
            out[o + S_DICT_OFF] = dict_off
            out[o + S_DICT_LEN] = data_off - dict_off
        if use_new:
            source[k] = C_MIN_OFF if trust_new[j] else -1
            if trust_new[j]:  # the column index's page bounds follow the column orders too
                out[o + S_COLUMN_INDEX_OFF] = flat[c + C_COLUMN_INDEX_OFF]
                out[o + S_COLUMN_INDEX_LEN] = flat[c + C_COLUMN_INDEX_LEN]
        else:
            source[k] = C_OLD_MIN_OFF if trust_old[j] else -1
        if source[k] >= 0:
            for side in range(2):  # min, then max
                at = flat[c + source[k] + 2 * side]
                size = flat[c + source[k] + 1 + 2 * side]
                if size >= 0 and 0 <= at <= size_of_buf - size:  # a place inside the footer
                    out[o + S_MIN_START + 2 * side] = total
                    out[o + S_MIN_LEN + 2 * side] = size
                    total += size
    data = new_bytes(total)
    for k in range(n):
        c = ((k // leaves) * columns + leaf_index[k % leaves]) * NUM_CHUNK
        o = k * NUM_SELECTED
        for side in range(2):
            size = out[o + S_MIN_LEN + 2 * side]
            start = out[o + S_MIN_START + 2 * side]
            src = flat[c + source[k] + 2 * side] if size > 0 else 0
            for i in range(max(size, 0)):
                data[start + i] = buf[src + i]
    return as_bytes(data), int_array(out, n * NUM_SELECTED).reshape((n, NUM_SELECTED))
