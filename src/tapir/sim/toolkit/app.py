"""``ToolkitApp``: a simulated app declared as screens, dialogs and menus over a data model.

A subclass holds its data in ``self.state`` (made fresh by ``initial_state()``) and declares its
views as methods that build widgets from that state::

    class MusicApp(ToolkitApp):
        package = "org.tapir.music"
        launch_screen = "songs"

        @screen(".activities.MainActivity")
        def songs(self) -> Screen: ...

        @dialog
        def delete_song(self, song: int) -> Dialog: ...

Handlers in the widgets change ``self.state`` and navigate with ``open`` (a screen is pushed, a
dialog or menu goes on top), ``switch`` (replace the screen: tabs), ``close`` and ``back``. This
class does the rest of the ``SimApp`` protocol: the back stack, layout, the uiautomator dump,
touch dispatch, scrolling, text entry into the focused input, keys, drift and the screenshot.

Time is simulated: ``self.now`` (seconds) moves on by ``time_step_s`` with every input event and
by ``advance()``; nothing reads the wall clock, so a run is a pure function of its inputs.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tapir.sim.errors import SimUsageError
from tapir.sim.toolkit.dialogs import DialogBuilders
from tapir.sim.toolkit.drift import GENERIC_TEXTS, Drift, apply_drift
from tapir.sim.toolkit.dump import dump_xml
from tapir.sim.toolkit.layout import (
    SCREEN_H,
    SCREEN_W,
    FormState,
    LayoutContext,
    layout_dialog,
    layout_menu,
    layout_screen,
)
from tapir.sim.toolkit.render import render_png
from tapir.sim.toolkit.tree import Node, Rect, scroll_target, touch_target
from tapir.sim.toolkit.widgets import (
    Dialog,
    ListView,
    Menu,
    Screen,
    Widget,
    child_fields,
)

#: A swipe shorter than this is a touch (``input swipe x y x y 800`` is how scripts long-press).
TOUCH_SLOP = 16
LONG_PRESS_MS = 500

KEY_CODES = {
    "3": "HOME", "4": "BACK", "66": "ENTER", "67": "DEL", "112": "FORWARD_DEL", "82": "MENU",
    "187": "APP_SWITCH", "26": "POWER", "24": "VOLUME_UP", "25": "VOLUME_DOWN", "61": "TAB",
    "122": "MOVE_HOME", "123": "MOVE_END", "111": "ESCAPE", "84": "SEARCH",
}


def key_name(keycode: str) -> str:
    """``KEYCODE_BACK``, ``BACK``, ``back`` and ``4`` all name the same key: ``BACK``."""
    k = keycode.strip().upper()
    k = k.removeprefix("KEYCODE_")
    return KEY_CODES.get(k, k)


def screen(activity: str = ".MainActivity") -> Callable[[Callable[..., Screen]], Callable[..., Screen]]:
    """Declare a screen builder; ``activity`` is relative to the package when it starts with ``.``."""

    def mark(fn: Callable[..., Screen]) -> Callable[..., Screen]:
        fn._sim_view = ("screen", activity)  # type: ignore[attr-defined]
        return fn

    return mark


def dialog(fn: Callable[..., Dialog]) -> Callable[..., Dialog]:
    """Declare a dialog builder."""
    fn._sim_view = ("dialog", None)  # type: ignore[attr-defined]
    return fn


def menu(fn: Callable[..., Menu]) -> Callable[..., Menu]:
    """Declare a popup menu builder (anchored at the widget the user tapped to open it)."""
    fn._sim_view = ("menu", None)  # type: ignore[attr-defined]
    return fn


@dataclass
class Layer:
    """One entry of the back stack: a screen, or a dialog or menu above it."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    form: FormState = field(default_factory=FormState)
    anchor: Rect | None = None
    #: A menu opened from a toolbar's ``More options`` carries its items instead of a builder.
    items: tuple[Widget, ...] | None = None
    #: The same items as the undrifted app labels them (kept while touches are audited).
    plain_items: tuple[Widget, ...] | None = None


