"""From a LIKE pattern, a list of values or a regex to a gram query that every match satisfies.

A gram query is a small tree of tuples::

    ("true",)                  no constraint: keep (the pattern has no usable gram)
    ("gram", (cp, ...))        this gram (code points, START_MARK / END_MARK at the edges)
    ("and", (q, ...)), ("or", (q, ...))

Soundness rule: a value matching the pattern must contain every gram the query asks for (in
its ``START + value + END`` form). So only text the match must contain verbatim becomes grams:

* LIKE: the pattern is read exactly as SQL does (``%`` any run, ``_`` one code point, only an
  explicit ESCAPE character escapes, DuckDB semantics). Each run of literal code points gives
  the grams inside it; a run at the very start (end) of the pattern also gets the START (END)
  marker, so ``'abc%'`` asks for ``^ab`` and ``abc``. ``'a%b%c'``, ``'ab_cd%'`` work run by run.
* ILIKE: the same on the folded pattern (:mod:`.fold`), probed against the folded gram set.
* ``=`` / ``IN``: every gram of ``START + value + END``, OR-ed over the values.
* regex (RE2, a search): literal text, alternations and small character classes expand into
  sets of exact strings; everything else (``.``, ``*``, big classes, flags) is "unknown".

>>> like_query("ab_cd%", n=3)
('gram', (1114112, 97, 98))
>>> like_query("%checkout%", n=3)[1][:2]
(('gram', (99, 104, 101)), ('gram', (104, 101, 99)))
"""

from __future__ import annotations

from typing import Sequence

from prune_engine.ngram.fold import fold_cp, is_caseless
from prune_engine.expr import like
from prune_engine.ngram.format import END_MARK, START_MARK

TRUE = ("true",)

#: budgets of the regex expansion (beyond them a part becomes "unknown" or an OR of parts)
MAX_EXACT_STRINGS = 64
MAX_CLASS_CHARS = 8
#: most terms of a query's OR-of-ANDs form (:func:`dnf`)
MAX_TERMS = 256


def q_and(parts) -> tuple:
    """AND of queries; TRUE parts vanish, duplicates are dropped, one part is itself."""
    flat: list = []
    for p in parts:
        items = p[1] if p[0] == "and" else (p,)
        for item in items:
            if item != TRUE and item not in flat:
                flat.append(item)
    if not flat:
        return TRUE
    return flat[0] if len(flat) == 1 else ("and", tuple(flat))


def q_or(parts) -> tuple:
    """OR of queries; any TRUE part makes it TRUE."""
    flat: list = []
    for p in parts:
        if p == TRUE:
            return TRUE
        for item in (p[1] if p[0] == "or" else (p,)):
            if item not in flat:
                flat.append(item)
    if not flat:
        return TRUE
    return flat[0] if len(flat) == 1 else ("or", tuple(flat))


def run_query(seq: Sequence[int], n: int) -> tuple:
    """AND of the grams of one run of code points (TRUE when it is shorter than ``n``)."""
    return q_and([("gram", tuple(seq[i:i + n])) for i in range(len(seq) - n + 1)])


def _cps(text: str) -> list[int]:
    return [ord(c) for c in text]


def like_query(pattern: str, n: int, escape: str | None = None,
               case_insensitive: bool = False) -> tuple:
    """Gram query that every value matching ``pattern`` (LIKE, or ILIKE) satisfies."""
    if case_insensitive:
        if escape and not is_caseless(escape):
            return TRUE  # DuckDB folds the pattern before it looks for the escape: keep
        pattern = "".join(chr(fold_cp(ord(c))) for c in pattern)
    runs: list[list[int]] = []
    current: list[int] = [START_MARK]
    for tok in like.parse_like(pattern, escape):
        if like.is_wildcard(tok):
            runs.append(current)
            current = []
            continue
        for cp in _cps(tok):
            if 0xD800 <= cp < 0xE000:  # a lone surrogate, which no stored string holds
                runs.append(current)
                current = []
            else:
                current.append(cp)
    current.append(END_MARK)
    runs.append(current)
    return q_and([run_query(r, n) for r in runs])


def equals_query(values: Sequence[str | None], n: int) -> tuple | None:
    """Query of ``col IN values``: OR over the values of all their grams; None = no value."""
    parts = [run_query([START_MARK] + _cps(v) + [END_MARK], n) for v in values if v is not None]
    return q_or(parts) if parts else None


# ---------------------------------------------------------------- regex (RE2 subset) ----------

class _Unknown(Exception):
    """The regex uses something this reader does not model: the whole query keeps."""


class _Info:
    """What one regex piece matches: a finite set of exact strings, or only a query."""

    __slots__ = ("exact", "query")

    def __init__(self, exact=None, query=TRUE):
        self.exact = exact  # frozenset of tuples of code points / markers, or None
        self.query = query


