"""Name binding, computed once: the scopes of a module and what each binds, and the records the
analysis keeps of names (``Binding``, ``Reference``) and values (``Ty``).

    root = Binder().run(module)          # the module's Scope; .children: functions, comprehensions
    scope_table(module)[id(fn)].names    # what a function binds, parameters included (the compiler)

``Binder`` is flow-insensitive: a name is local to a function when the function binds it
anywhere (assignment or loop target, ``def``, parameter), as in Python. The flow-sensitive walk
(``tapir.dsl.flow``) adds the bindings with where each is made and what it holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tapir.core.positions import Position, Span
from tapir.dsl import ast as A
from tapir.dsl.registry import Entry
from tapir.dsl.types import Kind, describe
from tapir.dsl.visitor import NodeVisitor

__all__ = [
    "UNKNOWN", "Binder", "Binding", "Reference", "Scope", "Ty", "local_scope", "merge_types", "name_span",
    "scope_table",
]


# ---------------------------------------------------------------------------------------------
# What is known of a value


@dataclass(frozen=True)
class Ty:
    """What the analysis knows of a value. ``tag`` is a type of the vocabulary (``str``,
    ``element``, ``item``: an item of the list ``element``...), ``function`` (a ``def`` of the
    script, named by ``element``), ``builtin`` (a registry callable) or ``unknown``."""

    tag: str
    element: str | None = None
    kind: Kind | None = None

    @property
    def is_element(self) -> bool:
        return self.tag in ("element", "item")

    def describe(self) -> str:
        if self.tag == "element":
            return f"${self.element}, {describe(self.kind.value if self.kind else 'element')}"
        if self.tag == "item":
            return f"an item of ${self.element}"
        return describe(self.tag)


UNKNOWN = Ty("unknown")


def merge_types(a: Ty | None, b: Ty | None) -> Ty | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    return UNKNOWN


# ---------------------------------------------------------------------------------------------
# Scopes and bindings


@dataclass(eq=False)
class Binding:
    """Where a name gets a value: an assignment or loop target, a ``def``, a parameter."""

    name: str
    #: ``variable``, ``parameter``, ``function``, ``loop`` (a for target), ``comprehension``, or
    #: ``unreadable`` (named in a statement that could not be parsed)
    kind: str
    #: The span of the name where it is bound (go-to-definition lands here).
    span: Span
    scope: Scope
    #: The statement (or parameter, comprehension) that binds it.
    node: A.Node
    #: What the analysis knows of the value bound there.
    type: Ty = UNKNOWN


@dataclass(eq=False)
class Scope:
    """A module, a function or a list comprehension: the names it binds, its bindings."""

    kind: str
    node: A.Node
    parent: Scope | None
    #: Every name bound anywhere in the scope (flow-insensitive), parameters included.
    names: set[str] = field(default_factory=set)
    #: The functions defined directly in the scope.
    functions: dict[str, A.FunctionDef] = field(default_factory=dict)
    children: list[Scope] = field(default_factory=list)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    @property
    def span(self) -> Span:
        return self.node.span

    def owner(self, name: str) -> Scope | None:
        """The scope a read of ``name`` here resolves to (Python's rule: the innermost that binds
        it), or None for a builtin or an unknown name."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope
            scope = scope.parent
        return None

    def visible(self, at: Position | None = None) -> dict[str, Binding]:
        """The names a read at ``at`` can see, innermost first: each name's first binding before
        ``at`` in its scope (functions whatever their position: a call may come first)."""
        out: dict[str, Binding] = {}
        scope: Scope | None = self
        while scope is not None:
            for name, found in scope.bindings.items():
                if name in out:
                    continue
                before = [b for b in found if at is None or b.kind == "function" or b.kind == "parameter"
                          or (b.span.line, b.span.column) <= (at.line, at.column)]
                if before:
                    out[name] = before[-1]
            scope = scope.parent
        return out

    def walk(self) -> Iterator[Scope]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class Reference:
    """A read of a name: where, in which scope, and the scope that binds the name (None: a
    builtin, an API function, or a name bound nowhere)."""

    name: str
    span: Span
    node: A.Name
    scope: Scope
    owner: Scope | None
    #: The registry entry the name means when no binding of the script does (builtin, API function).
    entry: Entry | None = None

    @property
    def bindings(self) -> tuple[Binding, ...]:
        """Every binding of the name in its scope (where the read may get its value from)."""
        return tuple(self.owner.bindings.get(self.name, ())) if self.owner is not None else ()


