"""Code actions: the quick fixes of the diagnostics in a range (replace an unknown element with
the closest names, a misspelt function or method with the ones meant).

    for action in code_actions(view, span):
        action.title, action.edits, action.diagnostic   # 'Replace with $songs__list', (TextEdit,), ...
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.diagnostics import Diagnostic, TextEdit
from tapir.core.positions import Span
from tapir.service.script import ScriptView

__all__ = ["CodeAction", "code_actions"]


@dataclass(frozen=True)
class CodeAction:
    title: str
    edits: tuple[TextEdit, ...]
    #: The diagnostic it fixes.
    diagnostic: Diagnostic
    #: ``quickfix`` (LSP's code action kind).
    kind: str = "quickfix"
    #: The best fix of its diagnostic (editors apply it on a "fix this" key).
    preferred: bool = False


def _overlaps(a: Span, b: Span) -> bool:
    return (a.line, a.column) <= (b.end_line, b.end_column) and (b.line, b.column) <= (a.end_line, a.end_column)


def code_actions(view: ScriptView, span: Span) -> list[CodeAction]:
    """The fixes of every diagnostic that overlaps ``span``, best first for each."""
    out: list[CodeAction] = []
    for d in view.diagnostics:
        if d.span is None or not _overlaps(d.span, span):
            continue
        for i, fix in enumerate(d.fixes):
            out.append(CodeAction(fix.title, fix.edits, d, preferred=i == 0))
    return out
