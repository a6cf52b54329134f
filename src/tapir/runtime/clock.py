"""The clock the runtime's waits and sleeps pass: the host's, or a simulator's.

On a phone time passes by itself. The simulator keeps deterministic time (``sim/toolkit``:
an app's clock moves only with inputs and ``advance``), so a wait there *advances* the simulated
device's clock instead of sleeping: ``sleep(30)`` returns at once, and the app sees 30 seconds
pass (a timer runs down, a spinner finishes). The seconds so passed are counted (``simulated``)
so the interpreter can charge them to the script's time budget.

    clock = SimulatedClock(sim.device.advance_time)  # a simulator started by this run
    clock = DeviceShellClock(device.shell)           # a device by serial: a phone, or a `tapir sim`
    clock = HostClock()                              # no device: the host sleeps
    deadline = clock.now() + 10
    while clock.now() < deadline: clock.sleep(0.25)

A device reached by its serial may be a phone or a simulator another process serves; the runtime
cannot tell, and need not: ``DeviceShellClock`` sleeps *on the device* (``adb shell sleep N``),
which a phone does in real time and the simulator answers by letting simulated time pass at
once, and counts as simulated whatever the host did not wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["DeviceShellClock", "HostClock", "SimulatedClock", "WaitClock"]


class WaitClock(Protocol):
    """What waits need: the time, a pause, and how much of the time was simulated."""

    #: Seconds passed by ``sleep`` without the host's clock moving.
    simulated: float
    #: The smallest step of time that can change what the device shows (0: any).
    resolution: float

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class HostClock:
    """The host's monotonic clock; ``sleep`` really sleeps."""

    simulated = 0.0
    resolution = 0.0

    def __init__(self, now: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self._now = now
        self._sleep = sleep

    def now(self) -> float:
        return self._now()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._sleep(seconds)


class SimulatedClock:
    """A simulator's clock: ``sleep`` calls ``advance(seconds)`` (the device's time moves on) and
    returns at once; ``now`` is the seconds so advanced, so a wait on the simulator looks at the
    screen the same number of times however fast the host is (the host's time still counts
    against the budget, through the interpreter's own clock). The simulated apps keep time in
    whole seconds (``resolution``), so a wait looks once a simulated second."""

    def __init__(self, advance: Callable[[float], None], resolution: float = 1.0) -> None:
        self._advance = advance
        self.simulated = 0.0
        self.resolution = resolution

    def now(self) -> float:
        return self.simulated

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._advance(seconds)
            self.simulated += seconds


class DeviceShellClock:
    """Sleeps on the device with its shell's ``sleep`` (see the module docstring), in pieces of at
    most ``MAX_PIECE_S`` so that no shell command outlives the transport's timeout.

    Once a ``sleep`` comes back in less than half its time the device keeps simulated time, which
    moves only when it is told to: from then on ``now`` stops counting the host's time, as
    ``SimulatedClock`` does. Otherwise a busy host (seconds a dump) used up a 30 s wait while
    the simulator's apps saw a few seconds pass (soak: a 40 s timer never finished)."""

    MAX_PIECE_S = 5.0
    resolution = 0.0

    def __init__(self, shell: Callable[[str], object], now: Callable[[], float] = time.monotonic) -> None:
        self._shell = shell
        self._now = now
        self.simulated = 0.0
        #: The host's time when the device was found to simulate time (None: not found so).
        self._host_stopped: float | None = None

    def now(self) -> float:
        host = self._now() if self._host_stopped is None else self._host_stopped
        return host + self.simulated

    def sleep(self, seconds: float) -> None:
        left = seconds
        while left > 0:
            piece = min(left, self.MAX_PIECE_S)
            started = self._now()
            self._shell(f"sleep {piece:.3f}")
            took = self._now() - started
            if self._host_stopped is None and took < piece / 2:
                self._host_stopped = started
            if self._host_stopped is not None:
                self.simulated += piece  # all of it passed on the device, none on the host's count
            else:
                # a phone slept (nothing simulated), or came back early once in a while
                self.simulated += max(0.0, piece - took)
            left -= piece
