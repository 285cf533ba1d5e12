"""The row-level filter: a predicate evaluated on the rows the scan read, with SQL semantics.

Pruning only skips row groups that cannot match; the rows of the kept row groups are then
filtered here, with the semantics the pruning assumed (:mod:`prune_engine.evaluate.checks`),
on the public expression tree (:mod:`prune_engine.expr.nodes`), translated to
``pyarrow.compute`` where its semantics are SQL's and corrected where they are not:

=======================  =========================================================
construct                row semantics (what pyarrow alone would get wrong)
=======================  =========================================================
``AND OR NOT``           Kleene three-valued logic; a row is kept only where TRUE
``= != < <= > >=``       NULL if a side is NULL; NaN = NaN and NaN above +inf (IEEE
                         says NaN = NaN is false); ``-0.0 = 0.0``; strings by UTF-8
                         bytes; a naive timestamp is UTC against a zoned one; a date
                         against a timestamp is its midnight; a DECIMAL against a
                         DOUBLE compares as DOUBLE (the decimal correctly rounded);
                         decimals and exact literals compare exactly, to 38 digits
                         and past them; ``int_col = 2.5`` is FALSE
``IN (...)``             TRUE if some item is equal, else NULL if ``x`` or an item is
                         NULL, else FALSE (NaN in ``(NaN)``; ``-0.0`` in ``(0.0)``)
``IS [NOT] DISTINCT``    NULL-safe equality with the same NaN rule
``LIKE``                 case-sensitive, ``%`` ``_`` on characters, no default escape
``ILIKE``                ``lower(x) LIKE lower(pattern)``
``regexp_matches``       a search (RE2 syntax, as DuckDB)
``+ - *``, unary ``-``   exact (overflow is an error, not a wrap-around; decimals
                         past 38 digits are computed in decimal256)
date, timestamp text     read as the pruning reads it (years past 9999, ``(BC)``,
                         zones, nanoseconds; no zone is UTC), as the type it is cast
                         or compared to; text finer than that type's unit, or beyond
                         its range, is an error (engines round, truncate or fail)
=======================  =========================================================

List and map elements. NOT is first pushed down to the predicates with their SQL complements
(:func:`negation_normal_form`: ``NOT (x < 5)`` is ``x >= 5``, also inside ``IS [NOT]
TRUE/FALSE``), so that a predicate means the same however its NOT was written. Then a
predicate whose column path steps into list or map elements (``orders.price``,
``attrs.key``) is an *existential* test: TRUE when some element makes it TRUE, FALSE
otherwise (a NULL or empty list included), never NULL. Its SQL form is
``EXISTS (SELECT 1 FROM UNNEST(orders) AS o WHERE o.price > 100)``; in DuckDB,
``len(list_filter(coalesce(orders, []), lambda o: o.price > 100)) > 0``. So
``NOT (orders.price > 100)`` is "some element has ``price <= 100``" (not "no element is above
100"), and ``orders.price > 100 AND orders.qty < 5`` may be met by two different elements;
columns of the same elements within one predicate (``orders.price > orders.discount``) are
the same element. ``array_contains(list, v)`` (also ``list_contains``, ``list_has``) is
DuckDB's ``list_contains``: NULL for a NULL list or value, TRUE if an element equals ``v``,
else FALSE; ``NOT array_contains(...)`` negates that result (it is the spelling of "no
element equals ``v``").

Anything else (an unknown function, a cast whose semantics differ between engines, a struct or
a whole list compared to a value, elements of two different lists in one predicate) is a
:class:`~prune_engine.errors.ScanError` when the filter is bound, before any data is read:
the scan never applies a filter it cannot evaluate exactly.

>>> import pyarrow as pa
>>> from prune_engine.expr.convert import to_expr
>>> t = pa.table({"x": [1.0, float("nan"), None], "o": [[{"p": 5}], [], None]})
>>> RowFilter(to_expr("x > 1e300 OR o.p = 5"), t.schema).mask(t.to_batches()[0]).to_pylist()
[True, True, False]
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import is_list_type, is_string_type
from prune_engine.compiler.rules import push_not
from prune_engine.errors import PruneEngineError, ScanError, TypeMismatchError
from prune_engine.evaluate.domains import UNIT_NS, TimestampText, read_text_as, read_timestamp_text
from prune_engine.expr import like as likes
from prune_engine.expr import nodes as n
from prune_engine.scanning.paths import ELEMENT, FIELD, KEY, FieldPath, resolve_names
from prune_engine.scanning.shape import list_elements, struct_child
from prune_engine.stats.unify import plain_values

__all__ = ["RowFilter", "ARRAY_CONTAINS"]

ARRAY_CONTAINS = "array_contains"
IN = "in"  # the SQL front end's x IN (items that are not all literals)
NOT_IN = "__scan_not_in"  # its complement, made by negation_normal_form


def negation_normal_form(e: n.Expr) -> n.Expr:
    """``e`` with every NOT pushed down to the predicates, with their SQL complements
    (``NOT (x < 5)`` is ``x >= 5``, ``NOT b`` is ``b = FALSE``: both NULL for a NULL ``x`` or
    ``b``). Only ``NOT array_contains(...)`` and unknown functions keep their NOT.

    The walk is the pruning's (:func:`~prune_engine.compiler.rules.push_not`); the predicates
    whose complement differs here are :func:`row_leaf`'s.

    >>> str(negation_normal_form(n.Not(n.And((n.Compare("<", n.Column("x"), n.Literal(5)),
    ...     n.Column("b"))))))
    'x >= 5 OR b = FALSE'
    """
    return push_not(e, leaf=row_leaf)


def row_leaf(e: n.Expr, negate: bool) -> n.Expr | None:
    """The row filter's leaf rule for :func:`~prune_engine.compiler.rules.push_not`, where it
    differs from the pruning's (None: the shared exact complement). The row filter must be
    exact, so ``IS [NOT] TRUE/FALSE`` and ``IS [NOT] DISTINCT FROM`` flip their flag instead of
    being widened, with the NOTs inside the tested predicate pushed down too; a bare boolean
    column stays one (its type is checked when bound); and ``x IN (y, ...)`` (items that are
    not all literals) negates to ``x NOT IN (y, ...)``, an existential test over list elements
    like every other predicate (``NOT (orders.p IN (id, 1))`` is "some element is neither").

    >>> str(row_leaf(n.IsBool(n.Not(n.Column("b")), True), negate=True))
    '(b = FALSE) IS NOT TRUE'
    """
    if isinstance(e, n.IsBool):
        return n.IsBool(negation_normal_form(e.arg), e.value, e.negated != negate)
    if isinstance(e, n.IsDistinct):
        return n.IsDistinct(e.left, e.right, e.negated != negate)
    if isinstance(e, n.Column) and not negate:
        return e
    if isinstance(e, n.Func) and e.name in (IN, NOT_IN) and negate:
        return n.Func(NOT_IN if e.name == IN else IN, e.args)
    return None


_ATOMS = (n.Compare, n.IsNull, n.IsDistinct, n.InList, n.Like, n.RegexpLike, n.Column,
          n.Literal, n.Func)
_PC_COMPARE = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
               ">": pc.greater, ">=": pc.greater_equal}
_PC_ARITH = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}
#: long IN lists are tested with one hash lookup instead of a chain of comparisons
_IS_IN_MIN = 16


@dataclass(frozen=True)
class Lit:
    """A literal not yet typed: it takes the type of what it is compared with."""

    value: Any
    type: pa.DataType | None = None


def _last_element(fp: FieldPath) -> int:
    return max(i for i, k in enumerate(fp.kinds) if k != FIELD)


def _is_nested(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or pa.types.is_map(t) or is_list_type(t)


class RowFilter:
    """``expr`` bound to the data ``schema``: which columns it reads (:attr:`paths`) and, per
    batch of rows, the keep-mask (:meth:`mask`)."""

    def __init__(self, expr: n.Expr, schema: pa.Schema):
        self.expr = negation_normal_form(expr)
        self.schema = schema
        #: per column node, its path; ``("contains", column)`` for array_contains' list,
        #: whose path continues into the elements
        self.bound: dict = {}
        self._bind(self.expr)

    @property
    def paths(self) -> list[FieldPath]:
        """The column paths the filter reads."""
        return list(self.bound.values())

    # binding ------------------------------------------------------------------------------
    def _column(self, c: n.Column) -> FieldPath:
        fp = self.bound.get(c)
        if fp is None:
            fp = self.bound[c] = resolve_names(self.schema, c.path)
        return fp

    def _fp(self, c: n.Column, atom: n.Expr) -> FieldPath:
        if isinstance(atom, n.Func) and atom.name == ARRAY_CONTAINS and atom.args[0] == c:
            return self.bound["contains", c]
        return self.bound[c]

    def _bind(self, e: n.Expr) -> None:
        if isinstance(e, (n.And, n.Or)):
            for a in e.args:
                self._bind(a)
        elif isinstance(e, (n.Not, n.IsBool)):
            self._bind(e.arg)
        elif isinstance(e, n.Func) and e.name in (IN, NOT_IN) and len(e.args) >= 2:
            for a in e.args:  # x IN (items that are not all literals)
                self._bind_value(a, e)
        elif isinstance(e, n.Func):
            self._bind_array_contains(e)
        elif isinstance(e, (n.Compare, n.IsDistinct)):
            self._bind_value(e.left, e)
            self._bind_value(e.right, e)
        elif isinstance(e, (n.InList, n.Like, n.RegexpLike)):
            self._bind_value(e.arg, e)
        elif isinstance(e, n.IsNull):
            if isinstance(e.arg, n.Column):
                self._column(e.arg)  # a struct, list or map may be tested for NULL
            else:
                self._bind_value(e.arg, e)
        elif isinstance(e, n.Column):
            fp = self._column(e)
            if not pa.types.is_boolean(fp.type):
                raise TypeMismatchError(f"column {fp.text!r} is {fp.type}, not a boolean: it "
                                        "cannot be a predicate on its own")
        elif isinstance(e, n.Literal):
            if not (e.value is None or isinstance(e.value, bool)):
                raise TypeMismatchError(f"a predicate cannot be the literal {e}")
        else:
            self._bind_value(e, e)
        if isinstance(e, _ATOMS):
            self._element_prefix(e)

    def _bind_value(self, e: n.Expr, atom: n.Expr) -> None:
        if isinstance(e, n.Column):
            fp = self._column(e)
            if _is_nested(fp.type):
                what = "list" if is_list_type(fp.type) else "map" if pa.types.is_map(fp.type) \
                    else "struct"
                raise TypeMismatchError(
                    f"column {fp.text!r} is a {what} ({fp.type}) and cannot be compared in "
                    f"{atom}: name a field of it (e.g. {fp.text}.<field>), or test a list "
                    f"with array_contains({fp.text}, value)")
        elif isinstance(e, n.Literal):
            return
        elif isinstance(e, (n.Arith, n.Negate)):
            if isinstance(e, n.Arith) and e.op not in _PC_ARITH:
                raise ScanError(f"the row filter cannot evaluate the operator {e.op!r} in {e}")
            for c in e.children():
                self._bind_value(c, atom)
        elif isinstance(e, n.Cast):
            self._bind_value(e.arg, atom)
        else:
            raise ScanError(
                f"the row filter cannot evaluate {e} exactly (in {atom}): it knows comparisons, "
                "IN, LIKE, ILIKE, regexp_matches, IS [NOT] NULL/TRUE/FALSE/DISTINCT FROM, "
                "+ - *, CAST and array_contains; filter the result with pyarrow or DuckDB "
                "instead")

    def _bind_array_contains(self, e: n.Func) -> None:
        if e.name != ARRAY_CONTAINS or len(e.args) != 2 or not isinstance(e.args[0], n.Column):
            self._bind_value(e, e)  # raises: not a function the filter knows
        fp = resolve_names(self.schema, e.args[0].path)
        if is_list_type(fp.type):
            fp = FieldPath(fp.indices + (0,), fp.kinds + (ELEMENT,), fp.names,
                           fp.type.value_type)
        self.bound["contains", e.args[0]] = fp
        if not fp.through_elements:
            raise TypeMismatchError(f"array_contains needs a list; column {fp.text!r} is "
                                    f"{fp.type}")
        if _is_nested(fp.type):
            raise TypeMismatchError(f"array_contains({fp.text}, ...): its elements are "
                                    f"{fp.type}; name a field of them")
        self._bind_value(e.args[1], e)

    def _element_prefix(self, atom: n.Expr) -> tuple[int, ...] | None:
        """The list (or map) whose elements ``atom`` quantifies over, as the indices of its
        path, or None for a row-level atom; elements of two lists in one atom are an error."""
        prefixes = {}
        for c in n.columns_of(atom):
            fp = self._fp(c, atom)
            if fp.through_elements:
                last = _last_element(fp)
                prefixes[fp.indices[:last]] = fp
        if len(prefixes) > 1:
            shown = ", ".join(fp.text for fp in prefixes.values())
            raise ScanError(f"the row filter cannot evaluate {atom}: it compares elements of "
                            f"different lists ({shown}); each predicate may test the elements "
                            "of one list")
        return next(iter(prefixes), None)

    # evaluation ---------------------------------------------------------------------------
    def mask(self, batch: pa.RecordBatch | pa.Table) -> pa.BooleanArray:
        """True where ``expr`` is TRUE for the row (FALSE and NULL drop the row)."""
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else \
                pa.RecordBatch.from_pylist([], schema=batch.schema)
        frame = _Frame(len(batch), lambda fp: _navigate(batch, fp))
        try:
            result = self._bool(self.expr, frame)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise ScanError(f"the row filter cannot evaluate {self.expr}: {e}") from None
        return pc.fill_null(result, False)

    def _bool(self, e: n.Expr, frame: "_Frame") -> pa.Array:
        if isinstance(e, n.And):
            out = self._bool(e.args[0], frame)
            for a in e.args[1:]:
                out = pc.and_kleene(out, self._bool(a, frame))
            return out
        if isinstance(e, n.Or):
            out = self._bool(e.args[0], frame)
            for a in e.args[1:]:
                out = pc.or_kleene(out, self._bool(a, frame))
            return out
        if isinstance(e, n.Not):
            return pc.invert(self._bool(e.arg, frame))
        if isinstance(e, n.IsBool):
            b = self._bool(e.arg, frame)
            out = pc.fill_null(b if e.value else pc.invert(b), False)
            return pc.invert(out) if e.negated else out
        prefix = self._element_prefix(e) if frame.row_level else None
        if prefix is None:
            return self._atom(e, frame)
        return self._exists(e, frame)

    def _exists(self, e: n.Expr, frame: "_Frame") -> pa.Array:
        """``e`` over the elements of its list: TRUE where some element makes it TRUE."""
        columns = n.columns_of(e)
        elements = [c for c in columns if self._fp(c, e).through_elements]
        fp0 = self._fp(elements[0], e)
        last = _last_element(fp0)
        container, parent = frame.elements(fp0, last)
        arrays = {}
        for c in columns:
            fp = self._fp(c, e)
            if fp.through_elements:
                arrays[c] = plain_values(_navigate_from(container, fp, last))
            else:
                arrays[c] = frame.column(fp).take(pa.array(parent))
        inner = _Frame(len(parent), None, arrays, row_level=False)
        result = self._atom(e, inner)
        true = np.asarray(pc.fill_null(result, False).to_numpy(zero_copy_only=False), bool)
        out = np.zeros(frame.n, bool)
        out[parent[true]] = True
        out = pa.array(out)
        if isinstance(e, n.Func) and e.name == ARRAY_CONTAINS:  # NULL for a NULL list or value
            value = self._value(e.args[1], inner)
            if isinstance(value, Lit) and value.value is None:
                return pa.nulls(frame.n, pa.bool_())
            outer = frame.column(_outer_list(fp0))
            out = pc.if_else(outer.is_null(), pa.scalar(None, pa.bool_()), out)
        return out

    def _atom(self, e: n.Expr, frame: "_Frame") -> pa.Array:
        if isinstance(e, n.Literal):
            return _repeat(e.value, pa.bool_(), frame.n)
        if isinstance(e, n.Column):
            return frame.column(self.bound[e], e)
        if isinstance(e, n.Compare):
            return _broadcast(_compare(e.op, self._value(e.left, frame),
                                       self._value(e.right, frame), e), frame.n)
        if isinstance(e, n.Func) and e.name in (IN, NOT_IN):
            x, found = self._value(e.args[0], frame), _repeat(False, pa.bool_(), frame.n)
            for item in e.args[1:]:
                equal = _compare("=", x, self._value(item, frame), e)
                found = pc.or_kleene(found, _broadcast(equal, frame.n))
            return pc.invert(found) if e.name == NOT_IN else found
        if isinstance(e, n.Func):  # array_contains, over the elements
            return _broadcast(_compare("=", frame.column(None, e.args[0]),
                                       self._value(e.args[1], frame), e), frame.n)
        if isinstance(e, n.IsNull):
            out = _null_mask(self._value(e.arg, frame), frame.n)
            return pc.invert(out) if e.negated else out
        if isinstance(e, n.IsDistinct):
            return self._distinct(e, frame)
        if isinstance(e, n.InList):
            return self._in_list(e, frame)
        if isinstance(e, n.Like):
            return self._like(e, frame)
        if isinstance(e, n.RegexpLike):
            arr = _text(self._value(e.arg, frame), frame.n, e)
            try:
                out = pc.match_substring_regex(arr, e.pattern)
            except pa.ArrowInvalid as err:
                raise ScanError(f"bad regular expression in {e}: {err}") from None
            return pc.invert(out) if e.negated else out
        raise ScanError(f"the row filter cannot evaluate {e}")  # pragma: no cover - bound

    def _distinct(self, e: n.IsDistinct, frame: "_Frame") -> pa.Array:
        left, right = self._value(e.left, frame), self._value(e.right, frame)
        eq = _broadcast(_compare("=", left, right, e), frame.n)
        ln, rn = _null_mask(left, frame.n), _null_mask(right, frame.n)
        same = pc.if_else(pc.and_(ln, rn), True, pc.if_else(pc.xor(ln, rn), False, eq))
        return same if e.negated else pc.invert(same)

    def _in_list(self, e: n.InList, frame: "_Frame") -> pa.Array:
        x = self._value(e.arg, frame)
        values = [v.value for v in e.values]
        has_null = any(v is None for v in values)
        present = [v for v in values if v is not None]
        found = _is_in(x, present, e) if len(present) >= _IS_IN_MIN else None
        if found is None:
            found = _repeat(False, pa.bool_(), frame.n)
            for v in present:
                found = pc.or_kleene(found, _broadcast(_compare("=", x, Lit(v), e), frame.n))
        else:
            found = pc.if_else(pc.is_null(x), pa.scalar(None, pa.bool_()), found)
        if has_null:
            found = pc.if_else(pc.fill_null(found, False), True, pa.scalar(None, pa.bool_()))
        return pc.invert(found) if e.negated else found

    def _like(self, e: n.Like, frame: "_Frame") -> pa.Array:
        arr = _text(self._value(e.arg, frame), frame.n, e)
        tokens = likes.parse_like(e.pattern, e.escape)
        if e.case_insensitive:
            arr = pc.utf8_lower(arr)
            tokens = tuple(t if likes.is_wildcard(t) else
                           pc.utf8_lower(pa.scalar(t)).as_py() for t in tokens)
        pattern = "".join(t if likes.is_wildcard(t) else
                          t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                          for t in tokens)
        out = pc.match_like(arr, pattern)
        return pc.invert(out) if e.negated else out

    # values -------------------------------------------------------------------------------
    def _value(self, e: n.Expr, frame: "_Frame"):
        if isinstance(e, n.Column):
            return frame.column(self.bound[e], e)
        if isinstance(e, n.Literal):
            return Lit(e.value, e.type)
        if isinstance(e, n.Negate):
            v = self._value(e.arg, frame)
            if isinstance(v, Lit):
                value = v.value.copy_negate() if isinstance(v.value, decimal.Decimal) else \
                    -v.value if v.value is not None else None  # copy_negate: never rounded
                return Lit(value, v.type)
            return _checked(pc.negate_checked, e, v)
        if isinstance(e, n.Arith):
            a, b = self._value(e.left, frame), self._value(e.right, frame)
            if isinstance(a, Lit) and isinstance(b, Lit):
                a = pa.array([_infer(a, e)])
                b = _infer(b, e)
                return Lit(_checked(_PC_ARITH[e.op], e, a, b)[0].as_py())
            if isinstance(a, Lit):
                a = _scalar_for(a, b.type, e)
            if isinstance(b, Lit):
                b = _scalar_for(b, a.type, e)
            return _checked(_PC_ARITH[e.op], e,
                            *_wide_enough(e.op, *_align(a, b, compare=False)))
        if isinstance(e, n.Cast):
            return _cast(self._value(e.arg, frame), e.to, e)
        raise ScanError(f"the row filter cannot evaluate {e}")  # pragma: no cover - bound


class _Frame:
    """The rows (or list elements) an atom is evaluated on: ``n`` of them, and the columns."""

    def __init__(self, n_rows: int, navigate: Callable | None, arrays: dict | None = None,
                 row_level: bool = True):
        self.n = n_rows
        self._navigate = navigate
        self._arrays = arrays or {}
        self.row_level = row_level
        self._cache: dict = {}

    def column(self, fp: FieldPath, node: n.Column | None = None) -> pa.Array:
        if node is not None and node in self._arrays:
            return self._arrays[node]
        key = fp.indices
        if key not in self._cache:
            self._cache[key] = plain_values(self._navigate(fp))
        return self._cache[key]

    def elements(self, fp: FieldPath, last: int) -> tuple[pa.Array, np.ndarray]:
        """The elements of the list at step ``last`` of ``fp``, and each one's row."""
        array = self.column(FieldPath(fp.indices[:1], fp.kinds[:1], fp.names[:1], fp.type))
        steps = fp.steps()
        parent = np.arange(self.n, dtype=np.int64)
        for pos in range(1, last + 1):
            kind, name = steps[pos]
            if kind == FIELD:
                array = _child(array, name)
                continue
            values, up = list_elements(array)
            parent = parent[up]
            if pos == last or kind == ELEMENT:
                array = values
            else:
                array = _child(values, "key" if kind == KEY else "value")
        return array, parent


