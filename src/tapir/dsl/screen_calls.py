"""Screen-level actions: what a script can do to the screen as it is, without an app document (and
beside one), as Maestro's and Appium's users do on their first day.

    tap_text("Settings")              # Maestro: tapOn: "Settings"
    long_tap_text("Groceries")        # longPressOn
    tap_at(540, 1200)                 # a point in pixels; tap_at(0.5, 0.9): fractions of the screen
    swipe("up")                       # the finger moves up (Maestro's swipe: direction: UP)
    scroll_screen("down")             # shows what is further down (Maestro's scroll)
    press_key("home")                 # any key by name: home, app_switch, volume_up, KEYCODE_TAB, 66...
    type_text("ada@example.com")      # into the focused field (Maestro's inputText); a secret() too
    hide_keyboard()
    open_link("tapirnotes://note/3")  # am start -a android.intent.action.VIEW -d URL
    assert_text("Groceries")          # assertVisible (waits up to 5 s)
    if text_visible("Rate us"): ...   # a presence check, never fails

A text is matched as ``wait_text`` matches it: a view's text or content description, whole,
ignoring case and surrounding space. Each is one entry of the registry, so the checker, the
language service, page objects and prompts know them; on a device they go through the same
guards as element actions (a tap on the text "Delete" is a sensitive tap). On a document the
checker says which element a literal text names (``text_notes``: "'Settings' is
$main__settings_button").

The device side is ``ScreenRuntime``: the methods a runtime offers beside ``UIRuntime``'s.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tapir.core.diagnostics import INFO, Diagnostic
from tapir.core.errors import AssertionFailed, ScriptError, Span
from tapir.core.secrets import Secret
from tapir.dsl import ast as A
from tapir.dsl.api import seconds_argument
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace
from tapir.dsl.visitor import NodeVisitor

if TYPE_CHECKING:
    from tapir.dsl.symbols import SymbolTable

__all__ = [
    "DOCUMENT_CALLS", "KEY_NAMES", "SCREEN_ACTIONS", "SWIPE_DIRECTIONS", "TEXT_CALLS", "ScreenRuntime",
    "element_refs", "element_texts", "first_document_use", "key_code", "text_notes",
]

#: Directions of ``swipe`` (where the finger moves) and ``scroll_screen`` (what is shown next).
SWIPE_DIRECTIONS = ("up", "down", "left", "right")

#: Friendly key names (Maestro's and Appium's) -> Android's ``KEYCODE_`` names.
KEY_NAMES: dict[str, str] = {
    "home": "KEYCODE_HOME", "back": "KEYCODE_BACK", "enter": "KEYCODE_ENTER", "app_switch": "KEYCODE_APP_SWITCH",
    "recent_apps": "KEYCODE_APP_SWITCH", "volume_up": "KEYCODE_VOLUME_UP", "volume_down": "KEYCODE_VOLUME_DOWN",
    "volume_mute": "KEYCODE_VOLUME_MUTE", "power": "KEYCODE_POWER", "lock": "KEYCODE_SLEEP",
    "wakeup": "KEYCODE_WAKEUP", "tab": "KEYCODE_TAB", "delete": "KEYCODE_DEL", "backspace": "KEYCODE_DEL",
    "forward_delete": "KEYCODE_FORWARD_DEL", "escape": "KEYCODE_ESCAPE", "space": "KEYCODE_SPACE",
    "search": "KEYCODE_SEARCH", "menu": "KEYCODE_MENU", "camera": "KEYCODE_CAMERA", "call": "KEYCODE_CALL",
    "end_call": "KEYCODE_ENDCALL", "notifications": "KEYCODE_NOTIFICATION", "settings": "KEYCODE_SETTINGS",
    "up": "KEYCODE_DPAD_UP", "down": "KEYCODE_DPAD_DOWN", "left": "KEYCODE_DPAD_LEFT", "right": "KEYCODE_DPAD_RIGHT",
    "center": "KEYCODE_DPAD_CENTER", "move_home": "KEYCODE_MOVE_HOME", "move_end": "KEYCODE_MOVE_END",
    "page_up": "KEYCODE_PAGE_UP", "page_down": "KEYCODE_PAGE_DOWN", "play_pause": "KEYCODE_MEDIA_PLAY_PAUSE",
    "media_next": "KEYCODE_MEDIA_NEXT", "media_previous": "KEYCODE_MEDIA_PREVIOUS", "media_stop": "KEYCODE_MEDIA_STOP",
    "brightness_up": "KEYCODE_BRIGHTNESS_UP", "brightness_down": "KEYCODE_BRIGHTNESS_DOWN",
}
#: The highest key code Android defines (``KEYCODE_MACRO_4``, API 34).
MAX_KEYCODE = 316
_KEYCODE_NAME = re.compile(r"KEYCODE_[A-Z0-9_]+")

#: The calls whose first argument is a text shown on the screen (the checker names its element).
TEXT_CALLS = frozenset({"tap_text", "long_tap_text", "assert_text", "text_visible", "wait_text"})
#: The screen-level actions a runtime offers (``ScreenRuntime``).
SCREEN_ACTIONS = ("tap_text", "tap_at", "swipe_screen", "press_key", "type_text", "hide_keyboard", "open_link")


@runtime_checkable
class ScreenRuntime(Protocol):
    """The screen-level actions of a device runtime (beside ``UIRuntime``'s element calls). Texts
    are matched as ``wait_for`` matches a text; errors are ``TapirError``s as there."""

    def tap_text(self, text: str, long: bool, timeout: float, span: Span) -> None:
        """Tap (long-press) the view showing ``text``, waiting up to ``timeout`` seconds for it."""
        ...

    def tap_at(self, x: float, y: float, long: bool, span: Span) -> None:
        """Tap at (x, y): pixels when both are ints, fractions of the screen when floats in 0..1."""
        ...

    def swipe_screen(self, direction: str, span: Span) -> bool:
        """Move a finger across the screen in ``direction`` (``SWIPE_DIRECTIONS``); True when the
        screen did not change."""
        ...

    def press_key(self, keycode: str, span: Span) -> None:
        """Press a key (``KEYCODE_HOME``, or a number as text)."""
        ...

    def type_text(self, text: str | Secret, span: Span) -> None:
        """Type ``text`` into the field that has the keyboard focus, after what it holds (a
        ``Secret`` only into a password field, as ``set_text``)."""
        ...

    def hide_keyboard(self, span: Span) -> bool:
        """Hide the on-screen keyboard if it shows; whether it was shown."""
        ...

    def open_link(self, url: str, span: Span) -> None:
        """Open ``url`` as Android's VIEW intent (a web link, a deep link)."""
        ...


def key_code(key: str | int, span: Span | None = None) -> str:
    """``"home"``, ``"HOME"``, ``"KEYCODE_HOME"`` or ``3`` -> what ``input keyevent`` takes
    (``KEYCODE_HOME``, or the number as text); ``ScriptError`` naming the close names otherwise."""
    if type(key) is int:
        if 0 < key <= MAX_KEYCODE:
            return str(key)
        raise ScriptError(f"press_key(): {key} is not an Android key code (1 to {MAX_KEYCODE})", span)
    assert isinstance(key, str)
    name = key.strip()
    if name.lower() in KEY_NAMES:
        return KEY_NAMES[name.lower()]
    upper = name.upper()
    if _KEYCODE_NAME.fullmatch(upper):
        return upper
    squeezed = {k.replace("_", ""): k for k in KEY_NAMES}
    if name.lower().replace("_", "") in squeezed:  # "endcall", "volumeup"
        return KEY_NAMES[squeezed[name.lower().replace("_", "")]]
    # a lower-case name is one of ours misspelt ("hme"); Android's own are written in capitals
    # ("BACKSLASH" is a key, not "backspace" misspelt)
    close = difflib.get_close_matches(name.lower(), list(KEY_NAMES), n=1, cutoff=0.75) if name != upper else []
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", upper) and not close:
        return f"KEYCODE_{upper}"  # Android's own names without the prefix: "MEDIA_PLAY", "F1"
    raise ScriptError(f"press_key(): {key!r} is not a key name" + (f"; did you mean {close[0]!r}?" if close else ""),
                      span, hint="a name such as 'home', 'back', 'enter', 'app_switch', 'volume_up', an Android "
                                 "name such as 'KEYCODE_TAB', or a key code number")


def _screen(call: ApiCall, method: str) -> Any:
    """The runtime's ``method`` (``ScreenRuntime``), or a clear error for a runtime without it."""
    fn = getattr(call.runtime, method, None)
    if not callable(fn):
        raise ScriptError(f"{call.entry.name}() needs a device: this run's runtime has no screen-level actions",
                          call.span)
    return fn


def _text(call: ApiCall) -> str:
    text: str = call.args["text"]
    if not text.strip():
        raise ScriptError(f"{call.entry.name}() needs a text to look for, not an empty one", call.span)
    return text


def _tapper(long: bool) -> Any:
    def tap(call: ApiCall) -> None:
        text = _text(call)
        _screen(call, "tap_text")(text, long, seconds_argument(call), call.span)

    return tap


def _tap_at(call: ApiCall) -> None:
    x, y = call.args["x"], call.args["y"]
    for name, v in (("x", x), ("y", y)):
        if not math.isfinite(v) or v < 0 or (type(v) is float and v > 1):
            raise ScriptError(f"tap_at() argument '{name}' must be pixels (an int >= 0) or a fraction of the "
                              f"screen (a float from 0 to 1), not {v!r}", call.span)
    _screen(call, "tap_at")(x, y, False, call.span)


def _swipe(call: ApiCall) -> None:
    _screen(call, "swipe_screen")(call.args["direction"], call.span)


#: ``scroll_screen("down")`` shows what is further down: the finger moves up.
_FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}


