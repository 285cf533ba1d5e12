"""The notebooks are committed executed, with their pictures, and still run (CI executes them).

``make notebooks`` (``notebooks/execute.py``) runs every notebook in place in a fresh ``python3``
kernel with ``notebooks/`` as its working directory and records the hash of its code cells in
``metadata.prune_engine``. Of the committed notebooks, these tests check without running them
that every code cell ran, in order, without an error; that the recorded hash is the hash of
the code cells as they are now (a notebook edited since ``make notebooks`` fails); that each
shows at least one picture (a PNG output), the notebooks the README names included; and that
no output names a machine (absolute paths of temporary or home directories).

Then each notebook runs again from top to bottom, and its outputs must have the committed
shape: per code cell the same kinds of outputs (stdout, display data of the same types: a
picture where the committed notebook has one). Not byte for byte: numbers may move with the
versions of the libraries; stderr (warnings) is left out of the comparison.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load_executor():
    spec = importlib.util.spec_from_file_location("notebooks_execute",
                                                  ROOT / "notebooks" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


execute = _load_executor()


def _param(path: Path):
    marks = [pytest.mark.spark] if "pyspark" in path.read_text(encoding="utf-8") else []
    return pytest.param(path, id=path.name, marks=marks)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def has_picture(nb) -> bool:
    return any("image/png" in o.get("data", {}) for c in code_cells(nb) for o in c.outputs)


def shape(nb) -> list[list[tuple]]:
    """Per code cell, its outputs' kinds: consecutive stdout outputs as one, stderr left out."""
    cells = []
    for cell in code_cells(nb):
        kinds: list[tuple] = []
        for out in cell.outputs:
            if out.output_type == "stream":
                kind = ("stream", out.name)
                if out.name == "stderr" or (kinds and kinds[-1] == kind):
                    continue
            else:
                kind = (out.output_type, *sorted(out.get("data", {})))
            kinds.append(kind)
        cells.append(kinds)
    return cells


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ should hold at least the benchmark notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_notebook_is_executed_and_current(path):
    nb = nbformat.read(path, as_version=4)
    again = "run `make notebooks` and commit the notebook with its outputs"
    recorded = nb.metadata.get(execute.METADATA_KEY, {}).get("code_sha256")
    assert recorded == execute.code_hash(nb), f"{path.name}: code changed since it ran: {again}"
    code = code_cells(nb)
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), \
        f"{path.name}: not executed top to bottom in one kernel: {again}"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}" if errors else ""
    assert has_picture(nb), f"{path.name} should show at least one picture"
    assert not any("execution" in c.metadata for c in code), f"{path.name}: timings recorded"
    named = execute.machine_names(nb)
    assert not named, f"{path.name}: the outputs name a machine: {sorted(set(named))}"


def test_notebooks_the_readme_names_show_pictures():
    named = set(re.findall(r"notebooks/[\w.-]+\.ipynb", (ROOT / "README.md").read_text("utf-8")))
    assert named, "the README names its notebooks"
    for name in sorted(named):
        path = ROOT / name
        assert path.is_file(), f"the README names {name}, which does not exist"
        assert has_picture(nbformat.read(path, as_version=4)), f"{name} shows no picture"


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_notebook_runs_and_has_the_committed_shape(path):
    committed = nbformat.read(path, as_version=4)
    nb = execute.execute(path, write=False)
    code = code_cells(nb)
    assert all(c.execution_count is not None for c in code), "every code cell should have run"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}" if errors else ""
    assert has_picture(nb), f"{path.name} should show at least one picture"
    assert shape(nb) == shape(committed), (
        f"{path.name}: the outputs differ in shape from the committed ones: run `make notebooks`")
