"""What the inspector says about one view: its attributes, the identifiers Tapir would write for
it, which document element claims it, and what to call it if it becomes an element.

    details = view_details(state, node_id, document)
    details["identifiers"]   # [{'xpath': "//node[@resource-id='org.x:id/sort' and @text='Sort by']",
                             #   'matches': 1, 'unique': True, 'scope': 'screen'}, ...]
    details["claimed_by"]    # [{'element': 'main_screen__sort_button', 'how': 'identifier 0', 'score': 1.0}]
    details["suggestion"]    # {'screen': 'main_screen', 'name': 'sort_by_button', 'kind': 'button', ...}

Identifiers are ``tapir docgen``'s (``docgen.build.identifiers``): every conjunction of the view's
resource id, text, content description, row label and class, most precise first, each tightened
by the nearest ancestor with an id when that helps. Each is checked here on this screen with the
runtime's own XPath evaluator: how many visible views it selects (``unique`` when that is just
this one). A view inside an item of a list element gets identifiers checked within the item too:
those are what a child element of the list (``item_of``) needs.
"""

from __future__ import annotations

from typing import Any

from tapir.core.document import AppDocument, Dialect, Identifier
from tapir.core.errors import DocumentError
from tapir.docgen.build.elements import kind_of
from tapir.docgen.build.identifiers import Sighting, TreeIndex, candidates
from tapir.docgen.build.naming import element_base, with_suffix
from tapir.docgen.build.policy import DangerPolicy
from tapir.dsl.api import Kind
from tapir.hierarchy.model import UINode, UITree
from tapir.inspector.screen import ScreenState, receiver
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.screen_view import ScreenView

__all__ = ["MAX_IDENTIFIERS", "checked_identifiers", "containing_item", "view_details"]

#: Identifiers offered for one view (per scope).
MAX_IDENTIFIERS = 8


def checked_identifiers(tree: UITree, node: UINode, *, scope: UINode | None = None,
                        limit: int = MAX_IDENTIFIERS) -> list[dict[str, Any]]:
    """The identifiers Tapir would write for ``node``, most precise first, each with the number of
    visible views it selects on ``tree`` (within ``scope``'s subtree when given)."""
    index = TreeIndex(tree)
    found, _ = candidates([Sighting(index, node.id, scope.id if scope is not None else None)])
    view = ScreenView(tree)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in found:
        xpath = c.xpath()
        if xpath in seen:
            continue
        seen.add(xpath)
        try:
            hits = evaluate(Identifier(xpath, Dialect.UIAUTOMATOR), view,
                            within=scope.id if scope is not None else None)
        except DocumentError:
            continue
        ids = [h.id for h in hits]
        out.append({"xpath": xpath, "matches": len(ids), "unique": ids == [node.id],
                    "finds_it": node.id in ids, "scope": "item" if scope is not None else "screen"})
        if len(out) >= limit:
            break
    # unique ones first, keeping the precision order within each group
    out.sort(key=lambda i: not i["unique"])
    return out


def containing_item(state: ScreenState, node: UINode) -> tuple[str, UINode] | None:
    """The list element and item of the screen that ``node`` is inside (or is), if any."""
    path = {node.id, *(a.id for a in state.tree.ancestors(node.id))}
    best: tuple[str, UINode] | None = None
    for f in state.found:
        if not f.element.is_list or f.node is None:
            continue
        for item in f.nodes:
            if item.id in path and (best is None or item.depth > best[1].depth):
                best = (f.element.name, item)
    return best


def _claims(state: ScreenState, node: UINode, document: AppDocument) -> list[dict[str, Any]]:
    out = [{"element": c.element, "how": c.how, "score": c.score, "item": c.item}
           for c in state.claims.get(node.id, [])]
    named = {c["element"] for c in out}
    # elements of other screens whose identifiers select this view (a screen identified wrongly,
    # or an element written for a look-alike): worth knowing, not a grounding
    view = ScreenView(state.tree)
    for screen in document.screens:
        if screen.name == state.match.name:
            continue
        for el in screen.elements:
            if el.item_of or el.name in named:
                continue
            for i, ident in enumerate(el.identifiers):
                try:
                    hits = evaluate(ident, view)
                except DocumentError:
                    continue
                if [h.id for h in hits] == [node.id]:
                    out.append({"element": el.name, "how": f"identifier {i} (screen {screen.name}, not showing)",
                                "score": None, "item": False, "other_screen": True})
                    break
    return out


def _suggest(state: ScreenState, node: UINode, document: AppDocument, item: tuple[str, UINode] | None
             ) -> dict[str, Any]:
    tree = state.tree
    target = receiver(tree, node) if not (node.text or node.content_desc) else node
    kind = kind_of(target)
    if kind is Kind.SCROLLER and any(c in target.short_class for c in ("ListView", "RecyclerView", "GridView")):
        kind = Kind.LIST
    label = node.text or next((d.text for d in tree.descendants(node.id) if d.text.strip()), "")
    base = element_base(node.resource_id, node.content_desc, label, kind, class_name=node.class_name)
    screen = state.match.name or (document.screens[0].name if document.screens else "")
    taken = {e.local_name for s in document.screens if s.name == screen for e in s.elements}
    name = with_suffix(base, kind) or "view"
    n = 2
    unique = name
    while unique in taken:
        unique, n = f"{name}_{n}", n + 1
    what = label or node.content_desc or node.resource_name or node.short_class
    description = f"The {kind.value} {what!r}." if what else f"A {kind.value}."
    reason = DangerPolicy.default().reason(" ".join(x for x in (node.text, node.content_desc, node.resource_id) if x))
    return {"screen": screen, "name": unique, "kind": kind.value, "description": description,
            "item_of": item[0] if item is not None and item[1].id != node.id else None,
            "sensitive": reason is not None, "sensitive_reason": reason}


def view_details(state: ScreenState, node_id: int, document: AppDocument) -> dict[str, Any]:
    """Everything the page's view panel shows for one view of ``state`` (``KeyError`` when the
    dump has no such view)."""
    tree = state.tree
    node = tree.node(node_id)
    item = containing_item(state, node)
    identifiers = checked_identifiers(tree, node)
    if item is not None and item[1].id != node.id:
        identifiers = checked_identifiers(tree, node, scope=item[1]) + identifiers
    touched = receiver(tree, node)
    attributes = {
        "class": node.class_name, "resource-id": node.resource_id, "text": node.text,
        "content-desc": node.content_desc, "bounds": str(node.bounds), "package": node.package,
        **{flag: getattr(node, flag) for flag in ("clickable", "long_clickable", "checkable", "checked",
                                                  "selected", "scrollable", "editable", "focusable", "focused",
                                                  "enabled", "password")},
    }
    return {
        "seq": state.seq,
        "node": node.id,
        "label": _label(node),
        "attributes": attributes,
        "path": [a.id for a in reversed(tree.ancestors(node.id))],
        "receiver": touched.id,
        "identifiers": identifiers,
        "claimed_by": _claims(state, node, document),
        "in_item": {"list": item[0], "item": item[1].id} if item is not None else None,
        "suggestion": _suggest(state, node, document, item),
    }


def _label(node: UINode) -> str:
    from tapir.runtime.screen_elements import describe_node

    return describe_node(node)
