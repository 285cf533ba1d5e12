"""Entry points that load on first use, so that importing a package stays fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_loader(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``name`` is imported from the module
    ``where[name]`` on first use, and kept on the package.

    >>> lazy_loader("prune_engine", {"prune": "prune_engine.api"})("prune").__name__
    'prune'
    """
    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
