"""Print the floors pyproject declares, as pins: ``pyarrow>=18`` becomes ``pyarrow==18``.

``make test-oldest`` installs the project with these as constraints: the library's own
dependencies and its ``spark``, ``delta`` and ``iceberg`` extras at the oldest versions it
claims to support, and DuckDB
(the tests' row-level oracle) at its floor, so that DuckDB 1.x and 2.x both stay tested; the
other test tools float to whatever fits them.

    python requirements/floors.py > floors.txt
"""

from __future__ import annotations

import pathlib
import re
import tomllib

_FLOOR = re.compile(r"^\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:[^;]*?)>=\s*([0-9][0-9A-Za-z.]*)")


def floors(pyproject: pathlib.Path) -> list[str]:
    """``name==floor`` for each requirement of the project, its ``spark``, ``delta`` and
    ``iceberg`` extras, and the ``duckdb`` of its ``dev`` extra, that declares a floor."""
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project["optional-dependencies"]
    oracle = [r for r in extras["dev"] if r.startswith("duckdb")]
    out = []
    library = [r for extra in ("spark", "delta", "iceberg") for r in extras[extra]]
    for req in [*project["dependencies"], *library, *oracle]:
        m = _FLOOR.match(req)
        if m:
            out.append(f"{m.group(1)}=={m.group(2)}")
    return out


if __name__ == "__main__":
    print("\n".join(floors(pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml")))