def _list_keys(drifted: Widget, plain: Widget) -> list[tuple[str, str]]:
    """(drifted, plain) scroll keys of the lists of two builds of one view (same structure)."""
    out: list[tuple[str, str]] = []
    stack = [(drifted, plain)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            continue
        if isinstance(a, ListView):
            out.append((a.id or "list", b.id or "list"))
        for name in child_fields(a):
            va, vb = getattr(a, name), getattr(b, name)
            if isinstance(va, Widget) and isinstance(vb, Widget):
                stack.append((va, vb))
            elif isinstance(va, tuple) and isinstance(vb, tuple) and len(va) == len(vb):
                stack.extend(zip(va, vb, strict=True))
    return out


@dataclass(frozen=True)
class TouchAudit:
    """One touch, as an auditor of a drifted app sees it (``ToolkitApp.audit``).

    ``plain_xml`` is the touched window laid out as this app version lays it out (widgets
    inserted, lists reordered) but labelled as the undrifted app labels it (texts, descriptions
    and resource ids): view ``i`` of it is view ``i`` of the dump the touch was aimed at, so
    the document's own identifiers say what the touched view is. None when the two do not have
    the same views (a reworded label that wrapped onto another line and pushed a row out).
    """

    x: int
    y: int
    long: bool
    #: the screen, dialog or menu that was on top
    view: str
    #: pre-order index (the dump's node id) of the view that took the touch; None: none did
    target: int | None
    plain_xml: str | None


@dataclass
class Rendered:
    layer: Layer
    widget: Widget
    root: Node
    inputs: dict[str, Node]


class ToolkitApp(DialogBuilders):
    """Base of the sample apps (implements ``tapir.sim.app.SimApp``)."""

    package: ClassVar[str] = "org.tapir.app"
    label: ClassVar[str] = "App"
    launch_screen: ClassVar[str] = "main"
    time_step_s: ClassVar[int] = 1
    #: Simulated seconds since midnight when the app is reset.
    start_time: ClassVar[int] = 10 * 3600 + 8 * 60
    #: App-specific rewordings for text drift, added to the generic ones.
    drift_texts: ClassVar[dict[str, tuple[str, ...]]] = {}
    _views: ClassVar[dict[str, tuple[str, str | None]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        views: dict[str, tuple[str, str | None]] = {}
        for base in reversed(cls.__mro__):
            for name, value in vars(base).items():
                mark = getattr(value, "_sim_view", None)
                if mark is not None:
                    views[name] = mark
        cls._views = views

    def __init__(self) -> None:
        self.drift: Drift | None = None
        #: When a list, every touch is recorded here (``TouchAudit``); survives ``reset()``.
        self.audit: list[TouchAudit] | None = None
        self.reset()

    # ------------------------------------------------------------------------------------ the app's part

    def initial_state(self) -> Any:
        """The app's data model when freshly installed."""
        return None

    def on_time(self, seconds: int) -> None:
        """Called after simulated time moved on by ``seconds`` (running timers)."""

    # ------------------------------------------------------------------------------------ SimApp protocol

    @property
    def activity(self) -> str:
        act = self._views[self.current_screen][1] or ".MainActivity"
        return self.package + act if act.startswith(".") else act

    @property
    def screen_size(self) -> tuple[int, int]:
        return (SCREEN_W, SCREEN_H)

    def reset(self) -> None:
        self.state = self.initial_state()
        self.now = self.start_time
        self.toasts: list[str] = []
        #: Inputs that found nothing to act on (text with no focused field, taps on nothing...).
        self.unhandled: list[str] = []
        self.stack: list[Layer] = [Layer("screen", self.launch_screen)]
        self._last_tap: Rect | None = None
        self._building: Layer | None = None
        #: The layer whose focused input opened the on-screen keyboard (``keyboard_shown``).
        self._keyboard: Layer | None = None

    def launch(self) -> None:
        self.stack = [Layer("screen", self.launch_screen)]

    @property
    def launch_activity(self) -> str:
        """The activity the launcher starts (what ``cmd package resolve-activity`` names)."""
        act = self._views[self.launch_screen][1] or ".MainActivity"
        return self.package + act if act.startswith(".") else act

    def on_intent(self, extras: dict[str, str]) -> None:
        """The extras of the intent that started the app or brought it to the front (``am start
        --es KEY VALUE``...), as text; apps with debug switches read them here."""

    def dump_xml(self) -> str:
        return dump_xml([self._render(self.stack[-1]).root])

    def screenshot_png(self) -> bytes:
        first = max(i for i, layer in enumerate(self.stack) if layer.kind == "screen")
        windows = [(self._render(layer).root, layer.kind == "dialog") for layer in self.stack[first:]]
        hours, minutes = divmod(self.now // 60 % (24 * 60), 60)
        return render_png(windows, self.screen_size, status_text=f"{hours:02d}:{minutes:02d}")

    def tap(self, x: int, y: int) -> None:
        self._touch(x, y, long=False)
        self._tick()

    def long_tap(self, x: int, y: int) -> None:
        self._touch(x, y, long=True)
        self._tick()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        if abs(x2 - x1) < TOUCH_SLOP and abs(y2 - y1) < TOUCH_SLOP:
            self._touch(x1, y1, long=duration_ms >= LONG_PRESS_MS)
        else:
            self._scroll(x1, y1, x2, y2)
        self._tick()

    def input_text(self, text: str) -> None:
        layer = self.stack[-1]
        rendered = self._render(layer)
        name = layer.form.focus
        node = rendered.inputs.get(name) if name else None
        if name is None or node is None or not node.enabled:
            self.unhandled.append(f"text {text!r}: no focused input")
        else:
            old = "" if layer.form.select_all else layer.form.fields.get(name, "")
            layer.form.fields[name] = old + text
            layer.form.select_all = False
        self._tick()

    @property
    def keyboard_shown(self) -> bool:
        """Whether the on-screen keyboard shows: an input of the top layer was tapped and the
        keyboard was not hidden since (``dumpsys input_method``'s ``mInputShown``)."""
        layer = self._keyboard
        return layer is not None and layer is self.stack[-1] and layer.form.focus is not None

    def key(self, keycode: str) -> bool:
        name = key_name(keycode)
        try:
            if name == "ESCAPE" and self.keyboard_shown:
                self._keyboard = None  # ESCAPE closes the keyboard, as an IME does
                return True
            if name == "BACK":
                return self._back_key()
            if name in ("ENTER", "DEL", "FORWARD_DEL", "MOVE_END", "MOVE_HOME", "TAB"):
                self._edit_key(name)
                return True
            return False
        finally:
            self._tick()

    # ------------------------------------------------------------------------------------ for handlers

    def open(self, name: str, **params: Any) -> None:
        """Open a declared view: a screen is pushed (closing dialogs), a dialog or menu goes on top."""
        kind = self._kind(name, params)
        if kind == "screen":
            self._drop_overlays()
            self.stack.append(Layer("screen", name, params))
        else:
            self.stack.append(Layer(kind, name, params, anchor=self._last_tap))

    def switch(self, name: str, **params: Any) -> None:
        """Replace the current screen (tabs, or a screen that finishes into another)."""
        if self._kind(name, params) != "screen":
            raise SimUsageError(f"{name} is not a screen")
        self._drop_overlays()
        self.stack[-1] = Layer("screen", name, params)

    def close(self) -> None:
        """Close the dialog or menu on top (does nothing on a screen)."""
        if self.stack[-1].kind != "screen":
            self.stack.pop()

    def close_all(self) -> None:
        """Close every dialog and menu above the current screen."""
        self._drop_overlays()

    def back(self) -> None:
        """Leave the current screen (closing its dialogs), as ``Navigate up`` does."""
        self._drop_overlays()
        if len(self.stack) > 1:
            self.stack.pop()

    def field(self, name: str, default: str = "") -> str:
        """The text of input ``name``: in the view being built, else in the topmost layer that has it.

        ``default`` must be the input's initial ``value``, so a builder sees the same text on its first
        build as the layout will put into the field.
        """
        if self._building is not None:
            return self._building.form.fields.get(name, default)
        for layer in reversed(self.stack):
            if name in layer.form.fields:
                return layer.form.fields[name]
        return default

    def set_field(self, name: str, value: str) -> None:
        for layer in reversed(self.stack):
            if name in layer.form.fields:
                layer.form.fields[name] = value
                return
        self.stack[-1].form.fields[name] = value

    def toast(self, text: str) -> None:
        """A toast: recorded for tests; toasts are not in uiautomator dumps on a phone either."""
        self.toasts.append(text)

    def advance(self, seconds: int) -> None:
        """Let simulated time pass."""
        if seconds > 0:
            self.now += seconds
            self.on_time(seconds)

    # ------------------------------------------------------------------------------------ inspection

    @property
    def current_screen(self) -> str:
        return next(layer.name for layer in reversed(self.stack) if layer.kind == "screen")

    @property
    def current_dialog(self) -> str | None:
        """The dialog or menu on top, or ``None``."""
        top = self.stack[-1]
        return None if top.kind == "screen" else top.name

    @property
    def params(self) -> dict[str, Any]:
        return self.stack[-1].params

    def set_drift(self, drift: Drift | str | None, seed: int = 0, rate: float = 0.5) -> None:
        """Build every view as a drifted app version would (``None`` turns drift off).

        Drift is the installed version, so it survives ``reset()``.
        """
        self.drift = Drift(drift, seed, rate) if isinstance(drift, str) else drift

    def window(self) -> Node:
        """The laid-out top window (what ``dump_xml`` serialises)."""
        return self._render(self.stack[-1]).root

    def find_all(self, *, id: str | None = None, text: str | None = None, desc: str | None = None) -> list[Node]:
        """Nodes of the top window matching a short resource id, an exact text and/or a description."""
        suffix = f":id/{id}" if id is not None and ":id/" not in id else id

        def match(n: Node) -> bool:
            return ((suffix is None or n.resource_id == suffix or n.resource_id.endswith(suffix))
                    and (text is None or n.text == text) and (desc is None or n.desc == desc))

        return self.window().find_all(match)

    def find(self, *, id: str | None = None, text: str | None = None, desc: str | None = None) -> Node | None:
        found = self.find_all(id=id, text=text, desc=desc)
        return found[0] if found else None

    def tap_on(self, *, id: str | None = None, text: str | None = None, desc: str | None = None) -> Node:
        """Tap the centre of the first matching node (raises ``LookupError`` when there is none)."""
        node = self.find(id=id, text=text, desc=desc)
        if node is None:
            raise LookupError(f"nothing on {self.current_dialog or self.current_screen} with "
                              f"id={id!r} text={text!r} desc={desc!r}")
        self.tap(*node.bounds.center)
        return node

    # ------------------------------------------------------------------------------------ machinery

    def _kind(self, name: str, params: dict[str, Any] | None = None) -> str:
        view = self._views.get(name)
        if view is None:
            raise SimUsageError(f"{type(self).__name__} has no view {name!r}; it has {', '.join(sorted(self._views))}")
        if params is not None:
            try:
                inspect.signature(getattr(self, name)).bind(**params)
            except TypeError as exc:
                raise SimUsageError(f"view {name!r} cannot open with {params}: {exc}") from None
        return view[0]

    def _drop_overlays(self) -> None:
        while len(self.stack) > 1 and self.stack[-1].kind != "screen":
            self.stack.pop()

    def _build(self, layer: Layer, drift: Drift | None = None, *, plain: bool = False) -> Widget:
        drift = self.drift if drift is None and not plain else drift
        items = layer.plain_items if plain and layer.plain_items is not None else layer.items
        if items is not None:
            widget: Widget = Menu(items=items)
        else:
            self._building = layer
            try:
                widget = getattr(self, layer.name)(**layer.params)
            finally:
                self._building = None
        if drift is not None:
            widget = apply_drift(widget, drift, layer.name, {**GENERIC_TEXTS, **self.drift_texts})
        return widget

    def _render(self, layer: Layer, drift: Drift | None = None, *, plain: bool = False) -> Rendered:
        widget = self._build(layer, drift, plain=plain)
        ctx = LayoutContext(self.package, layer.form)
        if isinstance(widget, Screen):
            root = layout_screen(widget, ctx)
        elif isinstance(widget, Dialog):
            root = layout_dialog(widget, ctx)
        elif isinstance(widget, Menu):
            root = layout_menu(widget, layer.anchor or Rect(SCREEN_W - 150, 80, SCREEN_W, 227), ctx)
        else:
            raise TypeError(f"view {layer.name} built a {type(widget).__name__}, not a Screen, Dialog or Menu")
        return Rendered(layer, widget, root, ctx.inputs)

    def _tick(self) -> None:
        self.advance(self.time_step_s)

    def _touch(self, x: int, y: int, *, long: bool) -> None:
        layer = self.stack[-1]
        rendered = self._render(layer)
        if layer.kind != "screen" and not rendered.root.bounds.contains(x, y):
            self._audit(x, y, long, layer, rendered, None)
            # Outside a popup or dialog: the window is dismissed and the touch goes no further.
            cancelable = not isinstance(rendered.widget, Dialog) or rendered.widget.cancelable
            if cancelable:
                self.stack.pop()
            return
        node = touch_target(rendered.root, x, y, long=long)
        if node is None:
            if long:
                node = touch_target(rendered.root, x, y)  # a long press on a plain button is a click
        plain = self._audit(x, y, long, layer, rendered, node)
        if node is None:
            self.unhandled.append(f"{'long_tap' if long else 'tap'} {x},{y}: nothing there")
            return
        if not node.enabled:
            return
        self._last_tap = node.bounds
        if node.input is not None:
            layer.form.focus = node.input.name
            self._keyboard = layer
            layer.form.select_all = long or node.input.select_on_focus
        if node.popup is not None:
            plain_items = plain.popup if plain is not None else None
            self.stack.append(Layer("menu", "overflow_menu", anchor=node.bounds, items=node.popup,
                                    plain_items=plain_items))
            return
        handler = node.on_long_tap if long and node.on_long_tap else node.on_tap
        if handler is not None:
            if layer.kind == "menu":
                self.stack.pop()  # choosing an item dismisses the popup before the item acts
            handler()

    def _audit(self, x: int, y: int, long: bool, layer: Layer, rendered: Rendered, node: Node | None) -> Node | None:
        """Record the touch when auditing (``TouchAudit``); the touched view's twin in the plain
        window, if any."""
        if self.audit is None:
            return None
        views = list(rendered.root.walk())
        target = next((i for i, n in enumerate(views) if n is node), None) if node is not None else None
        if self.drift is None:
            self.audit.append(TouchAudit(x, y, long, layer.name, target, dump_xml([rendered.root])))
            return node
        # laid out on a copy of the form: a layout clamps scroll offsets, and the touch must find
        # the app as it was
        twin = Layer(layer.kind, layer.name, layer.params, copy.deepcopy(layer.form), layer.anchor, layer.items,
                     layer.plain_items)
        plain = self._render(twin, self.drift.structural(), plain=True)
        # a list keeps its scroll offset under its id, which the drift may have renamed
        moved = {b: layer.form.scroll[a] for a, b in _list_keys(rendered.widget, plain.widget)
                 if a != b and a in layer.form.scroll}
        if moved:
            twin.form = copy.deepcopy(layer.form)
            twin.form.scroll.update(moved)
            plain = self._render(twin, self.drift.structural(), plain=True)
        plain_root = plain.root
        plain_views = list(plain_root.walk())
        same = len(plain_views) == len(views) and all(a.cls == b.cls for a, b in zip(views, plain_views, strict=True))
        self.audit.append(TouchAudit(x, y, long, layer.name, target, dump_xml([plain_root]) if same else None))
        return plain_views[target] if same and target is not None else None

    def _scroll(self, x1: int, y1: int, x2: int, y2: int) -> None:
        layer = self.stack[-1]
        node = scroll_target(self._render(layer).root, x1, y1)
        if node is None or node.scroll_key is None:
            self.unhandled.append(f"swipe {x1},{y1} -> {x2},{y2}: nothing scrolls there")
            return
        # Content follows the finger: swiping up moves the viewport down. The end is a hard stop.
        offset = layer.form.scroll.get(node.scroll_key, 0) + (y1 - y2)
        layer.form.scroll[node.scroll_key] = min(max(offset, 0), node.scroll_max)

    def _back_key(self) -> bool:
        top = self.stack[-1]
        if top.kind != "screen":
            widget = self._build(top)
            if not isinstance(widget, Dialog) or widget.cancelable:
                self.stack.pop()
            return True
        widget = self._build(top)
        if isinstance(widget, Screen) and widget.on_back is not None:
            widget.on_back()
            return True
        if len(self.stack) > 1:
            self.stack.pop()
            return True
        return False

    def _edit_key(self, name: str) -> None:
        layer = self.stack[-1]
        rendered = self._render(layer)
        focus = layer.form.focus
        node = rendered.inputs.get(focus) if focus else None
        if focus is None or node is None or node.input is None:
            self.unhandled.append(f"key {name}: no focused input")
            return
        if name == "ENTER":
            if node.input.on_submit is not None:
                node.input.on_submit()
        elif name in ("DEL", "FORWARD_DEL"):
            value = layer.form.fields.get(focus, "")
            layer.form.fields[focus] = "" if layer.form.select_all else value[:-1]
            layer.form.select_all = False
        else:
            layer.form.select_all = False
