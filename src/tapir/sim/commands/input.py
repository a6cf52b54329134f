"""``input`` (taps, swipes, keys and text, as ``adb shell input`` sends them) and ``getevent``.

    input tap 540 1200
    input swipe 540 1800 540 600 300      # a swipe that moves less than the touch slop is a press
    input keyevent KEYCODE_BACK
    input text hello%sworld               # "%s" is a space; only ASCII, as on a phone
    getevent -lp                          # the input devices (watching events streams: adbd.py)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tapir.sim.keycodes import parse_keycode
from tapir.sim.shell import Ctx
from tapir.sim.touch import getevent_devices, getevent_header

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

LONG_PRESS_MS = 400  # ViewConfiguration.getLongPressTimeout()
TOUCH_SLOP_PX = 21  # 8dp at 420dpi: a "swipe" that moves less is a press
_INPUT_SOURCES = {"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus",
                  "dpad", "gamepad", "touchscreen", "rotaryencoder"}


def input_(device: SimDevice, ctx: Ctx) -> int:
    args = list(ctx.args)
    if args and args[0] in _INPUT_SOURCES:
        args.pop(0)
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        return _usage(ctx)
    verb, rest = args[0], args[1:]
    device.input_begins()
    if verb == "text":
        return _text(device, ctx, rest)
    if verb == "keyevent":
        return _keyevent(device, ctx, rest)
    if verb in ("tap", "press"):
        coords = _coords(rest, 2)
        if coords is None:
            return _invalid(ctx, verb)
        device.tap(coords[0], coords[1])
        return 0
    if verb in ("swipe", "draganddrop"):
        return _swipe(device, ctx, verb, rest)
    ctx.err(f"Error: Unknown command: {verb}\n")
    _usage(ctx)
    return 1


def _text(device: SimDevice, ctx: Ctx, rest: list[str]) -> int:
    if not rest:
        return _invalid(ctx, "text")
    # Input.sendText: "%s" stands for a space; everything else is typed as is, one
    # key event per character through the virtual keyboard's key map, which only has
    # ASCII (anything else fails before a single key is sent).
    text = rest[0].replace("%s", " ")
    if any(not (" " <= ch <= "~" or ch in "\n\t") for ch in text):
        ctx.err("Exception occurred while executing 'text':\n"
                "java.lang.NullPointerException: Attempt to get length of null array\n")
        return 255
    for piece in re.split(r"([\n\t])", text):
        if piece in ("\n", "\t"):
            device.press_key("KEYCODE_ENTER" if piece == "\n" else "KEYCODE_TAB")
        elif piece:
            device.type_text(piece)
    return 0


def _keyevent(device: SimDevice, ctx: Ctx, rest: list[str]) -> int:
    flags = [a for a in rest if a.startswith("--")]
    codes = [a for a in rest if not a.startswith("--")]
    if not codes:
        return _invalid(ctx, "keyevent")
    for arg in codes:
        name = parse_keycode(arg)
        if name is None:
            ctx.err(f"Error: Unknown keycode: {arg}\n")
            return 1
        device.press_key(name)
        if "--doubletap" in flags:
            device.press_key(name)
    return 0


def _swipe(device: SimDevice, ctx: Ctx, verb: str, rest: list[str]) -> int:
    coords = _coords(rest[:4], 4)
    duration = 300
    if coords is not None and len(rest) > 4:
        try:
            duration = int(float(rest[4]))
        except ValueError:
            coords = None
    if coords is None:
        return _invalid(ctx, verb)
    x1, y1, x2, y2 = coords
    still = abs(x2 - x1) <= TOUCH_SLOP_PX and abs(y2 - y1) <= TOUCH_SLOP_PX
    if still:
        device.tap(x1, y1, long=duration >= LONG_PRESS_MS)
    elif device.dialog is None:  # a system dialog does not scroll
        device.foreground.swipe(x1, y1, x2, y2, duration)
    return 0


def _coords(values: list[str], count: int) -> list[int] | None:
    if len(values) != count:
        return None
    try:
        return [round(float(v)) for v in values]
    except ValueError:
        return None


def _invalid(ctx: Ctx, verb: str) -> int:
    ctx.err(f"Error: Invalid arguments for command: {verb}\n")
    _usage(ctx)
    return 1


def _usage(ctx: Ctx) -> int:
    ctx.err("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
            "The commands and default sources are:\n"
            "      text <string> (Default: keyboard)\n"
            "      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n"
            "      tap <x> <y> (Default: touchscreen)\n"
            "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
            "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
            "      press (Default: trackball)\n")
    return 1


def getevent(device: SimDevice, ctx: Ctx) -> int:
    """``getevent -p``/``-lp``: the input devices. Watching events streams, so only the fake
    adbd can serve it (``AdbdServer``); a pipeline gets the devices opened and ends."""
    flags = "".join(a[1:] for a in ctx.args if a.startswith("-"))
    if "p" in flags or "i" in flags:
        ctx.out(getevent_devices(*device.screen_size, labels="l" in flags))
    else:
        ctx.out(getevent_header())
    return 0