def _scroll_screen(call: ApiCall) -> bool:
    return bool(_screen(call, "swipe_screen")(_FINGER[call.args["direction"]], call.span))


def _press_key(call: ApiCall) -> None:
    _screen(call, "press_key")(key_code(call.args["key"], call.span), call.span)


def _type_text(call: ApiCall) -> None:
    text: str | Secret = call.args["text"]
    if isinstance(text, str) and not text:
        raise ScriptError("type_text() needs a text to type, not an empty one", call.span,
                          hint="press_key('delete') erases a character; $screen__field.set_text('') empties a "
                               "field of the document")
    _screen(call, "type_text")(text, call.span)


def _hide_keyboard(call: ApiCall) -> None:
    _screen(call, "hide_keyboard")(call.span)


def _open_link(call: ApiCall) -> None:
    url: str = call.args["url"].strip()
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", url) or any(c.isspace() for c in url):
        raise ScriptError(f"open_link(): {call.args['url']!r} is not a link (a URL such as https://example.com "
                          "or a deep link such as myapp://path)", call.span)
    _screen(call, "open_link")(url, call.span)


def _visible(call: ApiCall) -> bool:
    from tapir.dsl.api import _timed

    text, timeout = _text(call), seconds_argument(call)
    return bool(_timed(call, timeout, f"text_visible({text!r})",
                       lambda rt, limit: rt.wait_for(text, False, limit, call.span, watchers=False)))


