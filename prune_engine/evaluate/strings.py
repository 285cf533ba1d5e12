"""String and binary bounds compared as integers: order-preserving 8-byte words.

Strings compare by their UTF-8 bytes (binary by its bytes). Comparing them one by one through
Arrow costs tens of nanoseconds each; this module compares them as ``uint64`` numpy arrays
instead, one pass per test, exactly, whatever the data:

**The words.** A byte string ``s`` is cut into groups of 7 bytes; word ``j`` is group ``j``
(zero-padded, big-endian, in the high 7 bytes) followed by a marker byte: ``8`` when ``s``
continues after the group, else the number of bytes in the group (0 to 7). Two strings compare
as their word sequences do, word by word: the first group that differs decides by its bytes;
a shorter string padded with NUL bytes ties on the bytes and loses on the marker (``"ab"`` is
``...02`` and ``"ab\\0"`` is ``...03``); equal words that end (marker below 8) are equal
strings. So word 0 alone decides every pair except those whose first 7 bytes are equal and
continue: a "tie", decided by the next words, for the tied pairs only.

**The shared prefix.** URLs, paths and keys often share a long prefix (``https://shop.example/``),
which would make every word 0 equal. A :class:`KeyedStrings` (one column of bounds) finds the
longest prefix ``P`` of all its values (that of its smallest and its largest value) and cuts
words after it. A literal that does not start with ``P`` is below or above every value; one
that does is cut after ``P`` too. Two columns are compared after their common prefix.

**Sets.** ``IN`` and ``NOT IN`` look the first words of the set's members up with
:mod:`.membership` (one pass), and settle the ties among the words, containers and members
that remain, by binary search over the next words.

Words are computed on first use and kept (the statistics table caches the KeyedStrings), so a
second test over the same column costs one numpy comparison. Values under nulls are garbage:
callers mask them with the validity.

>>> ks = KeyedStrings(pa.array(["https://a.example/x1", "https://a.example/y", None]))
>>> ks.prefix
b'https://a.example/'
>>> compare_literal(ks, "<", b"https://a.example/y").tolist()[:2]
[True, False]
>>> [hex(w) for w in encode(b"ab")], [hex(w) for w in encode(b"abcdefgh")]
(['0x6162000000000002'], ['0x6162636465666708', '0x6800000000000001'])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.evaluate import membership

#: bytes per word (the eighth byte is the marker)
GROUP = 7
#: the marker of a word after which the string continues
MORE = 8
_MARK = np.uint64(0xFF)
#: KEEP[t]: the top t bytes of a word
_KEEP = np.array([((1 << (8 * t)) - 1) << (8 * (8 - t)) for t in range(8)], dtype=np.uint64)

OPS = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
       ">": np.greater, ">=": np.greater_equal}


def encode(value: bytes, offset: int = 0) -> list[int]:
    """The words of ``value[offset:]`` (at least one: the empty string is the word 0)."""
    s = value[offset:]
    out = []
    for j in range(len(s) // GROUP + 1):
        chunk = s[GROUP * j:GROUP * (j + 1)]
        rest = len(s) - GROUP * j
        out.append(int.from_bytes(chunk.ljust(GROUP, b"\0"), "big") << 8 | (MORE if rest > GROUP else rest))
    return out


def _ended(words) -> np.ndarray:
    """Words after which the string does not continue (equal such words: equal strings)."""
    return (words & _MARK) != MORE


class KeyedStrings:
    """One column of string or binary bounds (``string``, ``large_string``, ``binary``,
    ``large_binary``) with its shared prefix and its words, computed on first use."""

    __slots__ = ("arr", "starts", "lengths", "data", "_prefix", "_words", "_continues", "_signs")

    def __init__(self, arr: pa.Array):
        self.arr = arr
        n = len(arr)
        large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
        bufs = arr.buffers()
        if bufs[1] is None:
            offsets = np.zeros(n + 1, dtype=np.int64)
        else:
            offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32,
                                    count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
        self.starts = offsets[:-1]
        self.lengths = offsets[1:] - self.starts
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        if len(data) < 8:
            data = np.concatenate([data, np.zeros(8, np.uint8)])
        self.data = data
        self._prefix = None
        self._words: dict[tuple[int, int], np.ndarray] = {}
        self._continues: dict[int, bool] = {}
        self._signs: dict[int, tuple[KeyedStrings, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self.arr)

    def slice(self, start: int, stop: int) -> KeyedStrings:
        """Values ``start:stop`` (an evaluation window), sharing this column's bytes, its
        prefix (shared by every value, so by these) and the words computed so far."""
        out = object.__new__(KeyedStrings)
        out.arr = self.arr.slice(start, stop - start)
        out.starts, out.lengths, out.data = self.starts[start:stop], self.lengths[start:stop], self.data
        out._prefix = self.prefix
        out._words = {key: words[start:stop] for key, words in self._words.items()}
        out._continues, out._signs = {}, {}
        return out

    @property
    def prefix(self) -> bytes:
        """The longest prefix shared by every non-null value (that of the smallest and the
        largest), b"" when there is none."""
        if self._prefix is None:
            ends = pc.min_max(self.arr.view(_binary_of(self.arr.type)))
            lo, hi = ends["min"].as_py(), ends["max"].as_py()
            self._prefix = b"" if lo is None else _common(lo, hi)
        return self._prefix

    def words(self, level: int, offset: int) -> np.ndarray:
        """Word ``level`` of every value cut after ``offset`` bytes (kept for the next call)."""
        key = (level, offset)
        if key not in self._words:
            self._words[key] = self._compute(self.starts, self.lengths, level, offset)
        return self._words[key]

    def continues(self, offset: int) -> bool:
        """Does some value (null or not) continue after its first word? If not, no first word
        can tie with another one without the strings being equal."""
        if offset not in self._continues:
            self._continues[offset] = bool((~_ended(self.words(0, offset))).any())
        return self._continues[offset]

    def words_of(self, rows: np.ndarray, level: int, offset: int) -> np.ndarray:
        """Word ``level`` of the values ``rows``: read for those alone when they are few."""
        if (level, offset) in self._words or 8 * len(rows) > len(self):
            return self.words(level, offset)[rows]
        return self._compute(self.starts[rows], self.lengths[rows], level, offset)

    def _compute(self, starts, lengths, level, offset) -> np.ndarray:
        skip = offset + GROUP * level
        rest = lengths - skip  # bytes of the value from this word on
        data = self.data
        pos = np.minimum(starts + skip, len(data) - 8)
        window = np.lib.stride_tricks.as_strided(data, shape=(len(data) - 7, 8), strides=(1, 1))
        raw = window[pos].view(">u8").ravel().astype(np.uint64)
        late = starts + skip - pos  # > 0 only near the end of the buffer: shift the bytes up
        if late.any():
            shift = np.minimum(late, 7).astype(np.uint64) * np.uint64(8)
            raw = np.where(late > 0, raw << shift, raw)
        take = np.clip(rest, 0, GROUP)
        return (raw & _KEEP[take]) | np.where(rest > GROUP, MORE, take).astype(np.uint64)


def _binary_of(t: pa.DataType) -> pa.DataType:
    return pa.large_binary() if (pa.types.is_large_string(t) or pa.types.is_large_binary(t)) else pa.binary()


def _common(a: bytes, b: bytes) -> bytes:
    i = 0
    for x, y in zip(a, b):
        if x != y:
            break
        i += 1
    return a[:i]


def _outside(value: bytes, prefix: bytes) -> int:
    """0 when ``value`` starts with ``prefix``; else -1 (it is below every string that does)
    or 1 (above every one)."""
    if value.startswith(prefix):
        return 0
    return -1 if value < prefix else 1


def _sign(a, b) -> np.ndarray:
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


def _settle(words_a, words_b, count: int, level: int = 1) -> np.ndarray:
    """``sign(a - b)`` of ``count`` pairs of strings whose words agree, and continue, up to
    ``level``: ``words_a(level, pending)`` gives that word of the pairs ``pending``."""
    out = np.zeros(count, dtype=np.int8)
    pending = np.arange(count)
    while len(pending):
        wa, wb = words_a(level, pending), words_b(level, pending)
        out[pending] = _sign(wa, wb)
        pending = pending[(wa == wb) & ~_ended(wa)]
        level += 1
    return out


# ---------------------------------------------------------------------------------------------
# a column against a literal, and against another column


def compare_literal(values: KeyedStrings, op: str, literal: bytes) -> np.ndarray:
    """``values op literal`` for every value (by bytes)."""
    prefix = values.prefix
    outside = _outside(literal, prefix)
    if outside:  # the literal is below (or above) every value
        return np.full(len(values), bool(OPS[op](-outside, 0)))
    lw = encode(literal, len(prefix))
    w0 = values.words(0, len(prefix))
    first = np.uint64(lw[0])
    out = OPS[op](w0, first)
    if lw[0] & 0xFF == MORE:  # values whose first word ties with the literal's: the next words
        tied = np.flatnonzero(w0 == first)
        if len(tied):
            sign = _settle(lambda lv, p: values.words_of(tied[p], lv, len(prefix)),
                           lambda lv, p: np.uint64(lw[lv]), len(tied))
            out[tied] = OPS[op](sign, 0)
    return out


def aligned(a: KeyedStrings, b: KeyedStrings) -> tuple[int, int]:
    """``(offset, outside)``: both columns' values start with their common prefix of length
    ``offset``; ``outside`` is -1 or 1 when every ``a`` value is below (above) every ``b``
    value, because their prefixes differ within it, else 0."""
    pa_, pb = a.prefix, b.prefix
    m = len(_common(pa_, pb))
    if m < len(pa_) and m < len(pb):
        return m, -1 if pa_[m] < pb[m] else 1
    return m, 0


def compare_columns(a: KeyedStrings, op: str, b: KeyedStrings) -> np.ndarray:
    """``a[i] op b[i]`` for every row (by bytes). The signs of ``a - b`` are kept on ``a``
    (the tests of min against max of a column repeat on every call)."""
    cached = a._signs.get(id(b))
    if cached is None or cached[0] is not b:
        cached = a._signs[id(b)] = (b, _column_signs(a, b))
    return OPS[op](cached[1], 0)


def _column_signs(a: KeyedStrings, b: KeyedStrings) -> np.ndarray:
    """``sign(a[i] - b[i])`` for every row, as int8."""
    offset, outside = aligned(a, b)
    if outside:
        return np.full(len(a), outside, dtype=np.int8)
    wa, wb = a.words(0, offset), b.words(0, offset)
    out = _sign(wa, wb)
    if not (a.continues(offset) and b.continues(offset)):
        return out
    tied = np.flatnonzero((wa == wb) & ~_ended(wa))
    if len(tied):
        out[tied] = _settle(lambda lv, p: a.words_of(tied[p], lv, offset),
                            lambda lv, p: b.words_of(tied[p], lv, offset), len(tied))
    return out


# ---------------------------------------------------------------------------------------------
# sets


class Members:
    """The members of an IN list: sorted, distinct byte strings. Their words, cut after a
    column's prefix, are computed once per prefix and kept (a plan holds its Members).

    >>> Members([b"a", b"b"]).cut(b"a").count
    1
    """

    def __init__(self, values: list[bytes]):
        self.values = values
        self._cuts: dict[bytes, _Cut] = {}

    def __len__(self) -> int:
        return len(self.values)

    def cut(self, prefix: bytes) -> "_Cut":
        """The members that start with ``prefix``, as words after it."""
        if prefix not in self._cuts:
            self._cuts[prefix] = _Cut([m for m in self.values if m.startswith(prefix)], len(prefix))
        return self._cuts[prefix]


class _Cut:
    """Sorted distinct members, cut after ``offset`` bytes: their word matrix (one row each),
    their first words, and the distinct first words after which a member continues."""

    def __init__(self, members: list[bytes], offset: int):
        self.count = len(members)
        rows = [encode(m, offset) for m in members]
        depth = max((len(r) for r in rows), default=1)
        self.words = np.zeros((len(rows), depth), dtype=np.uint64)
        for i, r in enumerate(rows):
            self.words[i, :len(r)] = r
        self.first = np.ascontiguousarray(self.words[:, 0])
        self.going = np.unique(self.first[~_ended(self.first)])

    def word(self, level: int, idx: np.ndarray) -> np.ndarray:
        return self.words[idx, level] if level < self.words.shape[1] else np.zeros(len(idx), np.uint64)


def _locate(values: KeyedStrings, rows: np.ndarray, offset: int, members: _Cut,
            below: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ``rows`` whose first word ties, unended, with a member's: ``(count, equal)``, the
    exact number of members below each value and whether one equals it. ``below`` counts the
    members whose first word is smaller; the tied members follow it. Binary search over the
    tied members, comparing the next words of every row at once."""
    lo = below.copy()
    hi = np.searchsorted(members.first, values.words_of(rows, 0, offset), side="right")
    equal = np.zeros(len(rows), dtype=bool)
    active = np.flatnonzero(lo < hi)
    while len(active):
        mid = (lo[active] + hi[active]) // 2
        r = rows[active]
        sign = _settle(lambda lv, p: values.words_of(r[p], lv, offset),
                       lambda lv, p: members.word(lv, mid[p]), len(active))
        lo[active] = np.where(sign > 0, mid + 1, lo[active])
        hi[active] = np.where(sign > 0, hi[active], mid)
        equal[active[sign == 0]] = True
        active = active[lo[active] < hi[active]]
    return lo, equal


