"""The language: AST with spans, tolerant and strict parsers, the registry of what scripts can
call, the one analysis (scopes, bindings, types, diagnostics) and the sandboxed interpreter.

    from tapir.dsl import parse_tolerant, analyze, run_script, REGISTRY
    result = parse_tolerant(source, "play.tap")
    analysis = analyze(result.module, symbols)

``tapir --help`` imports none of this: the commands import the language when they run.
"""

from tapir.core.diagnostics import Diagnostic, Fix, TextEdit
from tapir.core.errors import TapirError
from tapir.core.kinds import Kind
from tapir.core.positions import LineIndex, Position, Span
from tapir.dsl.analysis import Analysis, analyze
from tapir.dsl.budget import Budgets
from tapir.dsl.checker import check, check_source
from tapir.dsl.interpreter import Interpreter, RunResult, run_script
from tapir.dsl.isolation import run_script_isolated
from tapir.dsl.parser import ParseResult, parse, parse_tolerant
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.visitor import NodeVisitor

__all__ = [
    "REGISTRY", "Analysis", "ApiCall", "Budgets", "Diagnostic", "Entry", "Fix", "Interpreter", "Kind", "LineIndex",
    "Namespace", "NodeVisitor", "ParseResult", "Position", "RunResult", "Span", "SymbolTable", "TapirError",
    "TextEdit", "analyze", "check", "check_source", "parse", "parse_tolerant", "run_script", "run_script_isolated",
]
