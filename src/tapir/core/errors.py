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
    │   ├── BudgetExceeded        steps, UI actions, time, depth or size ran out
    │   ├── SafetyError           a guard stopped the run (docs/safety.md)
    │   │   ├── SensitiveActionRefused  a sensitive action without permission
    │   │   ├── OutsideApp              the device left the run's app and did not come back
    │   │   └── SecretRefused           a secret for a field that is not a password field
    │   └── Interrupted           stopped from outside (Ctrl-C in the REPL), between two device commands
    ├── DocumentError             an app document is invalid (carries every problem)
    ├── DeviceError               a device failed persistently
    ├── HierarchyError            a UI hierarchy dump could not be read
    └── UsageError                bad command-line use
"""

from __future__ import annotations

from tapir.core.diagnostics import ERROR, Diagnostic, count_summary, render_block
from tapir.core.positions import Span
from tapir.core.terminal import bounded

__all__ = [
    "ActionError", "AssertionFailed", "BudgetExceeded", "DeviceError", "DocumentError", "ElementNotFound",
    "HierarchyError", "Interrupted", "OutsideApp", "SafetyError", "SandboxViolation", "ScreenNotReached", "ScriptError",
    "ScriptRuntimeError", "SecretRefused", "SensitiveActionRefused", "Span", "TapirError", "TapirSyntaxError",
    "UnknownElement", "UnsupportedConstruct", "UsageError", "WaitTimeout",
]


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
        # script data quoted in a message is bounded (a megabyte of it in one error otherwise)
        message = bounded(message)
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

    def diagnostic(self) -> Diagnostic:
        """The error as a ``Diagnostic`` (what ``tapir check`` and the language server report)."""
        return Diagnostic(self.code, ERROR, self.span, self.message, self.hint)

    def render(self) -> str:
        """``file:line:col: Category: message``, then the source line and a caret under the span."""
        return render_block(self.category, self.message, self.span, self.source, self.filename, self.hint)

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


class WaitTimeout(ScriptRuntimeError):
    """A wait (``$x.wait()``, ``$x.wait_gone()``, ``wait_text()``) ran out of time; the message
    says what the device showed last."""

    code = "wait-timeout"


class SandboxViolation(ScriptRuntimeError):
    code = "sandbox"


class BudgetExceeded(ScriptRuntimeError):
    code = "budget"


class SafetyError(ScriptRuntimeError):
    """A guard of the run stopped it (``docs/safety.md``); the message names what was refused and
    the hint how to allow it. Nothing of the refused action reached the device."""

    code = "safety"


class SensitiveActionRefused(SafetyError):
    """A tap the document marks sensitive, whose label says delete/send/pay..., or that confirms a
    payment, permission or warning dialog, without permission (``--allow``, ``allow()``) or a
    yes in the REPL."""

    code = "sensitive"


class OutsideApp(SafetyError):
    """Another app came to the front (not the run's app nor one it allows) and the run stops
    (``--foreign-app stop``) or could not return to its app."""

    code = "outside-app"


class SecretRefused(SafetyError):
    """A ``secret()`` value for a field that is not a password field, without ``--allow secrets``."""

    code = "secret"


class Interrupted(ScriptRuntimeError):
    """The run was asked to stop from outside (``Meter.request_interrupt``: Ctrl-C in the REPL).

    It is raised at a step of the script or between two device commands, never inside one, so
    no gesture is left half-done; the span is the construct that was running."""

    code = "interrupted"


class AssertionFailed(ScriptRuntimeError):
    """An ``assert`` in a test script did not hold."""

    code = "assert"


class DocumentError(TapirError):
    """An app document is invalid. ``problems`` holds every problem found, not just the first,
    each a ``Diagnostic`` in the document's file."""

    code = "document"

    def __init__(self, message: str, problems: list[Diagnostic] | None = None, *, filename: str | None = None,
                 source: str | None = None) -> None:
        super().__init__(message, filename=filename, source=source)
        self.problems = list(problems or [])

    def render(self) -> str:
        """The message, then every problem rendered with the document's line and a caret."""
        where = self.filename or "<document>"
        if not self.problems:
            return f"{where}: {self.category}: {self.message}"
        source = self.source
        if source is None and self.filename is not None:
            try:
                with open(self.filename, encoding="utf-8") as f:
                    source = f.read()
            except (OSError, UnicodeDecodeError):
                source = None
        out = [f"{where}: {self.message} ({count_summary(self.problems)})"]
        out += [p.render(source, where) for p in self.problems]
        return "\n".join(out)


class DeviceError(TapirError):
    """A device command failed after retries; names the device and the command."""

    code = "device"


class HierarchyError(TapirError):
    """A UI hierarchy dump (uiautomator XML, DroidBot JSON) is malformed or of an unknown format."""

    code = "hierarchy"


class UsageError(TapirError):
    """A setting or argument that cannot work. When it is about one setting, ``setting`` names it
    (``trace``, ``param``, ``allow_apps``) and the message does not: each front end says which in
    its own words (``tapir.cli`` as its flag, ``--trace: ...``; ``in_words()`` as the setting)::

        UsageError("cannot write out.jsonl: Permission denied", setting="trace").in_words()
        # 'trace: cannot write out.jsonl: Permission denied'
    """

    code = "usage"

    def __init__(self, message: str, span: Span | None = None, *, setting: str | None = None,
                 filename: str | None = None, source: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, span, filename=filename, source=source, hint=hint)
        #: The setting the error is about (None: the whole call, or several settings).
        self.setting = setting

    def in_words(self, name: str | None = None) -> str:
        """The message led by what names the setting: ``name`` (a front end's flag), else the setting."""
        label = name or self.setting
        return f"{label}: {self.message}" if label else self.message
