"""Go to definition and find references.

    definition(view, at)        # [Location(path, span)]: an element's line in its document, a
                                # name's binding, a function's def
    references(view, at)        # every use of the element or name under the cursor in the script
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.positions import Position, Span
from tapir.dsl import ast as A
from tapir.dsl.analysis import Binding
from tapir.service.script import ScriptView

__all__ = ["Location", "definition", "references"]


@dataclass(frozen=True)
class Location:
    """A span in a file: the script (``path`` None when it has no file) or its document."""

    path: str | None
    span: Span


def _script(view: ScriptView) -> str | None:
    return str(view.path) if view.path is not None else None


def _target(view: ScriptView, at: Position) -> A.Node | None:
    """The element reference, name, def or parameter under the cursor."""
    for node in reversed(view.node_path(at)):
        if isinstance(node, A.ElementRef | A.Name):
            return node
        if isinstance(node, A.FunctionDef) and node.name_span is not None and node.name_span.contains(at):
            return node
        if isinstance(node, A.Param):
            return node
    return None


def _bindings_of(view: ScriptView, node: A.Node, at: Position) -> tuple[Binding, ...]:
    analysis = view.analysis
    if isinstance(node, A.Name):
        ref = next((r for r in analysis.references if r.node is node), None)
        if ref is not None:
            return ref.bindings
        here = [b for b in analysis.bindings if b.span == node.span]
        if here:
            owner = here[0].scope
            return tuple(owner.bindings.get(node.id, ()))
        return analysis.definitions_of(node.id, analysis.scope_at(at))
    if isinstance(node, A.FunctionDef):
        found = [b for b in analysis.bindings if b.node is node]
        return tuple(found[0].scope.bindings.get(node.name, ())) if found else ()
    if isinstance(node, A.Param):
        found = [b for b in analysis.bindings if b.node is node]
        return tuple(found[0].scope.bindings.get(node.name, ())) if found else ()
    return ()


def definition(view: ScriptView, at: Position) -> list[Location]:
    """Where what is under the cursor is defined (empty when nothing is)."""
    node = _target(view, at)
    if node is None:
        return []
    if isinstance(node, A.ElementRef):
        loaded = view.document
        if loaded is None:
            return []
        span = loaded.element_span(node.name)
        return [Location(str(loaded.path), span)] if span is not None else []
    bindings = _bindings_of(view, node, at)
    if not bindings:
        return []
    # the bindings before the use (the last of them is the one that reaches it most directly);
    # all of them when the use comes first (a function called before its def, a loop)
    before = [b for b in bindings if (b.span.line, b.span.column) <= (at.line, at.column)]
    chosen = before[-1:] if before and isinstance(node, A.Name) else list(bindings)
    if any(b.kind == "function" for b in bindings):
        chosen = [b for b in bindings if b.kind == "function"][:1]
    return [Location(_script(view), b.span) for b in chosen]


def references(view: ScriptView, at: Position, include_declaration: bool = True) -> list[Location]:
    """Every use of what is under the cursor in this script (its bindings too, by default)."""
    node = _target(view, at)
    if node is None:
        return []
    here = _script(view)
    if isinstance(node, A.ElementRef):
        found = [Location(here, r.span) for r in view.analysis.element_refs if r.name == node.name]
        return sorted(found, key=lambda loc: (loc.span.line, loc.span.column))
    bindings = set(map(id, _bindings_of(view, node, at)))
    name = node.id if isinstance(node, A.Name) else getattr(node, "name", "")
    out: list[Location] = []
    if bindings:
        for ref in view.analysis.references:
            if ref.name == name and any(id(b) in bindings for b in ref.bindings):
                out.append(Location(here, ref.span))
        if include_declaration:
            out += [Location(here, b.span) for b in view.analysis.bindings if id(b) in bindings]
    else:  # a builtin or an unknown name: every read of it with no binding
        out = [Location(here, r.span) for r in view.analysis.references if r.name == name and not r.bindings]
    return sorted(set(out), key=lambda loc: (loc.span.line, loc.span.column))
