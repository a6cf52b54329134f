"""Helpers for the device-runtime tests: a simulated device reached in-process through the real
``AdbDevice`` command layer, and a small XPath grounder with the ``Grounder`` interface.

``XPathGrounder`` is deliberately plain (first identifier that hits, screens by their ``all``
XPaths, items = the list node's children, match = equal text ignoring case), so the session's
own logic (navigation, scrolling, settling, checks) is tested apart from the grounding core.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from tapir.core.document import AppDocument, Dialect
from tapir.core.safety import Safety
from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.clock import SimulatedClock
from tapir.runtime.device import AdbDevice
from tapir.runtime.grounding.items import node_text
from tapir.runtime.grounding.result import Grounding, ScreenMatch
from tapir.runtime.retry import RetryPolicy
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.runtime.settle import SettleConfig
from tapir.runtime.trace import MemoryTrace
from tapir.sim.device import SimDevice


class DirectTransport:
    """``adb shell`` answered by the simulated device in-process (no adb server)."""

    def __init__(self, sim: SimDevice) -> None:
        self.sim = sim
        self.commands: list[str] = []

    def shell(self, command: str, *, timeout: float) -> bytes:
        self.commands.append(command)
        return self.sim.run_shell(command).output


def grounding(node: UINode, method: str = "identifier", identifier_index: int | None = 0) -> Grounding:
    return Grounding(node, method, identifier_index, 1.0, None, "")


def _as_xml(tree: UITree) -> tuple[Any, dict[Any, UINode]]:
    root = etree.Element("hierarchy")
    where: dict[Any, UINode] = {}

    def add(parent: Any, node: UINode) -> None:
        el = etree.SubElement(parent, "node", {
            "class": node.class_name, "resource-id": node.resource_id, "text": node.text,
            "content-desc": node.content_desc, "selected": str(node.selected).lower(),
            "checked": str(node.checked).lower(), "enabled": str(node.enabled).lower(),
        })
        where[el] = node
        for c in node.children:
            add(el, tree.node(c))

    for r in tree.roots:
        add(root, tree.node(r))
    return root, where


class XPathGrounder:
    """The ``Grounder`` interface over uiautomator XPaths only (see the module docstring)."""

    def __init__(self, document: AppDocument) -> None:
        self.document = document
        self.calls: list[str] = []
        self._cache: dict[int, tuple[Any, dict[Any, UINode]]] = {}

    def _xml(self, tree: UITree) -> tuple[Any, dict[Any, UINode]]:
        key = id(tree)
        if key not in self._cache:
            self._cache = {key: _as_xml(tree)}
        return self._cache[key]

    def _hits(self, xpath: str, tree: UITree, within: UINode | None = None) -> list[UINode]:
        root, where = self._xml(tree)
        found = [where[e] for e in root.xpath(xpath) if e in where]
        if within is not None:
            inside = {within.id, *(d.id for d in tree.descendants(within.id))}
            found = [n for n in found if n.id in inside]
        return found

    def identify_screen(self, tree: UITree) -> ScreenMatch:
        for screen in self.document.screens:
            sig = screen.signature
            if not sig.all_of:
                continue
            if all(self._hits(i.xpath, tree) for i in sig.all_of) and not any(
                    self._hits(i.xpath, tree) for i in sig.none_of):
                return ScreenMatch(screen.name, 1.0, ((screen.name, 1.0),))
        return ScreenMatch(None, 0.0, ())

    def ground(self, element_name: str, tree: UITree, *, within: UINode | None = None) -> Grounding | None:
        self.calls.append(element_name)
        el = self.document.element(element_name)
        assert el is not None
        for k, ident in enumerate(el.identifiers):
            if ident.dialect is not Dialect.UIAUTOMATOR:
                continue
            hits = [n for n in self._hits(ident.xpath, tree, within) if n.bounds.area > 0]
            if hits:
                return grounding(hits[0], identifier_index=k)
        return None

    def items(self, list_element_name: str, tree: UITree) -> list[UINode]:
        g = self.ground(list_element_name, tree)
        if g is None:
            return []
        return [tree.node(c) for c in g.node.children if tree.node(c).bounds.area > 0]

    def match_item(self, list_element_name: str, items: list[UINode], tree: UITree,
                   query: Any) -> Grounding | None:
        for item in items:
            if isinstance(query, str):
                texts = [item.text, *(d.text for d in tree.descendants(item.id))]
                if any(t.strip().casefold() == query.strip().casefold() for t in texts if t):
                    return grounding(item, method="exact", identifier_index=None)
            else:
                attrs = {"selected": item.selected, "checked": item.checked, "text": node_text(tree, item)}
                if all(attrs.get(k) == v for k, v in query.items()):
                    return grounding(item, method="attributes", identifier_index=None)
        return None

    def child(self, list_element_name: str, child_element_name: str, item: UINode,
              tree: UITree) -> Grounding | None:
        return self.ground(child_element_name, tree, within=item)


def sim_device(app: Any, *, foreground: bool = True) -> tuple[SimDevice, AdbDevice, DirectTransport]:
    sim = SimDevice([app])
    if foreground:
        sim.start_app(app.package)
    transport = DirectTransport(sim)
    device = AdbDevice("sim-direct", transport=transport, retry=RetryPolicy.none(),
                       sleep=lambda s: None)
    return sim, device, transport


def make_runtime(app: Any, document: AppDocument, *, foreground: bool = True, grounder: Any = None,
                 source: str | None = None, config: SessionConfig | None = None, safety: Safety | None = None
                 ) -> tuple[DeviceRuntime, SimDevice, MemoryTrace]:
    """``safety``: the run's permissions (default: none, as ``tapir run`` without ``--allow``)."""
    sim, device, _ = sim_device(app, foreground=foreground)
    trace = MemoryTrace()
    rt = DeviceRuntime(device, document, grounder or XPathGrounder(document),
                       config=config or SessionConfig(settle=SettleConfig.for_simulator()),
                       trace=trace, source=source, sleep=lambda s: None,
                       wait_clock=SimulatedClock(sim.advance_time), safety=safety)
    return rt, sim, trace
