"""NaN counts of float columns (issue #22, "Float ranges"): read from the footers where a
writer set them (``Statistics.nan_count``, PARQUET-2249), proven by dictionary pages, computed
from the data, or declared by the user (``nan_free=``). Each rule against the rows: a known
NaN count is the true one, and no container holding a matching row is pruned (DuckDB on the
rows). pyarrow writes no NaN counts, so footers carrying them are edited in, as a writer of
parquet-format 2.13 would write them.
"""

from __future__ import annotations

import collections
import io
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats import _thrift, parquet
from tests.budget import examples
from tests.oracle.data import CID
from tests.oracle.duck import DuckOracle, tagged_rows
from tests.stats import thrift_codec as tc

NAN, INF = float("nan"), float("inf")
#: every edge a float range meets: NaN, both zeros, both infinities, null
VALUES = [NAN, -0.0, 0.0, 1.0, -2.0, INF, -INF, 250.5, None]
#: the float columns of the generated files: d (double) and s (float) may hold NaN, c never
FLOATS = {"d": pa.float64(), "s": pa.float32(), "c": pa.float64()}
COLUMNS = ["d", "s", "c"]
LITERALS = ["-2", "-0.0", "0", "0.5", "1", "250", "1e308", "CAST('Infinity' AS DOUBLE)",
            "CAST('-Infinity' AS DOUBLE)"]
TEMPLATES = ["{c} > {a}", "{c} >= {a}", "{c} < {a}", "{c} <= {a}", "{c} = {a}", "{c} <> {a}",
             "{c} IN ({a}, {b})", "{c} NOT IN ({a}, {b})", "NOT ({c} <= {a})",
             "{c} BETWEEN {a} AND {b}", "isnan({c})", "NOT isnan({c})", "{c} IS NULL",
             "{c} = CAST('NaN' AS DOUBLE)", "{c} > {a} AND k < 3", "{c} > {a} OR {c} < {b}"]


def parquet_bytes(table: pa.Table, **options) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def true_nan_counts(data: bytes) -> dict[tuple[int, int], int]:
    """(row group, column) -> the NaN count of every float column chunk, from its values."""
    pf = pq.ParquetFile(pa.BufferReader(data))
    out = {}
    for r in range(pf.num_row_groups):
        group = pf.read_row_group(r)
        for c, field in enumerate(group.schema):
            if pa.types.is_floating(field.type):
                out[r, c] = int(pc.sum(pc.fill_null(pc.is_nan(group.column(c)), False)).as_py()
                                or 0)
    return out


def with_nan_counts(data: bytes, counts: dict[tuple[int, int], object] | None = None) -> bytes:
    """``data`` with ``Statistics.nan_count`` (field 9, an i64) set per chunk: the true counts
    unless ``counts`` gives others (a ``tc.Field`` value is written as it is)."""
    counts = true_nan_counts(data) if counts is None else counts
    return tc.with_statistics(data, {key: [n if isinstance(n, tc.Field) else tc.Field(9, tc.I64, n)]
                                     for key, n in counts.items()})


def nan_counts(stats, column: str) -> list:
    return [None if row is None else row.get(column)
            for row in stats.column("nan_count").to_pylist()]


# ------------------------------------------------------------------------------ the decoder


def test_the_kernel_and_its_twins_read_the_footer_nan_count():
    table = pa.table({"d": [NAN, 1.0, NAN, None, 2.0], "k": [1, 2, 3, 4, 5],
                      "s": pa.array([NAN, NAN, 1.0, 2.0, None], pa.float32())})
    data = with_nan_counts(parquet_bytes(table, row_group_size=2))
    footer = tc.footer_of(data)
    tc.assert_kernel_matches(footer)
    info, chunks, _ = tc.kernel(footer)
    assert chunks[:, _thrift.C_NANS].tolist() == [1, -1, 2, 1, -1, 0, 0, -1, 0], \
        "per chunk, row-group major: d, k (no field: -1), s"
    tail = parquet._tail(lambda n, offset: data[offset:offset + n], len(data))
    twins = parquet.FOOTER_KERNELS._load_twins()
    compiled = parquet._decode(tail, "f", None, _thrift)
    by_twins = parquet._decode(tail, "f", None, twins)
    assert np.array_equal(compiled.rows, by_twins.rows), "the twins read nan_count too"
    assert compiled.rows[:, _thrift.S_NANS].tolist() == [1, -1, 2, 1, -1, 0, 0, -1, 0]


