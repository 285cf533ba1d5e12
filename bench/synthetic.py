"""Synthetic statistics tables and the benchmark's predicates over them.

:func:`make_stats` builds a statistics table in the layout of :mod:`prune_engine.stats.layout`
for ``n`` containers, vectorized (numpy -> pyarrow), so that a million containers take a few
seconds. The data columns it describes are::

    id    int64                     correlated with container order (ranges rarely overlap)
    f     float64                   random ranges in [0, 1); some containers hold NaNs
    ts    timestamp("us", "UTC")    correlated: one year spread over the containers
    s     string                    random 6-letter words, narrow ranges
    cat   string, low cardinality   20 category names ("books", "home_and_kitchen", ...);
                                    most containers hold a single value (min = max)
    b     bool                      all false, all true, or mixed
    url   string                    URL-like, one long shared prefix (``URL_PREFIX``) and a
                                    7-digit id; narrow random ranges, as the issue #10 case

Realism knobs (the same for every column): ``unknown`` is the fraction of each stats leaf
(min, max, null count, NaN count) that is null; a few containers have a whole ``min_values``,
``max_values``, ``null_count`` or ``nan_count`` struct null; ``all_null`` is the fraction of
containers where a column holds only nulls (``null_count == num_records``, min/max null).
No container is empty (``num_records >= 1000``).

:func:`scenarios` lists the benchmarked predicates (:class:`Scenario`: an id that says what it
is, and the predicate as a :mod:`peers` tree that renders the SQL text given to ``pe.prune``).

>>> t = make_stats(1000)
>>> t.num_rows, t.schema.field("min_values").type.num_fields
(1000, 7)
>>> [sc.id for sc in scenarios(1000)][:2]
['eq_int', 'gt_float']
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from peers import All, Any_, Cmp, In, Prefix, Pred
from prune_engine.stats.layout import (
    CONTAINER, MAX_VALUES, MIN_VALUES, NAN_COUNT, NULL_COUNT, NUM_RECORDS,
)

#: the data columns that the statistics describe, with their Arrow types
DATA_TYPES: dict[str, pa.DataType] = {
    "id": pa.int64(),
    "f": pa.float64(),
    "ts": pa.timestamp("us", tz="UTC"),
    "s": pa.string(),
    "cat": pa.string(),
    "b": pa.bool_(),
    "url": pa.string(),
}
#: first and last instant of the ``ts`` column (the containers cover one year, in order)
TS_START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
TS_END = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
#: ids per container: container k holds ids in about [k * ID_STRIDE, (k + 1) * ID_STRIDE)
ID_STRIDE = 1000
#: the values of ``cat``, in byte order (some longer than 7 bytes: they tie on a first word)
CATEGORIES = sorted(["automotive", "baby", "beauty", "books", "clothing", "computers",
                     "electronics", "garden", "grocery", "health", "home_and_kitchen",
                     "industrial", "jewelry", "movies", "music", "office_products", "outdoors",
                     "pet_supplies", "sports", "toys"])
#: the prefix every ``url`` shares, and the ids that follow it (7 digits)
URL_PREFIX = "https://shop.example/products/"
URL_IDS = 9_000_000
_WORD = 6  # letters per synthetic word of column ``s``


def make_stats(n: int, *, seed: int = 0, unknown: float = 0.05, all_null: float = 0.01,
               null_struct: float = 0.005) -> pa.Table:
    """A statistics table for ``n`` containers (see the module doc), deterministic per ``seed``.

    >>> t = make_stats(200, seed=1)
    >>> t.column_names
    ['container', 'num_records', 'min_values', 'max_values', 'null_count', 'nan_count']
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of containers, not {n}")
    rng = np.random.default_rng(seed)
    num_records = rng.integers(1_000, 1_000_000, n)
    lows, highs = {}, {}
    for name, make in _BOUNDS.items():
        lows[name], highs[name] = make(rng, n)

    min_leaves, max_leaves, null_leaves, nulls = [], [], [], {}
    for name, typ in DATA_TYPES.items():
        only_nulls = rng.random(n) < all_null
        nulls[name] = np.where(rng.random(n) < 0.5, 0, rng.integers(0, num_records // 20 + 1))
        nulls[name] = np.where(only_nulls, num_records, nulls[name])
        min_leaves.append(_leaf(lows[name], typ, only_nulls | (rng.random(n) < unknown)))
        max_leaves.append(_leaf(highs[name], typ, only_nulls | (rng.random(n) < unknown)))
        null_leaves.append(_leaf(nulls[name], pa.int64(), rng.random(n) < unknown))
    # NaNs among the values that are not null (an all-null container holds none)
    nans = np.minimum(np.where(rng.random(n) < 0.9, 0, rng.integers(1, 10, n)), num_records - nulls["f"])
    nan_leaf = _leaf(nans, pa.int64(), rng.random(n) < unknown)

    int_fields = [pa.field(name, pa.int64()) for name in DATA_TYPES]
    data_fields = [pa.field(name, typ) for name, typ in DATA_TYPES.items()]
    return pa.table({
        CONTAINER: _container_ids(n),
        NUM_RECORDS: pa.array(num_records, pa.int64()),
        MIN_VALUES: _struct(min_leaves, data_fields, rng.random(n) < null_struct),
        MAX_VALUES: _struct(max_leaves, data_fields, rng.random(n) < null_struct / 2),
        NULL_COUNT: _struct(null_leaves, int_fields, rng.random(n) < null_struct / 2),
        NAN_COUNT: _struct([nan_leaf], [pa.field("f", pa.int64())], rng.random(n) < 2 * null_struct),
    })


def _leaf(values: np.ndarray, typ: pa.DataType, null: np.ndarray) -> pa.Array:
    if pa.types.is_string(typ):  # numpy bytes -> binary -> string (ASCII by construction)
        arr = pa.array(values, pa.binary(), mask=null)  # chunked when large
        return (arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr).cast(typ)
    return pa.array(values, typ, mask=null)


def _struct(leaves: list[pa.Array], fields: list[pa.Field], null: np.ndarray) -> pa.StructArray:
    return pa.StructArray.from_arrays(leaves, fields=fields, mask=pa.array(null))


def _container_ids(n: int) -> pa.Array:
    index = pc.cast(pa.array(np.arange(n)), pa.string())
    return pc.binary_join_element_wise("part-", pc.utf8_lpad(index, 7, "0"), ".parquet", "")


# -- bounds per column: (rng, n) -> (lows, highs) as numpy arrays, lows <= highs ---------------

def _id_bounds(rng, n):
    base = np.arange(n, dtype=np.int64) * ID_STRIDE
    lo = base + rng.integers(0, ID_STRIDE // 10, n)
    hi = base + ID_STRIDE - rng.integers(1, ID_STRIDE // 10, n)
    wide = rng.random(n) < 0.02  # late-arriving rows: a few containers span far ahead
    hi = np.where(wide, hi + rng.integers(0, n * ID_STRIDE // 10 + 1, n), hi)
    return lo, hi


def _f_bounds(rng, n):
    lo = rng.random(n)
    return lo, lo + (1.0 - lo) * rng.random(n) * 0.2


def _ts_bounds(rng, n):
    start = _micros(TS_START)
    step = (_micros(TS_END) - start) // n
    base = start + np.arange(n, dtype=np.int64) * step
    jitter = max(step // 4, 1)
    return base - rng.integers(0, jitter, n), base + step + rng.integers(0, jitter, n)


def _s_bounds(rng, n):
    letters = rng.integers(ord("a"), ord("z") + 1, (n, _WORD), dtype=np.uint8)
    lo = letters.view(f"S{_WORD}").ravel()
    high_letters = rng.integers(ord("a"), ord("z") + 1, (n, _WORD), dtype=np.uint8)
    step = rng.integers(0, 3, n).astype(np.uint8)
    high_letters[:, 0] = np.minimum(letters[:, 0] + step, ord("z"))
    same_first = high_letters[:, 0] == letters[:, 0]
    high_letters[same_first, 1:] = ord("z")  # keeps hi >= lo when the first letters agree
    return lo, high_letters.view(f"S{_WORD}").ravel()


def _cat_bounds(rng, n):
    cats = np.array(CATEGORIES, dtype=f"S{max(map(len, CATEGORIES))}")
    a = rng.integers(0, len(cats), n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, len(cats), n))
    return cats[np.minimum(a, b)], cats[np.maximum(a, b)]


def _b_bounds(rng, n):
    kind = rng.random(n)
    return kind >= 0.7, kind >= 0.4  # [0, .4): all false; [.4, .7): mixed; [.7, 1): all true


def _url_bounds(rng, n):
    low = rng.integers(0, URL_IDS - 1000, n)
    return url_bytes(low), url_bytes(low + rng.integers(0, 1001, n))


def url(i: int) -> str:
    """The URL of id ``i`` (what ``url`` holds).

    >>> url(42)
    'https://shop.example/products/0000042'
    """
    return f"{URL_PREFIX}{i:07d}"


def url_bytes(ids: np.ndarray) -> np.ndarray:
    """:func:`url` of every id, vectorized, as a numpy bytes array."""
    digits = (ids[:, None] // 10 ** np.arange(6, -1, -1)) % 10 + ord("0")
    prefix = np.frombuffer(URL_PREFIX.encode(), np.uint8)
    chars = np.concatenate([np.broadcast_to(prefix, (len(ids), len(prefix))),
                            digits.astype(np.uint8)], axis=1)
    return np.ascontiguousarray(chars).view(f"S{chars.shape[1]}").ravel()


_BOUNDS = {"id": _id_bounds, "f": _f_bounds, "ts": _ts_bounds, "s": _s_bounds,
           "cat": _cat_bounds, "b": _b_bounds, "url": _url_bounds}


def _micros(t: dt.datetime) -> int:
    return int(t.timestamp()) * 1_000_000


# -- the benchmarked predicates --------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """One benchmarked predicate: ``id`` names it in results, ``pred`` is its tree."""

    id: str
    pred: Pred

    @property
    def sql(self) -> str:
        return self.pred.sql()


def scenarios(n: int, *, seed: int = 0) -> list[Scenario]:
    """The benchmark's predicates for a table of ``n`` containers.

    Literals scale with ``n`` where a column is correlated with container order, so that each
    predicate prunes a similar share of containers at every size.

    >>> {sc.id: sc.sql for sc in scenarios(1000)}["like_prefix"]
    "s LIKE 'ab%'"
    """
    top = n * ID_STRIDE
    rng = np.random.default_rng(seed + 1)
    in_values = tuple(int(v) for v in np.unique(rng.integers(0, top // 10, 1200))[:1000])
    url_values = tuple(url(int(v)) for v in np.unique(rng.integers(0, URL_IDS, 1200))[:1000])
    late = TS_START + (TS_END - TS_START) * 0.9
    three = ("books", "garden", "toys")
    return [
        Scenario("eq_int", Cmp("id", "=", top // 2 + 7)),
        Scenario("gt_float", Cmp("f", ">", 0.95)),
        Scenario("ge_ts", Cmp("ts", ">=", late)),
        Scenario("eq_cat", Cmp("cat", "=", CATEGORIES[7])),
        Scenario("and6", All((
            Cmp("id", ">=", top // 10), Cmp("id", "<", top // 2), Cmp("f", "<", 0.5),
            Cmp("ts", ">=", TS_START + (TS_END - TS_START) * 0.2),
            Cmp("cat", "!=", CATEGORIES[3]), Cmp("b", "=", True),
        ))),
        Scenario("or_ranges", Any_(tuple(
            All((Cmp("id", ">=", top * k // 8), Cmp("id", "<", top * k // 8 + top // 100)))
            for k in range(1, 8, 2)
        ))),
        Scenario("in_1000", In("id", in_values)),
        Scenario("like_prefix", Prefix("s", "ab")),
        # issue #10: strings with a long shared prefix, low cardinality, sets of 3 and 1,000
        Scenario("in3_int", In("id", (top // 10 + 7, top // 2 + 7, top * 9 // 10 + 7))),
        Scenario("eq_url", Cmp("url", "=", url(4_500_000))),
        Scenario("ne_url", Cmp("url", "!=", url(4_500_000))),
        Scenario("lt_url", Cmp("url", "<", url(900_000))),
        Scenario("between_url", All((Cmp("url", ">=", url(4_000_000)), Cmp("url", "<=", url(4_100_000))))),
        Scenario("like_url", Prefix("url", url(4_500_000)[:-5])),
        Scenario("in3_url", In("url", (url(500_000), url(2_500_000), url(7_000_000)))),
        Scenario("in1000_url", In("url", url_values)),
        Scenario("notin1_url", In("url", (url(4_500_000),), negated=True)),
        Scenario("in3_cat", In("cat", three)),
        Scenario("ts_in3_cat", All((Cmp("ts", ">=", TS_START + (TS_END - TS_START) * 0.75),
                                    In("cat", three)))),
        Scenario("notin2_cat_notlike_s", All((In("cat", ("books", "music"), negated=True),
                                               Prefix("s", "ba", negated=True)))),
    ]
