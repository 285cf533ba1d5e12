"""Compile time against predicate size (issue #22: predicates written by programs).

One pytest-benchmark group per (connective, terms), e.g. ``"compile AND 10000"``, holding:

    sql        pe.compile(sql_text, schema): sqlglot's parse + conversion + rewrite + lowering
    builder    chaining ``pe.col("x") != i`` with ``&`` (``|``) term by term, then pe.compile
    tree       pe.compile of a node tree built beforehand (hashing for the plan cache,
               rewrite, lowering)

Every call compiles afresh (the plan cache is cleared first). The terms are comparisons of one
int64 column with distinct literals (``x = i`` ORed, ``x <> i`` ANDed), which the rules fold
into one ``IN`` / ``NOT IN`` set test; the time should grow linearly with their number.

    python -m pytest bench/test_bench_compile_size.py -q --benchmark-group-by=group
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import prune_engine as pe
from prune_engine.compiler import plan as _plan
from prune_engine.expr.nodes import InList

TERMS = (1_000, 2_000, 5_000, 10_000)
_INT = pa.struct([("x", pa.int64())])
SCHEMA = pa.schema([("container", pa.string()), ("num_records", pa.int64()), ("min_values", _INT),
                    ("max_values", _INT), ("null_count", _INT)])


def _sql(op: str, terms: int) -> str:
    cmp = "<>" if op == "AND" else "="
    return f" {op} ".join(f"x {cmp} {i}" for i in range(terms))


def _builder(op: str, terms: int):
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
@pytest.mark.parametrize("op", ["AND", "OR"])
@pytest.mark.parametrize("front", ["sql", "builder", "tree"])
def test_compile_size(benchmark, front, op, terms):
    benchmark.group = f"compile {op} {terms}"
    benchmark.extra_info.update(front=front, op=op, terms=terms)
    if front == "sql":
        text = _sql(op, terms)
        plan = benchmark.pedantic(_compile, args=(text,), rounds=3, iterations=1)
    elif front == "builder":
        plan = benchmark.pedantic(lambda: _compile(_builder(op, terms)), rounds=3, iterations=1)
    else:
        # a fresh tree per round: a node caches its hash once computed
        plan = benchmark.pedantic(_compile, setup=lambda: ((_builder(op, terms).node,), {}),
                                  rounds=3, iterations=1)
    # the equalities (inequalities) of one column fold into one IN (NOT IN) test
    assert isinstance(plan.rewritten, InList) and len(plan.rewritten.values) == terms
