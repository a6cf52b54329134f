"""``ReplayApp``: a recorded DroidBot session served as a simulated app.

A DroidBot recording is a folder with ``states/state_<tag>.json`` (the view tree of a screen,
identified by its ``state_str`` hash) and ``events/event_<tag>.json`` (an input, the state it was
sent in and the state that followed). Together they are a map of the app: which input in which
screen led where. ``ReplayApp`` walks that map:

* the current state is dumped as uiautomator XML built from the recorded views (invisible views are
  left out, indexes keep the recorded numbering);
* a tap inside the view a recorded ``click`` acted on in the current state moves to that event's
  stop state; when several recorded views contain the point, the smallest one wins (it is drawn on
  top); when the same view was clicked several times with different outcomes (the recording is
  not deterministic: the state hash misses some app state), the outcome recorded most often wins,
  then the earliest;
* long taps, typed text (``set_text`` with the same text), keys (``BACK``...) and swipes
  (``scroll`` in the swipe's direction) follow a matching recorded event the same way;
* anything else leaves the state unchanged and is logged in ``unmatched``.

Start state: the state reached by the first recorded launch (an ``intent`` event, in tag order),
because the recording's first state is the phone's home screen before the app was started and
the state most events start from is that same home screen (every run began with kill + launch).
A recording without launches starts at its first state by tag. ``reset()`` and ``launch()`` go
back to the start state.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.runtime.sim.errors import SimUsageError
from tapir.runtime.sim.toolkit.app import LONG_PRESS_MS, TOUCH_SLOP, key_name
from tapir.runtime.sim.toolkit.dump import dump_xml
from tapir.runtime.sim.toolkit.render import render_png
from tapir.runtime.sim.toolkit.tree import Node, Rect


@dataclass(frozen=True)
class RecordedEvent:
    tag: str
    kind: str
    start: str
    stop: str
    bounds: Rect | None = None
    text: str | None = None
    key: str | None = None
    direction: str | None = None
    intent: str | None = None


@dataclass(frozen=True)
class Unmatched:
    """An input the recording has no answer for (the state stayed as it was)."""

    action: str
    detail: str
    state: str


def _rect(bounds: Any) -> Rect:
    (x1, y1), (x2, y2) = bounds
    return Rect(int(x1), int(y1), int(x2), int(y2))


def _event(tag: str, raw: dict[str, Any]) -> RecordedEvent:
    ev = raw["event"]
    view = ev.get("view") or None
    return RecordedEvent(
        tag=tag,
        kind=str(ev.get("event_type", "")),
        start=str(raw.get("start_state", "")),
        stop=str(raw.get("stop_state", "")),
        bounds=_rect(view["bounds"]) if view and view.get("bounds") else None,
        text=ev.get("text"),
        key=ev.get("name"),
        direction=(ev.get("direction") or None),
        intent=ev.get("intent"),
    )


def _views_to_nodes(state: dict[str, Any], screen: Rect) -> list[Node]:
    views = {v["temp_id"]: v for v in state.get("views", [])}

    def convert(view: dict[str, Any], index: int) -> Node | None:
        bounds = _rect(view["bounds"]).intersect(screen)
        if not view.get("visible", True) or bounds.empty:
            return None
        node = Node(
            cls=view.get("class") or "",
            bounds=bounds,
            resource_id=view.get("resource_id") or "",
            text=view.get("text") or "",
            desc=view.get("content_description") or "",
            package=view.get("package") or "",
            checkable=bool(view.get("checkable")),
            checked=bool(view.get("checked")),
            clickable=bool(view.get("clickable")),
            enabled=bool(view.get("enabled", True)),
            focusable=bool(view.get("focusable")),
            focused=bool(view.get("focused")),
            scrollable=bool(view.get("scrollable")),
            long_clickable=bool(view.get("long_clickable")),
            password=bool(view.get("is_password")),
            selected=bool(view.get("selected")),
            index=index,
            style="input" if view.get("editable") else "",
        )
        for i, child_id in enumerate(view.get("children") or []):
            child = views.get(child_id)
            if child is not None:
                converted = convert(child, i)
                if converted is not None:
                    node.children.append(converted)
        return node

    roots = [v for v in views.values() if v.get("parent", -1) == -1]
    return [n for n in (convert(v, i) for i, v in enumerate(roots)) if n is not None]


def _swipe_direction(x1: int, y1: int, x2: int, y2: int) -> str:
    """DroidBot's name for the scroll a swipe makes: the finger moving up scrolls ``DOWN``."""
    dx, dy = x2 - x1, y2 - y1
    if abs(dy) >= abs(dx):
        return "DOWN" if dy < 0 else "UP"
    return "RIGHT" if dx < 0 else "LEFT"


