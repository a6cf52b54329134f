"""The language's API: the element methods and API functions, each one registry entry beside its
implementation (on the ``UIRuntime`` protocol).

    $list.match("Rock").tap()       # element methods: ELEMENT entries
    back()                          # API functions: GLOBAL entries
    tap($x)                         # the AutoDroid-V2 spelling of an element method (legacy_global)

Each implementation gets an ``ApiCall`` (``tapir.dsl.registry``): the runtime, the element, the
arguments bound and checked against the signature; it returns only script values (what the
runtime returns is checked). Adding a method is adding an ``Entry`` here (or registering one
elsewhere): the interpreter, checker, page objects, prompt text and the language service all
read the registry.

The names older code imports from here stay: ``Kind`` and the kind sets (``tapir.dsl.types``),
and live views of the registry (``ELEMENT_METHODS``, ``GLOBALS``, ``BUILTINS``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tapir.core.errors import ScriptError, Span, WaitTimeout
from tapir.core.watchers import DEFAULT_LIMIT, Watcher
from tapir.dsl.budget import budget_exceeded
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace
from tapir.dsl.safety_calls import allow_impl, secret_impl
from tapir.dsl.types import ALL_KINDS, LIST_KINDS, SCROLL_KINDS, TEXT_KINDS, Kind
from tapir.dsl.values import QUERY_SCALARS, ElementHandle

if TYPE_CHECKING:
    from tapir.dsl.runtime_api import UIRuntime

__all__ = [
    "ALL_KINDS", "BUILTINS", "ELEMENT_METHODS", "GLOBALS", "LIST_KINDS", "SCROLL_DIRECTIONS", "SCROLL_KINDS",
    "TEXT_KINDS", "Kind", "expect_handle", "legacy_globals", "methods_for",
]

SCROLL_DIRECTIONS = ("up", "down", "left", "right", "page_up", "page_down", "page_left", "page_right")


def expect_handle(v: Any, span: Span) -> ElementHandle:
    """What the runtime returned, refused unless it is an element."""
    if type(v) is not ElementHandle:
        raise ScriptError(f"internal error: the device runtime returned {type(v).__name__}, not an element", span)
    return v


def _tap(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.tap(call.handle, call.args["child"], call.span)


def _long_tap(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.long_tap(call.handle, call.args["child"], call.span)


def _set_text(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.set_text(call.handle, call.args["text"], call.span)


def _scroll(call: ApiCall) -> bool:
    assert call.handle is not None
    r = call.runtime.scroll(call.handle, call.args["direction"], call.span)
    if type(r) is not bool:
        raise ScriptError(f"internal error: scroll() returned {type(r).__name__}, not bool", call.span)
    return r


def _get_text(call: ApiCall) -> str:
    assert call.handle is not None
    r = call.runtime.get_text(call.handle, call.args["child"], call.span)
    if r is None:
        return ""
    if type(r) is not str:
        raise ScriptError(f"internal error: get_text() returned {type(r).__name__}, not str", call.span)
    return r


def _get_attributes(call: ApiCall) -> dict[str, Any]:
    assert call.handle is not None
    r = call.runtime.get_attributes(call.handle, call.args["child"], call.span)
    if type(r) is not dict or not all(type(k) is str and type(x) in QUERY_SCALARS for k, x in r.items()):
        raise ScriptError("internal error: get_attributes() must return a dict of str to str/bool", call.span)
    return dict(r)


def _match(call: ApiCall) -> ElementHandle:
    assert call.handle is not None
    return expect_handle(call.runtime.match(call.handle, call.args["query"], call.span), call.span)


def _back(call: ApiCall) -> None:
    call.runtime.back(call.span)


def _enter(call: ApiCall) -> None:
    call.runtime.enter(call.span)


# -- waiting, app control, screenshots, watchers, parameters -------------------------------------


def seconds_argument(call: ApiCall, name: str = "timeout") -> float:
    """The call's argument ``name`` as a finite number of seconds >= 0 (the wait calls' timeouts)."""
    value = float(call.args[name])
    if not math.isfinite(value) or value < 0:
        raise ScriptError(f"{call.entry.name}() argument '{name}' must be a number of seconds >= 0, "
                          f"not {call.args[name]!r}", call.span)
    return value


def _simulated(rt: UIRuntime) -> float:
    """The seconds a runtime with a simulated clock has let pass (``UIRuntime`` docstring)."""
    fn = getattr(rt, "simulated_seconds", None)
    return float(fn()) if callable(fn) else 0.0


def _timed(call: ApiCall, seconds: float, what: str, fn: Callable[[UIRuntime, float], Any]) -> Any:
    """Run a wait of at most ``seconds`` on the runtime, within the time budget: the wait is cut
    where the budget ends (and then fails as the budget), and simulated seconds are charged."""
    meter = getattr(call.host, "meter", None)
    rt = call.runtime
    limit = seconds if meter is None else min(seconds, meter.remaining())
    before = _simulated(rt)
    try:
        result = fn(rt, limit)
    except WaitTimeout:
        if limit < seconds:
            raise _out_of_time(call, what) from None
        raise
    finally:
        if meter is not None:
            meter.simulated_s += _simulated(rt) - before
    if result is False and limit < seconds:
        raise _out_of_time(call, what)
    return result


def _out_of_time(call: ApiCall, what: str) -> Exception:
    limit = call.host.meter.budgets.timeout_s
    return budget_exceeded("time", limit, f"{what} was still waiting when the script's {limit:g} s ran out",
                           call.span)


def _exists(call: ApiCall) -> bool:
    handle = call.handle
    assert handle is not None
    timeout = seconds_argument(call, "timeout")
    found = _timed(call, timeout, f"{handle}.exists()",
                   lambda rt, limit: rt.wait_for(handle, False, limit, call.span, watchers=False))
    if type(found) is not bool:
        raise ScriptError(f"internal error: exists() returned {type(found).__name__}, not bool", call.span)
    return found


def _waiter(gone: bool) -> Callable[[ApiCall], None]:
    def wait(call: ApiCall) -> None:
        handle = call.handle
        assert handle is not None
        timeout = seconds_argument(call, "timeout")
        _timed(call, timeout, f"{handle}.{call.entry.name}()",
               lambda rt, limit: rt.wait_for(handle, gone, limit, call.span, must=True))

    return wait


def _wait_text(call: ApiCall) -> None:
    text = call.args["text"]
    if not text.strip():
        raise ScriptError("wait_text() needs a text to wait for, not an empty one", call.span)
    timeout = seconds_argument(call, "timeout")
    _timed(call, timeout, f"wait_text({text!r})",
           lambda rt, limit: rt.wait_for(text, False, limit, call.span, must=True))


def _sleep(call: ApiCall) -> None:
    seconds = seconds_argument(call, "seconds")
    host = call.host
    if host is not None:
        host.meter.reserve_time(seconds, call.span, f"sleep({seconds:g})")
        if not host.has_device():  # a script without a device sleeps here, in short pieces so
            end = time.monotonic() + seconds  # that an interrupt (Ctrl-C in the REPL) is not kept waiting
            while (left := end - time.monotonic()) > 0:
                host.meter.check_interrupt(call.span)
                time.sleep(min(left, 0.05))
            host.meter.check_interrupt(call.span)
            return
    _timed(call, seconds, f"sleep({seconds:g})", lambda rt, _: rt.sleep(seconds, call.span))


def _app_action(action: str) -> Callable[[ApiCall], None]:
    def control(call: ApiCall) -> None:
        call.runtime.app(action, call.args.get("args"), call.span)

    return control


def _screenshot(call: ApiCall) -> str:
    name = call.args["name"]
    if name is not None and not name.strip():
        raise ScriptError("screenshot() needs a name with some letters in it (or no name at all)", call.span)
    path = call.runtime.screenshot(name, call.span)
    if type(path) is not str:
        raise ScriptError(f"internal error: screenshot() returned {type(path).__name__}, not str", call.span)
    return path


def _plain(call: ApiCall, value: ElementHandle, what: str) -> str:
    if value.path:
        raise ScriptError(f"watch() {what} an element of the document, not an item or child of one ({value})",
                          call.span, hint="give the element alone, e.g. $rate_dialog__later_button")
    return value.name


def _watch(call: ApiCall) -> None:
    tap, when, limit = call.args["tap"], call.args["when"], call.args["limit"]
    if limit < 1:
        raise ScriptError(f"watch() argument 'limit' must be at least 1, not {limit}", call.span)
    for value in (tap, when):
        if isinstance(value, str) and not value.strip():
            raise ScriptError("watch() needs a text to look for, not an empty one", call.span)
    tap_name = _plain(call, tap, "taps") if isinstance(tap, ElementHandle) else None
    when_name = _plain(call, when, "is triggered by") if isinstance(when, ElementHandle) else None

    def shown(value: Any, name: str | None) -> str:
        return f"${name}" if name is not None else repr(value)

    label = f"watch({shown(tap, tap_name)}" + (f", when={shown(when, when_name)})" if when is not None else ")")
    watcher = Watcher(label, tap=tap_name, tap_text=None if tap_name else tap, when=when_name,
                      when_text=when if isinstance(when, str) else None, limit=limit)
    call.runtime.watch(watcher, call.span)


def _param(call: ApiCall) -> str:
    inputs = getattr(call.host, "inputs", None) or ScriptInputs()
    return inputs.param(call.args["name"], call.args["default"], call.span)


_CHILD = {"child": "a child element of this list item to act on instead"}
_WAIT: dict[str, Any] = {"needs_device": True, "navigates": False}

for _entry in (
    Entry.define("tap(child: element = None) -> None", Namespace.ELEMENT,
                 "Tap the element (or its child element).", _tap, params=_CHILD, legacy_global=True,
                 needs_device=True, acts_on_device=True),
    Entry.define("long_tap(child: element = None) -> None", Namespace.ELEMENT,
                 "Long-press the element (or its child element).", _long_tap, params=_CHILD, legacy_global=True,
                 needs_device=True, acts_on_device=True),
    Entry.define("set_text(text: str | secret) -> None", Namespace.ELEMENT, "Replace the text of an editable field.",
                 _set_text, params={"text": "the text to enter, replacing what is there (a secret() only into a "
                                            "password field)"}, kinds=TEXT_KINDS,
                 legacy_global=True, needs_device=True, acts_on_device=True),
    Entry.define("scroll(direction: str = 'down') -> bool", Namespace.ELEMENT,
                 "Scroll the element (default down). Returns True when nothing moved, i.e. the end was reached.",
                 _scroll, params={"direction": "where to scroll"}, choices={"direction": SCROLL_DIRECTIONS},
                 kinds=SCROLL_KINDS, legacy_global=True, needs_device=True, acts_on_device=True),
    Entry.define("get_text(child: element = None) -> str", Namespace.ELEMENT,
                 "The visible text of the element (or its child element); '' if none.", _get_text, params=_CHILD,
                 legacy_global=True, needs_device=True),
    Entry.define("get_attributes(child: element = None) -> dict", Namespace.ELEMENT,
                 "The element's state: keys 'selected', 'checked', 'enabled', 'focused', 'scrollable', "
                 "'editable', 'clickable' (bool) and 'text', 'content_desc', 'resource_id' (str).",
                 _get_attributes, params=_CHILD, legacy_global=True, needs_device=True),
    Entry.define("match(query: str | dict) -> item", Namespace.ELEMENT,
                 "The item of the list that matches the text (exact, then case-insensitive, then fuzzy) "
                 "or whose attributes equal the dict; scrolls to find it.", _match,
                 params={"query": "an item's text, or attributes such as {'selected': True}"}, kinds=LIST_KINDS,
                 needs_device=True),
    Entry.define("back() -> None", Namespace.GLOBAL, "Press the BACK key.", _back,
                 needs_device=True, acts_on_device=True),
    Entry.define("enter() -> None", Namespace.GLOBAL, "Press the ENTER key, e.g. to submit a search.", _enter,
                 needs_device=True, acts_on_device=True),
    Entry.define("exists(timeout: float = 0) -> bool", Namespace.ELEMENT,
                 "Whether the element is on the screen now; with a timeout, waits up to that many seconds for "
                 "it to appear. Never navigates, scrolls or taps.", _exists,
                 params={"timeout": "seconds to keep looking (0: look once)"}, **_WAIT),
    Entry.define("wait(timeout: float = 10) -> None", Namespace.ELEMENT,
                 "Wait until the element is on the screen (never navigates); fails after timeout seconds.",
                 _waiter(gone=False), params={"timeout": "seconds before the wait fails"}, **_WAIT),
    Entry.define("wait_gone(timeout: float = 10) -> None", Namespace.ELEMENT,
                 "Wait until the element is no longer on the screen (a spinner, a dialog closing); fails after "
                 "timeout seconds.", _waiter(gone=True), params={"timeout": "seconds before the wait fails"},
                 **_WAIT),
    Entry.define("wait_text(text: str, timeout: float = 10) -> None", Namespace.GLOBAL,
                 "Wait until a view shows the text (whole, ignoring case); fails after timeout seconds.", _wait_text,
                 params={"text": "the text to wait for", "timeout": "seconds before the wait fails"}, **_WAIT),
    Entry.define("sleep(seconds: float) -> None", Namespace.GLOBAL,
                 "Pause for some seconds (counted against the time budget). Prefer waiting for what you expect.",
                 _sleep, params={"seconds": "how long"}, navigates=False),
    Entry.define("launch_app(args: dict = None) -> None", Namespace.GLOBAL,
                 "Start the app (or bring it to the front where it was).", _app_action("launch"),
                 params={"args": "extras for the launch intent, e.g. {'tab': 'alarms'}"},
                 needs_device=True, acts_on_device=True, navigates=False),
    Entry.define("stop_app() -> None", Namespace.GLOBAL, "Force-stop the app; the next launch starts it afresh.",
                 _app_action("stop"), needs_device=True, acts_on_device=True, navigates=False),
    Entry.define("clear_app() -> None", Namespace.GLOBAL,
                 "Stop the app and wipe its data, as if freshly installed.", _app_action("clear"),
                 needs_device=True, acts_on_device=True, navigates=False),
    Entry.define("screenshot(name: str = None) -> str", Namespace.GLOBAL,
                 "Save a screenshot with the run's artifacts; returns the file's path.", _screenshot,
                 params={"name": "the file name, without .png (default: numbered)"}, needs_device=True,
                 navigates=False),
    Entry.define(f"watch(tap: element | str, when: element | str = None, limit: int = {DEFAULT_LIMIT}) -> None",
                 Namespace.GLOBAL,
                 "From now on, whenever `when` (an element, or a text) shows up where the script expected "
                 "something else, tap `tap` (an element, or the view showing a text; by default when `tap` "
                 "itself shows): for interruptions such as rating prompts and permission dialogs.", _watch,
                 params={"tap": "the element (or text) to tap", "when": "what shows the interruption "
                                                                        "(default: what is tapped)",
                         "limit": "at most this many times in the run"}, needs_device=True, navigates=False),
    Entry.define("param(name: str, default: str = None) -> str", Namespace.GLOBAL,
                 "A parameter of the run (`tapir run s.tap --param name=value`), as text; `default` when it "
                 "was not given.", _param,
                 params={"name": "the parameter's name", "default": "the value when it is not given"},
                 navigates=False, page_object=False),
    Entry.define("secret(name: str) -> secret", Namespace.GLOBAL,
                 "A secret of the run (a password, a token): from the file of `--secrets FILE`, else the "
                 "environment variable TAPIR_SECRET_<name>. It prints as *****; it can only be typed, with "
                 "set_text() into a password field.", secret_impl,
                 params={"name": "the secret's name, e.g. 'PASSWORD' (TAPIR_SECRET_PASSWORD)"},
                 navigates=False, page_object=False),
    Entry.define("allow(what: str | element) -> None", Namespace.GLOBAL,
                 "Allow what the guards refuse, for the rest of the run: 'sensitive' (every sensitive action), a "
                 "word such as 'delete' or 'payment', an element ($screen__element), or 'secrets' (secrets in "
                 "fields that are not password fields).", allow_impl,
                 params={"what": "'sensitive', a word such as 'delete', an element, or 'secrets'"},
                 navigates=False, page_object=False, in_prompts=False),
):
    REGISTRY.add(_entry)

#: Live views of the registry, by name (what older code imports).
ELEMENT_METHODS: Mapping[str, Entry] = REGISTRY.view(Namespace.ELEMENT)
GLOBALS: Mapping[str, Entry] = REGISTRY.view(Namespace.GLOBAL)
BUILTINS: Mapping[str, Entry] = REGISTRY.view(Namespace.BUILTIN)


def legacy_globals() -> dict[str, Entry]:
    """The element methods also callable as ``name($element, ...)``."""
    return {e.name: e for e in REGISTRY.legacy_globals()}


def methods_for(kind: Kind) -> list[Entry]:
    """The element methods legal on ``kind``, in registry order."""
    return REGISTRY.methods_for(kind)
