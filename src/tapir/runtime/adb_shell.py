"""Shell command lines for an Android device, and parsers for what they print.

Pure functions, no I/O: ``device.AdbDevice`` sends these strings through adb, and the
simulator and the tests can check them without a device.
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Mapping

from tapir.core.errors import UsageError

#: where ``uiautomator dump`` writes; /data/local/tmp is writable by the shell user on every
#: Android version, unlike /sdcard, which may be unmounted or scoped
DUMP_PATH = "/data/local/tmp/tapir_uidump.xml"

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"

#: friendly key names -> Android KeyEvent names
KEY_NAMES: dict[str, str] = {
    "back": "KEYCODE_BACK",
    "enter": "KEYCODE_ENTER",
    "home": "KEYCODE_HOME",
    "menu": "KEYCODE_MENU",
    "search": "KEYCODE_SEARCH",
    "tab": "KEYCODE_TAB",
    "space": "KEYCODE_SPACE",
    "delete": "KEYCODE_DEL",
    "del": "KEYCODE_DEL",
    "backspace": "KEYCODE_DEL",
    "forward_delete": "KEYCODE_FORWARD_DEL",
    "escape": "KEYCODE_ESCAPE",
    "app_switch": "KEYCODE_APP_SWITCH",
    "recent": "KEYCODE_APP_SWITCH",
    "power": "KEYCODE_POWER",
    "wakeup": "KEYCODE_WAKEUP",
    "sleep": "KEYCODE_SLEEP",
    "volume_up": "KEYCODE_VOLUME_UP",
    "volume_down": "KEYCODE_VOLUME_DOWN",
    "volume_mute": "KEYCODE_VOLUME_MUTE",
    "camera": "KEYCODE_CAMERA",
    "dpad_up": "KEYCODE_DPAD_UP",
    "dpad_down": "KEYCODE_DPAD_DOWN",
    "dpad_left": "KEYCODE_DPAD_LEFT",
    "dpad_right": "KEYCODE_DPAD_RIGHT",
    "dpad_center": "KEYCODE_DPAD_CENTER",
    "move_home": "KEYCODE_MOVE_HOME",
    "move_end": "KEYCODE_MOVE_END",
}

_KEYCODE_NAME = re.compile(r"KEYCODE_[A-Z0-9_]+")
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")
_ACTIVITY = re.compile(r"\.?[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*")
#: characters ``input text`` can type: printable ASCII (it maps each through the virtual
#: keyboard's key character map, which has nothing else)
_TYPEABLE = re.compile(r"[\x20-\x7e\n\t]*")


def keyevent_arg(key: str | int) -> str:
    """The argument for ``input keyevent``: a raw code, a ``KEYCODE_*`` name or a friendly name."""
    if isinstance(key, bool):
        raise UsageError(f"not a key: {key!r}")
    if isinstance(key, int):
        if not 0 <= key <= 999:
            raise UsageError(f"key code {key} is out of range (0-999)")
        return str(key)
    name = key.strip()
    if name.isdigit():
        return keyevent_arg(int(name))
    if _KEYCODE_NAME.fullmatch(name):
        return name
    canonical = KEY_NAMES.get(name.lower())
    if canonical is None:
        known = ", ".join(sorted(KEY_NAMES))
        raise UsageError(f"unknown key {key!r}", hint=f"use a key code, KEYCODE_<NAME>, or one of: {known}")
    return canonical


def key_command(key: str | int) -> str:
    return f"input keyevent {keyevent_arg(key)}"


def tap_command(x: int, y: int) -> str:
    return f"input tap {int(x)} {int(y)}"


def swipe_command(x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> str:
    if duration_ms < 0:
        raise UsageError(f"swipe duration must not be negative, got {duration_ms} ms")
    return f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}"


def long_tap_command(x: int, y: int, duration_ms: int) -> str:
    """A long press is a swipe that does not move (``input`` has no long-press verb before Android 12)."""
    return swipe_command(x, y, x, y, duration_ms)


def is_typeable(text: str) -> bool:
    """True if ``input text`` (plus ENTER/TAB key events) can type all of ``text``."""
    return _TYPEABLE.fullmatch(text) is not None


def _escape_chunk(chunk: str) -> str:
    # ``input text`` turns every "%s" into a space (it has no way to type a literal "%s");
    # spaces themselves must be sent as "%s" because some versions split arguments on them.
    # What is left is quoted for the device's /system/bin/sh, which sees the whole line.
    return shlex.quote(chunk.replace(" ", "%s"))


def input_text_commands(text: str) -> list[str]:
    """Shell commands that type ``text`` (printable ASCII, newlines and tabs) with ``input``.

    * Spaces become ``%s``; shell metacharacters (quotes, ``& ; | $ ` ( ) \\ < > * ?``) are
      protected by single quotes (``shlex.quote``; a ``'`` is closed, double-quoted and reopened).
    * A literal ``%s`` in the text cannot be typed in one call (``input`` would make it a
      space), so the text is split between the ``%`` and the ``s``: ``input`` only collapses
      ``%s`` within one argument.
    * ``\\n`` and ``\\t`` become ENTER and TAB key events.

    Raises ``UsageError`` for anything else (see ``AdbDevice.input_text`` for non-ASCII).
    """
    if not is_typeable(text):
        bad = next(ch for ch in text if not is_typeable(ch))
        raise UsageError(f"`input text` cannot type {bad!r} (U+{ord(bad):04X}); non-ASCII text needs ADBKeyBoard")
    commands: list[str] = []
    for piece in re.split(r"([\n\t])", text):
        if piece == "\n":
            commands.append(key_command("enter"))
        elif piece == "\t":
            commands.append(key_command("tab"))
        elif piece:
            # "a%sb" -> "a%" and "sb": each call types its own piece verbatim
            chunks = re.split(r"(?<=%)(?=s)", piece)
            commands.extend(f"input text {_escape_chunk(c)}" for c in chunks)
    return commands


def adb_keyboard_command(text: str) -> str:
    """Type any Unicode ``text`` through the ADBKeyBoard IME (base64, so nothing needs quoting)."""
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"am broadcast -a ADB_INPUT_B64 --es msg {payload}"


def check_package(package: str) -> str:
    if not _PACKAGE.fullmatch(package):
        raise UsageError(f"not an Android package name: {package!r}")
    return package


def app_start_command(package: str, activity: str | None = None,
                      extras: Mapping[str, str | int | float | bool] | None = None) -> str:
    """``am start -n`` for an explicit activity (the launcher intent's action and category, and
    ``extras`` typed as ``--es``/``--ez``/``--ei``/``--el``/``--ef``), else ``monkey`` to fire
    the launcher intent."""
    check_package(package)
    if activity is None:
        if extras:
            raise UsageError("launch extras need the launcher activity (resolve_launcher_command)")
        return f"monkey -p {package} -c android.intent.category.LAUNCHER 1"
    if not _ACTIVITY.fullmatch(activity):
        raise UsageError(f"not an activity class name: {activity!r}")
    words = ["am", "start", "-n", shlex.quote(f"{package}/{activity}")]
    if extras:
        words += ["-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER"]
        for key, value in extras.items():
            if not _EXTRA_KEY.fullmatch(key):
                raise UsageError(f"not an intent extra name: {key!r} (letters, digits, '_', '.', '-')")
            words += [_extra_flag(value), key, shlex.quote(_extra_text(value))]
    return " ".join(words)


def resolve_launcher_command(package: str) -> str:
    """Which activity the launcher starts: the last line of the output is ``package/activity``."""
    return (f"cmd package resolve-activity --brief -a android.intent.action.MAIN "
            f"-c android.intent.category.LAUNCHER {check_package(package)}")


_EXTRA_KEY = re.compile(r"[A-Za-z_][\w.-]*")


def _extra_flag(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "--ez"
    if isinstance(value, int):
        return "--ei" if -2**31 <= value < 2**31 else "--el"
    if isinstance(value, float):
        return "--ef"
    return "--es"


def _extra_text(value: str | int | float | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def app_stop_command(package: str) -> str:
    return f"am force-stop {check_package(package)}"


def app_clear_command(package: str) -> str:
    return f"pm clear {check_package(package)}"


def dump_command(path: str = DUMP_PATH) -> str:
    """Dump to a file and print it in one round trip.

    The stale file is removed first: ``uiautomator dump`` exits 0 even when it fails ("could
    not get idle state"), and ``cat`` must not print an old screen then.
    """
    return f"rm -f {path}; uiautomator dump {path}; cat {path}"


_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*?\s(?P<pkg>[\w.]+)/(?P<act>[^\s}]+)\}")
_RECORD = re.compile(
    r"(?:mFocusedApp|mResumedActivity|topResumedActivity|ResumedActivity)[=:]\s*.*?"
    r"ActivityRecord\{[^}]*?\s(?P<pkg>[\w.]+)/(?P<act>[^\s}]+)"
)


def _full_activity(package: str, activity: str) -> str:
    return package + activity if activity.startswith(".") else activity


def parse_current_app(dumpsys: str) -> tuple[str, str] | None:
    """(package, activity) from ``dumpsys window windows`` or ``dumpsys activity activities``.

    The focused window wins; when it is not an activity (status bar, a popup) the focused or
    resumed activity record is used. Activities are returned fully qualified.
    """
    for pattern in (_FOCUS, _RECORD):
        m = pattern.search(dumpsys)
        if m:
            return m["pkg"], _full_activity(m["pkg"], m["act"])
    return None


_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")


def parse_wm_size(output: str) -> tuple[int, int] | None:
    """``wm size`` output; an override (``wm size 720x1280``) wins over the physical size."""
    sizes = {m[1]: (int(m[2]), int(m[3])) for m in _SIZE.finditer(output)}
    return sizes.get("Override") or sizes.get("Physical")