class ReplayApp:
    """A ``SimApp`` over a DroidBot recording (see the module docstring for the rules)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        state_dir, event_dir = self.directory / "states", self.directory / "events"
        if not state_dir.is_dir() or not event_dir.is_dir():
            raise SimUsageError(f"{self.directory} is not a DroidBot recording (it needs states/ and events/ folders)")
        self.states: dict[str, dict[str, Any]] = {}
        for path in sorted(state_dir.glob("state_*.json")):
            raw = json.loads(path.read_text(encoding="utf-8"))
            self.states.setdefault(raw["state_str"], raw)  # the first recording of a state stands for it
        if not self.states:
            raise SimUsageError(f"{state_dir} holds no state_*.json files")
        self.events: list[RecordedEvent] = []
        for path in sorted(event_dir.glob("event_*.json")):
            raw = json.loads(path.read_text(encoding="utf-8"))
            self.events.append(_event(str(raw.get("tag") or path.stem.removeprefix("event_")), raw))
        self.events.sort(key=lambda e: e.tag)
        first = min(self.states.values(), key=lambda s: s["tag"])
        launches = [e for e in self.events if e.kind == "intent" and e.stop in self.states]
        self.start_state: str = launches[0].stop if launches else first["state_str"]
        self.package: str = self._package(launches)
        self.label: str = self.package.rsplit(".", 1)[-1].title()
        start = self.states[self.start_state]
        self._size = (int(start.get("width") or 1080), int(start.get("height") or 2280))
        self._trees: dict[str, list[Node]] = {}
        self.reset()

    def _package(self, launches: list[RecordedEvent]) -> str:
        for e in launches:
            match = re.search(r"\bam start\s+(?:-n\s+)?([\w.]+)/", e.intent or "")
            if match:
                return match.group(1)
        packages = Counter(v.get("package") for v in self.states[self.start_state]["views"] if v.get("package"))
        return packages.most_common(1)[0][0] if packages else "unknown"

    # ------------------------------------------------------------------------------------ SimApp

    @property
    def activity(self) -> str:
        fg = str(self.states[self.current_state].get("foreground_activity") or f"{self.package}/.MainActivity")
        package, _, act = fg.partition("/")
        return package + act if act.startswith(".") else act

    @property
    def screen_size(self) -> tuple[int, int]:
        return self._size

    def reset(self) -> None:
        self.current_state = self.start_state
        self.unmatched: list[Unmatched] = []
        #: The events followed so far, in order (a trace of the replay).
        self.followed: list[RecordedEvent] = []

    def launch(self) -> None:
        self.current_state = self.start_state

    def dump_xml(self) -> str:
        return dump_xml(self.window_roots())

    def screenshot_png(self) -> bytes:
        return render_png([(root, False) for root in self.window_roots()], self._size)

    def tap(self, x: int, y: int) -> None:
        self._touch("click", x, y)

    def long_tap(self, x: int, y: int) -> None:
        self._touch("long_click", x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        if abs(x2 - x1) < TOUCH_SLOP and abs(y2 - y1) < TOUCH_SLOP:
            self._touch("long_click" if duration_ms >= LONG_PRESS_MS else "click", x1, y1)
            return
        direction = _swipe_direction(x1, y1, x2, y2)
        found = [e for e in self._from_here("scroll")
                 if e.direction == direction and (e.bounds is None or e.bounds.contains(x1, y1))]
        self._follow(found, "swipe", f"{x1},{y1} -> {x2},{y2} ({direction})")

    def input_text(self, text: str) -> None:
        found = [e for e in self._from_here("set_text") if e.text == text]
        self._follow(found, "text", repr(text))

    def key(self, keycode: str) -> bool:
        name = key_name(keycode)
        found = [e for e in self._from_here("key") if key_name(e.key or "") == name]
        if found:
            self._follow(found, "key", name)
            return True
        if name == "HOME" or (name == "BACK" and self.current_state == self.start_state):
            return False  # the device handles it: the app is left
        self.unmatched.append(Unmatched("key", name, self.current_state))
        return name == "BACK"

    # ------------------------------------------------------------------------------------ inspection

    @property
    def current_screen(self) -> str:
        """The short activity name of the current state (``MainActivity``)."""
        return self.activity.rsplit(".", 1)[-1]

    def window_roots(self) -> list[Node]:
        tree = self._trees.get(self.current_state)
        if tree is None:
            tree = _views_to_nodes(self.states[self.current_state], Rect(0, 0, *self._size))
            self._trees[self.current_state] = tree
        return tree

    def events_from(self, state: str, kind: str | None = None) -> list[RecordedEvent]:
        return [e for e in self.events if e.start == state and (kind is None or e.kind == kind)]

    def go_to(self, state: str) -> None:
        """Jump to a recorded state (tests start flows in the middle of a recording)."""
        if state not in self.states:
            raise SimUsageError(f"state {state[:12]}… is not in the recording")
        self.current_state = state

    # ------------------------------------------------------------------------------------ machinery

    def _from_here(self, kind: str) -> list[RecordedEvent]:
        return self.events_from(self.current_state, kind)

    def _touch(self, kind: str, x: int, y: int) -> None:
        found = [e for e in self._from_here(kind) if e.bounds is not None and e.bounds.contains(x, y)]
        # The smallest view under the finger is the one on top; ties go to the earliest event.
        found.sort(key=lambda e: (e.bounds.width * e.bounds.height if e.bounds else 0, e.tag))
        self._follow(found, "tap" if kind == "click" else "long_tap", f"{x},{y}")

    def _follow(self, found: list[RecordedEvent], action: str, detail: str) -> None:
        known = [e for e in found if e.stop in self.states]
        if not known:
            why = " (its stop state was not recorded)" if found else ""
            self.unmatched.append(Unmatched(action, detail + why, self.current_state))
            return
        # The same input on the same view can be recorded more than once with different outcomes
        # (state the hash does not capture); the outcome recorded most often wins, then the earliest.
        best = known[0]
        rivals = [e for e in known if e.bounds == best.bounds]
        votes = Counter(e.stop for e in rivals)
        chosen = min(rivals, key=lambda e: (-votes[e.stop], e.tag))
        self.followed.append(chosen)
        self.current_state = chosen.stop
