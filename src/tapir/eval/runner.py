"""Running a suite: task -> script -> execution -> verdict, on one device or several at once.

    from tapir.eval import EvalConfig, OracleSource, load_suite, run_suite

    suite = load_suite("samples/suite")
    run = run_suite(suite, OracleSource(), EvalConfig(jobs=4))     # four simulators at once
    run.summary().success_rate, run.results[0].verdict              # 1.0, 'pass'

For each task the harness asks the source for a script (``tapir.eval.sources``), starts a fresh
device (on the simulator: a new simulated device with only the task's app, in front and freshly
installed; on a phone: the app force-stopped), runs the task's setup statements and then the
script in one device session (each in a child process under OS limits that reaches the device
through adb; ``EvalConfig.isolation``), and decides the verdict from the success checks: the app's final
state (``tapir.eval.checks``) and/or the DroidTask action rule. The run's trace gives the action
log: script actions and the navigation steps the runtime took for them (scrolls and reads are not
actions). ``steps / actions`` is the task's reversed redundancy ratio.

Verdicts: ``pass`` (every check holds), ``fail`` (the script finished, a check does not hold),
``error`` (the script stopped on an error and a check does not hold), ``setup_error`` (the setup
statements failed: a suite problem), ``no_script`` (the source gave no script).

Devices: each ``--device`` value is a slot; ``sim`` slots start a simulator per task (``jobs``
of them run at once), a serial is one phone running one task at a time. Tasks are handed to the
first free slot; results come back in suite order (``tapir.runner.pool``, shared with ``tapir test``).
"""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir import __version__
from tapir.core.errors import TapirError, UsageError
from tapir.dsl.budget import Budgets
from tapir.eval.audit import audit_touches
from tapir.eval.droidtask import action_log
from tapir.eval.sources import Generation, GenerationRequest, ScriptSource, Tokens, can_repair
from tapir.eval.suite import AppSpec, Suite, Task
from tapir.run.options import Isolation
from tapir.runner.pool import DevicePool, Slot, plan_slots

#: Trace calls that are UI actions (what the reversed redundancy ratio counts); scrolls are not.
ACTION_CALLS = frozenset({"tap", "long_tap", "set_text", "back", "enter"})
VERDICTS: tuple[str, ...] = ("pass", "fail", "error", "setup_error", "no_script")
DRIFT_KINDS: tuple[str, ...] = ("text", "ids", "insert", "reorder", "all")


@dataclass(frozen=True)
class EvalConfig:
    """How a suite is run (recorded in the report)."""

    #: Device slots: ``sim`` (a fresh simulator per task) and/or adb serials.
    devices: tuple[str, ...] = ("sim",)
    #: Simulators running at once (each ``sim`` in ``devices`` counts as one more).
    jobs: int = 1
    budgets: Budgets = field(default_factory=Budgets)
    #: Passed to the source (sampling) and to UI drift.
    seed: int = 0
    #: Repair rounds after a run that stopped on an error (sources with ``repair`` only).
    repairs: int = 0
    #: Run against a "next version" of the sample apps (``text``, ``ids``, ``insert``, ``reorder``, ``all``).
    drift: str | None = None
    #: Keep each task's trace here (``<app>__<task>.jsonl``); otherwise traces are kept in memory only.
    trace_dir: Path | None = None
    #: The adb server the simulators attach to; None: a private one, started for the run.
    adb_port: int | None = None
    #: Permissions every task's script has (``--allow``), besides the task's own ``allow:``.
    allow: tuple[str, ...] = ()
    #: Where the setup and the script run: ``process``, each in a child process under OS limits
    #: (the same wall as ``tapir run``; the simulated app stays here, where its state is checked),
    #: or ``inline``, in this process (``--in-process``: for debugging; no wall against C loops).
    isolation: Isolation = "process"

    def slots(self) -> list[str]:
        return [name for name, _ in plan_slots(self.devices, self.jobs)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "devices": list(self.devices), "jobs": self.jobs, "seed": self.seed, "repairs": self.repairs,
            "drift": self.drift, "budgets": dataclasses.asdict(self.budgets), "allow": list(self.allow),
            "isolation": self.isolation,
        }


