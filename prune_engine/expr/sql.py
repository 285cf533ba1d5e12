"""The SQL front end: WHERE-clause text to the expression tree of :mod:`prune_engine.expr.nodes`.

sqlglot parses the text; this module maps sqlglot's syntax tree onto our nodes one construct at a
time and resolves nothing: names stay as written and types are left to the compiler (binding).
In the default dialect, text in the common predicate subset (comparisons, IS, IN, BETWEEN, LIKE
under AND/OR/NOT: what programs write by the thousand) is read first by
:mod:`prune_engine.expr._fast_sql`, into the same tree; anything else, errors included, is
sqlglot's.

The default dialect is DuckDB's, with backticks accepted as identifier quotes as well, so that
what PySpark and DuckDB users write both parses: ```a.b`.c``, ``"Name"``, ``RLIKE``, ``ILIKE``,
``regexp_like``, ``LIKE ... ESCAPE``, ``<=>``, ``x::BIGINT``.

Mapping decisions worth knowing:

- Numbers keep their exactness: ``1`` is an ``int``, ``1.5`` a :class:`decimal.Decimal` (SQL
  decimal literals are exact), ``1e3`` a ``float``. ``-5`` is folded to the literal ``-5``. In
  DuckDB's dialect (the default) a decimal literal of more than 38 digits is a DOUBLE, as DuckDB
  reads it (``1.00000000000000000000000000000000000000`` is ``1.0``).
- ``X'6162'`` is the bytes ``b'ab'`` (where the dialect reads it as an integer, the integer).
- ``isnan(x)`` / ``is_nan(x)`` and ``x IS [NOT] NAN`` are :class:`~prune_engine.expr.nodes.IsNan`.
- Typed literals (``DATE '2020-01-01'``) stay ``Cast(Literal(str), type)``; the compiler folds them.
- ``NOT`` stays a :class:`~prune_engine.expr.nodes.Not`, except over a predicate that has a
  negated form of its own (``IS NULL``, ``LIKE``, ``IN``, ``IS DISTINCT FROM``, ...): there the
  ``negated`` flag is set. sqlglot does not tell ``x NOT LIKE p`` from ``NOT (x LIKE p)``; both
  mean the same.
- ``BETWEEN`` becomes ``x >= lo AND x <= hi``; ``starts_with(x, 'p')`` becomes
  ``x LIKE 'p%'`` (with the prefix's wildcards escaped).
- Whatever else is a function or operator the compiler need not understand: ``Func(name, args)``,
  which evaluates to "unknown" and keeps. An unknown function is never an error.

>>> str(parse_sql("x > 5 AND s LIKE 'ab%' AND `st`.`a` IN (1, 2)"))
"x > 5 AND s LIKE 'ab%' AND st.a IN (1, 2)"
>>> parse_sql("price >= 1.50")
Compare(op='>=', left=Column(path=('price',)), right=Literal(value=Decimal('1.50'), type=None))
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.hive import Hive
from sqlglot.errors import ParseError, TokenError

from prune_engine.errors import PruneEngineError, SqlParseError
from prune_engine.expr import _fast_sql
from prune_engine.expr import _sql_nodes as meaning
from prune_engine.expr import nodes as n
from prune_engine.expr.like import like_escape

__all__ = ["parse_sql"]


class _PruneSql(DuckDB):
    """DuckDB's dialect, also accepting Spark's backtick-quoted identifiers and the hex binary
    literal ``X'..'`` (DuckDB, Spark, PostgreSQL and DataFusion all read it as bytes)."""

    class Tokenizer(DuckDB.Tokenizer):
        IDENTIFIERS = ['"', "`"]
        HEX_STRINGS = [("x'", "'"), ("X'", "'")]


#: function names (any dialect) meaning "the list contains the value", arguments (list, value)
_ARRAY_CONTAINS = {"array_contains", "list_contains", "list_has", "array_has"}
#: function names meaning "the regex matches somewhere in the string", arguments (string, regex)
_REGEXP_SEARCH = {"regexp_like", "regexp_matches", "rlike", "regexp"}

_COMPARE = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}

_NUMBER_INT = meaning.NUMBER_INT


def parse_sql(text: str, dialect: str | None = None) -> n.Expr:
    """Parse one SQL boolean expression (a WHERE clause without ``WHERE``) into a node tree.

    ``dialect`` is any sqlglot dialect name (``"spark"``, ``"duckdb"``, ...); the default accepts
    both DuckDB and Spark spellings. Malformed text raises :class:`~prune_engine.SqlParseError`
    with the 1-based line and column of the fault.

    >>> str(parse_sql("NOT (x BETWEEN 1 AND 5) OR y IS NOT NULL"))
    'NOT (x >= 1 AND x <= 5) OR y IS NOT NULL'
    >>> try:
    ...     parse_sql("x > AND 5")
    ... except SqlParseError as e:
    ...     (e.line, e.col)
    (1, 7)
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_sql expects SQL text (str), got {type(text).__name__}")
    if dialect is None:  # the common subset, read without sqlglot (long predicates of programs)
        fast = _fast_sql.read(text)
        if fast is not None:
            return fast
    return read_with_sqlglot(text, dialect)


