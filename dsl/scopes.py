"""Static scopes for the compiler: which names are local to which function or comprehension,
and how many steps an expression costs."""

from __future__ import annotations

from tapir.dsl import ast as A


class Scope:
    __slots__ = ("kind", "names", "parent")

    def __init__(self, kind: str, names: set[str], parent: Scope | None) -> None:
        self.kind = kind  # "module", "function" or "comprehension"
        self.names = names
        self.parent = parent

    def resolve(self, name: str) -> int | None:
        """How many frames up ``name`` lives, or None for a module global."""
        hops = 0
        s: Scope | None = self
        while s is not None and s.kind != "module":
            if name in s.names:
                return hops
            hops += 1
            s = s.parent
        return None


def target_names(t: A.Node, out: set[str]) -> None:
    if type(t) is A.Name:
        out.add(t.id)
    elif type(t) in (A.TupleExpr, A.ListExpr):
        for e in t.elts:  # type: ignore[attr-defined]
            target_names(e, out)


def assigned_names(stmts: tuple[A.Stmt, ...], out: set[str]) -> set[str]:
    """Names a function body binds (not descending into nested defs or comprehensions)."""
    for s in stmts:
        t = type(s)
        if t is A.Assign:
            for tg in s.targets:  # type: ignore[union-attr]
                target_names(tg, out)
        elif t is A.AugAssign:
            target_names(s.target, out)  # type: ignore[union-attr]
        elif t is A.For:
            target_names(s.target, out)  # type: ignore[union-attr]
            assigned_names(s.body, out)  # type: ignore[union-attr]
        elif t is A.While:
            assigned_names(s.body, out)  # type: ignore[union-attr]
        elif t is A.If:
            assigned_names(s.body, out)  # type: ignore[union-attr]
            assigned_names(s.orelse, out)  # type: ignore[union-attr]
        elif t is A.FunctionDef:
            out.add(s.name)  # type: ignore[union-attr]
    return out


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