@dataclass(frozen=True)
class TaskResult:
    """One task's verdict and figures (one object of the report's ``tasks``)."""

    id: str
    app: str
    difficulty: str
    task: str
    verdict: str
    #: The script ran to its end without an error.
    finished: bool
    #: The rendered error that stopped the script (file:line:col, the line, a caret).
    error: str | None = None
    category: str | None = None
    failed_checks: tuple[str, ...] = ()
    missing_actions: tuple[str, ...] = ()
    #: Ground-truth actions (from the suite) and actions executed (script and navigation).
    steps: int | None = None
    actions: int = 0
    tokens: Tokens | None = None
    model_latency_s: float | None = None
    #: Scripts run: the first one and each repair (``repairs_used`` = ``attempts - 1``).
    attempts: int = 1
    #: The first script passed, before any repair: the success rate "without repair" counts these,
    #: so one run with ``--repairs N`` gives both rates.
    first_attempt_ok: bool = False
    #: The first line of the error that stopped each attempt sent back for repair, in order.
    attempt_errors: tuple[str, ...] = ()
    #: Whole task (generation, device start, setup, script, checks) and the script's run alone.
    wall_s: float = 0.0
    run_s: float = 0.0
    dumps: int = 0
    device_actions: int = 0
    device: str = ""
    script: str | None = None
    action_log: tuple[str, ...] = ()
    printed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    trace: str | None = None
    #: Touches of the script and its navigation judged by the wrong-target audit
    #: (``tapir.eval.audit``; simulated apps only), those it could not decide, and the wrong
    #: ones: ``{"action", "meant", "touched", "why", "destructive", "view"}``.
    audited_taps: int = 0
    unknown_taps: int = 0
    wrong_taps: tuple[dict[str, Any], ...] = ()
    #: What the code generator's levers did, in order: ``loop`` (an answer stopped when it began
    #: repeating itself), ``postcheck:<check>`` (a finished run sent back for repair by a post-run
    #: check; ``postcheck:<check>:passing`` when that run had passed the suite's checks),
    #: ``kept-finished`` (what that repair led to stopped on an error: the finished run is the result),
    #: ``resampled:<n>`` (a repair that repeated the failed script was asked again n times, sampled),
    #: ``stood-by`` (given a finding, the model wrote the same script: the finished run is the result),
    #: ``completed:<check>`` (the one step a finding named was appended to the script, which ran to
    #: its end with it; or put in its middle, and the run got past it), ``completion-broke:<check>``
    #: (with it the run stopped, at the fix or before: dropped),
    #: ``corrected:<correction>`` (the line the run stopped on was set right, ``tapir.codegen.corrections``,
    #: and the run got past it), ``correction-broke:<correction>`` (it stopped there again: dropped).
    events: tuple[str, ...] = ()

    @property
    def success(self) -> bool:
        return self.verdict == "pass"

    @property
    def repairs_used(self) -> int:
        return self.attempts - 1

    @property
    def rrr(self) -> float | None:
        """Reversed redundancy ratio, ground-truth steps / executed actions (for a passed task only:
        the actions of a failed run did not do the task)."""
        if not self.success or not self.steps or not self.actions:
            return None
        return round(self.steps / self.actions, 4)

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["success"] = self.success
        d["repairs_used"] = self.repairs_used
        d["rrr"] = self.rrr
        d["tokens"] = self.tokens.as_dict() if self.tokens else None
        for key in ("failed_checks", "missing_actions", "action_log", "printed", "notes", "wrong_taps",
                    "attempt_errors", "events"):
            d[key] = list(d[key])
        return d


@dataclass
class EvalRun:
    """The results of a run, in suite order, with what is needed to reproduce it."""

    suite: Suite
    source_name: str
    source_settings: dict[str, Any]
    config: EvalConfig
    results: list[TaskResult]
    wall_s: float
    started: str
    #: Tasks that did not run because the run was interrupted (Ctrl-C); their results are absent.
    not_run: tuple[str, ...] = ()

    def environment(self) -> dict[str, Any]:
        return {"tapir": __version__, "python": platform.python_version(), "platform": platform.platform()}


