"""Completion: ``$`` element names narrowed by the screen typed, the methods legal for the
receiver, the values a string argument takes (``match("`` offers the list's options), and
the names, builtins and keywords in scope (``tapir.service.completion``).

Each item replaces what was typed (its ``text_edit`` covers it, the ``$`` included), carries its
kind, a one-line detail and Markdown documentation; choosing a screen (``$songs_screen__``) asks
the editor to complete again, for its elements.
"""

from __future__ import annotations

from lsprotocol import types as T

from tapir.lsp.convert import from_position, to_range
from tapir.lsp.server import TapirServer
from tapir.service.completion import CompletionItem, CompletionKind, complete

__all__ = ["TRIGGERS", "register", "to_item"]

TRIGGERS = ["$", ".", '"', "'", "_"]

KIND = {
    CompletionKind.ELEMENT: T.CompletionItemKind.Field,
    CompletionKind.SCREEN: T.CompletionItemKind.Module,
    CompletionKind.METHOD: T.CompletionItemKind.Method,
    CompletionKind.FUNCTION: T.CompletionItemKind.Function,
    CompletionKind.BUILTIN: T.CompletionItemKind.Function,
    CompletionKind.VARIABLE: T.CompletionItemKind.Variable,
    CompletionKind.PARAMETER: T.CompletionItemKind.Variable,
    CompletionKind.KEYWORD: T.CompletionItemKind.Keyword,
    CompletionKind.VALUE: T.CompletionItemKind.Value,
    CompletionKind.ARGUMENT: T.CompletionItemKind.Property,
}
_AGAIN = T.Command(title="complete the screen's elements", command="editor.action.triggerSuggest")


def to_item(item: CompletionItem, rng: T.Range | None) -> T.CompletionItem:
    text = item.insert_text if item.insert_text is not None else item.label
    return T.CompletionItem(
        label=item.label,
        kind=KIND.get(item.kind, T.CompletionItemKind.Text),
        detail=item.detail or None,
        documentation=T.MarkupContent(T.MarkupKind.Markdown, item.documentation) if item.documentation else None,
        sort_text=item.sort_text,
        filter_text=item.label,
        text_edit=T.TextEdit(rng, text) if rng is not None else None,
        insert_text=text if rng is None else None,
        command=_AGAIN if item.kind == CompletionKind.SCREEN else None,
    )


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=TRIGGERS))
    @server.guard(lambda: None)
    def on_completion(params: T.CompletionParams) -> T.CompletionList | None:
        script = server.script(params.text_document.uri)
        index = script.view.index
        items = complete(script.view, from_position(index, params.position))
        out = [to_item(i, to_range(index, i.replace) if i.replace is not None else None) for i in items]
        return T.CompletionList(is_incomplete=False, items=out)
