"""A one-line statistics builder for tests.

>>> t = make_stats(x=[(0, 4, 0), (6, 9, 1)], num_records=[10, 10])
>>> t.column("max_values").to_pylist()
[{'x': 4}, {'x': 9}]
"""

from __future__ import annotations

import pyarrow as pa

from prune_engine.stats import layout


def make_stats(num_records=None, types: dict | None = None, nan_count: dict | None = None, **columns):
    """Stats for containers from ``column=[(min, max, null_count), ...]`` (None = unknown).

    ``types`` gives Arrow types per column (inferred otherwise); ``nan_count`` maps float
    columns to per-container NaN counts.
    """
    types = types or {}
    n = len(next(iter(columns.values())))
    if num_records is None:
        num_records = [100] * n

    def struct(i, pick, cast=None):
        return {name: entries[i][pick] if entries[i] is not None else None for name, entries in columns.items()}

    def typ(name, idx):
        if name in types:
            return types[name]
        vals = [e[idx] for e in columns[name] if e is not None and e[idx] is not None]
        return pa.array(vals).type if vals else pa.int64()

    bound_type = pa.struct([(name, typ(name, 0)) for name in columns])
    count_type = pa.struct([(name, pa.int64()) for name in columns])
    data = {
        layout.CONTAINER: [f"c{i}" for i in range(n)],
        layout.NUM_RECORDS: pa.array(num_records, pa.int64()),
        layout.MIN_VALUES: pa.array([struct(i, 0) for i in range(n)], bound_type),
        layout.MAX_VALUES: pa.array([struct(i, 1) for i in range(n)], bound_type),
        layout.NULL_COUNT: pa.array([struct(i, 2) for i in range(n)], count_type),
    }
    if nan_count:
        data[layout.NAN_COUNT] = pa.array(
            [{k: v[i] for k, v in nan_count.items()} for i in range(n)],
            pa.struct([(k, pa.int64()) for k in nan_count]))
    return pa.table(data)
