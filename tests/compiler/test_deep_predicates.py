"""Predicates written by programs: long AND/OR chains and deep nesting (issue #22).

Chains of thousands of terms and nests a thousand levels deep must compile, prune soundly
(checked against DuckDB evaluating the same predicate row by row) and never raise
RecursionError. Compile times are in ``bench/test_bench_compile_size.py``, not here.
"""

from __future__ import annotations

import pickle
import random

import duckdb
import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.expr import nodes as n
from prune_engine.expr.sql import parse_sql

DEPTH = 1_000
TERMS = 10_000


def _data(seed: int = 7, containers: int = 12, rows: int = 6) -> pa.Table:
    rnd = random.Random(seed)
    cid, x, y = [], [], []
    for c in range(containers):
        base = rnd.randrange(0, 200)
        for _ in range(rows):
            cid.append(f"c{c}")
            x.append(None if rnd.random() < 0.1 else base + rnd.randrange(0, 20))
            y.append(None if rnd.random() < 0.1 else rnd.randrange(-50, 50))
    return pa.table({"cid": cid, "x": pa.array(x, pa.int64()), "y": pa.array(y, pa.int64())})


def _stats(data: pa.Table) -> pa.Table:
    """Exact min/max/null_count per container, from the rows."""
    cids = sorted(set(data.column("cid").to_pylist()), key=lambda c: int(c[1:]))
    rows = {c: [i for i, v in enumerate(data.column("cid").to_pylist()) if v == c] for c in cids}
    mins, maxs, nulls = [], [], []
    for c in cids:
        lo, hi, nc = {}, {}, {}
        for name in ("x", "y"):
            values = [data.column(name)[i].as_py() for i in rows[c]]
            present = [v for v in values if v is not None]
            lo[name] = min(present) if present else None
            hi[name] = max(present) if present else None
            nc[name] = len(values) - len(present)
        mins.append(lo)
        maxs.append(hi)
        nulls.append(nc)
    t = pa.struct([("x", pa.int64()), ("y", pa.int64())])
    return pa.table({"container": cids, "num_records": pa.array([len(rows[c]) for c in cids], pa.int64()),
                     "min_values": pa.array(mins, t), "max_values": pa.array(maxs, t),
                     "null_count": pa.array(nulls, t)})


DATA = _data()
STATS = _stats(DATA)


def _matching(sql: str) -> set[str]:
    con = duckdb.connect()
    con.register("data", DATA)
    return {r[0] for r in con.execute(f"SELECT DISTINCT cid FROM data WHERE {sql}").fetchall()}


def _kleene(node: n.Expr, row: dict):
    """The row-level value of ``node`` (True / False / None for NULL), on an explicit stack:
    the oracle for trees too deep for DuckDB's parser to read in reasonable time."""
    done: dict[int, object] = {}
    stack = [node]
    while stack:
        e = stack[-1]
        pending = [c for c in e.children() if id(c) not in done]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        kids = [done[id(c)] for c in e.children()]
        if isinstance(e, n.Column):
            v = row[e.path[0]]
        elif isinstance(e, n.Literal):
            v = e.value
        elif isinstance(e, n.Arith):
            v = None if None in kids else {"+": kids[0] + kids[1], "-": kids[0] - kids[1], "*": kids[0] * kids[1]}[e.op]
        elif isinstance(e, n.Compare):
            a, b = kids
            v = None if a is None or b is None else {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b,
                                                     ">": a > b, ">=": a >= b}[e.op]
        elif isinstance(e, n.Not):
            v = None if kids[0] is None else not kids[0]
        elif isinstance(e, n.IsNull):
            v = (kids[0] is None) != e.negated
        elif isinstance(e, n.And):
            v = False if False in kids else (None if None in kids else True)
        elif isinstance(e, n.Or):
            v = True if True in kids else (None if None in kids else False)
        else:  # pragma: no cover - the tests build nothing else
            raise NotImplementedError(type(e).__name__)
        done[id(e)] = v
    return done[id(node)]


def _python_matching(node: n.Expr) -> set[str]:
    rows = DATA.to_pylist()
    return {r["cid"] for r in rows if _kleene(node, r) is True}


