"""The simulated device seen from the runtime: its errors become Tapir errors.

The simulator (``tapir.sim``) knows nothing of Tapir, so its errors are its own
(``SimUsageError``, ``SimDeviceError``). Code that starts one for a person wraps the call::

    with simulator_errors():
        sim = start_sim(apps, adb_port=port)   # a bad port is a UsageError, no adb a DeviceError

and reaches what only a simulator offers (its clock, drift, an app's state) through one typed
protocol, ``SimulatorHooks``, never through the simulator's own objects::

    hooks = SimulatorControl(sim)
    hooks.set_drift("ids", package="org.tapir.music", seed=1)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

from tapir.core.errors import DeviceError, UsageError
from tapir.sim.errors import SimError, SimUsageError

__all__ = ["SimulatorControl", "SimulatorHooks", "simulator_errors"]


@contextmanager
def simulator_errors() -> Iterator[None]:
    """Turn ``SimUsageError`` into ``UsageError`` and any other ``SimError`` into ``DeviceError``,
    message and hint kept."""
    try:
        yield
    except SimUsageError as exc:
        raise UsageError(exc.message, hint=exc.hint) from exc
    except SimError as exc:
        raise DeviceError(exc.message, hint=exc.hint) from exc


@runtime_checkable
class SimulatorHooks(Protocol):
    """What a run may ask of a simulated phone beyond what a phone offers: its clock, a drifted
    next version of its apps, and the state of an app (which evaluation checks read). A runtime on
    a real phone has none (``DeviceRuntime.simulator`` is None)."""

    def advance_time(self, seconds: float) -> None:
        """Move the simulated clock on (``sleep()`` and waits on a simulator take no host time)."""
        ...

    def set_drift(self, kind: str, package: str, seed: int) -> list[str]:
        """Make ``package`` a drifted next version of itself (renamed ids, moved views...)."""
        ...

    def app_state(self, package: str) -> Any:
        """The simulated app itself, whose ``state`` evaluation checks read (None: not installed)."""
        ...

    def start_audit(self, package: str) -> list[Any] | None:
        """Start recording the touches ``package`` receives, from now; the list fills as the run goes
        (None when the app keeps no record of its touches)."""
        ...


class SimulatorControl:
    """``SimulatorHooks`` over a simulator this process started (``tapir.sim.launch.start_sim``)."""

    def __init__(self, handle: Any) -> None:
        #: The running simulator (``SimHandle``): serial, adb address, ``stop()``.
        self.handle = handle

    @property
    def device(self) -> Any:
        """The simulated phone itself: for tests that play the world around it (another app comes to
        the front, an app is uninstalled), never for a run, which uses the hooks above."""
        return self.handle.device

    def state(self) -> Any:
        """The simulator's process state (None once stopped)."""
        return self.handle.state()

    def advance_time(self, seconds: float) -> None:
        self.handle.device.advance_time(seconds)

    def set_drift(self, kind: str, package: str, seed: int) -> list[str]:
        return list(self.handle.device.set_drift(kind, package=package, seed=seed))

    def app_state(self, package: str) -> Any:
        try:
            return self.handle.device.app(package)
        except (KeyError, SimError):
            return None

    def start_audit(self, package: str) -> list[Any] | None:
        app = self.app_state(package)
        if app is None or not hasattr(app, "audit"):  # only the sample apps keep a touch audit
            return None
        touches: list[Any] = []
        app.audit = touches
        return touches

    def stop(self) -> None:
        self.handle.stop()
