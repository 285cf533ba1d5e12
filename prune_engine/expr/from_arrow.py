"""The pyarrow front end: a ``pyarrow.compute.Expression`` to the node tree.

**How the tree is read.** pyarrow has no public traversal API. Of the three ways in, this module
uses the one pyarrow itself relies on to pickle an expression: ``Expression.__reduce__`` returns
Arrow's own serialization, an Arrow IPC file whose schema metadata spells the tree in prefix
order (``call``/``field_ref``/``nested_field_ref``/``literal``/``options``/``end``) and whose
columns hold every literal and every function-options struct *as Arrow data*. Literals therefore
come back exact and with their Arrow type (a ``uint64`` above 2**63, a ``decimal256``, a
nanosecond timestamp), which parsing ``str(expr)`` cannot promise (its literals are untyped and
its strings unescaped), and no new dependency is needed, which decoding ``to_substrait()`` would
require (protobuf and the Substrait schema, and not every function has a Substrait mapping).
The metadata holds repeated keys in order, which pyarrow's ``Schema.metadata`` dict collapses, so
the pairs are read through the Arrow C data interface. Positional field references
(``pc.field(1)``) cannot be serialized by pyarrow; they are reported as an error.

**Semantics.** pyarrow keeps the rows where the filter is TRUE. The translation guarantees, for
every row and every sub-expression, that our node evaluates (under prune_engine's SQL semantics:
Kleene logic, NaN = NaN, NaN above +inf) to the same value as pyarrow, or, where marked
*refining*, to the same value wherever pyarrow's is not NULL. Refining is safe under NOT and under
AND/OR and every NULL-propagating function; under ``is_null``/``is_valid``/``is_in`` (which see
NULLs) a refining argument makes the call opaque (``Func``: unknown, keeps). A ``Func`` is unknown
to the compiler in both polarities, so it is always safe. The choices:

- Comparisons follow IEEE in pyarrow: a NaN operand makes ``= < <= > >=`` FALSE and ``!=`` TRUE.
  With a non-NaN numeric literal ``c``, ``s > c`` and ``s >= c`` (where our NaN is above every
  number) become ``s > c AND s < NaN``; ``= != < <=`` already agree. Against a NaN literal, ``!=``
  is ``s <= NaN`` (TRUE for every non-null ``s``) and the others ``s > NaN`` (never TRUE). Between
  two non-literals (whose types we do not know) the NaN test is an opaque guard:
  ``a < b AND NOT is_nan(a) AND NOT is_nan(b)``, ``a != b OR is_nan(a) OR is_nan(b)`` (refining:
  a NULL ``a`` with a NaN ``b`` gives FALSE or TRUE where pyarrow gives NULL).
- ``and``/``or`` (not Kleene) return NULL where Kleene logic may decide: mapped to AND/OR,
  refining. ``and_kleene``/``or_kleene``/``invert``/``and_not_kleene`` are exact.
- ``is_in`` never returns NULL for a NULL input with ``MATCH`` (TRUE when the value set holds a
  null) or ``SKIP`` (FALSE): ``x IS NULL OR x IN (...)`` and ``x IS NOT NULL AND x IN (...)``.
  ``EMIT_NULL`` drops the set's nulls; ``INCONCLUSIVE`` is SQL's ``IN``. pyarrow's set lookup tells
  -0.0 from 0.0, which our ``=`` does not: a float zero in the set becomes
  ``(x = 0.0 AND is_in(x, zero))`` with the second part opaque.
- ``starts_with``/``ends_with``/``match_substring`` become LIKE patterns with ``%``, ``_`` and
  ``\\`` escaped; ``match_like`` keeps pyarrow's ``\\`` escape (a dangling final ``\\``, which
  pyarrow ignores, is dropped); ``match_substring_regex`` is
  ``regexp_like`` (both RE2 searches), with ``(?i)`` for ``ignore_case``. A case-insensitive LIKE
  is emitted only for ASCII patterns without ``i``, ``k`` or ``s``: pyarrow folds case as Unicode
  does (``ſ`` matches ``s``, the Kelvin sign matches ``k``) and SQL engines lower-case
  differently (``İ`` lowers to ``i``); other patterns stay opaque.
- ``add_checked``/``subtract_checked``/``multiply_checked``/``negate_checked`` (what ``+ - *``
  build) are exact arithmetic, or an error that returns no rows at all. Their unchecked forms wrap
  around on integer overflow and stay opaque.
- ``cast`` with pyarrow's safe defaults is ``Cast``; an unsafe cast (any ``allow_*`` option) or a
  cast to a string or binary type (number formatting differs between engines) stays opaque.
- A nanosecond timestamp literal that a ``datetime`` cannot hold is
  ``Cast(Literal('YYYY-MM-DD HH:MM:SS.fffffffff'), timestamp('ns'[, tz]))``, the form the SQL front
  end gives typed literals (UTC wall time for a zoned type); a literal Python cannot represent at
  all is opaque.

>>> import pyarrow.compute as pc
>>> str(from_pyarrow((pc.field("x") < 5) & pc.field(("st", "s")).isin(["a", "b"])))
"x < 5 AND st.s IS NOT NULL AND st.s IN ('a', 'b')"
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import decimal
import math
import struct

import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import PruneEngineError
from prune_engine.expr import nodes as n
from prune_engine.expr.like import dangling_escape, like_escape

__all__ = ["from_pyarrow"]

_NAN = n.Literal(math.nan, pa.float64())

_COMPARE = {"equal": "=", "not_equal": "!=", "less": "<", "less_equal": "<=",
            "greater": ">", "greater_equal": ">="}
_ARITH = {"add_checked": "+", "subtract_checked": "-", "multiply_checked": "*"}
_MATCH = {"starts_with", "ends_with", "match_substring", "match_like", "match_substring_regex"}
#: SetLookupOptions.null_matching_behavior
_MATCH_NULLS, _SKIP_NULLS, _EMIT_NULL, _INCONCLUSIVE = 0, 1, 2, 3


def from_pyarrow(expr: pc.Expression) -> n.Expr:
    """The node tree of a pyarrow filter expression, sound for pruning: every row pyarrow's
    ``table.filter(expr)`` keeps is TRUE under the tree (see the module notes for where the
    tree is only a superset).

    >>> import pyarrow as pa, pyarrow.compute as pc
    >>> print(from_pyarrow(~(pc.field("f") > 1.5)))
    NOT (f > 1.5 AND f < CAST('NaN' AS DOUBLE))
    >>> from_pyarrow(pc.field("u") == pa.scalar(2**64 - 1, pa.uint64())).right
    Literal(value=18446744073709551615, type=DataType(uint64))
    """
    if not isinstance(expr, pc.Expression):
        raise TypeError(f"from_pyarrow expects a pyarrow.compute.Expression, got {type(expr).__name__}")
    pairs, columns = _serialized(expr)
    return _Reader(pairs, columns).read()


# --------------------------------------------------------------------------------------------
# reading pyarrow's serialization


def _serialized(expr: pc.Expression) -> tuple[list[tuple[str, str]], list[pa.Array]]:
    """The (key, value) metadata pairs and the columns of Arrow's serialization of ``expr``."""
    try:
        buffer = expr.__reduce__()[1][0]
        batch = pa.ipc.open_file(buffer).get_batch(0)
    except pa.ArrowNotImplementedError as e:
        raise PruneEngineError(f"cannot read the pyarrow expression {expr}: {e} (name fields "
                               "instead of referring to them by position)") from None
    except (pa.ArrowException, IndexError, TypeError) as e:
        raise PruneEngineError(f"cannot read the pyarrow expression {expr} with pyarrow "
                               f"{pa.__version__}: {e}") from None
    return _metadata_pairs(batch.schema), batch.columns


