"""A fast reader for the common predicate subset of SQL, beside sqlglot's.

Programs write predicates of thousands of terms (``x = 1 OR x = 2 OR ...``); sqlglot reads
10,000 of them in about 350 ms. This reader takes the subset such predicates are written in,
in one compiled regular expression and one pass over the tokens on explicit stacks (so 1,000
nested parentheses are no deeper for it than one), and builds the very tree the sqlglot path
builds (:mod:`prune_engine.expr._sql_nodes` holds what both build). Whatever it does not fully
understand it declines (None), and :func:`prune_engine.expr.sql.parse_sql` reads the text with
sqlglot: that includes every malformed text, so error messages are sqlglot's path's.

The subset, in DuckDB's dialect (the default):

====================  ==========================================================================
predicates            ``a op b`` (``= == != <> < <= > >= <=>``), ``a IS [NOT] NULL|TRUE|FALSE``,
                      ``a IS [NOT] DISTINCT FROM b``, ``a [NOT] IN (b, ...)``,
                      ``a [NOT] BETWEEN b AND c``, ``a [NOT] LIKE|ILIKE 'p' [ESCAPE 'e']``,
                      ``a [NOT] RLIKE|REGEXP 'p'``, a bare operand
operands              columns (``a.b``, ``"Quoted"``, ```back`.ticks``), numbers, ``'text'``,
                      ``TRUE FALSE NULL``, unary minus on a number or a column
connectives           ``AND OR NOT`` and parentheses around predicates
====================  ==========================================================================

Anything else declines: functions, casts, arithmetic, comments, a word sqlglot reads as a
keyword or by its text (``CASE``, ``MAP``, ``SYMMETRIC``), an operator next to another operator
character, a predicate that continues past its shape (``a = b = c``).

>>> read("x > 5 AND (s LIKE 'ab%' OR NOT y IS NULL)")
And(args=(Compare(op='>', left=Column(path=('x',)), right=Literal(value=5, type=None)), Or(args=(Like(arg=Column(path=('s',)), pattern='ab%', escape=None, case_insensitive=False, negated=False), IsNull(arg=Column(path=('y',)), negated=True)))))
>>> read("abs(x) > 5") is None
True
"""

from __future__ import annotations

import re

from prune_engine.expr import _sql_nodes as meaning
from prune_engine.expr import nodes as n

__all__ = ["read"]

_NAME_PART = r'(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"]|"")+"|`[^`]+`)'
#: one token per match, after optional whitespace: (a (dotted) name, a number, an operator,
#: a string) or any other character (which declines; whitespace at the end is no token). A
#: number or name must not run into a letter, digit, dot or quote, an operator not into
#: another operator character (``--`` is a comment, ``->`` an arrow, ``=-`` may be either).
_TOKEN = re.compile(r"""[ \t\r\n]*(?:(
    {part}(?:\.{part})*(?![A-Za-z0-9_.'"`$])
  | (?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![A-Za-z0-9_.'"`])
  | (?:<=>|<>|!=|==|<=|>=|=|<|>|-)(?![-<>=!~@&|^*/%+:#?.$])
  | [(),]
  | '(?:[^']|'')*'(?!['"`])
  )|([^ \t\r\n]))""".format(part=_NAME_PART), re.VERBOSE | re.DOTALL)
_OPERATORS = frozenset({"<=>", "<>", "!=", "==", "<=", ">=", "=", "<", ">", "-", "(", ")", ","})

_CMP = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
#: the words of the subset (by sqlglot's keyword table, see :func:`_words`)
_OWN_WORDS = ("AND", "OR", "NOT", "IS", "NULL", "TRUE", "FALSE", "IN", "BETWEEN", "LIKE", "ILIKE",
              "RLIKE", "ESCAPE", "DISTINCT", "FROM")
#: the placeholder names of the sqlglot path's deep-nesting chunks (sql._CHUNK_NAME)
_CHUNK_PREFIX = "__prune_engine_chunk_"


def _words() -> tuple[dict[str, str], frozenset[str]]:
    """(the words of the subset, upper case, to their token kind; the words that decline):
    taken from the tables sqlglot reads the default dialect with, so that a word is a keyword
    here exactly where it is one there."""
    from sqlglot.tokens import TokenType

    from prune_engine.expr.sql import _PruneSql

    own = {getattr(TokenType, w): w for w in _OWN_WORDS}
    words, refused = {}, set()
    for text, kind in _PruneSql.Tokenizer.KEYWORDS.items():
        first = text.split()[0].upper()
        if " " in text:
            refused.add(first)  # the first word of a keyword of several ("SIMILAR TO")
        elif kind in own and first.isidentifier():
            words[first] = own[kind]
        elif kind != TokenType.VAR:
            refused.add(first)
    parser = _PruneSql.parser_class
    refused |= {w.upper() for w in parser.NO_PAREN_FUNCTION_PARSERS}  # CASE, IF, MAP, ...
    refused |= {"SYMMETRIC", "ASYMMETRIC"}  # read by their text after BETWEEN
    return words, frozenset(refused - set(words))