def _assert_text(call: ApiCall) -> None:
    from tapir.dsl.api import _timed

    text, timeout = _text(call), seconds_argument(call)
    shown = _timed(call, timeout, f"assert_text({text!r})",
                   lambda rt, limit: rt.wait_for(text, False, limit, call.span))
    if not shown:
        raise AssertionFailed(f"{text!r} is not on the screen" + (f" (waited {timeout:g} s)" if timeout else ""),
                              call.span)


#: Left out of the prompt text (``in_prompts``): a model writes scripts against the document's
#: elements, and ten more signatures would not fit a small model's context (tests/test_codegen_prompt);
#: and out of the generated page objects (``page_object``), which are the document's screens (Python
#: code calls ``runtime.tap_text(...)`` on the runtime itself).
_SCREEN: dict[str, Any] = {"needs_device": True, "navigates": False, "in_prompts": False, "page_object": False}
_ACT: dict[str, Any] = {**_SCREEN, "acts_on_device": True}
_TEXT = {"text": "the text of a view on the screen, or its content description (whole, ignoring case)"}

for _entry in (
    Entry.define("tap_text(text: str, timeout: float = 5) -> None", Namespace.GLOBAL,
                 "Tap the view that shows the text (or has it as its description), waiting up to timeout seconds "
                 "for it to appear; no app document needed.", _tapper(long=False),
                 params={**_TEXT, "timeout": "seconds to wait for the text to appear"}, **_ACT),
    Entry.define("long_tap_text(text: str, timeout: float = 5) -> None", Namespace.GLOBAL,
                 "Long-press the view that shows the text (or has it as its description).", _tapper(long=True),
                 params={**_TEXT, "timeout": "seconds to wait for the text to appear"}, **_ACT),
    Entry.define("tap_at(x: int | float, y: int | float) -> None", Namespace.GLOBAL,
                 "Tap a point of the screen: pixels (ints), or fractions of the screen's width and height "
                 "(floats from 0 to 1, e.g. tap_at(0.5, 0.5) for the centre).", _tap_at,
                 params={"x": "from the left edge", "y": "from the top edge"}, **_ACT),
    Entry.define("swipe(direction: str) -> None", Namespace.GLOBAL,
                 "Swipe across the middle of the screen: the finger moves in the direction ('up' scrolls a "
                 "page down, 'left' goes to the next page of a pager).", _swipe,
                 params={"direction": "where the finger moves"}, choices={"direction": SWIPE_DIRECTIONS}, **_ACT),
    Entry.define("scroll_screen(direction: str = 'down') -> bool", Namespace.GLOBAL,
                 "Scroll the screen to show what is further in the direction (default down). Returns True when "
                 "nothing moved, i.e. the end was reached.", _scroll_screen,
                 params={"direction": "what to show next"}, choices={"direction": SWIPE_DIRECTIONS}, **_ACT),
    Entry.define("press_key(key: str | int) -> None", Namespace.GLOBAL,
                 "Press a key: 'home', 'back', 'enter', 'app_switch', 'volume_up', 'volume_down', 'tab', "
                 "'delete', 'search'..., an Android name such as 'KEYCODE_MEDIA_PLAY', or a key code number.",
                 _press_key, params={"key": "the key's name or code"}, **_ACT),
    Entry.define("type_text(text: str | secret) -> None", Namespace.GLOBAL,
                 "Type the text into the field that has the keyboard focus (tap it first), after what it holds; "
                 "a secret() only into a password field. Spaces and shell characters are typed as they are.",
                 _type_text, params={"text": "the text to type, or a secret()"}, **_ACT),
    Entry.define("hide_keyboard() -> None", Namespace.GLOBAL,
                 "Hide the on-screen keyboard if it shows (nothing is pressed when it does not).", _hide_keyboard,
                 **_ACT),
    Entry.define("open_link(url: str) -> None", Namespace.GLOBAL,
                 "Open a web link or a deep link (myapp://path) as Android's VIEW intent does; the app that "
                 "handles it comes to the front.", _open_link,
                 params={"url": "the link, with its scheme (https://..., myapp://...)"}, **_ACT),
    Entry.define("assert_text(text: str, timeout: float = 5) -> None", Namespace.GLOBAL,
                 "Fail unless a view shows the text within timeout seconds (whole, ignoring case). Never "
                 "navigates, scrolls or taps.", _assert_text,
                 params={**_TEXT, "timeout": "seconds to wait for it (0: look once)"}, **_SCREEN),
    Entry.define("text_visible(text: str, timeout: float = 0) -> bool", Namespace.GLOBAL,
                 "Whether a view shows the text now; with a timeout, waits up to that many seconds for it. Never "
                 "navigates, scrolls or taps.", _visible,
                 params={**_TEXT, "timeout": "seconds to keep looking (0: look once)"}, **_SCREEN),
):
    REGISTRY.add(_entry)


