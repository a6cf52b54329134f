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

The script is run by ``tapir.run.Runner`` (``Runner.run`` with a ``finish`` that saves the
failure's files), in a child process under OS limits (``tapir.dsl.isolation``) unless
``AttemptOptions.in_process``. Everything that touches the device happens in the child: the
simulator is started there, the trace, step screenshots and failure files are written there
(into ``folder``, which both processes see), the device is released there. What the parent needs
comes back over the child's pipe: each trace record as it is written (the steps for ``on_step``,
and the report's steps from them), and at the end the device statistics and the names of the
failure files. A child that is killed (its time or memory ran out, a crash) leaves the trace
written up to then but no screenshot or dump of the end: the device it held went with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import ScriptRuntimeError
from tapir.core.safety import SafetyOptions
from tapir.dsl.budget import Budgets
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult
from tapir.dsl.symbols import SymbolTable
from tapir.run import Runner, RunOptions
from tapir.runner.collect import Header
from tapir.runner.images import thumbnail
from tapir.runner.pool import Slot
from tapir.runner.results import Attempt, Step
from tapir.runtime.artifacts import FAILURE_SCREENSHOT, save_failure
from tapir.runtime.session import DeviceRuntime

__all__ = ["FAILURE_SCREENSHOT", "AttemptOptions", "PreparedScript", "StepListener", "run_attempt"]


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
    #: The project's ``tapir.toml`` ``[safety]`` for this script (a ``SafetyConfig``), None without one.
    project_safety: Any = None


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
    #: Run the script in this process, not in a child process under OS limits (for debugging).
    in_process: bool = False
    #: ``--allow``, ``--allow-app``, ``--foreign-app``, ``--secrets`` (``docs/safety.md``).
    safety: SafetyOptions = field(default_factory=SafetyOptions)


def run_attempt(script: PreparedScript, slot: Slot, number: int, options: AttemptOptions, folder: Path,
                on_step: StepListener | None = None) -> Attempt:
    """Run ``script`` once on ``slot``; its files go to ``folder`` (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    if on_step is not None:  # not a trace line: tells the console which script the next lines are
        on_step(script.name, {"event": "attempt", "number": number, "device": slot.name})
    trace_path = folder / "trace.jsonl"

    def on_record(record: dict[str, Any]) -> None:  # here, in the worker, wherever the script runs
        if on_step is not None and record.get("event") in _STEP_EVENTS:
            on_step(script.name, record)

    def on_connect(runtime: DeviceRuntime) -> None:
        # screenshot("screenshot") must not be replaced by the failure screenshot: the name is
        # taken, so the script's file becomes screenshot-2.png (Artifacts numbers names in use)
        runtime.artifacts.saved.append(folder / FAILURE_SCREENSHOT)

    def finish(runtime: DeviceRuntime, result: RunResult) -> dict[str, Any]:
        """Where the script ran, after it and before the device is released: the failure's files
        saved; what the attempt reports of them."""
        screenshot, hierarchy = save_failure(runtime, folder) if result.error is not None else (None, None)
        saved = [p.name for p in runtime.artifacts.saved if p.parent == folder and p.name != FAILURE_SCREENSHOT]
        return {"screenshot": screenshot, "hierarchy": hierarchy, "saved": saved}

    runner = Runner(script.document, slot.device, RunOptions(
        budgets=options.budgets, params=options.inputs.params,
        # a fresh Safety per attempt: a retried script starts with only what it was given
        safety=options.safety.safety(script.project_safety),
        isolation="inline" if options.in_process else "process", trace=trace_path, on_record=on_record,
        on_connect=on_connect, screenshots=folder / "shots" if options.screenshots else None, artifacts=folder,
        adb_port=slot.adb_port, adb_host=slot.adb_host,
        prepare="reset" if options.reset else (None if slot.is_sim else "stop"), output=None,
    ))
    run = runner.run(script.source, script.name, symbols=script.symbols, finish=finish)
    result, error = run.result, run.error
    done = _checked_files(run.finished)
    screenshot, hierarchy = done.get("screenshot"), done.get("hierarchy")
    seconds = round(run.seconds, 3)
    records = run.records
    lines = [r for r in records if r.get("event") in _STEP_EVENTS]
    steps = tuple(Step.from_record(i, r) for i, r in enumerate(lines, 1))
    start = next((r.get("screenshot") for r in records if r.get("event") == "session"), None)
    shots = folder / "shots"
    thumbnails = options.screenshots and options.thumbnails
    if thumbnails:
        steps = _with_thumbnails(steps, shots)
    steps = _with_saved(steps, folder, options.thumbnails)
    saved = tuple(name for name in done.get("saved", ()) if (folder / name).is_file())
    return Attempt(
        number=number, ok=error is None, seconds=seconds, device=slot.name,
        error=error.render() if error is not None else None,
        category=error.category if error is not None else None,
        kind=None if error is None else ("failure" if isinstance(error, ScriptRuntimeError) else "error"),
        line=error.span.line if error is not None and error.span is not None else None,
        printed=tuple(result.printed), steps=steps, actions=result.actions,
        dumps=run.stats.dumps, device_actions=run.stats.device_actions,
        start_screenshot=start if isinstance(start, str) else None,
        start_thumbnail=_thumb(shots / start) if thumbnails and isinstance(start, str) else None,
        folder=folder, screenshot=screenshot, hierarchy=hierarchy, trace=trace_path.name,
        screenshot_image=_thumb(folder / screenshot, 540) if screenshot and options.thumbnails else None,
        saved=saved, notices=run.notices,
    )


def _checked_files(collected: Any) -> dict[str, Any]:
    """What a child process's ``finish`` sent, taking only what it could have sent: the two file
    names it saves and the script's own files (nothing else names a file the parent then reads)."""
    if not isinstance(collected, dict):
        return {}
    out: dict[str, Any] = {}
    for key, name in (("screenshot", "screenshot.png"), ("hierarchy", "hierarchy.xml")):
        if collected.get(key) == name:
            out[key] = name
    saved = collected.get("saved")
    if isinstance(saved, list):  # the script's screenshot() files: plain names in its folder only
        out["saved"] = [n for n in saved if isinstance(n, str) and n == Path(n).name and not n.startswith(".")
                        and n != FAILURE_SCREENSHOT]
    return out


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