def _child(array: pa.Array, name: str) -> pa.Array:
    index = array.type.get_field_index(name)
    if index < 0:  # a map's entries struct: key, value
        index = 0 if name == "key" else 1
    return struct_child(array, index)


def _navigate_from(entries: pa.Array, fp: FieldPath, last: int) -> pa.Array:
    """The column ``fp`` below the elements of its list (``entries``, from step ``last``)."""
    steps = fp.steps()
    kind = steps[last][0]
    array = entries if kind == ELEMENT else _child(entries, "key" if kind == KEY else "value")
    for kind, name in steps[last + 1:]:
        array = _child(array, name)
    return array


def _navigate(batch: pa.RecordBatch, fp: FieldPath) -> pa.Array:
    """A row-level column (only struct steps) of ``batch``."""
    steps = fp.steps()
    array = batch.column(batch.schema.get_field_index(steps[0][1]))
    for kind, name in steps[1:]:
        if kind != FIELD:
            break
        array = _child(array, name)
    return array


def _outer_list(fp: FieldPath) -> FieldPath:
    first = next(i for i, k in enumerate(fp.kinds) if k != FIELD)
    return FieldPath(fp.indices[:first], fp.kinds[:first], fp.names[:first], fp.type)


# ------------------------------------------------------------------------------ helpers


