"""to_expr: every accepted kind of predicate reaches the same node tree; anything else is a
TypeError that names the accepted kinds."""

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import prune_engine as pe
from prune_engine.errors import SqlParseError
from prune_engine.expr.convert import to_expr
from prune_engine.expr.nodes import Column, Compare, Literal


def test_every_kind_gives_the_tree():
    expected = Compare("<", Column(("x",)), Literal(5))
    assert to_expr("x < 5") == expected
    assert to_expr(pe.col("x") < 5) == expected
    assert to_expr(expected) is expected
    assert to_expr(pc.field("x") < 5) == Compare("<", Column(("x",)), Literal(5, pa.int64()))


def test_nested_columns_agree_across_front_ends():
    want = Column(("st", "a"))
    assert to_expr("st.a IS NULL").arg == want
    assert to_expr(pe.col("st.a").is_null()).arg == want
    assert to_expr(pc.field("st", "a").is_null()).arg == want


def test_sql_errors_pass_through():
    with pytest.raises(SqlParseError) as info:
        to_expr("x <")
    assert (info.value.line, info.value.col) == (1, 3)


@pytest.mark.parametrize("bad", [5, None, 1.5, b"x < 5", [pc.field("x") < 5], {"x": 5}])
def test_other_inputs_are_type_errors(bad):
    with pytest.raises(TypeError, match=r"SQL text .* builder .* pyarrow\.compute\.Expression") as info:
        to_expr(bad)
    assert type(bad).__name__ in str(info.value)
