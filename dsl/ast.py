"""The Tapir AST: frozen dataclasses, every node with a 1-based ``Span``.

The parser builds these; the checker, interpreter, LSP and code generator read them. Nodes are
immutable and hashable, so analyses can key dictionaries by node. Collections are tuples.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from tapir.dsl.errors import Span


@dataclass(frozen=True)
class Node:
    span: Span

    def children(self) -> Iterator[Node]:
        """Direct child nodes, in source order."""
        for f in fields(self):
            if f.name == "span":
                continue
            yield from _nodes_in(getattr(self, f.name))

    def walk(self) -> Iterator[Node]:
        """This node and all its descendants, depth first, in source order."""
        yield self
        for child in self.children():
            yield from child.walk()


def _nodes_in(value: Any) -> Iterator[Node]:
    if isinstance(value, Node):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _nodes_in(item)


# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class Constant(Node):
    """A literal: str, int, float, bool or None."""

    value: str | int | float | bool | None


@dataclass(frozen=True)
class FString(Node):
    """An f-string: literal text parts (``Constant``) and ``FormattedValue`` parts, in order."""

    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class FormattedValue(Node):
    """``{value!conversion:format_spec}`` inside an f-string."""

    value: Expr
    conversion: str | None = None
    format_spec: str | None = None


@dataclass(frozen=True)
class Name(Node):
    id: str


@dataclass(frozen=True)
class ElementRef(Node):
    """``$screen__element``: a reference to an element of the app document.

    ``name`` is the text after ``$``. The screen is the part before the first ``__``.
    """

    name: str

    @property
    def screen(self) -> str:
        return self.name.split("__", 1)[0] if "__" in self.name else ""


@dataclass(frozen=True)
class ListExpr(Node):
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class TupleExpr(Node):
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class DictExpr(Node):
    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True)
class BinOp(Node):
    """Arithmetic: ``op`` is one of ``+ - * / // % **``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class UnaryOp(Node):
    """``op`` is one of ``not - +``."""

    op: str
    operand: Expr


@dataclass(frozen=True)
class BoolOp(Node):
    """``op`` is ``and`` or ``or``; ``values`` has two or more operands."""

    op: str
    values: tuple[Expr, ...]


@dataclass(frozen=True)
class Compare(Node):
    """A possibly chained comparison: ``left ops[0] comparators[0] ops[1] ...``.

    ``ops`` are ``== != < <= > >= in not in is is not``.
    """

    left: Expr
    ops: tuple[str, ...]
    comparators: tuple[Expr, ...]


@dataclass(frozen=True)
class IfExp(Node):
    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True)
class Slice(Node):
    lower: Expr | None
    upper: Expr | None
    step: Expr | None


@dataclass(frozen=True)
class Subscript(Node):
    """``value[index]``; ``index`` may be a ``Slice``."""

    value: Expr
    index: Expr


@dataclass(frozen=True)
class Attribute(Node):
    """``value.attr``; only ever evaluated as the callee of a method call."""

    value: Expr
    attr: str
    attr_span: Span | None = None


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: Expr


@dataclass(frozen=True)
class Call(Node):
    """``func(args..., name=value...)``; a method call has an ``Attribute`` as ``func``."""

    func: Expr
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...] = ()


@dataclass(frozen=True)
class Comprehension(Node):
    """``for target in iter if conds...`` inside a list comprehension."""

    target: Target
    iter: Expr
    conds: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class ListComp(Node):
    elt: Expr
    generators: tuple[Comprehension, ...]


Expr = (
    Constant | FString | FormattedValue | Name | ElementRef | ListExpr | TupleExpr | DictExpr | BinOp | UnaryOp
    | BoolOp | Compare | IfExp | Slice | Subscript | Attribute | Call | ListComp
)
# Assignment targets: Name, Subscript, or a TupleExpr/ListExpr of targets.
Target = Name | Subscript | TupleExpr | ListExpr


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True)
class ExprStmt(Node):
    value: Expr


@dataclass(frozen=True)
class Assign(Node):
    """``a = b = value``: one or more targets, each possibly a tuple to unpack."""

    targets: tuple[Target, ...]
    value: Expr


@dataclass(frozen=True)
class AugAssign(Node):
    """``target op= value``; ``op`` is the arithmetic operator without ``=``."""

    target: Target
    op: str
    value: Expr


@dataclass(frozen=True)
class If(Node):
    """``elif`` chains nest: the ``orelse`` of an ``if`` holds a single ``If``."""

    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class While(Node):
    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class For(Node):
    target: Target
    iter: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Break(Node):
    pass


@dataclass(frozen=True)
class Continue(Node):
    pass


@dataclass(frozen=True)
class Pass(Node):
    pass


@dataclass(frozen=True)
class Param(Node):
    name: str
    default: Expr | None = None


@dataclass(frozen=True)
class FunctionDef(Node):
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    docstring: str | None = None


@dataclass(frozen=True)
class Return(Node):
    value: Expr | None = None


@dataclass(frozen=True)
class Assert(Node):
    test: Expr
    msg: Expr | None = None


Stmt = ExprStmt | Assign | AugAssign | If | While | For | Break | Continue | Pass | FunctionDef | Return | Assert


@dataclass(frozen=True)
class Module(Node):
    """A whole script. ``docstring`` is the leading string literal, if any (not in ``body``)."""

    body: tuple[Stmt, ...]
    docstring: str | None = None


def element_refs(node: Node) -> Iterator[ElementRef]:
    """Every ``$element`` reference under ``node``, in source order."""
    for n in node.walk():
        if isinstance(n, ElementRef):
            yield n