def _repeat(value, typ: pa.DataType, count: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, typ), count)


def _broadcast(x, count: int) -> pa.Array:
    if isinstance(x, pa.Scalar):
        return pa.repeat(x, count)
    return x


def _null_mask(v, count: int) -> pa.Array:
    if isinstance(v, Lit):
        return _repeat(v.value is None, pa.bool_(), count)
    if isinstance(v, pa.Scalar):
        return _repeat(not v.is_valid, pa.bool_(), count)
    return pc.is_null(v)


def _text(v, count: int, e: n.Expr) -> pa.Array:
    if isinstance(v, pa.Scalar):
        v = pa.repeat(v, count)
    if isinstance(v, Lit):
        if not isinstance(v.value, str) and v.value is not None:
            raise TypeMismatchError(f"{e}: LIKE and regular expressions need text, not "
                                    f"{v.value!r}")
        return _repeat(v.value, pa.string(), count)
    if not is_string_type(v.type):
        raise TypeMismatchError(f"{e}: LIKE and regular expressions need a string column, "
                                f"not {v.type}")
    return v


def _checked(fn, e: n.Expr, *args):
    try:
        return fn(*args)
    except pa.ArrowInvalid as err:
        raise ScanError(f"{e}: {err} (SQL raises an error here, it does not wrap around)") \
            from None
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise TypeMismatchError(f"{e}: {err}") from None


