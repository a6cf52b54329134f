"""Semantic tokens (full): every token classified as the analysis understands it
(``tapir.service.semantic``), in the Language Server Protocol's standard types, so that any
theme colours them.

Our types map to the standard legend: script functions ``function``, registry callables
``function`` + ``defaultLibrary``, methods ``method``, parameters, variables, keywords,
strings, numbers, comments, operators as themselves. An element reference is split the way the
TextMate grammar splits it: ``$screen`` a ``namespace``, the element a ``variable`` +
``readonly`` (the separator left to the grammar); ``unknown`` marks elements the document
lacks and names bound nowhere.
"""

from __future__ import annotations

from lsprotocol import types as T

from tapir.core.positions import LineIndex
from tapir.lsp.server import TapirServer
from tapir.service.semantic import SemanticToken, semantic_tokens

__all__ = ["LEGEND", "encode", "register"]

TYPES = ["namespace", "function", "method", "parameter", "variable", "keyword", "string", "number", "comment",
         "operator"]
MODIFIERS = ["declaration", "readonly", "defaultLibrary", "unknown"]
LEGEND = T.SemanticTokensLegend(token_types=TYPES, token_modifiers=MODIFIERS)

#: Our type -> (standard type, modifiers it implies).
_MAP: dict[str, tuple[str, tuple[str, ...]]] = {
    "function": ("function", ()), "method": ("method", ()), "builtin": ("function", ("defaultLibrary",)),
    "parameter": ("parameter", ()), "variable": ("variable", ()), "keyword": ("keyword", ()),
    "string": ("string", ()), "number": ("number", ()), "comment": ("comment", ()), "operator": ("operator", ()),
}
_TYPE_INDEX = {name: i for i, name in enumerate(TYPES)}
_MODIFIER_BIT = {name: 1 << i for i, name in enumerate(MODIFIERS)}


def _pieces(index: LineIndex, tok: SemanticToken) -> list[tuple[int, int, int, str, tuple[str, ...]]]:
    """(line, start column, end column, type, modifiers) in code points, one line each."""
    s = tok.span
    if tok.type != "element":
        typ, implied = _MAP.get(tok.type, ("variable", ()))
        return [(s.line, s.column, s.end_column, typ, implied + tok.modifiers)]
    text = index.line_text(s.line)[s.column - 1 : s.end_column - 1]
    cut = text.find("__", 1)
    width = 2
    if cut < 0:
        cut, width = text.find(":", 1), 1
    readonly = ("readonly", *tok.modifiers)
    if cut < 0:
        return [(s.line, s.column, s.end_column, "variable", readonly)]
    return [(s.line, s.column, s.column + cut, "namespace", tok.modifiers),
            (s.line, s.column + cut + width, s.end_column, "variable", readonly)]


def encode(index: LineIndex, tokens: list[SemanticToken]) -> list[int]:
    """The tokens as LSP's relative integer encoding (line delta, start delta, length in UTF-16,
    type, modifier bits)."""
    data: list[int] = []
    last_line = last_start = 0
    for tok in tokens:
        for line, start, end, typ, mods in _pieces(index, tok):
            if end <= start:
                continue
            lsp_line, a = index.lsp_position(line, start)
            _, b = index.lsp_position(line, end)
            if b <= a:
                continue
            bits = 0
            for m in mods:
                bits |= _MODIFIER_BIT.get(m, 0)
            delta = lsp_line - last_line
            data += [delta, a - last_start if delta == 0 else a, b - a, _TYPE_INDEX[typ], bits]
            last_line, last_start = lsp_line, a
    return data


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)  # (pygls builds the options from the legend)
    @server.guard(lambda: T.SemanticTokens(data=[]))
    def on_semantic_tokens(params: T.SemanticTokensParams) -> T.SemanticTokens:
        script = server.script(params.text_document.uri)
        return T.SemanticTokens(data=encode(script.view.index, semantic_tokens(script.view)))
