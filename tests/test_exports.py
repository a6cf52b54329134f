"""Every package says what it offers: ``__all__`` in its ``__init__.py``, each name importable from
the package, and each exported function and class typed (as httpx checks its own exports).

A face is made of explicit imports, so that ``from tapir.dsl import parse`` has a type and a
misspelt name fails at once, for mypy as for Python.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "tapir"

#: Packages whose faces are not (yet) checked: ``sim`` imports nothing of Tapir and is the
#: simulator's own; ``run`` is being built.
SKIPPED = {"tapir.sim", "tapir.run"}


def _packages() -> list[str]:
    names = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        rel = init.parent.relative_to(PACKAGE.parent)
        name = ".".join(rel.parts)
        if not any(name == s or name.startswith(s + ".") for s in SKIPPED):
            names.append(name)
    return names


PACKAGES = _packages()


def _exports(name: str) -> list[tuple[str, Any]]:
    module = importlib.import_module(name)
    return [(n, getattr(module, n)) for n in module.__all__]


def _untyped(func: Callable[..., Any], *, bound: bool) -> list[str]:
    """The parameters (and ``return``) of ``func`` without an annotation; ``bound``: skip the first."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # builtins without a signature
        return []
    params = list(sig.parameters.values())[1 if bound else 0:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def _methods(cls: type) -> list[tuple[str, Callable[..., Any], bool]]:
    """The public methods ``cls`` defines itself (and ``__init__``): (name, function, bound)."""
    found = []
    for attr, value in vars(cls).items():
        if attr.startswith("_") and attr != "__init__":
            continue
        if isinstance(value, staticmethod):
            found.append((attr, value.__func__, False))
        elif isinstance(value, classmethod):
            found.append((attr, value.__func__, True))
        elif isinstance(value, property) and value.fget is not None:
            found.append((attr, value.fget, True))
        elif inspect.isfunction(value):
            found.append((attr, value, True))
    return [(n, f, b) for n, f, b in found if getattr(f, "__module__", "").startswith("tapir")]


def test_packages_are_found() -> None:
    assert {"tapir", "tapir.core", "tapir.dsl", "tapir.docgen", "tapir.cli"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_declared(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
    assert len(module.__all__) == len(set(module.__all__)), f"{name}.__all__ has duplicates"
    assert "__getattr__" not in vars(module), f"{name} resolves names lazily: import them explicitly"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_name_is_importable(name: str) -> None:
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if n not in vars(module)]
    assert not missing, f"{name}.__all__ names what the package does not define: {missing}"
    for export in module.__all__:
        exec(f"from {name} import {export}", {})


@pytest.mark.parametrize("name", PACKAGES)
def test_exports_are_typed(name: str) -> None:
    untyped = []
    for export, value in _exports(name):
        if inspect.isclass(value):
            for method, func, bound in _methods(value):
                if missing := _untyped(func, bound=bound):
                    untyped.append(f"{export}.{method}: {', '.join(missing)}")
        elif inspect.isfunction(value):
            if missing := _untyped(value, bound=False):
                untyped.append(f"{export}: {', '.join(missing)}")
    assert not untyped, f"{name} exports what is not fully typed:\n" + "\n".join(untyped)