def read_with_sqlglot(text: str, dialect: str | None = None) -> n.Expr:
    """:func:`parse_sql` through sqlglot alone (the fast reader's reference)."""
    dialect_obj = _dialect(dialect)
    tokenizer = dialect_obj.tokenizer()
    try:
        tokens = tokenizer.tokenize(text)
    except TokenError as e:
        offset = getattr(getattr(tokenizer, "_core", tokenizer), "_start", len(text))
        cause = e.__cause__ if isinstance(e.__cause__, TokenError) else None
        what = "cannot read this character"
        if cause is not None:
            what = ("a hex literal with a character that is no hex digit" if "Numeric string" in str(cause)
                    else "unterminated string, identifier or comment")
        raise SqlParseError(what, text, *_line_col(text, offset)) from None
    converter = _Converter(text, dialect_obj)
    try:
        split = _split_deep(tokens)
        chunks: list[tuple[str, list]] = []
        if split is not None:  # deeply nested parentheses: read in chunks (see _split_deep)
            tokens, chunks = split
            for name, chunk in chunks:  # innermost first
                converter.chunks[name] = _convert_root(converter, _parse_one(dialect_obj, chunk, text), chunk)
        return _convert_root(converter, _parse_one(dialect_obj, tokens, text), tokens)
    except RecursionError:
        raise SqlParseError("the expression nests too deeply to read (a long chain of NOT, unary "
                            "minus, function calls or arithmetic); write it flatter", text,
                            *_line_col(text, _deepest(tokens))) from None


def _parse_one(dialect_obj: sqlglot.Dialect, tokens: list, text: str) -> exp.Expr:
    """The one sqlglot expression of ``tokens`` (all of the text, or one chunk of it)."""
    try:
        statements = [s for s in dialect_obj.parser().parse(tokens, text) if s is not None]
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        line, col = first.get("line") or 1, first.get("col") or 1
        raise SqlParseError(_parse_error_words(first, str(e), tokens, text), text, line, col) from None
    if not statements:
        raise SqlParseError("empty SQL: expected one boolean expression", text, 1, 1)
    if len(statements) > 1:
        raise SqlParseError("expected one expression, found several statements", text,
                            *_second_statement(text, tokens))
    return statements[0]


def _convert_root(converter: "_Converter", root: exp.Expr, tokens: list) -> n.Expr:
    if isinstance(root, exp.Query) or not isinstance(root, (exp.Condition, exp.Alias)):
        raise SqlParseError(f"expected one boolean expression, found a {root.key.upper()} statement "
                            f"or clause", converter.sql, *_line_col(converter.sql, tokens[0].start if tokens else 0))
    try:
        return converter.convert(root)
    except _Unconvertible as e:
        raise SqlParseError(f"expected a boolean expression, found {e.args[0]}", converter.sql,
                            *converter.position(e.args[1])) from None


# --------------------------------------------------------------------------------------------
# deep nesting: reading in chunks