class _CSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the Arrow C data interface."""

    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


def _metadata_pairs(schema: pa.Schema) -> list[tuple[str, str]]:
    """Every schema metadata pair in order, repeated keys included (``Schema.metadata`` is a dict)."""
    c_schema = _CSchema()
    schema._export_to_c(ctypes.addressof(c_schema))
    try:
        raw = c_schema.metadata
        if not raw:
            return []
        (count,) = struct.unpack("=i", ctypes.string_at(raw, 4))
        pos, pairs = 4, []
        for _ in range(count):
            item = []
            for _ in range(2):
                (size,) = struct.unpack("=i", ctypes.string_at(raw + pos, 4))
                item.append(ctypes.string_at(raw + pos + 4, size).decode("utf-8"))
                pos += 4 + size
            pairs.append((item[0], item[1]))
        return pairs
    finally:
        pa.Schema._import_from_c(ctypes.addressof(c_schema))  # takes the struct back and releases it


class _Reader:
    """Rebuilds the tree from the prefix-order pairs, bottom-up and without recursion (a
    ``functools.reduce(operator.and_, ...)`` filter is thousands of calls deep)."""

    def __init__(self, pairs: list[tuple[str, str]], columns: list[pa.Array]):
        self.pairs = pairs
        self.columns = columns

    def scalar(self, index: str) -> pa.Scalar:
        return self.columns[int(index)][0]

    def read(self) -> n.Expr:
        frames: list[list] = []  # [function name, argument translations, options or None]
        done: list[tuple[n.Expr, bool]] = []
        i = 0
        while i < len(self.pairs):
            key, value = self.pairs[i]
            i += 1
            if key == "call":
                frames.append([value, [], None])
                continue
            if key == "options":
                frames[-1][2] = _options(self.scalar(value))
                continue
            if key == "end":
                name, args, options = frames.pop()
                result = _call(name, args, options)
            elif key == "literal":
                result = (scalar_literal(self.scalar(value)), True)
            elif key == "field_ref":
                result = (n.Column((value,)), True)
            elif key == "nested_field_ref":
                count = int(value)
                path = tuple(v for _, v in self.pairs[i:i + count])
                i += count
                result = (n.Column(path), True)
            else:
                raise PruneEngineError(f"cannot read a pyarrow expression with pyarrow {pa.__version__}: "
                                       f"unexpected serialization key {key!r}")
            (frames[-1][1] if frames else done).append(result)
        if frames or len(done) != 1:
            raise PruneEngineError(f"cannot read a pyarrow expression with pyarrow {pa.__version__}: "
                                   "unbalanced serialization")
        return _done(done[0][0])


def _options(scalar: pa.Scalar) -> dict:
    """A function-options struct as a dict; the value set stays an Arrow array and the cast
    target is the type of the (null) ``to_type`` field."""
    if not isinstance(scalar, pa.StructScalar) or not scalar.is_valid:
        return {}
    out = {}
    for field in scalar.type:
        if field.name == "to_type":
            out["to_type"] = field.type
        elif field.name == "value_set" and isinstance(scalar[field.name], pa.ListScalar):
            out["value_set"] = scalar[field.name].values
        else:
            out[field.name] = scalar[field.name].as_py()
    return out


# --------------------------------------------------------------------------------------------
# literals


def scalar_literal(scalar: pa.Scalar) -> n.Expr:
    """An exact literal of ``scalar``, with its Arrow type."""
    t = scalar.type
    if pa.types.is_dictionary(t):
        return scalar_literal(scalar.value) if scalar.is_valid else n.Literal(None, t.value_type)
    if not scalar.is_valid:
        return n.Literal(None, t)
    if pa.types.is_timestamp(t) and t.unit == "ns":
        # as_py drops the nanoseconds (or, with pandas installed, gives a pandas Timestamp)
        if scalar.value % 1000:
            return _nanosecond_literal(scalar)
        return n.Literal(scalar.cast(pa.timestamp("us", t.tz)).as_py(), t)
    try:
        return n.Literal(scalar.as_py(), t)
    except (ValueError, OverflowError):
        return n.Func("literal", ())


def _nanosecond_literal(scalar: pa.Scalar) -> n.Expr:
    """A nanosecond timestamp as the typed text literal the SQL front end gives (UTC wall time
    for a zoned type), exact to the nanosecond."""
    t = scalar.type
    seconds, nanos = divmod(scalar.value, 10**9)
    try:
        wall = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)
    except OverflowError:
        return n.Func("literal", ())
    text = f"{wall.isoformat(sep=' ')}.{nanos:09d}" + ("+00:00" if t.tz else "")
    return n.Cast(n.Literal(text), t)


def _is_nan(e: n.Expr) -> bool:
    return isinstance(e, n.Literal) and isinstance(e.value, float) and math.isnan(e.value)


def _is_constant(e: n.Expr) -> bool:
    """A literal, or a typed literal (a cast of one, as for nanosecond timestamps)."""
    return isinstance(e, n.Literal) or (isinstance(e, n.Cast) and isinstance(e.arg, n.Literal))


def _is_number(e: n.Expr) -> bool:
    return (isinstance(e, n.Literal) and not isinstance(e.value, bool)
            and isinstance(e.value, (int, float, decimal.Decimal)))


# --------------------------------------------------------------------------------------------
# calls


class _Chain:
    """An AND (OR) chain being read: its parts so far. A ``reduce(operator.and_, ...)`` filter
    is a left-deep chain of binary calls; appending each part here, rather than copying the
    parts into a new node per call, keeps reading it linear. Each chain has one reader (the
    serialization is a tree), so appending in place is safe; anything else that takes a chain
    as an argument gets its node (:func:`_done`)."""

    __slots__ = ("kind", "parts")

    def __init__(self, kind: type):
        self.kind = kind
        self.parts: list[n.Expr] = []

    def add(self, part) -> None:
        if isinstance(part, _Chain) and part.kind is self.kind:
            self.parts.extend(part.parts)
        else:
            self.parts.append(_done(part))


def _done(node) -> n.Expr:
    """The node of a translated argument (a chain becomes its flat n-ary node)."""
    return node.kind(tuple(node.parts)) if isinstance(node, _Chain) else node


def _call(name: str, args: list[tuple[n.Expr, bool]], options: dict | None) -> tuple[n.Expr, bool]:
    """Translate one pyarrow call whose arguments are translated: (node, exact)."""
    exact = all(e for _, e in args)
    if name in ("and_kleene", "and", "or_kleene", "or", "and_not_kleene", "and_not") and len(args) == 2:
        kind = n.Or if name.startswith("or") else n.And
        first, second = args[0][0], args[1][0]
        chain = first if isinstance(first, _Chain) and first.kind is kind else _Chain(kind)
        if chain is not first:
            chain.add(first)
        chain.add(n.Not(_done(second)) if name.startswith("and_not") else second)
        return chain, exact and name.endswith("kleene")
    nodes = tuple(_done(a) for a, _ in args)
    options = options or {}
    if name == "invert" and len(nodes) == 1:
        return n.Not(nodes[0]), exact
    if name in _COMPARE and len(nodes) == 2:
        node, form_exact = _compare(_COMPARE[name], *nodes)
        return node, exact and form_exact
    if name in _ARITH and len(nodes) == 2:
        return n.Arith(_ARITH[name], *nodes), exact
    if name == "negate_checked" and len(nodes) == 1:
        return n.Negate(nodes[0]), exact
    if name in _MATCH and len(nodes) == 1 and isinstance(options.get("pattern"), str):
        return _match(name, nodes[0], options["pattern"], bool(options.get("ignore_case"))), exact
    if name == "cast" and len(nodes) == 1 and "to_type" in options:
        return _cast(nodes[0], options), exact
    if name == "is_nan" and len(nodes) == 1:
        return n.IsNan(nodes[0]), exact
    if exact and len(nodes) == 1:  # functions that see NULLs need the exact argument
        if name == "is_valid":
            return n.IsNull(nodes[0], negated=True), True
        if name == "is_null":
            if options.get("nan_is_null"):
                return n.Or((n.IsNull(nodes[0]), n.Func("is_nan", nodes))), True
            return n.IsNull(nodes[0]), True
        if name == "is_in" and "value_set" in options:
            return _is_in(nodes[0], options), True
    return n.Func(name, nodes), True


def _compare(op: str, a: n.Expr, b: n.Expr) -> tuple[n.Expr, bool]:
    """pyarrow's (IEEE) ``a op b`` in our semantics (NaN = NaN, NaN above +inf): (node, exact)."""
    base = n.Compare(op, a, b)
    lit_a, lit_b = _is_constant(a), _is_constant(b)
    if (isinstance(a, n.Literal) and a.is_null) or (isinstance(b, n.Literal) and b.is_null):
        return base, True  # NULL for every row, in both
    if _is_nan(a) and _is_nan(b):
        return n.Literal(op == "!="), True
    if _is_nan(a) or _is_nan(b):
        other, nan = (b, a) if _is_nan(a) else (a, b)
        # IEEE: x != NaN is TRUE and every other comparison FALSE, for every non-null x
        return n.Compare("<=" if op == "!=" else ">", other, nan), True
    if lit_a and lit_b:
        return base, True
    if lit_a or lit_b:
        side, literal, oriented = (a, b, op) if lit_b else (b, a, n.FLIPPED[op])
        if oriented in (">", ">=") and _is_number(literal):
            return n.And((base, n.Compare("<", side, _NAN))), True  # a NaN side is not greater
        return base, True
    if op == "!=":
        return n.Or((base, n.Func("is_nan", (a,)), n.Func("is_nan", (b,)))), False
    return n.And((base, n.Not(n.Func("is_nan", (a,))), n.Not(n.Func("is_nan", (b,))))), False


