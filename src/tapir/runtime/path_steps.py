"""The navigator's hands: whether a dependency-path step can be taken on the current screen, and
taking it (``tapir.runtime.navigation.NavigationHost`` over the session's parts).

A step names an element and an action (``songs_screen__more_options_button.tap()``), optionally
an item (``main_menu__options.match('Settings').tap()``). A step on a list or on an element
inside its items that names no item acts on the first item in view: the navigation policy lets
that happen only along the target element's own path, where the document's author chose it; one
that names the item the script chose (``chosen``) acts on that item's row; so does one on a list
that shows a single item right after the script typed on its screen (a search down to one result).
Each step taken is one ``navigation`` line in the trace. A tap passes the sensitive-action guard
first (``tapir.runtime.guards``: navigation never taps something sensitive on its own, and along
the target's own path only with the run's permission), and relaunching the app because another
one is in front passes app confinement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.core.document import AppDocument, Element, Step
from tapir.core.errors import ActionError, ElementNotFound, Span, TapirError
from tapir.hierarchy.model import UINode
from tapir.runtime.action_checks import ActionChecks
from tapir.runtime.call_trace import CallTrace
from tapir.runtime.grounding.fuzzy import words
from tapir.runtime.grounding.items import node_text
from tapir.runtime.list_access import ListAccess
from tapir.runtime.lists import well_visible
from tapir.runtime.navigation import PLACE_NOISE as _GENERIC
from tapir.runtime.reaching import Reacher
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, ResolvedTarget, action_label, bounds_tuple, grounding_fields
from tapir.runtime.settle import Expectation, Observation, region_digest

if TYPE_CHECKING:
    from tapir.runtime.guards import Guards




class PathSteps:
    """Implements ``NavigationHost`` for ``DeviceRuntime`` (see the module docstring)."""

    def __init__(self, document: AppDocument, screen: ScreenCache, reacher: Reacher, lists: ListAccess,
                 checks: ActionChecks, trace: CallTrace, *, guards: Guards | None = None) -> None:
        self.document = document
        self.screen = screen
        self.reacher = reacher
        self.lists = lists
        self.checks = checks
        self.trace = trace
        self.guards = guards
        #: The element the current navigation reaches (named when a step is refused).
        self.reaching: str | None = None
        #: The item of each list the script chose last, by the list's name (``chosen_item``):
        #: the session sets it on ``match()`` and on each step of a ``for`` loop over a list.
        self.chosen: dict[str, str] = {}
        #: The screen of the script's last ``set_text`` (a search typed, say): the session sets it.
        self.typed_on: str | None = None

    def chosen_item(self, list_name: str) -> str | None:
        chosen = self.chosen.get(list_name)
        if chosen is None:
            chosen = self._sole_result(list_name)
        return chosen

    def typed_screen(self) -> str | None:
        return self.typed_on

    def _sole_result(self, list_name: str) -> str | None:
        """The text of the one item a list shows on the screen where the script last typed ("0133"
        into a search field, one contact left in its results): the script chose it by what it
        typed. None where the list shows more or fewer, or the script typed elsewhere."""
        el = self.document.element(list_name)
        if el is None or not el.is_list or self.typed_on != el.screen:
            return None
        obs = self.screen.observe(fresh=False)
        if obs.screen != el.screen:
            return None
        try:
            items = self.lists.grounder.items(el.name, obs.tree)
        except ElementNotFound:
            return None
        if len(items) != 1:
            return None
        return node_text(obs.tree, items[0]) or None

    def observe(self) -> Observation:
        return self.screen.observe(fresh=False)

    def where(self, obs: Observation) -> str:
        return self.reacher.where(obs)

    def step_available(self, step: Step, obs: Observation) -> bool:
        if step.action == "back" and obs.screen is not None and obs.screen == self.document.app.start_screen:
            return False  # BACK on the app's launch screen leaves the app: never a way forward
        if step.target is None:
            return True
        el = self.document.element(step.target)
        if el is None:
            return obs.screen == step.target  # `<screen>.back()`
        if obs.screen is not None and obs.screen != el.screen:
            return False
        anchor = self.document.element(el.item_of) if el.item_of else el
        if anchor is None or self.reacher.present(anchor, obs) is None:
            return False
        if el.item_of and step.match is not None:
            return True  # the chosen item's row is found (scrolled to) when the step is taken
        if el.item_of or (el.is_list and step.match is None):
            return self._first_item_node(el, obs) is not None
        return True

    def _first_item_node(self, el: Element, obs: Observation, toward: str | None = None) -> UINode | None:
        """What a step acts on when it names no item: a list's item in view, or the child element
        inside an item in view that has it. Which item: the one whose label names the screen the
        step should lead to (``toward``: its name, its elements' names and descriptions), as a tab
        bar's "Video" leads to the video screen; else the first that is not already selected (a
        selected tab leads nowhere new); else the first."""
        list_el = self.document.element(el.item_of) if el.item_of else el
        if list_el is None:
            return None
        try:
            items = self.screen.grounder.items(list_el.name, obs.tree)
        except TapirError:
            return None
        g = self.screen.ground(list_el.name, obs)
        area = g.node if g is not None else None
        found: list[UINode] = []
        for item in items:
            if area is not None and not well_visible(item, items, area):
                continue
            if not el.item_of:
                found.append(item)
                continue
            child = self.screen.grounder.child(list_el.name, el.name, item, obs.tree)
            if child is not None:
                found.append(child.node)
        if len(found) <= 1:
            return found[0] if found else None
        return self._item_toward(found, obs, toward)

    def _item_toward(self, nodes: list[UINode], obs: Observation, toward: str | None) -> UINode:
        named, shown = self._goal_words(toward)
        scored = []
        for order, node in enumerate(nodes):
            label = set(words(action_label(obs.tree, node)).split())
            selected = any(n.selected or n.checked for n in (node, *obs.tree.descendants(node.id)))
            scored.append((-len(label & named), -len(label & shown), selected, order, node))
        return min(scored, key=lambda t: t[:4])[4]

    def _goal_words(self, screen_name: str | None) -> tuple[set[str], set[str]]:
        """The words that name a screen: its own name's, then its elements' names' (the generic
        words of every screen left out). The name comes first: a menu's "Settings" leads to the
        settings screen although "Sync and save data" says more of what that screen holds."""
        screen = self.document.screen(screen_name) if screen_name else None
        if screen is None:
            return set(), set()
        shown: set[str] = set()
        for el in screen.elements:
            shown |= set(words(el.local_name).split())
        return set(words(screen.name).split()) - _GENERIC, shown - _GENERIC

    def run_step(self, step: Step, obs: Observation, span: Span | None, toward: str | None = None) -> Observation:
        """One dependency-path step, with its own trace line."""
        screen = self.screen
        started = screen.clock()
        dumps0, before = screen.stats.dumps, obs.screen
        record: dict[str, Any] = {"event": "navigation", "step": str(step), "screen_before": before}
        el = self.document.element(step.target) if step.target is not None else None
        if el is None:
            key = "enter" if step.action == "enter" else "back"
            screen.input(lambda: screen.device.key(key), None)
            after = screen.settle(Expectation(change=key == "back"), None).observation
        else:
            where = span or Span.point(1, 1)
            node: UINode | None
            if step.match is not None and el.is_list:
                c = CallFacts("navigation", screen.clock(), screen.stats.dumps, screen.stats.device_actions)
                index = self.lists.find_match(el, step.match, where, c, read=False)
                node, obs = self.lists.item_node(el, index, where, c, act=True, from_top=False)
                record["grounded"] = f"item {index}"
            elif step.match is not None and el.item_of and (listed := self.document.element(el.item_of)):
                # the element inside the item the script chose (``Navigator._chosen_items``)
                c = CallFacts("navigation", screen.clock(), screen.stats.dumps, screen.stats.device_actions)
                index = self.lists.find_match(listed, step.match, where, c, read=False)
                row, obs = self.lists.item_node(listed, index, where, c, act=True, from_top=False)
                child = self.screen.grounder.child(listed.name, el.name, row, obs.tree)
                node = child.node if child is not None else None
                record["grounded"] = f"item {index}"
            elif el.item_of or (el.is_list and step.action in ("tap", "long_tap")):
                node = self._first_item_node(el, obs, toward)
                record["grounded"] = "an item toward " + toward if toward else "first item"
            else:
                g = self.reacher.present(el, obs)
                node = g.node if g is not None else None
                if g is not None:
                    record.update(grounding_fields(g))
            if node is None:
                raise ElementNotFound(f"navigation step {step}: ${el.name} is not on the screen", span)
            record["bounds"] = list(bounds_tuple(node.bounds))
            record["action"] = step.action
            record["label"] = action_label(obs.tree, node)
            if step.action == "set_text":
                record["text_typed"] = step.args[0] if step.args else ""
            # a row of a list (matched, or the first in view), not a control inside one
            item = el.is_list and step.action in ("tap", "long_tap")
            after = self._act(step, el, node, obs, span, item=item)
            if self.guards is not None and after.package and after.package != self.document.app.package:
                # a step that opened another app (a document picker) handed over to it as the
                # script's own tap would: the document's screen there is the target's, not foreign
                self.guards.confinement.after_step(after)
        screen.stats.navigation_steps += 1
        record.update({
            "screen_after": after.screen, "dumps": screen.stats.dumps - dumps0, "t": screen.elapsed(),
            "ms": round((screen.clock() - started) * 1000, 1),
        })
        self.trace.write(record)
        return after

    def _act(self, step: Step, el: Element, node: UINode, obs: Observation, span: Span | None, *,
             item: bool = False) -> Observation:
        screen = self.screen
        device = screen.device
        if step.action in ("tap", "long_tap"):
            if self.guards is not None:
                to = f", to reach ${self.reaching}" if self.reaching else ""
                shown = f"${el.name}" + (f".match({step.match!r})" if step.match is not None else "")
                self.guards.sensitive.check("tap" if step.action == "tap" else "long tap", node, obs, element=el,
                                            shown=shown, item=item, span=span,
                                            by=f"navigation (the step {step}{to})")
            x, y = self.checks.tap_point(node, obs)
            if step.action == "tap":
                screen.input(lambda: device.tap(x, y), None)
            else:
                screen.input(lambda: device.long_tap(x, y, screen.config.long_tap_ms), None)
            return screen.settle(Expectation(change=True, screen=el.leads_to), None).observation
        if step.action == "set_text":
            self.checks.type_into(ResolvedTarget(el, node, obs, "navigation"), step.args[0] if step.args else "",
                                  span, None)
            return screen.observe(fresh=False)
        if step.action == "scroll":
            screen.swipe(node.bounds, step.args[0] if step.args else "down", None)
            return screen.settle(Expectation(change=False), None).observation
        raise ActionError(f"navigation step {step}: cannot perform {step.action}()", span)

    def scroll_screen(self, obs: Observation, span: Span | None, direction: str = "down") -> Observation | None:
        """Swipe the largest scroll view toward ``direction`` (``NavigationHost.scroll_screen``), with a
        trace line."""
        scrollers = sorted((n for n in obs.tree.nodes if n.scrollable and n.visible and n.bounds.area > 0),
                           key=lambda n: -n.bounds.area)
        if not scrollers or self.reacher.foreign(obs):
            return None
        box = scrollers[0]
        before = region_digest(obs.tree, box)
        self.screen.swipe(box.bounds, direction, None)
        after = self.screen.settle(Expectation(change=True), None).observation
        self.screen.stats.navigation_steps += 1
        self.trace.write({"event": "navigation", "step": f"scroll({direction!r})", "screen_before": obs.screen,
                          "action": "scroll", "bounds": list(bounds_tuple(box.bounds)),
                          "screen_after": after.screen, "t": self.screen.elapsed()})
        moved = [n for n in after.tree.nodes if n.scrollable and n.bounds == box.bounds]
        if after.screen == obs.screen and (not moved or region_digest(after.tree, moved[0]) == before):
            return None  # the end of the view is showing: nothing further that way
        return after

    def handed_over(self, obs: Observation) -> bool:
        return self.guards is not None and obs.package in self.guards.confinement.handed_over

    def launch_app(self, span: Span | None) -> Observation:
        package = self.document.app.package
        before = self.screen.current.screen if self.screen.current else None
        if self.guards is not None:  # another app in front that the run may not be in: the guard leaves it
            back = self.guards.confinement.during_navigation(self.screen.current, span)
            if back is not None:
                return back
        self.screen.input(lambda: self.screen.device.app_start(package), None)
        after = self.screen.settle(Expectation(change=True, screen=self.document.app.start_screen), None).observation
        self.trace.write({"event": "navigation", "step": f"launch {package}", "screen_before": before,
                          "screen_after": after.screen, "t": self.screen.elapsed()})
        return after
