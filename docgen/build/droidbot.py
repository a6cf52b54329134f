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

from tapir.docgen.build.trace import Action, Target, TraceWriter
from tapir.dsl.errors import UsageError
from tapir.runtime.hierarchy import Bounds, UITree, parse_droidbot_state

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

    def render(self) -> str:
        acts = ", ".join(f"{k} {n}" for k, n in sorted(self.actions.items()))
        lines = [f"imported {self.source}: {self.states} states, {self.steps} steps ({acts}) "
                 f"for {self.package} -> {self.output}"]
        for reason, n in sorted(self.skipped.items()):
            lines.append(f"left out: {n} {reason}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _StateFile:
    tag: str
    path: Path
    state_str: str
    raw: dict[str, Any]


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a DroidBot record (expected a JSON object)")
    return data


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


def import_droidbot(source: str | Path, output: str | Path) -> DroidBotImport:
    src = Path(source)
    TraceWriter.check_target(output)
    state_dir, event_dir = src / "states", src / "events"
    if not state_dir.is_dir() or not event_dir.is_dir():
        raise UsageError(f"{source} is not a DroidBot recording: it needs states/ and events/ folders")
    files: list[_StateFile] = []
    for path in sorted(state_dir.glob("state_*.json")):
        raw = _load(path)
        files.append(_StateFile(str(raw.get("tag") or path.stem.removeprefix("state_")), path,
                                str(raw.get("state_str") or ""), raw))
    if not files:
        raise UsageError(f"{state_dir} holds no state_*.json files")
    files.sort(key=lambda f: f.tag)
    events = sorted((_load(p) for p in event_dir.glob("event_*.json")), key=lambda e: str(e.get("tag") or ""))
    by_hash: dict[str, list[_StateFile]] = {}
    for f in files:
        by_hash.setdefault(f.state_str, []).append(f)
    package = next((m.group(1) for e in events
                    if (m := _START.search(str((e.get("event") or {}).get("intent") or "")))), "")
    if not package:
        counts = Counter(v.get("package") for f in files for v in f.raw.get("views") or [] if v.get("package"))
        package = counts.most_common(1)[0][0] if counts else "unknown"

    def near(state: str, tag: str, before: bool) -> _StateFile | None:
        candidates = by_hash.get(state)
        if not candidates:
            return None
        tags = [c.tag for c in candidates]
        if before:
            i = bisect.bisect_right(tags, tag) - 1
            return candidates[i] if i >= 0 else candidates[0]
        i = bisect.bisect_left(tags, tag)
        return candidates[i] if i < len(candidates) else candidates[-1]

    summary = DroidBotImport(str(source), str(output), package)
    trees: dict[Path, UITree] = {}
    with TraceWriter.create(output, app=package, source="droidbot", recording=str(src.resolve())) as writer:
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

        for raw in events:
            ev = raw.get("event") or {}
            kind = str(ev.get("event_type") or "")
            tag = str(raw.get("tag") or "")
            start = near(str(raw.get("start_state") or ""), tag, before=True)
            stop = near(str(raw.get("stop_state") or ""), tag, before=False)
            if start is None or stop is None:
                summary.skipped["events whose start or stop state was not recorded"] += 1
                continue
            action: Action | None = None
            if kind in ("click", "long_click", "set_text", "scroll"):
                view = ev.get("view") or {}
                tree = trees.get(start.path)
                if tree is None:
                    tree = trees[start.path] = parse_droidbot_state(start.raw)
                target = _target(view, tree) if view else None
                if target is None:
                    summary.skipped[f"{kind} events whose view is not in their start state"] += 1
                    continue
                mapped = {"click": "tap", "long_click": "long_tap", "set_text": "text", "scroll": "scroll"}[kind]
                direction = str(ev.get("direction") or "down").lower() if kind == "scroll" else None
                action = Action(mapped, target, ev.get("text") if kind == "set_text" else None, direction)
            elif kind == "key":
                name = str(ev.get("name") or "").upper()
                if name in ("BACK", "ENTER"):
                    action = Action(name.lower())
                else:
                    summary.skipped[f"key events other than BACK and ENTER ({name})"] += 1
                    continue
            elif kind == "intent" and _START.search(str(ev.get("intent") or "")):
                action = Action("start")
            else:
                summary.skipped[f"{kind or 'unknown'} events (nothing to act on)"] += 1
                continue
            writer.add_step(state_id(start), action, state_id(stop))
            summary.actions[action.kind] += 1
            summary.steps += 1
        for f in files:
            # states no event joins to are still observations of their screens
            state_id(f)
        summary.states = writer.state_count
    return summary
