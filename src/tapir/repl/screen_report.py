"""What the REPL's ``:screen``, ``:tree`` and ``:find`` print about the screen now showing.

    screen_report(runtime)               # the document screen, and which of its elements ground, with how
    tree_report(runtime, full=False)     # the hierarchy, one view a line, document elements marked
    find_report(runtime, "//node[@text='Rock']")   # the views an XPath selects (either dialect)

Each looks at the device through the runtime's screen cache (a fresh dump when the last one is
stale, none when it is recent), so looking costs what one read costs and never acts.
"""

from __future__ import annotations

from tapir.core.document import Dialect, Identifier
from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.screen_view import ScreenView
from tapir.runtime.screen_elements import ElementFound, describe_node, ground_screen
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.settle import Observation

__all__ = ["ElementFound", "describe_node", "find_report", "ground_screen", "screen_report", "tree_report"]

def screen_report(runtime: DeviceRuntime) -> str:
    """The document screen showing now, and each of its elements: grounded how, or absent."""
    obs = runtime.screen.observe()
    match = runtime.grounder.identify_screen(obs.tree)
    others = [f"{name} {score:.2f}" for name, score in match.candidates if name != match.name][:3]
    lines = []
    head = f"app {obs.package or '?'} · dump #{obs.seq}"
    if match.name is None:
        lines.append("no screen of the document matches this dump" + (f" (closest: {', '.join(others)})"
                                                                        if others else ""))
        lines.append(head)
        return "\n".join(lines)
    also = f"; also considered: {', '.join(others)}" if others else ""
    lines.append(f"screen {match.name} (confidence {match.score:.2f}{also})")
    lines.append(head)
    found = ground_screen(runtime, obs, match.name)
    width = max((len(f.element.name) + 1 for f in found), default=0)
    for f in found:
        name = f"${f.element.name}".ljust(width)
        kind = f.element.kind.value.ljust(8)
        if f.how is None:
            lines.append(f"  - {name}  {kind}  not on the screen")
            continue
        what = describe_node(f.node) if f.node is not None else ""
        if f.items is not None:
            what += f", {f.items} item{'s' if f.items != 1 else ''} in view"
        lines.append(f"  + {name}  {kind}  {f.how:<14}  {what}")
    grounded = sum(1 for f in found if f.how is not None)
    lines.append(f"{grounded} of {len(found)} elements of {match.name} ground on this screen")
    return "\n".join(lines)


def _marks(runtime: DeviceRuntime, obs: Observation) -> dict[int, list[str]]:
    """Node id -> the document elements grounded on it (those of the screen showing)."""
    marks: dict[int, list[str]] = {}
    if obs.screen is None:
        return marks
    for f in ground_screen(runtime, obs, obs.screen):
        if f.node is not None and not f.element.item_of:
            marks.setdefault(f.node.id, []).append("$" + f.element.name)
    return marks


def _informative(node: UINode) -> bool:
    return bool(node.text or node.content_desc or node.resource_name or node.clickable or node.scrollable
                or node.editable or node.checkable)


def tree_report(runtime: DeviceRuntime, *, full: bool = False) -> str:
    """The current hierarchy, one view a line, indented by depth.

    Compact by default: invisible views and plain layout containers (no text, description, id or
    action) are left out and their children moved up; ``full`` shows every view with its bounds.
    Views that elements of the screen showing ground to end with ``<- $element``."""
    obs = runtime.screen.observe()
    marks = _marks(runtime, obs)
    tree = obs.tree
    lines = [f"{obs.screen or 'no document screen'} · {len(tree)} views · dump #{obs.seq}"]

    def walk(node: UINode, depth: int) -> None:
        if not node.visible and not full:
            return
        shown = full or _informative(node) or node.id in marks
        if shown:
            text = "  " * depth + describe_node(node)
            if full:
                text += f" {node.bounds}"
            if node.id in marks:
                text += "  <- " + ", ".join(marks[node.id])
            lines.append(text)
        for child in tree.children(node.id):
            walk(child, depth + 1 if shown else depth)

    for root in tree.roots:
        walk(tree.node(root), 0)
    return "\n".join(lines)


def _dialect_of(xpath: str) -> Dialect:
    """``//node[...]``, ``@resource-id``, ``@content-desc`` or ``@class`` are the dump's form; anything
    else is AutoDroid-V2's HTML form (``//button[@resource_id=...]``)."""
    if "node" in xpath or any(a in xpath for a in ("@resource-id", "@content-desc", "@class", "@package")):
        return Dialect.UIAUTOMATOR
    return Dialect.HTML


def find_report(runtime: DeviceRuntime, xpath: str) -> str:
    """The visible views ``xpath`` selects on the current screen (``DocumentError`` when it is not
    a valid XPath), each with the document elements grounded on it."""
    obs = runtime.screen.observe()
    dialect = _dialect_of(xpath)
    hits = find_nodes(obs.tree, xpath, dialect)
    marks = _marks(runtime, obs)
    count = f"{len(hits)} view{'s' if len(hits) != 1 else ''}"
    lines = [f"{count} match ({dialect.value} XPath) on {obs.screen or 'a screen of no document screen'}"]
    for node in hits:
        text = f"  {describe_node(node)} {node.bounds}"
        if node.id in marks:
            text += "  <- " + ", ".join(marks[node.id])
        lines.append(text)
    return "\n".join(lines)


def find_nodes(tree: UITree, xpath: str, dialect: Dialect) -> list[UINode]:
    """The visible nodes of ``tree`` that ``xpath`` selects, in document order."""
    return evaluate(Identifier(xpath, dialect), ScreenView(tree))