def _is_in(x: n.Expr, options: dict) -> n.Expr:
    """pyarrow's ``is_in`` with its null-matching behaviour, as SQL ``IN`` plus NULL tests."""
    value_set = options["value_set"]
    items = [scalar_literal(v) for v in value_set] if value_set is not None else []
    if "null_matching_behavior" in options:
        behavior = options["null_matching_behavior"]
    else:  # pyarrow before 15: skip_nulls
        behavior = _SKIP_NULLS if options.get("skip_nulls") else _MATCH_NULLS
    if not all(isinstance(v, n.Literal) for v in items) or behavior not in (0, 1, 2, 3):
        return n.Func("is_in", (x,))
    has_null = any(v.is_null for v in items)
    zeros = [v for v in items if isinstance(v.value, float) and v.value == 0]
    plain = tuple(v for v in items if not v.is_null and v not in zeros)
    if behavior == _INCONCLUSIVE:  # SQL's IN: a null in the set makes "not found" NULL
        plain += (n.Literal(None, plain[0].type if plain else None),) if has_null else ()
    member = _member(x, plain, zeros)
    if behavior in (_EMIT_NULL, _INCONCLUSIVE):
        return member if member is not None else n.Func("is_in", (x,))
    if behavior == _MATCH_NULLS and has_null:
        return n.Or((n.IsNull(x), member)) if member is not None else n.IsNull(x)
    if member is None:
        return n.FALSE
    return n.And((n.IsNull(x, negated=True), member))