def test_pyarrow_writes_no_nan_count():
    data = parquet_bytes(pa.table({"d": [NAN, 1.0]}))
    stats = tc.get(tc.get(tc.get(tc.get(tc.decode(tc.footer_of(data)), 4).value.items[0], 1)
                          .value.items[0], 3).value, 12).value
    assert tc.get(stats, 9) is None, "if pyarrow starts writing it, the README must say so"


def test_footer_nan_counts_per_row_group_and_summed_per_file(tmp_path):
    table = pa.table({"d": [NAN, 1.0, NAN, NAN, 2.0, None], "k": list(range(6)),
                      "s": pa.array([1.0, 2.0, 3.0, NAN, None, None], pa.float32())})
    path = tmp_path / "t.parquet"
    path.write_bytes(with_nan_counts(parquet_bytes(table, row_group_size=2)))
    stats = pe.collect_stats(path, progress=False)
    assert nan_counts(stats, "d") == [1, 2, 0] and nan_counts(stats, "s") == [0, 1, 0]
    assert "k" not in stats.schema.field("nan_count").type.names, "only float leaves"
    by_file = pe.collect_stats(path, granularity="file", progress=False)
    assert (nan_counts(by_file, "d"), nan_counts(by_file, "s")) == ([3], [1])


@pytest.mark.parametrize("count, why", [
    (-1, "negative"),
    (3, "more NaNs than the chunk's two values"),
    (2, "NaNs and nulls above the values (one is null)"),
    (tc.Field(9, tc.BINARY, b"\x01"), "field 9 of another type is not nan_count"),
])
def test_a_nan_count_the_chunk_cannot_hold_is_unknown(tmp_path, count, why):
    data = parquet_bytes(pa.table({"d": [1.0, None, 2.0, 3.0]}), row_group_size=2)
    path = tmp_path / "t.parquet"
    path.write_bytes(with_nan_counts(data, {(0, 0): count, (1, 0): 0}))
    impossible = isinstance(count, int) and count > 0  # (-1 is "not given"; field 9 of
    with warnings.catch_warnings(record=True) as said:  # another type is not nan_count)
        warnings.simplefilter("always")
        stats = pe.collect_stats(path, progress=False)
        by_file = pe.collect_stats(path, granularity="file", progress=False)
    assert nan_counts(stats, "d") == [None, 0], why
    assert nan_counts(by_file, "d") == [None], "one unknown row group: the file's is unknown"
    assert len([w for w in said if "NaNs" in str(w.message)]) == (2 if impossible else 0), \
        "an impossible count: the chunk is unknown, one warning per collection"


def test_a_footer_nan_count_makes_ranges_prune_and_explain_say_why(tmp_path):
    data = parquet_bytes(pa.table({"d": [NAN, 1.0, 2.0, 3.0]}), row_group_size=2)
    path = tmp_path / "t.parquet"
    path.write_bytes(with_nan_counts(data))
    table = pe.explain(pe.collect_stats(path, progress=False), "d > 5")
    assert table.column("keep").to_pylist() == [True, False], "the second holds no NaN"
    assert table.column("kept_because").to_pylist() == ["d > 5: holds NaN: nan_count > 0", None]
    path.write_bytes(data)
    table = pe.explain(pe.collect_stats(path, progress=False), "d > 5")
    assert table.column("kept_because").to_pylist() == [
        "d > 5: may hold NaN: nan_count unknown"] * 2, "without NaN counts, nothing prunes"


