"""The element transition graph: forward effects and backward dependency paths (AutoDroid-V2, 3.1.3).

Every recorded step becomes a ``Transition``: the screen before, the element acted on (an element,
a list item with its label, or a child element), the action, and the screen after (None when the
app was left). From them:

* **forward effects**: what acting on an element leads to (the screen it opens most often, that it
  leaves the app, that it changes the screen in place); for a list of options, what each option
  leads to;
* **backward dependency paths**: for each screen, action sequences from the start screen that
  reach it, one per screen it can be entered from, bounded in length and number. Steps with side
  effects (typing, toggling, choosing in a choice list, confirming a dialog, anything sensitive)
  cost far more than plain navigation, so a path without them is preferred whenever one exists;
* **appearance paths**: an element that only shows after an action on its own screen (a
  now-playing bar after a song was played) gets a path ending with that action.

    transitions, unmapped = map_transitions(steps, ...)
    paths = screen_paths(transitions, start=0, step_text=..., costly=..., max_length=8, max_paths=4)
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tapir.docgen.build.anatomy import Anatomy, Role
from tapir.docgen.build.trace import StepRecord, Target

#: Words of a control that commits something (the dialog's positive button).
COMMIT_WORDS = frozenset({"ok", "save", "create", "add", "done", "apply", "confirm", "yes", "rename", "set",
                          "update", "submit", "insert", "post", "send", "delete", "remove"})
#: What a step with side effects costs next to a plain navigation step (1).
SIDE_EFFECT_COST = 100


@dataclass(frozen=True)
class Transition:
    before_state: str
    after_state: str
    #: Screen group indexes; None for a hierarchy outside the app.
    before: int | None
    after: int | None
    action: str
    #: The element's draft key (for list items: the list's key), or None for global actions.
    element: str | None = None
    item_label: str | None = None
    text: str | None = None

    @property
    def moved(self) -> bool:
        return self.before != self.after

    @property
    def changed(self) -> bool:
        return self.before_state != self.after_state


def find_target(anatomy: Anatomy, target: Target) -> int | None:
    """The node of the hierarchy the recorded target is: by id, else by path, else by bounds."""
    tree = anatomy.tree
    node = tree.get(target.node)
    if node is not None and node.class_name == target.class_name and node.bounds == target.bounds:
        return node.id
    by_path = [n for n in tree.nodes if n.path == target.path and n.class_name == target.class_name]
    if by_path:
        return by_path[0].id
    by_bounds = [n for n in tree.nodes if n.bounds == target.bounds and n.class_name == target.class_name]
    return by_bounds[-1].id if by_bounds else None


def map_transitions(
    steps: Sequence[StepRecord],
    group_of: Mapping[str, int],
    anatomies: Mapping[str, Anatomy],
    known: Callable[[int, str], bool],
) -> tuple[list[Transition], Counter[str]]:
    """Steps as transitions between screen groups; ``known(group, key)`` says whether an element
    key is in the document. Returns the transitions and, by reason, the steps that could not be
    tied to an element."""
    out: list[Transition] = []
    unmapped: Counter[str] = Counter()
    for step in steps:
        before = group_of.get(step.before)
        after = group_of.get(step.after)
        action = step.action
        if action.target is None or before is None:
            out.append(Transition(step.before, step.after, before, after, action.kind, text=action.text))
            continue
        anatomy = anatomies[step.before]
        nid = find_target(anatomy, action.target)
        role = anatomy.role(nid) if nid is not None else None
        # the view, or one around it, is an element where the screen shows it interactive (a
        # selected tab is not clickable, and tapping it again reloads the tab)
        elsewhere = next((k for k in anatomy.keys_around(nid) if known(before, k)), None) if nid is not None else None
        if role is None and elsewhere is None:
            unmapped["actions on a view that is no element (nothing interactive around it)"] += 1
            out.append(Transition(step.before, step.after, before, after, action.kind, text=action.text))
            continue
        if role is None:
            role = Role("single", str(elsewhere))
        key = role.key if role.kind in ("single", "list", "item") else f"{role.key}/{role.child}"
        label = anatomy.label(role.item) if role.kind in ("item", "child") else None
        if not known(before, key):
            if role.kind == "child" and known(before, role.key):
                key = role.key  # a child left out of the document: the item was tapped
            elif role.kind == "single" and elsewhere is not None:
                key = elsewhere
            else:
                unmapped["actions on elements left out of the document"] += 1
                out.append(Transition(step.before, step.after, before, after, action.kind, text=action.text))
                continue
        out.append(Transition(step.before, step.after, before, after, action.kind, key, label, action.text))
    return out, unmapped


def forward_effects(transitions: Sequence[Transition]) -> dict[tuple[int, str, str], Counter[int | None]]:
    """(screen, element key, action) -> how often it led to each screen: another screen, its own
    (the screen changed in place) or None (the app was left). List items are in ``option_effects``."""
    out: dict[tuple[int, str, str], Counter[int | None]] = {}
    for t in transitions:
        if t.element is None or t.before is None or t.action == "scroll" or t.item_label is not None:
            continue
        counter = out.setdefault((t.before, t.element, t.action), Counter())
        if t.moved:
            counter[t.after] += 1
        elif t.changed:
            counter[t.before] += 1
    return out


def option_effects(
    transitions: Sequence[Transition],
) -> dict[tuple[int, str, str], dict[str, Counter[int | None]]]:
    """(screen, list key, action) -> item label -> the screens acting on that item led to (its own
    screen when it changed in place)."""
    out: dict[tuple[int, str, str], dict[str, Counter[int | None]]] = {}
    for t in transitions:
        if t.element is None or t.before is None or t.item_label is None or t.action == "scroll":
            continue
        if not (t.moved or t.changed):
            continue
        counter = out.setdefault((t.before, t.element, t.action), {}).setdefault(t.item_label, Counter())
        counter[t.after if t.moved else t.before] += 1
    return out


@dataclass(frozen=True)
class Edge:
    source: int
    target: int
    step: str
    cost: int


def navigation_edges(
    transitions: Sequence[Transition],
    step_text: Callable[[Transition], str | None],
    costly: Callable[[Transition], bool],
) -> list[Edge]:
    """One edge per distinct (screen, step, screen) that moved between two screens of the app."""
    seen: dict[tuple[int, str, int], Edge] = {}
    counts: Counter[tuple[int, str, int]] = Counter()
    for t in transitions:
        if t.before is None or t.after is None or not t.moved:
            continue
        text = step_text(t)
        if text is None:
            continue
        key = (t.before, text, t.after)
        counts[key] += 1
        cost = 1 + (SIDE_EFFECT_COST if costly(t) else 0)
        old = seen.get(key)
        if old is None or cost < old.cost:
            seen[key] = Edge(t.before, t.after, text, cost)
    # most used first, so ties between equal paths go to the well-trodden one
    return sorted(seen.values(), key=lambda e: (-counts[(e.source, e.step, e.target)], e.cost, e.step))


def _cheapest(edges: Sequence[Edge], start: int, max_length: int) -> dict[int, tuple[int, list[Edge]]]:
    """Dijkstra from ``start``: screen -> (cost, edges), paths at most ``max_length`` long."""
    out: dict[int, tuple[int, list[Edge]]] = {}
    by_source: dict[int, list[Edge]] = {}
    for e in edges:
        by_source.setdefault(e.source, []).append(e)
    heap: list[tuple[int, int, int, list[Edge]]] = [(0, 0, start, [])]
    counter = 1
    while heap:
        cost, _, screen, path = heapq.heappop(heap)
        if screen in out:
            continue
        out[screen] = (cost, path)
        if len(path) >= max_length:
            continue
        for e in by_source.get(screen, []):
            if e.target not in out:
                heapq.heappush(heap, (cost + e.cost, counter, e.target, [*path, e]))
                counter += 1
    return out


def screen_paths(edges: Sequence[Edge], start: int, *, max_length: int, max_paths: int) -> dict[int, list[list[Edge]]]:
    """Per screen, up to ``max_paths`` paths from the start screen, one per screen it is entered
    from, cheapest first (side-effect-free before anything else, then shortest)."""
    cheapest = _cheapest(edges, start, max_length)
    out: dict[int, list[list[Edge]]] = {}
    for target in {e.target for e in edges}:
        if target == start:
            continue
        options: list[tuple[int, int, list[Edge]]] = []
        for e in edges:
            if e.target != target or e.source == target:
                continue
            prefix = cheapest.get(e.source)
            if prefix is None:
                continue
            path = [*prefix[1], e]
            if len(path) > max_length or any(p.source == target for p in path):
                continue
            options.append((prefix[0] + e.cost, len(path), path))
        options.sort(key=lambda o: (o[0], o[1]))
        chosen: list[list[Edge]] = []
        sources: set[int] = set()
        for _, _, path in options:
            if path[-1].source in sources:
                continue
            sources.add(path[-1].source)
            chosen.append(path)
            if len(chosen) >= max_paths:
                break
        if chosen:
            out[target] = chosen
    return out


def appearance_steps(transitions: Sequence[Transition], screen: int, present: set[str],
                     step_text: Callable[[Transition], str | None]) -> list[str]:
    """Steps on ``screen`` after which an element absent before showed up (``present``: the states
    where it is seen)."""
    out: list[str] = []
    for t in transitions:
        if t.before == screen and t.after == screen and t.before_state not in present and t.after_state in present:
            text = step_text(t)
            if text and text not in out:
                out.append(text)
    return out