_TT = sqlglot.TokenType
#: levels of parentheses beyond which text is read in chunks (sqlglot's parser recurses about
#: 25 calls deep per level, against Python's limit of 1,000)
DEEP_PARENS = 16
#: the most levels of parentheses one chunk keeps
CHUNK_LEVELS = 8
#: tokens after which ``(`` opens a bare group (an operand), not a call's or IN's argument list
_BARE_AFTER = {None, _TT.L_PAREN, _TT.COMMA, _TT.AND, _TT.OR, _TT.NOT, _TT.EQ, _TT.NEQ, _TT.LT,
               _TT.LTE, _TT.GT, _TT.GTE, _TT.PLUS, _TT.DASH, _TT.STAR, _TT.SLASH, _TT.MOD,
               _TT.BETWEEN, _TT.LIKE, _TT.ILIKE, _TT.RLIKE, _TT.CASE, _TT.WHEN, _TT.THEN, _TT.ELSE,
               _TT.NULLSAFE_EQ, _TT.DPIPE, _TT.IS, _TT.CARET, _TT.AMP, _TT.PIPE}
_CHUNK_NAME = "__prune_engine_chunk_{}__"


def _split_deep(tokens: list) -> tuple[list, list[tuple[str, list]]] | None:
    """For text nested more than :data:`DEEP_PARENS` parentheses deep (None otherwise): the
    tokens with every bare parenthesized group that holds :data:`CHUNK_LEVELS` levels or more
    replaced by a placeholder name, and those groups (placeholders inside them too), innermost
    first. Each piece is parsed on its own, none deeper than ``CHUNK_LEVELS`` (plus what
    cannot be split: argument lists), and the converter puts the pieces back together. A
    parenthesized group is an operand already, so reading it apart changes no meaning."""
    depth = deepest = 0
    for t in tokens:
        depth += (t.token_type == _TT.L_PAREN) - (t.token_type == _TT.R_PAREN)
        deepest = max(deepest, depth)
    if deepest <= DEEP_PARENS:
        return None
    opens: list[list] = []  # [index of "(", levels inside it that stay, is it bare]
    cut_open, cut_close = set(), set()
    for i, t in enumerate(tokens):
        if t.token_type == _TT.L_PAREN:
            opens.append([i, 0, (tokens[i - 1].token_type if i else None) in _BARE_AFTER])
        elif t.token_type == _TT.R_PAREN and opens:
            start, inside, bare = opens.pop()
            levels = inside + 1
            if bare and levels >= CHUNK_LEVELS:
                cut_open.add(start)
                cut_close.add(i)
                levels = 0
            if opens:
                opens[-1][1] = max(opens[-1][1], levels)
    pieces: list[list] = [[]]
    chunks: list[tuple[str, list]] = []
    for i, t in enumerate(tokens):
        if i in cut_open:
            pieces.append([t])
            continue
        pieces[-1].append(t)
        if i in cut_close:
            body = pieces.pop()
            name = _CHUNK_NAME.format(len(chunks))
            chunks.append((name, body))
            pieces[-1].append(sqlglot.tokens.Token(_TT.VAR, name, body[0].line, body[0].col,
                                                   body[0].start, t.end))
    return pieces[0], chunks


def _deepest(tokens: list) -> int:
    """The offset of the first token at the deepest level of parentheses."""
    depth = deepest = 0
    where = tokens[0].start if tokens else 0
    for t in tokens:
        depth += (t.token_type == _TT.L_PAREN) - (t.token_type == _TT.R_PAREN)
        if depth > deepest:
            deepest, where = depth, t.start
    return where


# --------------------------------------------------------------------------------------------
# parse errors in the user's words

#: how the user wrote the construct of a sqlglot class (by class name)
_CONSTRUCT = {
    "GT": "'>'", "GTE": "'>='", "LT": "'<'", "LTE": "'<='", "EQ": "'='", "NEQ": "'<>'",
    "NullSafeEQ": "'<=>'", "Add": "'+'", "Sub": "'-'", "Mul": "'*'", "Div": "'/'", "Mod": "'%'",
    "And": "AND", "Or": "OR", "Not": "NOT", "Neg": "'-'", "Like": "LIKE", "ILike": "ILIKE",
    "RegexpLike": "RLIKE", "Between": "BETWEEN", "In": "IN", "Is": "IS", "Cast": "CAST",
    "TryCast": "TRY_CAST", "Escape": "ESCAPE", "DPipe": "'||'", "Paren": "'('",
}
_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")
_CLASS_REPR = re.compile(r"<class '[\w.]*?(\w+)'>")


