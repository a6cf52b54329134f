"""Recording what a person does on the device itself: ``getevent`` read as it happens.

    watcher = DeviceInput.open(runtime.device, live)      # None (and why) when the device cannot
    watcher.start()                                       # each gesture -> live.gesture(...)
    watcher.stop()

A phone reports its touchscreen and keys through the kernel; ``adb shell getevent -lt`` prints
those events as they happen (``tapir.runtime.input_events`` turns them into taps, long taps,
swipes and keys). Each gesture is handed to the ``LiveSession``'s device thread with the moment
the finger landed, on this host's clock: the device's timestamps are mapped to the host's by the
smallest delay seen between an event and its arrival (events never arrive before they happen).
The session grounds the gesture on the last dump taken before that moment.

What this cannot know (docs/inspector.md, "Recording"): text typed with the on-screen keyboard
is no event of its own; the session sees a field's text change between dumps and writes
``set_text`` with what the field holds. Touches on the keyboard are touches like any other: the
session drops a low touch that changed nothing but the focused field's text. And a person who
acts faster than the device dumps (a phone takes a second or more per dump) gets steps grounded
on an older screen, marked in the script.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tapir.core.errors import DeviceError, TapirError
from tapir.inspector.live import LiveSession
from tapir.runtime.input_events import Gesture, GestureParser, touch_ranges

__all__ = ["DeviceInput"]


class DeviceInput:
    """See the module docstring."""

    def __init__(self, device: Any, live: LiveSession, parser: GestureParser) -> None:
        self.device = device
        self.live = live
        self.parser = parser
        self._stream: Any = None
        self._thread: threading.Thread | None = None
        #: host clock minus device clock, the smallest seen (None before the first event)
        self._offset: float | None = None
        #: Gestures read so far.
        self.gestures = 0

    @classmethod
    def open(cls, device: Any, live: LiveSession) -> tuple[DeviceInput | None, str]:
        """A watcher for ``device``, or None and why not (no streaming shell, no touchscreen)."""
        if not hasattr(device, "stream_shell"):
            return None, "this device connection cannot stream getevent"
        try:
            ranges = touch_ranges(device.shell("getevent -lp", idempotent=True))
            size = device.screen_size()
        except TapirError as exc:
            return None, f"getevent is not available: {exc.message}"
        if not ranges:
            return None, "getevent lists no touchscreen on this device"
        return cls(device, live, GestureParser(ranges, size)), ""

    def start(self) -> None:
        try:
            self._stream = self.device.stream_shell("getevent -lt")
        except DeviceError:
            raise
        self._thread = threading.Thread(target=self._read, name="tapir-getevent", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._stream is not None:
            self._stream.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _read(self) -> None:
        for line in self._stream.lines():
            arrived = time.monotonic()
            stamp = _stamp(line)
            if stamp is not None:
                delay = arrived - stamp
                self._offset = delay if self._offset is None else min(self._offset, delay)
            for g in self.parser.feed(line):
                self._hand_over(g, arrived)

    def _hand_over(self, g: Gesture, arrived: float) -> None:
        start = g.start + self._offset if self._offset is not None and g.start else arrived - g.duration_s
        self.gestures += 1
        self.live.pending_gestures += 1
        self.live.submit(lambda: self.live.gesture(g, arrived, start))


def _stamp(line: str) -> float | None:
    """The timestamp of a ``getevent -t`` line (``[   74328.135497] ...``)."""
    if line.startswith("["):
        end = line.find("]")
        try:
            return float(line[1:end])
        except ValueError:
            return None
    return None
