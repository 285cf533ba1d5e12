"""The case fold of the case-insensitive gram set: DuckDB's ``lower()``, one code point at a time.

``ILIKE`` in DuckDB lower-cases the value and the pattern, code point by code point (utf8proc's
simple lowercase mapping: no final-sigma rule, no multi-code-point expansions), then runs
``LIKE``. The folded gram set is built from values folded the same way, so that a gram of the
folded pattern is a gram of every folded value that matches.

The fold is Python's ``str.lower`` applied to a single code point, except where that expands to
several code points (only U+0130 ``İ``, which DuckDB maps to ``i``). A test compares this table
with DuckDB's ``lower()`` on every code point; they agree on all of them.

>>> fold_text("ΣΑΣ İstanbul STRASSE ẞ")
'σασ istanbul strasse ß'
"""

from __future__ import annotations

import functools

import numpy as np

#: code points whose single-code-point lowercase Python cannot give (full mapping expands)
_SIMPLE_OVERRIDES = {0x130: 0x69}

#: no code point at or above this has a lowercase mapping (Unicode 14/15)
_TABLE_END = 0x20000


@functools.lru_cache(maxsize=1)
def fold_table() -> np.ndarray:
    """int32 lookup ``table[cp] -> folded cp`` for ``cp < len(table)``; identity above it."""
    table = np.arange(_TABLE_END, dtype=np.int32)
    for cp in range(_TABLE_END):
        if 0xD800 <= cp < 0xE000:
            continue
        low = chr(cp).lower()
        if len(low) == 1:
            table[cp] = ord(low)
        elif cp in _SIMPLE_OVERRIDES:
            table[cp] = _SIMPLE_OVERRIDES[cp]
    table.flags.writeable = False
    return table


def fold_cp(cp: int) -> int:
    """Fold one code point (``cp`` may be a marker above Unicode's range: unchanged)."""
    table = fold_table()
    return int(table[cp]) if cp < len(table) else cp


def fold_text(text: str) -> str:
    """Fold every code point of ``text`` (what DuckDB's ``lower()`` returns)."""
    return "".join(chr(fold_cp(ord(ch))) for ch in text)


@functools.lru_cache(maxsize=1)
def fold_sources() -> frozenset[int]:
    """Code points that some other code point folds onto (e.g. ``a``, ``i``, ``k``, ``ß``)."""
    table = fold_table()
    moved = np.nonzero(table != np.arange(len(table)))[0]
    return frozenset(int(table[cp]) for cp in moved)


def is_caseless(ch: str) -> bool:
    """True when ``ch`` neither folds nor is the fold of another code point.

    >>> is_caseless("!"), is_caseless("a"), is_caseless("K")
    (True, False, False)
    """
    cp = ord(ch)
    return fold_cp(cp) == cp and cp not in fold_sources()
