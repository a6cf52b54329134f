"""Running generated scripts on a device, and reading the screen for the prompt and for repairs.

A ``DeviceSession`` runs each script on a **fresh connection**: with ``sim``/``sim:APP`` that is
a new simulator, so every attempt starts from the app's initial state; on a phone the app is
driven from wherever it is (the runtime reaches each element through the document's paths).
The screen is read from the same runtime the script used, just before it is released, so a
repair prompt shows the screen the failure left::

    session = DeviceSession("samples/music/music.yaml", "sim:music")
    session.screen()                      # ScreenInfo('songs_screen', ('songs_screen__song_list', ...))
    outcome = session.run(script)         # RunOutcome; session.failure_screen is the screen at the end
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tapir.codegen import language as L
from tapir.codegen.prompt import ScreenInfo

__all__ = ["DeviceSession", "read_screen"]


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
                 max_actions: int = 50, timeout_s: float = 120.0) -> None:
        from tapir.runtime.connect import Connection, load_run_document
        from tapir.runtime.sim.launch import check_sim_spec

        if device.startswith("sim"):
            check_sim_spec(device)
        self.document_path = Path(document)
        self.document = load_run_document(self.document_path)
        self.table = L.symbols(self.document)
        self.connection = Connection(device=device, document=self.document, adb_port=adb_port)
        self.max_actions = max_actions
        self.timeout_s = timeout_s
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

        self.failure_screen = None
        return L.run(script, factory, self.table, filename=filename, max_actions=self.max_actions,
                     timeout_s=self.timeout_s, output=output)

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

