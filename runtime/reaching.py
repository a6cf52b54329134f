"""Grounding on the cached dump and reaching an element: on its screen (scrolling a little when
it is absent there) or through the navigator's dependency paths."""

from __future__ import annotations

import difflib
from typing import Any

from tapir.docgen.model import Element
from tapir.dsl.errors import ElementNotFound, Span, TapirError, UnknownElement
from tapir.runtime.hierarchy.model import UINode
from tapir.runtime.navigation import Navigator
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import Call
from tapir.runtime.settle import Expectation, Observation, region_digest


class Reaching(ScreenCache):
    """Find an element on the current screen, navigating to its screen when needed."""

    navigator: Navigator

    # =========================================================================================
    # Grounding and reaching

    def _element(self, name: str, span: Span | None) -> Element:
        el = self.document.element(name)
        if el is None:
            names = [e.name for e in self.document.elements]
            close = difflib.get_close_matches(name, names, n=3)
            raise UnknownElement(
                f"${name} is not an element of the app document {self.document.source or self.document.app.name}",
                span, hint=("did you mean " + ", ".join("$" + n for n in close) + "?") if close else None,
            )
        return el

    def _ground(self, name: str, obs: Observation, within: UINode | None = None) -> Any:
        key = (name, obs.seq, within.id if within is not None else None)
        if key in self._ground_cache:
            return self._ground_cache[key]
        g = self.grounder.ground(name, obs.tree, within=within) if within is not None else \
            self.grounder.ground(name, obs.tree)
        if obs is self._obs:
            self._ground_cache[key] = g
        return g

    def _present(self, el: Element, obs: Observation) -> Any:
        """The grounding of ``el`` when its screen is showing, else None."""
        if obs.screen is not None and obs.screen != el.screen:
            return None
        if obs.package and obs.package != self.document.app.package:
            return None
        g = self._ground(el.name, obs)
        if g is None:
            return None
        if obs.screen is None and getattr(g, "method", "") != "identifier":
            return None  # an unknown screen: only an exact identifier hit is trusted
        return g

    def _reach(self, el: Element, span: Span, c: Call) -> tuple[Observation, Any]:
        """Make ``el`` present (navigating if needed); return the screen and its grounding."""
        started = self._clock()
        obs = self.observe()
        if not c.observed:
            c.observed, c.screen_before = True, obs.screen
        g = self._present(el, obs)
        if g is None and obs.screen == el.screen:
            g = self._find_by_scrolling(el, span, c)
            obs = self.observe()
            if g is None:
                raise ElementNotFound(
                    f"${el.name} is not on the screen: the device shows {el.screen!r} but no view matches "
                    "the element's identifiers", span,
                    hint="the app may be in another state than the document describes (an empty list, a "
                         "closed section), or the identifiers are out of date",
                )
        if g is None:
            try:
                obs, nav = self.navigator.reach(el, lambda o: self._present(el, o) is not None, span)
            except TapirError as exc:
                if exc.span is None:
                    exc.span = span
                raise
            c.navigation = nav
            g = self._present(el, obs)
            assert g is not None
        c.ground_s += self._clock() - started
        return obs, g

    def _find_by_scrolling(self, el: Element, span: Span, c: Call) -> Any:
        """On the right screen but the element is absent: it may be further down a scroll view."""
        for _ in range(self.config.find_scrolls):
            obs = self.observe()
            scrollers = sorted((n for n in obs.tree.nodes if n.scrollable and n.bounds.area > 0),
                               key=lambda n: -n.bounds.area)
            if not scrollers:
                return None
            before = region_digest(obs.tree, scrollers[0])
            self._swipe(scrollers[0].bounds, "down", c)
            self.stats.list_scrolls += 1
            after = self._settle(Expectation(change=False), c).observation
            g = self._present(el, after)
            if g is not None:
                return g
            moved = [n for n in after.tree.nodes if n.scrollable and n.bounds == scrollers[0].bounds]
            if not moved or region_digest(after.tree, moved[0]) == before:
                return None
        return None