def _parse_error_words(error: dict, fallback: str, tokens: list, text: str) -> str:
    """sqlglot's description of a parse error, said in the words of the SQL the user wrote
    (one line; no Python class names).

    >>> _parse_error_words({"description": "Required keyword: 'expression' missing for "
    ...                     "<class 'sqlglot.expressions.core.GT'>"}, "", [], "x >")
    "expected an expression after '>'"
    """
    description = (error.get("description") or fallback or "cannot read this SQL").splitlines()[0]
    found = _REQUIRED.search(description)
    if found:
        arg, cls = found.groups()
        what = _CONSTRUCT.get(cls, cls.upper())
        if arg == "expression" or (arg == "this" and cls in ("Not", "Neg")):
            return f"expected an expression after {what}"
        if arg == "this":
            return f"expected an expression before {what}"
        if cls == "Between":
            return f"expected BETWEEN low AND high: the {'upper' if arg == 'high' else 'lower'} bound is missing"
        return f"incomplete {what}: its {arg} is missing"
    if description.startswith("Expecting )"):
        unclosed = _unclosed_paren(tokens)
        if unclosed is not None:
            line, col = _line_col(text, unclosed)
            return f"expected ')' to close the '(' at line {line}, column {col}"
        return "expected ')'"
    if description.startswith("Expected TYPE after CAST"):
        return "expected a type after AS in CAST(... AS type)"
    if description.startswith("Invalid expression / Unexpected token"):
        word = (error.get("highlight") or "").strip()
        return f"unexpected {word!r}" if word else "unexpected text"
    return _CLASS_REPR.sub(lambda m: _CONSTRUCT.get(m.group(1), m.group(1).upper()), description)


def _unclosed_paren(tokens: list) -> int | None:
    """The offset of the last ``(`` that no ``)`` closes, if any."""
    opens = []
    for t in tokens:
        if t.token_type == _TT.L_PAREN:
            opens.append(t.start)
        elif t.token_type == _TT.R_PAREN and opens:
            opens.pop()
    return opens[-1] if opens else None


# --------------------------------------------------------------------------------------------
# dialects and positions


def _dialect(dialect: str | None) -> sqlglot.Dialect:
    if dialect is None:
        return _PruneSql()
    try:
        return sqlglot.Dialect.get_or_raise(dialect)
    except (ValueError, KeyError) as e:
        raise PruneEngineError(f"unknown SQL dialect {dialect!r}: {e}") from None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a 0-based character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _second_statement(text: str, tokens) -> tuple[int, int]:
    """Where the second statement starts: the first token after a semicolon."""
    for i, tok in enumerate(tokens[:-1]):
        if tok.token_type == sqlglot.TokenType.SEMICOLON:
            return _line_col(text, tokens[i + 1].start)
    return _line_col(text, len(text))  # pragma: no cover - sqlglot splits only at semicolons


# --------------------------------------------------------------------------------------------
# the conversion


class _Unconvertible(Exception):
    """Text that parsed but is no expression (``x = 0x10`` reads as ``x = 0`` aliased ``x10``):
    args are a description and the node that locates the fault."""


#: syntax nodes that are no value: as a function argument they make the call opaque
_NOT_VALUES = (exp.Query, exp.Subquery, exp.Star, exp.Var, exp.Identifier, exp.DataType)


