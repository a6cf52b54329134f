"""A person's hands on the simulated phone, and ``getevent``, which reports them.

On a phone, what a finger does reaches apps through the kernel's input devices, and
``adb shell getevent -lt`` prints those events as they happen; ``input tap`` (what adb clients
send) is injected above the kernel and never shows there. The simulator keeps that split:
``SimDevice.hands`` touches the screen as a person does: the touch is reported to every running
``getevent`` and then dispatched to the foreground app, while ``input`` commands are dispatched
without a report::

    sim.device.hands.tap(540, 1200)           # getevent: DOWN, position, UP; the app gets a tap
    sim.device.hands.swipe(540, 1800, 540, 600)
    sim.device.hands.key("BACK")              # the navigation bar's BACK key
    sim.device.hands.type("milk")             # the soft keyboard commits text (no touch reported)

The touchscreen's axes run 0..4095 whatever the display, as on phones whose controller has its
own resolution, so a reader must scale by ``getevent -lp``'s maxima (``ABS_MT_POSITION_X``...).
Timestamps are seconds since the device booted, and a touch takes the time a finger takes (a
tap is held about 60 ms, a long press 800 ms, a swipe as long as asked): its first events are
reported when the finger lands and the rest when it lifts, so a reader sees them arrive as it
would on a phone.

Typing is reported by nothing here: the simulated phone has no keyboard window to touch, so
``type`` commits text as an input method does (as voice input or a hardware keyboard would on a
phone). A reader sees the field's text change on the next dump.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tapir.sim.app import SimApp

__all__ = ["TOUCH_MAX", "EventHub", "Hands", "getevent_devices"]

#: The touchscreen's axis maximum (both axes), independent of the display's pixels.
TOUCH_MAX = 4095
TOUCHSCREEN = "/dev/input/event2"
NAVIGATION = "/dev/input/event1"
_KEYS = {"BACK": ("KEY_BACK", "KEYCODE_BACK"), "HOME": ("KEY_HOMEPAGE", "KEYCODE_HOME"),
         "APP_SWITCH": ("KEY_APPSELECT", "KEYCODE_APP_SWITCH"), "ENTER": ("KEY_ENTER", "KEYCODE_ENTER")}
_TAP_HOLD_S = 0.06
_LONG_HOLD_S = 0.8
_MOVE_EVERY_S = 0.016


def getevent_devices(width: int, height: int, *, labels: bool) -> str:
    """``getevent -p`` (``-lp`` with ``labels``): the input devices and their axes."""
    if labels:
        x = f"ABS_MT_POSITION_X     : value 0, min 0, max {TOUCH_MAX}, fuzz 0, flat 0, resolution 0"
        y = f"ABS_MT_POSITION_Y     : value 0, min 0, max {TOUCH_MAX}, fuzz 0, flat 0, resolution 0"
        return (f"add device 1: {NAVIGATION}\n  name:     \"sim_navigation\"\n  events:\n"
                "    KEY (0001): KEY_HOMEPAGE          KEY_BACK              KEY_APPSELECT\n"
                "  input props:\n    <none>\n"
                f"add device 2: {TOUCHSCREEN}\n  name:     \"sim_touchscreen\"\n  events:\n"
                "    KEY (0001): BTN_TOUCH\n"
                "    ABS (0003): ABS_MT_SLOT           : value 0, min 0, max 9, fuzz 0, flat 0, resolution 0\n"
                f"                {x}\n                {y}\n"
                "                ABS_MT_TRACKING_ID    : value 0, min 0, max 65535, fuzz 0, flat 0, resolution 0\n"
                "  input props:\n    INPUT_PROP_DIRECT\n")
    return (f"add device 1: {NAVIGATION}\n  name:     \"sim_navigation\"\n  events:\n"
            "    KEY (0001): 00ac  009e  0244\n  input props:\n    <none>\n"
            f"add device 2: {TOUCHSCREEN}\n  name:     \"sim_touchscreen\"\n  events:\n"
            "    KEY (0001): 014a\n"
            "    ABS (0003): 002f  : value 0, min 0, max 9, fuzz 0, flat 0, resolution 0\n"
            f"                0035  : value 0, min 0, max {TOUCH_MAX}, fuzz 0, flat 0, resolution 0\n"
            f"                0036  : value 0, min 0, max {TOUCH_MAX}, fuzz 0, flat 0, resolution 0\n"
            "                0039  : value 0, min 0, max 65535, fuzz 0, flat 0, resolution 0\n"
            "  input props:\n    INPUT_PROP_DIRECT\n")


def getevent_header() -> str:
    """What ``getevent`` prints when it starts: the devices it opened."""
    return (f"add device 1: {NAVIGATION}\n  name:     \"sim_navigation\"\n"
            f"add device 2: {TOUCHSCREEN}\n  name:     \"sim_touchscreen\"\n")


class EventHub:
    """The kernel's side: every running ``getevent`` gets every event line, stamped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers: list[queue.Queue[str]] = []
        self._boot = time.monotonic() - 3600.0  # a phone that has been up for an hour
        self._last = 0.0

    def subscribe(self) -> queue.Queue[str]:
        q: queue.Queue[str] = queue.Queue()
        with self._lock:
            self._readers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[str]) -> None:
        with self._lock:
            if q in self._readers:
                self._readers.remove(q)

    @property
    def readers(self) -> int:
        with self._lock:
            return len(self._readers)

    def now(self) -> float:
        """Seconds since boot (never before the last event stamped)."""
        with self._lock:
            return max(time.monotonic() - self._boot, self._last)

    def emit(self, events: list[tuple[float, str, str, str, str]]) -> None:
        """``(uptime, device, type, code, value)`` events, as ``getevent -lt`` prints them."""
        lines = [f"[{t:14.6f}] {dev}: {kind:<12} {code:<20} {value}\n" for t, dev, kind, code, value in events]
        with self._lock:
            if events:
                self._last = max(self._last, events[-1][0])
            for q in self._readers:
                for line in lines:
                    q.put(line)


