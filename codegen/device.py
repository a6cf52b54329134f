"""Running generated scripts on a device, and reading the screen for the prompt and for repairs.

A ``DeviceSession`` runs each script on a **fresh connection**: with ``sim``/``sim:APP`` that is
a new simulator, so every attempt starts from the app's initial state; on a phone the app is
driven from wherever it is (the runtime reaches each element through the document's paths).
The screen is read from the same runtime the script used, just before it is released, so a
repair prompt shows the screen the failure left::

    session = DeviceSession("samples/music/music.yaml", "sim:music")
    session.screen()                      # ScreenInfo('songs_screen', ('songs_screen__song_list', ...))
    outcome = session.run(script)         # RunOutcome; session.failure_screen is the screen at the end

Model output is untrusted code (``docs/safety.md``): the scripts run under ``safety``, by default
a ``Safety`` that allows nothing sensitive and refuses the script's own ``allow()`` and ``# allow:``
lines; pass one made from the person's ``--allow``. ``confirm``, when given, is asked before each
run (``tapir gen --run``: ``tapir.cli.confirm.confirm_run``); a no raises ``RunDeclined``.

With ``isolated=True`` (``tapir gen --run``) each script runs in a child process under OS limits
(``tapir.dsl.isolation``): generated code is untrusted. The device is then connected in the
child (a connection opened here by ``screen()`` is closed first: the child must not drive a
simulator whose clock lives in this process), and the screen at the end comes back from it;
``last_app()`` is None, since the simulated app lived in the child.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tapir.codegen import language as L
from tapir.codegen.prompt import ScreenInfo

if TYPE_CHECKING:
    from tapir.dsl.safety import Safety

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


class _Watched:
    """The runtime handed to the interpreter; reads the screen when the interpreter releases it."""

    def __init__(self, runtime: Any, session: DeviceSession) -> None:
        self._runtime = runtime
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    def close(self) -> None:
        try:
            self._session.failure_screen = read_screen(self._runtime)
        finally:
            self._runtime.close()


class DeviceSession:
    def __init__(self, document: str | Path, device: str, *, adb_port: int | None = None,
                 max_actions: int = 50, timeout_s: float = 120.0, safety: Safety | None = None,
                 confirm: Callable[[str], bool] | None = None, isolated: bool = False) -> None:
        from tapir.dsl.safety import Safety
        from tapir.runtime.connect import Connection, load_run_document
        from tapir.runtime.sim.launch import check_sim_spec

        if device.startswith("sim"):
            check_sim_spec(device)
        self.document_path = Path(document)
        self.document = load_run_document(self.document_path)
        self.table = L.symbols(self.document)
        # one Safety for every run: an untrusted script cannot add to it, so runs do not leak permissions
        self.safety = safety if safety is not None else Safety(trust_script=False)
        self.confirm = confirm
        self.connection = Connection(device=device, document=self.document, adb_port=adb_port, safety=self.safety)
        self.max_actions = max_actions
        self.timeout_s = timeout_s
        self.isolated = isolated
        self._open: Any = None
        self._last: Any = None
        #: The screen when the last run ended (failed or not).
        self.failure_screen: ScreenInfo | None = None

    def _connect(self) -> Any:
        from tapir.runtime.connect import connect

        return connect(self.connection)

    def screen(self) -> ScreenInfo | None:
        """The screen now; the connection stays open for the next ``run``."""
        if self._open is None:
            self._open = self._connect()
        return read_screen(self._open)

    def run(self, script: str, *, filename: str = "<generated>", output: Any = None) -> L.RunOutcome:
        def factory() -> Any:
            rt, self._open = self._open, None
            if rt is None:
                rt = self._connect()
            self._last = rt
            return _Watched(rt, self)

        if self.confirm is not None and not self.confirm(script):
            raise RunDeclined("the generated script was not run: the answer was no")
        self.failure_screen = None
        if not self.isolated:
            return L.run(script, factory, self.table, filename=filename, max_actions=self.max_actions,
                         timeout_s=self.timeout_s, output=output, safety=self.safety)
        self.close()
        self._last = None

        def screen_at_end(result: Any) -> Any:  # in the child: _Watched.close has read it
            shown = self.failure_screen
            return None if shown is None else [shown.name, list(shown.elements), list(shown.texts)]

        outcome = L.run(script, factory, self.table, filename=filename, max_actions=self.max_actions,
                        timeout_s=self.timeout_s, output=output, safety=self.safety, isolated=True,
                        collect=screen_at_end)
        self.failure_screen = _screen_from(outcome.collected)
        return outcome

    def last_app(self) -> Any:
        """The simulated app of the last run (its ``state`` tells what the script did), or None."""
        rt = self._last
        sim = getattr(rt, "simulator", None) if rt is not None else None
        if sim is None:
            return None
        return sim.device.app(self.document.app.package)

    def close(self) -> None:
        rt, self._open = self._open, None
        if rt is not None:
            rt.close()