def _is_int(t) -> bool:
    return pa.types.is_integer(t)


_TIMESTAMP_FORM = "YYYY-MM-DD[ (BC)][ HH:MM[:SS[.fffffffff]]][Z|UTC|+HH[:MM]]"


def _read_text(text: str, e: n.Expr, what: str, form: str) -> TimestampText:
    try:
        return read_timestamp_text(text)
    except ValueError:
        raise ScanError(f"{e}: {text!r} is not a {what} ({form})") from None


def _timestamp_scalar(text: str, lit_type: pa.DataType | None, to: pa.DataType, e: n.Expr
                      ) -> pa.Scalar:
    """Timestamp text of a literal typed ``lit_type`` (None: untyped) meeting type ``to``, read
    as the pruning reads it (:func:`~prune_engine.evaluate.domains.read_text_as`: no zone is
    UTC, a zone counts where the text is read as a zoned timestamp), as a UTC timestamp of
    ``to``'s unit, exactly. Text between two values of the unit is an error, since
    engines round it (DuckDB's TIMESTAMP_S and _MS) or truncate it (DuckDB's TIMESTAMP, Spark),
    and so is text beyond the unit's range (engines fail)."""
    unit = to.unit
    ns = read_text_as(_read_text(text, e, "timestamp", _TIMESTAMP_FORM), lit_type, to).utc_ns
    value, finer = divmod(ns, UNIT_NS[unit])
    if finer:
        raise ScanError(f"{e}: {text!r} is finer than timestamp[{unit}], and engines round "
                        "or truncate it differently: write it to the column's precision")
    if not -(2**63) <= value < 2**63:
        raise ScanError(f"{e}: {text!r} is beyond the range of timestamp[{unit}]")
    return pa.scalar(value, pa.timestamp(unit, "UTC"))


