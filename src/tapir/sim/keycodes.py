"""Android key codes (``android.view.KeyEvent``), as ``input keyevent`` accepts them."""

from __future__ import annotations

_NAMED = {
    "UNKNOWN": 0, "SOFT_LEFT": 1, "SOFT_RIGHT": 2, "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6,
    "STAR": 17, "POUND": 18, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "CLEAR": 28,
    "COMMA": 55, "PERIOD": 56, "ALT_LEFT": 57, "ALT_RIGHT": 58, "SHIFT_LEFT": 59, "SHIFT_RIGHT": 60,
    "TAB": 61, "SPACE": 62, "SYM": 63, "EXPLORER": 64, "ENVELOPE": 65, "ENTER": 66, "DEL": 67,
    "GRAVE": 68, "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71, "RIGHT_BRACKET": 72, "BACKSLASH": 73,
    "SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77, "NUM": 78, "HEADSETHOOK": 79, "FOCUS": 80,
    "PLUS": 81, "MENU": 82, "NOTIFICATION": 83, "SEARCH": 84, "MEDIA_PLAY_PAUSE": 85, "MEDIA_STOP": 86,
    "MEDIA_NEXT": 87, "MEDIA_PREVIOUS": 88, "MEDIA_REWIND": 89, "MEDIA_FAST_FORWARD": 90, "MUTE": 91,
    "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111, "FORWARD_DEL": 112, "CTRL_LEFT": 113,
    "CTRL_RIGHT": 114, "CAPS_LOCK": 115, "MOVE_HOME": 122, "MOVE_END": 123, "INSERT": 124,
    "MEDIA_PLAY": 126, "MEDIA_PAUSE": 127, "VOLUME_MUTE": 164, "BRIGHTNESS_DOWN": 220,
    "BRIGHTNESS_UP": 221, "SLEEP": 223, "WAKEUP": 224, "APP_SWITCH": 187, "SETTINGS": 176,
    "ASSIST": 219, "DPAD_UP_LEFT": 268,
}
_NAMED.update({str(d): 7 + d for d in range(10)})
_NAMED.update({chr(ord("A") + i): 29 + i for i in range(26)})

NAME_TO_CODE: dict[str, int] = {f"KEYCODE_{name}": code for name, code in _NAMED.items()}
CODE_TO_NAME: dict[int, str] = {code: name for name, code in NAME_TO_CODE.items()}
MAX_KEYCODE = 316  # KEYCODE_MACRO_4 in API 34; codes up to it are valid even without a name here


def parse_keycode(arg: str) -> str | None:
    """``4``, ``BACK`` or ``KEYCODE_BACK`` -> ``KEYCODE_BACK``; None when Android would refuse it.

    A number is taken as a code first (so ``4`` is BACK, not the digit key), as
    ``KeyEvent.keyCodeFromString`` does.
    """
    if arg.isdigit():
        code = int(arg)
        if 0 < code <= MAX_KEYCODE:
            return CODE_TO_NAME.get(code, str(code))
        return None
    name = arg if arg.startswith("KEYCODE_") else f"KEYCODE_{arg}"
    return name if name in NAME_TO_CODE and name != "KEYCODE_UNKNOWN" else None
