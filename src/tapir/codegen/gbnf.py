"""A small grammar model that prints as GBNF (llama.cpp's grammar format) and can be sampled.

The script grammar (``tapir.codegen.script_grammar``) is built from these nodes rather than
written as text, so that the same object gives llama.cpp its constraint (``to_gbnf()``) and the
tests random sentences of exactly that language (``sample()``), which must all parse::

    g = Grammar("root")
    g.rule("root", seq(lit("x = "), ref("num"), lit("\\n")))
    g.rule("num", rep(chars("0-9"), 1, 3))
    print(g.to_gbnf())        # root ::= "x = " num "\\n"  /  num ::= [0-9]{1,3}
    g.sample(random.Random(0))  # 'x = 42\\n'
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

__all__ = ["Alt", "Chars", "Grammar", "Lit", "Ref", "Rep", "Seq", "alt", "chars", "lit", "opt", "ref", "rep", "seq"]


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Chars:
    """A character class body as GBNF writes it (``a-z0-9_``, or ``^"\\\\\\n`` for a negation)."""

    body: str
    #: Characters ``sample`` draws from (a negated class cannot be enumerated).
    pool: str


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    min: int
    max: int | None


Node = Lit | Chars | Ref | Seq | Alt | Rep


def lit(text: str) -> Lit:
    return Lit(text)


def chars(body: str, pool: str | None = None) -> Chars:
    """``chars("a-z")``; ranges are expanded for sampling unless ``pool`` is given."""
    if pool is None:
        out, i = [], 0
        while i < len(body):
            if i + 2 < len(body) and body[i + 1] == "-":
                out += [chr(c) for c in range(ord(body[i]), ord(body[i + 2]) + 1)]
                i += 3
            else:
                out.append(body[i])
                i += 1
        pool = "".join(out)
    return Chars(body, pool)


def ref(name: str) -> Ref:
    return Ref(name)


def seq(*items: Node | str) -> Node:
    nodes = tuple(lit(i) if isinstance(i, str) else i for i in items)
    return nodes[0] if len(nodes) == 1 else Seq(nodes)


def alt(*options: Node | str) -> Node:
    nodes = tuple(lit(o) if isinstance(o, str) else o for o in options)
    return nodes[0] if len(nodes) == 1 else Alt(nodes)


def rep(item: Node | str, lo: int = 0, hi: int | None = None) -> Rep:
    return Rep(lit(item) if isinstance(item, str) else item, lo, hi)


def opt(item: Node | str) -> Rep:
    return rep(item, 0, 1)


def _quote(text: str) -> str:
    # GBNF string literals take JSON-style escapes.
    return json.dumps(text, ensure_ascii=False)


class Grammar:
    """Named rules; ``root`` is where a sentence starts."""

    def __init__(self, root: str = "root") -> None:
        self.root = root
        self.rules: dict[str, Node] = {}

    def rule(self, name: str, body: Node) -> Ref:
        if not name.replace("-", "").isalnum() or name != name.lower():
            raise ValueError(f"GBNF rule names are lowercase letters, digits and dashes: {name!r}")
        if name in self.rules:
            raise ValueError(f"rule {name!r} is defined twice")
        self.rules[name] = body
        return Ref(name)

    def undefined(self) -> set[str]:
        """Rule names referenced but never defined (a bug in a grammar builder)."""
        seen: set[str] = set()

        def walk(n: Node) -> None:
            if isinstance(n, Ref):
                seen.add(n.name)
            elif isinstance(n, Seq):
                for i in n.items:
                    walk(i)
            elif isinstance(n, Alt):
                for o in n.options:
                    walk(o)
            elif isinstance(n, Rep):
                walk(n.item)

        for body in self.rules.values():
            walk(body)
        return seen - set(self.rules)

    # -- GBNF text --------------------------------------------------------------------------------

    def to_gbnf(self) -> str:
        missing = self.undefined()
        if missing:
            raise ValueError(f"undefined grammar rules: {', '.join(sorted(missing))}")
        order = [self.root] + [n for n in self.rules if n != self.root]
        return "".join(f"{name} ::= {self._text(self.rules[name], top=True)}\n" for name in order)

    def _text(self, n: Node, top: bool = False) -> str:
        if isinstance(n, Lit):
            return _quote(n.text)
        if isinstance(n, Chars):
            return f"[{n.body}]"
        if isinstance(n, Ref):
            return n.name
        if isinstance(n, Seq):
            inner = " ".join(self._text(i) for i in n.items)
            return inner if top else f"({inner})"
        if isinstance(n, Alt):
            inner = " | ".join(self._text(o, top=True) for o in n.options)
            return inner if top else f"({inner})"
        item = self._text(n.item)
        if (n.min, n.max) == (0, 1):
            return f"{item}?"
        if (n.min, n.max) == (0, None):
            return f"{item}*"
        if (n.min, n.max) == (1, None):
            return f"{item}+"
        return f"{item}{{{n.min},{'' if n.max is None else n.max}}}"

    # -- sampling (tests) -------------------------------------------------------------------------

    def sample(self, rng: random.Random, *, max_depth: int = 40, max_repeat: int = 3) -> str:
        """A random sentence of the grammar. Past ``max_depth`` nested rules, alternatives are
        drawn from those that end soonest, so every draw terminates."""
        out: list[str] = []
        self._emit(Ref(self.root), rng, 0, max_depth, max_repeat, out)
        return "".join(out)

    def _emit(self, n: Node, rng: random.Random, depth: int, max_depth: int, max_repeat: int,
              out: list[str]) -> None:
        if isinstance(n, Lit):
            out.append(n.text)
        elif isinstance(n, Chars):
            out.append(rng.choice(n.pool))
        elif isinstance(n, Ref):
            self._emit(self.rules[n.name], rng, depth + 1, max_depth, max_repeat, out)
        elif isinstance(n, Seq):
            for i in n.items:
                self._emit(i, rng, depth, max_depth, max_repeat, out)
        elif isinstance(n, Alt):
            options = n.options
            if depth >= max_depth:
                cost = [self._cost(o, set()) for o in options]
                options = tuple(o for o, c in zip(options, cost, strict=True) if c == min(cost))
            self._emit(rng.choice(options), rng, depth, max_depth, max_repeat, out)
        else:
            hi = n.min + max_repeat if n.max is None else min(n.max, n.min + max_repeat)
            count = n.min if depth >= max_depth else rng.randint(n.min, hi)
            for _ in range(count):
                self._emit(n.item, rng, depth, max_depth, max_repeat, out)

    def _cost(self, n: Node, _visiting: set[str]) -> int:
        """How many rule expansions the shortest derivation of ``n`` needs."""
        costs = self._rule_costs()
        return self._node_cost(n, costs)

    def _rule_costs(self) -> dict[str, int]:
        # A fixed point from "infinitely expensive": cheap to compute once per grammar.
        cached = getattr(self, "_costs", None)
        if cached is not None and len(cached) == len(self.rules):
            return cached  # type: ignore[no-any-return]
        costs = {name: 10**9 for name in self.rules}
        changed = True
        while changed:
            changed = False
            for name, body in self.rules.items():
                c = min(10**9, 1 + self._node_cost(body, costs))
                if c < costs[name]:
                    costs[name], changed = c, True
        self._costs = costs
        return costs

    def _node_cost(self, n: Node, costs: dict[str, int]) -> int:
        if isinstance(n, Lit | Chars):
            return 0
        if isinstance(n, Ref):
            return costs[n.name]
        if isinstance(n, Seq):
            return min(10**9, sum(self._node_cost(i, costs) for i in n.items))
        if isinstance(n, Alt):
            return min(self._node_cost(o, costs) for o in n.options)
        return 0 if n.min == 0 else min(10**9, n.min * self._node_cost(n.item, costs))
