"""Layout: a widget tree becomes a window of laid-out ``Node`` objects on a 1080x2400 screen.

Sizes follow a 420 dpi phone (1 dp = 2.625 px): status bar 0-80, gesture bar 2337-2400,
toolbar 56 dp, list rows 56-72 dp, icon buttons 48 dp. The algorithm is two passes like Android's:
``measure`` gives a widget's natural height for a width; ``place`` gives it a rectangle and returns
the node tree. Rows share free width among flexible children; columns stack children and give
the height left over to their lists. Lists are viewports over their items: the items outside the
viewport are not in the tree and the ones on the edge are clipped.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tapir.sim.toolkit.tree import Node, Rect, clip
from tapir.sim.toolkit.widgets import (
    Button,
    CheckBox,
    Column,
    Dialog,
    Image,
    ImageButton,
    Input,
    ListView,
    Menu,
    MenuItem,
    Radio,
    Row,
    Screen,
    Spacer,
    Switch,
    Tab,
    Tabs,
    Text,
    Toolbar,
    Widget,
    present,
)

SCREEN_W = 1080
SCREEN_H = 2400
STATUS_BAR = Rect(0, 0, SCREEN_W, 80)
NAV_BAR = Rect(0, 2337, SCREEN_W, SCREEN_H)
CONTENT = Rect(0, STATUS_BAR.bottom, SCREEN_W, NAV_BAR.top)

TOOLBAR_H = 147
TAB_H = 147
ICON = 126
ACTION_W = 132
BUTTON_H = 126
INPUT_H = 147
CHECK_H = 126
FAB = 147
MARGIN = 42
DIALOG = Rect(63, 0, SCREEN_W - 63, 0)
MENU_W = 588
MENU_ITEM_H = 126

#: style -> (font px, line height px)
STYLES: dict[str, tuple[int, int]] = {
    "display": (160, 220),
    "headline": (84, 118),
    "title": (55, 76),
    "body": (42, 59),
    "caption": (37, 52),
}


@dataclass
class FormState:
    """What the user did to one layer that the app's data does not hold: typed text, focus, scrolling."""

    fields: dict[str, str] = field(default_factory=dict)
    focus: str | None = None
    select_all: bool = False
    autofocused: bool = False
    scroll: dict[str, int] = field(default_factory=dict)


@dataclass
class LayoutContext:
    package: str
    form: FormState
    #: Inputs found while laying out, by field name (for typing into the focused one).
    inputs: dict[str, Node] = field(default_factory=dict)

    def rid(self, short: str | None) -> str:
        if not short:
            return ""
        return short if ":id/" in short else f"{self.package}:id/{short}"


# ---------------------------------------------------------------------------------------------- measuring


def char_width(style: str) -> float:
    return STYLES.get(style, STYLES["body"])[0] * 0.56


