"""Statistics tables for a :class:`~tests.oracle.data.Case`, built three ways, and made less precise.

- :func:`reference_stats`: exact statistics computed here in plain Python from the rows (an
  independent check of the engine that does not depend on prune_engine's own stats code).
- :func:`arrow_stats`: ``pe.stats_from_arrow(table, container="__cid")``.
- :func:`parquet_stats`: the containers written as the row groups of one Parquet file, read
  back by ``pe.collect_stats(path, granularity="row_group")``.

:func:`degrade` then makes any of them deliberately less precise while keeping it *sound*:
leaves blanked to null, whole stats structs nulled, ``num_records`` dropped, string and binary
bounds truncated (max incremented), numeric bounds widened. Every table returned has one row
per container of the case, in ``case.cids`` order, with ``container`` equal to the case's id.

>>> import random
>>> from tests.oracle.data import random_case
>>> case = random_case(random.Random(1))
>>> stats = reference_stats(case, random.Random(1))
>>> stats.column("container").to_pylist() == case.cids
True
"""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .data import CID, DEC, Case, Leaf, dec, int_range, to_f32
from prune_engine.stats.layout import element_field

# --------------------------------------------------------------------------- struct helpers


def _tree(leaves: list[Leaf]) -> dict:
    """Leaves arranged by path: ``{"st": {"a": Leaf, "b": {"c": Leaf}}, "x": Leaf}``."""
    root: dict = {}
    for leaf in leaves:
        node = root
        for part in leaf.path[:-1]:
            node = node.setdefault(part, {})
        node[leaf.path[-1]] = leaf
    return root


def _build(tree: dict, arrays: dict[str, pa.Array], leaf_type, mask=None) -> pa.StructArray:
    """A (nested) struct array whose leaves are ``arrays[leaf.name]`` typed ``leaf_type(leaf)``."""
    children, fields = [], []
    for name, node in tree.items():
        if isinstance(node, dict):  # a nested struct
            child = _build(node, arrays, leaf_type)
            children.append(child)
            fields.append(pa.field(name, child.type))
        else:
            typ = leaf_type(node)
            children.append(arrays[node.name].cast(typ))
            fields.append(element_field(name, typ) if node.element else pa.field(name, typ))
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


# --------------------------------------------------------------------------- reference stats


def _container_values(case: Case, leaf: Leaf, index: int) -> list:
    vals = [case.values[leaf.name][r] for r in case.rows_of(index)]
    if leaf.element:
        return [e for row in vals if row is not None for e in row]
    return vals


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def reference_stats(case: Case, rnd) -> pa.Table:
    """Exact statistics of every container, computed from the rows in plain Python.

    ``rnd`` picks between equally true descriptions: the sign of a zero bound (``-0.0 == 0.0``)
    and whether a list leaf's ``null_count`` counts null elements only or, as Parquet does,
    null and empty lists too.
    """
    mins: dict[str, list] = {}
    maxs: dict[str, list] = {}
    nulls: dict[str, list] = {}
    nans: dict[str, list] = {}
    for leaf in case.leaves:
        mins[leaf.name], maxs[leaf.name], nulls[leaf.name], nans[leaf.name] = [], [], [], []
        parquet_style = rnd.random() < 0.5
        for i in range(len(case.cids)):
            vals = _container_values(case, leaf, i)
            present = [v for v in vals if v is not None and not _is_nan(v)]
            lo = min(present) if present else None
            hi = max(present) if present else None
            if leaf.kind == "float":
                lo = rnd.choice([0.0, -0.0]) if lo == 0 else lo
                hi = rnd.choice([0.0, -0.0]) if hi == 0 else hi
            mins[leaf.name].append(lo)
            maxs[leaf.name].append(hi)
            n_null = sum(v is None for v in vals)
            if leaf.element and parquet_style:
                rows = [case.values[leaf.name][r] for r in case.rows_of(i)]
                n_null += sum(1 for row in rows if not row)
            nulls[leaf.name].append(n_null)
            nans[leaf.name].append(sum(_is_nan(v) for v in vals))
    tree = _tree(case.leaves)
    floats = [leaf for leaf in case.leaves if leaf.kind == "float"]
    arr = {name: pa.array(v, storage_type(case.leaf(name).type)) for name, v in mins.items()}
    columns = {
        "container": pa.array(case.cids, pa.string()),
        "num_records": pa.array(case.sizes, pa.int64()),
        "min_values": _build(tree, arr, lambda leaf: leaf.type),
        "max_values": _build(tree, {n: pa.array(v, storage_type(case.leaf(n).type)) for n, v in maxs.items()},
                             lambda leaf: leaf.type),
        "null_count": _build(tree, {n: pa.array(v, pa.int64()) for n, v in nulls.items()},
                             lambda leaf: pa.int64()),
    }
    if floats:
        columns["nan_count"] = _build(_tree(floats), {n: pa.array(v, pa.int64()) for n, v in nans.items()},
                                      lambda leaf: pa.int64())
    return pa.table(columns)