def _date_scalar(text: str, e: n.Expr) -> pa.Scalar:
    """Date text (``YYYY-MM-DD``, years past 9999 and DuckDB's ``(BC)`` too) as a date32."""
    written = _read_text(text, e, "date", "YYYY-MM-DD[ (BC)]")
    if written.time_ns is not None or written.offset_s is not None:
        raise ScanError(f"{e}: {text!r} is not a date (YYYY-MM-DD[ (BC)])")
    if not -(2**31) <= written.days < 2**31:
        raise ScanError(f"{e}: {text!r} is beyond the range of date32")
    return pa.scalar(written.days, pa.date32())


def _utc(value: _dt.datetime) -> _dt.datetime:
    """A naive timestamp is UTC (as the pruning assumes); a zoned one is converted."""
    if value.tzinfo is None:
        return value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc)


def _int_scalar(value: int) -> pa.Scalar:
    if -(2**63) <= value < 2**63:
        return pa.scalar(value, pa.int64())
    if 0 <= value < 2**64:
        return pa.scalar(value, pa.uint64())
    return pa.scalar(float(value))  # beyond every integer column: the order is what counts


def _scalar_for(lit: Lit, t: pa.DataType, e: n.Expr) -> pa.Scalar:
    """The literal as a scalar to meet a value of type ``t`` (the rules of the module doc)."""
    v = lit.value
    if lit.type is not None:
        if isinstance(v, str) and (pa.types.is_date(lit.type) or pa.types.is_timestamp(lit.type)):
            return _cast_literal(lit, lit.type, e)  # the text of a typed literal
        try:
            return pa.scalar(v, lit.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
            raise TypeMismatchError(f"{e}: the literal {v!r} is not a {lit.type}: {err}") \
                from None
    if v is None:
        return pa.scalar(None, t)
    mismatch = TypeMismatchError(f"cannot compare {t} with {v!r} in {e}")
    if isinstance(v, bool):
        if not pa.types.is_boolean(t):
            raise mismatch
        return pa.scalar(v)
    if isinstance(v, (int, decimal.Decimal, float)):
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)):
            raise mismatch
        if isinstance(v, float) or pa.types.is_floating(t):
            return pa.scalar(float(v), pa.float64())
        if isinstance(v, decimal.Decimal):
            if v == v.to_integral_value() and not pa.types.is_decimal(t):
                return _int_scalar(int(v))
            try:
                return pa.scalar(v)
            except (pa.ArrowInvalid, OverflowError):
                return pa.scalar(float(v))
        if pa.types.is_decimal(t):
            return pa.scalar(decimal.Decimal(v))
        return _int_scalar(v)
    if isinstance(v, str):
        if is_string_type(t):
            return pa.scalar(v, pa.string())
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return pa.scalar(v.encode(), pa.binary())
        if pa.types.is_date(t):
            return _date_scalar(v, e)
        if pa.types.is_timestamp(t):  # engines cast the text to the column's type
            return _timestamp_scalar(v, None, t, e)
        raise mismatch
    if isinstance(v, bytes):
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return pa.scalar(v, pa.binary())
        raise mismatch
    if isinstance(v, _dt.datetime):
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            return pa.scalar(_utc(v), pa.timestamp("us", "UTC"))
        raise mismatch
    if isinstance(v, _dt.date):
        if pa.types.is_date(t):
            return pa.scalar(v, pa.date32())
        if pa.types.is_timestamp(t):
            return pa.scalar(_dt.datetime(v.year, v.month, v.day, tzinfo=_dt.timezone.utc),
                             pa.timestamp("us", "UTC"))
        raise mismatch
    raise mismatch


