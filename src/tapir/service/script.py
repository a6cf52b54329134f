"""One script as the language service sees it: text, tolerant parse, analysis, document, and
every diagnostic, in one immutable ``ScriptView`` that the queries read.

    view = build_view(path, source, ref, loaded)
    view.diagnostics              # syntax, checker, document and project problems, by position
    view.node_path(view.at(3, 7)) # the nodes around line 3 column 7, outermost first

``check_result`` turns a view into what ``tapir check`` prints (``CheckResult``), with the
problems found in other files (the document, ``tapir.toml``) beside the script's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tapir.core.diagnostics import ERROR, WARNING, Diagnostic, count_summary
from tapir.core.positions import LineIndex, Position, Span
from tapir.dsl import ast as A
from tapir.dsl.analysis import Analysis, analyze
from tapir.dsl.gcpause import paused_gc
from tapir.dsl.parser import ParseResult, parse_tolerant
from tapir.dsl.screen_calls import first_document_use
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.tokens import Token
from tapir.service.documents import DocumentRef, LoadedDocument
from tapir.service.reparse import reparse

__all__ = ["CheckResult", "FileDiagnostics", "ScriptView", "build_view", "check_result"]


@dataclass(frozen=True)
class FileDiagnostics:
    """Problems in a file other than the script: its document, ``tapir.toml``."""

    path: str
    diagnostics: tuple[Diagnostic, ...]
    text: str | None = None


@dataclass(frozen=True)
class ScriptView:
    """A script with everything the queries need; nothing in it changes.

    The analysis (and so the diagnostics) is made when first asked for: a query that needs only
    the text, the tree and the document (completing ``$elements``, the methods of an element)
    does not wait for it after an edit."""

    path: Path | None
    #: The text as parsed (newlines normalised): spans and offsets refer to it.
    text: str
    parsed: ParseResult
    document_ref: DocumentRef | None
    document: LoadedDocument | None
    related: tuple[FileDiagnostics, ...] = ()
    index: LineIndex = field(default_factory=lambda: LineIndex(""))
    #: More problems of the script than its parse and analysis find (the project's settings).
    extra: tuple[Diagnostic, ...] = ()

    @property
    def module(self) -> A.Module:
        return self.parsed.module

    @property
    def symbols(self) -> SymbolTable | None:
        return self.document.symbols if self.document is not None else None

    @cached_property
    def analysis(self) -> Analysis:
        # the analysis allocates hundreds of thousands of small objects, freed by reference
        # counting: the cyclic collector, were it triggered, would scan every live analysis
        with paused_gc():
            return analyze(self.parsed.module, self.symbols, str(self.path) if self.path is not None else None)

    @cached_property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Every problem of the script (syntax, checks, its document, the project), by position."""
        analysis = self.analysis
        found = [*self.parsed.errors, *analysis.diagnostics,
                 *_document_diagnostics(self.document_ref, self.document, analysis), *self.extra]
        found.sort(key=lambda d: (d.span or Span(0, 0, 0, 0), d.code))
        return tuple(found)

    @property
    def tokens(self) -> tuple[Token, ...]:
        return self.parsed.tokens

    def at(self, line: int, column: int) -> Position:
        """``line:column`` (1-based, code points) with its offset."""
        return self.index.at(line, column)

    def token_at(self, pos: Position) -> Token | None:
        """The token that contains ``pos`` or ends right at it (a name being typed)."""
        found = None
        for tok in self.tokens:
            if tok.span.offset > pos.offset:
                break
            if tok.span.offset <= pos.offset <= tok.span.end_offset and tok.kind != "NEWLINE":
                found = tok
        return found

    def node_path(self, pos: Position) -> list[A.Node]:
        """The nodes whose spans contain ``pos``, outermost (the module) first, innermost last."""
        path: list[A.Node] = [self.module]
        node: A.Node = self.module
        while True:
            inner = None
            for child in node.children():
                s = child.span
                if s.offset <= pos.offset <= s.end_offset:
                    inner = child
                    if s.offset < pos.offset < s.end_offset:
                        break  # strictly inside: no sibling can be closer
            if inner is None:
                return path
            path.append(inner)
            node = inner