class _Converter:
    """Maps one sqlglot tree onto nodes; ``sql`` and ``dialect`` give positions and defaults."""

    def __init__(self, sql: str, dialect: sqlglot.Dialect):
        self.sql = sql
        self.dialect = dialect
        self.chunks: dict[str, n.Expr] = {}  # placeholder name -> the converted chunk

    def position(self, node: exp.Expr) -> tuple[int, int]:
        """(line, col) of the earliest token under ``node`` that sqlglot located."""
        starts = [e.meta["start"] for e in node.walk() if isinstance(e, exp.Expr) and "start" in e.meta]
        return _line_col(self.sql, min(starts)) if starts else (1, 1)

    def convert(self, node: exp.Expr) -> n.Expr:
        for cls in type(node).__mro__:
            handler = _HANDLERS.get(cls)
            if handler is not None:
                return handler(self, node)
        return self.generic(node)

    # generic ----------------------------------------------------------------------------
    def generic(self, node: exp.Expr) -> n.Expr:
        """Any function or operator we do not model: ``Func(name, converted args)``; a syntax
        node that is no value (a subquery, ``*``, a unit keyword) is ``Func(kind, ())``."""
        if isinstance(node, _NOT_VALUES):
            return n.Func(node.key, ())
        return n.Func(_func_name(node), self.args_or_empty(node))

    def args_or_empty(self, node: exp.Expr, values: list | None = None) -> tuple[n.Expr, ...]:
        """The converted arguments of ``node`` (all of them, in order), or ``()`` when one of
        them is no value (a subquery, ``*``, a unit keyword)."""
        if values is None:
            values = []
            for key in node.arg_types:
                value = node.args.get(key)
                values.extend(v for v in (value if isinstance(value, list) else [value])
                              if isinstance(v, exp.Expr))
        if any(isinstance(v, _NOT_VALUES) for v in values):
            return ()
        return tuple(self.convert(v) for v in values)

    # leaves -----------------------------------------------------------------------------
    def literal(self, node: exp.Literal) -> n.Expr:
        text = node.this
        if node.is_string:
            return n.Literal(str(text))
        return meaning.number_literal(text, duckdb=isinstance(self.dialect, DuckDB))

    def hex_string(self, node: exp.HexString) -> n.Expr:
        digits = node.this
        if node.args.get("is_integer"):
            return n.Literal(int(digits or "0", 16))
        start = node.meta.get("start")
        if start is not None and self.sql[start:start + 2].lower() == "0x":
            # sqlglot reads 0x10 as a hex string; DuckDB rejects it, MySQL reads the number 16
            raise SqlParseError("0x... is not a number in this dialect; write X'..' for bytes",
                                self.sql, *self.position(node))
        try:
            return n.Literal(bytes.fromhex(digits))
        except ValueError:
            raise SqlParseError(f"hex literal X'{digits}' must hold whole bytes (pairs of hex digits)",
                                self.sql, *self.position(node)) from None

    def boolean(self, node: exp.Boolean) -> n.Expr:
        return n.Literal(bool(node.this))

    def null(self, node: exp.Null) -> n.Expr:
        return n.NULL

    def column(self, node: exp.Expr) -> n.Expr:
        path = _path(node)
        if path is not None and len(path) == 1 and path[0] in self.chunks and isinstance(node, exp.Column) \
                and not node.this.quoted:
            return self.chunks[path[0]]
        return n.Column(path) if path is not None else self.generic(node)

    def alias(self, node: exp.Alias) -> n.Expr:
        ident = node.args.get("alias")
        raise _Unconvertible(f"an alias '{node.alias}' (is an operator missing?)",
                             ident if isinstance(ident, exp.Expr) else node)

    def paren(self, node: exp.Paren) -> n.Expr:
        return self.convert(node.this)

    # boolean connectives ----------------------------------------------------------------
    def connective(self, node: exp.Connector) -> n.Expr:
        kind = type(node)
        args, stack = [], [node]
        while stack:  # iterative: long AND chains must not hit the recursion limit
            cur = stack.pop()
            while isinstance(cur, exp.Paren):
                cur = cur.this
            if type(cur) is kind:
                stack.extend((cur.expression, cur.this))
                continue
            converted = self.convert(cur)
            target = n.And if kind is exp.And else n.Or
            args.extend(converted.args if isinstance(converted, target) else (converted,))
        return n.And(tuple(args)) if kind is exp.And else n.Or(tuple(args))

    def not_(self, node: exp.Not) -> n.Expr:
        return meaning.negate_predicate(self.convert(node.this))

    # predicates -------------------------------------------------------------------------
    def compare(self, node: exp.Binary) -> n.Expr:
        return n.Compare(_COMPARE[type(node)], self.convert(node.this), self.convert(node.expression))

    def null_safe(self, node: exp.Binary) -> n.Expr:
        return n.IsDistinct(self.convert(node.this), self.convert(node.expression),
                            negated=isinstance(node, exp.NullSafeEQ))

    def is_(self, node: exp.Is) -> n.Expr:
        target = node.expression
        if isinstance(target, exp.Null):
            return n.IsNull(self.convert(node.this))
        if isinstance(target, exp.Boolean):
            return n.IsBool(self.convert(node.this), bool(target.this))
        if _is_nan_keyword(target):  # x IS NAN (Oracle's spelling)
            return n.IsNan(self.convert(node.this))
        return self.generic(node)

    def is_nan(self, node: exp.IsNan) -> n.Expr:
        return n.IsNan(self.convert(node.this))

    def between(self, node: exp.Between) -> n.Expr:
        if node.args.get("symmetric"):
            return self.generic(node)
        return meaning.between(self.convert(node.this), self.convert(node.args["low"]),
                               self.convert(node.args["high"]))

    def in_(self, node: exp.In) -> n.Expr:
        if any(node.args.get(k) for k in ("query", "unnest", "field")):
            return n.Func("in", ())
        items = node.expressions
        converted = self.args_or_empty(node, [node.this, *items])
        if len(converted) != len(items) + 1:
            return n.Func("in", ())
        return meaning.in_list(converted[0], converted[1:])

    def like(self, node: exp.Expr, escape: exp.Expr | None = None) -> n.Expr:
        """``[NOT] LIKE`` / ``ILIKE`` (``node``), with the ``ESCAPE`` literal if any."""
        if isinstance(node, exp.Not):
            return self.like(node.this, escape).invert() if isinstance(node.this, (exp.Like, exp.ILike)) \
                else self.generic(node)
        x, pattern = self.convert(node.this), self.convert(node.expression)
        esc = self.convert(escape) if escape is not None else None
        insensitive = isinstance(node, exp.ILike)
        if _is_str(pattern) and (esc is None or _is_str(esc)):
            result: n.Expr = n.Like(x, pattern.value, esc.value if esc is not None else None, insensitive)
        else:
            result = n.Func("ilike" if insensitive else "like", (x, pattern) + ((esc,) if esc else ()))
        if node.args.get("negate"):
            result = result.invert()
        return result

    def escape(self, node: exp.Escape) -> n.Expr:
        if isinstance(node.this, (exp.Like, exp.ILike, exp.Not)):
            return self.like(node.this, node.expression)
        return self.generic(node)

    def regexp_like(self, node: exp.RegexpLike) -> n.Expr:
        if node.args.get("flag") or node.args.get("full_match"):
            return self.generic(node)
        return self.regexp(self.convert(node.this), self.convert(node.expression))

    def regexp(self, x: n.Expr, pattern: n.Expr) -> n.Expr:
        if _is_str(pattern):
            return n.RegexpLike(x, pattern.value)
        return n.Func("regexp_like", (x, pattern))

    def starts_with(self, node: exp.StartsWith) -> n.Expr:
        x, prefix = self.convert(node.this), self.convert(node.expression)
        if _is_str(prefix):
            return n.Like(x, like_escape(prefix.value) + "%", "\\")
        return n.Func("starts_with", (x, prefix))

    # values -----------------------------------------------------------------------------
    def arith(self, node: exp.Binary) -> n.Expr:
        return n.Arith(_ARITH[type(node)], self.convert(node.this), self.convert(node.expression))

    def neg(self, node: exp.Neg) -> n.Expr:
        return meaning.negate_value(self.convert(node.this))

    def cast(self, node: exp.Cast) -> n.Expr:
        arg = self.convert(node.this)
        to = node.args.get("to")
        target = _arrow_type(to, self.dialect) if isinstance(to, exp.DataType) else None
        if target is None or node.args.get("format") or node.args.get("default"):
            return n.Func("cast", (arg,))
        return n.Cast(arg, target)

    def array_contains(self, node: exp.ArrayContains) -> n.Expr:
        return n.Func("array_contains", self.args_or_empty(node, [node.this, node.expression]))

    def anonymous(self, node: exp.Anonymous) -> n.Expr:
        name = node.name.lower()
        args = self.args_or_empty(node)
        if len(args) == 2 and len(node.expressions) == 2:
            if name in _ARRAY_CONTAINS:
                return n.Func("array_contains", args)
            if name in _REGEXP_SEARCH:
                return self.regexp(*args)
        return n.Func(name, args)


