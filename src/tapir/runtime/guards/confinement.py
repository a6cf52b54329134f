"""App confinement: a run stays in its document's app (and the apps it allows).

The foreground app is read from the dumps the runtime takes anyway (uiautomator puts the package
on every node); only a dump without packages (a recorded view list) makes it ask ``dumpsys``, once
per dump. Before each script call that may act or read (not ``back()``, app control, ``sleep``,
``screenshot``, ``watch`` or ``exists()``, which sends nothing), the current screen is checked.
When another app is in front, one not allowed (``--allow-app``, the document's ``app.allow_apps``,
``tapir.toml``):

* ``--foreign-app return`` (the default): BACK, and when that does not bring the run's app back,
  relaunching it; the run goes on, and the trace (a ``guard`` line), the session's counters
  (``left_app``) and ``notices`` (which ``tapir run`` prints) say so. When neither brings it back,
  ``OutsideApp``.
* ``--foreign-app stop``: ``OutsideApp`` at once, nothing sent.

An app hands over to others as part of its work: it opens Android's document picker to save a
file, the share sheet, a permission prompt, the print dialog, or another app whose screens the
document itself describes (a camera's "last photo" opening the gallery's viewer). Such a package
is *handed over*, and part of the run while it is in front, when it came to the front straight
from the run's app (or from another handed-over package) and either is one of the system's
handover packages (``HANDOVER_PACKAGES``) or shows a screen of the document. An app that pushes
itself to the front otherwise (an ad, a notification's app, the home screen) is still left.

After the script's own ``stop_app()`` or ``clear_app()`` the home screen is expected: nothing is
checked until the app is in front again (the next element relaunches it through navigation).
Navigation that finds another app in front (a dump taken mid-call) passes here too
(``during_navigation``) before it would relaunch the app.

    confinement = Confinement(document, screen, safety, trace.write)
    confinement.ensure(call, span)        # before a call; may press BACK / relaunch, or raise
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import OutsideApp, Span, TapirError
from tapir.core.safety import Safety
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts
from tapir.runtime.settle import Expectation, Observation

__all__ = ["HANDOVER_PACKAGES", "Confinement", "describe_package", "is_handover_package"]

#: Packages (or prefixes, ending in ".") that Android or the vendor shows *for* an app when the app
#: asks: the document picker, the share sheet and app chooser, permission prompts, the installer,
#: the print spooler. They act on the app's behalf, so an app handing over to one has not been left.
HANDOVER_PACKAGES = (
    "android",  # ResolverActivity / ChooserActivity on older releases
    "com.android.intentresolver",
    "com.android.documentsui", "com.google.android.documentsui",
    "com.android.permissioncontroller", "com.google.android.permissioncontroller",
    "com.android.packageinstaller", "com.google.android.packageinstaller",
    "com.android.printspooler",
    "com.android.providers.media", "com.google.android.providers.media.module",  # the photo picker
)


def is_handover_package(package: str) -> bool:
    """Whether ``package`` is one of the system's handover packages (``HANDOVER_PACKAGES``)."""
    return package in HANDOVER_PACKAGES


def describe_package(package: str) -> str:
    """A package as errors name it: ``the home screen (com.android.launcher3)``, else the package."""
    return f"the home screen ({package})" if _is_home(package) else package


def _is_home(package: str) -> bool:
    return "launcher" in package or package.endswith((".home", ".launcher"))


