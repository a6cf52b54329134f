"""The type of an expression written at a point of a script, even when the script does not parse
there (``song.`` while typing): what completion after '.' and signature help need.

    ctx = cursor_context(view, at.offset)
    type_at(view, ctx.receiver, at)   # Ty('item', 'songs__list') for 'song' in a loop over it

The tree answers when the expression is a node of it (the analysis knows its type); otherwise the
expression's tokens are read as what they are, a primary expression (an atom, then attributes,
calls and subscripts), and typed from the bindings visible at the cursor.
"""

from __future__ import annotations

from collections.abc import Sequence

from tapir.core.positions import Position
from tapir.dsl import ast as A
from tapir.dsl.analysis import UNKNOWN, Ty
from tapir.dsl.registry import REGISTRY, Entry, Namespace
from tapir.dsl.tokens import Token
from tapir.dsl.types import LIST_KINDS, Kind, type_of_constant
from tapir.service.context import CallSite, Chain, string_prefix
from tapir.service.script import ScriptView

__all__ = ["callee_entry", "kind_of", "methods_of", "node_written", "type_at"]

_VALUE_NAMESPACES = {"str": Namespace.STR, "list": Namespace.LIST, "tuple": Namespace.TUPLE, "dict": Namespace.DICT}
# Literal tokens and the value they stand for (what ``type_of_constant`` types).
_LITERALS: dict[str, object] = {"DEC_NUMBER": 0, "HEX_NUMBER": 0, "OCT_NUMBER": 0, "BIN_NUMBER": 0,
                                "FLOAT_NUMBER": 0.0, "TRUE": True, "FALSE": False, "NONE": None}
_CLOSERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}


def node_written(view: ScriptView, start: int, end: int) -> A.Node | None:
    """The node of the tree written exactly at ``start..end``: of the nodes there (a call statement
    and its call share a span), the innermost, or the first call, subscript or attribute going in.
    """
    found: A.Node | None = None
    for node in view.node_path(view.index.position(start))[1:]:
        if node.span.offset != start or node.span.end_offset != end:
            if found is not None:
                break
            continue
        found = node
        if isinstance(node, A.Call | A.Subscript | A.Attribute):
            break
    return found


def type_at(view: ScriptView, expr: Chain, at: Position) -> Ty:
    """What is known of the value of the expression ``expr`` (read at ``at``)."""
    node = node_written(view, expr.start, expr.end)
    if node is not None:
        known = view.analysis.type_of(node)
        if known != UNKNOWN:
            return known
    return _ChainTypes(view, at).of(expr.tokens)


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
        ty = type_at(view, call.receiver, at)
        candidates = [e for e in methods_of(view, ty) if e.name == call.name]
        return (candidates[0] if candidates else None), False
    entry = REGISTRY.get(Namespace.GLOBAL, call.name) or REGISTRY.builtin(call.name)
    if entry is not None:
        return entry, False
    legacy = REGISTRY.global_function(call.name)
    return legacy, legacy is not None


# ---------------------------------------------------------------------------------------------
# Typing a primary expression from its tokens


_Trailer = tuple[str, Sequence[Token]]  # ("attr", (name,)), ("call", arguments), ("index", inside)


def _group_end(tokens: Sequence[Token], i: int) -> int:
    """The index of the bracket closing the one at ``i`` (-1: it is not closed)."""
    depth = 0
    for j in range(i, len(tokens)):
        kind = tokens[j].kind
        if kind in _CLOSERS:
            depth += 1
        elif kind in _CLOSERS.values():
            depth -= 1
            if depth == 0:
                return j
    return -1


def _split_chain(tokens: Sequence[Token]) -> tuple[Sequence[Token], list[_Trailer]] | None:
    """A primary expression's atom (one token, or a bracketed group with its brackets) and its
    trailers; None when the tokens are not one."""
    if not tokens:
        return None
    i = _group_end(tokens, 0) if tokens[0].kind in _CLOSERS else 0
    if i < 0:
        return None
    atom, trailers = tokens[: i + 1], []
    i += 1
    while i < len(tokens):
        kind = tokens[i].kind
        if kind == "DOT" and i + 1 < len(tokens) and tokens[i + 1].kind == "NAME":
            trailers.append(("attr", tokens[i + 1 : i + 2]))
            i += 2
        elif kind in ("LPAR", "LSQB"):
            close = _group_end(tokens, i)
            if close < 0:
                return None
            trailers.append(("call" if kind == "LPAR" else "index", tokens[i + 1 : close]))
            i = close + 1
        else:
            return None
    return atom, trailers


