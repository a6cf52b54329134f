"""The REPL's device: connected once (``tapir.run.Runner.connect``), kept for the whole session,
bound to the session's document.

    link = DeviceLink("sim:music", document, interrupts, calls)
    factory = link.factory()          # what the interpreter calls on the first UI call
    link.runtime()                    # the DeviceRuntime (connecting now if need be): :screen, :tree
    link.use_document(other)          # same device, another document (:document)
    link.close()                      # at exit: the simulator, if one was started, stops

The interpreter keeps the runtime it was given for the rest of the session, so it is given a
``LinkedRuntime`` that forwards every call to the link's current runtime: switching documents
rebinds the device without the interpreter noticing. Every device command passes through a
``GuardedDevice`` (Ctrl-C stops a statement between two commands), and every trace record goes
to ``RecentCalls`` (the last calls, for ``:trace``; a ``--trace`` file too when one was asked for).

The confirmation hook: ``DeviceLink.ask`` (backed by ``confirm``) is how the runtime asks the
person at the keyboard a yes/no question: the guards (``docs/safety.md``) ask it before a
sensitive tap the session's permissions do not cover. Piped input has nobody to ask, and such a
tap is refused as in ``tapir run``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import DeviceError, UsageError
from tapir.core.safety import Safety
from tapir.dsl.runtime_api import RuntimeFactory, UIRuntime
from tapir.repl.interrupts import GuardedDevice, Interrupts
from tapir.run import Runner, RunOptions
from tapir.runtime.screen_actions import screen_only_document
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.trace import JsonLinesTrace, TraceSink

__all__ = ["Confirm", "DeviceLink", "LinkedRuntime", "RecentCalls"]

#: Asks the person a yes/no question and returns the answer (False when nobody can answer).
Confirm = Callable[[str], bool]


class RecentCalls:
    """A trace sink that keeps the last ``size`` records, stamped with the input they came from.

    The runtime's trace lines name the statement by its line in the source it was given; in a
    REPL each input is its own source, so the record is stamped here with the input's number,
    its file name (``<repl>`` or a loaded script) and the statement's text. A ``--trace`` file,
    when asked for, receives the same stamped records.
    """

    def __init__(self, size: int = 200, file: TraceSink | None = None) -> None:
        self.records: deque[dict[str, Any]] = deque(maxlen=size)
        self._file = file
        self._lines: list[str] = []
        self._origin = "<repl>"
        self._input = 0

    def begin(self, number: int, origin: str, source: str) -> None:
        """What runs from now on: input ``number`` of the session, from ``origin``."""
        self._input, self._origin, self._lines = number, origin, source.splitlines()

    def write(self, record: dict[str, Any]) -> None:
        if record.get("event") in ("action", "navigation", "scroll", "repeat"):
            record = dict(record, input=self._input, origin=self._origin)
            line = record.get("line")
            if record.get("statement") is None and isinstance(line, int) and 1 <= line <= len(self._lines):
                record["statement"] = self._lines[line - 1].strip()
        self.records.append(record)
        if self._file is not None:
            self._file.write(record)

    def close(self) -> None:
        # The runtime closes its sink when it is released; the records stay for :trace.
        if self._file is not None:
            self._file.close()
            self._file = None

    def last(self, n: int) -> list[dict[str, Any]]:
        """The last ``n`` call records (``action``, ``navigation``, ``scroll``, ``repeat``)."""
        calls = [r for r in self.records if r.get("event") in ("action", "navigation", "scroll", "repeat")]
        return calls[-n:] if n > 0 else []


class DeviceLink:
    """The session's device runtime, made once (see the module docstring)."""

    def __init__(self, device: str | None, document: AppDocument | None, interrupts: Interrupts,
                 calls: RecentCalls, *, confirm: Confirm | None = None, adb_port: int | None = None,
                 safety: Safety | None = None) -> None:
        self.device = device
        #: For ``sim`` devices: the adb server to attach to (None: a private one).
        self.adb_port = adb_port
        self.document = document
        self.interrupts = interrupts
        self.calls = calls
        #: Asks the person a yes/no question (the REPL's prompt; None: nobody to ask, answer no).
        self.confirm = confirm
        #: The session's permissions (shared with the interpreter: ``allow()`` typed in the session
        #: reaches the guards); the guards ask through ``ask`` when there is someone to ask.
        self.safety = safety if safety is not None else Safety()
        if confirm is not None and self.safety.confirm is None:
            self.safety.confirm = self.ask
        self._runtime: DeviceRuntime | None = None

    def ask(self, question: str) -> bool:
        """Ask the person ``question``; False when nobody can answer (piped input)."""
        return bool(self.confirm(question)) if self.confirm is not None else False

    @property
    def connected(self) -> bool:
        return self._runtime is not None

    @property
    def serial(self) -> str | None:
        return self._runtime.device.serial if self._runtime is not None else None

    def runtime(self) -> DeviceRuntime:
        """The device runtime, connecting now if this is the first time."""
        if self._runtime is None:
            self._runtime = self._connect()
        return self._runtime

    def factory(self) -> RuntimeFactory:
        """The interpreter's runtime factory: connects, then hands out the forwarding runtime."""

        def make() -> UIRuntime:
            self.runtime()
            return LinkedRuntime(self)

        return make

    def _connect(self) -> DeviceRuntime:
        if self.device is None:
            raise DeviceError("this session has no device",
                              hint="start the REPL with --device SERIAL, --device sim or --device sim:APP")
        # without a document, screen-level actions (tap_text, swipe, press_key...) still work; a
        # :document loaded later rebinds the same device
        document = self.document if self.document is not None else screen_only_document()
        # THE CONFIRMATION HOOK: the guards ask before a sensitive action through ``self.safety.confirm``,
        # which is ``self.ask`` when the session has someone to ask (docs/safety.md)
        runtime = self.runner(document).connect()
        runtime.device = GuardedDevice(runtime.device, self.interrupts.check)
        return runtime

    def runner(self, document: AppDocument) -> Runner:
        """The ``Runner`` of this session's device under ``document``: its guards read the session's
        permissions, its trace records go to ``calls``."""
        return Runner(document, self.device, RunOptions(safety=self.safety, trace_sink=self.calls,
                                                        adb_port=self.adb_port))

    def use_document(self, document: AppDocument) -> None:
        """Bind the session to another document; a connected device stays up."""
        if self._runtime is not None:
            self._runtime = self.runner(document).rebind(self._runtime)
        self.document = document

    def current_screen(self) -> str | None:
        """The document screen of the last dump, if there was one (sends no device command)."""
        current = self._runtime.screen.current if self._runtime is not None else None
        return current.screen if current is not None else None

    def forget_screen(self) -> None:
        """After a statement was stopped: the next call looks at the device afresh."""
        if self._runtime is not None:
            self._runtime.screen.forget()

    def close(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.close()


class LinkedRuntime:
    """The runtime the interpreter holds: every attribute is the link's current runtime's."""

    def __init__(self, link: DeviceLink) -> None:
        self._link = link

    def __getattr__(self, name: str) -> Any:
        return getattr(self._link.runtime(), name)

    def close(self) -> None:
        self._link.close()


def open_trace_file(path: str | None) -> TraceSink | None:
    """The ``--trace`` file of a session (``UsageError`` in words when it cannot be written)."""
    if not path:
        return None
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target} is a directory", setting="trace")
    try:
        return JsonLinesTrace(target)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}", setting="trace") from None