# ------------------------------------------------------------------------------ the issue


def issue_lake(path, dtype: pa.DataType) -> None:
    """1,200 row groups of 5 amounts each; 598 of them hold an amount above 250, none NaN."""
    groups = np.repeat(np.arange(1200), 5)
    amount = groups - 352.0 + np.tile([0.125, 0.25, 0.375, 0.5, 0.625], 1200)
    pq.write_table(pa.table({"amount": pa.array(amount, dtype)}), path, row_group_size=5)


@pytest.mark.parametrize("dtype", [pa.float64(), pa.float32()], ids=["double", "float"])
def test_the_issue_amount_above_250_prunes_once_nan_is_ruled_out(tmp_path, dtype):
    path = tmp_path / "amounts.parquet"
    issue_lake(path, dtype)
    holding = [bool(pc.any(pc.greater(pq.ParquetFile(path).read_row_group(r).column(0), 250))
                    .as_py()) for r in range(1200)]
    assert sum(holding) == 598
    sql = "amount > 250"
    plain = pe.collect_stats(path, progress=False)
    assert pe.prune(plain, sql).to_pylist() == [True] * 1200, "NaN may be anywhere"
    why = collections.Counter(pe.explain(plain, sql).column("kept_because").to_pylist())
    assert why == {"amount > 250: the bounds allow a match": 598,
                   "amount > 250: may hold NaN: nan_count unknown": 602}
    declared = pe.collect_stats(path, nan_free=["amount"], progress=False)
    assert pe.prune(declared, sql).to_pylist() == holding, "the user's promise"
    explained = pe.explain(declared, sql)
    assert collections.Counter(explained.column("reason").to_pylist()) == {None: 598, sql: 602}
    proven = pe.collect_stats(path, dictionaries=True, progress=False)
    assert pe.prune(proven, sql).to_pylist() == holding, "each dictionary has no NaN"
    assert nan_counts(proven, "amount") == [0] * 1200
    path.write_bytes(with_nan_counts(path.read_bytes()))
    counted = pe.collect_stats(path, progress=False)
    assert pe.prune(counted, sql).to_pylist() == holding, "a writer's nan_count 0"


# ------------------------------------------------------------------------------ soundness


@st.composite
def lakes(draw):
    """1-3 files of the float columns d, s (NaN possible), c (never NaN) and an int k; each
    file with the footers' true NaN counts or none, dictionary-encoded or not, with or
    without statistics; some files empty, some columns all null."""
    files = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 10))
        columns = {}
        for name, typ in FLOATS.items():
            pool = [v for v in VALUES if name != "c" or v is None or v == v]
            if draw(st.booleans()):
                pool = [None]  # an all-null column in this file
            columns[name] = pa.array(draw(st.lists(st.sampled_from(pool), min_size=n,
                                                   max_size=n)), typ)
        columns["k"] = pa.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)),
                                pa.int64())
        files.append((pa.table(columns), draw(st.integers(1, 4)), draw(st.booleans()),
                      draw(st.booleans()), draw(st.sampled_from([True, True, False]))))
    predicates = draw(st.lists(st.builds(
        lambda t, c, a, b: t.format(c=c, a=a, b=b), st.sampled_from(TEMPLATES),
        st.sampled_from(COLUMNS), st.sampled_from(LITERALS), st.sampled_from(LITERALS)),
        min_size=6, max_size=10))
    return files, predicates


