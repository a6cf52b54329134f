"""The type of an expression written at a point of a script, even when the script does not parse
there (``song.`` while typing): what completion after '.' and signature help need.

    type_at(view, start, end, position)   # Ty('item', 'songs__list') for 'song' in a loop over it
"""

from __future__ import annotations

from tapir.dsl import ast as A
from tapir.dsl.analysis import UNKNOWN, Ty
from tapir.dsl.parser import parse_tolerant
from tapir.dsl.positions import Position
from tapir.dsl.registry import REGISTRY, Entry, Namespace
from tapir.dsl.types import LIST_KINDS, Kind, type_of_constant
from tapir.dsl.visitor import NodeVisitor
from tapir.service.context import CallSite
from tapir.service.script import ScriptView

__all__ = ["callee_entry", "kind_of", "methods_of", "node_spanning", "type_at"]

_VALUE_NAMESPACES = {"str": Namespace.STR, "list": Namespace.LIST, "tuple": Namespace.TUPLE, "dict": Namespace.DICT}


def node_spanning(module: A.Module, start: int, end: int) -> A.Node | None:
    """The node of the tree that covers exactly the text ``start..end``, if there is one."""
    node: A.Node = module
    while True:
        inner = None
        for child in node.children():
            s = child.span
            if s.offset == start and s.end_offset == end:
                # the outermost node with this span (a call statement and its call share one)
                while True:
                    deeper = next((c for c in child.children()
                                   if c.span.offset == start and c.span.end_offset == end), None)
                    if deeper is None or isinstance(child, A.Call | A.Subscript | A.Attribute):
                        return child
                    child = deeper
            if s.offset <= start and end <= s.end_offset:
                inner = child
                break
        if inner is None:
            return None
        node = inner


def type_at(view: ScriptView, start: int, end: int, at: Position) -> Ty:
    """What is known of the value of the expression at ``start..end`` of the text."""
    node = node_spanning(view.module, start, end)
    if node is not None:
        known = view.analysis.type_of(node)
        if known != UNKNOWN:
            return known
    text = view.text[start:end]
    if not text.strip():
        return UNKNOWN
    parsed = parse_tolerant(text)
    body = parsed.module.body
    if parsed.errors or len(body) != 1 or not isinstance(body[0], A.ExprStmt):
        return UNKNOWN
    return _Evaluate(view, at).visit(body[0].value)


def kind_of(view: ScriptView, ty: Ty) -> Kind | None:
    """The kind deciding what ``ty`` accepts: an element's own, an item's its list's item kind."""
    symbols = view.symbols
    if ty.element is None or symbols is None:
        return None
    sym = symbols.element(ty.element)
    if sym is None:
        return None
    if ty.tag == "item":
        return sym.item_kind or Kind.OTHER
    return sym.kind if ty.tag == "element" else None


def methods_of(view: ScriptView, ty: Ty) -> list[Entry]:
    """The methods a value of type ``ty`` has (every element and value method when unknown)."""
    if ty.is_element:
        kind = kind_of(view, ty)
        return REGISTRY.methods_for(kind) if kind is not None else REGISTRY.entries(Namespace.ELEMENT)
    namespace = _VALUE_NAMESPACES.get(ty.tag)
    if namespace is not None:
        return REGISTRY.entries(namespace)
    if ty.tag in ("unknown", "any"):
        seen: dict[str, Entry] = {e.name: e for e in REGISTRY.entries(Namespace.ELEMENT)}
        for ns in _VALUE_NAMESPACES.values():
            for e in REGISTRY.entries(ns):
                seen.setdefault(e.name, e)
        return list(seen.values())
    return []


def callee_entry(view: ScriptView, at: Position, call: CallSite) -> tuple[Entry | None, bool]:
    """The registry entry a call site calls, and whether it is the legacy form (element first)."""
    if call.receiver is not None:
        ty = type_at(view, call.receiver_start, call.receiver_start + len(call.receiver), at)
        candidates = [e for e in methods_of(view, ty) if e.name == call.name]
        return (candidates[0] if candidates else None), False
    entry = REGISTRY.get(Namespace.GLOBAL, call.name) or REGISTRY.builtin(call.name)
    if entry is not None:
        return entry, False
    legacy = REGISTRY.global_function(call.name)
    return legacy, legacy is not None


class _Evaluate(NodeVisitor[Ty]):
    """Types of a small expression, from the bindings visible at a point of the script."""

    def __init__(self, view: ScriptView, at: Position) -> None:
        self.view = view
        self.at = at

    def generic_visit(self, node: object, context: object = None) -> Ty:
        return UNKNOWN

    def visit_Constant(self, e: A.Constant) -> Ty:
        return Ty(type_of_constant(e.value))

    def visit_FString(self, e: A.FString) -> Ty:
        return Ty("str")

    def visit_ListExpr(self, e: A.ListExpr) -> Ty:
        return Ty("list")

    def visit_ListComp(self, e: A.ListComp) -> Ty:
        return Ty("list")

    def visit_TupleExpr(self, e: A.TupleExpr) -> Ty:
        return Ty("tuple")

    def visit_DictExpr(self, e: A.DictExpr) -> Ty:
        return Ty("dict")

    def visit_ElementRef(self, e: A.ElementRef) -> Ty:
        symbols = self.view.symbols
        if symbols is None:
            return Ty("element", e.name)
        sym = symbols.element(e.name)
        return Ty("element", e.name, sym.kind) if sym is not None else UNKNOWN

    def visit_Name(self, e: A.Name) -> Ty:
        binding = self.view.analysis.scope_at(self.at).visible(self.at).get(e.id)
        if binding is not None:
            return binding.type
        if REGISTRY.script_value(e.id) is not None:
            return Ty("builtin", e.id)
        return UNKNOWN

    def visit_Subscript(self, e: A.Subscript) -> Ty:
        ty = self.visit(e.value)
        if ty.tag == "element" and kind_of(self.view, ty) in LIST_KINDS | {None}:
            return Ty("item", ty.element)
        return UNKNOWN

    def visit_Call(self, e: A.Call) -> Ty:
        func = e.func
        entry: Entry | None = None
        receiver: Ty | None = None
        if isinstance(func, A.Attribute):
            receiver = self.visit(func.value)
            if receiver.is_element:
                entry = REGISTRY.element_method(func.attr)
            elif receiver.tag in _VALUE_NAMESPACES:
                entry = REGISTRY.value_method(_VALUE_NAMESPACES[receiver.tag], func.attr)
        elif isinstance(func, A.Name):
            entry = REGISTRY.builtin(func.id) or REGISTRY.global_function(func.id)
            if entry is not None and entry.namespace == Namespace.ELEMENT and e.args:
                receiver = self.visit(e.args[0])
        if entry is None:
            return UNKNOWN
        if entry.returns == "item":
            return Ty("item", receiver.element) if receiver is not None and receiver.tag == "element" else UNKNOWN
        if entry.returns in ("any", "element") or "|" in entry.returns:
            return UNKNOWN
        return Ty(entry.returns)