def storage_type(typ: pa.DataType) -> pa.DataType:
    """The type our Python storage values convert to directly (dates and timestamps as ints)."""
    if pa.types.is_timestamp(typ):
        return pa.int64()
    if pa.types.is_date32(typ):
        return pa.int32()
    return typ


# --------------------------------------------------------------------------- engine sources


def align(case: Case, stats: pa.Table, ids: list[str]) -> pa.Table:
    """Reorder engine stats to ``case.cids`` (``ids`` = each stats row's case id); containers the
    source could not see (empty ones) get a row with ``num_records = 0`` and nothing else."""
    if hasattr(stats, "to_arrow"):
        stats = stats.to_arrow()
    stats = stats.set_column(stats.schema.get_field_index("container"), "container", pa.array(ids, pa.string()))
    missing = [c for c in case.cids if c not in set(ids)]
    if missing:
        extra = pa.Table.from_pylist([{"container": c, "num_records": 0} for c in missing], schema=stats.schema)
        stats = pa.concat_tables([stats, extra])
    order = {c: i for i, c in enumerate(stats.column("container").to_pylist())}
    return stats.take(pa.array([order[c] for c in case.cids]))


def arrow_stats(case: Case) -> pa.Table:
    """``pe.stats_from_arrow`` over the table, containers named by :data:`~tests.oracle.data.CID`."""
    import prune_engine as pe

    stats = pe.stats_from_arrow(case.table, container=CID)
    if hasattr(stats, "to_arrow"):
        stats = stats.to_arrow()
    return align(case, stats, stats.column("container").to_pylist())


def write_parquet(case: Case, path, **options) -> None:
    """One Parquet row group per container (empty ones included), without the id column;
    ``options`` go to ``pq.ParquetWriter`` (``use_deprecated_int96_timestamps=True,
    store_schema=False`` writes timestamps as Spark does)."""
    data = case.table.drop_columns([CID])
    with pq.ParquetWriter(path, data.schema, **options) as writer:
        offset = 0
        for n in case.sizes:
            writer.write_table(data.slice(offset, n), row_group_size=max(n, 1))
            offset += n


def parquet_stats(case: Case, path, collect: dict | None = None, **options
                  ) -> tuple[pa.Table, Case]:
    """``pe.collect_stats`` (with the options ``collect``) over the containers written as the
    row groups of one file (with the writer's ``options``), and the case as the file holds it:
    Parquet has no seconds, so a ``timestamp[s]`` column comes back in milliseconds, and text
    meets it as a millisecond column (the case itself when no type changed). INT96 timestamps
    are read in microseconds, as Spark reads them."""
    import dataclasses

    import prune_engine as pe

    write_parquet(case, path, **options)
    stats = pe.collect_stats(str(path), granularity="row_group", progress=False,
                             **(collect or {}))
    if hasattr(stats, "to_arrow"):
        stats = stats.to_arrow()
    groups = stats.column("row_group").to_pylist()
    data = pq.read_table(path, coerce_int96_timestamp_unit="us")
    if data.schema != case.table.drop_columns([CID]).schema:
        case = dataclasses.replace(case, table=data.append_column(CID, case.table.column(CID)))
    return align(case, stats, [case.cids[g] for g in groups]), case


# --------------------------------------------------------------------------- degradation


def degrade(stats: pa.Table, rnd, level: float = 0.3) -> pa.Table:
    """A less precise but still sound copy of ``stats`` (see the module doc).

    ``level`` is the probability of each kind of damage being applied at all.
    """
    out = stats
    n = stats.num_rows
    for name in ("min_values", "max_values", "null_count", "nan_count"):
        if name not in out.column_names:
            continue
        col = out.column(name).combine_chunks()
        if rnd.random() < level:  # null whole structs for some containers
            col = _with_mask(col, [rnd.random() < 0.3 for _ in range(n)])
        col = _degrade_struct(col, name, rnd, level)
        out = out.set_column(out.schema.get_field_index(name), out.schema.field(name), col)
    if "nan_count" in out.column_names and rnd.random() < level / 3:
        out = out.drop_columns(["nan_count"])
    if rnd.random() < level:
        mask = pa.array([rnd.random() < 0.3 for _ in range(n)])
        idx = out.schema.get_field_index("num_records")
        nr = pc.if_else(mask, pa.scalar(None, pa.int64()), out.column("num_records").combine_chunks().cast(pa.int64()))
        out = out.set_column(idx, out.schema.field("num_records"), nr.cast(out.schema.field("num_records").type))
    return out


