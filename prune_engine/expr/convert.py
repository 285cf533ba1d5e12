"""One entry point from every kind of user predicate to the node tree the compiler reads.

The SQL front end (:mod:`prune_engine.expr.sql`, which loads sqlglot) is imported only when SQL
text arrives, so that builder expressions, nodes and pyarrow expressions never load a SQL parser.

>>> import prune_engine as pe
>>> str(to_expr("x > 5")), str(to_expr(pe.col("x") > 5))
('x > 5', 'x > 5')
>>> import pyarrow.compute as pc
>>> str(to_expr(pc.field("x") < 5))
'x < 5'
"""

from __future__ import annotations

from typing import Union

import pyarrow.compute as pc

from prune_engine.expr import nodes as n
from prune_engine.expr.builder import Builder
from prune_engine.expr.from_arrow import from_pyarrow

__all__ = ["to_expr", "ExprLike"]

#: what the public API accepts as a predicate
ExprLike = Union[str, Builder, n.Expr, pc.Expression]


def to_expr(expr: ExprLike) -> n.Expr:
    """The node tree of ``expr``: SQL WHERE text, a builder expression (``pe.col("x") > 5``), a
    node, or a ``pyarrow.compute.Expression``. Anything else raises ``TypeError``."""
    if isinstance(expr, n.Expr):
        return expr
    if isinstance(expr, Builder):
        return expr.node
    if isinstance(expr, str):
        # imported here, not at the top: it loads sqlglot, which only SQL text needs
        from prune_engine.expr.sql import parse_sql

        return parse_sql(expr)
    if isinstance(expr, pc.Expression):
        return from_pyarrow(expr)
    raise TypeError(
        "a predicate must be SQL text (str), a builder expression (pe.col(...) > 5), a "
        f"prune_engine expression node or a pyarrow.compute.Expression; got {type(expr).__name__}"
    )