def _infer(lit: Lit, e: n.Expr) -> pa.Scalar:
    """A literal met by another literal: its own natural type."""
    v = lit.value
    if lit.type is not None:
        return _scalar_for(lit, lit.type, e)
    if isinstance(v, int) and not isinstance(v, bool):
        return _int_scalar(v)
    try:
        return pa.scalar(v)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as err:
        raise ScanError(f"{e}: cannot evaluate the literal {v!r}: {err}") from None


def _align(a, b, compare: bool = True):
    """Make two typed operands comparable with SQL's rules (zones, dates, decimals);
    ``compare=False``: operands of arithmetic (decimals keep their own types, whose
    precision and scale make the result's)."""
    ta, tb = a.type, b.type
    if pa.types.is_timestamp(ta) or pa.types.is_timestamp(tb):
        a, b = _as_utc(a, tb), _as_utc(b, ta)
    elif pa.types.is_decimal(ta) and pa.types.is_floating(tb):
        a = _as_double(a)
    elif pa.types.is_floating(ta) and pa.types.is_decimal(tb):
        b = _as_double(b)
    elif pa.types.is_decimal(ta) and _is_int(tb):
        b = b.cast(_INT_DIGITS[tb.bit_width, pa.types.is_signed_integer(tb)])
        return _align(a, b, compare)
    elif _is_int(ta) and pa.types.is_decimal(tb):
        a = a.cast(_INT_DIGITS[ta.bit_width, pa.types.is_signed_integer(ta)])
        return _align(a, b, compare)
    elif compare and pa.types.is_decimal(ta) and pa.types.is_decimal(tb) and \
            not ta.equals(tb):
        common = _common_decimal(ta, tb)
        if common is not None:  # both exactly, in a type that holds both
            a, b = a.cast(common), b.cast(common)
    return a, b


#: the widest decimal128, and decimal256
_DECIMAL128_DIGITS, _DECIMAL256_DIGITS = 38, 76
#: the decimal type that holds every value of an integer type (bit width, signed)
_INT_DIGITS = {(8, True): pa.decimal128(3, 0), (16, True): pa.decimal128(5, 0),
               (32, True): pa.decimal128(10, 0), (64, True): pa.decimal128(19, 0),
               (8, False): pa.decimal128(3, 0), (16, False): pa.decimal128(5, 0),
               (32, False): pa.decimal128(10, 0), (64, False): pa.decimal128(20, 0)}


def _decimal_type(precision: int, scale: int) -> pa.DataType | None:
    if precision <= _DECIMAL128_DIGITS:
        return pa.decimal128(precision, scale)
    if precision <= _DECIMAL256_DIGITS:
        return pa.decimal256(precision, scale)
    return None


def _common_decimal(ta: pa.DataType, tb: pa.DataType) -> pa.DataType | None:
    """The decimal type that holds every value of both (None: wider than decimal256)."""
    scale = max(ta.scale, tb.scale)
    return _decimal_type(max(ta.precision - ta.scale, tb.precision - tb.scale) + scale, scale)


def _wide_enough(op: str, a, b):
    """Decimal operands of ``a op b`` in decimal256 when the exact result needs more than 38
    digits (pyarrow's decimal128 arithmetic refuses it); others as they are."""
    ta, tb = a.type, b.type
    if not (pa.types.is_decimal(ta) and pa.types.is_decimal(tb)):
        return a, b
    if op == "*":  # pyarrow's result types: p1 + p2 + 1, and one digit over the wider
        digits = ta.precision + tb.precision + 1
    else:
        digits = max(ta.precision - ta.scale, tb.precision - tb.scale) + \
            max(ta.scale, tb.scale) + 1
    if digits <= _DECIMAL128_DIGITS or digits > _DECIMAL256_DIGITS:
        return a, b
    return a.cast(pa.decimal256(ta.precision, ta.scale)), \
        b.cast(pa.decimal256(tb.precision, tb.scale))


