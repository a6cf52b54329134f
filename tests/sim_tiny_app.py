"""A tiny hand-written SimApp for the simulator's own tests (independent of the UI toolkit).

Two screens with real ``uiautomator dump`` XML: ``main`` (a title, a "Details" button, a name
field, a "Greet" button and a list that pages on swipes) and ``details``. It records every
event so tests can check what the device delivered.
"""

from __future__ import annotations

import io
from typing import Any
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw

PACKAGE = "org.tapir.tiny"
MAIN = f"{PACKAGE}.MainActivity"
DETAILS = f"{PACKAGE}.DetailsActivity"
W, H = 1080, 2400

DETAILS_BUTTON = (100, 400, 980, 560)
NAME_FIELD = (100, 600, 980, 760)
GREET_BUTTON = (100, 800, 980, 960)
LIST_ITEM = (100, 1100, 980, 1260)
_ATTRS = ("index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
          "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds")


def center(bounds: tuple[int, int, int, int]) -> tuple[int, int]:
    return (bounds[0] + bounds[2]) // 2, (bounds[1] + bounds[3]) // 2


def _inside(bounds: tuple[int, int, int, int], x: int, y: int) -> bool:
    return bounds[0] <= x < bounds[2] and bounds[1] <= y < bounds[3]


def _node(index: int, cls: str, bounds: tuple[int, int, int, int], children: str = "", **attrs: str) -> str:
    values = {a: "false" for a in _ATTRS}
    values.update(index=str(index), text="", package=PACKAGE, enabled="true")
    values["resource-id"] = attrs.pop("rid", "")
    values["content-desc"] = attrs.pop("desc", "")
    values["class"] = cls
    values["long-clickable"] = attrs.pop("long", "false")
    values.update(attrs)
    values["bounds"] = "[{},{}][{},{}]".format(*bounds)
    head = "<node " + " ".join(f"{a}={quoteattr(values[a])}" for a in _ATTRS)
    return f"{head}>{children}</node>" if children else f"{head} />"


class TinyApp:
    package = PACKAGE
    label = "Tiny"

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.drift: Any = None
        self.reset()

    def reset(self) -> None:
        self.screen = "main"
        self.name = ""
        self.greeting = ""
        self.page = 1
        self.selected = False
        self.launches = 0

    def launch(self) -> None:
        self.screen = "main"
        self.launches += 1

    def set_drift(self, value: Any) -> None:
        self.drift = value

    @property
    def activity(self) -> str:
        return MAIN if self.screen == "main" else DETAILS

    @property
    def screen_size(self) -> tuple[int, int]:
        return W, H

    def dump_xml(self) -> str:
        title = "Tiny" if self.drift is None else f"Tiny ({self.drift})"
        if self.screen == "main":
            item = f"Item {self.page}" + (" (selected)" if self.selected else "")
            body = "".join([
                _node(0, "android.widget.TextView", (0, 110, W, 300), text=title, rid=f"{PACKAGE}:id/title"),
                _node(1, "android.widget.Button", DETAILS_BUTTON, text="Details", clickable="true",
                      focusable="true", rid=f"{PACKAGE}:id/details"),
                _node(2, "android.widget.EditText", NAME_FIELD, text=self.name, clickable="true", focusable="true",
                      focused="true", rid=f"{PACKAGE}:id/name"),
                _node(3, "android.widget.Button", GREET_BUTTON, text="Greet", clickable="true", focusable="true",
                      rid=f"{PACKAGE}:id/greet"),
                _node(4, "android.widget.TextView", (100, 980, 980, 1080), text=self.greeting,
                      rid=f"{PACKAGE}:id/greeting"),
                _node(5, "androidx.recyclerview.widget.RecyclerView", (0, 1080, W, H),
                      _node(0, "android.widget.TextView", LIST_ITEM, text=item, clickable="true", long="true"),
                      scrollable="true", rid=f"{PACKAGE}:id/list"),
            ])
        else:
            body = _node(0, "android.widget.TextView", (0, 110, W, 300), text="Details", rid=f"{PACKAGE}:id/title")
        root = _node(0, "android.widget.FrameLayout", (0, 0, W, H), body)
        return f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">{root}</hierarchy>"

    def screenshot_png(self) -> bytes:
        image = Image.new("RGB", (W, H), "white")
        draw = ImageDraw.Draw(image)
        if self.screen == "main":
            for box in (DETAILS_BUTTON, NAME_FIELD, GREET_BUTTON, LIST_ITEM):
                draw.rectangle(box, outline="black", width=4)
        else:
            draw.rectangle((0, 110, W, 300), fill="blue")
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()

    def tap(self, x: int, y: int) -> None:
        self.events.append(("tap", x, y))
        if self.screen != "main":
            return
        if _inside(DETAILS_BUTTON, x, y):
            self.screen = "details"
        elif _inside(GREET_BUTTON, x, y):
            self.greeting = f"Hello, {self.name}"

    def long_tap(self, x: int, y: int) -> None:
        self.events.append(("long_tap", x, y))
        if self.screen == "main" and _inside(LIST_ITEM, x, y):
            self.selected = True

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        self.events.append(("swipe", x1, y1, x2, y2, duration_ms))
        if self.screen == "main" and y2 < y1:
            self.page += 1

    def input_text(self, text: str) -> None:
        self.events.append(("text", text))
        if self.screen == "main":
            self.name += text

    def key(self, keycode: str) -> bool:
        self.events.append(("key", keycode))
        if keycode == "KEYCODE_BACK" and self.screen == "details":
            self.screen = "main"
            return True
        if keycode == "KEYCODE_DEL" and self.screen == "main":
            self.name = self.name[:-1]
            return True
        if keycode == "KEYCODE_ENTER" and self.screen == "main":
            self.greeting = f"Hello, {self.name}"
            return True
        return False
