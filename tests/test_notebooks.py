"""Every notebook in ``notebooks/`` runs from top to bottom without an error (CI executes them).

Each notebook runs in a fresh ``python3`` kernel with ``notebooks/`` as its working directory.
Notebooks are pictures: each must display at least one image.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
#: a notebook must finish well inside CI's budget
CELL_TIMEOUT_S = 600


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ should hold at least the benchmark notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "every code cell should have run"
    outputs = [o for c in code for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}" if errors else ""
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} should show at least one picture"
