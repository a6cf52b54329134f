"""Hover: what the thing under the cursor is, in Markdown.

    h = hover(view, view.at(2, 5))
    h.span, h.contents     # the span of the element/name/method hovered, and its description

Elements show their kind, description, effect, options, child elements, identifiers and how they
are reached (from the document); methods, builtins and API functions their signature and doc (from
the registry); script names their type and where they are defined; functions their signature and
docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.positions import Position, Span
from tapir.dsl import ast as A
from tapir.dsl.registry import REGISTRY
from tapir.service.describe import element_markdown, entry_markdown, function_signature
from tapir.service.script import ScriptView

__all__ = ["Hover", "hover"]


@dataclass(frozen=True)
class Hover:
    span: Span
    #: Markdown.
    contents: str


def hover(view: ScriptView, at: Position) -> Hover | None:
    """What to show for the position, or None when there is nothing to say."""
    path = view.node_path(at)
    for node in reversed(path):
        found = _hover_node(view, node, at, path)
        if found is not None:
            return found
    return None


def _hover_node(view: ScriptView, node: A.Node, at: Position, path: list[A.Node]) -> Hover | None:
    analysis = view.analysis
    if isinstance(node, A.ElementRef):
        symbols = view.symbols
        sym = symbols.element(node.name) if symbols is not None else None
        if sym is None:
            text = f"**${node.name}**\n\n" + ("not an element of the app document" if symbols is not None
                                              else "no app document: the element cannot be looked up")
            return Hover(node.span, text)
        return Hover(node.span, element_markdown(sym, view.document, symbols))
    if isinstance(node, A.Call) and isinstance(node.func, A.Attribute):
        attr = node.func.attr_span
        if attr is not None and attr.contains(at):
            entry = analysis.entry_of(node)
            if entry is not None:
                return Hover(attr, entry_markdown(entry))
    if isinstance(node, A.Keyword):
        call = next((p for p in reversed(path) if isinstance(p, A.Call)), None)
        entry = analysis.entry_of(call) if call is not None else None
        param = entry.param(node.name) if entry is not None else None
        if param is not None and at.offset < node.value.span.offset:
            return Hover(node.span, f"```tapir\n{param.render()}\n```\n\n{param.doc}".strip())
    if isinstance(node, A.FunctionDef) and node.name_span is not None and node.name_span.contains(at):
        doc = f"\n\n{node.docstring}" if node.docstring else ""
        return Hover(node.name_span, f"```tapir\n{function_signature(node)}\n```{doc}")
    if isinstance(node, A.Name):
        return _hover_name(view, node, at)
    if isinstance(node, A.Param):
        name_span = Span(node.span.line, node.span.column, node.span.line, node.span.column + len(node.name))
        if name_span.contains(at):
            return Hover(name_span, f"```tapir\n(parameter) {node.name}\n```")
    return None


def _hover_name(view: ScriptView, node: A.Name, at: Position) -> Hover | None:
    analysis = view.analysis
    ref = next((r for r in analysis.references if r.node is node), None)
    bindings = ref.bindings if ref is not None else analysis.definitions_of(node.id, analysis.scope_at(at))
    binding = next((b for b in bindings if b.span == node.span), None) or (bindings[0] if bindings else None)
    if binding is not None:
        if binding.kind == "function":
            fn = binding.node
            if isinstance(fn, A.FunctionDef):
                doc = f"\n\n{fn.docstring}" if fn.docstring else ""
                return Hover(node.span, f"```tapir\n{function_signature(fn)}\n```{doc}")
        ty = analysis.type_of(node)
        if ty.tag == "unknown":
            ty = binding.type
        what = "" if ty.tag == "unknown" else f": {ty.describe()}"
        where = f"defined at line {binding.span.line}" if binding.span.line else ""
        return Hover(node.span, f"```tapir\n({binding.kind}) {node.id}{what}\n```\n\n{where}".strip())
    entry = REGISTRY.builtin(node.id) or REGISTRY.global_function(node.id)
    if entry is not None:
        return Hover(node.span, entry_markdown(entry))
    return None
