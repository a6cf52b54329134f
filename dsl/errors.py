"""The one error hierarchy of Tapir.

Every error a user can see is a ``TapirError``. Errors that come from a script carry the
``Span`` of the failing construct so that every front end (CLI, LSP, REPL, repair prompts)
can point at the line; ``render()`` gives the ``file:line:col`` form with the source line and
a caret.

    TapirError
    ├── TapirSyntaxError          the text is not a Tapir script
    ├── UnsupportedConstruct      valid Python, refused by Tapir (import, class, lambda, ...)
    ├── ScriptRuntimeError        raised while a script runs
    │   ├── UnknownElement        the name is not in the app document
    │   ├── ElementNotFound       right screen, element absent
    │   ├── ScreenNotReached      navigation to the element's screen failed
    │   ├── ActionError           illegal action, match or index failure
    │   ├── ScriptError           the script's own logic: name, type and value errors
    │   ├── SandboxViolation      the script tried to leave the sandbox
    │   └── BudgetExceeded        steps, UI actions, time, depth or size ran out
    ├── DocumentError             an app document is invalid (carries every problem)
    ├── DeviceError               a device failed persistently
    ├── HierarchyError            a UI hierarchy dump could not be read
    └── UsageError                bad command-line use
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Span:
    """A region of source text. Lines and columns are 1-based; the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int) -> Span:
        return cls(line, column, line, column + 1)

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


#: How much of a long source line is quoted on either side of the error.
_QUOTE_CONTEXT = 60


def _quote(raw: str, span: Span) -> list[str]:
    """The source line and a caret line under ``span``; long lines are cut around the span."""
    text = raw.expandtabs(4)
    # Columns count characters of the raw line; the caret must sit under the expanded one.
    start = len(raw[: max(span.column - 1, 0)].expandtabs(4))
    if span.end_line == span.line:
        end = len(raw[: max(span.end_column - 1, 0)].expandtabs(4))
    else:
        end = len(text)
    end = max(end, start + 1)
    lo = max(start - _QUOTE_CONTEXT, 0)
    hi = min(end + _QUOTE_CONTEXT, len(text))
    prefix = "..." if lo > 0 else ""
    suffix = "..." if hi < len(text) else ""
    caret = " " * (len(prefix) + start - lo) + "^" * max(min(end, hi) - start, 1)
    return [f"    {prefix}{text[lo:hi]}{suffix}", f"    {caret}"]


class TapirError(Exception):
    """Base of every error Tapir reports to a person."""

    code = "error"

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        filename: str | None = None,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.filename = filename
        self.source = source
        self.hint = hint

    def with_source(self, source: str | None, filename: str | None = None) -> TapirError:
        """Attach the script text (and its file name) so ``render`` can quote the line."""
        if self.source is None:
            self.source = source
        if self.filename is None:
            self.filename = filename
        return self

    @property
    def category(self) -> str:
        return type(self).__name__

    def location(self) -> str | None:
        """``file:line:col``; None for an error that belongs to no file (a device, a port...)."""
        if self.filename is None and self.span is None:
            return None
        where = self.filename or "<script>"
        if self.span is None:
            return where
        return f"{where}:{self.span.line}:{self.span.column}"

    def render(self) -> str:
        """``file:line:col: Category: message``, then the source line and a caret under the span."""
        where = self.location()
        lines = [f"{where}: {self.category}: {self.message}" if where else f"{self.category}: {self.message}"]
        if self.span is not None and self.source is not None:
            src_lines = self.source.splitlines()
            if 1 <= self.span.line <= len(src_lines):
                lines += _quote(src_lines[self.span.line - 1], self.span)
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class TapirSyntaxError(TapirError):
    code = "syntax"


class UnsupportedConstruct(TapirSyntaxError):
    code = "unsupported"


class ScriptRuntimeError(TapirError):
    code = "runtime"


class UnknownElement(ScriptRuntimeError):
    code = "unknown-element"


class ElementNotFound(ScriptRuntimeError):
    code = "element-not-found"


class ScreenNotReached(ScriptRuntimeError):
    code = "screen-not-reached"


class ActionError(ScriptRuntimeError):
    code = "action"


class ScriptError(ScriptRuntimeError):
    code = "script"


class SandboxViolation(ScriptRuntimeError):
    code = "sandbox"


class BudgetExceeded(ScriptRuntimeError):
    code = "budget"


class AssertionFailed(ScriptRuntimeError):
    """An ``assert`` in a test script did not hold."""

    code = "assert"


@dataclass(frozen=True)
class Problem:
    """One problem found in a document or a script check; many are reported together."""

    message: str
    line: int | None = None
    column: int | None = None
    severity: str = "error"
    code: str = "error"


class DocumentError(TapirError):
    """An app document is invalid. ``problems`` holds every problem found, not just the first."""

    code = "document"

    def __init__(self, message: str, problems: list[Problem] | None = None, *, filename: str | None = None):
        super().__init__(message, filename=filename)
        self.problems = list(problems or [])

    def render(self) -> str:
        where = self.filename or "<document>"
        if not self.problems:
            return f"{where}: {self.category}: {self.message}"
        out = [f"{where}: {self.message} ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''})"]
        for p in self.problems:
            loc = f"{where}:{p.line}" if p.line is not None else where
            out.append(f"{loc}: {p.severity}: {p.message}")
        return "\n".join(out)


class DeviceError(TapirError):
    """A device command failed after retries; names the device and the command."""

    code = "device"


class HierarchyError(TapirError):
    """A UI hierarchy dump (uiautomator XML, DroidBot JSON) is malformed or of an unknown format."""

    code = "hierarchy"


class UsageError(TapirError):
    code = "usage"
