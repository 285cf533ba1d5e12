"""NaN-free float columns: what proves that a container holds no NaN, and the user's promise.

NaN sorts above +inf (``amount > 250`` is TRUE for a NaN amount), and min/max leave NaN out,
so a float container whose ``nan_count`` is unknown keeps for every ``>``, ``>=``, ``!=``
and ``NOT IN``: its bounds cannot rule a NaN out. Where ``nan_count`` comes from:

- the footer's ``Statistics.nan_count`` (parquet-format 2.13, PARQUET-2249), where the writer
  set it; pyarrow and parquet-java (so Spark) do not (:mod:`.parquet`);
- ``0`` for an all-null chunk, and for a fully dictionary-encoded chunk whose dictionary page
  was read (``dictionaries=``) and holds no NaN (:mod:`.parquet`);
- the data, for the chunks ``compute_missing=True`` reads (:mod:`.computed`);
- the user: ``collect_stats(..., nan_free=["amount"])`` declares float columns NaN-free,
  which sets their ``nan_count`` to ``0`` in every container (this module).

A declaration is a promise the engine cannot check in general: if a declared column does
hold NaN, a query that matches only those NaN rows (``amount > 1e308``, ``isnan(amount)``)
can lose them. What the engine does see contradicts it loudly: a ``nan_count > 0`` in the
statistics (a footer's, or one computed from the data), or a NaN in a dictionary page read
for the column, is a :class:`~prune_engine.StatsError` naming the file and the column. The
declared names are kept in ``metadata["collect"]["nan_free"]``, so they travel with a saved
table and ``update_stats`` applies them to new files too.

>>> import pyarrow as pa
>>> stats = StatsTable(pa.table({"container": ["a"], "num_records": [2],
...     "min_values": [{"f": 1.0, "i": 1}], "max_values": [{"f": 2.0, "i": 2}],
...     "null_count": [{"f": 0, "i": 0}]}))
>>> declare_nan_free(stats, ["f"]).column("nan_count").to_pylist()
[{'f': 0}]
>>> declare_nan_free(stats, ["i"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
prune_engine.errors.StatsError: nan_free= names 'i', a column of type int64; only float ...
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError, listed
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable

__all__ = ["nan_free_names", "check_dictionaries", "declare_nan_free"]

#: the key of the declared names in ``metadata["collect"]``
OPTION = "nan_free"


def nan_free_names(value) -> list[str] | None:
    """``nan_free=`` as a list of column names (dotted paths for struct fields), or None.

    >>> nan_free_names("amount"), nan_free_names(["a", "st.b"]), nan_free_names([])
    (['amount'], ['a', 'st.b'], None)
    """
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value) \
        if isinstance(value, (list, tuple, set, frozenset)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise StatsError(f"nan_free= takes column names, not {value!r}")
    return list(dict.fromkeys(names)) or None


def check_dictionaries(footers: Iterable, names: Sequence[str] | None) -> None:
    """Raise when a dictionary page read for a declared column holds NaN (``footers``: the
    :class:`~prune_engine.stats.parquet.FileFooter` s of a collection)."""
    for footer in footers:
        for name in names or ():
            if name in footer.nan_dictionaries:
                raise StatsError(f"nan_free= declares {name!r} free of NaN, but {footer.path} "
                                 f"holds NaN in a dictionary page of {name!r}",
                                 column=name, containers=[footer.path])


def _leaves_by_name(stats: StatsTable
                    ) -> dict[str, tuple[tuple[str, ...], pa.DataType, str | None]]:
    """Every leaf of the statistics by its dotted name: ``(path, type, element kind)``."""
    if layout.MIN_VALUES not in stats.table.column_names:
        return {}
    return {".".join(path): (path, typ, element) for path, typ, element
            in layout.leaves(stats.schema.field(layout.MIN_VALUES).type)}


def declare_nan_free(stats: StatsTable, names: Sequence[str] | None) -> StatsTable:
    """``stats`` with ``nan_count`` 0 in every container for the float columns ``names``, and
    the names in ``metadata["collect"]["nan_free"]``.

    Raises :class:`~prune_engine.StatsError` for a name that is no column of the statistics,
    not a float, or a float inside a list or map; and when a container's ``nan_count`` of
    a declared column is above 0 (the declaration is false there).
    """
    if not names:
        return stats
    leaves = _leaves_by_name(stats)
    nan_count = stats.table.column(layout.NAN_COUNT).combine_chunks() \
        if layout.NAN_COUNT in stats.table.column_names else None
    for name in names:
        if name not in leaves:
            raise StatsError(f"nan_free= names {name!r}, which is not a column of the "
                             f"statistics; columns: {listed(leaves) or 'none'}", column=name)
        path, typ, element = leaves[name]
        if not pa.types.is_floating(typ):
            raise StatsError(f"nan_free= names {name!r}, a column of type {typ}; only float "
                             "columns can hold NaN", column=name)
        if element is not None:
            raise StatsError(f"nan_free= names {name!r}, whose statistics describe {element} "
                             "elements; only float columns outside lists and maps can be "
                             "declared", column=name)
        _refuse_counted_nans(stats, nan_count, name, path)
    zeros = pa.array(np.zeros(stats.num_rows, np.int64))
    column = nan_count if nan_count is not None else pa.array([{}] * stats.num_rows,
                                                              pa.struct([]))
    for name in names:
        column = layout.with_struct_leaf(column, leaves[name][0], zeros, keep_nulls=False)
    table = stats.table
    if layout.NAN_COUNT in table.column_names:
        table = table.set_column(table.column_names.index(layout.NAN_COUNT), layout.NAN_COUNT,
                                 column)
    else:
        table = table.add_column(table.column_names.index(layout.NULL_COUNT) + 1
                                 if layout.NULL_COUNT in table.column_names
                                 else table.num_columns, layout.NAN_COUNT, column)
    collect = {**(stats.metadata.get("collect") or {}), OPTION: list(names)}
    return StatsTable(table, {**stats.metadata, "collect": collect})


def _refuse_counted_nans(stats: StatsTable, nan_count: pa.StructArray | None, name: str,
                         path: tuple[str, ...]) -> None:
    """A container whose statistics count NaN in a declared column contradicts it."""
    counts = nan_count
    for key in path if nan_count is not None else ():
        index = counts.type.get_field_index(key)
        if index < 0:
            return
        counts = pc.struct_field(counts, [index])  # a null parent row: null
    if counts is None:
        return
    found = counts.fill_null(0).to_numpy(zero_copy_only=False) > 0
    if found.any():
        where = stats.table.column(layout.CONTAINER).take(
            pa.array(np.flatnonzero(found)[:10])).to_pylist() \
            if layout.CONTAINER in stats.table.column_names else np.flatnonzero(found)[:10].tolist()
        raise StatsError(f"nan_free= declares {name!r} free of NaN, but the statistics count "
                         f"NaN in it (nan_count > 0) in {int(found.sum())} container(s), "
                         f"first: {listed(map(str, where))}", column=name, containers=where)