def _document_diagnostics(ref: DocumentRef | None, loaded: LoadedDocument | None,
                          analysis: Analysis) -> list[Diagnostic]:
    """What the script's document (or its absence) means for the script itself."""
    if ref is None:
        # screen-level actions (tap_text, swipe, press_key...) need no document; elements do
        at = first_document_use(analysis.module) if analysis.needs_device else None
        if at is not None:
            return [Diagnostic(
                "no-document", ERROR, at,
                "this script works on the app but names no app document, so its elements cannot be checked "
                "or found",
                hint="start the script with `# doc: app.yaml`, pass --doc, or map it in tapir.toml [documents]",
            )]
        return []
    if loaded is None or loaded.ok:
        return []
    missing = [p for p in loaded.problems if p.code == "document-missing"]
    if missing:
        return [Diagnostic("document-missing", ERROR, ref.span, missing[0].message + f" (named by {ref.describe()})")]
    errors = loaded.errors
    first = errors[0] if errors else None
    where = f" (first at line {first.line}: {first.message})" if first is not None and first.line else (
        f" ({first.message})" if first is not None else "")
    return [Diagnostic("document", ERROR, ref.span,
                       f"the app document {ref.path} is invalid: {count_summary(loaded.problems)}{where}",
                       hint=f"run `tapir doc validate {ref.path}` to see every problem")]


def build_view(path: Path | None, source: str, ref: DocumentRef | None, loaded: LoadedDocument | None,
               extra: tuple[Diagnostic, ...] = (), related: tuple[FileDiagnostics, ...] = (),
               previous: ParseResult | None = None) -> ScriptView:
    """Parse ``source`` (the analysis against the loaded document follows when first asked
    for); ``extra`` are more problems of the script (the project's configuration).
    ``previous``, a parse of an earlier version of the script, makes the parse reuse the
    statements the edit did not touch (``reparse``)."""
    name = str(path) if path else "<script>"
    with paused_gc():
        parsed = reparse(previous, source, name) if previous is not None else parse_tolerant(source, name)
    readable = loaded is not None and loaded.text is not None  # (a missing file has no problems of its own)
    if loaded is not None and readable and loaded.problems and not any(r.path == str(loaded.path) for r in related):
        related = (*related, FileDiagnostics(str(loaded.path), loaded.problems, loaded.text))
    return ScriptView(path, parsed.text, parsed, ref, loaded, related, LineIndex(parsed.text), extra)


@dataclass(frozen=True)
class CheckResult:
    """What ``tapir check`` reports for one script."""

    path: str
    source: str
    document: DocumentRef | None
    symbols: SymbolTable | None
    #: The script's problems, by position.
    diagnostics: tuple[Diagnostic, ...]
    #: Problems of other files the script depends on (its document's, tapir.toml's).
    related: tuple[FileDiagnostics, ...] = ()

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == WARNING)

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def blocking(self, warnings: str = "warn") -> tuple[Diagnostic, ...]:
        """What stops ``tapir run`` and ``tapir test`` before the device is touched: the errors,
        and the warnings too when the project says ``warnings = "error"``."""
        if warnings == "error":
            return tuple(d for d in self.diagnostics if d.severity in (ERROR, WARNING))
        return self.errors

    def shown(self, warnings: str = "warn") -> tuple[Diagnostic, ...]:
        """What is reported: every error and warning (warnings left out with ``"ignore"``)."""
        if warnings == "ignore":
            return self.errors
        return tuple(d for d in self.diagnostics if d.severity in (ERROR, WARNING))

    def render(self, warnings: str = "warn") -> str:
        """The problems of the script, then those of the files it depends on, each rendered with
        its line and a caret (empty when there are none)."""
        blocks = [d.render(self.source, self.path) for d in self.shown(warnings)]
        for other in self.related:
            shown = [d for d in other.diagnostics if d.severity == ERROR or warnings != "ignore"]
            blocks += [d.render(other.text, other.path) for d in shown]
        return "\n".join(blocks)


def check_result(view: ScriptView, source: str) -> CheckResult:
    return CheckResult(str(view.path) if view.path else "<script>", source, view.document_ref, view.symbols,
                       view.diagnostics, view.related)
