"""The simulator's errors: a phone knows nothing of Tapir, and neither does its simulation.

Nothing under ``tapir.sim`` imports the rest of Tapir (``tests/test_layers.py`` checks
it): the simulator offers what a phone offers, through adb. Its errors carry a message and an
optional hint, as Tapir's do; whoever starts a simulator for a person turns them into Tapir
errors (``tapir.runtime.simulator.simulator_errors``)::

    try:
        start_sim(apps, port=-1)
    except SimUsageError as exc:
        print(exc.message, exc.hint)
"""

from __future__ import annotations


class SimError(Exception):
    """Something the simulator cannot do; ``message`` says what, ``hint`` what to do about it."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class SimUsageError(SimError, ValueError):
    """A wrong request: an unknown app, a bad port, a malformed fault option."""


class SimDeviceError(SimError):
    """The simulator could not be started or attached (no adb binary, adb refused it)."""
