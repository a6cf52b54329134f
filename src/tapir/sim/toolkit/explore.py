"""Explore a toolkit app: every screen, dialog and menu reachable by taps from where it stands.

Used by tests (every reachable view must lay out sanely) and handy for writing app documents. Rows
of a list are alike, so one element of each kind (same resource id, class and description; same
texts for elements without an id) is tapped per view.
"""

from __future__ import annotations

import copy

from tapir.sim.toolkit.app import ToolkitApp
from tapir.sim.toolkit.tree import Node

ViewKey = tuple[str, str | None]


def crawl(app: ToolkitApp) -> dict[ViewKey, ToolkitApp]:
    """``(screen, dialog or None)`` -> a copy of the app showing that view, reached by taps only."""
    seen: dict[ViewKey, ToolkitApp] = {(app.current_screen, app.current_dialog): app}
    frontier = [app]
    while frontier:
        here = frontier.pop()
        kinds: dict[tuple[str, str, str, str], Node] = {}
        for node in here.window().walk():
            if node.clickable and node.enabled:
                label = "" if node.resource_id else " ".join(d.text for d in node.walk())
                kinds.setdefault((node.resource_id, node.cls, node.desc, label), node)
        for node in kinds.values():
            there = copy.deepcopy(here)
            there.tap(*node.bounds.center)
            key = (there.current_screen, there.current_dialog)
            if key not in seen:
                seen[key] = there
                frontier.append(there)
    return seen
