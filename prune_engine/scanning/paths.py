"""Column paths: what a projection names, resolved against the data schema.

A path walks the Arrow type tree from the top-level columns. Struct fields are named; a list
is stepped through without a name (``orders.price`` is the ``price`` of every element of the
list ``orders``); a map has two children, ``key`` and ``value``. Four spellings name a path:

- dotted text, ``"user.address.city"``;
- backticks around a name that contains dots, ``"`a.b`.c"`` (a doubled backtick is a backtick);
- integer paths, ``[2, 0, 1]``: the index of the field at each struct level (lists stepped
  through; a map's key is 0, its value 1), the low-level form of Paimon's nested projection;
- in a predicate, a column node's tuple of names (``Column(("a.b", "c"))``).

Unquoted dotted text is resolved every way a field name containing dots could split it; more
than one resolution is an ambiguity error listing the quoted spellings, none an unknown-path
error naming the nearest existing path. A path that continues past a scalar is an error too.
Nothing is ever silently dropped.

A resolved path is a :class:`FieldPath`: the child indices through the type tree (a list's
element is child 0; a map's key 0 and value 1), the names a user sees, and the kind of every
step. Selections of several paths merge into a trie (:func:`add_path`), and
:func:`select_type` gives the type that holds exactly the selected parts: a struct keeps its
selected children in schema order, a list keeps its shape around the selected element parts,
and a map stays a map (its keys are always kept: a map without keys is no map; a map of which
only the keys are selected has ``null``-typed values).

>>> schema = pa.schema([("user", pa.struct([("id", pa.int64()),
...                                          ("address", pa.struct([("city", pa.string())]))])),
...                     ("orders", pa.list_(pa.struct([("price", pa.float64()),
...                                                    ("qty", pa.int32())])))])
>>> resolve(schema, "user.address.city").indices
(0, 1, 0)
>>> trie = {}
>>> add_path(trie, resolve(schema, "orders.price"))
>>> select_type(schema.field("orders").type, trie[1])
ListType(list<item: struct<price: double>>)
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence, Union

import pyarrow as pa

from prune_engine._arrow_types import is_list_type
from prune_engine.errors import ColumnPathError

__all__ = ["FieldPath", "resolve", "resolve_names", "add_path", "select_type", "quote",
           "display", "PathLike"]

#: one projection entry: dotted text or a sequence of field indices
PathLike = Union[str, Sequence[int]]

FIELD, ELEMENT, KEY, VALUE = "field", "element", "key", "value"

#: a trie entry selecting the whole subtree below it
WHOLE = None


@dataclass(frozen=True)
class FieldPath:
    """A resolved path: ``indices`` through the type tree (one per step, lists included),
    ``kinds`` of those steps (``field``, ``element``, ``key``, ``value``) and ``names``, the
    user-visible names (no entry for list steps), and ``type``, the type it ends at."""

    indices: tuple[int, ...]
    kinds: tuple[str, ...]
    names: tuple[str, ...]
    type: pa.DataType

    @property
    def text(self) -> str:
        """The path as dotted text, quoted where a name needs it."""
        return display(self.names)

    def steps(self) -> list[tuple[str, str | None]]:
        """(kind, name) per step; list steps have no name."""
        names = iter(self.names)
        return [(k, None if k == ELEMENT else next(names)) for k in self.kinds]

    @property
    def through_elements(self) -> bool:
        """True when the path steps into list or map elements."""
        return any(k != FIELD for k in self.kinds)


def quote(name: str) -> str:
    """``name`` as one dotted-path segment: backticks when it holds a dot or a backtick.

    >>> quote("city"), quote("a.b"), quote("x`y")
    ('city', '`a.b`', '`x``y`')
    """
    if name and "." not in name and "`" not in name:
        return name
    return "`" + name.replace("`", "``") + "`"


def display(names: Sequence[str]) -> str:
    return ".".join(quote(n) for n in names)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """Split dotted text into ``(segment, quoted)``; backticks quote, doubled ones escape."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == "`":
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise ColumnPathError(f"column path {text!r}: unclosed backtick at "
                                          f"position {i}", text)
                if text[j] == "`":
                    if j + 1 < n and text[j + 1] == "`":
                        buf.append("`")
                        j += 2
                        continue
                    break
                buf.append(text[j])
                j += 1
            out.append(("".join(buf), True))
            i = j + 1
            if i < n and text[i] != ".":
                raise ColumnPathError(f"column path {text!r}: expected '.' after the quoted "
                                      f"name at position {i}", text)
        else:
            j = text.find(".", i)
            j = n if j < 0 else j
            out.append((text[i:j], False))
            i = j
        if i >= n:
            return out
        i += 1  # the dot
        if i >= n:
            raise ColumnPathError(f"column path {text!r} ends with a dot", text)


