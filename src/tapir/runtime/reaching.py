"""Making an element present: on the current screen first, else on its own screen (scrolling a
little when it is absent there), else through the navigator's dependency paths.

**Element first.** Before anything else the element is grounded on the current dump. The
grounder refuses when another screen is confidently showing and defines the same identifiers
(a look-alike dialog's OK button is not this dialog's), so a hit means the element is here,
whatever screen the identification named: the runtime acts without navigating. Only an absent
element makes it navigate, and navigation stops as soon as the element's screen shows.

**On its screen, not shown.** When the element's screen shows but the element does not, even
after scrolling, its own document path is taken from a step available there (the tab that shows
a list: ``Navigator.reveal``); only then is it not found.

**Interruptions.** When the element is absent, the run's watchers are checked first: one whose
trigger shows taps its target (a rating prompt's "Not now") and the element is looked for again;
so they are when navigation or the element's screen fails.

**Reads never open what they read.** A read of an element whose screen is a dialog or menu
that is not open fails at once, without any input; other reads navigate only by steps without
side effects (``tapir.runtime.navigation``, "What navigation may do").
"""

from __future__ import annotations

import difflib

from tapir.core.document import AppDocument, Element
from tapir.core.errors import ElementNotFound, ScreenNotReached, Span, TapirError, UnknownElement
from tapir.runtime.grounding.result import Grounding
from tapir.runtime.navigation import Navigator, render_path, transient_screen
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, SessionConfig
from tapir.runtime.settle import Expectation, Observation, region_digest
from tapir.runtime.watching import Watching


