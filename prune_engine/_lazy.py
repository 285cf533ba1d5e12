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


class LazyModule:
    """A module imported on first attribute access: a module-level stand-in for one whose
    import is heavy (the numba kernels: importing numba takes about half a second), so that
    code which only sometimes needs it does not pay for it at import.

    >>> json = LazyModule("json")
    >>> json.dumps([1])
    '[1]'
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        # later accesses read the module's attributes straight from this object
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
