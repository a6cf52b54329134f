"""What every layer shares: errors with source spans, diagnostics, positions, the app document
model, element kinds, watchers, safety settings and secrets.

    from tapir.core import AppDocument, Diagnostic, ScriptError, Span

Nothing here imports another layer of Tapir (``tests/test_layers.py``).
"""

from tapir.core.diagnostics import Diagnostic, Fix, TextEdit, render_diagnostics
from tapir.core.document import AppDocument, AppInfo, Dialect, Element, Identifier, Screen, Signature, Step
from tapir.core.errors import (
    ActionError,
    AssertionFailed,
    BudgetExceeded,
    DeviceError,
    DocumentError,
    ElementNotFound,
    HierarchyError,
    Interrupted,
    OutsideApp,
    SafetyError,
    SandboxViolation,
    ScreenNotReached,
    ScriptError,
    ScriptRuntimeError,
    SecretRefused,
    SensitiveActionRefused,
    TapirError,
    TapirSyntaxError,
    UnknownElement,
    UnsupportedConstruct,
    UsageError,
    WaitTimeout,
)
from tapir.core.kinds import Kind
from tapir.core.positions import LineIndex, Position, Span
from tapir.core.safety import Safety, SafetyOptions
from tapir.core.secrets import Secret, SecretStore
from tapir.core.watchers import Watcher

__all__ = [
    "ActionError", "AppDocument", "AppInfo", "AssertionFailed", "BudgetExceeded", "DeviceError", "Diagnostic",
    "Dialect", "DocumentError", "Element", "ElementNotFound", "Fix", "HierarchyError", "Identifier", "Interrupted",
    "Kind", "LineIndex", "OutsideApp", "Position", "Safety", "SafetyError", "SafetyOptions", "SandboxViolation",
    "Screen", "ScreenNotReached", "ScriptError", "ScriptRuntimeError", "Secret", "SecretRefused", "SecretStore",
    "SensitiveActionRefused", "Signature", "Span", "Step", "TapirError", "TapirSyntaxError", "TextEdit",
    "UnknownElement", "UnsupportedConstruct", "UsageError", "WaitTimeout", "Watcher", "render_diagnostics",
]