_WORDS: dict[str, str] = {}
_REFUSED: frozenset[str] = frozenset()


class _Decline(Exception):
    """The text is not (all) in the subset: sqlglot reads it."""


def read(text: str) -> n.Expr | None:
    """The node tree of ``text`` if it lies in the subset (see the module doc), else None."""
    global _WORDS, _REFUSED
    if not _WORDS:
        _WORDS, _REFUSED = _words()
    try:
        kinds, values = _tokens(text)
        return _Reader(kinds, values).read()
    except _Decline:
        return None


def _tokens(text: str) -> tuple[list[str], list]:
    """The kinds and values of the tokens of ``text``, then ``end``; kinds: ``name`` (value:
    its column, one node per name), ``lit`` (a number or a string: its literal), a word of the
    subset (``AND``), an operator.

    Text without quotes is read piece by piece between spaces, each distinct piece once (the
    pieces of long chains repeat: ``x``, ``=``, ``OR``): there no token holds a space, and a
    space may follow any token, so the pieces hold the tokens the whole text does."""
    seen: dict[str, tuple[str, object]] = {}  # a token as written -> (kind, value)

    def classify(token: str, other: str) -> tuple[str, object]:
        if other:
            raise _Decline  # a character outside the subset
        got = seen.get(token)
        if got is None:
            got = seen[token] = _classify(token)
        return got

    if "'" in text or '"' in text or "`" in text:  # a quoted token may hold a space
        found = [classify(token, other) for token, other in _TOKEN.findall(text)]
    else:
        found = []
        pieces: dict[str, list] = {}  # a piece -> its tokens' (kind, value)
        for piece in text.split(" "):
            got = pieces.get(piece)
            if got is None:
                if piece.isdigit() and piece.isascii():  # (one number: the common new piece)
                    got = [classify(piece, "")]
                else:
                    got = pieces[piece] = [classify(token, other) for token, other in _TOKEN.findall(piece)]
            found += got
    found.append(("end", None))
    return [k for k, _ in found], [v for _, v in found]


def _classify(token: str) -> tuple[str, object]:
    """(kind, value) of one token (see :func:`_tokens`)."""
    if token.isdigit():  # (an ASCII integer: the regex takes no other digits)
        return "lit", n.Literal(int(token))
    first = token[0]
    if token in _OPERATORS:
        return token, None
    if first == "'":
        return "lit", n.Literal(token[1:-1].replace("''", "'"))
    if first.isdigit() or first == ".":
        return "lit", meaning.number_literal(token, duckdb=True)
    if "." not in token and first not in '"`':
        upper = token.upper()
        word = _WORDS.get(upper)
        if word is not None:
            return word, None
        if upper in _REFUSED or token.startswith(_CHUNK_PREFIX):
            raise _Decline
        return "name", n.Column((token,))
    return "name", n.Column(_path(token))


_PART = re.compile(_NAME_PART)


def _path(name: str) -> tuple[str, ...]:
    """The parts of a dotted name, unquoted; a bare part that is a keyword declines."""
    parts = []
    for m in _PART.finditer(name):
        part = m.group()
        if part[0] == '"':
            parts.append(part[1:-1].replace('""', '"'))
        elif part[0] == "`":
            parts.append(part[1:-1])
        else:
            upper = part.upper()
            if upper in _WORDS or upper in _REFUSED or part.startswith(_CHUNK_PREFIX):
                raise _Decline
            parts.append(part)
    return tuple(parts)


#: tokens that may follow a whole predicate
_AFTER = frozenset({"AND", "OR", ")", "end"})