@dataclass
class _Execution:
    """What one attempt did on the device."""

    finished: bool = False
    error: TapirError | None = None
    setup_error: TapirError | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    printed: tuple[str, ...] = ()
    app: Any = None
    run_s: float = 0.0
    dumps: int = 0
    device_actions: int = 0
    #: The simulated app's record of the script's touches (``TouchAudit``), when it keeps one.
    touches: list[Any] | None = None


def _is_sim(slot: str) -> bool:
    return slot.startswith("sim")


def _execute(task: Task, app: AppSpec, script: str, slot: str, config: EvalConfig, adb_port: int | None,
             trace: Path | None, attempt: int = 1, *, trusted: bool = False) -> _Execution:
    """Setup, then the script, in one session on a fresh device; the app's final state kept.
    ``trace``: a file for the session's trace (None: the records are kept in memory only).

    The guards apply (``docs/safety.md``): the script may do what the task and ``--allow`` allow;
    a ``trusted`` script (a reference script) may also allow itself things (``# allow:``,
    ``allow()``), a generated one may not."""
    from tapir.core.safety import Safety
    from tapir.docgen.symbols import build_symbols
    from tapir.run import Runner, RunOptions

    out = _Execution()
    safety = Safety.from_options(allow=config.allow, trust_script=trusted)
    for token in task.allow:
        safety.grant(token, f"the task's allow: {token}")
    safety.apply_header(script)  # (the connection is given no source when a setup runs first)
    # errors name the file they quote: the reference's, or the task and attempt of another script
    # (a model's), never the reference's file for a line it does not hold
    name = (task.reference_file or task.id) if script == task.reference else f"{task.id} (script {attempt})"
    package = app.document.app.package
    runner = Runner(app.document, (task.device or app.device) if _is_sim(slot) else slot, RunOptions(
        budgets=config.budgets, safety=safety, trace=trace, output=None, isolation=config.isolation,
        adb_port=adb_port if _is_sim(slot) else None))
    symbols = build_symbols(app.document)
    hooks = None
    # The trace quotes each action's line of ``source``; with setup statements in the same session
    # that quote would be wrong for theirs, so the trace then gives line numbers only.
    try:
        with runner.session(None if task.setup else script, name) as session:
            runtime = session.open()  # the device now: the task starts on it before the script
            hooks = session.simulator
            if hooks is None:
                runtime.device.app_stop(package)  # a phone: start the task from the app's launch screen
            elif config.drift:
                hooks.set_drift(config.drift, package, config.seed)
            if task.setup:
                done = session.run(task.setup, f"{task.id} (setup)", symbols=symbols)
                if done.error is not None:
                    out.setup_error = done.error
                    return out
            if hooks is not None:
                out.touches = hooks.start_audit(package)  # the script's touches only, not the setup's
            run = session.run(script, name, symbols=symbols)
            out.run_s = run.seconds
            out.finished, out.error, out.printed = run.ok, run.error, run.result.printed
            out.dumps, out.device_actions = run.stats.dumps, run.stats.device_actions
            out.records = list(run.records)
    finally:
        if hooks is not None:
            out.app = hooks.app_state(package)
    return out


def executed_actions(records: list[dict[str, Any]]) -> int:
    """UI actions in trace records: the script's taps, long taps, texts, back and enter that were
    carried out, and the navigation steps the runtime took for them. Scrolls are not counted, nor
    is (re)starting the app: every task starts with the app open."""
    n = 0
    for r in records:
        if r.get("event") == "action" and r.get("ok") and r.get("call") in ACTION_CALLS:
            n += 1
        elif r.get("event") == "navigation" and (r.get("action") in ACTION_CALLS
                                                 or str(r.get("step", "")).endswith(("back()", "enter()"))):
            n += 1
    return n


