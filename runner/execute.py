"""One attempt of one script on one device slot, and what it leaves behind.

    attempt = run_attempt(prepared, slot, 1, options, folder, on_step=print)
    attempt.ok, attempt.steps, attempt.screenshot      # 'screenshot.png' in ``folder`` when it failed

The script runs as ``tapir run`` runs it (the device is connected on its first UI call), with its
trace written to ``folder/trace.jsonl`` and passed, line by line, to ``on_step``. On a
simulator slot the device is a fresh simulator; on a phone the app is force-stopped first so
that the script starts from its launch screen; ``reset`` clears the app's data instead (``pm
clear``, then a launch). When the script fails after reaching the device, the screen and the
last hierarchy dump the runtime read are saved next to the trace (``screenshot.png``,
``hierarchy.xml``) before the device is released. The script's own ``screenshot("name")`` files
are saved in ``folder`` too (``name.png``; ``Attempt.saved``), and the step that took each names it
(``Step.saved``). With ``screenshots`` on, a screenshot is taken
at the start and after every call that sent input or failed (``shots/``); with ``thumbnails``
each is made into a thumbnail for the HTML report here, in the worker, while other slots wait on
their devices.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.docgen.model import AppDocument
from tapir.dsl.budget import Budgets
from tapir.dsl.errors import ScriptRuntimeError, TapirError
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.symbols import SymbolTable
from tapir.runner.collect import Header
from tapir.runner.images import thumbnail
from tapir.runner.pool import Slot
from tapir.runner.results import Attempt, Step
from tapir.runtime.trace import JsonLinesTrace, read_trace

__all__ = ["FAILURE_SCREENSHOT", "AttemptOptions", "PreparedScript", "StepListener", "run_attempt"]

#: The screen when an attempt failed, in its folder.
FAILURE_SCREENSHOT = "screenshot.png"

#: Called with (script name, trace record) as each trace line is written (from a worker thread),
#: and once with ``{"event": "attempt", "number": n, "device": slot}`` before an attempt starts.
StepListener = Callable[[str, dict[str, Any]], None]

#: Trace events that are steps of the report (``session`` and ``end`` are bookkeeping).
_STEP_EVENTS = frozenset({"action", "navigation", "scroll", "repeat"})


@dataclass(frozen=True)
class PreparedScript:
    """A script the language service checked and found runnable."""

    path: Path
    #: The name reports and errors use (the path as given).
    name: str
    source: str
    document: AppDocument
    symbols: SymbolTable | None
    header: Header = field(default_factory=Header)
    warnings: str | None = None


@dataclass(frozen=True)
class AttemptOptions:
    budgets: Budgets = field(default_factory=Budgets)
    #: Clear the app's data before the script (``pm clear``).
    reset: bool = False
    #: A screenshot after every call that sent input or failed.
    screenshots: bool = False
    #: Thumbnails of them for the HTML report (made here, in the worker).
    thumbnails: bool = False
    #: The script's parameters (``param()``).
    inputs: ScriptInputs = field(default_factory=ScriptInputs)


class _Tee:
    """A trace sink that writes the file and tells ``listener`` (the console's live lines)."""

    def __init__(self, path: Path, name: str, listener: StepListener | None) -> None:
        self.file = JsonLinesTrace(path)
        self.name = name
        self.listener = listener

    def write(self, record: dict[str, Any]) -> None:
        self.file.write(record)
        if self.listener is not None and record.get("event") in _STEP_EVENTS:
            self.listener(self.name, record)

    def close(self) -> None:
        self.file.close()


def run_attempt(script: PreparedScript, slot: Slot, number: int, options: AttemptOptions, folder: Path,
                on_step: StepListener | None = None) -> Attempt:
    """Run ``script`` once on ``slot``; its files go to ``folder`` (see the module docstring)."""
    from tapir.dsl.interpreter import run_script
    from tapir.runtime.borrowed import Borrowed
    from tapir.runtime.connect import Connection, connect

    folder.mkdir(parents=True, exist_ok=True)
    if on_step is not None:  # not a trace line: tells the console which script the next lines are
        on_step(script.name, {"event": "attempt", "number": number, "device": slot.name})
    trace_path = folder / "trace.jsonl"
    sink = _Tee(trace_path, script.name, on_step)
    conn = Connection(
        device=slot.device, document=script.document, trace_sink=sink, source=script.source, script=script.name,
        adb_port=slot.adb_port, screenshots=str(folder / "shots") if options.screenshots else None,
        prepare="reset" if options.reset else (None if slot.is_sim else "stop"), artifacts=str(folder),
    )
    made: list[Any] = []

    def factory() -> Any:
        runtime = connect(conn)
        # screenshot("screenshot") must not be replaced by the failure screenshot: the name is
        # taken, so the script's file becomes screenshot-2.png (Artifacts numbers names in use)
        runtime.artifacts.saved.append(folder / FAILURE_SCREENSHOT)
        made.append(runtime)
        return Borrowed(runtime)

    started = time.monotonic()
    screenshot = hierarchy = None
    try:
        result = run_script(script.source, factory, options.budgets, output=None, symbols=script.symbols,
                            filename=script.name, inputs=options.inputs)
        error = result.error
        if error is not None and made:
            screenshot, hierarchy = _save_failure(made[0], folder)
    finally:
        if made:
            made[0].close()  # closes the trace sink too
        else:
            sink.close()
    seconds = round(time.monotonic() - started, 3)
    stats = made[0].stats if made else None
    records = read_trace(trace_path)
    lines = [r for r in records if r.get("event") in _STEP_EVENTS]
    steps = tuple(Step.from_record(i, r) for i, r in enumerate(lines, 1))
    start = next((r.get("screenshot") for r in records if r.get("event") == "session"), None)
    shots = folder / "shots"
    thumbnails = options.screenshots and options.thumbnails
    if thumbnails:
        steps = _with_thumbnails(steps, shots)
    steps = _with_saved(steps, folder, options.thumbnails)
    saved = tuple(p.name for p in (made[0].artifacts.saved if made else ())
                  if p.parent == folder and p.name != FAILURE_SCREENSHOT and p.is_file())
    return Attempt(
        number=number, ok=error is None, seconds=seconds, device=slot.name,
        error=error.render() if error is not None else None,
        category=error.category if error is not None else None,
        kind=None if error is None else ("failure" if isinstance(error, ScriptRuntimeError) else "error"),
        line=error.span.line if error is not None and error.span is not None else None,
        printed=tuple(result.printed), steps=steps, actions=result.actions,
        dumps=stats.dumps if stats else 0, device_actions=stats.device_actions if stats else 0,
        start_screenshot=start if isinstance(start, str) else None,
        start_thumbnail=_thumb(shots / start) if thumbnails and isinstance(start, str) else None,
        folder=folder, screenshot=screenshot, hierarchy=hierarchy, trace=trace_path.name,
        screenshot_image=_thumb(folder / screenshot, 540) if screenshot and options.thumbnails else None,
        saved=saved,
    )


def _save_failure(runtime: Any, folder: Path) -> tuple[str | None, str | None]:
    """The screen now and the last dump the runtime read, saved in ``folder``; (file, file) or None each."""
    screenshot = hierarchy = None
    try:
        (folder / FAILURE_SCREENSHOT).write_bytes(runtime.device.screenshot_png())
        screenshot = FAILURE_SCREENSHOT
    except (TapirError, OSError):
        pass  # the device is gone: the error says so; the trace and dump are still saved
    try:
        xml = runtime.screen.last_xml or runtime.device.dump_hierarchy()
        (folder / "hierarchy.xml").write_text(xml, encoding="utf-8")
        hierarchy = "hierarchy.xml"
    except (TapirError, OSError):
        pass
    return screenshot, hierarchy


def _thumb(path: Path, width: int = 360) -> bytes | None:
    try:
        return thumbnail(path.read_bytes(), width)
    except OSError:
        return None


def _with_thumbnails(steps: tuple[Step, ...], shots: Path) -> tuple[Step, ...]:
    """Each step with its screenshot's thumbnail (made once per file: steps share unchanged screens)."""
    from dataclasses import replace

    made: dict[str, bytes | None] = {}
    out = []
    for step in steps:
        if step.screenshot is not None:
            if step.screenshot not in made:
                made[step.screenshot] = _thumb(shots / step.screenshot)
            step = replace(step, thumbnail=made[step.screenshot])
        out.append(step)
    return tuple(out)


def _with_saved(steps: tuple[Step, ...], folder: Path, thumbnails: bool) -> tuple[Step, ...]:
    """Each ``screenshot()`` step with the file it saved (its name in ``folder``) and, for the
    HTML report, its thumbnail."""
    from dataclasses import replace

    out = []
    for step in steps:
        file = step.record.get("file") if step.call == "screenshot" and step.ok else None
        if isinstance(file, str) and Path(file).parent == folder:
            name = Path(file).name
            step = replace(step, saved=name, saved_thumbnail=_thumb(folder / name) if thumbnails else None)
        out.append(step)
    return tuple(out)
