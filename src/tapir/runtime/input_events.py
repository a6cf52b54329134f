"""A person's touches and keys on a device, read from the kernel with ``getevent``.

    ranges = touch_ranges(device.shell("getevent -lp"))       # axis maxima of each touchscreen
    parser = GestureParser(ranges, screen=(1080, 2400))
    for line in device.stream_shell("getevent -lt").lines():
        for gesture in parser.feed(line):
            print(gesture)          # Gesture(kind='tap', x=540, y=1200, ...), 'swipe', 'long_tap', 'key'

``getevent -lt`` prints every event of every input device as it happens, with labels and
timestamps (``[  74328.135497] /dev/input/event2: EV_ABS ABS_MT_POSITION_X 0000021c``). Touches
(multi-touch protocol B, or the older ABS_X/ABS_Y) become one ``Gesture`` each when the finger
lifts: a **tap**, a **long_tap** (held ``LONG_PRESS_S`` or more without moving), or a **swipe**
(moved more than the touch slop); navigation keys (BACK, HOME, APP_SWITCH, ENTER) become
``key`` gestures when released. Coordinates are scaled from the touchscreen's axes
(``getevent -lp`` gives their maxima; many controllers do not count in display pixels) to
screen pixels.

What it cannot see, by design of Android: ``input tap`` and other injected events (they do not
pass through the kernel), text committed by an input method, and which window a touch landed in
(a touch on the on-screen keyboard is a touch like any other). A second finger is ignored: a
pinch is not a gesture the language has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LONG_PRESS_S", "Gesture", "GestureParser", "TouchRange", "touch_ranges"]

#: A touch held this long without moving is a long press (Android's default timeout is 0.4 s;
#: people hold a little longer than the timeout when they mean it, and shorter when they do not).
LONG_PRESS_S = 0.5
#: A touch that moves farther than this many screen pixels is a swipe (8 dp at 420 dpi is 21 px).
TOUCH_SLOP_PX = 24
#: Keys recorded, by their kernel names.
KEYS = {"KEY_BACK": "back", "KEY_HOMEPAGE": "home", "KEY_HOME": "home", "KEY_APPSELECT": "app_switch",
        "KEY_ENTER": "enter"}

_LINE = re.compile(r"^(?:\[\s*(?P<t>\d+\.\d+)\]\s*)?(?P<dev>/dev/input/\S+):\s+(?P<type>\S+)\s+(?P<code>\S+)\s+"
                   r"(?P<value>\S+)\s*$")
_ADD = re.compile(r"^add device \d+: (?P<dev>\S+)")
_AXIS = re.compile(r"(?P<code>ABS_MT_POSITION_X|ABS_MT_POSITION_Y|ABS_X|ABS_Y)\s*:.*?min (?P<min>-?\d+), "
                   r"max (?P<max>-?\d+)")


@dataclass(frozen=True)
class TouchRange:
    """The axes of one touchscreen: raw values ``min..max`` span the screen."""

    x_min: int = 0
    x_max: int = 0
    y_min: int = 0
    y_max: int = 0


def touch_ranges(getevent_lp: str) -> dict[str, TouchRange]:
    """Each touch device of ``getevent -lp``'s output and its axes (devices without X/Y axes are
    left out)."""
    found: dict[str, dict[str, tuple[int, int]]] = {}
    device = ""
    for line in getevent_lp.splitlines():
        m = _ADD.match(line.strip())
        if m:
            device = m.group("dev")
            continue
        a = _AXIS.search(line)
        if a and device:
            axis = "x" if a.group("code").endswith("X") else "y"
            # the multi-touch axes win over the single-touch ones when a device has both
            if axis not in found.setdefault(device, {}) or a.group("code").startswith("ABS_MT"):
                found[device][axis] = (int(a.group("min")), int(a.group("max")))
    return {dev: TouchRange(ax["x"][0], ax["x"][1], ax["y"][0], ax["y"][1])
            for dev, ax in found.items() if "x" in ax and "y" in ax}


@dataclass(frozen=True)
class Gesture:
    """One thing a person did: ``tap``/``long_tap`` at (x, y), ``swipe`` from (x, y) to (x2, y2),
    or ``key`` (``key`` names it: back, home, app_switch, enter). ``start``/``end`` are the
    device's timestamps (seconds since boot)."""

    kind: str
    x: int = 0
    y: int = 0
    x2: int = 0
    y2: int = 0
    start: float = 0.0
    end: float = 0.0
    key: str = ""

    @property
    def duration_s(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass
class _Touch:
    start: float
    x: int | None = None
    y: int | None = None
    x0: int | None = None
    y0: int | None = None
    travel: int = 0


class GestureParser:
    """Turns ``getevent -lt`` lines into gestures (see the module docstring)."""

    def __init__(self, ranges: dict[str, TouchRange], screen: tuple[int, int]) -> None:
        self.ranges = ranges
        self.width, self.height = screen
        self._touch: _Touch | None = None
        self._down = False
        self._up_pending = False
        self._slot = 0
        self._raw_x: int | None = None
        self._raw_y: int | None = None
        self._device = ""
        #: Lines that were not events (the devices getevent opened, blank lines).
        self.skipped = 0

    def _scale(self, device: str, raw: int, axis: str) -> int:
        r = self.ranges.get(device)
        if r is None:
            return raw
        lo, hi, size = (r.x_min, r.x_max, self.width) if axis == "x" else (r.y_min, r.y_max, self.height)
        if hi <= lo:
            return raw
        return round((raw - lo) * (size - 1) / (hi - lo))

    def feed(self, line: str) -> list[Gesture]:
        """The gestures ``line`` completes (most lines complete none)."""
        m = _LINE.match(line.strip())
        if m is None:
            self.skipped += 1
            return []
        t = float(m.group("t")) if m.group("t") else 0.0
        dev, kind, code, value = m.group("dev"), m.group("type"), m.group("code"), m.group("value")
        if kind == "EV_KEY" and code in KEYS:
            if value == "UP":
                return [Gesture("key", start=t, end=t, key=KEYS[code])]
            return []
        if dev not in self.ranges:
            return []
        self._device = dev
        if kind == "EV_ABS":
            return self._abs(code, value, t)
        if kind == "EV_KEY" and code == "BTN_TOUCH":
            if value == "DOWN":
                self._begin(t)
            elif value == "UP":
                self._up_pending = True
            return []
        if kind == "EV_SYN" and code == "SYN_REPORT":
            return self._report(t)
        return []

    def _abs(self, code: str, value: str, t: float) -> list[Gesture]:
        number = int(value, 16) if re.fullmatch(r"[0-9a-fA-F]+", value) else 0
        if code == "ABS_MT_SLOT":
            self._slot = number
        elif self._slot != 0:
            return []  # a second finger: not a gesture of the language
        elif code == "ABS_MT_TRACKING_ID":
            if value.lower() == "ffffffff":
                self._up_pending = True
            else:
                self._begin(t)
        elif code in ("ABS_MT_POSITION_X", "ABS_X"):
            self._raw_x = number
        elif code in ("ABS_MT_POSITION_Y", "ABS_Y"):
            self._raw_y = number
        return []

    def _begin(self, t: float) -> None:
        if not self._down:
            self._down = True
            self._touch = _Touch(start=t)

    def _report(self, t: float) -> list[Gesture]:
        touch = self._touch
        if touch is not None and self._raw_x is not None and self._raw_y is not None and self._down:
            x = self._scale(self._device, self._raw_x, "x")
            y = self._scale(self._device, self._raw_y, "y")
            if touch.x0 is None or touch.y0 is None:
                touch.x0, touch.y0 = x, y
            # the farthest the finger got from where it landed: a swipe that came back is a swipe
            touch.travel = max(touch.travel, abs(x - touch.x0), abs(y - touch.y0))
            touch.x, touch.y = x, y
        if not self._up_pending:
            return []
        self._up_pending = False
        self._down = False
        self._touch = None
        if touch is None or touch.x0 is None or touch.x is None or touch.y is None or touch.y0 is None:
            return []
        if touch.travel > TOUCH_SLOP_PX:
            return [Gesture("swipe", touch.x0, touch.y0, touch.x, touch.y, touch.start, t)]
        kind = "long_tap" if t - touch.start >= LONG_PRESS_S else "tap"
        return [Gesture(kind, touch.x0, touch.y0, touch.x0, touch.y0, touch.start, t)]