def _member(x: n.Expr, plain: tuple[n.Literal, ...], zeros: list[n.Literal]) -> n.Expr | None:
    """TRUE / FALSE membership of a non-null ``x`` (NULL for a NULL ``x``), or None if empty."""
    parts: list[n.Expr] = []
    if plain:
        parts.append(n.InList(x, plain))
    if zeros:  # pyarrow tells -0.0 from 0.0; whether this zero is in the set stays unknown
        parts.append(n.And((n.Compare("=", x, n.Literal(0.0, zeros[0].type)), n.Func("is_in", (x, *zeros)))))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else n.Or(tuple(parts))


_FOLD_UNSAFE = set("iIkKsS")


def _match(name: str, x: n.Expr, pattern: str, ignore_case: bool) -> n.Expr:
    """The string-matching family as LIKE or regexp_like."""
    if name == "match_substring_regex":
        return n.RegexpLike(x, ("(?i)" if ignore_case else "") + pattern)
    if ignore_case and not (pattern.isascii() and _FOLD_UNSAFE.isdisjoint(pattern)):
        return n.Func(name, (x, n.Literal(pattern)))
    if name == "match_like":
        like = pattern[:-1] if dangling_escape(pattern, "\\") else pattern  # pyarrow ignores it
    else:
        escaped = like_escape(pattern)
        like = {"starts_with": escaped + "%", "ends_with": "%" + escaped}.get(name, "%" + escaped + "%")
    return n.Like(x, like, "\\", case_insensitive=ignore_case)


_ALLOW = ("allow_int_overflow", "allow_time_truncate", "allow_time_overflow", "allow_decimal_truncate",
          "allow_float_truncate", "allow_invalid_utf8")


def _cast(x: n.Expr, options: dict) -> n.Expr:
    to = options["to_type"]
    if not isinstance(to, pa.DataType) or any(options.get(k) for k in _ALLOW) or not (
            pa.types.is_integer(to) or pa.types.is_floating(to) or pa.types.is_decimal(to)
            or pa.types.is_boolean(to) or pa.types.is_date(to) or pa.types.is_timestamp(to)):
        return n.Func("cast", (x,))
    return n.Cast(x, to)
