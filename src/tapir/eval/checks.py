"""Success checks of a task: Python expressions on the simulated app's final state.

A sample-app task says what must hold once its script has run, as one or more expressions::

    check:
      - any(a.hour == 7 and a.minute == 30 and a.enabled for a in state.alarms)
      - app.current_dialog is None

Each expression sees ``state`` (the app's data model, e.g. ``MusicState``), ``app`` (the simulated
app: ``current_screen``, ``current_dialog``, ``toasts``, ``now``), ``printed`` (the lines the script
printed) and ``output`` (the same, joined with newlines), plus a small set of builtins (``any``,
``all``, ``len``, ``sorted``, ``next``...). Expressions are checked when the suite is loaded: a
syntax error, an unknown name or a private attribute (``_x``) is reported at its line in the suite
file, so a typo never turns into a silently failing task.

A suite is code you trust, like a test file: the expressions are restricted to keep mistakes out,
not to sandbox a hostile author.

    expr = compile_check("state.theme == 'Dark'")          # raises CheckSyntaxError
    outcome = expr.evaluate({"state": app.state, "app": app, "printed": [], "output": ""})
    outcome.ok, outcome.message    # False, "state.theme == 'Dark' is false: state.theme is 'White'"
"""

from __future__ import annotations

import ast
import builtins
import difflib
from dataclasses import dataclass
from typing import Any

#: The names a check expression may use besides the builtins below.
CHECK_NAMES: tuple[str, ...] = ("state", "app", "printed", "output")

_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len", "list", "max", "min",
                 "next", "range", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip")
}
_BUILTINS.update({"True": True, "False": False, "None": None})

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Attribute, ast.Subscript,
    ast.Slice, ast.Name, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.IfExp, ast.JoinedStr, ast.FormattedValue,
    ast.Load, ast.Store, ast.keyword, ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)


class CheckSyntaxError(ValueError):
    """A check expression that cannot be used; ``column`` is 1-based within the expression."""

    def __init__(self, message: str, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


@dataclass(frozen=True)
class CheckOutcome:
    ok: bool
    #: Why it failed (the expression, and the values compared when it is a comparison); "" when ok.
    message: str = ""


@dataclass(frozen=True)
class CheckExpression:
    """A compiled check; ``evaluate`` never raises for what the expression itself does."""

    text: str
    _code: Any
    #: For a single comparison ``a == b``: the text and code of both operands, to show their values.
    _operands: tuple[tuple[str, Any], ...] = ()

    def evaluate(self, names: dict[str, Any]) -> CheckOutcome:
        scope = {"__builtins__": _BUILTINS, **names}
        try:
            value = eval(self._code, scope)  # noqa: S307 - restricted by compile_check; suites are trusted
        except Exception as exc:  # the app state is not what the expression expects
            return CheckOutcome(False, f"{self.text} raised {type(exc).__name__}: {exc}".rstrip(": "))
        if value:
            return CheckOutcome(True)
        shown = []
        for text, code in self._operands:
            if _is_literal(text):
                continue
            try:
                shown.append(f"{text} is {_short(eval(code, scope))}")  # noqa: S307
            except Exception:  # noqa: BLE001 - the whole expression already failed; keep its message plain
                continue
        detail = f": {'; '.join(shown)}" if shown else ""
        return CheckOutcome(False, f"{self.text} is false{detail}")


def compile_check(text: str) -> CheckExpression:
    """Parse and vet one check expression (see the module docstring)."""
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise CheckSyntaxError(f"not a Python expression: {exc.msg}", exc.offset or 1) from None
    bound = _comprehension_names(tree)
    for node in ast.walk(tree):
        column = getattr(node, "col_offset", 0) + 1
        if not isinstance(node, _ALLOWED_NODES):
            raise CheckSyntaxError(f"{type(node).__name__} is not allowed in a check", column)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise CheckSyntaxError(f"private attribute {node.attr!r} is not allowed in a check", column)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in CHECK_NAMES and node.id not in _BUILTINS and node.id not in bound:
                known = [*CHECK_NAMES, *_BUILTINS]
                close = difflib.get_close_matches(node.id, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(CHECK_NAMES)})"
                raise CheckSyntaxError(f"unknown name {node.id!r}{hint}", column)
    code = compile(tree, "<check>", "eval")
    operands: tuple[tuple[str, Any], ...] = ()
    body = tree.body
    if isinstance(body, ast.Compare) and len(body.ops) == 1:
        parts = (body.left, body.comparators[0])
        operands = tuple((ast.unparse(p), compile(ast.Expression(p), "<check>", "eval")) for p in parts)
    return CheckExpression(source, code, operands)


def _comprehension_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["CHECK_NAMES", "CheckExpression", "CheckOutcome", "CheckSyntaxError", "compile_check"]
