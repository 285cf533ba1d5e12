"""The public API's annotations, as a user's type checker sees them.

mypy (the ``dev`` extra) checks two small user scripts against the package: one that uses every
accepted form of each input and must pass ``--strict``, and one whose every line is a mistake
the annotations must catch, with the exact error expected on it. pyarrow ships no annotations
(its types are ``Any`` to mypy unless pyarrow-stubs is installed), so the mistakes chosen are
those our own annotations decide: a predicate or a source of pyarrow's kinds cannot be told
from a wrong value here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import prune_engine as pe

PACKAGE = Path(pe.__file__).resolve().parent

GOOD = '''
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

import prune_engine as pe
from prune_engine.errors import StatsFileNotFoundError


def kept(stats: pe.StatsTable, where: pe.Predicate) -> int:
    mask = pe.prune(stats, where, on_invalid="keep")
    return len(mask)


def main(lake: Path, source: pe.Source) -> None:
    stats = pe.collect_stats(lake, granularity="file", progress=False)
    stats.save(lake / "stats.parquet")
    stats = pe.read_stats(lake / "stats.parquet")
    stats = pe.read_stats(str(lake / "stats.parquet"))
    wheres: list[pe.Predicate] = [
        "x > 5", pe.col("x") > 5, (pe.col("s").like("a%")) & (pe.col("x") < 3),
        pc.field("x") > 5,
    ]
    for where in wheres:
        kept(stats, where)
        pe.explain(stats, where)
    plan: pe.PruningProgram = pe.compile("x > 5", stats.schema)
    plan.evaluate(stats)
    table = pe.scan(lake, where="x > 5", columns=["x", "s.a", [0]], stats=stats)
    print(table.num_rows)
    table, summary = pe.scan([str(lake / "a.parquet"), lake / "b.parquet"],
                             where=pe.col("x") == 1, return_summary=True)
    print(summary.row_groups_read + summary.files_read)
    for batch in pe.scan_batches(source, where=pc.field("x") > 1, batch_size=10):
        print(batch.num_rows)
    frame = pa.table({"x": [1, 2], "part": ["a", "b"]})
    pe.stats_from_arrow(frame, container="part", ngram=None)
    pe.stats_from_arrow([frame, frame], container=["a", "b"], ngram=["x"], gram_size=3)
    try:
        pe.read_stats("nope.parquet")
    except StatsFileNotFoundError as e:
        print(e.path)
    except FileNotFoundError as e:
        print(e.filename)
    except pe.StatsError as e:
        print(e.column, e.containers)
'''

#: each line of the script, and the error mypy must report on it
BAD = [
    ('pe.prune(stats, "x > 5", on_invalid="ignore")',
     'Argument "on_invalid" to "prune" has incompatible type "Literal[\'ignore\']"'),
    ('pe.explain(stats)', 'Missing positional argument "expr" in call to "explain"'),
    ('pe.compile("x > 5")', 'Missing positional argument "schema" in call to "compile"'),
    ('pe.read_stats(3)', 'Argument 1 to "read_stats" has incompatible type "int"'),
    ('pe.scan("lake", on_invalid="skip")', 'No overload variant of "scan" matches'),
    ('pe.scan("lake", columns=5)', 'No overload variant of "scan" matches'),
    ('pe.scan("lake", return_summary=True).num_rows',
     '"tuple[Any, ScanSummary]" has no attribute "num_rows"'),
    ('pe.scan_batches("lake", batch_size="10")',
     'Argument "batch_size" to "scan_batches" has incompatible type "str"'),
    ('pe.stats_from_arrow(data, gram_size="3")',
     'Argument "gram_size" to "stats_from_arrow" has incompatible type "str"'),
    ('pe.prune(stats, pe.col(5) > 1)', 'Argument 1 to "col" has incompatible type "int"'),
]

CONFIG = """\
[mypy]
strict = True
follow_imports = silent
[mypy-pyarrow.*]
ignore_missing_imports = True
"""


def test_the_package_is_marked_typed():
    """PEP 561: ``py.typed`` in the package, shipped in the wheel as package data."""
    assert (PACKAGE / "py.typed").is_file()
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["prune_engine"]


def test_predicate_names_every_accepted_form():
    import pyarrow.compute as pc

    from prune_engine.expr.builder import Builder
    from prune_engine.expr.nodes import Expr

    assert set(pe.Predicate.__args__) == {str, Builder, Expr, pc.Expression}
    assert "Predicate" in pe.__all__ and "Source" in pe.__all__


def test_a_users_script_type_checks(tmp_path):
    """mypy --strict on a user's script: the good one is clean, each bad line is caught."""
    pytest.importorskip("mypy", reason="mypy is in the dev extra")
    (tmp_path / "good.py").write_text(GOOD)
    bad = ["import pyarrow as pa", "import prune_engine as pe", "",
           'stats = pe.read_stats("s.parquet")', 'data = pa.table({"x": [1]})']
    first = len(bad) + 1
    bad += [line for line, _ in BAD]
    (tmp_path / "bad.py").write_text("\n".join(bad) + "\n")
    (tmp_path / "mypy.ini").write_text(CONFIG)
    env = dict(os.environ, MYPYPATH=str(PACKAGE.parent))  # the source checkout (editable)
    env.pop("MYPY_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir",
         str(tmp_path / ".mypy_cache"), "--no-error-summary", "--hide-error-context",
         "--no-pretty", "good.py", "bad.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert not [e for e in errors if not e.startswith("bad.py:")], \
        f"the good script must pass --strict:\n{done.stdout}{done.stderr}"
    found = {}
    for line in errors:
        number, message = re.match(r"bad\.py:(\d+): error: (.*)", line).groups()
        found.setdefault(int(number), []).append(message)
    for offset, (code, expected) in enumerate(BAD):
        messages = found.pop(first + offset, [])
        assert any(expected in m for m in messages), \
            f"mypy should reject {code!r} with {expected!r}; it said {messages}"
    assert not found, f"errors on lines that are fine: {found}"