class Confinement:
    """Keeps a run in its app (see the module docstring)."""

    def __init__(self, document: AppDocument, screen: ScreenCache, safety: Safety,
                 write: Callable[[dict[str, Any]], None]) -> None:
        self.document = document
        self.screen = screen
        self.safety = safety
        self._write = write
        self.app = document.app.package
        #: The packages the run may be in.
        self.allowed = frozenset({self.app, *document.app.allow_apps, *safety.apps})
        #: After the script stopped or cleared its app: another app in front is expected.
        self.outside_expected = False
        #: In the run's first call, before its first dump: whatever is in front is where the run
        #: starts (the home screen, the app in the background), and navigation launches the app
        #: without anything being left.
        self.starting = False
        #: What happened, in words, for the front end to show (``tapir run`` prints them).
        self.notices: list[str] = []
        self._dumpsys: tuple[int, str] | None = None
        #: Packages the run's app handed over to (see the module docstring), while they are in front.
        self.handed_over: set[str] = set()
        #: The run's watchers (``Watching.check``): consulted before another app in front is left,
        #: so a document's watcher answers a system dialog as it would over the app itself.
        self.watch: Callable[[Observation, CallFacts | None], Observation | None] | None = None

    def foreground(self, obs: Observation) -> str:
        """The package in front on ``obs`` (``dumpsys`` once per dump when the dump has none)."""
        if obs.package:
            return obs.package
        if self._dumpsys is not None and self._dumpsys[0] == obs.seq:
            return self._dumpsys[1]
        current = getattr(self.screen.device, "current_app", None)
        package = ""
        if callable(current):
            try:
                package = str(current()[0])
            except TapirError:
                package = ""  # not knowing is not leaving: the next dump may tell
        self._dumpsys = (obs.seq, package)
        return package

    def allows(self, package: str) -> bool:
        # a run without a document (screen-level actions only) has no app of its own to stay in
        return not package or not self.app or package in self.allowed or package in self.handed_over

    def _handover(self, package: str, obs: Observation) -> bool:
        """Whether ``package`` in front on ``obs`` is the app handing over (see the module docstring);
        records the package in front either way."""
        if package == self.app:
            self.handed_over.clear()  # back in the app: the next handover is judged afresh
            return False
        if package in self.handed_over:
            return True
        acted_on = self.screen.acted_on
        previous = "" if acted_on is None else acted_on.package or (
            self._dumpsys[1] if self._dumpsys is not None and self._dumpsys[0] == acted_on.seq else "")
        # straight from the app: the last input was sent while the app (or a handover) was in front
        from_app = previous == self.app or previous in self.handed_over
        if from_app and not _is_home(package) and (is_handover_package(package) or obs.screen is not None):
            self.handed_over.add(package)
            why = "a system handover" if is_handover_package(package) else f"it shows the document's {obs.screen!r}"
            self._write({**self._record(package, obs, "after the app's own action"), "decision": "handed over",
                         "why": why})
            return True
        return False

    def ensure(self, c: CallFacts, span: Span | None) -> None:
        """Before a call: if another app is in front, go back to the run's app or stop. Reads the
        last dump, however old, and none before the first (no round trip of its own: what the
        call's own dumps show is handled when navigation meets it: ``during_navigation``)."""
        obs = self.screen.current
        self.starting = obs is None
        if obs is None or not self.app:  # (no document: no app of its own, see ``allows``)
            return  # the call's first dump comes next: where the run starts (see ``starting``)
        package = self.foreground(obs)
        handover = self._handover(package, obs)
        if package == self.app:
            self.outside_expected = False
            return
        if handover or self.allows(package) or self.outside_expected:
            return
        self._left(package, obs, c, span, when=f"before line {span.line}" if span is not None else "")

    def after_step(self, obs: Observation) -> bool:
        """After a navigation step: whether the app in front on ``obs``, if another, is one the app
        handed over to by that step (a document picker, an app whose screen the document names), which
        is recorded as for a script's own action; the screen is then part of the run (its elements are
        grounded there), as it would be after the same tap in the script."""
        return self._handover(self.foreground(obs), obs)

    def during_navigation(self, obs: Observation | None, span: Span | None) -> Observation | None:
        """Navigation found another app in front and would relaunch the run's app: when that app
        is not allowed, leave it as ``ensure`` does (or stop) and return the screen after; None
        when navigation may simply relaunch (an allowed app, the home screen after ``stop_app()``)."""
        if obs is None:
            return None
        package = self.foreground(obs)
        self.starting = self.starting and package != self.app
        handover = self._handover(package, obs)
        if package == self.app or handover or self.allows(package) or self.outside_expected or self.starting:
            return None
        return self._left(package, obs, None, span, when="during navigation")

    def _record(self, package: str, obs: Observation, when: str) -> dict[str, Any]:
        return {"event": "guard", "guard": "confinement", "package": package, "app": self.app, "when": when,
                "t": self.screen.elapsed()}

    def _left(self, package: str, obs: Observation, c: CallFacts | None, span: Span | None, *,
              when: str) -> Observation:
        if self.watch is not None:
            answered = self.watch(obs, c)
            if answered is not None:
                now = self.foreground(answered)
                if now == self.app or self.allows(now):
                    return answered
                obs, package = answered, now
        record = self._record(package, obs, when)
        if self.safety.foreign_app == "stop":
            self._write({**record, "decision": "stopped"})
            raise self._error(package, when, span)
        screen = self.screen
        device = screen.device
        self.screen.stats.left_app += 1
        screen.input(lambda: device.key("back"), c)
        after = screen.settle(Expectation(change=True), c).observation
        done = ["pressed BACK"]
        now = self.foreground(after)
        if now != self.app and not self.allows(now):
            try:
                screen.input(lambda: device.app_start(self.app), c)
                after = screen.settle(Expectation(change=True, screen=self.document.app.start_screen), c).observation
                done.append(f"relaunched {self.app}")
            except TapirError as exc:  # the app cannot be started (uninstalled?): said in the error below
                done.append(f"could not relaunch {self.app} ({exc.message})")
            now = self.foreground(after)
        if c is not None:
            c.extra["left_app"] = package
        if now != self.app and not self.allows(now):
            self._write({**record, "decision": "failed", "done": done, "now": now})
            raise self._error(package, when, span, tried=" and ".join(done), now=now,
                              shown="" if _is_home(now) else _texts(after))
        self._write({**record, "decision": "returned", "done": done, "screen_after": after.screen})
        self.notices.append(f"{describe_package(package)} was in front {when}; the run {' and '.join(done)}")
        return after

    def _error(self, package: str, when: str, span: Span | None, *, tried: str | None = None,
               now: str | None = None, shown: str = "") -> OutsideApp:
        others = sorted(self.allowed - {self.app})
        bound = f"the run is bound to {self.app}" + (f" (and {', '.join(others)})" if others else "")
        where = f" {when}" if when else ""
        if tried is None:
            message = f"{describe_package(package)} is in front{where}, not {self.app}: {bound}, so it stops here " \
                      "(--foreign-app stop); nothing was sent to the other app"
            back = "or let the run go back to its app: --foreign-app return"
        else:
            message = f"{describe_package(package)} came to the front{where}, not {self.app}: {bound}; it " \
                      f"{tried}, but {describe_package(now or '') if now else 'an unknown app'} is still in front" \
                      + (f" (it shows {shown}: a watcher could answer it)" if shown else "")
            back = "or check why the app does not come back (did it crash?)"
        return OutsideApp(message, span, hint=f"if the run may use {package}, allow it: --allow-app {package} "
                                              f"(or `allow_apps:` under the document's `app:`, or [safety] "
                                              f"allow_apps in tapir.toml); {back}")


def _texts(obs: Observation, limit: int = 4) -> str:
    """The first texts a screen shows, quoted, for an error (a dialog's question and its buttons)."""
    texts = [str(n.text) for n in obs.tree.nodes if getattr(n, "text", "")]
    return ", ".join(repr(t) for t in dict.fromkeys(texts)) if len(texts) <= limit else \
        ", ".join(repr(t) for t in list(dict.fromkeys(texts))[:limit]) + ", ..."
