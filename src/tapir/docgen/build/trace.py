"""Exploration traces: what ``tapir explore`` records and ``tapir docgen`` reads.

A trace is a directory (format described in ``docs/docgen.md``)::

    trace.json        what was explored, how, and whether the run finished
    states.jsonl      one line per distinct screen observed (hierarchy, screenshot, app, activity)
    steps.jsonl       one line per action: state before, action with its target node, state after
    states/           the hierarchies: sNNNN.xml (uiautomator dump) or sNNNN.json (DroidBot state)
    screenshots/      sNNNN.png, when the device gave one

Both ``.jsonl`` files are appended and flushed line by line, so a run that is interrupted (Ctrl-C,
a crash, a lost device) keeps every step recorded so far; a last line cut in half is skipped when
the trace is read. Identical hierarchies are stored once: a state is its hierarchy's content.

    with TraceWriter.create("out/", app="org.tapir.music", source="explore") as w:
        s0 = w.add_state(xml, package="org.tapir.music", activity=".MainActivity", screenshot=png)
        ...
        w.add_step(s0, Action("tap", target=Target.of(node)), s1)
    trace = read_trace("out/")
    trace.tree(trace.steps[0].before)          # the UITree, parsed once and cached
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.core.diagnostics import Diagnostic
from tapir.core.errors import DocumentError, HierarchyError, UsageError
from tapir.core.nesting import load_json
from tapir.hierarchy import Bounds, UINode, UITree, parse_tree

FORMAT = "tapir-trace"
VERSION = 1

#: Action kinds a step may record.
ACTION_KINDS = ("tap", "long_tap", "text", "scroll", "back", "enter", "start")


@dataclass(frozen=True)
class Target:
    """The node an action was aimed at, as it was in the hierarchy before the action.

    ``node`` is the node's id in that hierarchy as ``tapir.hierarchy`` numbers it (the
    pre-order index for uiautomator dumps, the ``temp_id`` for DroidBot states); the attributes
    are kept so the trace can be read without the hierarchy and checked against it.
    """

    node: int
    path: tuple[int, ...] = ()
    class_name: str = ""
    resource_id: str = ""
    text: str = ""
    content_desc: str = ""
    bounds: Bounds = Bounds(0, 0, 0, 0)
    clickable: bool = False
    checkable: bool = False
    editable: bool = False
    scrollable: bool = False

    @classmethod
    def of(cls, node: UINode) -> Target:
        return cls(node.id, node.path, node.class_name, node.resource_id, node.text, node.content_desc,
                   node.bounds, node.clickable, node.checkable, node.editable, node.scrollable)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "path": list(self.path), "class": self.class_name}
        for key, value in (("resource_id", self.resource_id), ("text", self.text),
                           ("content_desc", self.content_desc)):
            if value:
                out[key] = value
        out["bounds"] = [self.bounds.x1, self.bounds.y1, self.bounds.x2, self.bounds.y2]
        out["flags"] = [f for f in ("clickable", "checkable", "editable", "scrollable") if getattr(self, f)]
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Target:
        flags = set(raw.get("flags") or ())
        return cls(
            node=int(raw["node"]), path=tuple(int(p) for p in raw.get("path") or ()),
            class_name=str(raw.get("class") or ""), resource_id=str(raw.get("resource_id") or ""),
            text=str(raw.get("text") or ""), content_desc=str(raw.get("content_desc") or ""),
            bounds=Bounds.parse(raw.get("bounds") or [0, 0, 0, 0]),
            clickable="clickable" in flags, checkable="checkable" in flags,
            editable="editable" in flags, scrollable="scrollable" in flags,
        )


@dataclass(frozen=True)
class Action:
    """One input: ``tap``/``long_tap``/``text``/``scroll`` on a target, or a global ``back``,
    ``enter`` or ``start`` (the app launched or relaunched)."""

    kind: str
    target: Target | None = None
    #: Typed text (``text``).
    text: str | None = None
    #: ``up``/``down``/``left``/``right``: the direction the content moves into view (``scroll``).
    direction: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.target is not None:
            out["target"] = self.target.to_json()
        if self.text is not None:
            out["text"] = self.text
        if self.direction is not None:
            out["direction"] = self.direction
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Action:
        kind = str(raw["kind"])
        if kind not in ACTION_KINDS:
            raise ValueError(f"unknown action kind {kind!r}")
        target = raw.get("target")
        return cls(kind, Target.from_json(target) if target else None,
                   raw.get("text"), raw.get("direction"))

    def describe(self) -> str:
        what = self.kind
        if self.target is not None:
            t = self.target
            label = t.text or t.content_desc or t.resource_id.rsplit("/", 1)[-1] or t.class_name.rsplit(".", 1)[-1]
            what += f" {label!r}"
        if self.text is not None:
            what += f" typing {self.text!r}"
        if self.direction:
            what += f" {self.direction}"
        return what


@dataclass(frozen=True)
class StateRecord:
    id: str
    #: The hierarchy file, relative to the trace directory.
    hierarchy: str
    package: str = ""
    activity: str = ""
    screenshot: str | None = None
    #: Seconds since the trace started when the state was first seen.
    time: float = 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "hierarchy": self.hierarchy, "package": self.package,
                               "activity": self.activity}
        if self.screenshot:
            out["screenshot"] = self.screenshot
        out["time"] = round(self.time, 3)
        return out


@dataclass(frozen=True)
class StepRecord:
    index: int
    before: str
    action: Action
    after: str
    time: float = 0.0
    #: Why the step happened or what came of it, when it is not an ordinary exploration step
    #: (``left the app``, ``restart``...).
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.index, "before": self.before, "action": self.action.to_json(),
                               "after": self.after, "time": round(self.time, 3)}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Trace:
    """A trace read back (``read_trace``); ``tree(state_id)`` parses hierarchies lazily."""

    directory: Path
    meta: dict[str, Any]
    states: dict[str, StateRecord]
    steps: list[StepRecord]
    #: Lines that could not be read (a last line cut short by an interrupted run).
    skipped_lines: int = 0
    _trees: dict[str, UITree] = field(default_factory=dict, repr=False)

    @property
    def package(self) -> str:
        return str((self.meta.get("app") or {}).get("package") or "")

    def tree(self, state_id: str) -> UITree:
        found = self._trees.get(state_id)
        if found is None:
            record = self.states[state_id]
            path = self.directory / record.hierarchy
            try:
                found = parse_tree(path.read_bytes())
            except OSError as exc:
                raise UsageError(f"trace {self.directory}: cannot read {record.hierarchy}: "
                                 f"{exc.strerror or exc}") from None
            except HierarchyError as exc:
                exc.filename = str(path)
                raise
            self._trees[state_id] = found
        return found

    def activity(self, state_id: str) -> str:
        record = self.states[state_id]
        return record.activity or self.tree(state_id).activity

    def package_of(self, state_id: str) -> str:
        record = self.states[state_id]
        return record.package or self.tree(state_id).package


# ---------------------------------------------------------------------------------------------
# Writing


class TraceWriter:
    """Records a trace as it happens (see the module docstring); close it to mark it complete."""

    def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
        self.directory = directory
        self.meta = meta
        self._started = time.monotonic()
        self._by_digest: dict[str, str] = {}
        self._states: list[StateRecord] = []
        self._steps = 0
        (directory / "states").mkdir(parents=True, exist_ok=True)
        (directory / "screenshots").mkdir(exist_ok=True)
        self._state_file = open(directory / "states.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self._step_file = open(directory / "steps.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self._write_meta(complete=False)

    @staticmethod
    def check_target(directory: str | Path) -> None:
        """Raise ``UsageError`` unless a trace can be created in ``directory`` (new or empty)."""
        path = Path(directory)
        if path.exists() and not path.is_dir():
            raise UsageError(f"{directory} exists and is not a directory")
        if path.is_dir() and any(path.iterdir()):
            raise UsageError(f"{directory} is not empty: give a new directory for the trace",
                             hint="each exploration goes to its own directory; "
                                  "`tapir docgen` accepts several traces at once")

    @classmethod
    def create(cls, directory: str | Path, *, app: str, source: str, **meta: Any) -> TraceWriter:
        """Start a new trace in ``directory``, which must not hold one already."""
        cls.check_target(directory)
        path = Path(directory)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create {directory}: {exc.strerror or exc}") from None
        data = {"format": FORMAT, "version": VERSION, "app": {"package": app}, "source": source,
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **meta}
        return cls(path, data)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    @property
    def state_count(self) -> int:
        return len(self._states)

    @staticmethod
    def _digest(data: bytes, package: str, activity: str) -> str:
        return hashlib.sha1(data + b"\0" + package.encode() + b"\0" + activity.encode()).hexdigest()

    def known_state(self, hierarchy: str | bytes, *, package: str = "", activity: str = "") -> str | None:
        """The id of a state already stored with this content (so a screenshot can be skipped)."""
        data = hierarchy.encode("utf-8") if isinstance(hierarchy, str) else hierarchy
        return self._by_digest.get(self._digest(data, package, activity))

    def add_state(self, hierarchy: str | bytes, *, package: str = "", activity: str = "",
                  screenshot: bytes | None = None, suffix: str | None = None) -> str:
        """Store a hierarchy (once per distinct content) and return its state id."""
        data = hierarchy.encode("utf-8") if isinstance(hierarchy, str) else hierarchy
        digest = self._digest(data, package, activity)
        known = self._by_digest.get(digest)
        if known is not None:
            return known
        sid = f"s{len(self._states) + 1:04d}"
        ext = suffix or (".json" if data.lstrip()[:1] in (b"{", b"[") else ".xml")
        rel = f"states/{sid}{ext}"
        (self.directory / rel).write_bytes(data)
        shot = None
        if screenshot:
            shot = f"screenshots/{sid}.png"
            (self.directory / shot).write_bytes(screenshot)
        record = StateRecord(sid, rel, package, activity, shot, self.elapsed)
        self._states.append(record)
        self._by_digest[digest] = sid
        self._append(self._state_file, record.to_json())
        return sid

    def add_step(self, before: str, action: Action, after: str, note: str | None = None) -> StepRecord:
        self._steps += 1
        step = StepRecord(self._steps, before, action, after, self.elapsed, note)
        self._append(self._step_file, step.to_json())
        return step

    def close(self, *, complete: bool = True, **summary: Any) -> None:
        self.meta.update(summary)
        self._write_meta(complete=complete)
        self._state_file.close()
        self._step_file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not self._state_file.closed:
            self.close(complete=exc_type is None)

    @staticmethod
    def _append(handle: Any, record: dict[str, Any]) -> None:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()

    def _write_meta(self, *, complete: bool) -> None:
        self.meta["complete"] = complete
        self.meta["states"] = len(self._states)
        self.meta["steps"] = self._steps
        self.meta["duration_s"] = round(self.elapsed, 2)
        tmp = self.directory / "trace.json.tmp"
        tmp.write_text(json.dumps(self.meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, self.directory / "trace.json")


# ---------------------------------------------------------------------------------------------
# Reading


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                yield number, line


def read_trace(directory: str | Path) -> Trace:
    """Read a trace directory; malformed lines are reported with their file and line number."""
    path = Path(directory)
    meta_path = path / "trace.json"
    if not path.is_dir():
        raise UsageError(f"{directory} is not a directory (expected a trace from `tapir explore`)")
    if not meta_path.is_file():
        hint = ("convert a DroidBot recording first: tapir explore --import-droidbot DIR -o TRACE_DIR"
                if (path / "states").is_dir() and (path / "events").is_dir() else None)
        raise UsageError(f"{directory} is not a trace: it has no trace.json", hint=hint)
    try:
        meta = load_json(meta_path.read_text(encoding="utf-8"), filename=str(meta_path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DocumentError(f"unreadable trace metadata: {exc}", filename=str(meta_path)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DocumentError(f"not a Tapir trace (format is {meta.get('format') if isinstance(meta, dict) else meta!r})",
                            filename=str(meta_path))
    if int(meta.get("version", 0)) > VERSION:
        raise DocumentError(f"trace format version {meta.get('version')} is newer than this Tapir reads ({VERSION})",
                            filename=str(meta_path))
    skipped = 0
    states: dict[str, StateRecord] = {}
    steps: list[StepRecord] = []
    for name in ("states.jsonl", "steps.jsonl"):
        file = path / name
        if not file.is_file():
            raise UsageError(f"trace {directory}: {name} is missing")
        lines = list(_lines(file))
        for i, (number, line) in enumerate(lines):
            try:
                raw = load_json(line, filename=str(file))
                if name == "states.jsonl":
                    rec = StateRecord(str(raw["id"]), str(raw["hierarchy"]), str(raw.get("package") or ""),
                                      str(raw.get("activity") or ""), raw.get("screenshot"),
                                      float(raw.get("time") or 0.0))
                    states[rec.id] = rec
                else:
                    steps.append(StepRecord(int(raw["step"]), str(raw["before"]), Action.from_json(raw["action"]),
                                            str(raw["after"]), float(raw.get("time") or 0.0), raw.get("note")))
            except (ValueError, KeyError, TypeError) as exc:
                if i == len(lines) - 1 and not line.endswith("\n"):
                    skipped += 1  # the last line of an interrupted run
                    continue
                problem = Diagnostic.at_line(f"{type(exc).__name__}: {exc}", number, 1)
                raise DocumentError("malformed trace line", [problem], filename=str(file)) from None
    missing = sorted({s for step in steps for s in (step.before, step.after) if s not in states})
    if missing:
        raise DocumentError(f"steps name states that states.jsonl does not list: {', '.join(missing[:5])}",
                            filename=str(path / "steps.jsonl"))
    return Trace(path, meta, states, steps, skipped)
