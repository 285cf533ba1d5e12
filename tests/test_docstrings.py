"""``help()`` of every public function names its inputs and shows an example.

Each function in ``prune_engine.__all__`` and ``prune_engine.spark.__all__``: its docstring
has an example (a doctest ``>>>`` or an ``Example::`` block) and mentions every parameter by
name. The doctests themselves run with ``pytest --doctest-modules prune_engine``.
"""

from __future__ import annotations

import inspect
import re

import pytest

import prune_engine as pe
import prune_engine.spark as pes

def _public_functions() -> list:
    return list(_each_public_function())


def _each_public_function():
    for module in (pe, pes):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                yield pytest.param(obj, id=f"{module.__name__}.{name}")


def _missing(function) -> tuple[bool, list[str]]:
    doc = inspect.getdoc(function) or ""
    example = ">>>" in doc or "Example::" in doc
    names = [p.name for p in inspect.signature(function).parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return example, [n for n in names if not re.search(rf"\b{re.escape(n)}\b", doc)]


@pytest.mark.parametrize("function", _public_functions())
def test_docstring_has_an_example_and_names_every_parameter(function):
    example, missing = _missing(function)
    assert example, f"{function.__qualname__}: no example (>>> or Example::) in its docstring"
    assert not missing, f"{function.__qualname__}: the docstring does not mention {missing}"


def test_help_of_prune_lists_the_predicate_kinds_and_an_example():
    text = pe.prune.__doc__
    for kind in ("SQL WHERE text", "builder expression", "pyarrow.compute.Expression"):
        assert kind in text, f"help(pe.prune) should name {kind!r} as an accepted predicate"
    assert ">>> pe.prune(stats, \"x > 5\")" in text
    assert "Predicate" in str(inspect.signature(pe.prune).parameters["expr"].annotation)


def test_the_checker_finds_what_is_missing():
    def undocumented(a, b):
        """Uses ``a`` only."""

    assert _missing(undocumented) == (False, ["b"])
