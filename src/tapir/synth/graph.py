"""The transition graph of an app document, and walks on it: the tasks ``tapir synth`` proposes.

An *action* is one thing a user does to one element: tap a button, choose an option of a list,
tap an item of a list (matched by its text), tap a part of an item, type into an input. Each
action happens on a screen and may lead to another: the element's ``leads_to``, or the screen of
an element whose document path ends with this very action (``song_options_menu__options.match
('Delete').tap()`` leads to the delete dialog because its button's path says so).

A *walk* is a sample of that graph: ``k`` actions (the task's complexity), each taken on the
screen the previous one led to, or, when it is not known where an action leads, on one of the
*anchor* screens (the start screen and those its plain buttons lead to, which the runtime's
navigation reaches by itself). Walks are drawn with a seeded ``random.Random``::

    graph = TransitionGraph(document, items={"songs_screen__song_list": ["Lanterns", ...]})
    walk = graph.sample_walk(random.Random(7), size=3)
    walk.script()     # '$songs_screen__song_list.match("Lanterns").tap($songs_screen__song_more_button)\\n...'
    walk.task_text()  # 'Open the options of the song "Lanterns", then choose "Delete" in ...'

The texts are templates made from the elements' descriptions; ``tapir.synth.pipeline`` asks a
model to rephrase them when one is given.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tapir.core.document import AppDocument, Element, Kind, Screen, Step
from tapir.runtime.navigation import transient_screen

__all__ = ["Action", "TransitionGraph", "Walk", "input_values", "normalise_script", "normalise_text"]

#: Element kinds a user taps.
_TAPPABLE = frozenset({Kind.BUTTON, Kind.TAB, Kind.CHECKBOX, Kind.SWITCH})
#: Words of a button that completes a form (the confirming tap an input needs).
CONFIRM_WORDS = ("create", "save", "ok", "done", "add", "set", "confirm", "apply", "search", "rename", "delete")

# Values typed into inputs, chosen by a word of the input's name or description (first match wins).
_VALUES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("phone", "number"), ("0612345678", "+44 20 7946 0018", "555 0142")),
    (("email", "mail"), ("ana@example.com", "k.osei@example.org")),
    (("city", "place", "location"), ("Lisbon", "Nairobi", "Osaka", "Quito")),
    (("hour",), ("7", "9")),
    (("minute",), ("15", "45")),
    (("label",), ("Gym", "Standup", "Medicine", "Bus")),
    (("search", "query"), ("Lan", "Road", "Blue")),
    (("title",), ("Groceries", "Trip plan", "Ideas")),
    (("body", "note", "content", "text"), ("Buy oat milk", "Call the plumber", "Water the plants")),
    (("name",), ("Focus", "Evening mix", "Ada Lovelace", "Road songs", "Grace Hopper")),
)
_FALLBACK_VALUES = ("Hello", "Test entry", "Notes 42")


def input_values(element: Element) -> tuple[str, ...]:
    """The values a walk may type into ``element`` (by the words of its name and description)."""
    words = set(re.findall(r"[a-z]+", f"{element.name} {element.description}".lower()))
    for keys, values in _VALUES:
        if words & set(keys):
            return values
    return _FALLBACK_VALUES


@dataclass(frozen=True)
class Action:
    """One step of a walk (see the module docstring)."""

    #: ``tap``, ``option``, ``item``, ``item_child``, ``input``, or ``nav`` (a navigation step a
    #: repair made explicit; it adds nothing to the task's text).
    kind: str
    element: str
    screen: str
    #: The option or item text (matched), or the value typed.
    text: str | None = None
    #: The part of the item tapped (``item_child``).
    child: str | None = None
    #: Where it leads (None: not known, or it stays).
    leads_to: str | None = None
    #: ``back`` for a ``nav`` step that presses BACK.
    call: str = "tap"

    def statement(self) -> str:
        if self.call == "back":
            return "back()"
        target = f"${self.element}"
        if self.kind == "input":
            return f"{target}.set_text({_literal(self.text or '')})"
        if self.text is not None:
            target += f".match({_literal(self.text)})"
        return f"{target}.tap(${self.child})" if self.child else f"{target}.tap()"


@dataclass(frozen=True)
class Walk:
    """A sampled task: its app, its actions, and the phrases of its text."""

    app: str
    actions: tuple[Action, ...]
    #: One phrase per action (``nav`` actions have none), decided when the walk was drawn.
    phrases: tuple[str, ...]
    joiners: tuple[str, ...] = ()

    @property
    def complexity(self) -> int:
        """The number of actions the task asks for (explicit navigation steps not counted)."""
        return sum(1 for a in self.actions if a.kind != "nav")

    @property
    def values(self) -> tuple[str, ...]:
        """The values typed: each must show in the app's state once the script has run."""
        return tuple(a.text for a in self.actions if a.kind == "input" and a.text)

    def script(self) -> str:
        return "".join(a.statement() + "\n" for a in self.actions)

    def task_text(self) -> str:
        phrases = [p for p in self.phrases if p]
        if not phrases:
            return ""
        joiners = list(self.joiners) + [", then "] * len(phrases)
        text = phrases[0]
        for i, phrase in enumerate(phrases[1:]):
            text += (joiners[i] if i < len(phrases) - 2 else " and then ") + phrase
        return text[0].upper() + text[1:] + "."

    def without(self, index: int) -> Walk:
        """The walk with action ``index`` left out (a repair)."""
        keep = [i for i in range(len(self.actions)) if i != index]
        while keep and self.actions[keep[-1]].kind == "nav":  # navigation leading nowhere
            keep.pop()
        return replace(self, actions=tuple(self.actions[i] for i in keep),
                       phrases=tuple(self.phrases[i] for i in keep))

    def inserted(self, index: int, actions: Sequence[Action]) -> Walk:
        """The walk with ``actions`` (navigation, no phrase) put before action ``index``."""
        return replace(self, actions=self.actions[:index] + tuple(actions) + self.actions[index:],
                       phrases=self.phrases[:index] + ("",) * len(actions) + self.phrases[index:])

    def appended(self, action: Action, phrase: str) -> Walk:
        return replace(self, actions=(*self.actions, action), phrases=(*self.phrases, phrase))

    def replaced(self, index: int, action: Action, phrase: str) -> Walk:
        return replace(self, actions=self.actions[:index] + (action,) + self.actions[index + 1:],
                       phrases=self.phrases[:index] + (phrase,) + self.phrases[index + 1:])


