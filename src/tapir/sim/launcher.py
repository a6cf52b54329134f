"""The simulated device's home screen: a grid of the installed apps, like AOSP Launcher3.

It behaves like any other app for the device (dump, screenshot, taps), so pressing HOME or
backing out of an app gives a real screen to look at, and tapping an icon opens the app.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw, ImageFont

from tapir.sim.app import SCREEN_HEIGHT, SCREEN_WIDTH

LAUNCHER_PACKAGE = "com.android.launcher3"
LAUNCHER_ACTIVITY = "com.android.launcher3.Launcher"
_COLUMNS = 4
_CELL_H = 330
_GRID_TOP = 240

_NODE_ATTRS = ("index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked",
               "clickable", "enabled", "focusable", "focused", "scrollable", "long-clickable", "password",
               "selected", "bounds")


def xml_node(index: int, cls: str, bounds: tuple[int, int, int, int], children: str = "", **attrs: str) -> str:
    """One ``<node>`` with uiautomator's attributes in uiautomator's order (in the launcher's
    package unless ``package=`` names another)."""
    values = {name: "false" for name in _NODE_ATTRS}
    values.update({"index": str(index), "text": "", "resource-id": "", "class": cls,
                   "package": LAUNCHER_PACKAGE, "content-desc": "", "enabled": "true",
                   "bounds": "[{},{}][{},{}]".format(*bounds)})
    values.update({k.replace("_", "-"): v for k, v in attrs.items()})
    head = "<node " + " ".join(f"{name}={quoteattr(values[name])}" for name in _NODE_ATTRS)
    return f"{head}>{children}</node>" if children else f"{head} />"


class Launcher:
    """Home screen over the device's installed apps; ``open_app`` is called with a package."""

    package = LAUNCHER_PACKAGE
    label = "Home"

    def __init__(self, installed: Callable[[], Sequence[tuple[str, str]]], open_app: Callable[[str], None],
                 size: tuple[int, int] = (SCREEN_WIDTH, SCREEN_HEIGHT)) -> None:
        self._installed = installed
        self._open_app = open_app
        self._size = size

    @property
    def activity(self) -> str:
        return LAUNCHER_ACTIVITY

    @property
    def screen_size(self) -> tuple[int, int]:
        return self._size

    def reset(self) -> None:
        pass

    def launch(self) -> None:
        pass

    def icons(self) -> list[tuple[str, str, tuple[int, int, int, int]]]:
        """(package, label, bounds) of every icon on the home screen."""
        out = []
        for i, (package, label) in enumerate(self._installed()):
            col, row = i % _COLUMNS, i // _COLUMNS
            cell_w = self._size[0] // _COLUMNS
            left, top = col * cell_w, _GRID_TOP + row * _CELL_H
            out.append((package, label, (left + 15, top, left + cell_w - 15, top + _CELL_H - 30)))
        return out

    def dump_xml(self) -> str:
        icons = "".join(
            xml_node(i, "android.widget.TextView", bounds, text=label, content_desc=label,
                  clickable="true", focusable="true", long_clickable="true")
            for i, (_, label, bounds) in enumerate(self.icons()))
        w, h = self._size
        full = (0, 0, w, h)
        workspace = xml_node(0, "android.view.ViewGroup", (0, 110, w, h), icons,
                          resource_id="com.android.launcher3:id/workspace", scrollable="true")
        root = xml_node(0, "android.widget.FrameLayout", full,
                     xml_node(0, "android.widget.FrameLayout", full, workspace,
                           resource_id="com.android.launcher3:id/launcher"))
        return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                f'<hierarchy rotation="0">{root}</hierarchy>')

    def screenshot_png(self) -> bytes:
        image = Image.new("RGB", self._size, (32, 48, 72))
        draw = ImageDraw.Draw(image)
        font = ImageFont.load_default(size=40)
        for _, label, (left, top, right, _bottom) in self.icons():
            cx = (left + right) // 2
            draw.rounded_rectangle((cx - 80, top + 20, cx + 80, top + 180), radius=40, fill=(90, 140, 210))
            draw.text((cx, top + 100), label[:1].upper(), font=ImageFont.load_default(size=90),
                      anchor="mm", fill="white")
            draw.text((cx, top + 240), label, font=font, anchor="mm", fill="white")
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()

    def tap(self, x: int, y: int) -> None:
        for package, _, (left, top, right, bottom) in self.icons():
            if left <= x < right and top <= y < bottom:
                self._open_app(package)
                return

    def long_tap(self, x: int, y: int) -> None:
        pass  # would open the icon's shortcut menu; nothing a script needs

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        pass

    def input_text(self, text: str) -> None:
        pass

    def key(self, keycode: str) -> bool:
        return True  # the home screen swallows BACK and friends
