"""The language service: what the command line, the language server, the REPL and the code
generator ask of a script, answered from one analysis.

    from tapir.service import Workspace
    ws = Workspace()
    result = ws.check("play.tap")             # CheckResult(diagnostics=..., related=...)
    ws.complete("play.tap", (3, 14))          # [CompletionItem(label='$songs__list', ...), ...]

``Workspace`` (``workspace.py``) finds each script's app document (``documents.py``: ``--doc``,
the ``# doc:`` line, ``tapir.toml`` read by ``config.py``), caches documents and analyses, and
answers every query; each query is a pure function of a ``ScriptView`` (``script.py``) and a
position, in a module of its own: completion, hover, navigation (definition, references),
outline (document symbols), signatures, semantic tokens, actions (quick fixes), formatting
(``tapir fmt``) and repl (is this input complete?). Results are plain frozen dataclasses with
1-based spans (offsets included); ``tapir.core.positions.LineIndex`` converts to an editor's UTF-16
positions. docs/language-service.md describes the API.
"""

from tapir.core.diagnostics import Diagnostic, Fix, TextEdit
from tapir.core.positions import LineIndex, Position, Span
from tapir.service.actions import CodeAction
from tapir.service.completion import CompletionItem, CompletionKind
from tapir.service.config import CONFIG_NAME, ConfigError, DocumentRule, ProjectConfig, find_config, load_config
from tapir.service.documents import DocumentRef, DocumentStore, LoadedDocument, find_document
from tapir.service.formatting import FormatResult, format_source
from tapir.service.hover import Hover
from tapir.service.navigation import Location
from tapir.service.outline import DocumentSymbol
from tapir.service.repl import InputStatus, input_status
from tapir.service.script import CheckResult, FileDiagnostics, ScriptView
from tapir.service.semantic import TOKEN_MODIFIERS, TOKEN_TYPES, SemanticToken
from tapir.service.sessions import sample_document, session_document
from tapir.service.signatures import ParameterInfo, SignatureHelp, SignatureInfo
from tapir.service.workspace import At, Workspace

__all__ = [
    "CONFIG_NAME", "TOKEN_MODIFIERS", "TOKEN_TYPES", "At", "CheckResult", "CodeAction", "CompletionItem",
    "CompletionKind", "ConfigError", "Diagnostic", "DocumentRef", "DocumentRule", "DocumentStore", "DocumentSymbol",
    "FileDiagnostics", "Fix", "FormatResult", "Hover", "InputStatus", "LineIndex", "LoadedDocument", "Location",
    "ParameterInfo", "Position", "ProjectConfig", "ScriptView", "SemanticToken", "SignatureHelp", "SignatureInfo",
    "Span", "TextEdit", "Workspace", "find_config", "find_document", "format_source", "input_status", "load_config",
    "sample_document", "session_document",
]
