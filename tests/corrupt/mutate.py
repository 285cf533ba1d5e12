"""Mutation operators: bytes, Thrift structs, Avro containers, JSON documents, Arrow tables.

Every operator takes a ``random.Random`` and the input, and returns the mutant and a short
description of what it did (shown with each finding). The same generator state gives the
same mutant.

- :func:`bytes_edit`: bit flips, overwrites with boundary bytes (0x00, 0xFF, 0x7F, 0x80, ...),
  truncation, deletion, insertion, and a varint at a position replaced by a boundary number
  (-1, 2**31, -2**40, ...), zigzag or unsigned, within chosen byte ranges;
- :func:`thrift_edit`: one value of a Thrift compact struct (a Parquet footer) decoded and
  replaced: an integer by a boundary number, a binary by boundary bytes, a list emptied, cut
  or doubled, a field dropped; the struct is encoded again (lengths follow);
- :func:`thrift_header_edit`: an integer of a Thrift struct inside a file (a page or Bloom
  filter header) replaced in place, keeping its byte length where the number fits (a padded
  varint), so that nothing after it moves;
- :func:`avro_edit`: an Avro object container file: a length or count of its header or blocks,
  its schema (a type replaced: a ``fixed`` of size -2**40, ...) or other JSON metadata, or
  the bytes of a block's data (decompressed, mutated,
  compressed again);
- :func:`json_edit`: one node of a JSON document replaced (boundary values, other types),
  deleted, swapped with a sibling, or nested 3,000 deep;
- :func:`table_edit`: one column (or struct field) of an Arrow table: nulls, a boundary value,
  another type, or dropped.
"""

from __future__ import annotations

import json
import random
import zlib

import numpy as np
import pyarrow as pa

from tests.stats import thrift_codec as tc

BOUNDARY_BYTES = (0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE)
BOUNDARY_INTS = (-1, 0, 1, 2**31 - 1, 2**31, -2**31, 2**32, -2**40, 2**40, 2**63 - 1, -2**63)
INT64 = (-2**63, 2**63 - 1)
#: a JSON node's replacements (and the marker of a 3,000-deep nesting)
DEEP = "\x00deep\x00"
BOUNDARY_JSON = (None, True, False, -1, 0, 2**31, -2**40, 2**63, 2**64, -2**63 - 1, 1.5, 1e308,
                 "", "x", "\u0000", "\u00e9\u00e9", "x" * 5000, [], {}, [None], {"": None})


# ------------------------------------------------------------------------------ varints


def zigzag(n: int) -> bytes:
    """``n``, clamped to an int64, as a zigzag varint."""
    return tc.zigzag(max(INT64[0], min(INT64[1], n)))


def varint_span(data: bytes, pos: int) -> int:
    """The length of the varint starting at ``pos`` (at most 10 bytes)."""
    end = pos
    while end < len(data) and end - pos < 10 and data[end] & 0x80:
        end += 1
    return min(end + 1, len(data)) - pos


def padded(encoded: bytes, length: int) -> bytes | None:
    """``encoded`` (a varint) stretched to ``length`` bytes with continuation bytes (the same
    number), or None when it does not fit."""
    if len(encoded) > length:
        return None
    if len(encoded) == length:
        return encoded
    body = bytearray(encoded)
    body[-1] |= 0x80
    body += b"\x80" * (length - len(encoded) - 1) + b"\x00"
    return bytes(body)


# ------------------------------------------------------------------------------ bytes


