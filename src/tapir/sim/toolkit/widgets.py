"""Widgets: the declarative vocabulary a simulated app builds its screens from.

A screen is rebuilt from the app's state after every input, like a view function; widgets are
immutable descriptions with callbacks (``on_tap``) that change the app state. Layout
(``layout.py``) turns a widget tree into laid-out ``Node`` objects with real bounds, which the dump,
the renderer and hit-testing share.

Resource ids are written short (``song_title``) and get the app package prefixed
(``org.tapir.music:id/song_title``); an id that already contains ``:id/`` (``android:id/button1``)
is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import cast

Handler = Callable[[], object]


def _tuple(items: Sequence[Widget | None] | None) -> tuple[Widget, ...]:
    return tuple(w for w in (items or ()) if w is not None)


def present(items: Sequence[Widget | None]) -> tuple[Widget, ...]:
    """A container's widgets as they are stored: ``__post_init__`` dropped the ``None``s apps pass
    for "not shown" and made a tuple (the field's type is what apps may pass)."""
    return cast("tuple[Widget, ...]", items)


@dataclass(frozen=True)
class Widget:
    """Attributes every widget has; subclasses add their own (positional ones first)."""

    _: KW_ONLY
    id: str | None = None
    desc: str = ""
    enabled: bool = True
    selected: bool = False
    on_tap: Handler | None = None
    on_long_tap: Handler | None = None
    #: In a ``Row``: take the natural width instead of sharing the free width.
    wrap: bool = False


def _freeze_children(obj: object, *names: str) -> None:
    # Apps pass lists (often with ``None`` for "not shown"); widgets keep tuples so they stay hashable-ish
    # and immutable.
    for name in names:
        object.__setattr__(obj, name, _tuple(getattr(obj, name)))


# ---------------------------------------------------------------------------------------------- leaves


@dataclass(frozen=True)
class Text(Widget):
    """A ``TextView``. ``style``: display, headline, title, body, caption."""

    text: str
    style: str = "body"
    #: Lines shown before the text is cut (the dump still has the whole text, as on a phone).
    max_lines: int = 0


@dataclass(frozen=True)
class Button(Widget):
    text: str


@dataclass(frozen=True)
class ImageButton(Widget):
    """An icon button: no text, only a content description. ``kind`` picks the dumped class."""

    kind: str = "image_button"  # image_button | action (toolbar item) | image (clickable ImageView)


@dataclass(frozen=True)
class Image(Widget):
    size: int = 126


@dataclass(frozen=True)
class Input(Widget):
    """An ``EditText``. Its value lives in the layer's form state under ``name``."""

    name: str
    hint: str = ""
    #: The value the field starts with when its layer opens (editing existing data).
    value: str = ""
    lines: int = 1
    autofocus: bool = False
    #: Focusing selects the whole value, so the next typed text replaces it (number pickers).
    select_on_focus: bool = False
    password: bool = False
    on_submit: Handler | None = None


@dataclass(frozen=True)
class CheckBox(Widget):
    text: str = ""
    checked: bool = False


@dataclass(frozen=True)
class Switch(Widget):
    text: str = ""
    checked: bool = False


@dataclass(frozen=True)
class Radio(Widget):
    text: str = ""
    checked: bool = False


@dataclass(frozen=True)
class Spacer(Widget):
    height: int = 42


# ---------------------------------------------------------------------------------------------- containers


@dataclass(frozen=True)
class Column(Widget):
    """A vertical ``LinearLayout``."""

    children: Sequence[Widget | None] = ()
    pad_x: int = 0
    pad_y: int = 0
    cls: str = "android.widget.LinearLayout"
    #: Where children that keep their natural width (buttons, icons) sit: ``start`` or ``center``.
    align: str = "start"

    def __post_init__(self) -> None:
        _freeze_children(self, "children")


@dataclass(frozen=True)
class Row(Widget):
    """A horizontal ``LinearLayout``; children are centred vertically."""

    children: Sequence[Widget | None] = ()
    pad_x: int = 0
    pad_y: int = 0
    gap: int = 32
    min_height: int = 0
    cls: str = "android.widget.LinearLayout"

    def __post_init__(self) -> None:
        _freeze_children(self, "children")


@dataclass(frozen=True)
class ListItem(Row):
    """A row of a list (clickable when it has ``on_tap``)."""

    pad_x: int = 42
    pad_y: int = 24
    min_height: int = 147
    cls: str = "android.widget.RelativeLayout"


@dataclass(frozen=True)
class RadioGroup(Column):
    cls: str = "android.widget.RadioGroup"


@dataclass(frozen=True)
class ListView(Widget):
    """A scrolling ``RecyclerView``: only the items inside its viewport reach the dump."""

    items: Sequence[Widget | None] = ()
    #: Shown instead of the list when there are no items (a placeholder ``TextView``).
    empty: Widget | None = None
    #: Height cap when the list is measured by its content (inside a dialog).
    max_height: int = 1260
    cls: str = "androidx.recyclerview.widget.RecyclerView"

    def __post_init__(self) -> None:
        _freeze_children(self, "items")


@dataclass(frozen=True)
class MenuItem(Widget):
    text: str


@dataclass(frozen=True)
class Toolbar(Widget):
    title: str = ""
    #: The navigation button (``Navigate up``); ``None`` on a top-level screen.
    nav: Handler | None = None
    nav_desc: str = "Navigate up"
    #: Toolbar action buttons (``ImageButton(kind="action")`` or ``Button``).
    actions: Sequence[Widget | None] = ()
    #: Items of the overflow menu behind ``More options``.
    menu: Sequence[Widget | None] = ()
    #: Replaces the title by a widget (a search field).
    title_widget: Widget | None = None

    def __post_init__(self) -> None:
        _freeze_children(self, "actions", "menu")


@dataclass(frozen=True)
class Tab(Widget):
    text: str


@dataclass(frozen=True)
class Tabs(Widget):
    """A tab strip (``HorizontalScrollView`` of tab views); the selected tab has ``selected``."""

    tabs: Sequence[Widget | None] = ()

    def __post_init__(self) -> None:
        _freeze_children(self, "tabs")


@dataclass(frozen=True)
class Screen(Widget):
    """A whole activity window: toolbar, a body stacked vertically, bottom widgets, a floating button."""

    toolbar: Toolbar | None = None
    body: Sequence[Widget | None] = ()
    bottom: Sequence[Widget | None] = ()
    fab: Widget | None = None
    #: Called instead of leaving the screen on BACK (e.g. to ask "Discard changes?").
    on_back: Handler | None = None

    def __post_init__(self) -> None:
        _freeze_children(self, "body", "bottom")


@dataclass(frozen=True)
class Dialog(Widget):
    """An alert dialog window: title, message, custom body, up to three buttons."""

    title: str = ""
    message: str = ""
    body: Sequence[Widget | None] = ()
    positive: Button | None = None
    negative: Button | None = None
    neutral: Button | None = None
    #: Tapping outside or BACK closes it.
    cancelable: bool = True

    def __post_init__(self) -> None:
        _freeze_children(self, "body")


@dataclass(frozen=True)
class Menu(Widget):
    """A popup menu window, anchored at the widget that opened it."""

    items: Sequence[Widget | None] = ()

    def __post_init__(self) -> None:
        _freeze_children(self, "items")


#: Per widget class, the fields that hold child widgets (filled lazily by ``child_fields``).
WIDGET_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(widget: Widget) -> tuple[str, ...]:
    """Names of the fields of ``widget`` that hold child widgets (single or tuples)."""
    cls = type(widget)
    names = WIDGET_FIELDS.get(cls)
    if names is None:
        names = tuple(
            f for f in ("children", "items", "actions", "menu", "tabs", "body", "bottom", "toolbar",
                        "fab", "empty", "title_widget", "positive", "negative", "neutral")
            if f in cls.__dataclass_fields__
        )
        WIDGET_FIELDS[cls] = names
    return names


__all__ = [
    "Button", "CheckBox", "Column", "Dialog", "Handler", "Image", "ImageButton", "Input", "ListItem",
    "ListView", "Menu", "MenuItem", "Radio", "RadioGroup", "Row", "Screen", "Spacer", "Switch", "Tab",
    "Tabs", "Text", "Toolbar", "Widget", "child_fields",
]
