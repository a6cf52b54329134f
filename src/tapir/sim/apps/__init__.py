"""The sample apps of the simulated device, by name.

``get_app("music")`` gives a fresh ``MusicApp``; ``get_app("replay:<folder>")`` serves a recorded
DroidBot session from ``<folder>`` (with ``states/`` and ``events/``) as a ``ReplayApp``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tapir.sim.app import SimApp
from tapir.sim.apps.clock import ClockApp
from tapir.sim.apps.contacts import ContactsApp
from tapir.sim.apps.music import MusicApp
from tapir.sim.apps.notes import NotesApp
from tapir.sim.apps.weather import WeatherApp
from tapir.sim.errors import SimUsageError

_FACTORIES: dict[str, Callable[[], SimApp]] = {
    "music": MusicApp,
    "notes": NotesApp,
    "clock": ClockApp,
    "contacts": ContactsApp,
    "weather": WeatherApp,
}

#: Names ``get_app`` knows, besides ``replay:<folder>``.
APP_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def get_app(name: str) -> SimApp:
    """A fresh app by name (``music``, ``notes``, ``clock``, ``contacts``, ``weather``, or ``replay:<folder>``)."""
    if name.startswith("replay:"):
        from tapir.sim.replay import ReplayApp

        return ReplayApp(Path(name.removeprefix("replay:")))
    factory = _FACTORIES.get(name.strip().lower())
    if factory is None:
        raise SimUsageError(
            f"no simulated app named {name!r}",
            hint=f"known apps: {', '.join(APP_NAMES)}, or replay:<folder of a DroidBot recording>",
        )
    return factory()


__all__ = ["APP_NAMES", "ClockApp", "ContactsApp", "MusicApp", "NotesApp", "WeatherApp", "get_app"]