def bytes_edit(rnd: random.Random, data: bytes, ranges=None, ops=None) -> tuple[bytes, str]:
    """One byte-level mutation of ``data`` inside one of ``ranges`` ([start, end) pairs;
    default: the whole of it)."""
    ranges = [r for r in (ranges or [(0, len(data))]) if r[1] > r[0]] or [(0, len(data))]
    lo, hi = rnd.choice(ranges)
    op = rnd.choice(ops or ("flip", "flip", "overwrite", "overwrite", "truncate", "delete",
                           "insert", "varint", "varint"))
    pos = rnd.randrange(lo, max(hi, lo + 1))
    out = bytearray(data)
    if op == "flip":
        bits = sorted({rnd.randrange(8 * (hi - lo)) for _ in range(rnd.choice((1, 1, 2, 4)))})
        for bit in bits:
            out[lo + bit // 8] ^= 1 << (bit % 8)
        return bytes(out), f"flip bit(s) {', '.join(f'{lo + b // 8}.{b % 8}' for b in bits)}"
    if op == "overwrite":
        n = min(rnd.choice((1, 1, 2, 4, 8)), len(data) - pos)
        value = rnd.choice(BOUNDARY_BYTES)
        out[pos:pos + n] = bytes([value]) * n
        return bytes(out), f"overwrite {n} byte(s) at {pos} with {value:#04x}"
    if op == "truncate":
        return bytes(out[:pos]), f"truncate at {pos} of {len(data)}"
    if op == "delete":
        n = rnd.choice((1, 1, 4, 16))
        del out[pos:pos + n]
        return bytes(out), f"delete {n} byte(s) at {pos}"
    if op == "insert":
        n = rnd.choice((1, 1, 4, 16))
        value = rnd.choice(BOUNDARY_BYTES)
        out[pos:pos] = bytes([value]) * n
        return bytes(out), f"insert {n} byte(s) {value:#04x} at {pos}"
    span = varint_span(data, pos)
    number = rnd.choice(BOUNDARY_INTS)
    signed = rnd.random() < 0.5
    out[pos:pos + span] = zigzag(number) if signed else tc.uvarint(number)
    return bytes(out), (f"varint of {span} byte(s) at {pos} := {number} "
                        f"({'zigzag' if signed else 'unsigned'})")


# ------------------------------------------------------------------------------ Thrift


def _slots(fields: list, path: str, out: list) -> None:
    """Every value of a decoded struct: (container, index, thrift type, path)."""
    for i, f in enumerate(fields):
        where = f"{path}.{f.fid}"
        out.append((fields, i, "field", where))
        _value_slots(f.value, f.type, where, out)


def _value_slots(value, t: int, path: str, out: list) -> None:
    if t == tc.STRUCT:
        _slots(value, path, out)
    elif t in (tc.LIST, tc.SET):
        for i, item in enumerate(value.items):
            out.append((value.items, i, value.elem, f"{path}[{i}]"))
            _value_slots(item, value.elem, f"{path}[{i}]", out)


def _replace(rnd: random.Random, value, t: int):
    """A replacement for a value of Thrift type ``t`` (None: no replacement of it)."""
    if t in (tc.I16, tc.I32, tc.I64, tc.BYTE):
        if t == tc.BYTE:
            return rnd.choice((-128, -1, 0, 1, 127))
        new = rnd.choice(BOUNDARY_INTS + (value + 1, -value, value * 2**32))
        return max(INT64[0], min(INT64[1], new))  # the codec writes 64-bit numbers
    if t == tc.BINARY:
        choice = rnd.randrange(5)
        if choice == 0:
            return b""
        if choice == 1:
            return bytes([rnd.choice(BOUNDARY_BYTES)]) * rnd.choice((1, 4, 8, 16, 17, 32))
        if choice == 2:
            return value[:len(value) // 2]
        if choice == 3:
            return value + value
        return bytes(rnd.getrandbits(8) for _ in range(len(value) or 4))
    if t == tc.DOUBLE:
        return rnd.choice((float("nan"), float("inf"), -0.0, 1e308))
    if t in (tc.LIST, tc.SET):
        items = list(value.items)
        choice = rnd.randrange(3)
        cut = [] if choice == 0 else items[:len(items) // 2] if choice == 1 else items + items
        return tc.Seq(value.elem, cut, value.kind)
    return None


def thrift_edit(rnd: random.Random, struct_bytes: bytes) -> tuple[bytes, str]:
    """One value of the Thrift struct ``struct_bytes`` replaced (see the module doc); the
    struct encoded again."""
    tree = tc.decode(struct_bytes)
    slots: list = []
    _slots(tree, "", slots)
    container, i, t, path = rnd.choice(slots)
    if t == "field":
        field = container[i]
        if rnd.random() < 0.2:
            del container[i]
            return tc.encode(tree), f"drop field {path}"
        new = _replace(rnd, field.value, field.type)
        if new is None:
            del container[i]
            return tc.encode(tree), f"drop field {path}"
        field.value = new
        return tc.encode(tree), f"field {path} := {_show(new)}"
    if rnd.random() < 0.5:
        del container[i]
        return tc.encode(tree), f"drop item {path}"
    new = _replace(rnd, container[i], t)
    if new is None:
        container.insert(i, container[i])
        return tc.encode(tree), f"double item {path}"
    container[i] = new
    return tc.encode(tree), f"item {path} := {_show(new)}"


def footer_edit(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    """A Parquet file with one value of its footer replaced (:func:`thrift_edit`)."""
    footer = tc.footer_of(data)
    edited, what = thrift_edit(rnd, footer)
    start = len(data) - 8 - len(footer)
    return (data[:start] + edited + len(edited).to_bytes(4, "little") + b"PAR1",
            f"footer {what}")


def thrift_header_edit(rnd: random.Random, data: bytes, offset: int) -> tuple[bytes, str]:
    """An integer of the Thrift struct at ``offset`` of ``data`` (a page or Bloom filter
    header) replaced in place by a boundary number (see the module doc)."""
    try:
        reader = tc.Reader(data[offset:])
        fields = reader.struct()
    except (ValueError, IndexError):
        return bytes_edit(rnd, data, [(offset, offset + 16)], ("varint",))
    slots: list = []
    _slots(fields, "", slots)
    ints = [(c[i], p) for c, i, t, p in slots
            if t == "field" and c[i].type in (tc.I16, tc.I32, tc.I64)]
    if not ints:
        return bytes_edit(rnd, data, [(offset, offset + reader.pos)])
    field, path = rnd.choice(ints)
    number = rnd.choice(BOUNDARY_INTS + (field.value + 1, field.value - 1, -field.value))
    start, end = offset + field.start, offset + field.end
    encoded = zigzag(number)
    same = padded(encoded, end - start)
    what = f"header at {offset}: field {path} := {number}"
    if same is not None:
        return data[:start] + same + data[end:], what + " (padded varint)"
    return data[:start] + encoded + data[end:], what + " (longer: what follows moves)"


# ------------------------------------------------------------------------------ Avro


def _long(data: bytes, pos: int) -> tuple[int, int]:
    """An Avro long (zigzag varint) at ``pos``: (value, position after it)."""
    reader = tc.Reader(data)
    reader.pos = pos
    return reader.zigzag(), reader.pos


def parse_avro(data: bytes) -> dict:
    """The parts of an Avro object container file: its metadata (in order), sync marker,
    blocks (count, data) and the positions of every header and block long."""
    if data[:4] != b"Obj\x01":
        raise ValueError("not an Avro file")
    pos, meta, longs = 4, [], []
    while True:
        longs.append(pos)
        count, pos = _long(data, pos)
        if count == 0:
            break
        if count < 0:
            longs.append(pos)
            _, pos = _long(data, pos)
            count = -count
        for _ in range(count):
            longs.append(pos)
            n, pos = _long(data, pos)
            key = data[pos:pos + n].decode()
            pos += n
            longs.append(pos)
            n, pos = _long(data, pos)
            meta.append((key, data[pos:pos + n]))
            pos += n
    sync = data[pos:pos + 16]
    pos += 16
    blocks = []
    while pos < len(data):
        longs.append(pos)
        count, pos = _long(data, pos)
        longs.append(pos)
        size, pos = _long(data, pos)
        blocks.append((count, data[pos:pos + size]))
        pos += size + 16
    return {"meta": meta, "sync": sync, "blocks": blocks, "longs": longs}


def write_avro(meta: list, sync: bytes, blocks: list) -> bytes:
    out = bytearray(b"Obj\x01")
    out += zigzag(len(meta))
    for key, value in meta:
        out += zigzag(len(key.encode())) + key.encode() + zigzag(len(value)) + value
    out += b"\x00" + sync
    for count, body in blocks:
        out += zigzag(count) + zigzag(len(body)) + body + sync
    return bytes(out)


def avro_edit(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    """One mutation of an Avro object container file (see the module doc)."""
    try:
        parts = parse_avro(data)
    except (ValueError, UnicodeDecodeError):
        return bytes_edit(rnd, data)
    meta, sync, blocks = parts["meta"], parts["sync"], parts["blocks"]
    choice = rnd.randrange(10)
    if choice < 2:  # a count or length of the container
        pos = rnd.choice(parts["longs"])
        number = rnd.choice(BOUNDARY_INTS)
        span = varint_span(data, pos)
        return (data[:pos] + zigzag(number) + data[pos + span:],
                f"avro long at {pos} := {number}")
    if choice < 5:  # the schema, or another JSON value of the header
        jsons = [i for i, (_, v) in enumerate(meta) if v[:1] in (b"{", b"[")]
        if jsons:
            i = next((i for i in jsons if meta[i][0] == "avro.schema"), jsons[0]) \
                if choice < 4 else rnd.choice(jsons)
            key, value = meta[i]
            edit = avro_type_edit if key == "avro.schema" and rnd.random() < 0.4 else json_edit
            text, what = edit(rnd, value.decode())
            meta = list(meta)
            meta[i] = (key, text.encode())
            return write_avro(meta, sync, blocks), f"avro header {key!r}: {what}"
    if choice < 6:  # a header value's bytes
        i = rnd.randrange(len(meta))
        key, value = meta[i]
        edited, what = bytes_edit(rnd, value) if value else (b"\xff", "set to 0xff")
        meta = list(meta)
        meta[i] = (key, edited)
        return write_avro(meta, sync, blocks), f"avro header {key!r}: {what}"
    if not blocks:
        return bytes_edit(rnd, data)
    b = rnd.randrange(len(blocks))
    count, body = blocks[b]
    codec = dict(meta).get("avro.codec", b"null")
    if codec == b"deflate":
        try:
            body = zlib.decompress(body, -15)
        except zlib.error:
            return bytes_edit(rnd, data)
    ops = ("varint", "varint", "varint", "flip", "overwrite", "delete", "insert", "truncate")
    edited, what = bytes_edit(rnd, body, ops=ops)
    if codec == b"deflate":
        compressor = zlib.compressobj(wbits=-15)
        edited = compressor.compress(edited) + compressor.flush()
    blocks = list(blocks)
    blocks[b] = (count, edited)
    return write_avro(meta, sync, blocks), f"avro block {b} data ({codec.decode()}): {what}"


def avro_type_edit(rnd: random.Random, schema: str) -> tuple[str, str]:
    """An Avro schema (JSON) with one type replaced: by a ``fixed`` or a ``decimal`` whose
    size or precision is a boundary number, or by another type."""
    doc = json.loads(schema)
    nodes: list = []
    _nodes(doc, "$", nodes)
    types = [(parent, key, path) for parent, key, path in nodes
             if key in ("type", "items", "values") or isinstance(parent, list)
             and isinstance(parent[key], (str, dict))]
    if not types:
        return json_edit(rnd, schema)
    parent, key, path = rnd.choice(types)
    n = rnd.choice(BOUNDARY_INTS + (16, 8))
    if rnd.random() < 0.5:  # the size a reader moves its position by
        new = {"type": "fixed", "name": f"f{rnd.randrange(10**6)}", "size": n}
    else:
        new = rnd.choice((
            {"type": "fixed", "name": f"d{rnd.randrange(10**6)}", "size": 16,
             "logicalType": "decimal", "precision": n, "scale": rnd.choice((0, 2, n))},
            {"type": "bytes", "logicalType": "decimal", "precision": n, "scale": 2},
            "long", "int", "string", "bytes", "boolean", "double", "null", ["null", "long"],
            {"type": "array", "items": "long"}, {"type": "map", "values": "bytes"},
            {"type": "record", "name": f"r{rnd.randrange(10**6)}", "fields": []},
            "no-such-type"))
    parent[key] = new
    return json.dumps(doc), f"{path} := {_show(new)}"


# ------------------------------------------------------------------------------ JSON


def _nodes(value, path: str, out: list) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((value, k, f"{path}.{k}"))
            _nodes(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((value, i, f"{path}[{i}]"))
            _nodes(v, f"{path}[{i}]", out)


def json_edit(rnd: random.Random, text: str) -> tuple[str, str]:
    """One node of the JSON document ``text`` changed (see the module doc)."""
    doc = json.loads(text)
    nodes: list = []
    _nodes(doc, "$", nodes)
    if not nodes:
        return json.dumps(rnd.choice(BOUNDARY_JSON)), "the document replaced"
    parent, key, path = rnd.choice(nodes)
    old = parent[key]
    op = rnd.choice(("replace", "replace", "replace", "number", "delete", "swap", "deep"))
    if op == "number" and isinstance(old, int) and not isinstance(old, bool):
        new = rnd.choice((old + 1, old - 1, -old, old * 2**32, -2**40, 2**31, -1))
        parent[key] = new
        what = f"{path} := {new}"
    elif op == "delete":
        del parent[key]
        what = f"delete {path}"
    elif op == "swap" and len(parent) > 1:
        other = rnd.choice([k for k in (parent if isinstance(parent, dict)
                                        else range(len(parent))) if k != key])
        parent[key], parent[other] = parent[other], parent[key]
        what = f"swap {path} with its sibling {other!r}"
    elif op == "deep":
        parent[key] = DEEP
        what = f"{path} := a list nested 3000 deep"
    else:
        new = rnd.choice(BOUNDARY_JSON)
        parent[key] = new
        what = f"{path} := {_show(new)}"
    out = json.dumps(doc)
    return out.replace(json.dumps(DEEP), "[" * 3000 + "1" + "]" * 3000), what


# ------------------------------------------------------------------------------ Arrow


def _boundary_array(rnd: random.Random, array: pa.Array, row: int) -> tuple[pa.Array, str]:
    """``array`` with one row set to a boundary value of its type."""
    t = array.type
    values = array.to_pylist()
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        new = rnd.choice((-1, 0, int(info.min), int(info.max), 2**31 - 1))
        new = max(int(info.min), min(int(info.max), new))
    elif pa.types.is_floating(t):
        new = rnd.choice((float("nan"), float("inf"), float("-inf"), -0.0))
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        new = rnd.choice(("", "\x00", "\uffff" * 3, "x" * 5000, "/nowhere/at/all.parquet"))
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        base = values[row] or b"\x01" * 24
        new = rnd.choice((b"", base[:len(base) // 2], base + b"\x00" * 8,
                          bytes(rnd.getrandbits(8) for _ in range(len(base)))))
    elif pa.types.is_boolean(t):
        new = not values[row]
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        new = rnd.choice(([], [None], (values[row] or []) * 2))
    else:
        return pa.nulls(len(array), t), "all null"
    values[row] = new
    try:
        return pa.array(values, t), f"row {row} := {_show(new)}"
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return pa.nulls(len(array), t), "all null"


def _column_edit(rnd: random.Random, array: pa.Array) -> tuple[pa.Array | None, str]:
    """A mutation of one column (None: drop it)."""
    if pa.types.is_struct(array.type) and array.type.num_fields and rnd.random() < 0.8:
        i = rnd.randrange(array.type.num_fields)
        fields = list(array.type)
        children = [array.field(j) for j in range(array.type.num_fields)]
        child, what = _column_edit(rnd, children[i])
        if child is None:
            del children[i], fields[i]
        else:
            children[i] = child
            fields[i] = pa.field(fields[i].name, child.type, metadata=fields[i].metadata)
        mask = array.is_null() if array.null_count else None
        return (pa.StructArray.from_arrays(children, fields=fields, mask=mask),
                f".{array.type.field(i).name} {what}")
    op = rnd.randrange(5)
    if op == 0 or len(array) == 0:
        return None, "dropped"
    if op == 1:
        return pa.nulls(len(array), array.type), "all null"
    if op == 2:
        other = rnd.choice((pa.string(), pa.int64(), pa.binary()))
        if other == pa.string():
            return pa.array([str(v) for v in array.to_pylist()], other), "as strings"
        return pa.nulls(len(array), other), f"replaced by {other} nulls"
    return _boundary_array(rnd, array, rnd.randrange(len(array)))


def table_edit(rnd: random.Random, table: pa.Table) -> tuple[pa.Table, str]:
    """One column (or nested field) of ``table`` mutated (see the module doc)."""
    i = rnd.randrange(table.num_columns)
    name = table.column_names[i]
    array, what = _column_edit(rnd, table.column(i).combine_chunks())
    if array is None:
        return table.remove_column(i), f"column {name} dropped"
    field = pa.field(name, array.type, metadata=table.schema.field(i).metadata)
    return table.set_column(i, field, array), f"column {name} {what}"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
