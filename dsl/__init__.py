"""The language: AST with spans, tolerant and strict parsers, the registry of what scripts can
call, the one analysis (scopes, bindings, types, diagnostics) and the sandboxed interpreter.

    from tapir.dsl import parse_tolerant, analyze, run_script, REGISTRY
    result = parse_tolerant(source, "play.tap")
    analysis = analyze(result.module, symbols)

Names are imported on first use (``tapir --help`` stays fast).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it.
_EXPORTS = {
    "parse": "parser", "parse_tolerant": "parser", "ParseResult": "parser",
    "analyze": "analysis", "Analysis": "analysis",
    "check": "checker", "check_source": "checker",
    "Diagnostic": "diagnostics", "Fix": "diagnostics", "TextEdit": "diagnostics",
    "Span": "positions", "Position": "positions", "LineIndex": "positions",
    "REGISTRY": "registry", "Entry": "registry", "Namespace": "registry", "ApiCall": "registry",
    "Kind": "types", "NodeVisitor": "visitor", "SymbolTable": "symbols",
    "Interpreter": "interpreter", "run_script": "interpreter", "RunResult": "interpreter",
    "run_script_isolated": "isolation", "Budgets": "budget",
    "TapirError": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tapir.dsl' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tapir.dsl.{module}"), name)
