"""Binding: resolve the column names of a predicate against a statistics schema.

The data columns a predicate may name are the leaves of the ``min_values`` struct (nested
structs give dotted paths ``st.a``). Names resolve exactly first, then case-insensitively when
that is unambiguous (SQL users write ``X`` for ``x``). An unknown name is an
:class:`~prune_engine.errors.UnknownColumnError` listing the names the statistics know.

>>> import pyarrow as pa
>>> schema = pa.schema([("min_values", pa.struct([("st", pa.struct([("a", pa.int64())]))]))])
>>> StatsSchema(schema).resolve(("ST", "A")).path
('st', 'a')
"""

from __future__ import annotations

import pyarrow as pa

from prune_engine.errors import StatsError, UnknownColumnError
from prune_engine.stats import layout
from prune_engine.stats.layout import ColumnInfo


def _struct_paths(schema: pa.Schema, name: str) -> set[tuple[str, ...]]:
    if name not in schema.names:
        return set()
    t = schema.field(name).type
    return {p for p, _, _ in layout.leaves(t)} if pa.types.is_struct(t) else set()


class StatsSchema:
    """The data columns of a statistics schema, by path."""

    def __init__(self, schema: pa.Schema):
        if schema is None:
            schema = pa.schema([])
        self.schema = schema
        self.columns: dict[tuple[str, ...], ColumnInfo] = {}
        source = layout.MIN_VALUES if layout.MIN_VALUES in schema.names else layout.MAX_VALUES
        if source in schema.names:
            stype = schema.field(source).type
            if not pa.types.is_struct(stype):
                raise StatsError(f"stats column {source!r} must be a struct, not {stype}", column=source)
            nan_paths = _struct_paths(schema, layout.NAN_COUNT)
            ngram_cols = set()
            if layout.NGRAM_INDEX in schema.names and pa.types.is_struct(schema.field(layout.NGRAM_INDEX).type):
                ngram_cols = {f.name for f in schema.field(layout.NGRAM_INDEX).type}
            bloom_cols, set_cols = (
                {f.name for f in schema.field(name).type} if name in schema.names
                and pa.types.is_struct(schema.field(name).type) else set()
                for name in (layout.BLOOM_FILTER, layout.VALUE_SET))
            for path, type_, kind in layout.leaves(stype):
                self.columns[path] = ColumnInfo(
                    path, type_, kind,
                    has_nan_count=path in nan_paths,
                    ngram=len(path) == 1 and path[0] in ngram_cols and kind is None,
                    bloom=".".join(path) in bloom_cols and kind is None,
                    value_set=".".join(path) in set_cols and kind is None,
                )
        self._folded: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for path in self.columns:
            self._folded.setdefault(tuple(p.lower() for p in path), []).append(path)
        # a list column is named by its own path too (array_contains(tags, 'x'))
        self._prefixes = {p[:i] for p in self.columns for i in range(1, len(p))}

    def known(self) -> list[str]:
        return [".".join(p) for p in self.columns]

    def resolve(self, path: tuple[str, ...]) -> ColumnInfo:
        """The column at ``path`` (exact, else case-insensitive and unique), or an error."""
        if path in self.columns:
            return self.columns[path]
        if len(path) == 1 and "." in path[0]:
            split = tuple(path[0].split("."))
            if split in self.columns:
                return self.columns[split]
        matches = self._folded.get(tuple(p.lower() for p in path), [])
        if len(matches) == 1:
            return self.columns[matches[0]]
        raise UnknownColumnError(".".join(path), self.known())

    def resolve_list(self, path: tuple[str, ...]) -> ColumnInfo | None:
        """A list/map column named by its own path: the element leaf below it, if there is one
        (``tags`` -> ``tags`` itself when its element stats are a leaf)."""
        info = None
        try:
            info = self.resolve(path)
        except UnknownColumnError:
            pass
        if info is not None and info.element:
            return info
        for full, col in self.columns.items():
            if col.element and tuple(p.lower() for p in full[: len(path)]) == tuple(p.lower() for p in path):
                if len(full) == len(path) + 1 and full[-1] in ("element", "item"):
                    return col
        if path in self._prefixes or tuple(path) in self.columns:
            return None
        raise UnknownColumnError(".".join(path), self.known())