def _arguments(tokens: Sequence[Token]) -> list[Sequence[Token]]:
    """The comma-separated parts of a bracket's inside (nested brackets kept whole)."""
    parts: list[Sequence[Token]] = []
    depth, start = 0, 0
    for j, t in enumerate(tokens):
        if t.kind in _CLOSERS:
            depth += 1
        elif t.kind in _CLOSERS.values():
            depth -= 1
        elif t.kind == "COMMA" and depth == 0:
            parts.append(tokens[start:j])
            start = j + 1
    if start < len(tokens):
        parts.append(tokens[start:])
    return parts


class _ChainTypes:
    """Types of a primary expression's tokens, from the bindings visible at a point of the script
    (the analysis's rules for the expressions a receiver is written with)."""

    def __init__(self, view: ScriptView, at: Position) -> None:
        self.view = view
        self.at = at

    def of(self, tokens: Sequence[Token]) -> Ty:
        split = _split_chain(tokens)
        if split is None:
            return UNKNOWN
        atom, trailers = split
        if len(atom) == 1 and atom[0].kind == "NAME" and trailers and trailers[0][0] == "call":
            ty = self._function_call(atom[0].text, trailers[0][1])
            trailers = trailers[1:]
        else:
            ty = self._atom(atom)
        i = 0
        while i < len(trailers):
            kind, inside = trailers[i]
            if kind == "attr" and i + 1 < len(trailers) and trailers[i + 1][0] == "call":
                ty = self._method_call(ty, inside[0].text)
                i += 2
            elif kind == "index":
                ty = Ty("item", ty.element) if ty.tag == "element" and kind_of(self.view, ty) in LIST_KINDS | {None} \
                    else UNKNOWN
                i += 1
            else:
                return UNKNOWN  # an attribute not called (no value has one), a call of a call's value
        return ty

    def _atom(self, atom: Sequence[Token]) -> Ty:
        first = atom[0]
        if first.kind in _CLOSERS:
            return self._display(first.kind, atom[1:-1])
        if first.kind == "ELEMENT":
            return self._element(first.text[1:].replace(":", "__", 1))
        if first.kind == "NAME":
            return self._name(first.text)
        if first.kind in ("STRING", "LONG_STRING"):
            return UNKNOWN if "b" in string_prefix(first.text).lower() else Ty("str")  # (bytes are refused)
        if first.kind in _LITERALS:
            return Ty(type_of_constant(_LITERALS[first.kind]))
        return UNKNOWN

    def _display(self, opener: str, inside: Sequence[Token]) -> Ty:
        """A bracketed atom: a list, a dict, a tuple, or an expression in parentheses."""
        if opener == "LSQB":
            return Ty("list")
        parts = _arguments(inside)
        if opener == "LBRACE":
            is_dict = not inside or any(t.kind == "COLON" for t in parts[0])
            return Ty("dict") if is_dict else UNKNOWN  # (set displays are refused)
        if not inside or len(parts) > 1 or inside[-1].kind == "COMMA":
            return Ty("tuple")
        return self.of(inside)

    def _element(self, name: str) -> Ty:
        symbols = self.view.symbols
        if symbols is None:
            return Ty("element", name)
        sym = symbols.element(name)
        return Ty("element", name, sym.kind) if sym is not None else UNKNOWN

    def _name(self, name: str) -> Ty:
        binding = self.view.analysis.scope_at(self.at).visible(self.at).get(name)
        if binding is not None:
            return binding.type
        if REGISTRY.script_value(name) is not None:
            return Ty("builtin", name)
        return UNKNOWN

    def _function_call(self, name: str, inside: Sequence[Token]) -> Ty:
        entry = REGISTRY.builtin(name) or REGISTRY.global_function(name)
        receiver: Ty | None = None
        positional = [p for p in _arguments(inside) if not _is_keyword_argument(p)]
        if entry is not None and entry.namespace == Namespace.ELEMENT and positional:
            receiver = self.of(positional[0])
        return _returned(entry, receiver)

    def _method_call(self, receiver: Ty, name: str) -> Ty:
        entry: Entry | None = None
        if receiver.is_element:
            entry = REGISTRY.element_method(name)
        elif receiver.tag in _VALUE_NAMESPACES:
            entry = REGISTRY.value_method(_VALUE_NAMESPACES[receiver.tag], name)
        return _returned(entry, receiver)


def _is_keyword_argument(tokens: Sequence[Token]) -> bool:
    return len(tokens) > 1 and tokens[0].kind == "NAME" and tokens[1].kind == "EQUAL"


def _returned(entry: Entry | None, receiver: Ty | None) -> Ty:
    """What a call of ``entry`` (on ``receiver``) returns, as far as its declaration says."""
    if entry is None:
        return UNKNOWN
    if entry.returns == "item":
        return Ty("item", receiver.element) if receiver is not None and receiver.tag == "element" else UNKNOWN
    if entry.returns in ("any", "element") or "|" in entry.returns:
        return UNKNOWN
    return Ty(entry.returns)
