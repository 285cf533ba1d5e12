"""``pe.classify`` against DuckDB on the rows, in both directions (issue #23).

Per container and predicate ``p``: ``"none"`` must hold no row where ``p`` is TRUE (the pruning
oracle), and ``"all"`` must hold no row where ``p IS NOT TRUE`` (FALSE or NULL): both asked of
DuckDB on the actual rows, under the same random cases, statistics sources (exact, degraded,
``stats_from_arrow``, Parquet footers) and boundary values as the pruning's differential tests.
``prune`` must equal ``classify != "none"``, and a fair share of the containers that do match
entirely must be found (an engine answering ``"some"`` everywhere is sound and useless).
"""

from __future__ import annotations

import contextlib
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prune_engine as pe
from tests.budget import examples
from tests.oracle.classify import ClassifyTally
from tests.oracle.data import FAMILIES
from tests.oracle.duck import DuckOracle
from tests.oracle.run import run_boundary_round, run_round

from prune_engine.compiler import classify as classify_module

ORACLE = DuckOracle()


@contextlib.contextmanager
def evaluated_in(mode: str):
    """``"windows"``: the counterpart evaluated over windows of one container (never the whole
    table), as on a large table whose kept containers cluster; ``"whole"``: as configured."""
    if mode == "whole":
        yield
        return
    saved = {k: getattr(classify_module, k) for k in ("BLOCK", "GAP", "WHOLE")}
    classify_module.BLOCK, classify_module.GAP, classify_module.WHOLE = 1, 2, 1.0
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(classify_module, k, v)


@pytest.mark.parametrize("mode", ["whole", "windows"])
@pytest.mark.parametrize("family", [*FAMILIES, "mixed"])
@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_none_and_all_hold_on_the_rows(family, mode, rnd):
    tally = ClassifyTally(ORACLE)
    with evaluated_in(mode):
        run_round(tally, rnd, family=family, n_predicates=8, max_containers=6, max_rows=6)
    assert not tally.violations, "\n\n".join(tally.violations[:10])


def test_seeded_rounds_find_entire_containers():
    """Seeded rounds, through Parquet files too: sound both ways, and with exact statistics a
    fair share of the containers whose every row matches are called "all"."""
    tally = ClassifyTally(ORACLE)
    for seed in range(20):
        run_round(tally, random.Random(seed), n_predicates=10, parquet=True,
                  label=f"seed={seed}")
    assert not tally.violations, "\n\n".join(tally.violations[:10])
    assert tally.entire["reference"] > 100, "too few entirely matching containers to judge"
    rate = tally.found["reference"] / tally.entire["reference"]
    assert rate > 0.3, f"found only {rate:.0%} of the entirely matching containers"


@pytest.mark.parametrize("mode", ["whole", "windows"])
@pytest.mark.parametrize("column", ["i8", "u64", "f64", "f32", "d18", "tz_ms", "dt", "s",
                                    "bin", "b"])
def test_boundary_values(column, mode):
    """Every type's limits and the values next to them, NaN, -0.0, NULL and empty containers."""
    tally = ClassifyTally(ORACLE)
    with evaluated_in(mode):
        run_boundary_round(tally, random.Random(column), column, budget=200,
                           label=f"boundary {column}")
    assert not tally.violations, "\n\n".join(tally.violations[:10])
    assert tally.cases > 100


def test_classify_shapes_and_edges():
    stats = pa.table({
        "container": ["empty", "all", "nulls", "nan", "unknown"],
        "num_records": [0, 3, 3, 3, 3],
        "min_values": [{"x": None}, {"x": 6.0}, {"x": 6.0}, {"x": 6.0}, {"x": None}],
        "max_values": [{"x": None}, {"x": 9.0}, {"x": 9.0}, {"x": 9.0}, {"x": 9.0}],
        "null_count": [{"x": 0}, {"x": 0}, {"x": 1}, {"x": 0}, {"x": 0}],
        "nan_count": [{"x": 0}, {"x": 0}, {"x": 0}, {"x": 1}, {"x": 0}],
    })
    assert pe.classify(stats, "x > 5").to_pylist() == ["none", "all", "some", "all", "some"]
    # NaN is above every number; NULL is never a match; a max below 10 is enough for "all"
    assert pe.classify(stats, "x < 10").to_pylist() == ["none", "all", "some", "some", "all"]
    assert pe.classify(stats, "x IS NULL").to_pylist() == ["none", "none", "some", "none",
                                                           "none"]
    assert pe.classify(stats, "x IS NOT NULL").to_pylist() == ["none", "all", "some", "all",
                                                               "all"]
    assert pe.classify(stats, "x > 5 OR x IS NULL").to_pylist()[1] == "all"
    assert pe.classify(stats, "f(x) > 5").to_pylist() == ["none"] + ["some"] * 4
    assert pe.classify(stats, "NOT (x <= 5)").to_pylist()[1] == "all"
    answers = pe.classify(stats, pe.col("x") > 5)
    assert answers.type == pa.dictionary(pa.int8(), pa.string())
    with pytest.raises(pe.UnknownColumnError):
        pe.classify(stats, "y > 1")