class TransitionGraph:
    """Screens and the actions between them (see the module docstring).

    ``items`` gives, for a list without fixed options, the texts of some of its items (read from
    a fresh app by ``tapir.synth.validate.probe_items``): only lists with known items get item
    actions, so that a walk never names an item the app does not have. ``values``, when given,
    are what every input may be typed (a replayed recording's typed texts: it follows no other);
    otherwise the vocabulary of ``input_values``.
    """

    def __init__(self, document: AppDocument, items: Mapping[str, Sequence[str]] | None = None,
                 values: Sequence[str] | None = None) -> None:
        self.document = document
        self.items = {k: list(v) for k, v in (items or {}).items() if v}
        self.values = tuple(values) if values is not None else None
        self._arrivals = _path_arrivals(document)
        self.actions: dict[str, list[Action]] = {s.name: self._actions_on(s) for s in document.screens}
        self.anchors = self._anchor_screens()

    # -- the graph -----------------------------------------------------------------------------

    def _leads(self, element: Element, match: str | None = None) -> str | None:
        if element.leads_to:
            return element.leads_to
        return self._arrivals.get((element.name, match)) or (self._arrivals.get((element.name, None))
                                                              if match is not None else None)

    def _actions_on(self, screen: Screen) -> list[Action]:
        out: list[Action] = []
        by_name = {e.name: e for e in screen.elements}
        for e in screen.elements:
            if e.item_of:
                parent = by_name.get(e.item_of)
                if e.kind in _TAPPABLE and parent is not None:
                    for text in self.items.get(parent.name, [])[:6]:
                        out.append(Action("item_child", parent.name, screen.name, text, e.name, self._leads(e)))
                continue
            if e.kind == Kind.LIST:
                if e.options:
                    out += [Action("option", e.name, screen.name, o, None, self._leads(e, o)) for o in e.options]
                elif e.item_kind in _TAPPABLE or e.effect:
                    out += [Action("item", e.name, screen.name, t, None, self._leads(e))
                            for t in self.items.get(e.name, [])[:6]]
            elif e.kind == Kind.INPUT:
                typed = self.values if self.values is not None else input_values(e)
                out += [Action("input", e.name, screen.name, v, None, None) for v in typed[:6]]
            elif e.kind in _TAPPABLE:
                out.append(Action("tap", e.name, screen.name, None, None, self._leads(e)))
        return out

    def _anchor_screens(self) -> list[str]:
        """The start screen and the screens plain taps lead to from it (breadth first), where a
        walk may begin or go on after an action whose destination is not known."""
        start = self.document.app.start_screen
        seen, queue = [start], [start]
        while queue:
            here = queue.pop(0)
            for a in self.actions.get(here, []):
                if a.kind == "tap" and a.leads_to and a.leads_to not in seen and a.leads_to in self.actions:
                    seen.append(a.leads_to)
                    queue.append(a.leads_to)
        return seen

    def forget(self, action: Action) -> None:
        """Draw ``action`` no more (a replayed recording cannot follow it)."""
        here = self.actions.get(action.screen, [])
        if action in here:
            here.remove(action)

    def confirmations(self, screen: str) -> list[Action]:
        """The buttons of ``screen`` that complete a form there (create, save, OK...)."""
        out = []
        for a in self.actions.get(screen, []):
            if a.kind == "tap":
                words = set(re.findall(r"[a-z]+", a.element.split("__")[-1] + " " + self.describe(a.element)))
                if words & set(CONFIRM_WORDS):
                    out.append(a)
        return out

    def describe(self, name: str) -> str:
        element = self.document.element(name)
        return element.description.lower() if element is not None else ""

    # -- walks ---------------------------------------------------------------------------------

    def sample_walk(self, rng: random.Random, size: int) -> Walk | None:
        """A walk of ``size`` actions (fewer when it runs out of actions); None when none can start."""
        screen: str | None = rng.choice(self.anchors)
        actions: list[Action] = []
        used: set[tuple[str, str | None]] = set()
        for _ in range(size * 3):
            if len(actions) >= size:
                break
            here = screen if screen in self.actions and self.actions[screen] else rng.choice(self.anchors)
            pending_input = bool(actions) and actions[-1].kind == "input"
            candidates = [a for a in self.actions[here] if (a.element, a.child) not in used]
            if pending_input:  # a typed value wants its confirming tap
                candidates = [a for a in self.confirmations(here) if (a.element, a.child) not in used] or candidates
            if not candidates:
                screen = None
                continue
            action = rng.choices(candidates, weights=[_weight(a) for a in candidates])[0]
            actions.append(action)
            used.add((action.element, action.child))
            screen = action.leads_to or (here if action.kind == "input" or not self._transient(here) else None)
        if not actions:
            return None
        phrases = tuple(self.phrase(a, rng) for a in actions)
        joiners = tuple(rng.choice((", then ", ", ", "; then ", ", after that ")) for _ in actions)
        return Walk(self.document.app.name.lower(), tuple(actions), phrases, joiners)

    def _transient(self, screen: str) -> bool:
        found = self.document.screen(screen)
        return transient_screen(found) if found is not None else True

    # -- texts ---------------------------------------------------------------------------------

    def phrase(self, action: Action, rng: random.Random) -> str:
        """The task text of one action (a template filled from the element's description)."""
        if action.kind == "nav":
            return ""
        element = self.document.element(action.element)
        if element is None:
            return ""
        if action.kind == "input":
            noun = _noun(element.description)
            return rng.choice((f'enter "{action.text}" as {noun}', f'type "{action.text}" into {noun}',
                               f'set {noun} to "{action.text}"'))
        if action.kind == "option":
            noun = _noun(element.description)
            return rng.choice((f'choose "{action.text}" in {noun}', f'pick "{action.text}" from {noun}',
                               f'select "{action.text}"'))
        if action.kind == "item":
            noun = _noun(element.description)
            return rng.choice((f'tap "{action.text}" in {noun}', f'open "{action.text}" from {noun}'))
        child = self.document.element(action.child) if action.child else None
        if action.kind == "item_child" and child is not None:
            verb = _imperative(child.description)
            joint = " " if re.search(r" (of|for|to) the \w+$", verb) else " for "
            return f'{verb}{joint}"{action.text}"'
        return _imperative(element.description)