def _exact_number(v) -> bool:
    """An exact numeric literal (an int, or a finite Decimal)."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, decimal.Decimal) and v.is_finite())


def _decimal_literal(op: str, v, t: pa.DataType):
    """``decimal_col op v`` for an exact literal ``v``, decided exactly: ``(op, scalar of t)``
    to compare, or a bool when ``v`` is beyond every value of ``t`` or between two of them
    (``= 2.5`` on a scale-0 column is FALSE; ``< 2.5`` is ``<= 2``; ``> 2.5`` is ``>= 3``).
    No float and no 28-digit context: a 38-digit decimal is exact.

    >>> _decimal_literal("<", decimal.Decimal("2.5"), pa.decimal128(3, 0))
    ('<=', <pyarrow.Decimal128Scalar: Decimal('2')>)
    >>> _decimal_literal("=", 10**38, pa.decimal128(38, 0))
    False
    """
    d = decimal.Decimal(v)
    room = t.precision - t.scale  # |value| < 10 ** room
    if d and d.adjusted() >= room:
        return _BEYOND["high" if d > 0 else "low"][op]
    step = decimal.Decimal(1).scaleb(-t.scale)
    context = decimal.Context(prec=t.precision + 2)
    down = d.quantize(step, rounding=decimal.ROUND_FLOOR, context=context)
    if down != d:
        if op in ("=", "!="):
            return op == "!="
        if op in ("<", "<="):
            op, d = "<=", down
        else:
            op, d = ">=", d.quantize(step, rounding=decimal.ROUND_CEILING, context=context)
        if d and d.adjusted() >= room:
            return _BEYOND["high" if d > 0 else "low"][op]
    else:
        d = down
    return op, pa.scalar(d, t)


#: up to this many digits, a decimal's unscaled value and its power of ten are exact doubles
_EXACT_DOUBLE_DIGITS = 15


def _as_double(x):
    """A decimal array or scalar as the nearest doubles (correctly rounded, as DuckDB casts
    it; pyarrow's cast can be one step off)."""
    t = x.type
    if isinstance(x, pa.Scalar):
        return pa.scalar(float(x.as_py()) if x.is_valid else None, pa.float64())
    if t.precision <= _EXACT_DOUBLE_DIGITS and pa.types.is_decimal128(t) and t.scale <= 22:
        # the unscaled value (the low word: |value| < 2**63) over 10**scale: one rounding
        words = np.frombuffer(x.buffers()[1], np.int64)[2 * x.offset:2 * (x.offset + len(x))]
        values = words[::2].astype(np.float64) / (10.0 ** t.scale)
        return pa.array(values, pa.float64(), mask=np.asarray(
            x.is_null().to_numpy(zero_copy_only=False), bool) if x.null_count else None)
    return pa.array([None if v is None else float(v) for v in x.to_pylist()], pa.float64())


def _as_utc(x, other: pa.DataType):
    t = x.type
    if pa.types.is_date(t) and pa.types.is_timestamp(other):
        return x.cast(pa.timestamp(other.unit, "UTC"))
    if pa.types.is_timestamp(t) and t.tz != "UTC":
        return x.cast(pa.timestamp(t.unit, "UTC"))  # naive: read as UTC; zoned: same instant
    return x


def _compare(op: str, a, b, e: n.Expr):
    """``a op b`` with SQL semantics; operands are arrays, scalars or untyped literals."""
    if isinstance(a, Lit) and not isinstance(b, Lit):
        op, a, b = n.FLIPPED[op], b, a
    if isinstance(a, Lit):
        a = _infer(a, e)
    if isinstance(b, Lit):
        v = b.value
        if (b.type is None and isinstance(v, decimal.Decimal) and _is_int(a.type)
                and v.is_finite() and v != v.to_integral_value()):
            # an integer never equals a fraction; x < 2.5 is x <= 2, x > 2.5 is x >= 3
            if op in ("=", "!="):
                known = pa.scalar(op == "!=")
                return pc.if_else(pc.is_valid(a), known, pa.scalar(None, pa.bool_())) \
                    if isinstance(a, pa.Array) else pa.scalar(
                        op == "!=" if a.is_valid else None, pa.bool_())
            rounded = math.floor(v) if op in ("<", "<=") else math.ceil(v)
            op = "<=" if op in ("<", "<=") else ">="
            b = _int_scalar(int(rounded))
        elif b.type is None and pa.types.is_decimal(a.type) and _exact_number(v):
            decided = _decimal_literal(op, v, a.type)
            if isinstance(decided, bool):  # the literal is beyond or between the values
                return pc.if_else(pc.is_valid(a), pa.scalar(decided),
                                  pa.scalar(None, pa.bool_())) if isinstance(a, pa.Array) \
                    else pa.scalar(decided if a.is_valid else None, pa.bool_())
            op, b = decided
        else:
            outside = _outside(v, a.type) if b.type is None else None
            if outside is not None:  # u8_col < -1: the literal is beyond every value
                known = _BEYOND[outside][op]
                return pc.if_else(pc.is_valid(a), pa.scalar(known),
                                  pa.scalar(None, pa.bool_())) if isinstance(a, pa.Array) \
                    else pa.scalar(known if a.is_valid else None, pa.bool_())
            b = _scalar_for(b, a.type, e)
    a, b = _align(a, b)
    try:
        out = _PC_COMPARE[op](a, b)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid) as err:
        raise TypeMismatchError(f"cannot compare {a.type} with {b.type} in {e}: {err}") \
            from None
    if pa.types.is_floating(a.type) or pa.types.is_floating(b.type):
        out = _nan_order(op, a, b, out)
    return out


#: column op literal, for a literal below ("low") or above ("high") every column value
_BEYOND = {"low": {"=": False, "!=": True, "<": False, "<=": False, ">": True, ">=": True},
           "high": {"=": False, "!=": True, "<": True, "<=": True, ">": False, ">=": False}}


def _outside(v, t: pa.DataType) -> str | None:
    """"low" / "high" when the integer literal ``v`` is beyond the integer type ``t``."""
    if not _is_int(t) or isinstance(v, bool) or not isinstance(v, (int, decimal.Decimal)):
        return None
    info = np.iinfo(t.to_pandas_dtype())
    if v < info.min:
        return "low"
    if v > info.max:
        return "high"
    return None


