"""Random containers of strings and random LIKE / regex / IN queries, plus a DuckDB oracle.

Everything is drawn from a ``random.Random``-like object, so the same code serves the seeded
sweep and hypothesis (``st.randoms(use_true_random=False)``, which shrinks). The alphabet has
the characters that break naive n-gram indexes: ``%``, ``_`` and ``\\`` in the data, accents,
CJK, emoji (4-byte UTF-8), ``ß``/``ẞ``, Turkish ``İ``/``ı``, Greek sigmas, the Kelvin sign.
"""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pyarrow as pa

from tests.oracle.duck import connect, load_table

ALPHABET = list("abcab xyAB%_\\!.é É ß ẞ İ i ı Σ σ ς 中文😀 K k ſ s")


def random_value(rng, max_len: int = 12) -> str | None:
    if rng.random() < 0.06:
        return None
    if rng.random() < 0.05:
        return ""
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, max_len)))


def random_containers(rng, max_containers: int = 8, max_rows: int = 6) -> list[list[str | None]]:
    """A few containers; some empty, some repeating a value, some sharing prefixes."""
    out = []
    stem = random_value(rng, 6) or "ab"
    for _ in range(rng.randint(1, max_containers)):
        rows = []
        for _ in range(rng.randint(0, max_rows)):
            v = random_value(rng)
            if v is not None and rng.random() < 0.3:
                v = stem + v if rng.random() < 0.5 else v + stem
            rows.append(v)
        out.append(rows)
    return out


def flatten(containers) -> tuple[pa.Array, np.ndarray]:
    values = pa.array([v for rows in containers for v in rows], pa.string())
    offsets = np.cumsum([0] + [len(rows) for rows in containers]).astype(np.int64)
    return values, offsets


def _pick_value(rng, containers) -> str:
    values = [v for rows in containers for v in rows if v]
    return rng.choice(values) if values else random_value(rng) or "abc"


def _swap_case(rng, text: str) -> str:
    return "".join(c.upper() if rng.random() < 0.3 and len(c.upper()) == 1 else c for c in text)


def random_like(rng, containers) -> tuple[str, str | None]:
    """A LIKE pattern, often cut from a stored value (so that it matches some rows)."""
    escape = rng.choice([None, None, "\\", "!"])
    if rng.random() < 0.3:  # free-form
        toks = [rng.choice(ALPHABET + ["%", "_", "%"]) for _ in range(rng.randint(0, 8))]
        pattern = "".join(toks)
        if escape and pattern.endswith(escape):
            pattern += escape
        return pattern, escape
    value = _pick_value(rng, containers)
    i = rng.randint(0, len(value))
    j = rng.randint(i, len(value))
    out = []
    if i > 0 or rng.random() < 0.2:
        out.append("%" if rng.random() < 0.8 else "_" * i)
    for ch in value[i:j]:
        r = rng.random()
        if r < 0.1:
            out.append("_")
        elif r < 0.15:
            out.append("%")
        elif escape and ch in ("%", "_", escape):
            out.append(escape + ch)
        elif ch in "%_" and r < 0.5:
            out.append(ch)  # an unescaped wildcard that happens to match itself
        else:
            out.append(ch)
    if j < len(value) or rng.random() < 0.2:
        out.append("%")
    return "".join(out), escape


def random_regex(rng, containers) -> str:
    """An RE2 pattern, usually built around text cut from a stored value."""
    value = _pick_value(rng, containers)
    i = rng.randint(0, len(value))
    j = rng.randint(i, min(len(value), i + 6))
    parts = []
    for ch in value[i:j]:
        r = rng.random()
        if r < 0.1:
            parts.append(".")
        elif r < 0.2:
            parts.append("[" + re.escape(ch) + rng.choice("xyAé") + "]")
        elif r < 0.25:
            parts.append(re.escape(ch) + rng.choice(["*", "+", "?", "{1,2}", "{0}"]))
        elif r < 0.3:
            parts.append("(" + re.escape(ch) + "|" + rng.choice(["zz", "", "ab", "\\d"]) + ")")
        elif r < 0.33:
            parts.append("\\b" + re.escape(ch))
        else:
            parts.append(re.escape(ch) if ch not in " " else ch)
    body = "".join(parts)
    if rng.random() < 0.3:
        body = "^" + body
    if rng.random() < 0.3:
        body += "$"
    if rng.random() < 0.15:
        body = "(" + body + "|" + re.escape(_pick_value(rng, containers)[:4]) + ")"
    if rng.random() < 0.1:
        body = rng.choice(["(?i)", "\\Q", "[^a]", "a{,2}", "x**", "(?:", "\\x{E9}", "\\pL"]) + body
    return body


class Duck:
    """DuckDB on the rows: which containers hold a row matching a LIKE / ILIKE / regex / IN."""

    def matching(self, containers, kind: str, pattern, escape: str | None = None) -> np.ndarray | None:
        """Per container, does some row match? None when DuckDB rejects the pattern."""
        cid = [i for i, rows in enumerate(containers) for _ in rows]
        table = pa.table({"cid": pa.array(cid, pa.int64()),
                          "s": pa.array([v for rows in containers for v in rows], pa.string())})
        if kind == "in":
            if not pattern:
                cond, params = "false", []
            else:
                cond, params = "s IN (" + ", ".join("?" for _ in pattern) + ")", list(pattern)
        elif kind == "regex":
            cond, params = "regexp_matches(s, ?)", [pattern]
        else:
            fn = {"like": "like_escape", "ilike": "ilike_escape"}[kind]
            if escape is None:
                op = "LIKE" if kind == "like" else "ILIKE"
                cond, params = f"s {op} ?", [pattern]
            else:
                cond, params = f"{fn}(s, ?, ?)", [pattern, escape]
        con = connect()
        try:
            load_table(con, "t", table)
            rows = con.execute(
                f"SELECT cid, bool_or(coalesce({cond}, false)) FROM t GROUP BY cid", params).fetchall()
        except duckdb.Error:
            return None
        finally:
            con.close()
        out = np.zeros(len(containers), np.bool_)
        for c, m in rows:
            out[c] = bool(m)
        return out