def _assert_sound(expr, sql: str | None = None) -> list[bool]:
    """Every container holding a matching row is kept (DuckDB runs ``sql``; without it, a
    row-level evaluation of the tree does); returns the mask."""
    mask = pe.prune(STATS, expr).to_pylist()
    kept = {c for c, k in zip(STATS.column("container").to_pylist(), mask) if k}
    matching = _matching(sql) if sql is not None else _python_matching(pe.compile(expr, STATS.schema).expr)
    assert matching, "the predicate should match some rows, or the test proves little"
    missing = matching - kept
    assert not missing, f"pruned containers holding a matching row: {sorted(missing)}"
    return mask


# --- long chains -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["AND", "OR"])
def test_ten_thousand_terms_from_sql_are_one_flat_node(op):
    sql = f" {op} ".join(f"x <> {i + 100}" if op == "AND" else f"x = {i}" for i in range(TERMS))
    node = parse_sql(sql)
    assert type(node) is (n.And if op == "AND" else n.Or) and len(node.args) == TERMS
    mask = _assert_sound(sql)  # rows checked here: DuckDB 1.5 crashes on 10,000 terms
    if op == "OR":  # x in [0, 9999] written out: keeps exactly the containers with a value
        assert mask == [c is not None for c in STATS.column("min_values").combine_chunks().field("x").to_pylist()]


@pytest.mark.parametrize("op", ["&", "|"])
def test_ten_thousand_builder_terms_chain_flat_and_prune_like_sql(op):
    x = pe.col("x")
    b = (x != 100) if op == "&" else (x == 0)
    for i in range(1, TERMS):
        b = (b & (x != i + 100)) if op == "&" else (b | (x == i))
    node = b.node
    assert type(node) is (n.And if op == "&" else n.Or) and len(node.args) == TERMS
    sql = str(node)
    assert _assert_sound(b) == pe.prune(STATS, sql).to_pylist()


def test_builder_chain_keeps_operand_order_and_sharing():
    x = pe.col("x")
    base = (x > 1) & (x > 2)
    left, right = base & (x > 3), base & (x > 4)  # both extend one shared chain
    assert str(left) == "x > 1 AND x > 2 AND x > 3"
    assert str(right) == "x > 1 AND x > 2 AND x > 4"
    nested = (x > 1) & ((x > 2) & ((x > 3) & (x > 4)))
    assert str(nested) == "x > 1 AND x > 2 AND x > 3 AND x > 4"
    assert str((x > 1) | ((x > 2) & (x > 3))) == "x > 1 OR (x > 2 AND x > 3)"


def test_builder_comparisons_with_constants_are_built_with_their_chain():
    """``x > 5`` with a plain constant records its operands and builds its node when asked
    (with its chain): the same node as built at once, once per comparison (shared)."""
    x = pe.col("x")
    for value in (5, -2.5, float("nan"), "a'b", True, 10**30):
        for lazy, op in ((x == value, "="), (x != value, "!="), (x < value, "<"), (x <= value, "<="),
                         (x > value, ">"), (x >= value, ">=")):
            eager = n.Compare(op, n.Column("x"), n.Literal(value))
            assert lazy.node == eager and str(lazy) == str(eager) and lazy.node is lazy.node
    assert (5 < x).node == n.Compare(">", n.Column("x"), n.Literal(5)), "reflected: x > 5"
    assert str(x == None) == "x = NULL" and str(x > pa.scalar(3, pa.int8())) == "x > 3"  # noqa: E711
    term = x > 1
    left, right = term & (x < 9), (x < 0) | term
    assert left.node.args[0] is right.node.args[1] is term.node, "one node per comparison"
    assert str(~(x > 1)) == "x <= 1" and str((x > 1) == True) == "(x > 1) = TRUE"  # noqa: E712


def test_nodes_flatten_same_kind_parts():
    a, b, c = (n.Compare(">", n.Column("x"), n.Literal(i)) for i in range(3))
    assert n.And((n.And((a, b)), c)).args == (a, b, c)
    assert n.Or((a, n.Or((b, c)))).args == (a, b, c)
    assert n.And((n.Or((a, b)), c)).args == (n.Or((a, b)), c), "an OR inside an AND stays"


