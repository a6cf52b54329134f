"""The language's safety functions, ``secret(name)`` and ``allow(what)``, over the run's ``Safety``
(``tapir.core.safety``): the registry (``tapir.dsl.api``) binds them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.core.errors import ScriptError
from tapir.core.safety import Safety
from tapir.core.secrets import SecretStore
from tapir.dsl.values import ElementHandle

if TYPE_CHECKING:
    from tapir.dsl.registry import ApiCall

__all__ = ["allow_impl", "run_safety", "secret_impl"]


def run_safety(host: Any) -> Safety | None:
    """The ``Safety`` of the run a host (the interpreter) executes, if it has one."""
    inputs = getattr(host, "inputs", None)
    safety = getattr(inputs, "safety", None)
    return safety if isinstance(safety, Safety) else None


def secret_impl(call: ApiCall) -> Any:
    """``secret(name)``: the run's secret ``name`` (``tapir.core.secrets``)."""
    safety = run_safety(call.host)
    store = safety.secrets if safety is not None else SecretStore()
    return store.get(call.args["name"], call.span)


def allow_impl(call: ApiCall) -> None:
    """``allow(what)``: grant a permission for the rest of the run (refused for untrusted scripts)."""
    what = call.args["what"]
    safety = run_safety(call.host)
    if safety is None:
        raise ScriptError("allow() needs a run with safety settings (tapir run, test, eval or repl)", call.span)
    raw = f"${what.name}" if isinstance(what, ElementHandle) else what
    if isinstance(what, ElementHandle) and what.path:
        raise ScriptError(f"allow() takes an element of the document, not an item or child of one ({what})",
                          call.span, hint=f"allow(${what.name}) allows the element's items too")
    safety.grant_from_script(raw, f"allow({raw!r}) at line {call.span.line}", call.span)
