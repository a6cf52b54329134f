"""The one place the code generator reads the language and its documents through.

Everything ``tapir.codegen`` needs of the layers below (the API registry, the static checker,
the parser, app documents and their symbols, the interpreter) is reached through this module,
so that a change of those interfaces (the language service's unified registry, ``Diagnostic``
and ``Workspace``) is absorbed here and nowhere else::

    from tapir.codegen import language as L

    doc = L.load_document("samples/music/music.yaml")
    for m in L.element_methods():            # registry entries, in registry order
        print(m.name, sorted(k.value for k in m.kinds))
    issues = L.check(source, L.symbols(doc))  # [Issue(line, column, code, message, ...)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.docgen.model import AppDocument, Element
from tapir.dsl.api import BUILTINS, ELEMENT_METHODS, GLOBALS, LIST_KINDS, Kind
from tapir.dsl.errors import (
    ActionError,
    BudgetExceeded,
    DeviceError,
    ElementNotFound,
    ScreenNotReached,
    ScriptError,
    TapirError,
    TapirSyntaxError,
    UnknownElement,
)
from tapir.dsl.registry import Entry as ApiEntry
from tapir.dsl.symbols import SymbolTable

__all__ = [
    "ActionError", "ApiEntry", "AppDocument", "BudgetExceeded", "DeviceError", "Element", "ElementNotFound",
    "Issue", "Kind", "LIST_KINDS", "ScreenNotReached", "ScriptError", "SymbolTable", "TapirError",
    "TapirSyntaxError", "UnknownElement", "builtins", "check", "element_methods", "global_functions",
    "load_document", "methods_legal_on", "parses", "run", "symbols", "value_methods",
]


@dataclass(frozen=True)
class Issue:
    """One problem the static checker found (a syntax error included), 1-based position."""

    line: int
    column: int
    code: str
    message: str
    severity: str = "error"
    end_line: int | None = None
    end_column: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


# -- the registry ------------------------------------------------------------------------------

def element_methods() -> list[ApiEntry]:
    """Element methods (``tap``, ``set_text``, ``match``...), in registry order."""
    return list(ELEMENT_METHODS.values())


def global_functions() -> list[ApiEntry]:
    """Global UI functions (``back()``, ``enter()``)."""
    return list(GLOBALS.values())


def builtins() -> tuple[str, ...]:
    """The plain builtins a script may call (``len``, ``range``, ``print``...)."""
    return tuple(BUILTINS)


def value_methods() -> dict[str, tuple[str, ...]]:
    """Methods of the script's own values by type name: ``{"str": ("lower", ...), ...}``."""
    from tapir.dsl.registry import REGISTRY, VALUE_NAMESPACES

    return {t.__name__: tuple(sorted(REGISTRY.names(ns))) for t, ns in VALUE_NAMESPACES.items()}


def methods_legal_on(kind: Kind) -> list[ApiEntry]:
    return [e for e in ELEMENT_METHODS.values() if kind in e.kinds]


# -- documents -----------------------------------------------------------------------------------

def load_document(path: str | Path) -> AppDocument:
    """Load and validate an app document (raises ``DocumentError`` listing every problem)."""
    from tapir.docgen.loader import load_document as _load

    return _load(path)


def symbols(doc: AppDocument) -> SymbolTable:
    from tapir.docgen.symbols import build_symbols

    return build_symbols(doc)


# -- checking and running ------------------------------------------------------------------------

def parses(source: str) -> TapirSyntaxError | None:
    """None when ``source`` parses, else the syntax error."""
    from tapir.dsl.parser import parse

    try:
        parse(source, "<generated>")
    except TapirSyntaxError as exc:
        return exc
    return None


def check(source: str, table: SymbolTable | None, filename: str = "<generated>") -> list[Issue]:
    """Every static problem of ``source`` against the document's symbols, in source order."""
    from tapir.dsl.checker import check_source

    return [
        Issue(d.span.line, d.span.column, d.code, d.message, d.severity, d.span.end_line, d.span.end_column)
        for d in check_source(source, table, filename)
    ]


@dataclass(frozen=True)
class RunOutcome:
    """What running a script did: printed lines, UI actions, and the error that stopped it."""

    ok: bool
    printed: tuple[str, ...]
    actions: int
    seconds: float
    error: TapirError | None


def run(source: str, runtime_factory: Callable[[], Any] | None, table: SymbolTable | None, *,
        filename: str = "<generated>", max_actions: int | None = None, timeout_s: float | None = None,
        output: Callable[[str], None] | None = None) -> RunOutcome:
    """Run ``source`` in the sandboxed interpreter; the runtime is made on the first UI call."""
    from tapir.dsl.budget import Budgets
    from tapir.dsl.interpreter import run_script

    budgets = Budgets().replace(max_actions=max_actions, timeout_s=timeout_s)
    r = run_script(source, runtime_factory, budgets, output=output, symbols=table, filename=filename)
    return RunOutcome(r.ok, r.printed, r.actions, r.duration_s, r.error)

