"""The document's app as a whole: launch it (with intent extras), stop it, clear its data; and
screenshots saved with the run's artifacts.

On a phone these are ``monkey`` / ``am start`` (``cmd package resolve-activity`` names the
launcher activity when extras are given), ``am force-stop`` and ``pm clear``; the simulator
answers the same commands. Each is one device input, after which the screen settles.

    control = AppControl(document, screen, artifacts)
    control.run("clear", None, call); control.run("launch", {"rate_prompt_after": 1}, call)
    control.screenshot("after save", call)          # 'tapir-artifacts/rate_prompt/after_save.png'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.core.document import AppDocument
from tapir.core.errors import ActionError, ScriptError, Span
from tapir.dsl.runtime_api import APP_ACTIONS
from tapir.runtime.artifacts import Artifacts
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts
from tapir.runtime.settle import Expectation

if TYPE_CHECKING:
    from tapir.runtime.guards import Confinement

__all__ = ["AppControl"]


class AppControl:
    """``DeviceRuntime.app`` and ``DeviceRuntime.screenshot``."""

    def __init__(self, document: AppDocument, screen: ScreenCache, artifacts: Artifacts, *,
                 confinement: Confinement | None = None) -> None:
        self.document = document
        self.screen = screen
        self.artifacts = artifacts
        #: Told when the script itself sends the app away (the home screen is expected then).
        self.confinement = confinement

    def run(self, action: str, extras: dict[str, Any] | None, c: CallFacts, span: Span) -> None:
        if action not in APP_ACTIONS:
            raise ActionError(f"unknown app action {action!r} (known: {', '.join(APP_ACTIONS)})", span)
        screen, package = self.screen, self.document.app.package
        device = screen.device
        before = screen.current
        if before is not None and not c.observed:
            c.observed, c.screen_before = True, before.screen
        if action == "launch":
            screen.input(lambda: device.app_start(package, extras=extras or None), c)
            expect = Expectation(change=True, screen=self.document.app.start_screen)
        elif action == "stop":
            screen.input(lambda: device.app_stop(package), c)
            expect = Expectation(change=True)
        else:
            screen.input(lambda: device.app_clear(package), c)
            expect = Expectation(change=True)
        after = screen.settle(expect, c).observation
        if self.confinement is not None:
            self.confinement.outside_expected = action != "launch"
        c.extra["package"] = package
        c.extra["foreground"] = after.package or None

    def screenshot(self, name: str | None, c: CallFacts, span: Span) -> str:
        started = self.screen.clock()
        png = self.screen.device.screenshot_png()
        c.act_s += self.screen.clock() - started
        try:
            path = self.artifacts.save(name, png, ".png")
        except OSError as exc:
            raise ScriptError(f"cannot save the screenshot in {self.artifacts.folder}: {exc.strerror or exc}",
                              span) from None
        c.extra["file"] = str(path)
        c.extra["bytes"] = len(png)
        return str(path)
