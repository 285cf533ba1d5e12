"""The one NOT push-down (``compiler.rules.push_not``), as the pruning and the row filter use it.

Seeded random AND / OR / NOT / IS [NOT] TRUE/FALSE trees over comparisons, IN lists (literal
and not), LIKE, IS [NOT] NULL, IS [NOT] DISTINCT FROM, BETWEEN, bare boolean columns, boolean
and NULL literals and (in the nested sweep) list and map element predicates, on a table with
NULLs at every level, NaN, -0.0 and empty lists. DuckDB's WHERE on the same rows is the oracle:

- the row filter (``rows.negation_normal_form``) keeps exactly DuckDB's rows;
- the pruning's negation normal form (``rules.push_not``), evaluated row by row, keeps at least
  DuckDB's rows, and exactly those where it widens nothing (no IS TRUE/FALSE/DISTINCT);
- the pruning (one container per row) never drops a row DuckDB keeps, for ``pe.prune`` on the
  predicate and for the scan's pruning of the row filter's form;
- both forms are in negation normal form: a NOT stands only above a function.

Element predicates are written for DuckDB in the documented existential form, with NOT pushed
down first (``prune_engine.scanning.rows``): the negation of ``orders.qty > 3`` is "some
element has ``qty <= 3``", also inside ``IS [NOT] TRUE/FALSE``.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import prune_engine as pe
from prune_engine.compiler import rules
from prune_engine.expr import nodes as n
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.pruning import keep_mask
from prune_engine.scanning.rows import RowFilter, negation_normal_form
from tests.oracle.duck import connect, load_table
from tests.scanning.nested import (
    COMPLEMENT, FLOATS, OPS, _exists, _float_sql, _row_atom, nested_table,
)

ROWS = 90


@pytest.fixture(scope="module")
def data():
    table = nested_table(random.Random(19), ROWS)
    flags = [None if i % 5 == 0 else (i * 7) % 3 == 0 for i in range(ROWS)]
    table = table.append_column("flag", pa.array(flags, pa.bool_()))
    table = table.append_column("cid", pc.cast(table.column("id"), pa.string()))
    stats = pe.stats_from_arrow(table, container="cid")
    con = connect()
    load_table(con, "t", table)
    yield table, stats, con
    con.close()


# ---------------------------------------------------------------------------- predicates
# each generator gives (prune_engine SQL, DuckDB SQL, DuckDB SQL of its pushed-down negation)


def _row(text: str, duck: str | None = None) -> tuple[str, str, str]:
    duck = text if duck is None else duck
    return text, duck, f"NOT ({duck})"


def _element(pe_text: str, lst: str, var: str, body: str, negated_body: str):
    return pe_text, _exists(lst, var, body), _exists(lst, var, negated_body)


def atom(rnd: random.Random, elements: bool, contains: bool = True) -> tuple[str, str, str]:
    kind = rnd.randrange((17 if contains else 16) if elements else 13)
    op = rnd.choice(OPS)
    if kind == 6:  # leaves only: pe.prune reads no struct or list as a whole
        return _row(f"{rnd.choice(['x', 's.a', 's.b', 'flag'])} IS {rnd.choice(['', 'NOT '])}NULL")
    if kind < 9:
        return _row(_row_atom(rnd, kind, op))
    if kind == 9:
        return _row(rnd.choice(["flag", "TRUE", "FALSE", "NULL"]))
    if kind == 10:  # IN with items that are not all literals: Func("in")
        items = rnd.sample(["id", "s.a", "3", "NULL", "-1"], rnd.randint(1, 3))
        return _row(f"s.a {rnd.choice(['', 'NOT '])}IN (id, {', '.join(items)})")
    if kind == 11:
        other = rnd.choice(["id", "s.a", "3", "NULL"])
        return _row(f"s.a IS {rnd.choice(['', 'NOT '])}DISTINCT FROM {other}")
    if kind == 12:
        lo = _float_sql(rnd.choice(FLOATS))
        return _row(f"x {rnd.choice(['', 'NOT '])}BETWEEN {lo} AND 3.0")
    cop = COMPLEMENT[op]
    if kind == 13:
        v = rnd.randint(-3, 12)
        return _element(f"orders.qty {op} {v}", "orders", "o", f"o.qty {op} {v}",
                        f"o.qty {cop} {v}")
    if kind == 14:
        return _element("orders.qty IN (id, 3)", "orders", "o", "o.qty IN (id, 3)",
                        "o.qty NOT IN (id, 3)")
    if kind == 15:
        v = rnd.randint(0, 9)
        return _element(f"attrs.value {op} {v}", "map_values(attrs)", "v", f"v {op} {v}",
                        f"v {cop} {v}")
    word = rnd.choice(["'a'", "'b'", "''"])
    return f"array_contains(tags, {word})", f"list_contains(tags, {word})", \
        f"NOT list_contains(tags, {word})"


def tree(rnd: random.Random, depth: int, elements: bool, contains: bool = True
         ) -> tuple[str, str, str]:
    """``contains``: array_contains may occur (the scan's pruning fails on it inside IS TRUE:
    ``scanning.pruning.rewrite`` looks its list up as a plain column)."""
    if depth == 0 or rnd.random() < 0.3:
        return atom(rnd, elements, contains)
    k = rnd.randrange(4)
    if k == 0:  # NOT
        p, d, neg = tree(rnd, depth - 1, elements, contains)
        return f"NOT ({p})", neg, d
    if k == 1:  # IS [NOT] TRUE / FALSE: never NULL, so its negation flips it
        p, d, _ = tree(rnd, depth - 1, elements, contains=False)
        value, negated = rnd.choice(["TRUE", "FALSE"]), rnd.random() < 0.5
        flip = "" if negated else "NOT "
        keyword = "NOT " if negated else ""
        return f"({p}) IS {keyword}{value}", f"({d}) IS {keyword}{value}", f"({d}) IS {flip}{value}"
    (lp, ld, ln), (rp, rd, rn) = (tree(rnd, depth - 1, elements, contains),
                                  tree(rnd, depth - 1, elements, contains))
    if k == 2:
        return f"({lp}) AND ({rp})", f"({ld}) AND ({rd})", f"({ln}) OR ({rn})"
    return f"({lp}) OR ({rp})", f"({ld}) OR ({rd})", f"({ln}) AND ({rn})"


# ---------------------------------------------------------------------------- checks


def _nnf(e: n.Expr) -> bool:
    """No NOT above anything but a function, at any depth (IS TRUE's argument included)."""
    return all(isinstance(node.arg, n.Func) for node in e.walk() if isinstance(node, n.Not))


def _widens(e: n.Expr) -> bool:
    return any(isinstance(node, (n.IsBool, n.IsDistinct)) for node in e.walk())


def _ids(table: pa.Table, mask) -> set[int]:
    return set(table.filter(mask).column("id").to_pylist())


def _kept(stats, mask) -> set[int]:
    """The ids of the kept containers (one per row, named by its id)."""
    return {int(c) for c, k in zip(stats.column("container").to_pylist(), mask.to_pylist()) if k}


def _duck(con, where: str) -> set[int]:
    return {r[0] for r in con.execute(f"SELECT id FROM t WHERE {where}").fetchall()}


@pytest.mark.parametrize("seed", range(4))
def test_row_level_not_both_paths_against_duckdb(data, seed):
    table, stats, con = data
    rnd = random.Random(seed)
    for _ in range(60):
        text, duck, duck_neg = tree(rnd, 3, elements=False)
        e = to_expr(text)
        expected = _duck(con, duck)
        assert _duck(con, f"NOT ({duck})") == _duck(con, duck_neg), text  # the oracle's own NOT

        rows_form = negation_normal_form(e)
        assert _nnf(rows_form), rows_form
        assert _ids(table, RowFilter(e, table.schema).mask(table)) == expected, text

        pruning_form = rules.push_not(e)
        assert _nnf(pruning_form), pruning_form
        widened = _ids(table, RowFilter(pruning_form, table.schema).mask(table))
        assert widened >= expected, f"{text}\n  push_not: {pruning_form}"
        if not _widens(e):
            assert widened == expected, f"{text}\n  push_not: {pruning_form}"

        kept = _kept(stats, pe.prune(stats, e))
        assert kept >= expected, f"pe.prune dropped {sorted(expected - kept)} for {text}"


@pytest.mark.parametrize("seed", range(4))
def test_element_not_against_duckdb(data, seed):
    table, stats, con = data
    rnd = random.Random(1000 + seed)
    for _ in range(60):
        text, duck, duck_neg = tree(rnd, 3, elements=True)
        rows = RowFilter(to_expr(text), table.schema)
        assert _nnf(rows.expr), rows.expr
        expected = _duck(con, duck)
        assert _ids(table, rows.mask(table)) == expected, f"{text}\n  DuckDB: {duck}"
        assert _ids(table, RowFilter(to_expr(f"NOT ({text})"), table.schema).mask(table)) == \
            _duck(con, duck_neg), f"NOT ({text})\n  DuckDB: {duck_neg}"
        kept = _kept(stats, keep_mask(stats, rows))
        assert kept >= expected, f"the scan's pruning dropped {sorted(expected - kept)} for {text}"


@pytest.mark.parametrize("text, rows_form, pruning_form", [
    ("NOT (x < 1 AND flag)", "x >= 1 OR flag = FALSE", "x >= 1 OR flag = FALSE"),
    ("flag", "flag", "flag = TRUE"),
    ("NOT NOT flag", "flag", "flag = TRUE"),
    ("NOT (TRUE OR NULL)", "FALSE AND NULL", "FALSE AND NULL"),
    ("NOT (s.a IN (id, 3))", "__scan_not_in(s.a, id, 3)", "NOT in(s.a, id, 3)"),
    ("NOT my_udf(x)", "NOT my_udf(x)", "NOT my_udf(x)"),
    ("NOT (flag IS TRUE)", "flag IS NOT TRUE", "flag = FALSE OR flag IS NULL"),
    ("(NOT (x > 1)) IS TRUE", "(x <= 1) IS TRUE", "x <= 1"),
    ("NOT ((NOT flag) IS FALSE)", "(flag = FALSE) IS NOT FALSE", "flag = FALSE OR flag IS NULL"),
    ("NOT (x IS DISTINCT FROM id)", "x IS NOT DISTINCT FROM id",
     "x = id OR (x IS NULL AND id IS NULL)"),
    ("NOT (x IS NULL OR s.b NOT LIKE 'a%')", "x IS NOT NULL AND s.b LIKE 'a%'",
     "x IS NOT NULL AND s.b LIKE 'a%'"),
])
def test_the_two_leaf_rules(text, rows_form, pruning_form):
    """The shared walk, and where the two leaf rules part: the row filter stays exact (IS
    TRUE/FALSE and IS DISTINCT flip a flag, NOTs inside IS TRUE are pushed down, ``x IN (y)``
    negates to its marker), the pruning expands and widens."""
    e = to_expr(text)
    assert str(negation_normal_form(e)) == rows_form
    assert str(rules.push_not(e)) == pruning_form