def test_element_predicates_are_never_all(tmp_path):
    """``orders.price > 5`` holds for a row when some element does: element bounds all above
    5 say nothing of a row whose list is empty (FALSE there)."""
    import pyarrow.parquet as pq

    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"orders": [[{"price": 9}], [], [{"price": 7}]],
                             "tags": [["a"], [], ["a"]]}), path)
    stats = pe.collect_stats(path, progress=False)
    for expr in ("orders.price > 5", "NOT (orders.price <= 5)", "array_contains(tags, 'a')"):
        assert pe.classify(stats, expr).to_pylist() == ["some"], expr
    assert pe.scan(path, where="orders.price > 5").num_rows == 2


def test_windows_answer_as_the_whole_table():
    """Over a table large enough for :func:`kept_windows` (clustered ``ts``, random strings,
    wide decimals, invalid statistics kept): the same answers as the whole-table evaluation."""
    import decimal
    import warnings

    import numpy as np

    rng = np.random.default_rng(7)
    n = 60_000
    ts = np.arange(n, dtype=np.int64) * 60_000_000
    words = np.array([f"w{i:05d}" for i in range(1000)])
    s_lo = np.sort(rng.choice(words, (n, 2)), axis=1)
    d = rng.integers(-10**6, 10**6, (n, 2))
    d.sort(axis=1)
    dec = pa.decimal128(38, 2)
    ts_lo = ts.copy()
    ts_lo[50_000] = ts[50_000] + 10**12  # min > max: invalid, kept under on_invalid="keep"

    def bounds(t, s, x):
        return pa.StructArray.from_arrays(
            [pa.array(t, pa.timestamp("us", "UTC")), pa.array(s),
             pa.array([decimal.Decimal(int(v)) / 100 for v in x], dec)], ["ts", "s", "d"])

    stats = pa.table({
        "num_records": np.full(n, 10), "min_values": bounds(ts_lo, s_lo[:, 0], d[:, 0]),
        "max_values": bounds(ts + 59_999_999, s_lo[:, 1], d[:, 1]),
        "null_count": pa.StructArray.from_arrays(
            [pa.array(np.zeros(n, np.int64)), pa.array(rng.integers(0, 2, n)),
             pa.array(np.zeros(n, np.int64))], ["ts", "s", "d"])})
    day = "TIMESTAMP '1970-01-15 00:00:00+00:00'"
    predicates = [f"ts >= {day} AND ts < TIMESTAMP '1970-01-16 00:00:00+00:00'",
                  f"ts >= {day} AND s > 'w00500'", f"ts < {day} AND d > -5000",
                  "ts IN (TIMESTAMP '1970-01-02 00:00:00+00:00', "
                  "TIMESTAMP '1970-02-01 00:00:00+00:00')", "s = 'w00007'"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the invalid container, kept
        keep = np.array(pe.prune(stats, predicates[0], on_invalid="keep"))
        assert len(classify_module.kept_windows(keep)) == 2  # the range and the invalid one
        for expr in predicates:
            whole = pe.classify(stats, expr, on_invalid="keep").to_pylist()
            with evaluated_in("windows"):
                assert pe.classify(stats, expr, on_invalid="keep").to_pylist() == whole, expr
            assert ("all" in whole) == (expr in predicates[:3]), expr
            if "ts" in expr:  # its statistics are invalid there: kept, never "all"
                assert whole[50_000] == "some"