_HANDLERS: dict[type, Any] = {
    exp.Literal: _Converter.literal,
    exp.HexString: _Converter.hex_string,
    exp.Boolean: _Converter.boolean,
    exp.Null: _Converter.null,
    exp.Column: _Converter.column,
    exp.Dot: _Converter.column,
    exp.Alias: _Converter.alias,
    exp.Paren: _Converter.paren,
    exp.And: _Converter.connective,
    exp.Or: _Converter.connective,
    exp.Not: _Converter.not_,
    exp.NullSafeEQ: _Converter.null_safe,
    exp.NullSafeNEQ: _Converter.null_safe,
    exp.Is: _Converter.is_,
    exp.IsNan: _Converter.is_nan,
    exp.Between: _Converter.between,
    exp.In: _Converter.in_,
    exp.Like: _Converter.like,
    exp.ILike: _Converter.like,
    exp.Escape: _Converter.escape,
    exp.RegexpLike: _Converter.regexp_like,
    exp.StartsWith: _Converter.starts_with,
    exp.Neg: _Converter.neg,
    exp.Cast: _Converter.cast,  # TryCast derives from Cast
    exp.ArrayContains: _Converter.array_contains,
    exp.Anonymous: _Converter.anonymous,
    **{cls: _Converter.compare for cls in _COMPARE},
    **{cls: _Converter.arith for cls in _ARITH},
}


