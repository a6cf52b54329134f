"""Convert a DroidBot recording (``states/``, ``events/``) into a Tapir trace.

DroidBot (and the AutoDroid / DroidTask recordings made with it) stores every screen as
``states/state_<tag>.json`` (a view list; ``state_str`` is a hash of its content) and every input
as ``events/event_<tag>.json`` with the hashes of the states it started and stopped in. Several
files can share a hash (the same screen seen again); each event is joined to the file recorded
closest before it (its start) and closest after it (its stop), by tag, which is a timestamp.

    summary = import_droidbot("shared/upstream/droidtask/apps/clock", "clock-trace/")
    print(summary.render())

Events become trace actions: ``click`` -> ``tap``, ``long_click`` -> ``long_tap``, ``set_text`` ->
``text``, ``scroll`` -> ``scroll``, ``key`` BACK/ENTER -> ``back``/``enter``, ``intent`` (``am
start``) -> ``start``; ``kill_app`` and other keys are left out and counted. The state files are
copied as they are, so node ids in the trace are DroidBot's ``temp_id`` values.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.core.errors import HierarchyError, UsageError
from tapir.docgen.build.trace import Action, Target, TraceWriter
from tapir.hierarchy import Bounds, UITree, parse_droidbot_state

_START = re.compile(r"\bam start\s+(?:-n\s+)?([\w.]+)/")


@dataclass
class DroidBotImport:
    source: str
    output: str
    package: str
    states: int = 0
    steps: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    #: One line per file or event left out because the recording is broken there.
    warnings: list[str] = field(default_factory=list)

    def render(self) -> str:
        acts = ", ".join(f"{k} {n}" for k, n in sorted(self.actions.items()))
        lines = [f"imported {self.source}: {self.states} states, {self.steps} steps ({acts}) "
                 f"for {self.package} -> {self.output}"]
        for reason, n in sorted(self.skipped.items()):
            lines.append(f"left out: {n} {reason}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def skip(self, reason: str, warning: str | None = None) -> None:
        """Count what is left out; a broken recording also says where, one line each."""
        self.skipped[reason] += 1
        if warning:
            self.warnings.append(warning)


@dataclass(frozen=True)
class _StateFile:
    tag: str
    path: Path
    state_str: str
    raw: dict[str, Any]
    tree: UITree


@dataclass(frozen=True)
class _EventFile:
    tag: str
    path: Path
    raw: dict[str, Any]

    @property
    def event(self) -> dict[str, Any]:
        ev = self.raw.get("event")
        return ev if isinstance(ev, dict) else {}


_UNREADABLE_STATES = "state files that cannot be read"
_UNREADABLE_EVENTS = "event files that cannot be read"
_MISSING_STATES = "events whose start or stop state was not recorded"


def _load(path: Path) -> dict[str, Any] | str:
    """The record in a file, or why it cannot be read (recordings have empty or cut-off files)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return str(getattr(exc, "strerror", None) or exc)
    if not isinstance(data, dict):
        return "not a DroidBot record (expected a JSON object)"
    return data


def _read_states(state_dir: Path, summary: DroidBotImport) -> list[_StateFile]:
    """The readable state files, by tag; each one that is not is left out with a warning."""
    files: list[_StateFile] = []
    for path in sorted(state_dir.glob("state_*.json")):
        raw = _load(path)
        if isinstance(raw, dict):
            try:
                # parsed here so that a broken hierarchy is left out now, not met by docgen later
                tree = parse_droidbot_state(raw)
            except (HierarchyError, ValueError, TypeError, KeyError) as exc:
                raw = str(exc)
        if isinstance(raw, str):
            summary.skip(_UNREADABLE_STATES, f"state file {path.name} cannot be read: {raw}")
            continue
        files.append(_StateFile(str(raw.get("tag") or path.stem.removeprefix("state_")), path,
                                str(raw.get("state_str") or ""), raw, tree))
    files.sort(key=lambda f: f.tag)
    return files


def _read_events(event_dir: Path, summary: DroidBotImport) -> list[_EventFile]:
    """The readable event files, by tag; each one that is not is left out with a warning."""
    events: list[_EventFile] = []
    for path in sorted(event_dir.glob("event_*.json")):
        raw = _load(path)
        if isinstance(raw, str):
            summary.skip(_UNREADABLE_EVENTS, f"event file {path.name} cannot be read: {raw}")
            continue
        events.append(_EventFile(str(raw.get("tag") or path.stem.removeprefix("event_")), path, raw))
    events.sort(key=lambda e: e.tag)
    return events


def _package(events: list[_EventFile], files: list[_StateFile]) -> str:
    """The app the recording launched (``am start``), else the one most of its views belong to."""
    for e in events:
        m = _START.search(str(e.event.get("intent") or ""))
        if m:
            return m.group(1)
    counts = Counter(v.get("package") for f in files for v in f.raw.get("views") or []
                     if isinstance(v, dict) and v.get("package"))
    return str(counts.most_common(1)[0][0]) if counts else "unknown"