def _nan_flags(x):
    if pa.types.is_floating(x.type):
        flags = pc.is_nan(x)
        return pc.fill_null(flags, False) if isinstance(flags, pa.Array) else \
            pa.scalar(bool(flags.as_py()))
    return pa.scalar(False)


def _nan_order(op: str, a, b, out):
    """Correct IEEE results to NaN = NaN and NaN above every other value (nulls stay null:
    ``and_``/``or_`` without Kleene propagate them)."""
    an, bn = _nan_flags(a), _nan_flags(b)
    if op == "=":
        return pc.or_(out, pc.and_(an, bn))
    if op == "!=":
        return pc.and_(out, pc.invert(pc.and_(an, bn)))
    if op == "<":
        return pc.or_(out, pc.and_(pc.invert(an), bn))
    if op == "<=":
        return pc.or_(out, bn)
    if op == ">":
        return pc.or_(out, pc.and_(an, pc.invert(bn)))
    return pc.or_(out, an)  # >=


def _is_in(x, values: list, e: n.Expr):
    """``x IN values`` by one hash lookup, when every value has ``x``'s type exactly; None
    when the chain of comparisons must decide instead. NULL rows are not handled here."""
    if isinstance(x, Lit) or not isinstance(x, pa.Array):
        return None
    t = x.type
    text = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
    if not (_is_int(t) or pa.types.is_floating(t) or text):
        return None
    scalars = []
    for v in values:
        if isinstance(v, decimal.Decimal) and _is_int(t) and v != v.to_integral_value():
            continue  # an integer never equals a fraction
        try:
            s = _scalar_for(Lit(v), t, e).cast(t)
        except (PruneEngineError, pa.ArrowInvalid, pa.ArrowNotImplementedError,
                pa.ArrowTypeError, OverflowError):
            return None
        if not text and s.as_py() != v and not (isinstance(v, float) and math.isnan(v)):
            return None  # the cast changed the value: compare one by one
        scalars.append(s)
    value_set = pa.array([s.as_py() for s in scalars], t)
    if pa.types.is_floating(t):
        zero = pa.scalar(0.0, t)
        x, value_set = pc.add(x, zero), pc.add(value_set, zero)  # -0.0 + 0.0 = 0.0
    return pc.is_in(x, value_set=value_set)


_FINER = {"s": 0, "ms": 1, "us": 2, "ns": 3}


def _cast(v, to: pa.DataType, e: n.Cast):
    """``CAST`` where every engine agrees: typed literals, widening of numbers and times."""
    if isinstance(v, Lit):
        return _cast_literal(v, to, e)
    t = v.type
    if t.equals(to):
        return v
    ok = ((_is_int(t) and (_is_int(to) or pa.types.is_floating(to) or pa.types.is_decimal(to)))
          or (pa.types.is_floating(t) and pa.types.is_floating(to)
              and to.bit_width >= t.bit_width)
          or (pa.types.is_decimal(t) and pa.types.is_decimal(to))
          or (pa.types.is_date(t) and pa.types.is_timestamp(to))
          or (pa.types.is_timestamp(t) and pa.types.is_timestamp(to)
              and _FINER[to.unit] >= _FINER[t.unit])
          or ((pa.types.is_string(t) or pa.types.is_large_string(t))
              and (pa.types.is_string(to) or pa.types.is_large_string(to))))
    if not ok:
        raise ScanError(f"the row filter cannot evaluate {e} exactly: engines disagree on "
                        f"casting {t} to {to}")
    if pa.types.is_timestamp(t) and pa.types.is_timestamp(to) and (t.tz is None) != (to.tz is None):
        v = _as_utc(v, to)
    try:
        return v.cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise ScanError(f"{e}: {err}") from None


def _cast_literal(lit: Lit, to: pa.DataType, e: n.Cast) -> pa.Scalar | Lit:
    v = lit.value
    if v is None:
        return pa.scalar(None, to)
    if isinstance(v, str) and pa.types.is_date(to):
        return _date_scalar(v, e).cast(to)
    if isinstance(v, str) and pa.types.is_timestamp(to):
        return _timestamp_scalar(v, lit.type, to, e)
    try:
        if isinstance(v, str):
            if pa.types.is_string(to) or pa.types.is_large_string(to):
                return pa.scalar(v, to)
            if pa.types.is_binary(to):
                return pa.scalar(v.encode(), to)
            if pa.types.is_integer(to):
                return pa.scalar(int(v.strip()), to)
            if pa.types.is_floating(to):
                return pa.scalar(float(v.strip()), to)
            if pa.types.is_decimal(to):
                return _decimal_scalar(decimal.Decimal(v.strip()), to, e)
            if pa.types.is_boolean(to) and v.strip().lower() in ("true", "false"):
                return pa.scalar(v.strip().lower() == "true")
        elif isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool):
            if pa.types.is_floating(to):
                return pa.scalar(float(v), to)
            if pa.types.is_integer(to) and v == int(v):
                return pa.scalar(int(v), to)
            if pa.types.is_decimal(to) and not isinstance(v, float):
                return _decimal_scalar(decimal.Decimal(v), to, e)
    except (ValueError, OverflowError, pa.ArrowInvalid, decimal.InvalidOperation):
        raise ScanError(f"{e}: {v!r} does not fit {to}") from None
    raise ScanError(f"the row filter cannot evaluate {e} exactly: engines disagree on this "
                    "cast")


def _decimal_scalar(d: decimal.Decimal, to: pa.DataType, e: n.Cast) -> pa.Scalar:
    if d.adjusted() >= to.precision - to.scale and d:
        raise ScanError(f"{e}: {d} does not fit {to}")
    context = decimal.Context(prec=to.precision + 2)  # never the 28 digits of the default
    if d != d.quantize(decimal.Decimal(1).scaleb(-to.scale), rounding=decimal.ROUND_DOWN,
                       context=context):
        raise ScanError(f"the row filter cannot evaluate {e} exactly: engines round "
                        "differently")
    return pa.scalar(d, to)