def _check(task: Task, execution: _Execution) -> tuple[list[str], list[str], list[str]]:
    """(failed checks, missing actions, the action log)."""
    log = action_log(execution.records)
    missing = [a for a in task.actions if a not in log]
    failed: list[str] = []
    if task.checks:
        if execution.app is None:
            failed.append("not checked: the app's state could not be read (no simulated app ran the task)")
        else:
            names = {"state": getattr(execution.app, "state", None), "app": execution.app,
                     "printed": list(execution.printed), "output": "\n".join(execution.printed)}
            for check in task.checks:
                outcome = check.expression.evaluate(names)
                if not outcome.ok:
                    failed.append(outcome.message)
    return failed, missing, log


# ---------------------------------------------------------------------------------------------
# One task


def run_task(task: Task, suite: Suite, source: ScriptSource, config: EvalConfig, slot: str = "sim#1",
             adb_port: int | None = None) -> TaskResult:
    """Generate (and repair) the task's script, run it on a fresh device, and judge it."""
    started = time.monotonic()
    app = suite.apps[task.app]
    request = GenerationRequest(task, app.document, seed=config.seed, document_path=app.document_path or None)
    first_ok = False  # the first script passed (set once it has run)
    attempt_errors: list[str] = []
    events: list[str] = []

    def result(**figures: Any) -> TaskResult:
        return TaskResult(id=task.id, app=task.app, difficulty=task.difficulty, task=task.text, steps=task.steps,
                          device=slot, notes=task.notes, first_attempt_ok=first_ok,
                          attempt_errors=tuple(attempt_errors), events=tuple(events), **figures)

    tokens: Tokens | None = None
    latency: float | None = None

    def account(gen: Generation) -> None:
        nonlocal tokens, latency
        if gen.tokens is not None:
            tokens = gen.tokens if tokens is None else tokens + gen.tokens
        if gen.latency_s is not None:
            latency = gen.latency_s + (latency or 0.0)
        if gen.extra.get("finish") == "loop":
            events.append("loop")

    gen = source.generate(request)
    account(gen)
    attempts = 1
    folder = config.trace_dir
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    # the last run that finished and was sent back by a post-run check: kept when what its repair
    # led to stops on an error (a finding is a suspicion; a script that ran to its end beats one
    # that broke)
    finished: tuple[Any, _Execution, Path | None] | None = None
    while True:
        if gen.script is None:
            return result(verdict="no_script", finished=False, error=gen.error or "no script", category="NoScript",
                          tokens=tokens, model_latency_s=latency, attempts=attempts, wall_s=_since(started))
        suffix = f".{attempts}" if attempts > 1 else ""
        trace = folder / f"{task.id.replace('/', '__')}{suffix}.jsonl" if folder is not None else None
        try:
            ex = _execute(task, app, gen.script, slot, config, adb_port, trace, attempts,
                          trusted=source.name == "oracle")
        except TapirError as exc:  # the device could not be started or reached
            ex = _Execution(error=exc)
        if ex.setup_error is not None:
            return result(verdict="setup_error", finished=False, error=ex.setup_error.render(),
                          category=ex.setup_error.category, tokens=tokens, model_latency_s=latency,
                          attempts=attempts, wall_s=_since(started), script=gen.script,
                          trace=str(trace) if trace is not None else None)
        failed, missing, log = _check(task, ex)
        ok = not failed and not missing
        if attempts == 1:
            first_ok = ok  # the model's script as it wrote it, before any correction or completion
        # stopped on a match() on the wrong list, or facing a permission prompt: the line set right
        # (the document's list; the prompt answered), run again, no model asked; kept only when
        # the run gets past that line
        correct = getattr(source, "correct", None)
        while ex.error is not None and ex.setup_error is None and callable(correct):
            more = correct(request, gen, ex.error.render(), ex.records)
            if more is None or not more.script:
                break
            extra = more.extra or {}
            done = list(extra.get("corrected") or ("?",))
            step = _step_trace(folder, task, f"{suffix}~{len(done)}")
            tried = _rerun(task, app, more.script, slot, config, adb_port, step, attempts)
            line = extra.get("corrected_line")
            if tried.setup_error is not None or (tried.error is not None and not _past(tried.error, line)):
                events.append(f"correction-broke:{done[-1]}")
                break
            events.append(f"corrected:{done[-1]}")
            gen, ex, trace = more, tried, step
            failed, missing, log = _check(task, ex)
            ok = not failed and not missing
        # one step short (a dialog's OK never tapped): the source appends it and the script runs
        # again, no model asked and no repair spent; a step that breaks the run is dropped
        complete = getattr(source, "complete", None)
        while ex.error is None and ex.finished and callable(complete):
            more = complete(request, gen, ex.records)
            if more is None or not more.script:
                break
            done = list((more.extra or {}).get("completed") or ("?",))
            step = _step_trace(folder, task, f"{suffix}+{len(done)}")
            tried = _rerun(task, app, more.script, slot, config, adb_port, step, attempts)
            # a fix in the script's middle that the run got past stands, and the later line's
            # error goes to repair (as a correction's); one the run stopped on or before is dropped
            past = tried.error is not None and _past(tried.error, (more.extra or {}).get("completed_line"))
            if tried.setup_error is not None or (tried.error is not None and not past) or (
                    tried.error is None and not tried.finished):
                events.append(f"completion-broke:{done[-1]}")
                break
            events.append(f"completed:{done[-1]}")
            gen, ex, trace = more, tried, step
            failed, missing, log = _check(task, ex)
            ok = not failed and not missing
        retry = (not ok and ex.error is not None and attempts <= config.repairs and can_repair(source))
        if retry:
            rendered = ex.error.render() if ex.error else ""
            repaired = source.repair(request, gen, rendered)  # type: ignore[attr-defined]
            if repaired is not None:
                if (repaired.extra or {}).get("resampled"):  # the repair repeated the script: asked again
                    events.append(f"resampled:{repaired.extra['resampled']}")
                attempt_errors.append(_first_line(rendered))
                account(repaired)
                gen, attempts = repaired, attempts + 1
                continue
        # no silent failures: a run that finished is checked against its plan (``postcheck``) and a
        # finding goes back for repair like an error; whether the run had passed is not looked at
        postcheck = getattr(source, "postcheck", None)
        if (ex.error is None and ex.finished and attempts <= config.repairs and callable(postcheck)
                and can_repair(source)):
            finding = postcheck(request, gen, ex.records)
            if finding is not None:
                from tapir.codegen.generate import same_script  # a model source: the generator is here
                repaired = source.repair(request, gen, finding.render())  # type: ignore[attr-defined]
                if repaired is not None and same_script(repaired.script or "", gen.script or ""):
                    # the model stands by the run that finished: it is the result (running the
                    # same script again would only find the same thing)
                    events.append(f"postcheck:{finding.check}" + (":passing" if ok else ""))
                    events.append("stood-by")
                    attempt_errors.append(_first_line(finding.render()))
                    account(repaired)
                    attempts += 1
                    repaired = None
                elif repaired is not None:
                    if (repaired.extra or {}).get("resampled"):
                        events.append(f"resampled:{repaired.extra['resampled']}")
                    events.append(f"postcheck:{finding.check}" + (":passing" if ok else ""))
                    attempt_errors.append(_first_line(finding.render()))
                    account(repaired)
                    finished = (gen, ex, trace)
                    gen, attempts = repaired, attempts + 1
                    continue
        if ex.error is not None and finished is not None:
            gen, ex, trace = finished
            events.append("kept-finished")
            failed, missing, log = _check(task, ex)
            ok = not failed and not missing
        verdict = "pass" if ok else ("error" if ex.error is not None else "fail")
        audit = audit_touches(app.document, ex.records, ex.touches) if ex.touches is not None else None
        return result(
            verdict=verdict, finished=ex.finished,
            error=ex.error.render() if ex.error else None, category=ex.error.category if ex.error else None,
            failed_checks=tuple(failed), missing_actions=tuple(missing), actions=executed_actions(ex.records),
            tokens=tokens, model_latency_s=round(latency, 4) if latency is not None else None, attempts=attempts,
            wall_s=_since(started), run_s=round(ex.run_s, 4), dumps=ex.dumps, device_actions=ex.device_actions,
            script=gen.script, action_log=tuple(log), printed=ex.printed,
            trace=str(trace) if trace is not None else None,
            audited_taps=len(audit.verdicts) if audit else 0, unknown_taps=len(audit.unknown) if audit else 0,
            wrong_taps=tuple(v.as_dict() for v in audit.wrong) if audit else (),
        )


