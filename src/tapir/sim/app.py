"""What the simulated device needs from a simulated app.

The device side (ADB transport, shell commands, the launcher, the foreground app) lives in the
simulator; an app only answers for its own screens. Sample apps built with the UI toolkit and
replayed DroidBot recordings both implement ``SimApp``. Coordinates are screen pixels.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

SCREEN_WIDTH = 1080
SCREEN_HEIGHT = 2400


@runtime_checkable
class SimApp(Protocol):
    """A simulated app: deterministic, resettable, its state inspectable by tests."""

    # Read-only members: the sample apps name themselves in class variables, a replay in its
    # instance; either satisfies a property.
    @property
    def package(self) -> str:
        """Android package name, e.g. ``org.tapir.music``."""
        ...

    @property
    def label(self) -> str:
        """Human name shown on the launcher."""
        ...

    @property
    def activity(self) -> str:
        """The fully-qualified activity of the current screen (for ``dumpsys window``)."""
        ...

    @property
    def screen_size(self) -> tuple[int, int]:
        """Width and height in pixels."""
        ...

    def reset(self) -> None:
        """Return to the freshly installed state: first screen, default data, empty back stack."""

    def launch(self) -> None:
        """Bring the app to its launch screen (``am start`` / ``monkey -p``); keeps data."""

    def dump_xml(self) -> str:
        """The current screen as ``uiautomator dump`` writes it (``<?xml ...><hierarchy ...>``)."""
        ...

    def screenshot_png(self) -> bytes:
        """A PNG of the current screen (a wireframe is fine)."""
        ...

    def tap(self, x: int, y: int) -> None: ...

    def long_tap(self, x: int, y: int) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None: ...

    def input_text(self, text: str) -> None:
        """Type into the focused input (``input text``, already unescaped)."""

    def key(self, keycode: str) -> bool:
        """Handle a key such as ``KEYCODE_BACK`` or ``KEYCODE_ENTER``.

        Returns False when the app does not consume it, e.g. BACK on its first screen, which
        sends the device to the launcher.
        """
        ...