class _Reader:
    """One pass over the tokens: connectives and parentheses on an explicit stack, each
    predicate by its shape (:meth:`predicate`)."""

    def __init__(self, kinds: list[str], values: list):
        self.kinds = kinds
        self.values = values

    def read(self) -> n.Expr:
        kinds = self.kinds
        # a frame per open parenthesis: [finished AND groups (ORed), current ANDed parts, NOTs]
        frames: list[list] = []
        ors: list[n.Expr] = []
        ands: list[n.Expr] = []
        nots = 0
        i = 0
        while True:
            k = kinds[i]
            if k == "NOT":
                nots += 1
                i += 1
                continue
            if k == "(":
                frames.append([ors, ands, nots])
                ors, ands, nots = [], [], 0
                i += 1
                continue
            node, i = self.predicate(i)
            while True:  # the predicate (or group) is whole: NOTs, then what follows it
                while nots:
                    node = meaning.negate_predicate(node)
                    nots -= 1
                ands.append(node)
                k = kinds[i]
                i += 1
                if k == "AND":
                    break
                if k == "OR":
                    ors.append(_conjunction(ands))
                    ands = []
                    break
                if k == ")" and frames:
                    ors.append(_conjunction(ands))
                    node = _disjunction(ors)
                    ors, ands, nots = frames.pop()
                    continue
                if k == "end" and not frames:
                    ors.append(_conjunction(ands))
                    return _disjunction(ors)
                raise _Decline

    def operand(self, i: int) -> tuple[n.Expr, int]:
        kinds, values = self.kinds, self.values
        k = kinds[i]
        if k == "name" or k == "lit":
            return values[i], i + 1
        if k == "NULL":
            return n.NULL, i + 1
        if k == "TRUE" or k == "FALSE":
            return n.Literal(k == "TRUE"), i + 1
        if k == "-":
            minus = 0
            while kinds[i] == "-":
                minus += 1
                i += 1
            if kinds[i] != "name" and not (kinds[i] == "lit" and not isinstance(self.values[i].value, str)):
                raise _Decline
            node, i = self.operand(i)
            for _ in range(minus):
                node = meaning.negate_value(node)
            return node, i
        raise _Decline

    def string(self, i: int) -> tuple[str, int]:
        value = self.values[i]
        if self.kinds[i] != "lit" or not isinstance(value.value, str):
            raise _Decline
        return value.value, i + 1

    def predicate(self, i: int) -> tuple[n.Expr, int]:
        """The predicate at token ``i`` (an operand and what applies to it), and the index
        after it; it must be followed by AND, OR, ``)`` or the end."""
        kinds = self.kinds
        if kinds[i] == "name":  # (the common case, inline)
            x, i = self.values[i], i + 1
        else:
            x, i = self.operand(i)
        k = kinds[i]
        if k in _AFTER:
            return x, i
        negate = False
        if k in _CMP:
            if kinds[i + 1] == "lit":  # (the common case, inline)
                y, i = self.values[i + 1], i + 2
            else:
                y, i = self.operand(i + 1)
            node: n.Expr = n.Compare(_CMP[k], x, y)
        elif k == "<=>":
            y, i = self.operand(i + 1)
            node = n.IsDistinct(x, y, negated=True)
        elif k == "IS":
            i += 1
            negated = kinds[i] == "NOT"
            i += negated
            k = kinds[i]
            if k == "NULL":
                node, i = n.IsNull(x, negated), i + 1
            elif k == "TRUE" or k == "FALSE":
                node, i = n.IsBool(x, k == "TRUE", negated), i + 1
            elif k == "DISTINCT" and kinds[i + 1] == "FROM":
                y, i = self.operand(i + 2)
                node = n.IsDistinct(x, y, negated)
            else:
                raise _Decline
        else:
            if k == "NOT":
                negate = True
                i += 1
                k = kinds[i]
            i += 1
            if k == "IN":
                if kinds[i] != "(":
                    raise _Decline
                items = []
                while True:
                    item, i = self.operand(i + 1)
                    items.append(item)
                    if kinds[i] == ")":
                        break
                    if kinds[i] != ",":
                        raise _Decline
                i += 1
                node = meaning.in_list(x, tuple(items))
            elif k == "BETWEEN":
                low, i = self.operand(i)
                if kinds[i] != "AND":
                    raise _Decline
                high, i = self.operand(i + 1)
                node = meaning.between(x, low, high)
            elif k == "LIKE" or k == "ILIKE":
                pattern, i = self.string(i)
                escape = None
                if kinds[i] == "ESCAPE":
                    escape, i = self.string(i + 1)
                node = n.Like(x, pattern, escape, k == "ILIKE")
            elif k == "RLIKE":
                pattern, i = self.string(i)
                node = n.RegexpLike(x, pattern)
            else:
                raise _Decline
        if kinds[i] not in _AFTER:
            raise _Decline
        return (meaning.negate_predicate(node) if negate else node), i


def _conjunction(parts: list[n.Expr]) -> n.Expr:
    return parts[0] if len(parts) == 1 else n.And(tuple(parts))


def _disjunction(parts: list[n.Expr]) -> n.Expr:
    return parts[0] if len(parts) == 1 else n.Or(tuple(parts))