def test_pyarrow_reduce_chain_is_flat():
    import functools
    import operator

    import pyarrow.compute as pc

    expr = functools.reduce(operator.and_, [pc.field("x") != i for i in range(2_000)])
    node = pe.compile(expr, STATS.schema).expr
    assert type(node) is n.And and len(node.args) == 2_000


# --- deep nesting ------------------------------------------------------------------------------

def _alternating_sql(depth: int) -> str:
    sql = "x > 150"
    for i in range(1, depth):
        sql = f"(x <> {i} AND {sql})" if i % 2 else f"(y = {i % 50 - 25} OR {sql})"
    return sql


def test_a_thousand_parentheses_from_sql():
    sql = "(" * DEPTH + "x > 150" + ")" * DEPTH
    assert parse_sql(sql) == parse_sql("x > 150")
    _assert_sound(sql, "x > 150")


def test_a_thousand_alternating_and_or_levels_from_sql():
    sql = _alternating_sql(DEPTH)
    node = parse_sql(sql)
    assert node == parse_sql(_alternating_sql(DEPTH))
    _assert_sound(sql)
    table = pe.explain(STATS, sql)
    assert table.num_rows == STATS.num_rows


def test_a_thousand_nested_not_and_parentheses_from_sql():
    sql = "x > 100"
    for i in range(DEPTH):
        sql = f"NOT (y < {i % 40} OR {sql})" if i % 2 else f"(x <> {i} AND {sql})"
    _assert_sound(sql)


def test_deep_arithmetic_in_parentheses_from_sql():
    sql = "x"
    for _ in range(300):
        sql = f"({sql} + 1)"
    _assert_sound(f"{sql} > 400", f"{sql} > 400")


def test_a_thousand_nested_builder_levels():
    x, y = pe.col("x"), pe.col("y")
    b = x > 150
    sql = "x > 150"
    for i in range(DEPTH):
        if i % 3 == 0:
            b, sql = (x != i) & (b | (y == i)), f"x <> {i} AND ({sql} OR y = {i})"
        elif i % 3 == 1:
            b, sql = ~(b & (y < i)), f"NOT ({sql} AND y < {i})"
        else:
            b, sql = (y > -i) | ~b, f"y > {-i} OR NOT ({sql})"
    assert _assert_sound(b) == pe.prune(STATS, sql).to_pylist()


def test_deep_trees_hash_compare_render_and_pickle():
    a, b = parse_sql(_alternating_sql(DEPTH)), parse_sql(_alternating_sql(DEPTH))
    assert a == b and hash(a) == hash(b) and str(a) == str(b)
    assert a != parse_sql(_alternating_sql(DEPTH - 1))
    assert len(list(a.walk())) == 3 * DEPTH + (DEPTH - 1)  # a comparison per level, and its AND/OR
    shallow = parse_sql("x > 1 AND (y < 2 OR x IS NULL)")
    hash(shallow)  # cached beside the node: its fields and pickles stay as they were
    assert set(vars(shallow)) == {"args"}
    again = pickle.loads(pickle.dumps(shallow))
    assert again == shallow and hash(again) == hash(shallow)


def test_no_input_raises_recursion_error():
    cases = ["NOT " * 3_000 + "x > 1", "(" * 5_000 + "x >" + ")" * 5_000, "abs(" * 2_000 + "x" + ")" * 2_000]
    for sql in cases:
        try:
            pe.prune(STATS, sql)
        except RecursionError:  # pragma: no cover - the failure this test is about
            pytest.fail(f"RecursionError for {sql[:30]}...")
        except pe.PruneEngineError as e:
            assert "\n" not in str(e).splitlines()[0]
    deep_value = n.Column("x")
    for _ in range(5_000):
        deep_value = n.Arith("+", deep_value, n.Literal(1))
    with pytest.raises(pe.PruneEngineError, match="nests too deeply"):
        pe.prune(STATS, n.Compare(">", deep_value, n.Literal(1)))