_ANY = _Info(None, TRUE)
_EMPTY = _Info(frozenset({()}))


def _clean(s: tuple) -> tuple | None:
    """Collapse repeated markers; None when a marker is not at its edge (keep that string)."""
    out: list[int] = []
    for cp in s:
        if cp in (START_MARK, END_MARK) and out and out[-1] == cp:
            continue
        out.append(cp)
    for i, cp in enumerate(out):
        if (cp == START_MARK and i != 0) or (cp == END_MARK and i != len(out) - 1):
            return None
    return tuple(out)


def _to_query(info: _Info, n: int) -> tuple:
    if info.exact is None:
        return info.query
    parts = []
    for s in info.exact:
        s = _clean(s)
        parts.append(TRUE if s is None else run_query(s, n))
    return q_or(parts)


def _alternate(a: _Info, b: _Info, n: int) -> _Info:
    if a.exact is not None and b.exact is not None and len(a.exact | b.exact) <= MAX_EXACT_STRINGS:
        return _Info(a.exact | b.exact)
    return _Info(None, q_or([_to_query(a, n), _to_query(b, n)]))


_ESCAPED_CHARS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_CLASS_ESCAPES = set("dDsSwWpPC")
_HEX = set("0123456789abcdefABCDEF")


class _RegexReader:
    """Recursive-descent reader of an RE2 pattern into :class:`_Info` (raises _Unknown)."""

    def __init__(self, pattern: str, n: int):
        self.s = pattern
        self.i = 0
        self.n = n

    def peek(self) -> str | None:
        return self.s[self.i] if self.i < len(self.s) else None

    def take(self) -> str:
        if self.i >= len(self.s):
            raise _Unknown
        ch = self.s[self.i]
        self.i += 1
        return ch

    def alternation(self) -> _Info:
        info = self.concat()
        while self.peek() == "|":
            self.i += 1
            info = _alternate(info, self.concat(), self.n)
        return info

    def concat(self) -> _Info:
        """Exact pieces extend the current set of strings; an inexact piece (or the budget)
        closes it into the query, so text after a ``.*`` still forms grams."""
        done: list[tuple] = []
        current = _EMPTY.exact
        while self.peek() not in (None, "|", ")"):
            piece = self.repeat()
            if piece.exact is not None and len(current) * len(piece.exact) <= MAX_EXACT_STRINGS:
                current = frozenset(x + y for x in current for y in piece.exact)
                continue
            done.append(_to_query(_Info(current), self.n))
            if piece.exact is None:
                done.append(piece.query)
                current = _EMPTY.exact
            else:
                current = piece.exact
        if not done:
            return _Info(current)
        return _Info(None, q_and(done + [_to_query(_Info(current), self.n)]))

    def repeat(self) -> _Info:
        atom = self.atom()
        ch = self.peek()
        if ch is None or ch not in "*+?{":
            return atom
        if ch == "{":
            lo = self.braces()
        else:
            self.i += 1
            lo = 1 if ch == "+" else 0
            if ch == "?" and atom.exact is not None:
                atom = _Info(atom.exact | {()})
                lo = -1
        if self.peek() == "?":  # lazy form: same strings
            self.i += 1
        if self.peek() is not None and self.peek() in "*+?{":
            raise _Unknown  # RE2 rejects a repeated repetition
        if lo == -1:
            return atom
        return _Info(None, _to_query(atom, self.n)) if lo >= 1 else _ANY

    def braces(self) -> int:
        j = self.s.find("}", self.i)
        body = self.s[self.i + 1:j] if j > 0 else ""
        lo, _, hi = body.partition(",")
        if not lo.isdigit() or (hi and not hi.isdigit()) or not lo.isascii() or not hi.isascii():
            raise _Unknown  # RE2 would read a literal '{' here; do not guess
        self.i = j + 1
        return int(lo)

    def atom(self) -> _Info:
        ch = self.take()
        if ch == "(":
            if self.s.startswith("?:", self.i):
                self.i += 2
            elif self.s.startswith("?P<", self.i) or self.s.startswith("?<", self.i):
                self.i = self.s.index(">", self.i) + 1 if ">" in self.s[self.i:] else len(self.s)
            elif self.peek() == "?":
                raise _Unknown  # flags such as (?i) change what the literals mean
            info = self.alternation()
            if self.take() != ")":
                raise _Unknown
            return info
        if ch in ")*+?{}|":
            raise _Unknown
        if ch == "[":
            return self.char_class()
        if ch == ".":
            return _ANY
        if ch == "^":
            return _Info(frozenset({(START_MARK,)}))
        if ch == "$":
            return _Info(frozenset({(END_MARK,)}))
        if ch == "\\":
            return self.escape()
        return _Info(frozenset({(ord(ch),)}))

    def escape(self) -> _Info:
        ch = self.take()
        if ch == "A":
            return _Info(frozenset({(START_MARK,)}))
        if ch == "z":
            return _Info(frozenset({(END_MARK,)}))
        if ch in "bB":
            return _EMPTY  # a zero-width test only narrows the matches
        if ch == "Q":
            j = self.s.find("\\E", self.i)
            text = self.s[self.i:] if j < 0 else self.s[self.i:j]
            self.i = len(self.s) if j < 0 else j + 2
            return _Info(frozenset({tuple(_cps(text))}))
        cp = self.escaped_char(ch)
        if cp is None:
            if ch in "pP" and self.peek() == "{":
                self.i = self.s.index("}", self.i) + 1 if "}" in self.s[self.i:] else len(self.s)
            elif ch in "pP":
                self.take()
            return _ANY
        return _Info(frozenset({(cp,)}))

    def escaped_char(self, ch: str) -> int | None:
        """Code point of ``\\ch`` (None for a class escape such as ``\\d``); _Unknown if odd."""
        if ch in _CLASS_ESCAPES:
            return None
        if ch in _ESCAPED_CHARS:
            return ord(_ESCAPED_CHARS[ch])
        if ch == "x":
            if self.peek() == "{":
                j = self.s.find("}", self.i)
                digits = self.s[self.i + 1:j] if j > 0 else ""
                self.i = j + 1
            else:
                digits = self.s[self.i:self.i + 2]
                self.i += 2
            if not digits or len(digits) > 6 or not set(digits) <= _HEX:
                raise _Unknown
            cp = int(digits, 16)
            if cp > 0x10FFFF or 0xD800 <= cp < 0xE000:
                raise _Unknown
            return cp
        if ch.isascii() and not ch.isalnum():
            return ord(ch)  # escaped punctuation is itself
        raise _Unknown  # octal, backreferences and other letters: do not guess

    def char_class(self) -> _Info:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        chars: set[int] = set()
        unknown = negated
        first = True
        while True:
            ch = self.take()
            if ch == "]" and not first:
                break
            first = False
            if ch == "[" and self.peek() == ":":
                j = self.s.find(":]", self.i)
                if j < 0:
                    raise _Unknown
                self.i = j + 2
                unknown = True
                continue
            lo = self.class_char(ch)
            if self.peek() == "-" and self.i + 1 < len(self.s) and self.s[self.i + 1] != "]":
                self.i += 1
                hi = self.class_char(self.take())
                if lo is None or hi is None or hi < lo:
                    raise _Unknown
                if hi - lo >= MAX_CLASS_CHARS:
                    unknown = True
                else:
                    chars.update(range(lo, hi + 1))
            elif lo is None:
                unknown = True
            else:
                chars.add(lo)
        if unknown or not chars or len(chars) > MAX_CLASS_CHARS:
            return _ANY
        return _Info(frozenset((c,) for c in chars))

    def class_char(self, ch: str) -> int | None:
        if ch != "\\":
            return ord(ch)
        esc = self.take()
        if esc in "pP":
            if self.peek() == "{":
                self.i = self.s.index("}", self.i) + 1 if "}" in self.s[self.i:] else len(self.s)
            else:
                self.take()
            return None
        return self.escaped_char(esc)