def _true_counts(stats) -> dict[str, dict[str, int]]:
    """container -> column -> its true NaN count, from the rows."""
    rows = tagged_rows(stats)
    out: dict[str, dict[str, int]] = collections.defaultdict(lambda: dict.fromkeys(FLOATS, 0))
    for cid in stats.column("container").to_pylist():
        out[cid]  # empty containers count too
    for name in FLOATS:
        nan = pc.fill_null(pc.is_nan(rows.column(name)), False).to_pylist()
        for cid, is_nan in zip(rows.column(CID).to_pylist(), nan):
            out[cid][name] += is_nan
    return out


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lakes())
def test_every_nan_count_is_true_and_no_matching_container_is_pruned(tmp_path_factory, case):
    files, predicates = case
    root = tmp_path_factory.mktemp("lake")
    for k, (table, group_size, counted, dictionary, statistics) in enumerate(files):
        data = parquet_bytes(table, row_group_size=group_size, use_dictionary=dictionary,
                             write_statistics=statistics)
        (root / f"f{k}.parquet").write_bytes(with_nan_counts(data) if counted else data)
    oracle = DuckOracle()
    checked = 0
    for granularity in ("row_group", "file"):
        for options in ({}, {"dictionaries": True}, {"nan_free": ["c"]},
                        {"compute_missing": True}):
            stats = pe.collect_stats(root, granularity=granularity, progress=False, **options)
            truth = _true_counts(stats)
            for name in FLOATS:
                for cid, count in zip(stats.column("container").to_pylist(),
                                      nan_counts(stats, name)):
                    assert count is None or count == truth[cid][name], \
                        f"nan_count of {name} in {cid} with {options}: {count}"
            if options.get("nan_free"):
                assert nan_counts(stats, "c") == [0] * stats.num_rows
            matching = oracle.matching(tagged_rows(stats), predicates)
            for predicate, match in zip(predicates, matching):
                assert match is not None, (predicate, oracle.errors)
                keep = pe.prune(stats, predicate).to_pylist()
                kept = {c for c, k in zip(stats.column("container").to_pylist(), keep) if k}
                assert match <= kept, (f"unsound prune of {predicate!r} ({granularity}, "
                                       f"{options}): {sorted(match - kept)}")
                checked += 1
    assert checked == 8 * len(predicates)


# ------------------------------------------------------------------------------ nan_free


@pytest.fixture
def lake(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    pq.write_table(pa.table({"amount": [5.0, 300.0], "price": pa.array([1.0, 2.0], pa.float32()),
                             "k": [1, 2], "st": [{"f": 1.0}, {"f": 2.0}],
                             "l": [[1.0], [2.0]]}), root / "a.parquet", row_group_size=1)
    return root


def test_nan_free_sets_zero_in_every_container_and_travels_with_the_table(lake, tmp_path):
    stats = pe.collect_stats(lake, nan_free=["amount", "st.f"], progress=False)
    assert nan_counts(stats, "amount") == [0, 0]
    assert [r["st"]["f"] for r in stats.column("nan_count").to_pylist()] == [0, 0]
    assert nan_counts(stats, "price") == [None, None], "undeclared: unknown"
    assert stats.metadata["collect"]["nan_free"] == ["amount", "st.f"]
    assert pe.prune(stats, "amount > 100").to_pylist() == [False, True]
    stats.save(tmp_path / "stats.parquet")
    back = pe.read_stats(tmp_path / "stats.parquet")
    assert back.metadata["collect"]["nan_free"] == ["amount", "st.f"]
    assert back.table.equals(stats.table)
    pq.write_table(pa.table({"amount": [1.0, 2.0], "price": pa.array([NAN, 1.0], pa.float32())}),
                   lake / "b.parquet")
    updated = pe.update_stats(back, lake, progress=False)
    assert nan_counts(updated, "amount") == [0, 0, 0], "new files get the declaration too"
    assert updated.metadata["collect"]["nan_free"] == ["amount", "st.f"]
    assert pe.prune(updated, "amount > 100").to_pylist() == [False, True, False]


@pytest.mark.parametrize("names, message", [
    (["nope"], "'nope', which is not a column of the statistics; columns: amount, price, k"),
    (["k"], "'k', a column of type int64; only float columns can hold NaN"),
    (["st"], "'st', which is not a column"),
    (["l"], "'l', whose statistics describe list elements"),
    (5, "nan_free= takes column names, not 5"),
    ([1.5], "nan_free= takes column names"),
])
def test_names_that_cannot_be_declared_are_clear_errors(lake, names, message):
    with pytest.raises(pe.StatsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pe.collect_stats(lake, nan_free=names, progress=False)


def test_a_footer_that_counts_nan_refutes_the_declaration(tmp_path):
    path = tmp_path / "t.parquet"
    data = parquet_bytes(pa.table({"d": [1.0, NAN, 2.0, 3.0]}), row_group_size=2)
    path.write_bytes(with_nan_counts(data))
    with pytest.raises(pe.StatsError, match=r"declares 'd' free of NaN.*nan_count > 0.*1 "
                                            r"container") as err:
        pe.collect_stats(path, nan_free=["d"], progress=False)
    assert err.value.column == "d" and err.value.containers == [f"{path}#rg=0"]
    with pytest.raises(pe.StatsError, match=str(path)):
        pe.collect_stats(path, nan_free=["d"], granularity="file", progress=False)


def test_a_nan_in_a_dictionary_or_in_the_data_read_refutes_the_declaration(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"d": [1.0, NAN]}), path)
    assert nan_counts(pe.collect_stats(path, nan_free=["d"], progress=False), "d") == [0], \
        "unread, the promise is taken"
    with pytest.raises(pe.StatsError, match=f"{path} holds NaN in a dictionary page of 'd'"):
        pe.collect_stats(path, nan_free=["d"], dictionaries=True, progress=False)
    pq.write_table(pa.table({"d": [1.0, NAN]}), path, write_statistics=False)
    with pytest.raises(pe.StatsError, match="nan_count > 0"):
        pe.collect_stats(path, nan_free=["d"], compute_missing=True, progress=False)


