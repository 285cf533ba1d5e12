"""``explain``'s ``kept_because``: why each kept container could not be pruned.

A float range kept only because a NaN may be present must say so ("may hold NaN: nan_count
unknown"), apart from a range whose bounds allow a match; AND and OR name every test that
keeps; a pruned container has no ``kept_because``, a kept one always has one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.compiler import plan as plan_module
from tests.statsbuild import make_stats

#: f: bounds allow > 5 | bounds below 5, NaN count unknown | bounds below 5, 2 NaN counted |
#: bounds below 5, no NaN | bounds unknown, NaN count unknown | all NaN (5 of 5)
FLOATS = make_stats(
    f=[(0.0, 9.0, 0), (0.0, 1.0, 0), (0.0, 1.0, 0), (0.0, 1.0, 0), (None, None, 0),
       (None, None, 0)],
    x=[(0, 9, 0), (0, 9, 0), (0, 9, 0), (0, 9, 0), (0, 9, 0), (0, 9, 0)],
    num_records=[5, 5, 5, 5, 5, 5],
    nan_count={"f": [0, None, 2, 0, None, 5]},
)


def kept_because(stats, expr) -> list:
    return pe.explain(stats, expr).column("kept_because").to_pylist()


def test_a_float_range_kept_only_for_nan_says_so():
    assert kept_because(FLOATS, "f > 5") == [
        "f > 5: the bounds allow a match",
        "f > 5: may hold NaN: nan_count unknown",
        "f > 5: holds NaN: nan_count > 0",
        None,  # pruned: max 1 < 5 and no NaN
        "f > 5: min/max unknown",
        "f > 5: holds NaN: nan_count > 0",
    ], "NaN sorts above +inf: only the NaN count can rule it out"


def test_ranges_that_nan_cannot_match_never_blame_nan():
    reasons = kept_because(FLOATS, "f < 0.5")
    assert reasons[:4] == ["f < 0.5: the bounds allow a match"] * 4
    assert reasons[4] == "f < 0.5: min/max unknown"
    assert reasons[5] is None, "all NaN: nothing is below 0.5"
    assert not any("NaN" in r for r in reasons if r), "NaN is never < 0.5"


@pytest.mark.parametrize("expr, nan_reason", [
    ("f >= 7", "f >= 7: may hold NaN: nan_count unknown"),
    ("f != 0.5", "f != 0.5: the bounds allow a match"),  # [0, 1] holds values other than 0.5
    ("isnan(f)", "isnan(f): may hold NaN: nan_count unknown"),
    ("f IN (7, CAST('NaN' AS DOUBLE))", "f IN (7, CAST('NaN' AS DOUBLE)): may hold NaN: "
                                        "nan_count unknown"),
    ("f > x + 20", "f > (x + 20): may hold NaN: nan_count unknown"),
])
def test_every_nan_sensitive_test_names_nan(expr, nan_reason):
    assert kept_because(FLOATS, expr)[1] == nan_reason, "container 1: NaN count unknown"


def test_an_and_names_every_test_and_an_or_those_that_keep():
    reasons = kept_because(FLOATS, "f > 5 AND x < 3")
    assert reasons[1] == "f > 5: may hold NaN: nan_count unknown; x < 3: the bounds allow a match"
    reasons = kept_because(FLOATS, "f > 5 OR x > 100")
    assert reasons[1] == "f > 5: may hold NaN: nan_count unknown", "x > 100 keeps nothing"


def test_the_list_stops_after_three_tests():
    expr = " AND ".join(f"x < {k}" for k in range(1, 6))
    reasons = kept_because(FLOATS, expr)
    assert reasons[0] == ("x < 1: the bounds allow a match; x < 2: the bounds allow a match; "
                          "x < 3: the bounds allow a match; ..."), \
        f"at most {plan_module.KEPT_REASONS}, then '...'"
    exact = kept_because(FLOATS, "x < 1 AND x < 2 AND x < 3")[0]
    assert exact.endswith("x < 3: the bounds allow a match"), "three: no '...'"


def test_undecided_and_presence_tests():
    assert kept_because(FLOATS, "my_udf(x)")[0] == "my_udf(x): not decided by the statistics"
    stats = make_stats(x=[(0, 9, 3)], num_records=[10])
    assert kept_because(stats, "x IS NULL") == ["x IS NULL: may hold NULL"]
    assert kept_because(stats, "x IS NOT NULL") == ["x IS NOT NULL: may hold a non-null value"]


def test_kept_because_and_reason_partition_the_containers():
    for expr in ("f > 5", "f < 0.5 OR x = 4", "NOT (f > 0.5) AND x IS NOT NULL", "isnan(f)"):
        table = pe.explain(FLOATS, expr)
        for keep, reason, why in zip(*(table.column(c).to_pylist()
                                       for c in ("keep", "reason", "kept_because"))):
            assert (why is not None) == keep and (reason is None) == keep, expr


def test_invalid_statistics_kept_under_keep_say_so():
    stats = make_stats(x=[(9, 1, 0), (0, 1, 0)], num_records=[5, 5])  # min > max
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pe.explain(stats, "x > 5", on_invalid="keep")
    assert table.column("keep").to_pylist() == [True, False]
    assert table.column("kept_because").to_pylist() == [plan_module.INVALID_KEPT, None]


def test_a_thousand_levels_deep_is_explained_in_a_few_tests():
    x = pe.col("x")
    expr = x < 1
    for i in range(1000):
        expr = (expr | (x > 100 + i)) if i % 2 else (expr & (x < 50 + i))
    reasons = kept_because(FLOATS, expr)
    assert all(r is not None and r.endswith("; ...") for r in reasons), reasons[0]


def test_many_containers_get_their_own_reasons():
    n = 10_000
    lo = np.arange(n, dtype=np.float64)
    stats = pa.table({
        "container": [f"c{i}" for i in range(n)], "num_records": pa.array([3] * n, pa.int64()),
        "min_values": pa.StructArray.from_arrays([pa.array(lo)], names=["f"]),
        "max_values": pa.StructArray.from_arrays([pa.array(lo + 1)], names=["f"]),
        "null_count": pa.StructArray.from_arrays([pa.array(np.zeros(n, np.int64))], names=["f"]),
        "nan_count": pa.StructArray.from_arrays(
            [pa.array(np.where(lo % 2 == 0, 0, 1), mask=lo % 3 == 0)], names=["f"]),
    })
    reasons = kept_because(stats, f"f > {n - 10}")
    for i, reason in enumerate(reasons):
        if i >= n - 10:
            assert reason == f"f > {n - 10}: the bounds allow a match", i
        elif i % 3 == 0:
            assert reason == f"f > {n - 10}: may hold NaN: nan_count unknown", i
        elif i % 2 == 1:
            assert reason == f"f > {n - 10}: holds NaN: nan_count > 0", i
        else:
            assert reason is None, f"c{i}: max {i + 1}, no NaN: pruned"
    assert not math.isnan(lo[0])
