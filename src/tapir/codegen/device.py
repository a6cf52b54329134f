"""Running generated scripts on a device, and reading the screen for the prompt and for repairs.

A ``DeviceSession`` runs each script through a ``tapir.run.Runner`` on a **fresh connection**:
with ``sim``/``sim:APP`` that is a new simulator, so every attempt starts from the app's initial
state; on a phone the app is driven from wherever it is (the runtime reaches each element through
the document's paths). The screen is read from the same runtime the script used, just before it
is released (the run's ``finish``), so a repair prompt shows the screen the failure left::

    session = DeviceSession("samples/music/music.yaml", "sim:music")
    session.screen()                      # ScreenInfo('songs_screen', ('songs_screen__song_list', ...))
    outcome = session.run(script)         # RunOutcome; session.failure_screen is the screen at the end

``screen()`` opens a ``Runner.session()``; the next script runs in it (on the screen it showed),
and the session is closed once a script has used its device.

Model output is untrusted code (``docs/safety.md``): the scripts run under ``safety``, by default
a ``Safety`` that allows nothing sensitive and refuses the script's own ``allow()`` and ``# allow:``
lines; pass one made from the person's ``--allow``. ``confirm``, when given, is asked before each
run (``tapir gen --run``: ``tapir.cli.confirm.confirm_run``); a no raises ``RunDeclined``.

With ``isolated=True`` (``tapir gen --run``) each script runs in a child process under OS limits
(``Runner.run``, ``tapir.dsl.isolation``): generated code is untrusted. The device is then
connected in the child (a session opened here by ``screen()`` is closed first: the child must not
drive a simulator whose clock lives in this process), and the screen at the end comes back from
it; ``last_app()`` is None, since the simulated app lived in the child.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tapir.codegen import language as L
from tapir.codegen.prompt import ScreenInfo

if TYPE_CHECKING:
    from tapir.core.safety import Safety
    from tapir.run import Session
    from tapir.runtime.simulator import SimulatorHooks

__all__ = ["DeviceSession", "RunDeclined", "read_screen"]


class RunDeclined(L.TapirError):
    """The person said no to running a generated script: nothing ran."""


def read_screen(runtime: Any) -> ScreenInfo | None:
    """The screen a ``DeviceRuntime`` shows: its document name and the elements grounded on it."""
    try:
        obs = runtime.screen.observe()  # DeviceRuntime keeps its screen in a ScreenCache
    except L.TapirError:
        return None
    doc = runtime.document
    screen = doc.screen(obs.screen) if obs.screen else None
    if screen is None:
        texts = [n.text for n in obs.tree.nodes if getattr(n, "text", "")]
        return ScreenInfo(None, (), tuple(dict.fromkeys(texts))[:12])
    found = []
    for e in screen.elements:
        if e.item_of is not None:
            continue
        try:
            if runtime.grounder.ground(e.name, obs.tree) is not None:
                found.append(e.name)
        except Exception:  # grounding one element must not lose the whole screen description
            continue
    return ScreenInfo(screen.name, tuple(found))


def _screen_from(data: Any) -> ScreenInfo | None:
    """The ``ScreenInfo`` a child process sent as ``[name, elements, texts]`` (checked, not trusted)."""
    if not (isinstance(data, list) and len(data) == 3):
        return None
    name, elements, texts = data
    if not (name is None or isinstance(name, str)) or not isinstance(elements, list) or not isinstance(texts, list):
        return None
    return ScreenInfo(name, tuple(str(e) for e in elements), tuple(str(t) for t in texts))


def _screen_data(shown: ScreenInfo | None) -> list[Any] | None:
    """``shown`` as JSON, to cross the process boundary (``_screen_from`` reads it back)."""
    return None if shown is None else [shown.name, list(shown.elements), list(shown.texts)]


class DeviceSession:
    def __init__(self, document: str | Path, device: str, *, adb_port: int | None = None,
                 max_actions: int = 50, timeout_s: float = 120.0, safety: Safety | None = None,
                 confirm: Callable[[str], bool] | None = None, isolated: bool = False) -> None:
        from tapir.core.safety import Safety

        self.document_path = Path(document)
        self.document = L.load_document(self.document_path)
        self.table = L.symbols(self.document)
        # one Safety for every run: an untrusted script cannot add to it, so runs do not leak permissions
        self.safety = safety if safety is not None else Safety(trust_script=False)
        self.confirm = confirm
        self.max_actions = max_actions
        self.timeout_s = timeout_s
        self.isolated = isolated
        #: Runs the scripts (``tapir.run.Runner``); ``print()`` goes to the ``output`` of the current ``run``.
        self.runner = L.runner(self.document, device, adb_port=adb_port, max_actions=max_actions,
                               timeout_s=timeout_s, safety=self.safety, isolated=isolated, output=self._print)
        self._output: Callable[[str], None] | None = None
        self._held: ExitStack | None = None
        self._session: Session | None = None
        #: The simulator of the last run (``SimulatorHooks``; None: a phone, or the run was in a child).
        self._last: SimulatorHooks | None = None
        #: The screen when the last run ended (failed or not).
        self.failure_screen: ScreenInfo | None = None

    def _print(self, line: str) -> None:
        if self._output is not None:
            self._output(line)

    def _open(self) -> Session:
        """The session the next script runs in (``screen()`` connects its device)."""
        if self._session is None:
            held = ExitStack()
            self._session = held.enter_context(self.runner.session())
            self._held = held
        return self._session

    def screen(self) -> ScreenInfo | None:
        """The screen now; the connection stays open for the next ``run``."""
        return read_screen(self._open().open())

    def run(self, script: str, *, filename: str = "<generated>", output: Any = None) -> L.RunOutcome:
        used: list[SimulatorHooks | None] = []

        def screen_at_end(runtime: Any, result: Any) -> Any:  # where the runtime lives, before its release
            used.append(runtime.simulator)
            return _screen_data(read_screen(runtime))

        if self.confirm is not None and not self.confirm(script):
            raise RunDeclined("the generated script was not run: the answer was no")
        self.failure_screen = None
        self._output = output
        try:
            if self.isolated:
                self.close()
                self._last = None
                outcome = L.run(script, self.runner, self.table, filename=filename, finish=screen_at_end)
            else:
                outcome = L.run(script, self._open(), self.table, filename=filename, finish=screen_at_end)
        finally:
            self._output = None
        if used:  # the script used the device (here, not in a child): the next one starts afresh
            self._last = used[0]
            self.close()
        self.failure_screen = _screen_from(outcome.collected)
        return outcome

    def last_app(self) -> Any:
        """The simulated app of the last run (its ``state`` tells what the script did), or None."""
        return self._last.app_state(self.document.app.package) if self._last is not None else None

    def close(self) -> None:
        held, self._held, self._session = self._held, None, None
        if held is not None:
            held.close()