class Hands:
    """A person touching the simulated phone (see the module docstring).

    ``lock`` is the device's; ``foreground`` gives the app in front and ``press_key`` delivers a
    key as the system does (BACK the app does not consume goes home)."""

    def __init__(self, hub: EventHub, lock: threading.RLock, foreground: Callable[[], SimApp],
                 press_key: Callable[[str], None], screen_size: tuple[int, int]) -> None:
        self.hub = hub
        self._lock = lock
        self._foreground = foreground
        self._press_key = press_key
        self.width, self.height = screen_size
        self._tracking = 0x3A0

    # -- what the person does ----------------------------------------------------------------

    def tap(self, x: int, y: int) -> None:
        self._touch([(x, y)], _TAP_HOLD_S)
        with self._lock:
            self._foreground().tap(x, y)

    def long_tap(self, x: int, y: int) -> None:
        self._touch([(x, y)], _LONG_HOLD_S)
        with self._lock:
            self._foreground().long_tap(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        steps = max(2, round(duration_ms / 1000 / _MOVE_EVERY_S))
        points = [(round(x1 + (x2 - x1) * i / steps), round(y1 + (y2 - y1) * i / steps)) for i in range(steps + 1)]
        self._touch(points, duration_ms / 1000)
        with self._lock:
            self._foreground().swipe(x1, y1, x2, y2, duration_ms)

    def key(self, name: str) -> None:
        """A key of the navigation bar: ``BACK``, ``HOME``, ``APP_SWITCH`` (or ``ENTER``)."""
        label, keycode = _KEYS[name.upper().removeprefix("KEYCODE_")]
        t = self.hub.now()
        self.hub.emit([(t, NAVIGATION, "EV_KEY", label, "DOWN"), (t, NAVIGATION, "EV_SYN", "SYN_REPORT", "00000000")])
        time.sleep(0.05)
        t = self.hub.now()
        self.hub.emit([(t, NAVIGATION, "EV_KEY", label, "UP"), (t, NAVIGATION, "EV_SYN", "SYN_REPORT", "00000000")])
        self._press_key(keycode)

    def type(self, text: str) -> None:
        """The input method commits ``text`` into the focused field (nothing is reported)."""
        with self._lock:
            self._foreground().input_text(text)

    def erase(self, count: int) -> None:
        """``count`` presses of the keyboard's delete key (nothing is reported)."""
        with self._lock:
            for _ in range(count):
                self._foreground().key("KEYCODE_DEL")

    # -- the events --------------------------------------------------------------------------

    def _axis(self, x: int, y: int) -> tuple[str, str]:
        ax = round(x * TOUCH_MAX / max(1, self.width - 1))
        ay = round(y * TOUCH_MAX / max(1, self.height - 1))
        return f"{min(ax, TOUCH_MAX):08x}", f"{min(ay, TOUCH_MAX):08x}"

    def _touch(self, points: list[tuple[int, int]], hold_s: float) -> None:
        self._tracking += 1
        t = self.hub.now()
        dev, syn = TOUCHSCREEN, ("EV_SYN", "SYN_REPORT", "00000000")
        x, y = self._axis(*points[0])
        self.hub.emit([(t, dev, "EV_ABS", "ABS_MT_TRACKING_ID", f"{self._tracking:08x}"),
                       (t, dev, "EV_ABS", "ABS_MT_POSITION_X", x), (t, dev, "EV_ABS", "ABS_MT_POSITION_Y", y),
                       (t, dev, "EV_KEY", "BTN_TOUCH", "DOWN"), (t, dev, *syn)])
        time.sleep(hold_s)
        hold_s = self.hub.now() - t
        events: list[tuple[float, str, str, str, str]] = []
        moves = points[1:]
        for i, (px, py) in enumerate(moves, 1):
            at = t + hold_s * i / len(moves)
            mx, my = self._axis(px, py)
            events += [(at, dev, "EV_ABS", "ABS_MT_POSITION_X", mx), (at, dev, "EV_ABS", "ABS_MT_POSITION_Y", my),
                       (at, dev, *syn)]
        end = t + hold_s
        events += [(end, dev, "EV_ABS", "ABS_MT_TRACKING_ID", "ffffffff"), (end, dev, "EV_KEY", "BTN_TOUCH", "UP"),
                   (end, dev, *syn)]
        self.hub.emit(events)