def _step_trace(folder: Path | None, task: Task, mark: str) -> Path | None:
    """The trace file of a model-free fix's run (``mark``: the attempt's suffix and the fix's)."""
    return folder / f"{task.id.replace('/', '__')}{mark}.jsonl" if folder is not None else None


def _rerun(task: Task, app: AppSpec, script: str, slot: str, config: EvalConfig, adb_port: int | None,
           trace: Path | None, attempt: int) -> _Execution:
    """A fixed script run as its attempt's was; a device that cannot be reached is its error."""
    try:
        return _execute(task, app, script, slot, config, adb_port, trace, attempt)
    except TapirError as exc:
        return _Execution(error=exc)


def _past(error: TapirError, line: object) -> bool:
    """Whether a run that stopped on ``error`` got past the script's ``line``."""
    where = error.span.line if error.span is not None else None
    return isinstance(line, int) and where is not None and where > line


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _since(started: float) -> float:
    return round(time.monotonic() - started, 4)


# ---------------------------------------------------------------------------------------------
# A whole suite


def check_config(suite: Suite, config: EvalConfig) -> None:
    """Refuse, before anything starts, what cannot work: state checks on a phone, bad numbers."""
    if config.jobs < 1:
        raise UsageError("-j must be at least 1")
    if config.repairs < 0:
        raise UsageError("must be 0 or more", setting="repairs")
    if config.drift is not None and config.drift not in DRIFT_KINDS:
        raise UsageError(f"unknown drift {config.drift!r} (kinds: {', '.join(DRIFT_KINDS)})")
    for device in config.devices:
        if not device.strip():
            raise UsageError("is empty: give an adb serial or sim", setting="device")
        if device.startswith("sim:"):
            raise UsageError(f"{device}: a suite names each task's app (its `apps:`); use the simulator (sim)",
                             setting="device")
    phones = [d for d in config.devices if d != "sim"]
    if phones:
        stateful = [t.id for t in suite.tasks if t.needs_state]
        if stateful:
            raise UsageError(
                f"{len(stateful)} task(s) check the app's state (e.g. {stateful[0]}), which only a simulated app "
                f"exposes; run them with --device sim")
        if config.drift:
            raise UsageError("changes the simulated apps; it needs the simulator (sim) as the device", setting="drift")


