"""How exploration picks the next action: depth-first or random.

Both see the screen (its ``state_key``: layout and function, as ``tapir docgen`` groups screens)
and the candidates on it, and remember what was tried where.

* ``DepthFirst``: the first untried action of the current screen, in screen order; when
  everything here was tried, the way (over transitions seen so far) to the nearest screen with
  untried actions, else BACK (up one level), else a restart. It is ``done`` when nothing untried
  is left on any screen it has seen.
* ``RandomWalk``: a seeded random choice, weighted towards untried actions, with BACK now and
  then; restarts on the same condition.

    strategy = make_strategy("dfs", seed=1)
    choice = strategy.choose(screen_key, candidates)   # a Candidate, or None: restart the app
    strategy.record(screen_key, choice, new_screen_key)
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Protocol

from tapir.core.errors import UsageError
from tapir.runtime.explore.actions import Candidate

#: Steps in a row that discover no new (screen, action) pair before a strategy restarts the app.
STALE_LIMIT = 8
#: How often one action on one screen may be repeated to walk somewhere before it is not used any more.
ROUTE_REPEATS = 6


class Strategy(Protocol):
    name: str
    #: True once the strategy has nothing left to try (exploration may stop early).
    done: bool

    def choose(self, screen: str, candidates: list[Candidate]) -> Candidate | None:
        """The next action on ``screen``; None asks for the app to be restarted."""
        ...

    def record(self, screen: str, action: Candidate, after: str | None) -> None:
        """What the action led to (``after`` is None outside the app)."""
        ...


class _Memory:
    def __init__(self) -> None:
        self.tried: Counter[tuple[str, str]] = Counter()
        self.screens: set[str] = set()
        self.stale = 0

    def record(self, screen: str, action: Candidate, after: str | None) -> None:
        novel = self.tried[(screen, action.key)] == 0 or (after is not None and after not in self.screens)
        self.tried[(screen, action.key)] += 1
        self.screens.add(screen)
        if after is not None:
            self.screens.add(after)
        self.stale = 0 if novel else self.stale + 1

    def untried(self, screen: str, candidates: list[Candidate]) -> list[Candidate]:
        return [c for c in candidates if self.tried[(screen, c.key)] == 0]


class DepthFirst(_Memory):
    """Untried actions here first; else walk (over transitions seen so far) to the nearest screen
    that still has some; else BACK; else restart. ``done`` once nothing untried is left anywhere."""

    name = "dfs"

    def __init__(self) -> None:
        super().__init__()
        self.edges: dict[str, dict[str, str]] = {}
        self.pending: dict[str, set[str]] = {}
        self.done = False
        self._restarted = False
        self.misses: Counter[tuple[str, str]] = Counter()
        self.blocked: set[tuple[str, str]] = set()

    def choose(self, screen: str, candidates: list[Candidate]) -> Candidate | None:
        waiting = self.pending.setdefault(screen, set())
        waiting.update(c.key for c in candidates if c.kind != "back" and self.tried[(screen, c.key)] == 0)
        fresh = [c for c in candidates if c.kind != "back" and self.tried[(screen, c.key)] == 0]
        if fresh:
            return fresh[0]
        # what was pending here but is not offered now (a button enabled only once) is not coming back
        waiting.clear()
        by_key = {c.key: c for c in candidates}
        route = self._route(screen)
        if route and route[0] in by_key:
            return by_key[route[0]]
        back = by_key.get("back")
        if back is not None and self.tried[(screen, "back")] < 2 and self.stale < STALE_LIMIT:
            return back
        if self._restarted or not any(self.pending.values()):
            # nothing left, or nothing reachable even from a fresh start: exploration is over
            self.done = True
        self.stale = 0
        self._restarted = True
        return None

    def record(self, screen: str, action: Candidate, after: str | None) -> None:
        self._restarted = False
        super().record(screen, action, after)
        self.pending.get(screen, set()).discard(action.key)
        known = self.edges.get(screen, {})
        expected = known.get(action.key)
        if expected is not None and expected != after:
            # the same action led elsewhere this time (it adds a row, it depends on data): a
            # route through it cannot be trusted
            self.misses[(screen, action.key)] += 1
        if self.misses[(screen, action.key)] >= 2 or self.tried[(screen, action.key)] > ROUTE_REPEATS:
            known.pop(action.key, None)
            self.blocked.add((screen, action.key))
        elif after is not None and after != screen and (screen, action.key) not in self.blocked:
            self.edges.setdefault(screen, {})[action.key] = after

    def _route(self, start: str) -> list[str] | None:
        """Action keys leading (as recorded so far) to the nearest other screen with untried actions."""
        queue: list[tuple[str, list[str]]] = [(start, [])]
        seen = {start}
        while queue:
            screen, keys = queue.pop(0)
            if screen != start and self.pending.get(screen):
                return keys
            for key, after in self.edges.get(screen, {}).items():
                if after not in seen:
                    seen.add(after)
                    queue.append((after, [*keys, key]))
        return None


class RandomWalk(_Memory):
    name = "random"

    def __init__(self, seed: int | None = None, back_weight: float = 0.15) -> None:
        super().__init__()
        self.done = False
        self.rng = random.Random(seed)
        self.back_weight = back_weight

    def choose(self, screen: str, candidates: list[Candidate]) -> Candidate | None:
        if self.stale >= STALE_LIMIT * 2:
            self.stale = 0
            return None
        if not candidates:
            return None
        weights = []
        for c in candidates:
            if c.kind == "back":
                weights.append(self.back_weight * len(candidates))
            else:
                weights.append(3.0 if self.tried[(screen, c.key)] == 0 else 1.0)
        return self.rng.choices(candidates, weights=weights, k=1)[0]


STRATEGIES = ("dfs", "random")


def make_strategy(name: str, seed: int | None = None) -> Strategy:
    if name == "dfs":
        return DepthFirst()
    if name == "random":
        return RandomWalk(seed)
    raise UsageError(f"unknown exploration strategy {name!r} (known: {', '.join(STRATEGIES)})")