def regex_query(pattern: str, n: int) -> tuple:
    """Gram query that every value containing a match of RE2 ``pattern`` satisfies.

    >>> regex_query("^(foo|bar)baz", 3)[0]
    'or'
    >>> regex_query("(?i)abc", 3)
    ('true',)
    """
    reader = _RegexReader(pattern, n)
    try:
        info = reader.alternation()
        if reader.i != len(pattern):
            raise _Unknown  # an unbalanced ')'
    except (_Unknown, ValueError, IndexError):
        return TRUE
    return _to_query(info, n)


def dnf(query: tuple, max_terms: int = MAX_TERMS) -> list[frozenset]:
    """``query`` as an OR of ANDs of grams: one gram set per term (the empty set is TRUE).

    Every value that satisfies the query satisfies one of the terms. An AND of ORs multiplies
    their terms; an OR factor that would take an AND past ``max_terms`` terms is left out of
    it, which only weakens the query (sound).

    >>> dnf(("and", (("gram", (1,)), ("or", (("gram", (2,)), ("gram", (3,)))))))
    [frozenset({(1,), (2,)}), frozenset({(1,), (3,)})]
    """
    if query[0] == "true":
        return [frozenset()]
    if query[0] == "gram":
        return [frozenset([query[1]])]
    parts = [dnf(part, max_terms) for part in query[1]]
    if query[0] == "or":
        terms = list(dict.fromkeys(t for part in parts for t in part))
        return [frozenset()] if frozenset() in terms else terms
    terms = [frozenset()]
    for part in sorted(parts, key=len):  # single terms first: they never multiply
        if len(terms) > 1 and len(terms) * len(part) > max_terms:
            continue
        terms = list(dict.fromkeys(t | u for t in terms for u in part))
    return terms
