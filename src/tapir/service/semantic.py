"""Semantic tokens: every token of a script classified the way the analysis understands it.

    for tok in semantic_tokens(view):
        tok.span, tok.type, tok.modifiers     # Span(...), 'element', ('readonly',)

Types (``TOKEN_TYPES``, what a language server announces as its legend): ``element`` ($refs),
``function`` (defs of the script and calls to them), ``method``, ``builtin`` (the language's
functions), ``parameter``, ``variable``, ``keyword``, ``string``, ``number``, ``comment``,
``operator``. Modifiers (``TOKEN_MODIFIERS``): ``declaration`` where a name is bound,
``unknown`` for elements the document lacks and names bound nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.positions import Span
from tapir.dsl import ast as A
from tapir.service.script import ScriptView

__all__ = ["TOKEN_MODIFIERS", "TOKEN_TYPES", "SemanticToken", "semantic_tokens"]

TOKEN_TYPES = ("element", "function", "method", "builtin", "parameter", "variable", "keyword", "string", "number",
               "comment", "operator")
TOKEN_MODIFIERS = ("declaration", "unknown")
_PLAIN = {"keyword": "keyword", "string": "string", "number": "number", "comment": "comment", "operator": "operator"}


@dataclass(frozen=True)
class SemanticToken:
    span: Span
    type: str
    modifiers: tuple[str, ...] = ()


def semantic_tokens(view: ScriptView) -> list[SemanticToken]:
    """The tokens of the script with their types, in source order (one line each: a token that
    spans lines, a triple-quoted string, is split at its newlines as LSP clients expect)."""
    analysis = view.analysis
    names: dict[int, tuple[str, tuple[str, ...]]] = {}
    for ref in analysis.references:
        if ref.bindings:
            kind = ref.bindings[0].kind
            typ = {"function": "function", "parameter": "parameter"}.get(kind, "variable")
            names[ref.span.offset] = (typ, ())
        else:
            names[ref.span.offset] = ("builtin", ()) if ref.entry is not None else ("variable", ("unknown",))
    for b in analysis.bindings:
        typ = {"function": "function", "parameter": "parameter"}.get(b.kind, "variable")
        names[b.span.offset] = (typ, ("declaration",))
    methods: set[int] = set()
    for node in view.module.walk():
        if isinstance(node, A.Attribute) and node.attr_span is not None:
            methods.add(node.attr_span.offset)
    unknown_elements = {r.span.offset for r in analysis.element_refs
                        if analysis.symbols is not None and analysis.element_of(r) is None}
    out: list[SemanticToken] = []
    for tok in view.tokens:
        if tok.kind == "INVALID":
            continue  # text the lexer could not read (an unterminated string): the error marks it
        cat = tok.category
        span = tok.span
        if cat == "element":
            out.append(SemanticToken(span, "element", ("unknown",) if span.offset in unknown_elements else ()))
        elif cat == "name":
            if span.offset in methods:
                out.append(SemanticToken(span, "method"))
            elif span.offset in names:
                typ, mods = names[span.offset]
                out.append(SemanticToken(span, typ, mods))
        elif cat in _PLAIN:
            out.extend(_split_lines(view, SemanticToken(span, _PLAIN[cat])))
    return out


def _split_lines(view: ScriptView, tok: SemanticToken) -> list[SemanticToken]:
    s = tok.span
    if s.line == s.end_line:
        return [tok]
    out = []
    for line in range(s.line, s.end_line + 1):
        start = s.column if line == s.line else 1
        end = s.end_column if line == s.end_line else len(view.index.line_text(line)) + 1
        if end > start:
            out.append(SemanticToken(view.index.fill(Span(line, start, line, end)), tok.type, tok.modifiers))
    return out