# -- the checker's notes ---------------------------------------------------------------------------


def element_texts(symbols: SymbolTable) -> dict[str, list[str]]:
    """The document's texts (casefolded) and the elements showing each, in document order."""
    found: dict[str, list[str]] = {}
    for e in symbols.elements:
        for text in e.texts:
            names = found.setdefault(text.strip().casefold(), [])
            if e.name not in names:
                names.append(e.name)
    return found


#: API functions that act on the document's app (its package comes from the document).
DOCUMENT_CALLS = frozenset({"launch_app", "stop_app", "clear_app"})


class _DocumentUses(NodeVisitor[None]):
    def __init__(self) -> None:
        self.refs: list[A.ElementRef] = []
        self.calls: list[A.Call] = []

    def visit_ElementRef(self, node: A.ElementRef) -> None:
        self.refs.append(node)

    def visit_Call(self, node: A.Call) -> None:
        if isinstance(node.func, A.Name) and node.func.id in DOCUMENT_CALLS:
            self.calls.append(node)
        self.generic_visit(node)


def element_refs(module: A.Module) -> list[A.ElementRef]:
    """Every ``$screen__element`` of ``module``, in order (a run without a document refuses them)."""
    finder = _DocumentUses()
    finder.visit(module)
    return sorted(finder.refs, key=lambda r: (r.span.line, r.span.column))