def text_lines(text: str, style: str, width: int, max_lines: int = 0) -> int:
    per_line = max(1, int(width / char_width(style)))
    lines = sum(max(1, -(-len(part) // per_line)) for part in (text.split("\n") if text else [""]))
    return min(lines, max_lines) if max_lines else lines


def natural_width(w: Widget) -> int:
    """The width a widget wants when it is not stretched (``wrap_content``)."""
    match w:
        case Text():
            longest = max((len(p) for p in w.text.split("\n")), default=0)
            return int(longest * char_width(w.style)) + 2
        case Button():
            return max(264, int(len(w.text) * char_width("body")) + 96)
        case ImageButton():
            return ACTION_W if w.kind == "action" else ICON
        case Image():
            return w.size
        case CheckBox() | Radio():
            return ICON + (int(len(w.text) * char_width("body")) + 21 if w.text else 0)
        case Switch():
            return 158 + (int(len(w.text) * char_width("body")) + 21 if w.text else 0)
        case Row():
            kids = [natural_width(c) for c in present(w.children)]
            return sum(kids) + w.gap * max(0, len(kids) - 1) + 2 * w.pad_x
        case Column():
            return max((natural_width(c) for c in present(w.children)), default=0) + 2 * w.pad_x
        case Input():
            return 420
        case _:
            return 0


def is_flexible(w: Widget) -> bool:
    """Whether a row child shares the free width (``layout_weight=1``) or keeps its natural width."""
    if w.wrap:
        return False
    match w:
        case Button() | ImageButton() | Image():
            return False
        case CheckBox() | Switch():
            return bool(w.text)
        case _:
            return True


class _MeasureMemo(threading.local):
    #: (id(widget), width) -> height, alive during one layout pass (the widget tree outlives it).
    cache: dict[tuple[int, int], int] | None = None


_MEMO = _MeasureMemo()


@contextmanager
def _layout_pass() -> Iterator[None]:
    # A row is measured by its list, then again when placed; remembering heights for one pass
    # makes layout linear in the number of widgets.
    outer = _MEMO.cache
    _MEMO.cache = {} if outer is None else outer
    try:
        yield
    finally:
        _MEMO.cache = outer


def measure(w: Widget, width: int) -> int:
    """Natural height of ``w`` at ``width``."""
    cache = _MEMO.cache
    if cache is None:
        return _measure(w, width)
    key = (id(w), width)
    height = cache.get(key)
    if height is None:
        height = cache[key] = _measure(w, width)
    return height


def _measure(w: Widget, width: int) -> int:
    match w:
        case Text():
            return text_lines(w.text, w.style, width, w.max_lines) * STYLES.get(w.style, STYLES["body"])[1]
        case Button():
            return BUTTON_H
        case ImageButton():
            return ICON
        case Image():
            return w.size
        case Input():
            return INPUT_H + (max(w.lines, 1) - 1) * STYLES["body"][1]
        case CheckBox() | Switch() | Radio():
            return CHECK_H
        case Spacer():
            return w.height
        case Row():
            widths = row_widths(w, width)
            tallest = max((measure(c, cw) for c, cw in zip(present(w.children), widths, strict=True)), default=0)
            return max(w.min_height, tallest + 2 * w.pad_y)
        case Column():
            inner = width - 2 * w.pad_x
            return sum(measure(c, inner) for c in present(w.children)) + 2 * w.pad_y
        case ListView():
            if not w.items:
                return measure(w.empty, width) if w.empty else 0
            return min(sum(measure(i, width) for i in present(w.items)), w.max_height)
        case Tabs():
            return TAB_H
        case Toolbar():
            return TOOLBAR_H
        case _:
            return 0


def row_widths(row: Row, width: int) -> list[int]:
    kids = list(present(row.children))
    if not kids:
        return []
    free = width - 2 * row.pad_x - row.gap * (len(kids) - 1)
    fixed = {i: natural_width(c) for i, c in enumerate(kids) if not is_flexible(c)}
    flex = [i for i in range(len(kids)) if i not in fixed]
    left = max(0, free - sum(fixed.values()))
    share = left // len(flex) if flex else 0
    return [fixed.get(i, share) for i in range(len(kids))]


# ---------------------------------------------------------------------------------------------- placing


def _base(w: Widget, cls: str, rect: Rect, ctx: LayoutContext, **flags: object) -> Node:
    clickable = w.on_tap is not None
    node = Node(
        cls=cls,
        bounds=rect,
        resource_id=ctx.rid(w.id),
        desc=w.desc,
        package=ctx.package,
        enabled=w.enabled,
        selected=w.selected,
        clickable=clickable,
        focusable=clickable,
        long_clickable=w.on_long_tap is not None,
        on_tap=w.on_tap,
        on_long_tap=w.on_long_tap,
    )
    for name, value in flags.items():
        setattr(node, name, value)
    return node


def place(w: Widget, rect: Rect, ctx: LayoutContext) -> Node:
    """Lay ``w`` out in ``rect`` (its full height is given by the parent)."""
    match w:
        case Text():
            return _base(w, "android.widget.TextView", rect, ctx, text=w.text, style=w.style)
        case Button():
            return _base(w, "android.widget.Button", rect, ctx, text=w.text, clickable=True,
                         focusable=True, style="button")
        case ImageButton():
            cls = {"action": "android.widget.Button", "image": "android.widget.ImageView"}.get(
                w.kind, "android.widget.ImageButton")
            return _base(w, cls, rect, ctx, clickable=True, focusable=True, style="icon")
        case Image():
            return _base(w, "android.widget.ImageView", rect, ctx, style="image")
        case Input():
            return _place_input(w, rect, ctx)
        case CheckBox():
            return _base(w, "android.widget.CheckBox", rect, ctx, text=w.text, checkable=True,
                         checked=w.checked, style="check")
        case Switch():
            return _base(w, "android.widget.Switch", rect, ctx, text=w.text, checkable=True,
                         checked=w.checked, style="switch")
        case Radio():
            return _base(w, "android.widget.RadioButton", rect, ctx, text=w.text, checkable=True,
                         checked=w.checked, style="radio")
        case Spacer():
            return _base(w, "android.view.View", rect, ctx)
        case Row():
            return _place_row(w, rect, ctx)
        case Column():
            return _place_column(w, rect, ctx)
        case ListView():
            return _place_list(w, rect, ctx)
        case Toolbar():
            return _place_toolbar(w, rect, ctx)
        case Tabs():
            return _place_tabs(w, rect, ctx)
        case _:
            raise TypeError(f"cannot lay out {type(w).__name__} inside a screen")


def _place_input(w: Input, rect: Rect, ctx: LayoutContext) -> Node:
    form = ctx.form
    form.fields.setdefault(w.name, w.value)
    if w.autofocus and not form.autofocused and form.focus is None and w.enabled:
        form.focus = w.name
        form.autofocused = True
    value = form.fields[w.name]
    shown = "•" * len(value) if w.password else value  # Android reports a password field masked
    node = _base(w, "android.widget.EditText", rect, ctx, text=shown or w.hint, clickable=True,
                 focusable=True, long_clickable=True, focused=form.focus == w.name,
                 password=w.password, input=w, style="input" if value else "hint")
    ctx.inputs[w.name] = node
    return node


def _place_row(w: Row, rect: Rect, ctx: LayoutContext) -> Node:
    node = _base(w, w.cls, rect, ctx)
    x = rect.left + w.pad_x
    for child, cw in zip(present(w.children), row_widths(w, rect.width), strict=True):
        ch = min(measure(child, cw), rect.height)
        top = rect.top + (rect.height - ch) // 2
        node.children.append(place(child, Rect(x, top, x + cw, top + ch), ctx))
        x += cw + w.gap
    return node


def _place_column(w: Column, rect: Rect, ctx: LayoutContext) -> Node:
    node = _base(w, w.cls, rect, ctx)
    stack(node, present(w.children), Rect(rect.left + w.pad_x, rect.top + w.pad_y, rect.right - w.pad_x,
                                 rect.bottom - w.pad_y), ctx, w.align)
    return node


def stack(parent: Node, children: tuple[Widget, ...] | list[Widget], rect: Rect, ctx: LayoutContext,
          align: str = "start") -> None:
    """Stack ``children`` top to bottom in ``rect``; lists stretch to use the height left over.

    Children with a natural width (buttons, icons) keep it, at the start or in the centre.
    """
    heights = [measure(c, rect.width) for c in children]
    lists = [i for i, c in enumerate(children) if isinstance(c, ListView) and c.items]
    spare = rect.height - sum(heights)
    if lists:
        base = [heights[i] for i in lists]
        total = spare + sum(base)
        for n, i in enumerate(lists):
            heights[i] = max(0, total // len(lists) if n < len(lists) - 1 else total - total // len(lists) * n)
    y = rect.top
    for child, h in zip(children, heights, strict=True):
        left, right = rect.left, rect.right
        if not is_flexible(child):
            width = min(natural_width(child), rect.width)
            left = rect.left + ((rect.width - width) // 2 if align == "center" else 0)
            right = left + width
        parent.children.append(place(child, Rect(left, y, right, y + h), ctx))
        y += h


def _place_list(w: ListView, rect: Rect, ctx: LayoutContext) -> Node:
    key = w.id or "list"
    if not w.items:
        if w.empty is None:
            return _base(w, w.cls, rect, ctx, scroll_key=key)
        return place(w.empty, Rect(rect.left, rect.top, rect.right, rect.top + measure(w.empty, rect.width)), ctx)
    heights = [measure(item, rect.width) for item in present(w.items)]
    limit = max(0, sum(heights) - rect.height)
    offset = min(max(ctx.form.scroll.get(key, 0), 0), limit)
    ctx.form.scroll[key] = offset
    node = _base(w, w.cls, rect, ctx, scrollable=limit > 0, focusable=limit > 0, scroll_key=key,
                 scroll_max=limit)
    y = rect.top - offset
    for item, h in zip(present(w.items), heights, strict=True):
        box = Rect(rect.left, y, rect.right, y + h)
        y += h
        if box.bottom <= rect.top or box.top >= rect.bottom:
            continue
        placed = clip(place(item, box, ctx), rect)
        if placed is not None:
            node.children.append(placed)
    return node


def _place_toolbar(w: Toolbar, rect: Rect, ctx: LayoutContext) -> Node:
    node = _base(w, "android.view.ViewGroup", rect, ctx)
    node.resource_id = ctx.rid(w.id or "toolbar")
    cy = rect.top + rect.height // 2
    x = rect.left
    if w.nav is not None:
        node.children.append(Node(
            cls="android.widget.ImageButton", bounds=Rect(x, rect.top, x + TOOLBAR_H, rect.bottom),
            desc=w.nav_desc, package=ctx.package, clickable=True, focusable=True, on_tap=w.nav, style="icon"))
        x += TOOLBAR_H
    else:
        x += MARGIN + 21
    actions = list(present(w.actions))
    right = rect.right
    action_nodes: list[Node] = []
    if actions or w.menu:
        widths = [natural_width(a) for a in actions] + ([ACTION_W] if w.menu else [])
        left = right - sum(widths)
        holder = Node(cls="androidx.appcompat.widget.LinearLayoutCompat",
                      bounds=Rect(left, rect.top + 11, right, rect.bottom - 11), package=ctx.package)
        ax = left
        for action, aw in zip(actions, widths, strict=False):
            ah = measure(action, aw)
            action_nodes.append(place(action, Rect(ax, cy - ah // 2, ax + aw, cy - ah // 2 + ah), ctx))
            ax += aw
        if w.menu:
            action_nodes.append(Node(
                cls="android.widget.ImageView", bounds=Rect(ax, cy - ICON // 2, ax + ACTION_W, cy + ICON // 2),
                desc="More options", package=ctx.package, clickable=True, focusable=True,
                long_clickable=True, popup=tuple(present(w.menu)), style="icon"))
        holder.children = action_nodes
        right = left
    if w.title_widget is not None:
        h = measure(w.title_widget, right - x)
        node.children.append(place(w.title_widget, Rect(x, cy - h // 2, right - 21, cy - h // 2 + h), ctx))
    elif w.title:
        th = STYLES["title"][1]
        width = min(natural_width(Text(w.title, style="title")), right - x - 21)
        node.children.append(Node(cls="android.widget.TextView", bounds=Rect(x, cy - th // 2, x + width, cy + th // 2),
                                  text=w.title, package=ctx.package, style="title"))
    if action_nodes:
        node.children.append(holder)
    return node


def _place_tabs(w: Tabs, rect: Rect, ctx: LayoutContext) -> Node:
    scroller = _base(w, "android.widget.HorizontalScrollView", rect, ctx)
    scroller.resource_id = ctx.rid(w.id or "tabs")
    strip = Node(cls="android.widget.LinearLayout", bounds=rect, package=ctx.package)
    scroller.children.append(strip)
    tabs: list[Tab] = [t for t in w.tabs if isinstance(t, Tab)]
    for i, tab in enumerate(tabs):
        left = rect.left + rect.width * i // len(tabs)
        right = rect.left + rect.width * (i + 1) // len(tabs)
        box = Rect(left, rect.top, right, rect.bottom)
        # Like Material tabs: the tab view carries the description; the selected one is not clickable.
        view = _base(tab, "android.widget.LinearLayout", box, ctx)
        view.desc = tab.desc or tab.text
        view.clickable = view.focusable = not tab.selected and tab.on_tap is not None
        th = STYLES["body"][1]
        tw = min(natural_width(Text(tab.text)), box.width)
        tx = left + (box.width - tw) // 2
        label = Node(cls="android.widget.TextView", bounds=Rect(tx, box.top + (box.height - th) // 2, tx + tw,
                                                                 box.top + (box.height + th) // 2),
                     text=tab.text, package=ctx.package, selected=tab.selected, style="tab")
        view.children.append(label)
        strip.children.append(view)
    return scroller


# ---------------------------------------------------------------------------------------------- windows


def _decor(ctx: LayoutContext, content: Node) -> Node:
    """The activity window around the app's views, with the system bar backgrounds real dumps show."""
    frame = Node(cls="android.widget.FrameLayout", bounds=CONTENT, resource_id="android:id/content",
                 package=ctx.package, children=[content])
    linear = Node(cls="android.widget.LinearLayout", bounds=Rect(0, 0, SCREEN_W, SCREEN_H), package=ctx.package,
                  children=[frame])
    return Node(cls="android.widget.FrameLayout", bounds=Rect(0, 0, SCREEN_W, SCREEN_H), package=ctx.package,
                children=[
                    linear,
                    Node(cls="android.view.View", bounds=STATUS_BAR, resource_id="android:id/statusBarBackground",
                         package=ctx.package, style="statusbar"),
                    Node(cls="android.view.View", bounds=NAV_BAR,
                         resource_id="android:id/navigationBarBackground", package=ctx.package, style="navbar"),
                ])


def _layout_screen(screen: Screen, ctx: LayoutContext) -> Node:
    """The window of an activity: toolbar at the top, bottom widgets at the bottom, the body between."""
    root = _base(screen, "android.view.ViewGroup", CONTENT, ctx)
    root.resource_id = ctx.rid(screen.id or "main_coordinator")
    holder = Node(cls="android.widget.LinearLayout", bounds=CONTENT, resource_id=ctx.rid("main_holder"),
                  package=ctx.package)
    root.children.append(holder)
    top = CONTENT.top
    if screen.toolbar is not None:
        holder.children.append(place(screen.toolbar, Rect(0, top, SCREEN_W, top + TOOLBAR_H), ctx))
        top += TOOLBAR_H
    bottoms = [(b, measure(b, SCREEN_W)) for b in present(screen.bottom)]
    bottom = CONTENT.bottom - sum(h for _, h in bottoms)
    body = Node(cls="android.widget.FrameLayout", bounds=Rect(0, top, SCREEN_W, bottom),
                resource_id=ctx.rid("content_holder"), package=ctx.package)
    stack(body, list(present(screen.body)), body.bounds, ctx)
    holder.children.append(body)
    y = bottom
    for widget, h in bottoms:
        holder.children.append(place(widget, Rect(0, y, SCREEN_W, y + h), ctx))
        y += h
    if screen.fab is not None:
        fab = screen.fab
        box = Rect(SCREEN_W - MARGIN - FAB, bottom - MARGIN - FAB, SCREEN_W - MARGIN, bottom - MARGIN)
        node = place(fab, box, ctx)
        root.children.append(node)
    return clip(_decor(ctx, root), Rect(0, 0, SCREEN_W, SCREEN_H)) or _decor(ctx, root)


def _layout_dialog(dialog: Dialog, ctx: LayoutContext) -> Node:
    """An alert dialog window, centred, with the framework's ``android:id`` panels."""
    width = DIALOG.width
    inner = width - 2 * 63
    parts: list[tuple[str, int]] = []
    if dialog.title:
        parts.append(("title", 63 + text_lines(dialog.title, "title", inner) * STYLES["title"][1] + 21))
    if dialog.message:
        parts.append(("message", text_lines(dialog.message, "body", inner) * STYLES["body"][1] + 63))
    body = Column(children=dialog.body, pad_x=42, id=None)
    if dialog.body:
        parts.append(("custom", measure(body, width)))
    buttons = [b for b in (dialog.neutral, dialog.negative, dialog.positive) if b is not None]
    if buttons:
        parts.append(("buttons", BUTTON_H + 42))
    height = min(sum(h for _, h in parts) + 21, CONTENT.height - 84)
    top = CONTENT.top + (CONTENT.height - height) // 2
    box = Rect(DIALOG.left, top, DIALOG.right, top + height)
    panel = Node(cls="android.widget.LinearLayout", bounds=box, resource_id="android:id/parentPanel",
                 package=ctx.package, style="dialog")
    y = top
    for kind, h in parts:
        r = Rect(box.left, y, box.right, min(y + h, box.bottom))
        y += h
        if kind == "title":
            title = Node(cls="android.widget.TextView",
                         bounds=Rect(r.left + 63, r.top + 63, r.right - 63, r.bottom - 21),
                         resource_id="android:id/alertTitle", text=dialog.title, package=ctx.package, style="title")
            panel.children.append(Node(cls="android.widget.LinearLayout", bounds=r, resource_id="android:id/topPanel",
                                       package=ctx.package, children=[title]))
        elif kind == "message":
            msg = Node(cls="android.widget.TextView", bounds=Rect(r.left + 63, r.top + 21, r.right - 63, r.bottom - 42),
                       resource_id="android:id/message", text=dialog.message, package=ctx.package, style="body")
            scroll = Node(cls="android.widget.ScrollView", bounds=r, resource_id="android:id/scrollView",
                          package=ctx.package, children=[msg])
            panel.children.append(Node(cls="android.widget.FrameLayout", bounds=r,
                                       resource_id="android:id/contentPanel", package=ctx.package, children=[scroll]))
        elif kind == "custom":
            content = place(body, r, ctx)
            custom = Node(cls="android.widget.FrameLayout", bounds=r, resource_id="android:id/custom",
                          package=ctx.package, children=[content])
            panel.children.append(Node(cls="android.widget.FrameLayout", bounds=r,
                                       resource_id="android:id/customPanel", package=ctx.package, children=[custom]))
        else:
            bar = Node(cls="android.widget.LinearLayout", bounds=r, package=ctx.package)
            x = r.right - 42
            ids = {id(dialog.positive): "android:id/button1", id(dialog.negative): "android:id/button2",
                   id(dialog.neutral): "android:id/button3"}
            placed = []
            for button in reversed(buttons):
                bw = natural_width(button)
                bnode = place(button, Rect(x - bw, r.top + 21, x, r.top + 21 + BUTTON_H), ctx)
                bnode.resource_id = ctx.rid(button.id) if button.id else ids[id(button)]
                placed.append(bnode)
                x -= bw + 21
            if dialog.neutral is not None:
                # The neutral button sits at the left edge, as in AlertDialog.
                n = placed[-1]
                w = n.bounds.width
                n.bounds = Rect(r.left + 42, n.bounds.top, r.left + 42 + w, n.bounds.bottom)
            bar.children = list(reversed(placed))
            panel.children.append(Node(cls="android.widget.ScrollView", bounds=r, resource_id="android:id/buttonPanel",
                                       package=ctx.package, children=[bar]))
    content = Node(cls="android.widget.FrameLayout", bounds=box, resource_id="android:id/content",
                   package=ctx.package, children=[panel])
    window = Node(cls="android.widget.FrameLayout", bounds=box, package=ctx.package, children=[content])
    return clip(window, box) or window


def _layout_menu(menu: Menu, anchor: Rect, ctx: LayoutContext) -> Node:
    """A popup menu window: right-aligned with its anchor, opening downwards when there is room."""
    items = [i for i in menu.items if isinstance(i, MenuItem)]
    height = MENU_ITEM_H * len(items) + 2 * 21
    right = min(max(anchor.right, MENU_W + 21), SCREEN_W - 21)
    top = anchor.top
    if top + height > CONTENT.bottom - 21:
        top = max(CONTENT.top, anchor.bottom - height)
    box = Rect(right - MENU_W, top, right, min(top + height, CONTENT.bottom))
    listview = Node(cls="android.widget.ListView", bounds=box, package=ctx.package, style="menu")
    y = top + 21
    for item in items:
        r = Rect(box.left, y, box.right, y + MENU_ITEM_H)
        y += MENU_ITEM_H
        row = _base(item, "android.widget.LinearLayout", r, ctx, clickable=True, focusable=True)
        row.resource_id = ""
        th = STYLES["body"][1]
        title = Node(cls="android.widget.TextView", bounds=Rect(r.left + 42, r.top + (MENU_ITEM_H - th) // 2,
                                                                  r.right - 42, r.top + (MENU_ITEM_H + th) // 2),
                     resource_id=ctx.rid("title"), text=item.text, package=ctx.package,
                     enabled=item.enabled, style="body")
        inner = Node(cls="android.widget.RelativeLayout", bounds=Rect(r.left + 42, r.top, r.right - 42, r.bottom),
                     package=ctx.package, enabled=item.enabled, children=[title])
        row.children.append(inner)
        listview.children.append(row)
    window = Node(cls="android.widget.FrameLayout", bounds=box, package=ctx.package, children=[listview])
    return clip(window, box) or window


def layout_screen(screen: Screen, ctx: LayoutContext) -> Node:
    """The window of an activity: toolbar at the top, bottom widgets at the bottom, the body between."""
    with _layout_pass():
        return _layout_screen(screen, ctx)


def layout_dialog(dialog: Dialog, ctx: LayoutContext) -> Node:
    """An alert dialog window, centred, with the framework's ``android:id`` panels."""
    with _layout_pass():
        return _layout_dialog(dialog, ctx)


def layout_menu(menu: Menu, anchor: Rect, ctx: LayoutContext) -> Node:
    """A popup menu window: right-aligned with its anchor, opening downwards when there is room."""
    with _layout_pass():
        return _layout_menu(menu, anchor, ctx)
