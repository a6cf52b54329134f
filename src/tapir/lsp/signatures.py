"""Signature help: the signature of the call the cursor is in and the parameter it is at
(``tapir.service.signatures``): element methods, API functions, builtins, str/list/dict
methods and the script's own functions."""

from __future__ import annotations

from lsprotocol import types as T

from tapir.lsp.convert import from_position
from tapir.lsp.server import TapirServer
from tapir.service.signatures import signature_help

__all__ = ["register"]


def _markdown(text: str) -> T.MarkupContent | None:
    return T.MarkupContent(T.MarkupKind.Markdown, text) if text else None


def register(server: TapirServer) -> None:
    options = T.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[")"])

    @server.feature(T.TEXT_DOCUMENT_SIGNATURE_HELP, options)
    @server.guard(lambda: None)
    def on_signature_help(params: T.SignatureHelpParams) -> T.SignatureHelp | None:
        script = server.script(params.text_document.uri)
        found = signature_help(script.view, from_position(script.view.index, params.position))
        if found is None:
            return None
        signatures = [
            T.SignatureInformation(
                label=s.label, documentation=_markdown(s.documentation),
                parameters=[T.ParameterInformation(label=p.label, documentation=_markdown(p.documentation))
                            for p in s.parameters],
            )
            for s in found.signatures
        ]
        return T.SignatureHelp(signatures, found.active_signature, found.active_parameter)