def blank(stats: pa.Table, name: str) -> pa.Table:
    """``stats`` with the struct column ``name`` unknown (null) for every container."""
    col = stats.column(name).combine_chunks()
    return stats.set_column(stats.schema.get_field_index(name), stats.schema.field(name),
                            _with_mask(col, [True] * len(col)))


def _with_mask(col: pa.StructArray, extra: list[bool]) -> pa.StructArray:
    mask = [bool(a) or b for a, b in zip(col.is_null().to_pylist(), extra)]
    return pa.StructArray.from_arrays([col.field(i) for i in range(col.type.num_fields)],
                                      fields=list(col.type), mask=pa.array(mask))


def _degrade_struct(col: pa.StructArray, stat: str, rnd, level: float) -> pa.StructArray:
    children = []
    for i, f in enumerate(col.type):
        child = col.field(i)
        if pa.types.is_struct(f.type):
            child = _degrade_struct(child, stat, rnd, level)
        else:
            child = _degrade_leaf(child, stat, rnd, level)
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=list(col.type), mask=col.is_null())


def _degrade_leaf(arr: pa.Array, stat: str, rnd, level: float) -> pa.Array:
    typ = arr.type
    if rnd.random() < level:  # blank some leaves to unknown
        arr = pc.if_else(pa.array([rnd.random() < 0.3 for _ in range(len(arr))]), pa.scalar(None, typ), arr)
    if stat not in ("min_values", "max_values") or rnd.random() >= level:
        return arr
    upper = stat == "max_values"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ):
        return pa.array([_truncate(v, upper, rnd) for v in arr.to_pylist()], typ)
    return _widen(arr, upper, rnd)


def _truncate(v, upper: bool, rnd):
    """A prefix of ``v`` as a lower bound, or a prefix with its last unit incremented as an upper
    bound (None when no such prefix exists: unknown)."""
    if v is None or len(v) == 0:
        return v
    k = rnd.randint(0, len(v) - 1)
    if not upper:
        return v[:k]
    units = list(v)  # code points of a str, ints of bytes
    units = units[: k + 1]
    top = 0x10FFFF if isinstance(v, str) else 0xFF
    while units:
        last = units.pop()
        u = last if isinstance(last, int) else ord(last)
        if u < top:
            u += 1
            if isinstance(v, str) and 0xD800 <= u <= 0xDFFF:
                u = 0xE000
            if isinstance(v, str):
                return "".join(units) + chr(u)
            return bytes(units) + bytes([u])
    return None


def _widen(arr: pa.Array, upper: bool, rnd) -> pa.Array:
    """Move bounds outward (min down, max up), staying inside the type."""
    typ = arr.type
    sign = 1 if upper else -1
    if pa.types.is_integer(typ) or pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        storage = pa.int64() if not pa.types.is_date32(typ) else pa.int32()
        ints = arr.cast(storage).to_pylist() if not pa.types.is_integer(typ) else arr.to_pylist()
        lo, hi = int_range(typ if pa.types.is_integer(typ) else storage)
        out = [None if v is None else min(hi, max(lo, v + sign * rnd.choice([1, 7, 1000, 10**9])))
               for v in ints]
        return pa.array(out, storage if not pa.types.is_integer(typ) else typ).cast(typ)
    if pa.types.is_floating(typ):
        f32 = typ == pa.float32()
        out = []
        for v in arr.to_pylist():
            if v is None or math.isinf(v):
                out.append(v)
                continue
            w = rnd.choice([math.nextafter(v, sign * math.inf), v + sign * (abs(v) * 0.5 + 1), sign * math.inf])
            out.append(to_f32(w) if f32 else w)
        return pa.array(out, typ)
    if pa.types.is_decimal(typ):
        limit = dec(10 ** typ.precision - 1, typ.scale)
        step = dec(sign * rnd.choice([1, 10, 12345]), typ.scale)
        out = [None if v is None else min(limit, max(DEC.minus(limit), DEC.add(v, step))) for v in arr.to_pylist()]
        return pa.array(out, typ)
    return arr  # bool: nothing wider exists
