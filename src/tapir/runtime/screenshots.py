"""Screenshots of a run: one after each call that sent input to the device, and one at the start.

Off by default (a screenshot costs a ``screencap`` round trip: about 0.1 s on the simulator,
half a second or more on a phone); ``tapir test --html`` turns it on, ``tapir run --screenshots
DIR`` too. Each trace line of a call that changed the device, or failed, names its file::

    shots = StepScreenshots(Path("run-shots"))
    runtime = DeviceRuntime(device, document, grounder, trace=sink, screenshots=shots)
    # trace: {"event": "action", "seq": 3, "call": "tap", ..., "screenshot": "003-tap.png"}

A screenshot that cannot be taken (the device went away, a phone refuses ``screencap`` on a
secure screen) is left out and counted in ``failed``: it never fails the run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from tapir.core.errors import TapirError

__all__ = ["ScreenshotSource", "StepScreenshots"]


class ScreenshotSource(Protocol):
    def screenshot_png(self) -> bytes: ...


class StepScreenshots:
    """Writes PNG screenshots into ``folder`` (made when the first one is taken)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        #: Files written, in order.
        self.taken: list[Path] = []
        #: Screenshots that could not be taken.
        self.failed = 0

    def take(self, device: ScreenshotSource, name: str) -> str | None:
        """Capture the screen as ``<name>.png``; the file name (relative to ``folder``), or None."""
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "screen"
        try:
            png = device.screenshot_png()
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{safe}.png"
            path.write_bytes(png)
        except (TapirError, OSError):
            self.failed += 1
            return None
        self.taken.append(path)
        return path.name
