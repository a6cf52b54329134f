"""Ctrl-C while a statement runs: stop it between two device commands, never inside one.

    interrupts = Interrupts(interpreter.interrupt)
    with interrupts.armed():                 # SIGINT now asks for a stop instead of raising
        interpreter.execute(module, source)  # -> Interrupted at its next step or UI call
    device = GuardedDevice(device, interrupts.check)   # ... or before its next device command

Python's default SIGINT handler raises ``KeyboardInterrupt`` wherever the main thread happens to
be, which may be inside an adb round trip (a swipe sent, its answer not read) or half-way
through the runtime's bookkeeping. While a statement runs, ``armed`` replaces it with a handler
that only records the request and asks the interpreter to stop (``Interpreter.interrupt``,
which lowers the step checkpoint: the next statement or UI call raises ``Interrupted`` with its
span). A UI call already under way is stopped by ``GuardedDevice`` before its next device
command, so a long navigation or list scan ends promptly and every command sent has completed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from tapir.core.errors import Interrupted

__all__ = ["INTERRUPT_REASON", "GuardedDevice", "Interrupts"]

#: The message of the ``Interrupted`` error a Ctrl-C gives.
INTERRUPT_REASON = "stopped by Ctrl-C"


class Interrupts:
    """Ctrl-C requests while something runs (see the module docstring)."""

    def __init__(self, on_request: Callable[[str], None] | None = None) -> None:
        self._on_request = on_request
        #: The reason of a stop asked for while armed (None: none asked).
        self.requested: str | None = None
        #: How many times Ctrl-C was pressed while armed (a second press changes nothing: the
        #: command under way still finishes).
        self.presses = 0
        self._armed = False

    def request(self, reason: str = INTERRUPT_REASON) -> None:
        """Ask what runs to stop (what the SIGINT handler calls; tests call it directly)."""
        self.presses += 1
        self.requested = reason
        if self._on_request is not None:
            self._on_request(reason)

    def check(self) -> None:
        """Raise ``Interrupted`` if a stop was asked for while armed (``GuardedDevice`` calls it
        before each device command)."""
        if self._armed and self.requested is not None:
            raise Interrupted(self.requested)

    @contextmanager
    def armed(self) -> Iterator[Interrupts]:
        """Catch Ctrl-C as a request for the duration of the block (the main thread only; in
        other threads the block runs with the handler as it is). Nested blocks (``:load`` runs
        statements inside a meta command) share the outermost one."""
        if self._armed:
            yield self
            return
        self.requested = None
        self.presses = 0
        install = threading.current_thread() is threading.main_thread()
        previous: Any = None
        if install:
            previous = signal.signal(signal.SIGINT, self._handle)
        self._armed = True
        try:
            yield self
        finally:
            self._armed = False
            self.requested = None
            if install:
                signal.signal(signal.SIGINT, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Only flags are set here: a handler runs between two bytecodes of the main thread, and
        # writing to a stream it may be writing to would raise a reentrancy error.
        self.request()


class GuardedDevice:
    """A ``Device`` whose every command first checks for a pending interrupt.

    Everything else (``serial``, attributes) is the wrapped device's. The check comes before the
    command and never during it, so a command is either sent and completed or not sent at all.
    """

    def __init__(self, device: Any, check: Callable[[], None]) -> None:
        self._device = device
        self._check = check

    @property
    def wrapped(self) -> Any:
        return self._device

    @property
    def serial(self) -> str:
        return str(self._device.serial)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._device, name)
        if not callable(attr) or name.startswith("_"):
            return attr
        check = self._check

        def command(*args: Any, **kwargs: Any) -> Any:
            check()
            return attr(*args, **kwargs)

        command.__name__ = name
        return command

    def __repr__(self) -> str:
        return f"GuardedDevice({self._device!r})"