class _Timeline:
    """The state files by hash, each hash's files in tag (time) order."""

    def __init__(self, files: list[_StateFile]) -> None:
        self.by_hash: dict[str, list[_StateFile]] = {}
        for f in files:
            self.by_hash.setdefault(f.state_str, []).append(f)

    def near(self, state: str, tag: str, before: bool) -> _StateFile | None:
        """The file of ``state`` recorded closest before ``tag`` (or after it)."""
        candidates = self.by_hash.get(state)
        if not candidates:
            return None
        tags = [c.tag for c in candidates]
        if before:
            i = bisect.bisect_right(tags, tag) - 1
            return candidates[i] if i >= 0 else candidates[0]
        i = bisect.bisect_left(tags, tag)
        return candidates[i] if i < len(candidates) else candidates[-1]


def _target(view: dict[str, Any], tree: UITree) -> Target | None:
    """The node of ``tree`` the event's view is (by temp_id, checked by class and bounds)."""
    try:
        bounds = Bounds.parse(view.get("bounds"))
    except (ValueError, TypeError):
        return None
    node = tree.get(view.get("temp_id", -1)) if isinstance(view.get("temp_id"), int) else None
    if node is not None and node.bounds == bounds and node.class_name == (view.get("class") or ""):
        return Target.of(node)
    same = [n for n in tree.nodes if n.bounds == bounds and n.class_name == (view.get("class") or "")]
    return Target.of(same[-1]) if same else None


_VIEW_ACTIONS = {"click": "tap", "long_click": "long_tap", "set_text": "text", "scroll": "scroll"}


def _action(ev: dict[str, Any], start: _StateFile, summary: DroidBotImport) -> Action | None:
    """The trace action of one event, or None (counted in ``summary``) when there is none."""
    kind = str(ev.get("event_type") or "")
    if kind in _VIEW_ACTIONS:
        view = ev.get("view")
        target = _target(view, start.tree) if isinstance(view, dict) and view else None
        if target is None:
            summary.skip(f"{kind} events whose view is not in their start state")
            return None
        direction = str(ev.get("direction") or "down").lower() if kind == "scroll" else None
        text = ev.get("text") if kind == "set_text" else None
        return Action(_VIEW_ACTIONS[kind], target, str(text) if text is not None else None, direction)
    if kind == "key":
        name = str(ev.get("name") or "").upper()
        if name in ("BACK", "ENTER"):
            return Action(name.lower())
        summary.skip(f"key events other than BACK and ENTER ({name})")
        return None
    if kind == "intent" and _START.search(str(ev.get("intent") or "")):
        return Action("start")
    summary.skip(f"{kind or 'unknown'} events (nothing to act on)")
    return None


def import_droidbot(source: str | Path, output: str | Path) -> DroidBotImport:
    """Convert the recording in ``source`` into a trace in ``output`` (see the module docstring).

    A broken recording is imported as far as it can be read: unreadable state or event files and
    events whose states were not recorded are left out, each with a line in ``warnings``."""
    src = Path(source)
    TraceWriter.check_target(output)
    state_dir, event_dir = src / "states", src / "events"
    if not state_dir.is_dir() or not event_dir.is_dir():
        raise UsageError(f"{source} is not a DroidBot recording: it needs states/ and events/ folders")
    summary = DroidBotImport(str(source), str(output), "")
    files = _read_states(state_dir, summary)
    if not files:
        raise UsageError(f"{state_dir} holds no readable state_*.json files",
                         hint="; ".join(summary.warnings[:3]) or None)
    events = _read_events(event_dir, summary)
    summary.package = _package(events, files)
    timeline = _Timeline(files)
    with TraceWriter.create(output, app=summary.package, source="droidbot", recording=str(src.resolve())) as writer:
        ids: dict[Path, str] = {}

        def state_id(f: _StateFile) -> str:
            sid = ids.get(f.path)
            if sid is None:
                fg = str(f.raw.get("foreground_activity") or "")
                pkg, _, act = fg.partition("/")
                activity = pkg + act if act.startswith(".") else act
                sid = writer.add_state(f.path.read_bytes(), package=pkg, activity=activity, suffix=".json")
                ids[f.path] = sid
            return sid

        for e in events:
            start = timeline.near(str(e.raw.get("start_state") or ""), e.tag, before=True)
            stop = timeline.near(str(e.raw.get("stop_state") or ""), e.tag, before=False)
            if start is None or stop is None:
                which = "start" if start is None else "stop"
                summary.skip(_MISSING_STATES, f"event file {e.path.name}: its {which} state "
                             f"{str(e.raw.get(which + '_state') or '(none)')[:12]} was not recorded")
                continue
            action = _action(e.event, start, summary)
            if action is None:
                continue
            writer.add_step(state_id(start), action, state_id(stop))
            summary.actions[action.kind] += 1
            summary.steps += 1
        for f in files:
            # states no event joins to are still observations of their screens
            state_id(f)
        summary.states = writer.state_count
    return summary