def _children(t: pa.DataType) -> list[tuple[str, int, str, pa.DataType]]:
    """The named children one step below a value of type ``t`` (lists stepped through)."""
    if pa.types.is_struct(t):
        return [(t.field(i).name, i, FIELD, t.field(i).type) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return [("key", 0, KEY, t.key_type), ("value", 1, VALUE, t.item_type)]
    return []


def _through_lists(t: pa.DataType) -> tuple[list[int], list[str], pa.DataType]:
    idx, kinds = [], []
    while is_list_type(t):
        idx.append(0)
        kinds.append(ELEMENT)
        t = t.value_type
    return idx, kinds, t


def all_paths(schema: pa.Schema, limit: int = 5000) -> list[str]:
    """Every path a projection may name (dotted, quoted where needed), parents first."""
    out: list[str] = []

    def walk(names: tuple[str, ...], t: pa.DataType):
        if len(out) >= limit:
            return
        out.append(display(names))
        _, _, inner = _through_lists(t)
        for name, _, _, ct in _children(inner):
            walk(names + (name,), ct)

    for f in schema:
        walk((f.name,), f.type)
    return out


def _nearest(schema: pa.Schema, text: str) -> str | None:
    known = all_paths(schema)
    close = difflib.get_close_matches(text, known, n=1, cutoff=0.0)
    return close[0] if close else None


def _unknown(schema: pa.Schema, text: str, reason: str) -> ColumnPathError:
    nearest = _nearest(schema, text)
    hint = f"; the nearest existing path is {nearest!r}" if nearest else ""
    return ColumnPathError(f"unknown column path {text!r}: {reason}{hint}", text, nearest)


def _walk_names(schema: pa.Schema, segments: list[tuple[str, bool]], text: str
                ) -> list[FieldPath]:
    """Every resolution of ``segments``: unquoted neighbours may join into one dotted name."""
    results: list[FieldPath] = []
    failures: list[str] = []
    top = pa.struct(list(schema))

    def go(pos: int, t: pa.DataType, acc_i: list, acc_k: list, acc_n: list):
        if pos == len(segments):
            results.append(FieldPath(tuple(acc_i), tuple(acc_k), tuple(acc_n), t))
            return
        list_i, list_k, inner = _through_lists(t)
        children = _children(inner)
        if not children:
            failures.append(f"{display(acc_n)} is a {t}, not a struct or map; it has no field "
                            f"{segments[pos][0]!r}")
            return
        by_name = {name: (i, k, ct) for name, i, k, ct in children}
        found = False
        for end in range(pos + 1, len(segments) + 1):
            if end > pos + 1 and any(q for _, q in segments[pos:end]):
                break  # a quoted segment never joins its neighbours
            name = ".".join(s for s, _ in segments[pos:end])
            hit = by_name.get(name)
            if hit is not None:
                found = True
                i, k, ct = hit
                go(end, ct, acc_i + list_i + [i], acc_k + list_k + [k], acc_n + [name])
        if not found:
            where = display(acc_n) if acc_n else "the schema"
            failures.append(f"{where} has no field {segments[pos][0]!r} (its fields: "
                            f"{', '.join(quote(n) for n, *_ in children[:20])})")

    go(0, top, [], [], [])
    if not results:
        raise _unknown(schema, text, failures[-1] if failures else "no such column")
    return results


def resolve(schema: pa.Schema, path: PathLike) -> FieldPath:
    """The one field path ``path`` names in ``schema``, or a :class:`ColumnPathError`.

    >>> s = pa.schema([("a.b", pa.int8()), ("a", pa.struct([("b", pa.int8())]))])
    >>> resolve(s, "`a.b`").indices, resolve(s, "`a`.b").indices, resolve(s, [1, 0]).indices
    ((0,), (1, 0), (1, 0))
    >>> try:
    ...     resolve(s, "a.b")
    ... except ColumnPathError as e:
    ...     e.candidates
    ['a.b', '`a.b`']
    """
    if isinstance(path, str):
        if not path:
            raise ColumnPathError("a column path cannot be empty", path)
        found = _walk_names(schema, _tokens(path), path)
        if len(found) > 1:
            spellings = [display(f.names) for f in found]
            raise ColumnPathError(
                f"ambiguous column path {path!r}: it names {len(found)} columns; quote the "
                f"dotted names with backticks to choose one of: {', '.join(spellings)}",
                path, candidates=spellings)
        return found[0]
    return _resolve_indices(schema, path)


def _resolve_indices(schema: pa.Schema, path) -> FieldPath:
    try:
        steps = [int(i) for i in path]
        if any(isinstance(i, bool) for i in path) or any(int(i) != i for i in path):
            raise TypeError
    except (TypeError, ValueError):
        raise ColumnPathError(f"a column path is dotted text or a sequence of field indices, "
                              f"not {path!r}", repr(path)) from None
    if not steps:
        raise ColumnPathError("an integer column path cannot be empty", repr(path))
    t: pa.DataType = pa.struct(list(schema))
    acc_i: list[int] = []
    acc_k: list[str] = []
    acc_n: list[str] = []
    for pos, step in enumerate(steps):
        list_i, list_k, inner = _through_lists(t)
        children = _children(inner)
        if not children:
            raise _unknown(schema, str(steps), f"{display(acc_n)} is a {t}; it has no child "
                           f"at index {step} (position {pos})")
        if not 0 <= step < len(children):
            where = display(acc_n) if acc_n else "the schema"
            raise _unknown(schema, str(steps), f"{where} has {len(children)} children; index "
                           f"{step} at position {pos} is out of range")
        name, i, k, t = children[step]
        acc_i += list_i + [i]
        acc_k += list_k + [k]
        acc_n.append(name)
    return FieldPath(tuple(acc_i), tuple(acc_k), tuple(acc_n), t)


def resolve_names(schema: pa.Schema, names: tuple[str, ...]) -> FieldPath:
    """The path of a predicate's column (a tuple of names, each one field name).

    Exact first; then a single name holding dots read as dotted text; then case-insensitively
    when exactly one path matches (as the statistics binder does).
    """
    exact = _walk_names_exact(schema, names)
    if exact is not None:
        return exact
    if len(names) == 1 and "." in names[0]:
        try:
            return resolve(schema, names[0])
        except ColumnPathError:
            pass
    folded = _walk_names_exact(schema, names, fold=True)
    if folded is not None:
        return folded
    raise _unknown(schema, display(names), "no such column")


def _walk_names_exact(schema: pa.Schema, names: tuple[str, ...], fold: bool = False
                      ) -> FieldPath | None:
    found: list[FieldPath] = []

    def go(pos, t, acc_i, acc_k, acc_n):
        if pos == len(names):
            found.append(FieldPath(tuple(acc_i), tuple(acc_k), tuple(acc_n), t))
            return
        list_i, list_k, inner = _through_lists(t)
        for name, i, k, ct in _children(inner):
            same = name.lower() == names[pos].lower() if fold else name == names[pos]
            if same:
                go(pos + 1, ct, acc_i + list_i + [i], acc_k + list_k + [k], acc_n + [name])

    go(0, pa.struct(list(schema)), [], [], [])
    return found[0] if len(found) == 1 else None


# ------------------------------------------------------------------------------ selections


def add_path(trie: dict, path: FieldPath) -> None:
    """Select ``path`` (and everything below it) in ``trie`` (``{index: subtrie | WHOLE}``)."""
    node = trie
    for depth, i in enumerate(path.indices):
        last = depth == len(path.indices) - 1
        if i in node and node[i] is WHOLE:
            return  # already selected whole
        if last:
            node[i] = WHOLE
        else:
            node = node.setdefault(i, {})


def select_type(t: pa.DataType, trie: dict | None) -> pa.DataType:
    """The part of type ``t`` that ``trie`` selects (``WHOLE``: all of it)."""
    if trie is WHOLE:
        return t
    if pa.types.is_struct(t):
        return pa.struct([select_field(t.field(i), trie[i]) for i in range(t.num_fields)
                          if i in trie])
    if pa.types.is_map(t):
        key = t.key_field
        item = select_field(t.item_field, trie[1]) if 1 in trie else \
            pa.field(t.item_field.name, pa.null())
        return pa.map_(key, item, keys_sorted=t.keys_sorted)
    if pa.types.is_large_list(t):
        return pa.large_list(select_field(t.value_field, trie[0]))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(select_field(t.value_field, trie[0]), t.list_size)
    if is_list_type(t):
        return pa.list_(select_field(t.value_field, trie[0]))
    return t


def select_field(f: pa.Field, trie: dict | None) -> pa.Field:
    return pa.field(f.name, select_type(f.type, trie), f.nullable, f.metadata)


def select_schema(schema: pa.Schema, trie: dict, order: Sequence[int] | None = None
                  ) -> pa.Schema:
    """The selected top-level columns (in ``order``, default: first selected first)."""
    order = list(trie) if order is None else order
    return pa.schema([select_field(schema.field(i), trie[i]) for i in order])