def test_update_stats_refuses_a_new_file_that_counts_nan(lake):
    stats = pe.collect_stats(lake, nan_free=["amount"], progress=False)
    data = parquet_bytes(pa.table({"amount": [NAN, 1.0]}))
    (lake / "b.parquet").write_bytes(with_nan_counts(data))
    with pytest.raises(pe.StatsError, match="b.parquet"):
        pe.update_stats(stats, lake, progress=False)


# ------------------------------------------------------------------------------ dictionaries


def test_only_a_fully_dictionary_encoded_chunk_without_nan_proves_none(tmp_path):
    path = tmp_path / "t.parquet"
    values = [float(v) for v in range(200)]
    # a small dictionary page limit: the writer falls back to PLAIN data pages
    pq.write_table(pa.table({"e": values * 10}), path, dictionary_pagesize_limit=256,
                   write_batch_size=16, data_page_size=256)
    stats = pe.collect_stats(path, dictionaries=True, dictionary_bytes=1 << 20, progress=False)
    assert nan_counts(stats, "e") == [None], "PLAIN data pages: the dictionary is not all"
    table = pa.table({"d": values + [NAN], "e": values + [1.0]})
    pq.write_table(table, path)
    stats = pe.collect_stats(path, dictionaries=True, dictionary_bytes=1 << 20, progress=False)
    assert nan_counts(stats, "e") == [0], "every page uses the dictionary, which has no NaN"
    assert nan_counts(stats, "d") == [None], "a NaN in the dictionary: unknown, not a count"
    capped = pe.collect_stats(path, dictionaries=True, dictionary_bytes=64, progress=False)
    assert nan_counts(capped, "e") == [None], "a page over the cap is not read"
    named = pe.collect_stats(path, dictionaries=["d"], dictionary_bytes=1 << 20, progress=False)
    assert nan_counts(named, "e") == [None], "only the columns named"


def test_compute_missing_counts_the_nans_it_reads(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"d": [NAN, 1.0, 2.0, 3.0, None, None]}), path, row_group_size=2,
                   write_statistics=False)
    stats = pe.collect_stats(path, compute_missing=True, progress=False)
    assert nan_counts(stats, "d") == [1, 0, 0], "exact: the chunks were read"
    assert pe.prune(stats, "d > 2.5").to_pylist() == [True, True, False]
