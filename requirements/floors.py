"""Print the floors pyproject declares, as pins: ``pyarrow>=15`` becomes ``pyarrow==15``.

``make test-oldest`` installs the project with these as constraints: the library's own
dependencies and its ``spark`` extra at the oldest versions it claims to support (the test
tools float to whatever fits them).

    python requirements/floors.py > floors.txt
"""

from __future__ import annotations

import pathlib
import re
import tomllib

_FLOOR = re.compile(r"^\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:[^;]*?)>=\s*([0-9][0-9A-Za-z.]*)")


def floors(pyproject: pathlib.Path) -> list[str]:
    """``name==floor`` for each requirement of the project and its ``spark`` extra that
    declares a floor."""
    project = tomllib.loads(pyproject.read_text())["project"]
    out = []
    for req in [*project["dependencies"], *project["optional-dependencies"]["spark"]]:
        m = _FLOOR.match(req)
        if m:
            out.append(f"{m.group(1)}=={m.group(2)}")
    return out


if __name__ == "__main__":
    print("\n".join(floors(pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml")))
