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
from typing import TYPE_CHECKING, Any

from tapir.core.document import AppDocument, Element, Screen
from tapir.core.errors import (
    ActionError,
    BudgetExceeded,
    DeviceError,
    ElementNotFound,
    SafetyError,
    ScreenNotReached,
    ScriptError,
    TapirError,
    TapirSyntaxError,
    UnknownElement,
)
from tapir.dsl import ast as A
from tapir.dsl.api import BUILTINS, ELEMENT_METHODS, GLOBALS, LIST_KINDS, Kind
from tapir.dsl.registry import Entry as ApiEntry
from tapir.dsl.symbols import SymbolTable

if TYPE_CHECKING:
    from tapir.core.safety import Safety
    from tapir.run import Runner, Session

__all__ = [
    "A", "ActionError", "ApiEntry", "AppDocument", "BudgetExceeded", "DeviceError", "Element", "ElementNotFound",
    "Issue", "Kind", "LIST_KINDS", "SafetyError", "Screen", "ScreenNotReached", "ScriptError", "SymbolTable",
    "TapirError", "TapirSyntaxError", "UnknownElement", "builtins", "check", "element_methods", "global_functions",
    "lists_with_item", "load_document", "methods_legal_on", "parse_module", "parses", "permission_prompt", "run",
    "runner", "symbols", "transient", "value_methods",
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


def shown_labels(element: Element) -> tuple[str, ...]:
    """The texts and descriptions an element's own identifiers say it shows (the grounder's
    reading, ``tapir.runtime.grounding.identifiers.labels``)."""
    from tapir.runtime.grounding.identifiers import labels

    return labels(element.identifiers, own=True).words


def lists_with_item(doc: AppDocument, text: str, besides: Element) -> list[Element]:
    """The lists other than ``besides`` whose documented items include ``text`` (the runtime's
    reading, ``tapir.runtime.list_access.documented_elsewhere``), those on its screen first."""
    from tapir.runtime.list_access import documented_elsewhere

    return documented_elsewhere(doc, text, besides, limit=sum(1 for _ in doc.elements))


def permission_prompt(package: object) -> bool:
    """Whether ``package`` is the system's permission prompt (a dialog over the app, no element of
    its document; the guards' ``PERMISSION_PACKAGES``)."""
    from tapir.runtime.guards.sensitive import PERMISSION_PACKAGES

    return package in PERMISSION_PACKAGES


def transient(doc: AppDocument, screen: str) -> bool:
    """Whether ``screen`` of ``doc`` is a dialog, menu or popup (opened by an action, gone after)."""
    from tapir.runtime.navigation import transient_screen

    found = doc.screen(screen)
    return found is not None and transient_screen(found)


# -- checking and running ------------------------------------------------------------------------

def parses(source: str) -> TapirSyntaxError | None:
    """None when ``source`` parses, else the syntax error."""
    from tapir.dsl.parser import parse

    try:
        parse(source, "<generated>")
    except TapirSyntaxError as exc:
        return exc
    return None


def parse_module(source: str) -> A.Module:
    """``source`` as far as it parses (``ErrorStmt`` nodes where it does not); never raises."""
    from tapir.dsl.parser import parse_tolerant

    return parse_tolerant(source, "<generated>").module


def check(source: str, table: SymbolTable | None, filename: str = "<generated>") -> list[Issue]:
    """Every static problem of ``source`` against the document's symbols, in source order."""
    from tapir.dsl.checker import check_source

    issues = []
    for d in check_source(source, table, filename):
        if d.span is None:  # about the whole script (its size): shown at its start
            issues.append(Issue(1, 1, d.code, d.message, d.severity))
        else:
            issues.append(Issue(d.span.line, d.span.column, d.code, d.message, d.severity, d.span.end_line,
                                d.span.end_column))
    return issues


@dataclass(frozen=True)
class RunOutcome:
    """What running a script did: printed lines, UI actions, and the error that stopped it."""

    ok: bool
    printed: tuple[str, ...]
    actions: int
    seconds: float
    error: TapirError | None
    #: What ``finish`` returned where the script ran (``run(..., finish=...)``), else None.
    collected: Any = None
    #: The run's trace records (``ScriptRun.records``): what the post-run checks read.
    records: tuple[dict[str, Any], ...] = ()


def runner(document: AppDocument, device: str | None, *, adb_port: int | None = None,
           max_actions: int | None = None, timeout_s: float | None = None, safety: Safety | None = None,
           isolated: bool = False, output: Callable[[str], None] | None = None) -> Runner:
    """The ``tapir.run.Runner`` of generated scripts on ``device`` (None: without one): their budgets,
    ``safety`` (what a script may do: ``allow()``, ``secret()``), ``isolated`` (each run in a child
    process under OS limits, ``tapir.dsl.isolation``, the device connected there) and where
    ``print()`` goes (None: nowhere)."""
    from tapir.dsl.budget import Budgets
    from tapir.run import Runner, RunOptions

    budgets = Budgets().replace(max_actions=max_actions, timeout_s=timeout_s)
    return Runner(document, device, RunOptions(budgets=budgets, safety=safety, adb_port=adb_port,
                                               isolation="process" if isolated else "inline", output=output))


def run(source: str, on: Runner | Session, table: SymbolTable | None, *, filename: str = "<generated>",
        finish: Callable[[Any, Any], Any] | None = None) -> RunOutcome:
    """Run ``source`` in the sandboxed interpreter with ``on``: a ``Runner`` (a device of its own,
    released after) or one of its sessions (the session's device, kept); the device is connected on
    the first UI call. ``finish(runtime, result)`` runs where the runtime lives (in the child of an
    isolated run), after the script and before the device is released, when the script used it;
    what it returns (JSON) is ``RunOutcome.collected``."""
    done = on.run(source, filename, symbols=table, finish=finish)
    r = done.result
    return RunOutcome(r.ok, r.printed, r.actions, r.duration_s, r.error, done.finished, done.records)