def _weight(action: Action) -> float:
    # Effects come from choosing, typing and item actions; plain taps mostly move between screens.
    return {"option": 3.0, "input": 3.0, "item_child": 2.0, "item": 1.5}.get(action.kind, 1.0)


def _path_arrivals(document: AppDocument) -> dict[tuple[str, str | None], str]:
    """``(element, matched text) -> screen``: where the last step of an element's path leads."""
    out: dict[tuple[str, str | None], str] = {}
    for screen in document.screens:
        for e in screen.elements:
            for path in e.paths:
                if path:
                    last: Step = path[-1]
                    if last.target and last.action == "tap":
                        out.setdefault((last.target, last.match), screen.name)
    return out


_PAREN = re.compile(r"\s*\([^)]*\)")


def _first_clause(description: str) -> str:
    text = _PAREN.sub("", " ".join(description.split()))
    return re.split(r"[.;:]\s|[.;]$", text, maxsplit=1)[0].strip().rstrip(".")


def _noun(description: str) -> str:
    text = (_first_clause(description) or "the field").split(", ")[0]  # "The hour, 0 to 23" -> "The hour"
    text = re.sub(r"^(all|every)\s", "the ", text, flags=re.IGNORECASE)
    return text[0].lower() + text[1:]


def _imperative(description: str) -> str:
    """``"Opens the search screen."`` -> ``"open the search screen"`` (a third-person verb made a command)."""
    text = _first_clause(description) or "tap it"
    words = text.split(" ")
    verb = _base_verb(words[0])
    if verb is None:  # a noun phrase ("The bar at the bottom..."): tap it
        return "tap " + _noun(text)
    words[0] = verb
    for i in range(1, len(words) - 1):  # "Pauses or resumes ...", "Deletes it and goes back"
        if words[i] in ("or", "and"):
            words[i + 1] = _base_verb(words[i + 1]) or words[i + 1]
            break
    out = " ".join(words)
    return out.replace(" this ", " the ").replace(" its ", " the ")


def _base_verb(word: str) -> str | None:
    low = word.lower()
    if low in ("the", "a", "an", "this", "its", "how", "what", "is", "has", "songs", "alarms", "notes"):
        return None
    if low.endswith("oes"):  # goes, does
        return low[:-2]
    if low.endswith(("shes", "ches", "sses", "xes", "zzes")):
        return low[:-2]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        return low[:-1]
    return None


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def normalise_script(script: str) -> str:
    """A script's text for deduplication: comments, blank lines and spacing dropped."""
    lines = []
    for line in script.splitlines():
        line = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        line = re.sub(r"\s+", " ", line).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def normalise_text(text: str) -> str:
    """A task text for deduplication: lower case, words only."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))
