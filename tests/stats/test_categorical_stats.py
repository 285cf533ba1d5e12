"""A column that pandas wrote from a ``Categorical`` (a Parquet dictionary column, an Arrow
``dictionary<string>`` to pyarrow): its statistics are typed as the values (string), and
``prune`` / ``classify`` / ``explain`` answer on it as on any string column (checked against
DuckDB on the rows)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import prune_engine as pe
from tests.stats.container_oracle import check_sound


@pytest.mark.parametrize("dictionaries", [None, True])
@pytest.mark.parametrize("granularity", ["row_group", "file"])
def test_a_pandas_categorical_column(tmp_path, dictionaries, granularity):
    root = tmp_path / "lake"
    root.mkdir()
    frames = {"a": ["red", "green", "red", "blue"], "b": ["red", "red", "red", None]}
    for name, colors in frames.items():
        pd.DataFrame({"cat": pd.Categorical(colors, categories=["blue", "green", "red"]),
                      "x": range(len(colors))}).to_parquet(root / f"{name}.parquet",
                                                           row_group_size=2)
    assert pa.types.is_dictionary(pq.read_schema(root / "a.parquet").field("cat").type)
    stats = pe.collect_stats(str(root), granularity=granularity, dictionaries=dictionaries,
                             progress=False)
    assert stats.schema.field("min_values").type.field("cat").type == pa.string()
    # a's second row group (red, blue) keeps: 'green' lies between its bounds
    expect = {"cat = 'green'": [True, True, False, False] if granularity == "row_group"
              else [True, False]}
    check_sound(stats, ["cat = 'green'", "cat != 'red'", "cat IN ('blue', 'green')",
                        "cat = 'red'", "cat IS NULL", "cat > 'green'", "cat LIKE 'gr%'"],
                expect_pruned=expect)
    explained = pe.explain(stats, "cat = 'green'")
    assert explained.column("keep").to_pylist() == expect["cat = 'green'"]
    assert explained.column("reason").to_pylist()[-1].startswith("cat = 'green'")
    kinds = pe.classify(stats, "cat = 'red'").to_pylist()
    assert kinds == (["some", "some", "all", "some"] if granularity == "row_group"
                     else ["some", "some"]), "b's NULL row does not match"
