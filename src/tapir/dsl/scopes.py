"""Static scopes for the compiler: how many frames up a name lives (from what the analysis'
``Binder`` found each function and comprehension binds), and how many steps an expression costs."""

from __future__ import annotations

from tapir.dsl import ast as A


class StaticScope:
    __slots__ = ("kind", "names", "parent")

    def __init__(self, kind: str, names: set[str], parent: StaticScope | None) -> None:
        self.kind = kind  # "module", "function" or "comprehension"
        self.names = names
        self.parent = parent

    def resolve(self, name: str) -> int | None:
        """How many frames up ``name`` lives, or None for a module global."""
        hops = 0
        s: StaticScope | None = self
        while s is not None and s.kind != "module":
            if name in s.names:
                return hops
            hops += 1
            s = s.parent
        return None


def step_cost(node: A.Node) -> int:
    """Steps charged for evaluating ``node`` once: one per expression node, not counting the
    parts of a comprehension that run per item (those are charged per item)."""
    total, todo = 0, [node]
    while todo:  # iterative: a deep hand-built AST must not recurse through C (sum of a generator)
        n = todo.pop()
        total += 1
        if type(n) is A.ListComp:
            todo.append(n.generators[0].iter)
        else:
            todo.extend(n.children())
    return total