def _member_vs(values: KeyedStrings, rows: np.ndarray, offset: int, members: _Cut,
               idx: np.ndarray) -> np.ndarray:
    """``sign(value - member)`` of value ``rows[i]`` and member ``idx[i]``, in full."""
    w = values.words_of(rows, 0, offset)
    m = members.word(0, idx)
    out = _sign(w, m)
    tied = np.flatnonzero((w == m) & ~_ended(w))
    if len(tied):
        out[tied] = _settle(lambda lv, p: values.words_of(rows[tied[p]], lv, offset),
                            lambda lv, p: members.word(lv, idx[tied[p]]), len(tied))
    return out


def any_in_range(lo: KeyedStrings, hi: KeyedStrings, members: Members,
                 lo_known: np.ndarray | None, hi_known: np.ndarray | None) -> np.ndarray:
    """For each container: does some member ``m`` satisfy ``lo <= m <= hi``? An unknown bound
    (``*_known`` False; None = all known) reads as below (above) every member."""
    n = len(lo)
    if not len(members):
        return np.zeros(n, dtype=bool)
    offset, _ = aligned(lo, hi)
    # every lo and hi starts with the common prefix; a member that does not is below every lo
    # or above every hi, so it lies in a range only where that range's bound is unknown
    common = lo.prefix[:offset]
    ms = members.cut(common)
    out = np.zeros(n, dtype=bool)
    if ms.count:
        w_lo, w_hi = lo.words(0, offset), hi.words(0, offset)
        out = membership.any_in_range(w_lo, w_hi, ms.first, lo_known, hi_known)
        if len(ms.going):
            if lo_known is not None:  # below every word: the empty string's
                w_lo = np.where(lo_known, w_lo, np.uint64(0))
            if hi_known is not None:  # above every word (no marker exceeds 8)
                w_hi = np.where(hi_known, w_hi, np.uint64(2**64 - 1))  # exact, but where lo's or hi's first word is a member's that goes on
            tie_lo = membership.contains(ms.going, w_lo)
            tied = np.flatnonzero(tie_lo | membership.contains(ms.going, w_hi))
            if len(tied):
                count = np.searchsorted(ms.first, w_lo[tied], side="left")  # members below lo
                deep = tie_lo[tied]
                if deep.any():
                    count[deep], _ = _locate(lo, tied[deep], offset, ms, count[deep])
                hit = count < ms.count  # then the first member >= lo must be <= hi
                check = hit if hi_known is None else hit & hi_known[tied]
                hit[check] = _member_vs(hi, tied[check], offset, ms, count[check]) >= 0
                out[tied] = hit
    if ms.count < len(members):
        outside = [m for m in members.values if not m.startswith(common)]
        if lo_known is not None and outside[0] < common:
            out |= ~lo_known
        if hi_known is not None and outside[-1] > common:
            out |= ~hi_known
    return out


def isin(values: KeyedStrings, members: Members) -> np.ndarray:
    """For each value: is it one of the members?"""
    prefix = values.prefix
    ms = members.cut(prefix)
    if not ms.count:
        return np.zeros(len(values), dtype=bool)
    w = values.words(0, len(prefix))
    out = membership.contains(ms.first, w)
    if len(ms.going):  # a word equal to a member's that goes on: the next words decide
        tied = np.flatnonzero(out & ~_ended(w))
        if len(tied):
            below = np.searchsorted(ms.first, w[tied], side="left")
            _, equal = _locate(values, tied, len(prefix), ms, below)
            out[tied] = equal
    return out
