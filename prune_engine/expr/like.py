"""SQL LIKE patterns, parsed exactly: ``%`` any run, ``_`` one character, optional ESCAPE.

There is no default escape character (as in DuckDB and the SQL standard): only an explicit
``ESCAPE 'c'`` makes ``c`` quote the next ``%``, ``_`` or ``c``. A pattern is a tuple of
tokens: literal text runs (``str``), :data:`ANY` for ``%`` and :data:`ONE` for ``_``.

This module is also the one place that knows how escapes work, for every front end (SQL text,
pyarrow expressions, Spark's Catalyst plans): :func:`like_escape` quotes literal text as a
pattern and :func:`dangling_escape` spots a pattern that ends in an unpaired escape character.
It imports nothing heavier than :mod:`prune_engine.errors`, so that the front ends that need
no SQL parser do not load one.

>>> parse_like("ab!%c%_", "!")
('ab%c', '%', '_')
>>> literal_prefix(parse_like("ab_c%", None))
'ab'
>>> like_escape("50%"), dangling_escape("50!", "!")
('50\\\\%', True)
"""

from __future__ import annotations

from prune_engine.errors import PatternError


class _Wild(str):
    """A wildcard token; distinct from a literal run that happens to read ``%``."""


ANY = _Wild("%")
ONE = _Wild("_")


def like_escape(text: str, escape: str = "\\") -> str:
    """``text`` as a LIKE pattern (with ``ESCAPE escape``) that matches exactly ``text``: ``%``,
    ``_`` and the escape character itself are escaped.

    The front ends use it to turn ``starts_with``/``contains``-style calls into LIKE patterns.

    >>> like_escape("50%_off\\\\")
    '50\\\\%\\\\_off\\\\\\\\'
    >>> like_escape("a_b!", "!")
    'a!_b!!'
    """
    return "".join(escape + ch if ch in ("%", "_", escape) else ch for ch in text)


def dangling_escape(pattern: str, escape: str | None) -> bool:
    """Does ``pattern`` end with an ``escape`` character that escapes nothing?

    SQL rejects such a pattern (DuckDB and Spark raise an error on it) and pyarrow ignores the
    final escape; each front end decides what to do, this says whether it happens. Escapes pair
    from the left, so ``'a!!'`` is a quoted ``!`` and ``'a!!!'`` dangles. No escape (``None`` or
    ``""``) never dangles.

    >>> dangling_escape("a!", "!"), dangling_escape("a!!", "!"), dangling_escape("a!!!", "!")
    (True, False, True)
    >>> dangling_escape("a\\\\", None)
    False
    """
    if not escape:
        return False
    i = 0
    while i < len(pattern):
        if pattern[i] == escape:
            if i + 1 >= len(pattern):
                return True
            i += 2
        else:
            i += 1
    return False


def parse_like(pattern: str, escape: str | None) -> tuple[str, ...]:
    """Tokens of a LIKE pattern; a bad escape is a :class:`~prune_engine.errors.PatternError`."""
    if escape == "":
        escape = None  # an empty ESCAPE is no escape
    if escape is not None and len(escape) != 1:
        raise PatternError(f"the ESCAPE of a LIKE pattern must be one character, not {escape!r}")
    if dangling_escape(pattern, escape):
        raise PatternError(f"LIKE pattern {pattern!r} ends with its escape character {escape!r}")
    tokens: list[str] = []
    run: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:  # never the last character: checked above
            run.append(pattern[i + 1])
            i += 2
            continue
        if ch in "%_":
            if run:
                tokens.append("".join(run))
                run = []
            if not (ch == "%" and tokens and tokens[-1] is ANY):  # '%%' is '%'
                tokens.append(ANY if ch == "%" else ONE)
        else:
            run.append(ch)
        i += 1
    if run:
        tokens.append("".join(run))
    return tuple(tokens)


def is_wildcard(token: str) -> bool:
    return isinstance(token, _Wild)


def literal_prefix(tokens: tuple[str, ...]) -> str:
    """The literal text every match starts with."""
    return tokens[0] if tokens and not is_wildcard(tokens[0]) else ""


def successor(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (code point order,
    which is UTF-8 byte order), or None when there is none.

    >>> successor("ab"), successor("a\\U0010ffff")
    ('ac', 'b')
    """
    chars = list(prefix)
    while chars:
        cp = ord(chars[-1]) + 1
        if cp == 0xD800:
            cp = 0xE000  # surrogates are not characters
        if cp <= 0x10FFFF:
            chars[-1] = chr(cp)
            return "".join(chars)
        chars.pop()
    return None


def successor_bytes(prefix: bytes) -> bytes | None:
    """Byte-string counterpart of :func:`successor`."""
    b = bytearray(prefix)
    while b:
        if b[-1] < 0xFF:
            b[-1] += 1
            return bytes(b)
        b.pop()
    return None
