"""The simulated device seen from the runtime: its errors become Tapir errors.

The simulator (``tapir.runtime.sim``) knows nothing of Tapir, so its errors are its own
(``SimUsageError``, ``SimDeviceError``). Code that starts one for a person wraps the call::

    with simulator_errors():
        sim = start_sim(apps, adb_port=port)   # a bad port is a UsageError, no adb a DeviceError
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tapir.dsl.errors import DeviceError, UsageError
from tapir.runtime.sim.errors import SimError, SimUsageError


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
