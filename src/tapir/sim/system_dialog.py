"""A system dialog over the app: what an unexpected interruption looks like to a client.

Android's permission prompt is the interruption every automation meets: it belongs to another
package (``com.android.permissioncontroller``), covers the app, and takes every touch until one
of its buttons is pressed. The simulated device shows one when a fault event asks for it
(``FaultEvent("dialog")``), so that a document's watchers (``tap_text: Don’t allow``) can be
tested, and so can a run without one::

    device.show_dialog(SystemDialog.permission("Music", owner="org.tapir.music"))
    device.dump_xml()            # the dialog's views, package com.android.permissioncontroller
    device.dialog_answers        # ["Don’t allow"] once its button was tapped

Only its buttons react; BACK dismisses it only when ``cancelable`` (a modal dialog otherwise,
like an app-not-responding prompt). The dump is the dialog window alone, as ``uiautomator
dump`` gives the active window.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from tapir.sim.app import SCREEN_HEIGHT, SCREEN_WIDTH
from tapir.sim.launcher import xml_node

PERMISSION_PACKAGE = "com.android.permissioncontroller"


@dataclass
class SystemDialog:
    """A dialog with a message and buttons; ``on_answer`` is called with the label tapped."""

    message: str
    buttons: tuple[str, ...]
    owner: str
    package: str = PERMISSION_PACKAGE
    cancelable: bool = False
    size: tuple[int, int] = (SCREEN_WIDTH, SCREEN_HEIGHT)
    on_answer: Callable[[str], None] | None = None

    @classmethod
    def permission(cls, app_label: str, *, owner: str, size: tuple[int, int] = (SCREEN_WIDTH, SCREEN_HEIGHT),
                   cancelable: bool = False) -> SystemDialog:
        """The notification-permission prompt of Android 13 and later, for the app ``app_label``."""
        return cls(f"Allow {app_label} to send you notifications?", ("Allow", "Don\u2019t allow"), owner,
                   cancelable=cancelable, size=size)

    # -- geometry ----------------------------------------------------------------------------

    def _box(self) -> tuple[int, int, int, int]:
        w, h = self.size
        height = 330 + 150 * len(self.buttons)
        top = (h - height) // 2
        return 63, top, w - 63, top + height

    def _button_bounds(self) -> list[tuple[str, tuple[int, int, int, int]]]:
        left, top, right, _ = self._box()
        return [(label, (left + 42, top + 300 + 150 * i, right - 42, top + 426 + 150 * i))
                for i, label in enumerate(self.buttons)]

    # -- what the device asks of a window ----------------------------------------------------

    def dump_xml(self) -> str:
        w, h = self.size
        left, top, right, bottom = self._box()
        pkg = self.package
        ids = ("permission_allow_button", "permission_deny_button")
        buttons = "".join(
            xml_node(i + 1, "android.widget.Button", bounds, text=label, package=pkg,
                     resource_id=f"{pkg}:id/{ids[i] if i < len(ids) else f'button{i}'}",
                     clickable="true", focusable="true")
            for i, (label, bounds) in enumerate(self._button_bounds()))
        message = xml_node(0, "android.widget.TextView", (left + 63, top + 84, right - 63, top + 250),
                           text=self.message, package=pkg, resource_id=f"{pkg}:id/permission_message")
        panel = xml_node(0, "android.widget.LinearLayout", (left, top, right, bottom), message + buttons,
                         package=pkg, resource_id=f"{pkg}:id/grant_dialog")
        root = xml_node(0, "android.widget.FrameLayout", (0, 0, w, h), panel, package=pkg)
        return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                f'<hierarchy rotation="0">{root}</hierarchy>')

    def screenshot_png(self, below: bytes | None = None) -> bytes:
        """The dialog drawn over ``below`` (the app's screenshot), dimmed as Android dims it."""
        base = Image.open(io.BytesIO(below)).convert("RGB") if below else Image.new("RGB", self.size, "white")
        base = Image.blend(base, Image.new("RGB", base.size, (0, 0, 0)), 0.5)
        draw = ImageDraw.Draw(base)
        draw.rounded_rectangle(self._box(), radius=40, fill=(250, 250, 250))
        left, top, right, _ = self._box()
        font = ImageFont.load_default(size=44)
        draw.text((left + 63, top + 120), self.message, font=font, fill=(33, 33, 33))
        for label, box in self._button_bounds():
            draw.rounded_rectangle(box, radius=60, fill=(25, 118, 210))
            draw.text(((box[0] + box[2]) // 2, (box[1] + box[3]) // 2), label, font=font, anchor="mm",
                      fill="white")
        buf = io.BytesIO()
        base.save(buf, format="PNG")
        return buf.getvalue()

    def button_at(self, x: int, y: int) -> str | None:
        for label, (left, top, right, bottom) in self._button_bounds():
            if left <= x < right and top <= y < bottom:
                return label
        return None
