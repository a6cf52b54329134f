"""What a run is given besides its script: parameters (``tapir run s.tap --param user=ada``),
read by the script with ``param("user")``.

    inputs = ScriptInputs.from_options(["user=ada", "n=3"])     # UsageError for a malformed one
    Interpreter(factory, inputs=inputs)                          # or run_script(..., inputs=inputs)

Parameters are text, as a command line gives them (``int(param("n"))`` for a number). Values a
run must not print or trace (passwords, tokens) are a separate kind of input: ``secret("NAME")``
reads them from ``safety.secrets`` (``tapir.core.secrets``), and ``safety`` is also what the run is
allowed to do (``tapir.core.safety``; the device runtime's guards read the same object).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from tapir.core.errors import ScriptError, Span, UsageError

if TYPE_CHECKING:
    from tapir.core.safety import Safety

__all__ = ["PARAM_NAME", "ScriptInputs"]

#: A parameter name: a Python-like identifier (dots and dashes allowed, for ``app.user``, ``max-items``).
PARAM_NAME = re.compile(r"[A-Za-z_][\w.-]*")


def _default_safety() -> Safety:
    # imported when first needed: tapir.core.safety registers API functions, after the API's own
    from tapir.core.safety import Safety

    return Safety()


@dataclass(frozen=True)
class ScriptInputs:
    """The parameters of one run, by name, and its safety settings (secrets included)."""

    params: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    safety: Safety = field(default_factory=_default_safety)

    @classmethod
    def from_options(cls, items: Iterable[str] | None, *, safety: Safety | None = None) -> ScriptInputs:
        """Parse ``NAME=VALUE`` items as ``--param`` gives them; a malformed item or a name given
        twice is a ``UsageError`` (a silently ignored duplicate hides a typo in a CI file)."""
        params: dict[str, str] = {}
        for item in items or ():
            name, sep, value = item.partition("=")
            name = name.strip()
            if not sep:
                raise UsageError(f"{item!r}: expected NAME=VALUE, e.g. user=ada", setting="param")
            if not PARAM_NAME.fullmatch(name):
                raise UsageError(f"{item!r}: {name!r} is not a parameter name "
                                 "(letters, digits, '_', '.', '-'; not starting with a digit)", setting="param")
            if name in params:
                raise UsageError(f"{name} is given twice ({params[name]!r} and {value!r})", setting="param")
            params[name] = value
        return cls(MappingProxyType(params), safety if safety is not None else _default_safety())

    def param(self, name: str, default: str | None, span: Span | None) -> str:
        """The value of parameter ``name``; ``default`` when it was not given; else an error that
        names the parameter and how to pass it."""
        value = self.params.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        given = ", ".join(sorted(self.params)) or "none"
        raise ScriptError(f"the script needs the parameter {name!r}, which was not given (given: {given})", span,
                          hint=f"pass it with `tapir run SCRIPT --param {name}=VALUE`, or give a default: "
                               f"param({name!r}, default=...)")
