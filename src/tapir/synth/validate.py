"""Validating a synthesised pair: run its script on a fresh simulated app and confirm its effect.

    with Validator(document, "sim:music") as v:         # one private adb server for every run
        items = v.probe_items()                          # texts of the lists' items, read from the app
        outcome = v.validate(script, values=("Focus",))
        outcome.ok, outcome.category, outcome.checks     # True, None, ("state.sort == 'Duration'", ...)

Each run starts a fresh simulated device with only the app (as ``tapir eval`` does), runs the
script in the sandboxed interpreter under ``Budgets``, in a child process under the OS limits of
``tapir run`` (``isolation="inline"``: here, with no wall against a long C-level operation; the
simulator stays in this process either way, where the app's state is read), and judges it:

* an error stops the pair, categorised by what failed (``CATEGORIES``: ``syntax``, ``check``,
  ``grounding``, ``navigation``, ``budget``...);
* a tap the simulated app saw land elsewhere than the element meant (``tapir.eval.audit``) is a
  ``wrong-tap``;
* the effect must show in the app's final state: the state differs from a fresh app's, and every
  value the task typed is in it; otherwise ``effect-not-confirmed``.

On a replayed recording (``sim:DIR``: ``tapir.sim.replay``) the app has no data model: the
recording is the app. There a pair is kept when every tap and typed text of the run followed a
recorded transition (else ``not-recorded``: the recording cannot follow the walk), every value
the task typed was typed in the recording there, and the run ends on another recorded screen than
the start (else ``effect-not-confirmed``). Its check is that screen (``app.current_state ==
'<state hash>'``), and the run's action log (``tapir.eval.droidtask.action_log``, what the
DroidTask metric compares) goes with the pair.

What changed becomes the pair's checks: one expression per changed field of the state
(``state.sort == 'Duration'``), in the syntax of the suite's checks (``tapir.eval.checks``), so a
pair can be checked again, or turned into a suite task.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from dataclasses import dataclass, field
from typing import Any

from tapir.core.document import AppDocument, Element, Kind
from tapir.core.errors import (
    AssertionFailed,
    BudgetExceeded,
    DeviceError,
    DocumentError,
    ElementNotFound,
    ScreenNotReached,
    TapirError,
    TapirSyntaxError,
    UnknownElement,
    UsageError,
    WaitTimeout,
)
from tapir.docgen.symbols import build_symbols
from tapir.dsl.budget import Budgets
from tapir.eval.checks import compile_check
from tapir.run.options import Isolation

__all__ = ["CATEGORIES", "Outcome", "Validator", "categorise", "state_checks"]

#: Why a pair is rejected, in the order the data card lists them.
CATEGORIES: tuple[str, ...] = (
    "syntax", "check", "grounding", "navigation", "budget", "action", "assert", "wait", "device", "runtime",
    "wrong-tap", "not-recorded", "effect-not-confirmed", "check-not-reproduced",
)

#: Inputs a replayed recording must have followed (an unmatched swipe or key is the runtime
#: looking for an element or a way back, which the recording may not hold; it changes nothing).
_MUST_FOLLOW = frozenset({"tap", "long_tap", "click", "long_click", "text"})

#: Each run's connection freezes the heap (``tapir.runtime.heap.settle``, meant for one run per
#: process), so the cyclic garbage of earlier runs would never be collected: thousands of runs
#: grew the process by gigabytes. Every so many runs it is unfrozen and collected.
_COLLECT_EVERY = 20

#: Longest value a generated check spells out; a larger field is compared by its length.
_MAX_LITERAL = 160


@dataclass(frozen=True)
class Outcome:
    """What one validation run found."""

    ok: bool
    #: One of ``CATEGORIES`` when not ok.
    category: str | None = None
    message: str = ""
    #: The 0-based statement the error is at (one statement per line), when known.
    line: int | None = None
    #: Checks that hold on the final state and not on a fresh app's.
    checks: tuple[str, ...] = ()
    #: Names of the state's fields the script changed.
    changed: tuple[str, ...] = ()
    printed: tuple[str, ...] = ()
    run_s: float = 0.0
    #: The final state, field by field (``repr``), when the script finished.
    state: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: On a replayed recording: the run's action log (``tap: <label>``...), DroidTask's metric.
    actions: tuple[str, ...] = ()


def categorise(error: TapirError) -> str:
    """The rejection category of an error that stopped a script."""
    order: tuple[tuple[type[TapirError], str], ...] = (
        (TapirSyntaxError, "syntax"), (UnknownElement, "check"), (DocumentError, "check"),
        (ElementNotFound, "grounding"), (ScreenNotReached, "navigation"), (BudgetExceeded, "budget"),
        (AssertionFailed, "assert"), (WaitTimeout, "wait"), (DeviceError, "device"),
    )
    for kind, name in order:
        if isinstance(error, kind):
            return name
    code = getattr(error, "code", "")
    if code in ("check", "type", "name"):
        return "check"
    if code == "action":
        return "action"
    return "runtime"


class Validator:
    """Runs scripts on fresh simulated apps for one document (see the module docstring)."""

    def __init__(self, document: AppDocument, device: str, budgets: Budgets | None = None, *,
                 isolation: Isolation = "process") -> None:
        from tapir.sim.launch import apps_for_spec, is_sim_spec

        if not is_sim_spec(device):
            raise UsageError(f"{device}: synthesis validates on the simulator only (sim or sim:APP): "
                             "its checks read the app's state", setting="device")
        apps = apps_for_spec(device)
        packages = {a.package for a in apps}
        if document.app.package not in packages:
            raise UsageError(f"the simulated device {device!r} has no app {document.app.package} (the document's); "
                             f"it has {', '.join(sorted(packages)) or 'nothing'}")
        self.document = document
        self.device = device
        self.budgets = budgets or Budgets(max_actions=60, timeout_s=60.0)
        self.isolation: Isolation = isolation
        self.symbols = build_symbols(document)
        #: The app is a replayed recording (its transitions, not a data model, judge a run).
        self.replay = any(a.package == document.app.package and hasattr(a, "followed") for a in apps)
        #: The texts the recording typed (what a walk may type on a replay), in order.
        self.recorded_texts: tuple[str, ...] = tuple(dict.fromkeys(
            e.text for a in apps if self.replay and a.package == document.app.package
            for e in getattr(a, "events", ()) if e.kind == "set_text" and e.text))
        self._adb_port: int | None = None
        self._own_server = False
        self._fresh: Any = None
        self.runs = 0

    def __enter__(self) -> Validator:
        from tapir.sim.launch import start_private_adb_server

        self._adb_port, self._own_server = start_private_adb_server(), True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own_server and self._adb_port is not None:
            from tapir.sim.launch import kill_adb_server

            kill_adb_server(self._adb_port)
            self._adb_port, self._own_server = None, False

    # -- running -------------------------------------------------------------------------------

    def _run(self, script: str) -> tuple[Any, Any, list[dict[str, Any]], list[Any] | None, float]:
        """(result, the simulated app, trace records, the app's touch audit, seconds) of one run."""
        from tapir.run import Runner, RunOptions

        self.runs += 1
        package = self.document.app.package
        runner = Runner(self.document, self.device, RunOptions(budgets=self.budgets, adb_port=self._adb_port,
                                                               output=None, isolation=self.isolation))
        touches: list[Any] | None = None
        with runner.session(script, "synth.tap") as session:
            session.open()
            started = time.monotonic()
            try:
                hooks = session.simulator
                assert hooks is not None
                app = hooks.app_state(package)
                touches = hooks.start_audit(package)
                run = session.run(script, "synth.tap", symbols=self.symbols)
            finally:
                session.close()
                if self.runs % _COLLECT_EVERY == 0:
                    _collect()
        seconds = time.monotonic() - started
        return run.result, app, list(run.records), touches, seconds

    def fresh_state(self) -> Any:
        """The state of the app as a fresh simulator starts it (what effects are measured against)."""
        if self._fresh is None:
            _, app, _, _, _ = self._run("")
            self._fresh = _snapshot(getattr(app, "state", None))
        return self._fresh

    def probe_items(self, per_list: int = 8) -> dict[str, list[str]]:
        """Texts of some items of each list the app shows without a choice being made (read on a
        fresh app: a list whose screen the runtime cannot reach by itself is left out)."""
        out: dict[str, list[str]] = {}
        for screen in self.document.screens:
            children: dict[str, Element] = {}
            for e in screen.elements:  # an item's name or title, else its first text
                if e.item_of and e.kind == Kind.TEXT and (e.item_of not in children or _names_item(e)):
                    if not _names_item(children.get(e.item_of)):
                        children[e.item_of] = e
            for e in screen.elements:
                if e.kind != Kind.LIST or e.options:
                    continue
                child = children.get(e.name)
                read = f"item.get_text(${child.name})" if child else "item.get_text()"
                script = (f"n = 0\nfor item in ${e.name}:\n    print({read})\n    n += 1\n"
                          f"    if n >= {per_list}:\n        break\n")
                result, _, _, _, _ = self._run(script)
                texts = [t.strip() for t in result.printed if t.strip()] if result.ok else []
                if texts:
                    out[e.name] = list(dict.fromkeys(texts))
        return out

    def validate(self, script: str, values: tuple[str, ...] = ()) -> Outcome:
        """Run ``script`` on a fresh app and judge it (see the module docstring)."""
        from tapir.eval.audit import audit_touches

        fresh = self.fresh_state()
        try:
            result, app, records, touches, seconds = self._run(script)
        except TapirError as exc:  # the simulator could not be started
            return Outcome(False, "device", exc.render())
        run_s = round(seconds, 4)
        if result.error is not None:
            err = result.error
            line = err.span.line - 1 if err.span is not None else None
            return Outcome(False, categorise(err), err.render(), line, printed=tuple(result.printed), run_s=run_s)
        if self.replay:
            return self._judge_replay(script, values, app, records, run_s, tuple(result.printed))
        if touches is not None:
            audit = audit_touches(self.document, records, touches)
            if audit.wrong:
                wrong = audit.wrong[0]
                return Outcome(False, "wrong-tap", f"a tap meant for {wrong.meant} touched {wrong.touched}",
                               run_s=run_s)
        state = getattr(app, "state", None)
        after = _snapshot(state)
        changed = tuple(k for k in after if after[k] != fresh.get(k))
        if not changed:
            return Outcome(False, "effect-not-confirmed", "the app's state is the same as a fresh app's",
                           printed=tuple(result.printed), run_s=run_s, state=after)
        text, before = repr(state), "\n".join(fresh.values())
        missing = [v for v in values if v not in text or v in before]
        if missing:
            # (a value a fresh app already holds proves nothing: "Road" of a search in "Road trip")
            return Outcome(False, "effect-not-confirmed", f"the typed value {missing[0]!r} is not new in the app's "
                           "state", line=_value_line(script, missing[0]), changed=changed, run_s=run_s)
        checks = state_checks(state, fresh, changed)
        return Outcome(True, checks=checks, changed=changed, printed=tuple(result.printed), run_s=run_s, state=after)

    def _judge_replay(self, script: str, values: tuple[str, ...], app: Any, records: list[dict[str, Any]],
                      run_s: float, printed: tuple[str, ...]) -> Outcome:
        """A finished run on a replayed recording (see the module docstring)."""
        from tapir.eval.droidtask import action_log
        from tapir.sim.replay import UNRECORDED

        missed = [u for u in app.unmatched if u.action in _MUST_FOLLOW]
        if missed or app.current_state == UNRECORDED:
            what = (f"the {missed[0].action} at {missed[0].detail} on state {missed[0].state[:12]}" if missed
                    else "the last input")
            return Outcome(False, "not-recorded", f"the recording has no transition for {what}",
                           line=_line_at(records, missed[0].detail) if missed else None, printed=printed, run_s=run_s)
        typed = {e.text for e in app.followed if e.kind == "set_text"}
        for value in values:
            if value not in typed:
                return Outcome(False, "not-recorded", f"the recording never typed {value!r} there",
                               line=_value_line(script, value), printed=printed, run_s=run_s)
        state = {"current_state": repr(app.current_state)}
        if app.current_state == app.start_state:
            return Outcome(False, "effect-not-confirmed", "the run ends on the recording's start screen",
                           printed=printed, run_s=run_s, state=state)
        return Outcome(True, checks=(f"app.current_state == {app.current_state!r}",), changed=("current_state",),
                       printed=printed, run_s=run_s, state=state, actions=tuple(action_log(records)))

    def time_driven(self, script: str, outcome: Outcome) -> set[str]:
        """Fields of the state that move on with time alone after ``script`` (a song's position, a
        running stopwatch): the script run again with a wait at its end, compared."""
        if self.replay:  # a recorded screen does not move on with time
            return set()
        later = self.validate(script + "sleep(30)\n")
        if not later.state:
            return set()
        return {k for k in outcome.state if later.state.get(k) != outcome.state[k]}

    def recheck(self, script: str, checks: tuple[str, ...]) -> list[str]:
        """Run ``script`` again on a fresh app; the messages of the checks that do not hold."""
        result, app, _, _, _ = self._run(script)
        if result.error is not None:
            return [result.error.render()]
        names = {"state": getattr(app, "state", None), "app": app, "printed": list(result.printed),
                 "output": "\n".join(result.printed)}
        return [o.message for o in (compile_check(c).evaluate(names) for c in checks) if not o.ok]


def _collect() -> None:
    gc.unfreeze()
    gc.collect()


def _line_at(records: list[dict[str, Any]], point: str) -> int | None:
    """The 0-based statement whose tap (or whose navigation's tap) touched ``point`` ("x,y"), from
    the run's trace records (their ``bounds``); None when none did."""
    try:
        x, y = (int(v) for v in point.split(",")[:2])
    except ValueError:
        return None
    pending = False  # a navigation step touched it: the statement it navigated for is next
    for r in records:
        bounds = r.get("bounds")
        hit = isinstance(bounds, list | tuple) and len(bounds) == 4 and bounds[0] <= x <= bounds[2] \
            and bounds[1] <= y <= bounds[3]
        if r.get("event") == "navigation" and hit:
            pending = True
        elif r.get("event") == "action" and isinstance(r.get("line"), int) and (pending or hit):
            return int(r["line"]) - 1
    return None


def _value_line(script: str, value: str) -> int | None:
    """The 0-based line of the ``set_text`` that typed ``value``."""
    for i, line in enumerate(script.splitlines()):
        if ".set_text(" in line and value in line:
            return i
    return None


def _names_item(element: Element | None) -> bool:
    return element is not None and any(w in element.name.split("__")[-1] for w in ("title", "name", "label"))


def _snapshot(state: Any) -> dict[str, str]:
    """Each field of a state dataclass as its ``repr`` (what two states are compared by)."""
    if state is None:
        return {}
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: repr(getattr(state, f.name)) for f in dataclasses.fields(state) if not f.name.startswith("_")}
    return {"state": repr(state)}


def state_checks(state: Any, fresh: dict[str, str], changed: tuple[str, ...]) -> tuple[str, ...]:
    """One check expression per changed field: its value spelled out when short, else its length
    and that it differs from a fresh app's (compared by ``repr``)."""
    out = []
    for name in changed:
        value = getattr(state, name, None)
        literal = repr(value)
        if isinstance(value, str | int | float | bool | type(None)) and len(literal) <= _MAX_LITERAL:
            out.append(f"state.{name} == {literal}")
        elif isinstance(value, list | tuple | dict | set):
            out.append(f"len(state.{name}) == {len(value)} and str(state.{name}) != {fresh.get(name, '')!r}")
        else:
            out.append(f"str(state.{name}) != {fresh.get(name, '')!r}")
    return tuple(out)