class Reacher:
    """Finds elements on the current screen and reaches the screens of absent ones."""

    def __init__(self, document: AppDocument, screen: ScreenCache, config: SessionConfig) -> None:
        self.document = document
        self.screen = screen
        self.config = config
        #: Set by ``DeviceRuntime`` once the navigation host (which needs list access) exists.
        self.navigator: Navigator | None = None
        #: Set by ``DeviceRuntime``: the watchers, which tap with the action checks (which need this).
        self.watching: Watching | None = None
        #: Set by ``DeviceRuntime``: the packages other than the app that the app handed over to
        #: (app confinement's ``handed_over``): their screens are part of the run.
        self.handed_over: frozenset[str] | set[str] = frozenset()

    def foreign(self, obs: Observation) -> bool:
        """Whether another app than the run's (and those it handed over to) is in front on ``obs``."""
        return bool(obs.package) and obs.package != self.document.app.package and obs.package not in self.handed_over

    def element(self, name: str, span: Span | None) -> Element:
        el = self.document.element(name)
        if el is None:
            names = [e.name for e in self.document.elements]
            close = difflib.get_close_matches(name, names, n=3)
            raise UnknownElement(
                f"${name} is not an element of the app document {self.document.source or self.document.app.name}",
                span, hint=("did you mean " + ", ".join("$" + n for n in close) + "?") if close else None,
            )
        return el

    def where(self, obs: Observation) -> str:
        """Where the device is, in words, for errors: the screen, or another app or an unknown
        screen with the first texts it shows (what a watcher for an interruption would name)."""
        if obs.screen is not None and not self.foreign(obs):
            return repr(obs.screen)
        texts: list[str] = []
        for n in obs.tree.nodes:
            label = (n.text or n.content_desc).strip()
            if n.visible and label and label not in texts:
                texts.append(label[:160])
            if len(texts) == 3 or sum(map(len, texts)) > 120:
                break
        showing = ", ".join(repr(t) for t in texts)
        if not self.document.app.package:  # a run without a document: only what is in front
            return f"{obs.package or 'a screen'}" + (f", showing {showing}" if texts else "")
        if obs.package and obs.package != self.document.app.package:
            return f"another app ({obs.package}{', showing ' + showing if texts else ''})"
        return "a screen the document does not describe" + (f" (showing {showing})" if texts else "")

    def present(self, el: Element, obs: Observation) -> Grounding | None:
        """The grounding of ``el`` on ``obs``, or None when it is not there (element first: the
        screen's name does not matter, see the module docstring)."""
        if self.foreign(obs):
            return None
        g = self.screen.ground(el.name, obs)
        if g is None:
            return None
        if obs.screen is None and g.method != "identifier":
            return None  # an unknown screen: only an exact identifier hit is trusted
        return g

    def reach(self, el: Element, span: Span, c: CallFacts, *, read: bool) -> tuple[Observation, Grounding]:
        """Make ``el`` present (navigating if needed, see the module docstring); return the
        screen and its grounding. ``read``: the call only reads.

        When it is absent, or cannot be reached, the watchers may dismiss an interruption that is
        in the way (``tapir.runtime.watching``), and it is looked for again (watchers fire at most
        ``MAX_PER_CALL`` times in one call)."""
        while True:
            try:
                return self._reach(el, span, c, read=read)
            except (ElementNotFound, ScreenNotReached) as exc:
                if self.watching is not None:
                    # bounded: a call lets watchers fire at most MAX_PER_CALL times
                    after = self.watching.check(self.screen.observe(fresh=False), c)
                    if after is not None:
                        continue
                    hint = self.watching.exhausted_hint()
                    if hint is not None:
                        exc.hint = f"{exc.hint}; {hint}" if exc.hint else hint
                raise

    def _reach(self, el: Element, span: Span, c: CallFacts, *, read: bool) -> tuple[Observation, Grounding]:
        started = self.screen.clock()
        obs = self.screen.observe()
        if not c.observed:
            c.observed, c.screen_before = True, obs.screen
        g = self.present(el, obs)
        if g is None and self.watching is not None:
            # an interruption may be covering it: dismissed before navigation would walk away from it
            after = self.watching.check(obs, c)
            if after is not None:
                obs = after
                g = self.present(el, obs)
        if g is None and obs.screen != el.screen:
            obs = self._navigate(el, obs, span, c, read=read)
            g = self.present(el, obs)
        if g is None:
            g = self._find_by_scrolling(el, c)
            obs = self.screen.observe(fresh=False)
        if g is None and obs.screen == el.screen and not self.foreign(obs):
            obs, g = self._reveal(el, obs, span, c, read=read)
        if g is None:
            reached = f" (reached after {len(c.navigation.steps)} navigation step(s))" \
                if c.navigation is not None and c.navigation.steps else ""
            raise ElementNotFound(
                f"${el.name} is not on the screen: the device shows {self.where(obs)}{reached} but no view "
                "matches the element's identifiers", span,
                hint="the app may be in another state than the document describes (an empty list, a "
                     "closed section, an error that did not happen), or the identifiers are out of date",
            )
        c.ground_s += self.screen.clock() - started
        return obs, g

    def _navigate(self, el: Element, obs: Observation, span: Span, c: CallFacts, *, read: bool) -> Observation:
        screen = self.document.screen(el.screen)
        assert self.navigator is not None, "DeviceRuntime attaches the navigator"
        if read and screen is not None and transient_screen(screen):
            paths = self.navigator.paths_for(el)
            how = f" (the document opens it with {render_path(paths[0].steps)})" if paths else ""
            raise ScreenNotReached(
                f"${el.name} is on {el.screen!r}, which is not open: the device shows {self.where(obs)}; "
                "a read does not open a dialog or menu to read it", span,
                hint=f"open {el.screen!r} in the script before reading it{how}; the read sent no input",
            )

        def arrived(o: Observation) -> bool:
            return o.screen == el.screen or self.present(el, o) is not None

        if hasattr(self.navigator.host, "reaching"):  # PathSteps names the target when a step is refused
            self.navigator.host.reaching = el.name
        try:
            reached, nav = self.navigator.reach(el, arrived, span, read=read)
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            raise
        c.navigation = nav
        return reached

    def _reveal(self, el: Element, obs: Observation, span: Span, c: CallFacts, *,
                read: bool) -> tuple[Observation, Grounding | None]:
        """On its own screen but not shown (a tab's list that shows after the tab is tapped): the
        element's own document path from a step available here (``Navigator.reveal``)."""
        assert self.navigator is not None, "DeviceRuntime attaches the navigator"
        try:
            done = self.navigator.reveal(el, lambda o: self.present(el, o) is not None, span, read=read)
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            raise
        if done is None:
            return obs, None
        after, nav = done
        if c.navigation is None:
            c.navigation = nav
        else:
            c.navigation.steps.extend(nav.steps)
            c.navigation.tried.extend(t for t in nav.tried if t not in c.navigation.tried)
        return after, self.present(el, after)

    def _find_by_scrolling(self, el: Element, c: CallFacts) -> Grounding | None:
        """On the right screen but the element is absent: it may be further down a scroll view."""
        for _ in range(self.config.find_scrolls):
            obs = self.screen.observe(fresh=False)
            if obs.screen != el.screen:
                return None
            scrollers = sorted((n for n in obs.tree.nodes if n.scrollable and n.bounds.area > 0),
                               key=lambda n: -n.bounds.area)
            if not scrollers:
                return None
            before = region_digest(obs.tree, scrollers[0])
            self.screen.swipe(scrollers[0].bounds, "down", c)
            self.screen.stats.list_scrolls += 1
            # an unmoved view is looked at twice: it may not have redrawn yet
            after = self.screen.settle(Expectation(change=True), c).observation
            g = self.present(el, after)
            if g is not None:
                return g
            moved = [n for n in after.tree.nodes if n.scrollable and n.bounds == scrollers[0].bounds]
            if not moved or region_digest(after.tree, moved[0]) == before:
                return None
        return None
