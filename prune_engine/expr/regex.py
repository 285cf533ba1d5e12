"""The text every match of a regular expression starts with, where the pattern says so.

``s RLIKE '^user_0000[0-9]'`` (a search) matches only values that start with ``user_0000``:
a prefix range that min/max bounds can test, as ``s LIKE 'user_0000%'``. The reading is
deliberately small, so that RE2 (DuckDB's ``regexp_matches``) and Java (Spark's ``RLIKE``)
agree on it: after a leading ``^`` (the start of the value: neither engine is in multi-line
mode unless a flag group says so), the run of literal characters, each a character that is
not a metacharacter or an escaped ASCII punctuation character. The run ends at anything
else; a quantifier that may repeat it zero times (``* ? {``) takes its last character off.
A pattern with ``|`` anywhere (``^a|b`` matches ``xb``) or a flag group gives no prefix.

>>> anchored_prefix(r"^user_0000[0-9]$"), anchored_prefix(r"^https?://shop\\.ex")
('user_0000', 'http')
>>> anchored_prefix("user_^x"), anchored_prefix("^ab|cd"), anchored_prefix(r"^\\d+")
('', '', '')
"""

from __future__ import annotations

#: characters with a meaning of their own in RE2 and Java regular expressions
METACHARACTERS = set(".[]{}()*+?|^$\\")
#: quantifiers that allow zero repetitions of what precedes them
_MAY_BE_ZERO = set("*?{")


def anchored_prefix(pattern: str) -> str:
    """The literal text every value matching ``pattern`` (a search) starts with; ``""``
    when the pattern does not pin one."""
    if not pattern.startswith("^") or "|" in pattern or "(?" in pattern:
        return ""
    out: list[str] = []
    i = 1
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
            if not nxt or nxt.isalnum() or not nxt.isascii():
                break  # a class, an anchor, a quote or a code: not one literal character
            out.append(nxt)
            i += 2
            continue
        if ch in METACHARACTERS:
            if ch in _MAY_BE_ZERO and out:
                out.pop()
            break
        out.append(ch)
        i += 1
    return "".join(out)
