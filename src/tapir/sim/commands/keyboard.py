"""Input methods: ``ime`` (list, enable, select) and ADBKeyBoard, the IME that types broadcasts.

    ime enable com.android.adbkeyboard/.AdbIME && ime set com.android.adbkeyboard/.AdbIME
    am broadcast -a ADB_INPUT_TEXT --es msg 'héllo'      # typed by adb_keyboard

The enabled IMEs are the phone's (``SimDevice.enabled_imes``); the selected one is the secure
setting ``default_input_method``, as on Android.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from tapir.sim.keycodes import parse_keycode
from tapir.sim.phone import IMES
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def ime(device: SimDevice, ctx: Ctx) -> int:
    verb = ctx.args[0] if ctx.args else ""
    rest = [a for a in ctx.args[1:] if not a.startswith("-")]
    flags = [a for a in ctx.args[1:] if a.startswith("-")]
    if verb == "list":
        shown = IMES if "-a" in flags else [i for i in IMES if i in device.enabled_imes]
        for name in shown:
            ctx.out(f"{name}\n" if "-s" in flags else f"{name}:\n  mId={name}\n")
        return 0
    if verb in ("enable", "disable", "set") and rest:
        name = rest[0]
        if name not in IMES:
            ctx.err(f"Unknown input method {name} cannot be {'selected' if verb == 'set' else verb + 'd'} "
                    "for user #0\n")
            return 255
        if verb == "enable":
            device.enabled_imes.add(name)
            ctx.out(f"Input method {name}: now enabled for user #0\n")
        elif verb == "disable":
            device.enabled_imes.discard(name)
            ctx.out(f"Input method {name}: now disabled for user #0\n")
        else:
            device.enabled_imes.add(name)
            device.settings["secure"]["default_input_method"] = name
            ctx.out(f"Input method {name} selected for user #0\n")
        return 0
    if verb == "reset":
        device.enabled_imes = {IMES[0]}
        device.settings["secure"]["default_input_method"] = IMES[0]
        return 0
    ctx.err("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset\n")
    return 1


def adb_keyboard(device: SimDevice, action: str, extras: dict[str, str]) -> None:
    """ADBKeyBoard, the IME that types any Unicode text sent to it by broadcast."""
    if action == "ADB_INPUT_TEXT" and "msg" in extras:
        device.type_text(extras["msg"])
    elif action == "ADB_INPUT_B64" and "msg" in extras:
        try:
            device.type_text(base64.b64decode(extras["msg"]).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            pass  # the IME ignores a message it cannot decode
    elif action == "ADB_INPUT_CODE" and extras.get("code", "").isdigit():
        name = parse_keycode(extras["code"])
        if name is not None:
            device.press_key(name)
