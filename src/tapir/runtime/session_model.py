"""The session's data: its configuration and counters, what one call resolved to and gathered
for its trace line, and the small helpers the ``DeviceRuntime`` parts share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from tapir.core.document import Element
from tapir.hierarchy.model import Bounds, UINode, UITree
from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.items import node_text
from tapir.runtime.grounding.result import Grounding, ScreenMatch
from tapir.runtime.navigation import Navigation, NavigationConfig
from tapir.runtime.settle import Observation, SettleConfig

# ---------------------------------------------------------------------------------------------
# What the session needs from the grounding core (tapir.runtime.grounding.Grounder)


class GrounderLike(Protocol):
    """The grounding core as the session uses it (``Grounder`` implements it)."""

    def identify_screen(self, tree: UITree) -> ScreenMatch: ...

    def ground(self, element_name: str, tree: UITree, *, within: UINode | None = None) -> Grounding | None: ...

    def items(self, list_element_name: str, tree: UITree) -> list[UINode]: ...

    def match_item(self, list_element_name: str, items: list[UINode], tree: UITree,
                   query: str | Mapping[str, Any]) -> Grounding | None: ...

    def child(self, list_element_name: str, child_element_name: str, item: UINode,
              tree: UITree) -> Grounding | None: ...


# ---------------------------------------------------------------------------------------------
# Configuration and statistics

#: ``match_text`` limited to its exact stages (equal, then equal after case and space folding).
EXACT_ONLY = GroundingConfig(use_fuzzy=False, use_embedding=False)


@dataclass(frozen=True)
class SessionConfig:
    settle: SettleConfig = field(default_factory=SettleConfig)
    navigation: NavigationConfig = field(default_factory=NavigationConfig)
    #: Swipes allowed to reach one list item, count a list or find a match.
    max_scrolls: int = 40
    #: A list swipe moves this fraction of the list's height (leaving overlap to align items).
    swipe_fraction: float = 0.55
    #: ``page_*`` directions move this much.
    page_fraction: float = 0.8
    swipe_ms: int = 500
    long_tap_ms: int = 800
    #: Swipes to look for an element on its own screen before ``ElementNotFound``.
    find_scrolls: int = 3


@dataclass
class SessionStats:
    """Counters of one session (the trace's last line; ``bench/dumps_per_action.py`` reads them)."""

    dumps: int = 0
    #: Inputs sent to the device: taps, long taps, swipes, keys, typed texts, app starts.
    device_actions: int = 0
    #: UI actions of the script (what the interpreter's action budget counts).
    script_actions: int = 0
    reads: int = 0
    navigation_steps: int = 0
    list_scrolls: int = 0
    settle_extra_dumps: int = 0
    #: Dumps taken because the last one was older than ``SettleConfig.fresh_s`` (polling reads, waits).
    refresh_dumps: int = 0
    #: Dumps of waits looking again (``tapir.runtime.waiting``): how long the app took, not how
    #: well the runtime acts, so ``dumps_per_device_action`` leaves them out.
    wait_dumps: int = 0
    #: Firings of each watcher (``tapir.runtime.watching``), by name.
    watchers: dict[str, int] = field(default_factory=dict)
    #: Times another app was found in front and left (``tapir.runtime.guards.confinement``).
    left_app: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        acting = self.dumps - self.wait_dumps
        d["dumps_per_device_action"] = round(acting / self.device_actions, 3) if self.device_actions else None
        return d


# ---------------------------------------------------------------------------------------------
# Resolution results


@dataclass(frozen=True)
class ResolvedTarget:
    """A handle resolved on the current (or a remembered) dump."""

    element: Element
    node: UINode
    obs: Observation
    #: How it was found, as the trace names it: ``identifier 0``, ``fuzzy``, ``item 3``...
    how: str
    #: The grounder's answer (None for a list item, which is found by position or match).
    grounding: Grounding | None = None
    #: The list and absolute item index when the node is an item or inside one.
    list_name: str | None = None
    item_index: int | None = None
    #: True for the item itself (not a child element inside it).
    is_item: bool = False


@dataclass
class CallFacts:
    """Facts gathered while one script call runs, for its trace line."""

    name: str
    started: float
    dumps0: int
    actions0: int
    target: ResolvedTarget | None = None
    navigation: Navigation | None = None
    screen_before: str | None = None
    observed: bool = False
    point: tuple[int, int] | None = None
    settle_reason: str | None = None
    ground_s: float = 0.0
    act_s: float = 0.0
    settle_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def editable_node(tree: UITree, node: UINode) -> UINode | None:
    if node.editable:
        return node
    for n in tree.descendants(node.id):
        if n.editable:
            return n
    return None


def action_label(tree: UITree, node: UINode) -> str:
    """What a person would call the view acted on: its text (as AutoDroid-V2's HTML shows it, cut
    to 50 characters), else its description, else the first text inside it."""
    return node.text[:50].strip() or node.content_desc.strip() or node_text(tree, node)[:50].strip()


def describe_query(query: Any) -> str:
    return repr(query) if isinstance(query, str) else str(dict(query) if not isinstance(query, dict) else query)


def how_grounded(g: Grounding) -> str:
    """How a grounding was found, as the trace names it."""
    if g.method == "identifier":
        return f"identifier {g.identifier_index}" if g.identifier_index is not None else "identifier"
    return g.method


def grounding_fields(g: Grounding) -> dict[str, Any]:
    """A grounding's part of a trace line."""
    return {"grounded": how_grounded(g), "score": g.score, "runner_up": g.runner_up_score}


def bounds_tuple(b: Bounds) -> tuple[int, int, int, int]:
    """``(x1, y1, x2, y2)`` for the trace."""
    return (b.x1, b.y1, b.x2, b.y2)
