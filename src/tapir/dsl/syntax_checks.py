"""What the parser reports after reading: refused constructs, and statements out of place.

    problems = post_parse_problems(module)      # every one, in source order (a tolerant parse)
    problems = statement_context_problems(module)   # 'break'/'continue'/'return' out of place

The parser keeps what it reads but does not allow as ``Refused`` nodes, where they stand (a set
literal, a lambda's assignment target, 'else' on a loop...); this pass turns each into the error a
person reads (``UnsupportedConstruct`` or ``TapirSyntaxError`` with its hint). It also refuses
'break' and 'continue' outside a loop and 'return' outside a function, as Python does.
"""

from __future__ import annotations

from tapir.core.errors import TapirError, TapirSyntaxError, UnsupportedConstruct
from tapir.dsl import ast as A
from tapir.dsl.visitor import NodeVisitor

__all__ = ["post_parse_problems", "refusal_error", "statement_context_problems"]


def refusal_error(node: A.Refused) -> TapirSyntaxError:
    """The error a ``Refused`` node stands for."""
    cls = UnsupportedConstruct if node.code == "unsupported" else TapirSyntaxError
    return cls(node.message, node.span, hint=node.hint)


class _StatementChecks(NodeVisitor[None]):
    """Walks the statements, knowing whether each is inside a loop and inside a function; with
    ``refusals`` it also reports every ``Refused`` node (searching expressions iteratively: a
    sum of 20,000 terms nests deeper than a recursive walk can go)."""

    def __init__(self, refusals: bool) -> None:
        self.refusals = refusals
        self.problems: list[TapirError] = []
        self.in_loop = False
        self.in_function = False

    def block(self, body: tuple[A.Stmt, ...], *, loop: bool | None = None, function: bool | None = None) -> None:
        saved = self.in_loop, self.in_function
        if loop is not None:
            self.in_loop = loop
        if function is not None:
            self.in_function = function
        for stmt in body:
            self.visit(stmt)
        self.in_loop, self.in_function = saved

    def expressions(self, *nodes: A.Node | None) -> None:
        if not self.refusals:
            return
        for node in nodes:
            if node is None:
                continue
            for n in node.walk():
                if type(n) is A.Refused:
                    self.problems.append(refusal_error(n))

    # statements: expressions are searched, blocks walked with their context

    def generic_visit(self, node: object, context: object = None) -> None:
        if isinstance(node, A.Node):
            self.expressions(node)

    def visit_Module(self, node: A.Module) -> None:
        self.block(node.body)

    def visit_Refused(self, node: A.Refused) -> None:
        if self.refusals:
            self.problems.append(refusal_error(node))
        for part in node.parts:
            if isinstance(part, A.ExprStmt | A.Assign | A.AugAssign | A.If | A.While | A.For | A.Break | A.Continue
                          | A.Pass | A.FunctionDef | A.Return | A.Assert | A.ErrorStmt | A.Refused):
                self.visit(part)
            else:
                self.expressions(part)

    def visit_ErrorStmt(self, node: A.ErrorStmt) -> None:
        # the block under a broken header is read as that header's: a def's, a loop's
        first = node.text.split(None, 1)[0] if node.text.strip() else ""
        if first == "def":
            self.block(node.body, loop=False, function=True)
        elif first in ("for", "while"):
            self.block(node.body, loop=True)
        else:
            self.block(node.body)

    def visit_If(self, node: A.If) -> None:
        self.expressions(node.test)
        self.block(node.body)
        self.block(node.orelse)

    def visit_While(self, node: A.While) -> None:
        self.expressions(node.test)
        self.block(node.body, loop=True)

    def visit_For(self, node: A.For) -> None:
        self.expressions(node.target, node.iter)
        self.block(node.body, loop=True)

    def visit_FunctionDef(self, node: A.FunctionDef) -> None:
        self.expressions(*node.params)
        self.block(node.body, loop=False, function=True)

    def visit_Break(self, node: A.Break) -> None:
        if not self.in_loop:
            self.problems.append(TapirSyntaxError("'break' outside a loop", node.span))

    def visit_Continue(self, node: A.Continue) -> None:
        if not self.in_loop:
            self.problems.append(TapirSyntaxError("'continue' outside a loop", node.span))

    def visit_Return(self, node: A.Return) -> None:
        if not self.in_function:
            self.problems.append(TapirSyntaxError("'return' outside a function", node.span))
        self.expressions(node.value)


def post_parse_problems(module: A.Module, refusals: bool = True) -> list[TapirError]:
    """Every refused construct and misplaced statement of ``module``, in source order
    (``refusals=False``: the parser made no ``Refused`` node, so expressions need no search)."""
    checks = _StatementChecks(refusals=refusals)
    checks.visit(module)
    return sorted(checks.problems, key=lambda e: e.span or module.span)


def statement_context_problems(module: A.Module) -> list[TapirError]:
    """'break'/'continue' outside a loop and 'return' outside a function (statements only: the
    strict parse has already raised any refusal)."""
    checks = _StatementChecks(refusals=False)
    checks.visit(module)
    return checks.problems
