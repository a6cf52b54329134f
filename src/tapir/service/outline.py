"""Document symbols: the outline of a script (its functions, with what they define, and its
module-level variables), for an editor's outline view and "go to symbol".

    for s in document_symbols(view):
        s.name, s.kind, s.span, s.selection, s.children
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tapir.core.positions import Span
from tapir.dsl import ast as A
from tapir.dsl.analysis import Scope
from tapir.service.describe import function_signature
from tapir.service.script import ScriptView

__all__ = ["DocumentSymbol", "document_symbols"]


@dataclass(frozen=True)
class DocumentSymbol:
    name: str
    #: ``function``, ``variable`` or ``parameter``.
    kind: str
    #: The whole definition (a function's def and body; the statement binding a variable).
    span: Span
    #: The name itself.
    selection: Span
    detail: str = ""
    children: tuple[DocumentSymbol, ...] = field(default_factory=tuple)


def _symbols_of(scope: Scope, view: ScriptView) -> tuple[DocumentSymbol, ...]:
    out: list[DocumentSymbol] = []
    for name, bindings in scope.bindings.items():
        first = bindings[0]
        if first.kind == "function" and isinstance(first.node, A.FunctionDef):
            fn = first.node
            inner = view.analysis.scope_of(fn)
            children = _symbols_of(inner, view) if inner is not None else ()
            out.append(DocumentSymbol(name, "function", fn.span, first.span, function_signature(fn), children))
        elif first.kind in ("variable", "loop", "parameter"):
            kind = "parameter" if first.kind == "parameter" else "variable"
            detail = first.type.describe() if first.type.tag != "unknown" else ""
            out.append(DocumentSymbol(name, kind, first.node.span, first.span, detail))
    return tuple(sorted(out, key=lambda s: (s.selection.line, s.selection.column)))


def document_symbols(view: ScriptView) -> list[DocumentSymbol]:
    """The script's outline, in source order."""
    return list(_symbols_of(view.analysis.module_scope, view))