def first_document_use(module: A.Module) -> Span | None:
    """Where ``module`` first needs an app document: an element, or a call on the document's app
    (``launch_app``...); None when screen-level actions are all it does on the device."""
    finder = _DocumentUses()
    finder.visit(module)
    spans = [n.span for n in (*finder.refs, *finder.calls)]
    return min(spans, key=lambda s: (s.line, s.column)) if spans else None


class _TextCalls(NodeVisitor[None]):
    def __init__(self) -> None:
        self.found: list[tuple[A.Call, A.Constant]] = []

    def visit_Call(self, node: A.Call) -> None:
        if isinstance(node.func, A.Name) and node.func.id in TEXT_CALLS:
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.name == "text"), None)
            if isinstance(arg, A.Constant) and isinstance(arg.value, str) and arg.value.strip():
                self.found.append((node, arg))
        self.generic_visit(node)


def text_notes(module: A.Module, symbols: SymbolTable | None) -> list[Diagnostic]:
    """``info[text-element]`` for each literal text of a screen-level call that the document gives an
    element: "'Settings' is $main__settings_button" (the element's screen, kind and what it does)."""
    if symbols is None:
        return []
    texts = element_texts(symbols)
    if not texts:
        return []
    finder = _TextCalls()
    finder.visit(module)
    notes: list[Diagnostic] = []
    for _call, arg in finder.found:
        assert isinstance(arg.value, str)
        names = texts.get(arg.value.strip().casefold())
        if not names:
            continue
        shown = " or ".join(f"${n}" for n in names[:3]) + (f" (and {len(names) - 3} more)" if len(names) > 3 else "")
        notes.append(Diagnostic("text-element", INFO, arg.span, f"{arg.value!r} is {shown}",
                                hint=f"${names[0]}.tap() finds it by the document's identifiers, and from "
                                     "another screen goes there first"))
    return notes
