"""What compiled closures share at run time: the frame, the control signals, error conversion.

Expression closures (``Eval``) take the current ``Frame`` and return a value; statement closures
(``Exec``) return ``None`` or a control signal (``BREAK``/``CONTINUE``/``RETURN``) instead of raising.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from typing import Any

from tapir.core.errors import ScriptError, Span, TapirError
from tapir.dsl.budget import budget_exceeded, out_of_memory
from tapir.dsl.safeops import short_repr
from tapir.dsl.values import script_message

Eval = Callable[["Frame"], Any]
Exec = Callable[["Frame"], Any]

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"


class Frame:
    """One scope's variables at run time, linked to the enclosing scope's frame."""

    __slots__ = ("vars", "parent", "ret")

    def __init__(self, vars: dict[str, Any], parent: Frame | None) -> None:
        self.vars = vars
        self.parent = parent
        self.ret: Any = None


def convert_exception(exc: BaseException, span: Span | None) -> TapirError:
    """A Python exception raised while running a script, as the error the user sees."""
    if isinstance(exc, TapirError):
        if exc.span is None:
            exc.span = span
        return exc
    if isinstance(exc, RecursionError):
        return budget_exceeded("depth", sys.getrecursionlimit(), "the script nests too deeply", span)
    if isinstance(exc, MemoryError):
        # an allocation the estimates let through failed: the process's own limit (the child
        # process's address space, tapir.dsl.isolation) or the machine's memory ran out
        return out_of_memory(span)
    if isinstance(exc, KeyError):
        return ScriptError(f"KeyError: {short_repr(exc.args[0]) if exc.args else ''}", span)
    if isinstance(exc, ZeroDivisionError | TypeError | ValueError | IndexError | OverflowError | RuntimeError):
        return ScriptError(script_message(str(exc)), span)
    return ScriptError(f"internal error: {type(exc).__name__}: {exc}", span,
                       hint="this is a bug in Tapir; run with --debug for details")


def refuse(exc: TapirError) -> Eval:
    """A closure that raises (a fresh copy of) ``exc`` when run: refusals happen when the
    construct is reached, like every other runtime error, so code that never runs cannot fail."""

    def ev(fr: Frame) -> Any:
        raise copy.copy(exc)

    return ev


def span_of(node: Any) -> Span | None:
    span = getattr(node, "span", None)
    return span if type(span) is Span else None
