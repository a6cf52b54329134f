"""Code actions: the quick fixes of the diagnostics in the range asked about
(``tapir.service.actions``): an unknown element replaced by the closest names of the document,
a misspelt function, method or keyword by the one meant."""

from __future__ import annotations

from lsprotocol import types as T

from tapir.lsp.convert import from_range, to_diagnostic, to_text_edit
from tapir.lsp.server import TapirServer
from tapir.service.actions import code_actions

__all__ = ["register"]


def register(server: TapirServer) -> None:
    options = T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix])

    @server.feature(T.TEXT_DOCUMENT_CODE_ACTION, options)
    @server.guard(lambda: [])
    def on_code_action(params: T.CodeActionParams) -> list[T.CodeAction]:
        only = params.context.only
        if only and not any(T.CodeActionKind.QuickFix.value.startswith(k) for k in only):
            return []
        script = server.script(params.text_document.uri)
        index = script.view.index
        out = []
        for action in code_actions(script.view, from_range(index, params.range)):
            edit = T.WorkspaceEdit(changes={script.uri: [to_text_edit(index, e) for e in action.edits]})
            out.append(T.CodeAction(title=action.title, kind=T.CodeActionKind.QuickFix,
                                    diagnostics=[to_diagnostic(index, action.diagnostic)], edit=edit,
                                    is_preferred=action.preferred or None))
        return out
