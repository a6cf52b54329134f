"""The one way Tapir walks its AST: ``NodeVisitor`` (after jinja2's), ``visit_<Class>`` methods.

    class Names(NodeVisitor[None]):
        def __init__(self) -> None:
            self.found: list[str] = []

        def visit_Name(self, node: A.Name) -> None:
            self.found.append(node.id)

    v = Names()
    v.visit(module)                # generic_visit walks the children of every other node

The syntax checks, the analysis (and so the checker and the language service), the compiler and
the parser's own tree edits are visitors. Dispatch is on the node's exact class, looked up in a
table built once per visitor class from its ``visit_<Class>`` methods and the classes of
``tapir.dsl.ast``: a foreign class that merely shares a name never reaches a ``visit_`` method
(the compiler relies on this: what it has no method for, it refuses).

``visit(node, context)`` passes one optional context on (the analysis passes its flow state); a
visitor with a calling convention of its own (the compiler: scope, loop, function) looks its
method up with ``method_for`` and calls it directly. Calls are made with plain positional
arguments, never ``*args``: Python 3.11 runs those without growing the C stack, so a tree as
deep as the recursion limit allows is walked without risk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from tapir.dsl.ast import NODE_TYPES, Node

__all__ = ["NodeVisitor"]

R = TypeVar("R")


_NONE: Any = object()


class NodeVisitor(Generic[R]):
    """Calls ``visit_<Class>(node[, context])`` for each node; ``generic_visit`` for the others."""

    _dispatch: ClassVar[dict[type, Callable[..., Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type, Callable[..., Any]] = {}
        for name, node_type in NODE_TYPES.items():
            method = getattr(cls, "visit_" + name, None)
            if method is not None:
                table[node_type] = method
        cls._dispatch = table

    @classmethod
    def method_for(cls, node_type: type) -> Callable[..., Any] | None:
        """The ``visit_`` function for exactly this node class (None: ``generic_visit``)."""
        return cls._dispatch.get(node_type)

    def visit(self, node: Any, context: Any = _NONE) -> R:
        method = self._dispatch.get(type(node))
        if context is _NONE:
            if method is None:
                return self.generic_visit(node)
            return method(self, node)  # type: ignore[no-any-return]
        if method is None:
            return self.generic_visit(node, context)
        return method(self, node, context)  # type: ignore[no-any-return]

    def generic_visit(self, node: Any, context: Any = _NONE) -> R:
        """Visit every child node (in source order); the result is None."""
        if isinstance(node, Node):
            for child in node.children():
                self.visit(child, context)
        return None  # type: ignore[return-value]

    def visit_all(self, nodes: Any, context: Any = _NONE) -> list[R]:
        """``visit`` each node of a sequence, in order."""
        return [self.visit(n, context) for n in nodes]
