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
  not deterministic: the state hash misses some app state, such as a permission granted by then),
  an outcome a task trace went through wins (DroidTask keeps ``traces/*.yaml`` beside the recording;
  each record's ``tag`` names a saved state a task acted on, and an event's outcome is the state
  saved right after it), then the outcome recorded most often, then the earliest;
* long taps, typed text (``set_text`` with the same text), keys (``BACK``...) and swipes
  (``scroll`` in the swipe's direction) follow a matching recorded event the same way;
* text fields behave like text fields where the recording is silent: a tap on a field focuses
  it, typed text the recording does not have is shown in the focused field (``input text``
  appends at the end, ``DEL`` deletes the last character), until the state changes; when the
  recording typed other text into the same field and that led to this same screen with only the
  field's text and which views are enabled changed (a Send button), that screen is the typed
  one's *twin*: the state stays (its own recorded inputs go on as recorded), the views the twin
  shows enabled are shown enabled, and an input the state has no recorded event for (or only one
  on a view it shows disabled) follows the twin's event for it (Send goes on to its confirmation);
* a state's saved copy can miss what an input made in it changed while the state stayed the same
  (a choice in an "Open with" dialog enables its Always button): after a recorded input that left
  the state as it was, a view that a recorded event from this state acted on (leading elsewhere)
  is shown enabled when the event recorded it enabled;
* a state the events name (the stop of one, the start of the next) that no file holds is the one
  state file saved between those two events, when no event names that file's own hash (DroidBot
  saved the screen under another hash);
* BACK behaves like Android's where the recording has no BACK from the current state (or only one
  that left it as it was, a keyboard hidden, and BACK comes again): a floating
  window (a dialog, a menu: a state whose root view does not fill the screen) is dismissed, back
  to the full-screen state it was opened on, and a full-screen state of another activity is
  finished, back to the state of the activity that started it (as the run came there);
* an input whose recorded outcome state was not saved leads to a stand-in screen that says so
  ("Not in the recording: ..."), so a run on the replay fails with that in its error instead of
  acting on a screen that did not change; BACK returns from it;
* anything else leaves the state unchanged and is logged in ``unmatched``.

Screen size: the start state's (``width``, ``height`` of its record). A recording can mix sessions
on phones of different sizes, and a state's hash is the same on both. A state recorded at another
width is shown scaled to the start state's width, and each event's view bounds are scaled from the
width of its own session (that of the state saved just before it, else just after it), so touches
are matched in the one screen's coordinates throughout.

Start state: the state recorded launches (``intent`` events) reach most often, the first of them in
tag order on a tie, because the recording's first state is the phone's home screen before the app
was started and the state most events start from is that same home screen (every run began with
kill + launch). Not simply the first launch's: an app's very first launch often shows a one-time
dialog (a warning, a what's-new) that later launches never show again, and whose answer may not
have been recorded. A recording without launches starts at its first state by tag. ``reset()`` and ``launch()`` go
back to the start state.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.sim.errors import SimUsageError
from tapir.sim.toolkit.app import LONG_PRESS_MS, TOUCH_SLOP, key_name
from tapir.sim.toolkit.dump import dump_xml
from tapir.sim.toolkit.render import render_png
from tapir.sim.toolkit.tree import Node, Rect


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
    #: What the acted-on view showed: (class, resource id, text, description); None when it showed
    #: no text nor description (then it is known by its bounds alone).
    view: tuple[str, str, str, str] | None = None
    #: Whether the acted-on view was enabled when it was acted on, as the event recorded it.
    enabled: bool = True


@dataclass(frozen=True)
class Unmatched:
    """An input the recording has no answer for (the state stayed as it was)."""

    action: str
    detail: str
    state: str


#: ``current_state`` of the stand-in screen shown after an input whose outcome was not saved.
UNRECORDED = "unrecorded"
UNRECORDED_ID = "org.tapir.replay:id/unrecorded"

Path_ = tuple[int, ...]


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
        view=_view_key(view) if view and (view.get("text") or view.get("content_description")) else None,
        enabled=bool(view.get("enabled", True)) if view else True,
    )


def _view_key(view: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(view.get("class") or ""), str(view.get("resource_id") or ""), str(view.get("text") or ""),
            str(view.get("content_description") or ""))


def _views_to_nodes(state: dict[str, Any], screen: Rect, scale: float = 1.0) -> list[Node]:
    """The recorded views as nodes, clipped to the state's own ``screen`` and then scaled by
    ``scale`` (a state recorded on a wider phone is shown at the replay's width)."""
    views = {v["temp_id"]: v for v in state.get("views", [])}

    def convert(view: dict[str, Any], index: int) -> Node | None:
        bounds = _rect(view["bounds"]).intersect(screen)
        if not view.get("visible", True) or bounds.empty:
            return None
        if scale != 1.0:
            bounds = Rect(*(round(c * scale) for c in bounds))
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


def _contents(views: list[dict[str, Any]], box: dict[str, Any],
              vertical: bool) -> dict[tuple[str, ...], tuple[int, int]]:
    """The views inside scroll view ``box`` (its descendants) that show a text or description, each
    keyed by what it says (class, id, text, description, and which of its kind it is) with its two edges along
    the scroll axis as recorded: (top, bottom), or (left, right) for a horizontal scroller."""
    by_id = {v.get("temp_id"): v for v in views}
    out: dict[tuple[str, ...], tuple[int, int]] = {}
    seen: Counter[tuple[str, ...]] = Counter()
    stack = list(box.get("children") or [])
    while stack:
        view = by_id.get(stack.pop(0))
        if view is None:
            continue
        stack.extend(view.get("children") or [])
        text, desc = view.get("text") or "", view.get("content_description") or ""
        if not (text or desc) or not view.get("bounds"):  # a recycled holder's id says nothing
            continue
        key = (str(view.get("class") or ""), str(view.get("resource_id") or ""), str(text), str(desc))
        seen[key] += 1
        (x1, y1), (x2, y2) = view["bounds"]
        out[(*key, str(seen[key]))] = (int(y1), int(y2)) if vertical else (int(x1), int(x2))
    return out


def _target(event: RecordedEvent) -> tuple[Any, ...]:
    """What an input acts on, whatever it typed: its kind, view, key and direction."""
    return (event.kind, event.bounds, key_name(event.key) if event.key else None, event.direction)


def _walk(roots: list[Node]) -> Iterator[tuple[Path_, Node]]:
    """Every node with its path of child positions from the roots, in pre-order."""
    stack: list[tuple[Path_, Node]] = [((i,), r) for i, r in reversed(list(enumerate(roots)))]
    while stack:
        path, node = stack.pop()
        yield path, node
        stack.extend(((*path, i), c) for i, c in reversed(list(enumerate(node.children))))


class ReplayApp:
    """A ``SimApp`` over a DroidBot recording (see the module docstring for the rules)."""

    def __init__(self, directory: Path | str, task: str | None = None) -> None:
        self.directory = Path(directory)
        #: The task whose trace (``traces/<task>.yaml``) this replay serves, if any.
        self.task = task
        state_dir, event_dir = self.directory / "states", self.directory / "events"
        if not state_dir.is_dir() or not event_dir.is_dir():
            raise SimUsageError(f"{self.directory} is not a DroidBot recording (it needs states/ and events/ folders)")
        #: One line per file left out because it cannot be read (real recordings hold empty ones).
        self.warnings: list[str] = []
        self.states: dict[str, dict[str, Any]] = {}
        recorded: list[tuple[str, str, int]] = []  # (tag, state_str, width) of every state file, in tag order
        for path in sorted(state_dir.glob("state_*.json")):
            raw = self._record(path, ("state_str", "tag"))
            if raw is not None:
                self.states.setdefault(raw["state_str"], raw)  # the first recording of a state stands for it
                recorded.append((str(raw["tag"]), str(raw["state_str"]), int(raw.get("width") or 0)))
        recorded.sort()
        #: (tag, state) of every state file in tag order: which screen was saved when.
        self._saved: list[tuple[str, str]] = [(t, st) for t, st, _ in recorded]
        if not self.states:
            raise SimUsageError(f"{state_dir} holds no readable state_*.json files")
        self.events: list[RecordedEvent] = []
        for path in sorted(event_dir.glob("event_*.json")):
            raw = self._record(path, ("event",))
            if raw is not None:
                self.events.append(_event(str(raw.get("tag") or path.stem.removeprefix("event_")), raw))
        self.events.sort(key=lambda e: e.tag)
        #: Tags of the recorded states that task traces acted on (``traces/*.yaml``, DroidTask's layout).
        trace = self._trace_tags()
        self.traced: frozenset[str] = frozenset(trace)
        self.events = self._named_states(recorded)
        #: Per event, the tag of the state file DroidBot saved right after it, when that is its stop state.
        self._stop_tag: dict[str, str] = {}
        tags = [t for t, _, _ in recorded]
        for e in self.events:
            i = bisect.bisect_right(tags, e.tag)
            if i < len(recorded) and recorded[i][1] == e.stop:
                self._stop_tag[e.tag] = recorded[i][0]
        first = min(self.states.values(), key=lambda s: s["tag"])
        launches = [e for e in self.events if e.kind == "intent" and e.stop in self.states]
        reached = Counter(e.stop for e in launches)
        self.start_state: str = max(reached, key=lambda s: (reached[s], -next(
            i for i, e in enumerate(launches) if e.stop == s))) if launches else first["state_str"]
        self.package: str = self._package(launches)
        self.label: str = self.package.rsplit(".", 1)[-1].title()
        start = self.states[self.start_state]
        self._size = (int(start.get("width") or 1080), int(start.get("height") or 2280))
        if task is not None and trace:
            # the task starts where its trace does (a task can begin on another launch state, or
            # mid-app), its first record's state
            self.start_state = next((st for t, st, _ in recorded if t == trace[0]), self.start_state)
        self.events = [self._on_screen(e, recorded, tags) for e in self.events]
        self._trees: dict[str, list[Node]] = {}
        self.reset()

    def _on_screen(self, event: RecordedEvent, recorded: list[tuple[str, str, int]],
                   tags: list[str]) -> RecordedEvent:
        """``event`` with its view's bounds in the replay's screen coordinates. DroidBot recorded them
        on the phone of the event's session, whose width is that of the state saved just before the
        event (its start state) or else just after it (its stop state); the same state, by hash, may
        have been recorded on a phone of another width in another session."""
        if event.bounds is None:
            return event
        i = bisect.bisect_right(tags, event.tag)
        width = next((w for j, want in ((i - 1, event.start), (i, event.stop))
                      if 0 <= j < len(recorded) and recorded[j][1] == want and (w := recorded[j][2]) > 0), 0)
        if not width or width == self._size[0]:
            return event
        scale = self._size[0] / width
        return dataclasses.replace(event, bounds=Rect(*(round(c * scale) for c in event.bounds)))

    def _named_states(self, recorded: list[tuple[str, str, int]]) -> list[RecordedEvent]:
        """The events, with a state no file holds renamed to the file that shows it. DroidBot can
        name a state in its events (the stop of one, the start of the next) and save that screen
        under another hash that no event names (notes' print dialog handing over to the files
        app's save screen). It is that file when the file is the only one saved between the
        event that led to the state and the next event, which starts from it."""
        named = {s for e in self.events for s in (e.start, e.stop)}
        tags = [t for t, _, _ in recorded]
        alias: dict[str, str] = {}
        for event, after in zip(self.events, self.events[1:], strict=False):
            if event.stop in self.states or event.stop in alias or after.start != event.stop:
                continue
            between = recorded[bisect.bisect_right(tags, event.tag):bisect.bisect_left(tags, after.tag)]
            if len(between) == 1 and between[0][1] not in named:
                alias[event.stop] = between[0][1]
        if not alias:
            return self.events
        return [dataclasses.replace(e, start=alias.get(e.start, e.start), stop=alias.get(e.stop, e.stop))
                for e in self.events]

    def _record(self, path: Path, needs: tuple[str, ...]) -> dict[str, Any] | None:
        """The record in a file, or None (with a warning) when it cannot be read or lacks a key."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except RecursionError:  # nested past the decoder's limit: no DroidBot record is
            self.warnings.append(f"{path.name} cannot be read: it is nested too deep")
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.warnings.append(f"{path.name} cannot be read: {exc}")
            return None
        if not isinstance(raw, dict) or any(not raw.get(k) for k in needs):
            self.warnings.append(f"{path.name} is not a DroidBot record with {', '.join(needs)}")
            return None
        if ("event" in needs and not isinstance(raw["event"], dict)) or (
                "state_str" in needs and not isinstance(raw.get("views"), list)):
            self.warnings.append(f"{path.name} is not a DroidBot record (its event or views are missing)")
            return None
        return raw

    def _trace_tags(self) -> list[str]:
        """The ``tag:`` of every record of the task traces kept beside the recording, in order (only
        the ``task``'s trace when one is named): each names the recorded state a task's action was
        taken in (read as text: the sim parses no YAML)."""
        tags: list[str] = []
        paths = sorted((self.directory / "traces").glob("*.yaml"))
        if self.task is not None:
            paths = [self.directory / "traces" / f"{self.task}.yaml"]
            if not paths[0].is_file():
                raise SimUsageError(f"{self.directory} has no trace traces/{self.task}.yaml for task {self.task!r}")
        for path in paths:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.warnings.append(f"traces/{path.name} cannot be read: {exc}")
                continue
            tags += re.findall(r"^\s*-?\s*tag:\s*['\"]?([\w.-]+)", text, re.MULTILINE)
        return tags

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
        state = self._gap[0] if self.current_state == UNRECORDED and self._gap else self.current_state
        fg = str(self.states[state].get("foreground_activity") or f"{self.package}/.MainActivity")
        package, _, act = fg.partition("/")
        return package + act if act.startswith(".") else act

    @property
    def screen_size(self) -> tuple[int, int]:
        return self._size

    def reset(self) -> None:
        self.current_state = self.start_state
        #: The full-screen states the run came through, in order (cut back when it returns to
        #: one): where an unrecorded BACK returns (see ``_back``).
        self._trail: list[str] = []
        self.unmatched: list[Unmatched] = []
        #: The events followed so far, in order (a trace of the replay).
        self.followed: list[RecordedEvent] = []
        self._enter(self.start_state)

    def launch(self) -> None:
        self._trail = []
        self._enter(self.start_state)

    def _enter(self, state: str) -> None:
        """Move to a state: what was typed into the fields of the last one is gone with it."""
        self.current_state = state
        #: Text shown in fields instead of the recorded one (field path -> text), for this state.
        self.typed: dict[Path_, str] = {}
        self._focus: Path_ | None = None
        #: Per field holding typed text, the states other recorded text typed there led to that are
        #: this one but for that text and which views are enabled (see ``_typed_twins``).
        self._twins: dict[Path_, tuple[str, ...]] = {}
        #: Whether a recorded input left this state as it was (a choice made in a dialog).
        self._stirred = False
        #: Whether the last input was a recorded BACK that left this state as it was.
        self._backed = False
        if state != UNRECORDED:
            self._gap: tuple[str, str] | None = None  # (state before, why) for the stand-in screen
            if not self.floating(state):
                if state in self._trail:  # came back to it: what was opened after it is closed
                    del self._trail[self._trail.index(state) + 1:]
                else:
                    self._trail.append(state)

    def dump_xml(self) -> str:
        return dump_xml(self.window_roots())

    def screenshot_png(self) -> bytes:
        return render_png([(root, False) for root in self.window_roots()], self._size)

    def _scale(self, state: str | None = None) -> float:
        """How much a state's recorded coordinates are scaled to be shown: a recording can mix
        sessions on phones of different widths (1440 and 1080 pixels); every state is shown at the
        start state's width, its own size given by its record (``width``, ``height``)."""
        state = state or self.current_state
        record = self.states.get(state)
        width = int(record.get("width") or 0) if record else 0
        return self._size[0] / width if width > 0 else 1.0

    def _in_state(self, x: int, y: int) -> tuple[int, int]:
        """A point on the shown screen in the current state's recorded coordinates."""
        scale = self._scale()
        return (x, y) if scale == 1.0 else (int(x / scale), int(y / scale))

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
        if not found and self.current_state != UNRECORDED:
            # the state's own views are in its recorded coordinates
            (sx1, sy1), (sx2, sy2) = self._in_state(x1, y1), self._in_state(x2, y2)
            scrolled = self._scrolled_state(direction, sx1, sy1, max(abs(sx2 - sx1), abs(sy2 - sy1)))
            if scrolled is not None:
                self._enter(scrolled)
                return
        self._follow(found, "swipe", f"{x1},{y1} -> {x2},{y2} ({direction})")

    def input_text(self, text: str) -> None:
        field = self._field()
        shown = self._field_text(field) if field is not None else None
        recorded = [e for e in self._from_here("set_text") if e.text == text]
        # the recorded input replaced the field's text: follow it when the field was emptied first
        # (or nothing was typed into it yet)
        if recorded and (field is None or field not in self.typed or not shown):
            self._follow(recorded, "text", repr(text))
            return
        if field is None:
            self.unmatched.append(Unmatched("text", repr(text) + " (no text field)", self.current_state))
            return
        self.typed[field] = (shown or "") + text
        twins = self._typed_twins(field)
        if twins:
            self._twins[field] = twins

    def key(self, keycode: str) -> bool:
        name = key_name(keycode)
        found = [e for e in self._from_here("key") if key_name(e.key or "") == name]
        if found:
            # a recorded BACK that left the state as it was hid the keyboard; a second one closes
            # the window (DroidBot's hash does not see the keyboard)
            stays = name == "BACK" and all(e.stop == self.current_state for e in found)
            if stays and self._backed and (beneath := self._back()) is not None:
                self._enter(beneath)
                return True
            self._follow(found, "key", name)
            self._backed = stays
            return True
        if self.current_state == UNRECORDED and name == "BACK" and self._gap is not None:
            self._enter(self._gap[0])
            return True
        if name == "BACK" and (beneath := self._back()) is not None:
            self._enter(beneath)
            return True
        field = self._field()
        if field is not None and name in ("DEL", "MOVE_END", "MOVE_HOME", "FORWARD_DEL"):
            if name == "DEL":
                self.typed[field] = self._field_text(field)[:-1]
                if not self.typed[field]:
                    self._twins.pop(field, None)  # an emptied field enables nothing
            return True  # the field's cursor moves (at the end: FORWARD_DEL deletes nothing)
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
        if self.current_state == UNRECORDED:
            return [self._stand_in()]
        tree = self._recorded_roots()
        # The state's hash misses what a choice made in it changed (a resolver's Always button is
        # enabled once an app is picked, and saved disabled): after a recorded input that left the
        # state as it was, a view that an event from here acted on is shown as the event saw it.
        enable: set[Rect] = set()
        if self._stirred:
            went_on = {e.bounds for e in self.events_from(self.current_state) if e.enabled and e.stop != e.start}
            enable = {n.bounds for _, n in _walk(tree) if not n.enabled and n.bounds in went_on}
        if not self.typed and self._focus is None and not enable:
            return tree
        enabled_in_twin = {path for twin in self._twin_states() for path, n in _walk(self._recorded_roots(twin))
                           if n.enabled}
        tree = copy.deepcopy(tree)
        for path, node in _walk(tree):
            if path in self.typed:
                node.text = self.typed[path]
            if self._focus is not None:
                node.focused = path == self._focus
            node.enabled = node.enabled or node.bounds in enable or path in enabled_in_twin
        return tree

    def _recorded_roots(self, state: str | None = None) -> list[Node]:
        state = state or self.current_state
        tree = self._trees.get(state)
        if tree is None:
            record = self.states[state]
            own = (int(record.get("width") or self._size[0]), int(record.get("height") or self._size[1]))
            tree = _views_to_nodes(record, Rect(0, 0, *own), self._scale(state))
            self._trees[state] = tree
        return tree

    def _typed_twins(self, field: Path_) -> tuple[str, ...]:
        """The states recorded ``set_text`` events into ``field`` here led to that show this same
        screen with other text in the field (and other views enabled: a Send button), in event
        order: what the recording knows of this screen with text typed there. Not a state whose
        screen differs in anything else (a search's results depend on the text)."""
        def shape(roots: list[Node]) -> list[tuple[Any, ...]]:
            return [(p, n.cls, n.resource_id, n.desc, n.bounds, None if p == field else n.text)
                    for p, n in _walk(roots)]

        here = shape(self._recorded_roots())
        box = next((b for p, _, _, _, b, _ in here if p == field), None)
        twins = (e.stop for e in self._own("set_text") if e.bounds == box and e.stop in self.states
                 and e.stop != self.current_state and shape(self._recorded_roots(e.stop)) == here)
        return tuple(dict.fromkeys(twins))

    def _twin_states(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t for twins in self._twins.values() for t in twins))

    def _borrowed(self, kind: str | None = None) -> list[RecordedEvent]:
        """The twins' events (``_typed_twins``) on what the current state has no recorded event for,
        or only one on a view it shows disabled that a twin shows enabled (a Send button typed text
        enables): the state's own recorded inputs keep their outcomes, the twins add the ones that
        need the typed text."""
        twins = self._twin_states()
        if not twins:
            return []
        woken = ({n.bounds for _, n in _walk(self._recorded_roots()) if not n.enabled}
                 & {n.bounds for twin in twins for _, n in _walk(self._recorded_roots(twin)) if n.enabled})
        taken = {_target(e) for e in self._own(kind) if e.bounds is None or e.bounds not in woken}
        return [e for twin in twins for e in self.events_from(twin, kind) if _target(e) not in taken]

    def _stand_in(self) -> Node:
        """The screen after an input whose outcome state the recording did not save."""
        why = self._gap[1] if self._gap else "this input"
        width, height = self._size
        text = Node(cls="android.widget.TextView", bounds=Rect(42, 200, width - 42, 420), resource_id=UNRECORDED_ID,
                    text=f"Not in the recording: {why}", package=self.package)
        return Node(cls="android.widget.FrameLayout", bounds=Rect(0, 0, width, height), package=self.package,
                    children=[text])

    def _field(self) -> Path_ | None:
        """The text field typed text goes to: the one tapped last, else the recorded focused one,
        else the only one."""
        if self.current_state == UNRECORDED:
            return None
        if self._focus is not None:
            return self._focus
        fields = [(path, n) for path, n in _walk(self._recorded_roots()) if n.style == "input"]
        focused = [path for path, n in fields if n.focused]
        if focused:
            return focused[0]
        return fields[0][0] if len(fields) == 1 else None

    def _field_text(self, path: Path_) -> str:
        if path in self.typed:
            return self.typed[path]
        return next((n.text for p, n in _walk(self._recorded_roots()) if p == path), "")

    def events_from(self, state: str, kind: str | None = None) -> list[RecordedEvent]:
        return [e for e in self.events if e.start == state and (kind is None or e.kind == kind)]

    def floating(self, state: str) -> bool:
        """Whether a recorded state is a floating window (a dialog, a menu, a sheet): its root
        view does not fill the screen, as an activity's does."""
        record = self.states.get(state)
        if not record or not record.get("views"):
            return False
        root = record["views"][0]
        full = [[0, 0], [record.get("width"), record.get("height")]]
        return bool(record.get("width")) and root.get("bounds") != full

    def _back(self) -> str | None:
        """Where BACK goes when the recording has no BACK from here (None: nowhere known)."""
        here = self.current_state
        if here == UNRECORDED or here == self.start_state:
            return None
        activity = self._activity_of(here)
        trail = [s for s in self._trail if s != here]
        if self.floating(here):  # dismissed: the screen it was opened on shows again
            under = trail[-1] if trail else None
            return under if under is not None and self._activity_of(under) == activity else None
        # an activity finishes: the one that started it shows its last state again
        for i in range(len(self._trail) - 1, 0, -1):
            if self._activity_of(self._trail[i]) == activity and self._activity_of(self._trail[i - 1]) != activity:
                return self._trail[i - 1]
        return None

    def _activity_of(self, state: str) -> str:
        return str(self.states.get(state, {}).get("foreground_activity") or "")

    def go_to(self, state: str) -> None:
        """Jump to a recorded state (tests start flows in the middle of a recording)."""
        if state not in self.states:
            raise SimUsageError(f"state {state[:12]}… is not in the recording")
        self._enter(state)

    # ------------------------------------------------------------------------------------ machinery

    def _from_here(self, kind: str) -> list[RecordedEvent]:
        return self._own(kind) + self._borrowed(kind)

    def _own(self, kind: str | None = None) -> list[RecordedEvent]:
        return self.events_from(self.current_state, kind)

    def _touch(self, kind: str, x: int, y: int) -> None:
        found = [e for e in self._from_here(kind) if e.bounds is not None and e.bounds.contains(x, y)]
        # The smallest view under the finger is the one on top; ties go to the earliest event.
        found.sort(key=lambda e: (e.bounds.width * e.bounds.height if e.bounds else 0, e.tag))
        if not found and kind == "click" and self.current_state != UNRECORDED:
            field = self._field_at(x, y)
            if field is not None:
                self._focus = field  # a tap on a text field focuses it
                return
        if not found and self.current_state != UNRECORDED:
            found = self._same_view_scrolled(kind, x, y) or self._same_tab_elsewhere(kind, x, y)
        self._follow(found, "tap" if kind == "click" else "long_tap", f"{x},{y}")

    def _scrolled_state(self, direction: str, x: int, y: int, distance: int) -> str | None:
        """The recorded state that shows the current one scrolled once in ``direction`` by the
        scroll view under (x, y), when the recording saved that state but not the scroll that led
        to it (DroidBot often saves no ``scroll`` events; a task's scroll then has no event).

        A candidate is a state of the same activity with the same scroll view (class, id, bounds)
        whose contents are the current ones moved the same distance the swipe's way, by at least a
        tenth of the view: most views the two share inside the view move by one common offset (a
        view clipped at the edge keeps the other edge, so both edges vote). The move closest to the
        finger's ``distance`` is the scroll (the end of a list moves less)."""
        here = self.states[self.current_state]
        views = here.get("views") or []
        scrollers = [v for v in views if v.get("scrollable") and v.get("visible", True) and v.get("bounds")
                     and _rect(v["bounds"]).contains(x, y)]
        if not scrollers:
            return None
        box = min(scrollers, key=lambda v: _rect(v["bounds"]).width * _rect(v["bounds"]).height)
        vertical = direction in ("DOWN", "UP")
        sign = -1 if direction in ("DOWN", "RIGHT") else 1  # scrolling down moves the contents up
        inside = _contents(views, box, vertical)
        extent = _rect(box["bounds"]).height if vertical else _rect(box["bounds"]).width
        least = extent // 10  # a state a few pixels off is a re-layout, not a scroll (the end of a list moves less)
        if len(inside) < 3:
            return None
        best: tuple[int, str, str] | None = None
        for state_str, other in self.states.items():
            if state_str == self.current_state or other.get("foreground_activity") != here.get("foreground_activity"):
                continue
            others = other.get("views") or []
            twin = [v for v in others if v.get("scrollable") and v.get("class") == box.get("class")
                    and v.get("resource_id") == box.get("resource_id") and v.get("bounds") == box.get("bounds")]
            if not twin:
                continue
            moved = _contents(others, twin[0], vertical)
            shared = set(inside) & set(moved)
            if len(shared) < 2:
                continue
            votes: Counter[int] = Counter()
            for key in shared:
                (top, bottom), (top2, bottom2) = inside[key], moved[key]
                votes.update({top2 - top, bottom2 - bottom} - {0})  # a clipped edge stays put: it votes for no move
            if not votes:
                continue
            offset, count = votes.most_common(1)[0]
            if count < max(2, len(shared) // 2) or (offset > 0) != (sign > 0) or abs(offset) < least:
                continue
            rank = (abs(abs(offset) - distance), str(other.get("tag", "")), state_str)
            if best is None or rank < best:
                best = rank
        return best[-1] if best is not None else None

    def _same_view_scrolled(self, kind: str, x: int, y: int) -> list[RecordedEvent]:
        """Events on the view under (x, y) recorded in the same screen at another scroll position.

        DroidBot's state hash covers the scroll position, so a list scrolled a row further is
        another state, and the tap on an item may be recorded in only one of them. A state counts as
        the same screen scrolled when it has the same activity and a scroll view with the same class,
        id and bounds, holding the view under the finger; the view is matched by what it shows
        (class, id, text, description), the smallest such view under the finger first."""
        here = self.states[self.current_state]
        views = here.get("views") or []
        under = self._shown_under(x, y)
        by_id = {v.get("temp_id"): v for v in views}

        def scroller(view: dict[str, Any]) -> dict[str, Any] | None:
            parent = by_id.get(view.get("parent"))
            while parent is not None and not parent.get("scrollable"):
                parent = by_id.get(parent.get("parent"))
            return parent

        for view in under:
            box = scroller(view)
            if box is None:
                continue
            shape = (box.get("class"), box.get("resource_id"), box.get("bounds"))
            key = _view_key(view)
            found = [e for e in self.events if e.kind == kind and e.view == key and e.start != self.current_state
                     and (screen := self._screen_of(e)) is not None
                     and screen.get("foreground_activity") == here.get("foreground_activity")
                     and any(v.get("scrollable") and (v.get("class"), v.get("resource_id"), v.get("bounds")) == shape
                             for v in screen.get("views") or [])]
            if found:
                return found
        return []

    def _same_tab_elsewhere(self, kind: str, x: int, y: int) -> list[RecordedEvent]:
        """Events on the tab under (x, y) recorded in another state of the same activity.

        A tab shows its page whatever the page before it showed, but DroidBot records the tap on a
        tab in the state it happened to be in (the Storage tab from a Recents page whose list has
        since changed, so whose hash differs). A view is a tab when another view of this state with
        its resource id is selected (the tab bar's current tab); the selected tab itself leads
        nowhere new."""
        here = self.states[self.current_state]
        current = {v.get("resource_id") for v in here.get("views") or [] if v.get("selected") and v.get("resource_id")}
        for view in self._shown_under(x, y):
            if view.get("selected") or view.get("resource_id") not in current:
                continue
            key = _view_key(view)
            found = [e for e in self.events if e.kind == kind and e.view == key and e.start != self.current_state
                     and (screen := self._screen_of(e)) is not None
                     and screen.get("foreground_activity") == here.get("foreground_activity")]
            if found:
                return found
        return []

    def _shown_under(self, x: int, y: int) -> list[dict[str, Any]]:
        """The current state's visible views that show a text or description under (x, y), the
        smallest (the one on top) first."""
        sx, sy = self._in_state(x, y)
        views = self.states[self.current_state].get("views") or []
        return sorted((v for v in views if v.get("visible", True) and v.get("bounds")
                       and (v.get("text") or v.get("content_description")) and _rect(v["bounds"]).contains(sx, sy)),
                      key=lambda v: _rect(v["bounds"]).width * _rect(v["bounds"]).height)

    def _screen_of(self, event: RecordedEvent) -> dict[str, Any] | None:
        """The recorded state ``event`` was sent in; when DroidBot did not save it, the state saved
        last before the event (a screen it dumped a moment earlier: the same list a little less
        scrolled, whose hash differs), for ``_same_view_scrolled`` to tell whether it is the
        current screen scrolled. None when no state was saved before the event."""
        if event.start in self.states:
            return self.states[event.start]
        i = bisect.bisect_right(self._saved, event.tag, key=lambda saved: saved[0]) - 1
        return self.states.get(self._saved[i][1]) if i >= 0 else None

    def _field_at(self, x: int, y: int) -> Path_ | None:
        hits = [(n.bounds.width * n.bounds.height, path) for path, n in _walk(self._recorded_roots())
                if n.style == "input" and n.bounds.contains(x, y)]
        return min(hits)[1] if hits else None

    def _follow(self, found: list[RecordedEvent], action: str, detail: str) -> None:
        known = [e for e in found if e.stop in self.states]
        if not known:
            why = " (its stop state was not recorded)" if found else ""
            self.unmatched.append(Unmatched(action, detail + why, self.current_state))
            if found and self.current_state != UNRECORDED:
                lost = found[0]
                why = (f"the {action} at {detail} on state {self.current_state[:12]} (event {lost.tag}) led to "
                       f"state {lost.stop[:12]}, which was not saved")
                self._gap = (self.current_state, why)
                self._enter(UNRECORDED)
            return
        # The same input on the same view can be recorded more than once with different outcomes
        # (state the hash does not capture: a permission granted by then). An outcome a task trace
        # went through wins (the task was recorded that way), then the one recorded most often,
        # then the earliest.
        best = known[0]
        rivals = [e for e in known if e.bounds == best.bounds]
        votes = Counter(e.stop for e in rivals)
        chosen = min(rivals, key=lambda e: (self._stop_tag.get(e.tag) not in self.traced, -votes[e.stop], e.tag))
        self.followed.append(chosen)
        if chosen.stop == chosen.start != self.current_state and chosen.start in self._twin_states():
            return  # a twin's input that left its screen as it was leaves this one as typed
        self._enter(chosen.stop)
        self._stirred = chosen.start == chosen.stop
