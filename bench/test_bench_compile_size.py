"""Compile time against predicate size (issue #22: predicates written by programs).

One pytest-benchmark group per (connective, terms), e.g. ``"compile AND 10000"``, holding:

    sql        pe.compile(sql_text, schema): sqlglot's parse + conversion + rewrite + lowering
    builder    chaining ``pe.col("x") != i`` with ``&`` (``|``) term by term, then pe.compile
    tree       pe.compile of a node tree built beforehand (hashing for the plan cache,
               rewrite, lowering)

Every call compiles afresh (the plan cache is cleared first). Two kinds of terms (``columns``):

    one        comparisons of one int64 column with distinct literals (``x = i`` ORed,
               ``x <> i`` ANDed), which the rules fold into one ``IN`` / ``NOT IN`` set test
    spread     range comparisons spread over 100 int64 columns (``c7 > 7`` ANDed, ``c7 < 7``
               ORed), which nothing folds: every term is a test of its own

The time should grow linearly with the number of terms (issue #22: 10,000 terms in 50 ms).

    python -m pytest bench/test_bench_compile_size.py -q --benchmark-group-by=group
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.compiler import plan as _plan
from prune_engine.expr.nodes import And, InList, Or

TERMS = (1_000, 2_000, 5_000, 10_000)
SPREAD = 100
_INT = pa.struct([("x", pa.int64())] + [(f"c{k}", pa.int64()) for k in range(SPREAD)])
SCHEMA = pa.schema([("container", pa.string()), ("num_records", pa.int64()), ("min_values", _INT),
                    ("max_values", _INT), ("null_count", _INT)])


def _sql(op: str, terms: int, columns: str = "one") -> str:
    if columns == "spread":
        cmp = ">" if op == "AND" else "<"
        return f" {op} ".join(f"c{i % SPREAD} {cmp} {i}" for i in range(terms))
    cmp = "<>" if op == "AND" else "="
    return f" {op} ".join(f"x {cmp} {i}" for i in range(terms))


def _builder(op: str, terms: int, columns: str = "one"):
    if columns == "spread":
        cs = [pe.col(f"c{k}") for k in range(SPREAD)]
        if op == "AND":
            b = cs[0] > 0
            for i in range(1, terms):
                b = b & (cs[i % SPREAD] > i)
        else:
            b = cs[0] < 0
            for i in range(1, terms):
                b = b | (cs[i % SPREAD] < i)
        return b
    x = pe.col("x")
    if op == "AND":
        b = x != 0
        for i in range(1, terms):
            b = b & (x != i)
    else:
        b = x == 0
        for i in range(1, terms):
            b = b | (x == i)
    return b


def _compile(expr):
    _plan._compile_cached.cache_clear()
    return pe.compile(expr, SCHEMA)


@pytest.mark.parametrize("terms", TERMS)
@pytest.mark.parametrize("columns", ["one", "spread"])
@pytest.mark.parametrize("op", ["AND", "OR"])
@pytest.mark.parametrize("front", ["sql", "builder", "tree"])
def test_compile_size(benchmark, front, op, columns, terms):
    benchmark.group = f"compile {op} {terms}" + (f" over {SPREAD} columns" if columns == "spread" else "")
    benchmark.extra_info.update(front=front, op=op, terms=terms, columns=columns)
    if front == "sql":
        text = _sql(op, terms, columns)
        plan = benchmark.pedantic(_compile, args=(text,), rounds=3, iterations=1)
    elif front == "builder":
        plan = benchmark.pedantic(lambda: _compile(_builder(op, terms, columns)), rounds=3, iterations=1)
    else:
        # a fresh tree per round: a node caches its hash once computed
        plan = benchmark.pedantic(_compile, setup=lambda: ((_builder(op, terms, columns).node,), {}),
                                  rounds=3, iterations=1)
    if columns == "one":
        # the equalities (inequalities) of one column fold into one IN (NOT IN) test
        assert isinstance(plan.rewritten, InList) and len(plan.rewritten.values) == terms
    else:
        assert type(plan.rewritten) is (And if op == "AND" else Or) and len(plan.rewritten.args) == terms