def run_suite(
    suite: Suite,
    source: ScriptSource,
    config: EvalConfig | None = None,
    *,
    on_result: Callable[[TaskResult], None] | None = None,
) -> EvalRun:
    """Run every task of ``suite`` (see the module docstring); ``on_result`` is called, in the
    calling thread, as each task finishes."""
    config = config or EvalConfig()
    check_config(suite, config)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    started = time.monotonic()
    hold_out = getattr(source, "hold_out", None)
    if callable(hold_out):  # a model's examples never include a task of this suite (nor a near-copy)
        hold_out([*(t.text for t in suite.tasks), *suite.unselected])

    def job(task: Task, slot: Slot) -> TaskResult:
        return run_task(task, suite, source, config, slot.name, slot.adb_port)

    def crashed(task: Task, slot: Slot, trace: str) -> TaskResult:
        return TaskResult(id=task.id, app=task.app, difficulty=task.difficulty, task=task.text, verdict="error",
                          finished=False, error=trace, category="InternalError", steps=task.steps, device=slot.name)

    with DevicePool(config.devices, config.jobs, adb_port=config.adb_port) as pool:
        done = pool.run(suite.tasks, job, on_result=on_result, on_crash=crashed)
    return EvalRun(suite=suite, source_name=source.name, source_settings=source.settings(), config=config,
                   results=done.results, wall_s=_since(started), started=started_at,
                   not_run=tuple(t.id for t in done.not_run))


__all__ = ["ACTION_CALLS", "DRIFT_KINDS", "VERDICTS", "EvalConfig", "EvalRun", "TaskResult", "check_config",
           "executed_actions", "run_suite", "run_task"]