def _seq(value: Any) -> tuple[Any, ...]:
    return value if type(value) is tuple else ()


def name_span(node: A.Param) -> Span:
    """The span of a parameter's name (its span covers its default too)."""
    s = node.span
    return Span(s.line, s.column, s.line, s.column + len(node.name), s.offset,
                s.offset + len(node.name) if s.offset >= 0 else -1)


class Binder(NodeVisitor[None]):
    """Finds the scopes of a module and the names each binds (not descending into nested scopes'
    bodies for the enclosing one). ``scope_of(node)`` is the scope a module, function or list
    comprehension opens."""

    def __init__(self) -> None:
        self.scopes: dict[int, Scope] = {}
        self.scope: Scope | None = None

    def run(self, module: A.Module) -> Scope:
        root = Scope("module", module, None)
        self.scopes[id(module)] = root
        self.scope = root
        self.visit_all(module.body)
        return root

    def _open(self, kind: str, node: A.Node) -> Scope:
        scope = Scope(kind, node, self.scope)
        if self.scope is not None:
            self.scope.children.append(scope)
        self.scopes[id(node)] = scope
        return scope

    # (hand-built trees reach the compiler too: fields that are not what the AST says are skipped
    # here and refused by the compiler)

    def targets(self, target: Any) -> None:
        assert self.scope is not None
        if type(target) is A.Name:
            if type(target.id) is str:
                self.scope.names.add(target.id)
        elif type(target) in (A.TupleExpr, A.ListExpr):
            for elt in _seq(target.elts):
                self.targets(elt)
        elif isinstance(target, A.Node):
            self.visit(target)

    def visit_Assign(self, node: A.Assign) -> None:
        for t in _seq(node.targets):
            self.targets(t)
        self.visit(node.value)

    def visit_AugAssign(self, node: A.AugAssign) -> None:
        self.targets(node.target)
        self.visit(node.value)

    def visit_For(self, node: A.For) -> None:
        self.targets(node.target)
        self.visit(node.iter)
        self.visit_all(_seq(node.body))

    def visit_ErrorStmt(self, node: A.ErrorStmt) -> None:
        assert self.scope is not None
        self.scope.names.update(n for n in _seq(node.names) if type(n) is str)
        self.visit_all(_seq(node.body))

    def visit_FunctionDef(self, node: A.FunctionDef) -> None:
        outer = self.scope
        assert outer is not None
        if type(node.name) is str:
            outer.names.add(node.name)
            outer.functions[node.name] = node
        params = [p for p in _seq(node.params) if type(p) is A.Param and type(p.name) is str]
        for p in params:
            if p.default is not None:
                self.visit(p.default)
        inner = self._open("function", node)
        inner.names.update(p.name for p in params)
        self.scope = inner
        self.visit_all(_seq(node.body))
        self.scope = outer

    def visit_ListComp(self, node: A.ListComp) -> None:
        outer = self.scope
        gens = [g for g in _seq(node.generators) if type(g) is A.Comprehension]
        if not gens:
            return
        self.visit(gens[0].iter)  # the first iterable is read in the enclosing scope
        inner = self._open("comprehension", node)
        self.scope = inner
        for i, gen in enumerate(gens):
            self.targets(gen.target)
            if i:
                self.visit(gen.iter)
            self.visit_all(_seq(gen.conds))
        self.visit(node.elt)
        self.scope = outer

    def generic_visit(self, node: Any, context: Any = None) -> None:
        """Find what binds below ``node``: iteratively, so that a sum of 20,000 terms does not
        overflow the stack; nodes with a ``visit_`` method of their own are handed to it."""
        if not isinstance(node, A.Node):
            return
        todo = list(node.children())
        dispatch = self._dispatch
        while todo:
            n = todo.pop()
            if type(n) in dispatch:
                self.visit(n)
            else:
                todo.extend(n.children())


def local_scope(node: A.FunctionDef | A.ListComp) -> Scope:
    """The scope one function or comprehension opens, found on its own."""
    binder = Binder()
    root = Scope("module", node, None)
    binder.scope = root
    binder.visit(node)
    return binder.scopes.get(id(node)) or Scope("function", node, root)


def scope_table(module: A.Module) -> dict[int, Scope]:
    """The scope each module, function and list comprehension opens, by ``id(node)`` (what the
    compiler reads to tell locals from globals)."""
    binder = Binder()
    binder.run(module)
    return binder.scopes


# ---------------------------------------------------------------------------------------------
# The flow-sensitive walk