def _is_nan_keyword(node: exp.Expr) -> bool:
    """The bare word ``NAN`` (unquoted), as in ``x IS NAN``."""
    return (isinstance(node, exp.Column) and len(node.parts) == 1 and isinstance(node.this, exp.Identifier)
            and not node.this.quoted and node.this.this.upper() == "NAN")


def _is_str(e: n.Expr) -> bool:
    return isinstance(e, n.Literal) and isinstance(e.value, str)


def _func_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return node.key


def _path(node: exp.Expr) -> tuple[str, ...] | None:
    """The column path of a ``Column`` or a ``Dot`` chain over one, else None."""
    if isinstance(node, exp.Column):
        parts = node.parts
        if not parts or not all(isinstance(p, exp.Identifier) for p in parts):
            return None
        return tuple(p.this for p in parts)
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        head = _path(node.this)
        return head + (node.expression.this,) if head is not None else None
    return None


# --------------------------------------------------------------------------------------------
# SQL types to Arrow types

_T = exp.DataType.Type
_SIMPLE_TYPES: dict[str, pa.DataType] = {
    "BIGINT": pa.int64(), "INT": pa.int32(), "SMALLINT": pa.int16(), "TINYINT": pa.int8(),
    "UBIGINT": pa.uint64(), "UINT": pa.uint32(), "USMALLINT": pa.uint16(), "UTINYINT": pa.uint8(),
    "DOUBLE": pa.float64(), "FLOAT": pa.float32(),
    "VARCHAR": pa.string(), "TEXT": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"), "TIMESTAMPNTZ": pa.timestamp("us"), "DATETIME": pa.timestamp("us"),
    "TIMESTAMP_NS": pa.timestamp("ns"),
    "TIMESTAMP_MS": pa.timestamp("ms"), "TIMESTAMP_S": pa.timestamp("s"),
    "TIMESTAMPTZ": pa.timestamp("us", "UTC"),
    "BOOLEAN": pa.bool_(),
    "VARBINARY": pa.binary(), "BINARY": pa.binary(), "BLOB": pa.binary(),
}
_TYPE_MAP = {getattr(_T, name): t for name, t in _SIMPLE_TYPES.items() if hasattr(_T, name)}


def _arrow_type(dt: exp.DataType, dialect: sqlglot.Dialect) -> pa.DataType | None:
    """The Arrow type of a SQL type, or None when it has no faithful Arrow counterpart."""
    params = dt.expressions
    if dt.this == _T.DECIMAL:
        return _decimal_type(params, dialect)
    if params:  # VARCHAR(3), TIMESTAMP(3), ...: lengths and precisions change the meaning
        return None
    return _TYPE_MAP.get(dt.this)


def _decimal_type(params: list, dialect: sqlglot.Dialect) -> pa.DataType | None:
    values = []
    for p in params:
        inner = p.this if isinstance(p, exp.DataTypeParam) else p
        if not (isinstance(inner, exp.Literal) and _NUMBER_INT.fullmatch(str(inner.this))):
            return None
        values.append(int(inner.this))
    if not values:  # a bare DECIMAL: DuckDB's default, or Spark's and Hive's
        values = [10, 0] if isinstance(dialect, Hive) else [18, 3]
    precision, scale = values[0], values[1] if len(values) > 1 else 0
    if not (1 <= precision <= 76 and 0 <= scale <= precision):
        return None
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
