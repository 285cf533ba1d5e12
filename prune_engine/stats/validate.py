"""Validation of the statistics layout (the per-container checks live where the values are
read, in :mod:`prune_engine.evaluate.context`: negative counts, more nulls than records, and
min > max are found there, for the columns a predicate touches).

>>> import pyarrow as pa
>>> check_layout(pa.schema([("container", pa.string())]))
Traceback (most recent call last):
...
prune_engine.errors.StatsError: statistics table is missing column 'num_records' (int64 row counts); it has: container
"""

from __future__ import annotations

import pyarrow as pa

from prune_engine.errors import StatsError, listed
from prune_engine.stats import layout

_REQUIRED = {
    layout.NUM_RECORDS: "int64 row counts",
    layout.MIN_VALUES: "struct of lower bounds",
    layout.MAX_VALUES: "struct of upper bounds",
    layout.NULL_COUNT: "struct of int64 null counts",
}


def _types(struct_type: pa.DataType) -> dict[tuple[str, ...], pa.DataType]:
    return {path: t for path, t, _ in layout.leaves(struct_type)}


def check_layout(schema: pa.Schema) -> None:
    """Raise :class:`~prune_engine.errors.StatsError` for a missing or mistyped stats column."""
    names = schema.names
    for name, what in _REQUIRED.items():
        if name not in names:
            raise StatsError(f"statistics table is missing column {name!r} ({what}); it has: {listed(names)}",
                             column=name)
    if not pa.types.is_integer(schema.field(layout.NUM_RECORDS).type):
        raise StatsError(f"column {layout.NUM_RECORDS!r} must be an integer type, not "
                         f"{schema.field(layout.NUM_RECORDS).type}", column=layout.NUM_RECORDS)
    for name in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT, layout.NAN_COUNT, layout.NGRAM_INDEX,
                 layout.BLOOM_FILTER, layout.VALUE_SET):
        if name in names and not pa.types.is_struct(schema.field(name).type):
            raise StatsError(f"column {name!r} must be a struct, not {schema.field(name).type}", column=name)
    for name in (layout.NULL_COUNT, layout.NAN_COUNT):
        if name in names:
            for path, t in _types(schema.field(name).type).items():
                if not pa.types.is_integer(t):
                    col = ".".join((name,) + path)
                    raise StatsError(f"count column {col!r} must be an integer type, not {t}", column=col)
    lows = _types(schema.field(layout.MIN_VALUES).type)
    highs = _types(schema.field(layout.MAX_VALUES).type)
    for path in lows.keys() & highs.keys():
        if lows[path] != highs[path]:
            col = ".".join(path)
            raise StatsError(f"min_values.{col} is {lows[path]} but max_values.{col} is {highs[path]}",
                             column=f"{layout.MAX_VALUES}.{col}")
    for index in (layout.NGRAM_INDEX, layout.BLOOM_FILTER):
        if index not in names:
            continue
        for f in schema.field(index).type:
            if not (pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)):
                col = f"{index}.{f.name}"
                raise StatsError(f"index column {col!r} must be binary, not {f.type}", column=col)
    if layout.VALUE_SET in names:
        for f in schema.field(layout.VALUE_SET).type:
            if not (pa.types.is_list(f.type) or pa.types.is_large_list(f.type)):
                col = f"{layout.VALUE_SET}.{f.name}"
                raise StatsError(f"value-set column {col!r} must be a list, not {f.type}", column=col)
