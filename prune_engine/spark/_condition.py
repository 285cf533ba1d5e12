"""A join condition given as a Column: its equalities of a fact column and a dimension column.

``pes.join(spark, fact, dim, on=fact["k"] == dim["id"])`` takes Spark's own way of writing
a join condition. Only a conjunction of equalities prunes (each ``fact_col = dim_col`` pair
is tested as ``join`` tests named pairs); any other condition is an error naming what is
taken, since the keys of something else (``<``, ``OR``, an expression) are not a set of
values a fact row must hold.

Each side of an equality is a column of one of the two DataFrames: a column taken from a
DataFrame (``fact["k"]``, ``dim.id``) belongs to that DataFrame; an unqualified name
(``F.col("k")``) to the side that has it, and is an error when both have it. Read from the
join condition Spark's analyzer resolved (classic) or from the Connect client's expression
tree.
"""

from __future__ import annotations

from prune_engine.spark._session import is_connect

_HOW = ("on= takes a Column of equalities of a fact column and a dimension column joined "
        "by & (fact['k'] == dim['id'] & ...)")


def is_column(on) -> bool:
    return type(on).__name__ == "Column"


def condition_pairs(on, fact, dim) -> list[tuple[str, str]]:
    """The ``(fact column, dimension column)`` pairs of a Column condition."""
    if is_connect(fact):
        terms = _connect_terms(on, {**_plan_ids(dim, "dim"), **_plan_ids(fact, "fact")})
    else:
        terms = _classic_terms(on, fact, dim)
    sides = {"fact": fact, "dim": dim}
    pairs = []
    for left, right in terms:
        a, b = _side(left, sides), _side(right, sides)
        if {a[0], b[0]} != {"fact", "dim"}:
            raise ValueError(f"{_HOW}; {a[1]!r} and {b[1]!r} are not one of each")
        pairs.append((a[1], b[1]) if a[0] == "fact" else (b[1], a[1]))
    if not pairs:
        raise ValueError(_HOW)
    return pairs


def _side(ref: tuple[str | None, str], sides: dict) -> tuple[str, str]:
    """``(side, column name)`` of a reference ``(side or None, name)``; None: by name."""
    owner, name = ref
    if owner is not None:
        return owner, name
    having = [s for s, df in sides.items() if name.lower() in (c.lower() for c in df.columns)]
    if len(having) != 1:
        raise ValueError(f"{_HOW}; {name!r} is a column of "
                         f"{'both sides' if having else 'neither side'}: take it from one "
                         "DataFrame (fact['k'])")
    return having[0], name


def _plan_ids(df, side: str) -> dict:
    """The Connect plan ids of ``df`` and the DataFrames it was derived from, one by one."""
    out, plan = {}, df._plan
    while plan is not None:
        out[plan._plan_id] = side
        plan = getattr(plan, "_child", None)
    return out


def _connect_terms(on, owners: dict) -> list[tuple[tuple, tuple]]:
    def ref(e):
        if type(e).__name__ != "ColumnReference":
            raise ValueError(f"{_HOW}; not a column: {e}")
        plan = getattr(e, "_plan_id", None)
        owner = None if plan is None else owners.get(plan, "another DataFrame")
        return owner, e._unparsed_identifier

    def walk(e):
        kind, name = type(e).__name__, getattr(e, "_name", None)
        if kind == "UnresolvedFunction" and name == "and":
            return [t for a in e._args for t in walk(a)]
        if kind == "UnresolvedFunction" and name == "==" and len(e._args) == 2:
            return [(ref(e._args[0]), ref(e._args[1]))]
        raise ValueError(f"{_HOW}, not {e}")

    return walk(on._expr)


def _classic_terms(on, fact, dim) -> list[tuple[tuple, tuple]]:
    """The equalities of the join condition as Spark's analyzer resolved it (every column
    an attribute of the left or the right side)."""
    plan = fact.join(dim, on, "inner")._jdf.queryExecution().analyzed()
    while plan.getClass().getSimpleName() != "Join":
        plan = plan.child()
    owners = {}
    for side, child in (("fact", plan.left()), ("dim", plan.right())):
        output = child.output()
        owners.update({int(output.apply(i).exprId().id()): side for i in range(output.size())})

    def ref(e):
        if e.getClass().getSimpleName() != "AttributeReference":
            raise ValueError(f"{_HOW}; not a column: {e.sql()}")
        return owners.get(int(e.exprId().id()), "another DataFrame"), e.name()

    def walk(e):
        kind = e.getClass().getSimpleName()
        if kind == "And":
            return walk(e.left()) + walk(e.right())
        if kind == "EqualTo":
            return [(ref(e.left()), ref(e.right()))]
        raise ValueError(f"{_HOW}, not {e.sql()}")

    if plan.condition().isEmpty():
        raise ValueError(_HOW)
    return walk(plan.condition().get())
