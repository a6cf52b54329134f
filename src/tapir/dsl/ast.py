"""The Tapir AST: frozen dataclasses, every node with a 1-based ``Span`` (offsets included).

The parser builds these; the analysis, checker, interpreter, language service and code generator
read them, walking them with ``tapir.dsl.visitor.NodeVisitor``. Nodes are immutable; analyses key
their tables by ``id(node)`` (hashing a node hashes its whole subtree). Collections are tuples.

A tolerant parse (``parse_tolerant``) keeps what it could not read in the tree: an ``ErrorStmt``
for a statement it skipped and a ``Refused`` node for a construct it read but does not allow; a
strict parse (``parse``) never returns either.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from tapir.core.errors import Span


@dataclass(frozen=True)
class Node:
    span: Span

    def children(self) -> Iterator[Node]:
        """Direct child nodes, in source order."""
        names = _CHILD_FIELDS.get(type(self))
        if names is None:
            # every field but the span may hold nodes (the order of the fields is the source order)
            names = _CHILD_FIELDS[type(self)] = tuple(f.name for f in fields(self) if f.name != "span")
        values = self.__dict__
        for name in names:
            value = values[name]
            if isinstance(value, Node):
                yield value
            elif type(value) is tuple and value:
                yield from _nodes_in(value)

    def walk(self) -> Iterator[Node]:
        """This node and all its descendants, depth first, in source order. Iterative, so a tree
        nested deeper than Python's stack (a sum of 20,000 terms) can be walked."""
        todo: list[Node] = [self]
        while todo:
            node = todo.pop()
            yield node
            todo.extend(reversed(list(node.children())))


#: The fields of each node class that ``children`` looks in (made on first use, per class).
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


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


@dataclass(frozen=True)
class Refused(Node):
    """A construct that was read but is not allowed, where it stands in the tree (an expression,
    a statement or an assignment target): valid Python that Tapir refuses (``code``
    ``unsupported``: a set literal, ``lambda``...) or a misplaced construct (``syntax``: assigning to
    a call, a repeated keyword argument). ``parts`` keeps the parsed pieces inside it, so the
    names they use are still analysed; ``tapir.dsl.syntax_checks`` reports every one."""

    message: str
    code: str = "unsupported"
    hint: str | None = None
    parts: tuple[Node, ...] = ()


Expr = (
    Constant | FString | FormattedValue | Name | ElementRef | ListExpr | TupleExpr | DictExpr | BinOp | UnaryOp
    | BoolOp | Compare | IfExp | Slice | Subscript | Attribute | Call | ListComp | Refused
)
# Assignment targets: Name, Subscript, or a TupleExpr/ListExpr of targets.
Target = Name | Subscript | TupleExpr | ListExpr | Refused


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
    #: The span of the function's name (where go-to-definition lands).
    name_span: Span | None = None


@dataclass(frozen=True)
class Return(Node):
    value: Expr | None = None


@dataclass(frozen=True)
class Assert(Node):
    test: Expr
    msg: Expr | None = None


@dataclass(frozen=True)
class ErrorStmt(Node):
    """A statement a tolerant parse could not read (the error is reported separately). ``text`` is
    what was skipped; ``names`` the names it appears to bind (assignment and loop targets, a
    ``def``'s name and parameters), so that later uses of them are not reported again; ``body`` the
    indented block under it when it was a block header, parsed normally."""

    text: str
    names: tuple[str, ...] = ()
    body: tuple[Stmt, ...] = ()


Stmt = (
    ExprStmt | Assign | AugAssign | If | While | For | Break | Continue | Pass | FunctionDef | Return | Assert
    | ErrorStmt | Refused
)


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


#: The statement classes and the expression classes (``Refused`` is both).
STATEMENT_TYPES: tuple[type[Node], ...] = (
    ExprStmt, Assign, AugAssign, If, While, For, Break, Continue, Pass, FunctionDef, Return, Assert, ErrorStmt, Refused,
)
EXPRESSION_TYPES: tuple[type[Node], ...] = (
    Constant, FString, FormattedValue, Name, ElementRef, ListExpr, TupleExpr, DictExpr, BinOp, UnaryOp, BoolOp,
    Compare, IfExp, Slice, Subscript, Attribute, Call, ListComp, Refused,
)

#: Every node class, by name (what ``NodeVisitor`` dispatches on).
NODE_TYPES: dict[str, type[Node]] = {
    cls.__name__: cls
    for cls in (
        Constant, FString, FormattedValue, Name, ElementRef, ListExpr, TupleExpr, DictExpr, BinOp, UnaryOp, BoolOp,
        Compare, IfExp, Slice, Subscript, Attribute, Keyword, Call, Comprehension, ListComp, Refused, ExprStmt,
        Assign, AugAssign, If, While, For, Break, Continue, Pass, Param, FunctionDef, Return, Assert, ErrorStmt,
        Module,
    )
}
