"""ORDER BY as Spark reads it: the ``order_by`` of ``pes.read``.

An item is one of:

- Spark SQL text, ``column [ASC|DESC] [NULLS FIRST|LAST]``: a column or struct field path as
  Spark writes it (``ts``, ``user.age``, ``` `odd name` ```), with Spark's defaults: ascending,
  NULLs first when ascending and last when descending;
- a pyspark ``Column``: a column (``F.col("ts")``, ``df.ts``; ascending, NULLs first) or its
  sort order (``F.col("ts").desc()``, ``F.col("ts").asc_nulls_last()``), or any expression
  Spark sorts by (which sorts, but prunes nothing).

A list sorts by each item in turn. Text becomes ``F.col(name)`` with its direction and NULL
placement spelled out, so that nothing is left to a default: the Column Spark sorts by and the
order the engine prunes with are one reading.

Each item's meaning is Spark's: on a classic session Spark's analyzer resolves the sort
(the column it names, its type, direction and NULL placement); on a Connect client the
Column's expression tree gives the direction, and the column is resolved against the
DataFrame's schema as :mod:`._connect_where` resolves a where's columns (case-insensitively
unless ``spark.sql.caseSensitive``). The column is then mapped onto the statistics by the
where's own rule (:meth:`._catalyst._Translator.column`): its statistics leaf must hold
values ordered as Spark orders the column's (:mod:`._columns`), and a partition column is
usable only where its statistics are exactly its folder values. NaN is above every number in
Spark as in the engine, so it comes first descending and last ascending in both.

An item the statistics cannot order (an expression, a column they do not describe as Spark
reads it) is still sorted by Spark; it only prunes nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from prune_engine.errors import PruneEngineError
from prune_engine.spark._catalyst import _Node, _spark_error, _Translator, _tree
from prune_engine.spark._columns import StatsColumns
from prune_engine.spark._condition import is_column
from prune_engine.spark._session import functions, is_connect, partition_names
from prune_engine.stats.table import StatsTable

_PART = r"(?:`(?:[^`]|``)+`|[^\s`.]+)"
_ITEM = re.compile(rf"^\s*(?P<column>{_PART}(?:\.{_PART})*)(?:\s+(?P<dir>ASC|DESC))?"
                   r"(?:\s+NULLS\s+(?P<nulls>FIRST|LAST))?\s*$", re.IGNORECASE)
_HOW = ("order_by takes Spark SQL's 'column [ASC|DESC] [NULLS FIRST|LAST]', a pyspark Column "
        "(F.col('ts').desc()), or a list of them")


@dataclass
class OrderItem:
    """One sort item: the Spark ``column`` (a sort order) Spark sorts by, its direction and
    NULL placement, ``text`` for messages, and ``node``, the column it sorts by as
    Catalyst nodes (None: an expression)."""

    column: Any
    descending: bool
    nulls_first: bool
    text: str
    node: _Node | None = None

    def engine_order(self, df, stats: StatsTable) -> str | None:
        """The order as ``pe.prune_topk`` reads it (``'"ts" DESC NULLS LAST'``), when the
        statistics order the column as Spark does; else None."""
        if self.node is None:
            return None
        translator = _Translator(None, StatsColumns(stats), partition_names(df), False)
        found = translator.column(self.node)
        if found is None:
            return None
        name = ".".join('"' + p.replace('"', '""') + '"' for p in found[0].path)
        return (f"{name} {'DESC' if self.descending else 'ASC'} "
                f"NULLS {'FIRST' if self.nulls_first else 'LAST'}")


def sort_items(df, order_by) -> list[OrderItem]:
    """``order_by`` (see the module doc) as :class:`OrderItem` s, read with Spark's meaning
    for ``df``."""
    items = list(order_by) if isinstance(order_by, (list, tuple)) else [order_by]
    if not items:
        raise PruneEngineError(f"{_HOW}, not an empty list")
    columns = [_column(df, item) for item in items]
    if is_connect(df):
        return _connect_items(df, columns)
    return _classic_items(df, columns)


def _column(df, item):
    """The Spark Column of one item: text made explicit, a Column as it is."""
    if is_column(item):
        return item
    m = _ITEM.match(item) if isinstance(item, str) else None
    if m is None:
        raise PruneEngineError(f"{_HOW}, not {item!r}")
    column = functions(df).col(m.group("column"))
    descending = (m.group("dir") or "").upper() == "DESC"
    nulls = (m.group("nulls") or "").upper()
    nulls_first = nulls == "FIRST" if nulls else not descending  # Spark's defaults
    if descending:
        return column.desc_nulls_first() if nulls_first else column.desc_nulls_last()
    return column.asc_nulls_first() if nulls_first else column.asc_nulls_last()


def _classic_items(df, columns: list) -> list[OrderItem]:
    """Spark's analyzer reads the sort: each order's column as Catalyst nodes."""
    try:
        plan = df.orderBy(*columns)._jdf.queryExecution().analyzed()
    except Exception as e:  # noqa: BLE001 - Spark's analysis errors, re-raised as ours
        raise _spark_error(e, ", ".join(map(str, columns)), df, "order_by") from None
    while plan.getClass().getSimpleName() != "Sort":
        plan = plan.child()
    orders = plan.order()
    out = []
    for i, column in enumerate(columns):
        order = orders.apply(i)
        node = _tree(json.loads(order.child().toJSON()))
        out.append(OrderItem(column, order.direction().sql() == "DESC",
                             order.nullOrdering().sql() == "NULLS FIRST", order.sql(),
                             node if node.cls in ("AttributeReference", "GetStructField")
                             else None))
    return out


def _connect_items(df, columns: list) -> list[OrderItem]:
    """Spark analyses the sort (its errors raised as prune_engine's, before any job), and
    each Column's sort order is read from its expression tree."""
    from pyspark.sql.connect.column import Column as ConnectColumn

    for column in columns:
        if not isinstance(column, ConnectColumn):
            raise TypeError("a Spark Connect DataFrame takes Connect Columns: build them with "
                            "pyspark.sql.connect.functions "
                            "(prune_engine.spark._session.functions)")
    try:  # a new column: Spark analyses the plan (the sort's own schema may be the client's)
        df.orderBy(*columns).select(functions(df).lit(0).alias("_analysed")).schema
    except Exception as e:  # noqa: BLE001 - Spark's analysis errors, re-raised as ours
        raise _spark_error(e, ", ".join(map(str, columns)), df, "order_by") from None
    return [_connect_item(df, c) for c in columns]


def _connect_item(df, column) -> OrderItem:
    """A Connect Column's sort order, its column resolved against ``df``'s schema."""
    from pyspark.sql.connect import expressions as ce

    from prune_engine.spark._connect_where import _Builder, _from_column, _Ref

    expr = column._expr
    descending, nulls_first = False, True
    if isinstance(expr, ce.SortOrder):
        descending, nulls_first = not expr._ascending, bool(expr._nullsFirst)
        expr = expr._child
    node = None
    ref = _from_column(expr)
    if isinstance(ref, _Ref):
        conf = df.sparkSession.conf
        builder = _Builder(df.schema, str(conf.get("spark.sql.caseSensitive")).lower() == "true",
                           False, [])
        node = builder.column(ref.parts)[0]
    return OrderItem(column, descending, nulls_first, str(column), node)
