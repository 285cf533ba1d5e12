"""Which Java regular expressions (Spark's ``RLIKE``) the engine's RE2 reading gets right.

Spark runs ``RLIKE`` with ``java.util.regex`` (a search, like RE2's). The engine reads a
pattern as RE2 to find the text every match must contain. Where Java and RE2 read a construct
differently, the engine could ask for text a Java match does not contain, and prune wrongly.
So a pattern goes to the engine only when it is built from constructs both read alike:

- literal characters, ``.``, ``|``, ``( )``, ``(?: )``, ``(?<name> )``, ``^``, ``\\A``,
  ``\\z``, ``\\b``, ``\\B``, the quantifiers ``* + ? {n,m}`` (lazy or not),
- escapes of ASCII punctuation, ``\\t \\n \\r \\f \\a``, ``\\xhh``, ``\\x{h..h}``, the class
  escapes ``\\d \\D \\s \\S \\w \\W \\p{..} \\P{..}``, and ``\\Q...\\E``,
- character classes ``[...]`` / ``[^...]`` of such characters, ranges and class escapes.

Anything else is left to Spark (the predicate is "unknown" and keeps): ``$`` (Java's also
matches before a final line terminator), ``\\v`` and ``\\h`` (classes in Java), ``\\R``,
``\\Z``, octal and back references, lookaround and flag groups, possessive quantifiers, and
Java's class unions and intersections (``[a[bc]]``, ``[a-z&&[^b]]``).

>>> engine_reads_alike(r"^https?://shop\\.example/(cart|checkout)/\\d+")
True
>>> engine_reads_alike("abc$"), engine_reads_alike("[a[bc]]"), engine_reads_alike(r"\\vx")
(False, False, False)
"""

from __future__ import annotations

_PUNCT_OK = set("!\"#%&',-/:;<=>@_`~") | set("\\.[]{}()*+?^$|")
_ESCAPE_LETTERS = set("tnrfa") | set("dDsSwW")
_ANCHOR_ESCAPES = set("AzbB")
_HEX = set("0123456789abcdefABCDEF")


class _Reject(Exception):
    pass


def engine_reads_alike(pattern: str) -> bool:
    """True when ``pattern`` uses only constructs that Java and the engine's RE2 reading
    agree on (see the module doc); False sends the predicate to Spark alone."""
    try:
        _Scanner(pattern).run()
    except (_Reject, IndexError):
        return False
    return True


class _Scanner:
    def __init__(self, pattern: str):
        self.s = pattern
        self.i = 0

    def run(self) -> None:
        s = self.s
        while self.i < len(s):
            ch = s[self.i]
            self.i += 1
            if ch == "\\":
                self.escape(in_class=False)
            elif ch == "[":
                self.char_class()
            elif ch == "$":
                raise _Reject  # Java's $ also matches before a final line terminator
            elif ch == "(":
                self.group()
            elif ch in "*+?":
                self.after_quantifier()
            elif ch == "{":
                self.braces()

    def group(self) -> None:
        s = self.s
        if not s.startswith("?", self.i):
            return
        if s.startswith("?:", self.i):
            self.i += 2
            return
        if s.startswith("?<", self.i):
            j = self.i + 2
            while j < len(s) and s[j].isascii() and s[j].isalnum():
                j += 1
            if j > self.i + 2 and j < len(s) and s[j] == ">" and s[self.i + 2].isalpha():
                self.i = j + 1
                return
        raise _Reject  # lookaround, flags, atomic groups

    def after_quantifier(self) -> None:
        if self.i < len(self.s) and self.s[self.i] == "+":
            raise _Reject  # possessive
        if self.i < len(self.s) and self.s[self.i] == "?":
            self.i += 1

    def braces(self) -> None:
        j = self.s.find("}", self.i)
        if j < 0:
            raise _Reject
        lo, _, hi = self.s[self.i:j].partition(",")
        if not (lo.isascii() and lo.isdigit()) or (hi and not (hi.isascii() and hi.isdigit())):
            raise _Reject
        self.i = j + 1
        self.after_quantifier()

    def escape(self, in_class: bool) -> None:
        ch = self.s[self.i]
        self.i += 1
        if ch == "Q" and not in_class:
            j = self.s.find("\\E", self.i)
            self.i = len(self.s) if j < 0 else j + 2
            return
        if ch in _ESCAPE_LETTERS:
            return
        if ch in "pP":
            if self.s[self.i] == "{":
                j = self.s.find("}", self.i)
                if j < 0:
                    raise _Reject
                self.i = j + 1
            else:
                self.i += 1
            return
        if ch == "x":
            self.hex()
            return
        if ch in _ANCHOR_ESCAPES and not in_class:
            return
        if ch in _PUNCT_OK:
            return
        raise _Reject

    def hex(self) -> None:
        s = self.s
        if s[self.i] == "{":
            j = s.find("}", self.i)
            digits = s[self.i + 1:j] if j > 0 else ""
            self.i = j + 1
        else:
            digits = s[self.i:self.i + 2]
            self.i += 2
        if not digits or len(digits) > 6 or not set(digits) <= _HEX:
            raise _Reject

    def char_class(self) -> None:
        s = self.s
        if s.startswith("^", self.i):
            self.i += 1
        if s[self.i] == "]":
            raise _Reject  # '[]...]': Java and RE2 disagree on a leading ']'
        while True:
            ch = s[self.i]
            self.i += 1
            if ch == "]":
                return
            if ch == "[":
                raise _Reject  # Java: a nested class (union)
            if ch == "&" and s.startswith("&", self.i):
                raise _Reject  # Java: intersection
            if ch == "\\":
                self.escape(in_class=True)
