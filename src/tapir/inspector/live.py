"""The inspector's device side: one thread owns the device, watches the screen, acts, edits.

    live = LiveSession(runtime, doc_path, publish=print)
    live.start()                               # dumps now, then whenever the last dump is `interval` old
    live.call(lambda: live.act("tap", seq, node_id))   # from any thread: runs on the device thread
    live.stop()

Every device command goes through the one thread, in order: the page's actions, document edits,
the recorder's gestures and the polling between them. The screen is dumped again when the last
dump is ``interval`` seconds old (default 0.5 s), and after every action (the runtime's settle:
usually one dump); a dump that shows a changed screen is published at once as a ``screen``
message, then its screenshot as a ``shot`` message when ``screencap`` returns. So the page is
at most one dump behind the device (``bench/inspector_latency.py`` measures it).

Messages (dicts, sent to every page over the websocket):

* ``screen``: the state of a new dump (``ScreenState.to_json``), with ``cause`` when an action of
  the page or a recorded gesture led to it (what, when it was sent, how many dumps it took);
* ``shot``: the screenshot of dump ``seq`` is ready (``/api/shot/<seq>``), or ``error``;
* ``document``: the document was edited or changed on disk: its screens and problems;
* ``record``: the recording changed: its statements and the script text;
* ``notice``: something the person should know (a refused edit, a device error).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tapir.core.diagnostics import render_diagnostics
from tapir.core.document import AppDocument
from tapir.core.errors import ActionError, TapirError, UsageError
from tapir.docgen.loader import load_document_report
from tapir.hierarchy.model import Bounds, UINode
from tapir.inspector.doc_edit import DocumentEditor, Edit
from tapir.inspector.files import confined_recording
from tapir.inspector.recorder import RecordedStep, ScriptRecorder
from tapir.inspector.screen import ScreenState, node_at, screen_state
from tapir.inspector.views import view_details
from tapir.run import Runner
from tapir.runtime.input_events import Gesture
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.session_model import editable_node
from tapir.runtime.settle import Expectation, Observation

__all__ = ["DEFAULT_INTERVAL_S", "LiveSession", "Publish"]

T = TypeVar("T")
#: Receives each message for the pages (called on the device thread).
Publish = Callable[[dict[str, Any]], None]
#: Seconds between dumps when nothing happens.
DEFAULT_INTERVAL_S = 0.5
#: States kept for views and screenshots the page may still ask about.
_KEEP_STATES = 8
#: A tap in the lower part of the screen while a field has the focus that changed nothing but the
#: field's text was a key of the on-screen keyboard (see ``_keystroke``).
_KEYBOARD_TOP = 0.45


@dataclass
class _Dump:
    """A dump the device thread took: when it started (host monotonic seconds) and what it showed."""

    started: float
    obs: Observation


class LiveSession:
    """See the module docstring."""

    def __init__(self, runtime: DeviceRuntime, doc_path: Path | None, *, publish: Publish,
                 interval: float = DEFAULT_INTERVAL_S, screenshots: bool = True, device_name: str = "") -> None:
        self.runtime = runtime
        self.doc_path = doc_path
        self.publish = publish
        self.interval = interval
        self.screenshots = screenshots
        self.device_name = device_name
        self.recorder: ScriptRecorder | None = None
        #: Where a recording started from the page is written (None: kept in memory, shown on the page).
        self.default_output: Path | None = None
        self.state: ScreenState | None = None
        self.states: dict[int, ScreenState] = {}
        self.problems: list[str] = []
        self._doc_stamp = self._stamp()
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._dumps: deque[_Dump] = deque(maxlen=32)
        self._last_gesture_end = 0.0
        self._text_base: Observation | None = None
        #: Gestures of device input not yet written (the recorder waits for them to settle).
        self.pending_gestures = 0
        self._idle = threading.Event()

    # -- the thread --------------------------------------------------------------------------

    def start(self) -> None:
        """Dump the first screen (here, so that a device that cannot be reached says so now),
        then watch it on the device thread."""
        self._refresh(cause=None)
        self._thread = threading.Thread(target=self._loop, name="tapir-inspect-device", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._jobs.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def call(self, fn: Callable[[], T], timeout: float | None = 120.0) -> T:
        """Run ``fn`` on the device thread and return its result (its exception is raised here)."""
        if self._thread is None or threading.current_thread() is self._thread:
            return fn()
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future.result(timeout=timeout)

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        """Run ``fn`` on the device thread later (gestures of the recorder)."""
        future: Future[Any] = Future()
        self._jobs.put((fn, future))
        return future

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every job sent so far has run (tests, benches)."""
        done = threading.Event()
        self.submit(done.set)
        if not done.wait(timeout):
            return False
        return True

    def dumps_started(self, since: float, upto_seq: int) -> int:
        """How many of the recent dumps started at or after ``since`` (host monotonic seconds), up
        to dump ``upto_seq``: 1 when the first dump after a change showed it
        (``bench/inspector_latency.py``)."""
        return sum(1 for d in list(self._dumps) if d.started >= since and d.obs.seq <= upto_seq)

    def _loop(self) -> None:
        while not self._stopping.is_set():
            last = self._dumps[-1].started if self._dumps else 0.0
            wait = max(0.0, self.interval - (time.monotonic() - last))
            try:
                job = self._jobs.get(timeout=wait)
            except queue.Empty:
                self._poll()
                continue
            if job is None:
                break
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

    def _poll(self) -> None:
        try:
            self._check_document()
            before = self.state
            obs = self._refresh(cause=None)
            if before is not None and obs.digest != before.obs.digest:
                self._note_typing(obs)
        except TapirError as exc:
            self._notice(f"the device did not answer: {exc.message}", level="error")
            self._stopping.wait(min(5.0, self.interval * 4))

    # -- screens -----------------------------------------------------------------------------

    def _refresh(self, cause: dict[str, Any] | None, *, after: Observation | None = None) -> Observation:
        """A new dump (or ``after``, one an action just took), published when it shows a change."""
        started = time.monotonic()
        obs = after if after is not None else self.runtime.screen.refresh()
        self._dumps.append(_Dump(started, obs))
        if self.state is not None and obs.digest == self.state.obs.digest and cause is None:
            return obs
        self._publish_state(obs, cause)
        return obs

    def _publish_state(self, obs: Observation, cause: dict[str, Any] | None) -> ScreenState:
        state = screen_state(self.runtime, obs)
        self.state = state
        self.states[obs.seq] = state
        for old in sorted(self.states)[:-_KEEP_STATES]:
            del self.states[old]
        message = {"type": "screen", "state": state.to_json()}
        if cause is not None:
            message["cause"] = dict(cause, published=time.monotonic())
        self.publish(message)
        if self.screenshots:
            try:
                state.shot = self.runtime.device.screenshot_png()
                self.publish({"type": "shot", "seq": obs.seq})
            except TapirError as exc:
                self.publish({"type": "shot", "seq": obs.seq, "error": exc.message})
        return state

    def state_json(self) -> dict[str, Any]:
        """Everything a page needs when it connects."""
        state = self.state
        return {"type": "hello", "state": state.to_json() if state is not None else None,
                "shot": bool(state is not None and state.shot), "document": self.document_json(),
                "record": self.record_json(), "device": self.device_name,
                "interval": self.interval}

    def view(self, seq: int, node_id: int) -> dict[str, Any]:
        state = self._state(seq)
        try:
            return view_details(state, node_id, self.runtime.document)
        except KeyError:
            raise UsageError(f"dump #{seq} has no view {node_id}") from None

    def _state(self, seq: int) -> ScreenState:
        state = self.states.get(seq)
        if state is None:
            raise UsageError(f"dump #{seq} is no longer kept: the screen has changed since")
        return state

    # -- acting ------------------------------------------------------------------------------

    def act(self, action: str, seq: int | None = None, node_id: int | None = None, *, text: str = "",
            direction: str = "down") -> dict[str, Any]:
        """Do ``action`` on the device (tap, long_tap, type, scroll on a view of the current dump;
        back, enter), recording it when a recording is on; the new screen is published."""
        runtime = self.runtime
        state = self.state
        if state is None:
            raise UsageError("no screen yet")
        sent = time.monotonic()
        dumps_before = runtime.stats.dumps
        obs = state.obs
        node: UINode | None = None
        if action in ("tap", "long_tap", "type", "scroll"):
            if seq is not None and seq != state.seq:
                raise ActionError(f"the screen has changed since dump #{seq} (now #{state.seq}): "
                                  "pick the view again")
            if node_id is None or node_id not in obs.tree:
                raise UsageError(f"{action}: no view {node_id} on dump #{state.seq}")
            node = obs.tree.node(node_id)
        screen, device = runtime.screen, runtime.device
        step: RecordedStep | None = None
        if action in ("tap", "long_tap"):
            assert node is not None
            x, y = runtime.checks.tap_point(node, obs)
            if self.recorder is not None:
                step = self.recorder.tap(obs, node, long=action == "long_tap")
            if action == "tap":
                screen.input(lambda: device.tap(x, y), None)
            else:
                screen.input(lambda: device.long_tap(x, y, runtime.config.long_tap_ms), None)
            expect = Expectation(change=True)
        elif action == "type":
            assert node is not None
            field = editable_node(obs.tree, node)
            if field is None:
                raise ActionError(f"{node.short_class or 'this view'} is not a text field: pick an editable view")
            if self.recorder is not None:
                step = self.recorder.typed(obs, field, text)
            if not field.focused:
                fx, fy = runtime.checks.tap_point(field, obs)
                screen.input(lambda: device.tap(fx, fy), None)
            if field.text and not field.password:
                screen.keys(["KEYCODE_MOVE_END", *(["KEYCODE_DEL"] * len(field.text))], None)
            if text:
                screen.input(lambda: device.input_text(text), None)
            expect = Expectation(change=True)
        elif action == "scroll":
            assert node is not None
            area = self._scroll_area(node, obs)
            if direction not in ("up", "down", "left", "right"):
                raise UsageError(f"scroll: unknown direction {direction!r}")
            if self.recorder is not None:
                cx, cy = area.center
                step = self.recorder.scroll(obs, cx, cy, direction)
            screen.swipe(area, direction, None)
            expect = Expectation(change=False)
        elif action in ("back", "enter"):
            if self.recorder is not None:
                step = self.recorder.key(action)
            screen.input(lambda: device.key(action), None)
            expect = Expectation(change=action == "back")
        else:
            raise UsageError(f"unknown action {action!r}")
        after = screen.settle(expect, None).observation
        cause = {"action": action, "sent": sent, "dumps": runtime.stats.dumps - dumps_before, "from": "page"}
        self._refresh(cause, after=after)
        self._text_base = after  # text the page typed is recorded already
        if step is not None:
            self._publish_record()
        return {"ok": True, "seq": after.seq, "recorded": step.lines() if step is not None else None}

    @staticmethod
    def _scroll_area(node: UINode, obs: Observation) -> Bounds:
        for n in (node, *obs.tree.ancestors(node.id)):
            if n.scrollable and n.bounds.area:
                return n.bounds
        root = obs.tree.root
        return root.bounds if root is not None else node.bounds

    # -- recording ---------------------------------------------------------------------------

    def recording_output(self, output: str | None) -> Path | None:
        """Where a recording the page starts goes: the command line's ``--record`` file (trusted),
        or what the page names, confined to ``.tap`` files in the document's folder (or the current
        folder without a document); see ``confined_recording``."""
        if not output or (self.default_output is not None and Path(output) == self.default_output):
            return self.default_output
        folder = self.doc_path.parent if self.doc_path is not None else Path.cwd()
        return confined_recording(str(output), folder)

    def start_recording(self, output: Path | None) -> None:
        self.recorder = ScriptRecorder(self.runtime, output=output, doc_path=self.doc_path, device=self.device_name)
        self.recorder.save()
        self._text_base = self.state.obs if self.state is not None else None
        self._publish_record()

    def stop_recording(self) -> str:
        text = self.recorder.script() if self.recorder is not None else ""
        if self.recorder is not None:
            self.recorder.save()
        self.recorder = None
        self._publish_record()
        return text

    def record_json(self) -> dict[str, Any]:
        rec = self.recorder
        if rec is None:
            return {"on": False}
        return {"on": True, "output": str(rec.output) if rec.output else None, "script": rec.script(),
                "steps": [{"statement": s.statement, "comments": list(s.comments), "element": s.element}
                          for s in rec.steps]}

    def _publish_record(self) -> None:
        self.publish({"type": "record", "record": self.record_json()})

    def gesture(self, g: Gesture, arrived: float, start_host: float) -> None:
        """A person's gesture read from the device's input (``getevent``), written as a step.

        ``start_host`` is when the finger landed, on this host's monotonic clock: the screen the
        person acted on is the last dump that started before it."""
        try:
            self._gesture(g, start_host)
        except TapirError as exc:
            self._notice(f"could not record a {g.kind}: {exc.message}", level="error")
        finally:
            self.pending_gestures = max(0, self.pending_gestures - 1)

    def _gesture(self, g: Gesture, start_host: float) -> None:
        runtime = self.runtime
        before = None
        for d in reversed(self._dumps):
            if d.started <= start_host:
                before = d
                break
        if before is None:
            before = self._dumps[-1] if self._dumps else _Dump(time.monotonic(), runtime.screen.observe())
        stale = before.started < self._last_gesture_end
        self._last_gesture_end = start_host + g.duration_s
        obs = before.obs
        if self._text_base is not None and obs.seq > self._text_base.seq:
            self._note_typing(obs)
        dumps_before = runtime.stats.dumps
        sent = start_host
        after = runtime.screen.settle(Expectation(change=g.kind != "swipe"), None).observation
        cause = {"action": g.kind, "sent": sent, "dumps": runtime.stats.dumps - dumps_before, "from": "device"}
        step: RecordedStep | None = None
        if self.recorder is not None:
            if g.kind in ("tap", "long_tap"):
                node = node_at(obs.tree, g.x, g.y)
                if node is not None and not self._keystroke(g, obs, after):
                    step = self.recorder.tap(obs, node, long=g.kind == "long_tap")
            elif g.kind == "swipe":
                dx, dy = g.x2 - g.x, g.y2 - g.y
                direction = ("down" if dy < 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx < 0 else "left")
                step = self.recorder.scroll(obs, g.x, g.y, direction)
            elif g.kind == "key":
                step = self.recorder.key(g.key)
            if step is not None and stale:
                self.recorder.steps[-1] = RecordedStep(
                    step.action, step.statement,
                    (*step.comments, "recorded on a dump taken before the previous action had settled: check it"),
                    step.element, step.screen, step.field)
                self.recorder.save()
        self._refresh(cause, after=after)
        self._text_base = after  # what the gesture itself changed in fields is its effect, not typing
        if step is not None:
            self._publish_record()

    @staticmethod
    def _keystroke(g: Gesture, before: Observation, after: Observation) -> bool:
        """A touch on the on-screen keyboard (which the dump does not show): a field has the focus,
        the touch is low on the screen, and nothing changed but that field's text."""
        tree = before.tree
        focused = next((n for n in tree.nodes if n.editable and n.focused), None)
        height = tree.height or (tree.root.bounds.y2 if tree.root is not None else 0)
        if focused is None or not height or g.y < height * _KEYBOARD_TOP or focused.bounds.contains(g.x, g.y):
            return False
        a, b = before.tree, after.tree
        if len(a.nodes) != len(b.nodes):
            return False
        for x, y in zip(a.nodes, b.nodes, strict=True):
            if x.id == focused.id or x.parent == focused.id:
                continue
            if (x.class_name, x.resource_id, x.text, x.content_desc, x.bounds, x.selected, x.checked) != (
                    y.class_name, y.resource_id, y.text, y.content_desc, y.bounds, y.selected, y.checked):
                return False
        return True

    def _note_typing(self, obs: Observation) -> None:
        """Fields whose text changed since the last dump compared, without a gesture on them: the
        person typed (device input only: typed text is no event ``getevent`` shows)."""
        base = self._text_base
        self._text_base = obs
        if self.recorder is None or base is None or base.seq == obs.seq:
            return
        old = {(n.resource_id, str(n.bounds)): n.text for n in base.tree.nodes if n.editable}
        changed = False
        for n in obs.tree.nodes:
            if not n.editable or n.password:
                continue
            key = (n.resource_id, str(n.bounds))
            if key in old and old[key] != n.text:
                self.recorder.typed(obs, n, n.text)
                changed = True
        if changed:
            self._publish_record()

    # -- the document ------------------------------------------------------------------------

    def document_json(self) -> dict[str, Any]:
        doc = self.runtime.document
        return {"path": str(self.doc_path) if self.doc_path else None, "app": doc.app.name,
                "package": doc.app.package, "problems": self.problems,
                "screens": [{"name": s.name, "elements": [e.name for e in s.elements]} for s in doc.screens]}

    def edit(self, change: Callable[[DocumentEditor], Edit]) -> dict[str, Any]:
        """Apply a document edit, reload the document and show the screen again with it."""
        if self.doc_path is None:
            raise UsageError("this session has no document file to edit")
        edit = change(DocumentEditor(self.doc_path))
        self._doc_stamp = self._stamp()
        self.problems = list(edit.warnings)
        self._use_document(edit.document)
        return {"ok": True, "what": edit.what, "line": edit.line, "warnings": list(edit.warnings),
                "where": f"{self.doc_path}:{edit.line}"}

    def _use_document(self, document: AppDocument) -> None:
        self.runtime = Runner(document, None).rebind(self.runtime)  # the run API binds a device to a document
        if self.recorder is not None:
            self.recorder.bind(self.runtime)
        self.states.clear()
        self.publish({"type": "document", "document": self.document_json()})
        obs = self.runtime.screen.observe()
        self._dumps.append(_Dump(time.monotonic(), obs))
        self._publish_state(obs, {"action": "document", "sent": time.monotonic(), "dumps": 1, "from": "document"})

    def _stamp(self) -> tuple[int, int] | None:
        if self.doc_path is None:
            return None
        try:
            st = self.doc_path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _check_document(self) -> None:
        """Reload the document when its file changed on disk (an editor saved it)."""
        stamp = self._stamp()
        if stamp == self._doc_stamp or self.doc_path is None:
            return
        self._doc_stamp = stamp
        try:
            result = load_document_report(self.doc_path)
        except TapirError as exc:
            self.problems = [exc.render()]
            self.publish({"type": "document", "document": self.document_json()})
            return
        text = self.doc_path.read_text(encoding="utf-8", errors="replace")
        shown = [render_diagnostics([p], text, str(self.doc_path)) for p in result.problems]
        self.problems = shown
        if result.document is None:
            self._notice(f"{self.doc_path.name} has errors: the inspector keeps the last valid version", level="error")
            self.publish({"type": "document", "document": self.document_json()})
            return
        self._use_document(result.document)

    def _notice(self, text: str, *, level: str = "info") -> None:
        self.publish({"type": "notice", "level": level, "text": text})
