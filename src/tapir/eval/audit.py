"""Wrong-target audit: did each tap of a run land on the view the script (or navigation) meant?

A drifted app relabels its views; a run that taps the wrong one (a row instead of its "More
options" button, "Delete item" instead of the item's checkbox) may still pass its checks, or fail
them for another reason, and either way the success rate does not show it. The simulated apps
record every touch when asked (``ToolkitApp.audit``): the touched view, and the touched window
as the *undrifted* app labels it, view for view (``TouchAudit.plain_xml``). On that window the
document's identifiers are exact again, so this module finds what each action meant there, with
the identifier stage alone (no similarity guessing), and compares:

    wrong = audit_touches(document, records, touches)      # trace records, the app's TouchAudits
    [w.as_dict() for w in wrong.wrong]                         # {"action": ..., "meant": ..., "touched": ...}

An action is paired with the touches that fall inside the bounds its trace record gives, in order.
A tap is *right* when the touched view is the one a tap on the meant view reaches (the view itself,
or the clickable row that holds it); for an item (``match('x')``, ``[i]``, a first item) the touched
view must be that item of the list (with the query's text), or the item child the action names
inside it. A tap the audit cannot decide (identifiers that find several views even undrifted, a
window whose views changed) is counted apart, never as right or wrong. A wrong tap is
*destructive* when what it touched says delete, remove, clear... (``tapir.runtime.navigation``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tapir.core.document import AppDocument, Element
from tapir.core.errors import TapirError
from tapir.dsl.api import Kind
from tapir.hierarchy import UINode, UITree, parse_uiautomator
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.runtime.grounding.fuzzy import fold, words
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.items import item_strings, match_text
from tapir.runtime.navigation import DESTRUCTIVE

#: Trace calls and navigation actions that touch the screen.
TOUCHING = frozenset({"tap", "long_tap", "set_text"})
_EXACT = GroundingConfig(use_fuzzy=False, use_embedding=False, check_screen=False)
_MATCH = GroundingConfig(use_embedding=False)
_HANDLE = re.compile(r"^\$?(?P<name>[A-Za-z_]\w*)(?P<rest>.*)$", re.S)
_SELECTOR = re.compile(
    r"""\[(?P<index>\d+)\]|\.match\((?P<query>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\{.*?\})\)""", re.S)


@dataclass(frozen=True)
class Meant:
    """What an action acts on: an element, an item of a list (by query, index or any), a child."""

    element: str
    #: for an item: how it was chosen ('match', 'index' or 'first')
    item: str | None = None
    query: str | dict[str, Any] | None = None
    child: str | None = None

    def __str__(self) -> str:
        text = "$" + self.element
        if self.item == "match":
            text += f".match({self.query!r})"
        elif self.item is not None:
            text += f" ({self.item} item)"
        return text + (f" / ${self.child}" if self.child else "")


@dataclass(frozen=True)
class Verdict:
    """One audited touch."""

    action: str
    meant: str
    #: 'right', 'wrong' or 'unknown'
    outcome: str
    touched: str = ""
    why: str = ""
    destructive: bool = False
    screen: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "meant": self.meant, "outcome": self.outcome, "touched": self.touched,
                "why": self.why, "destructive": self.destructive, "view": self.screen}


@dataclass
class Audit:
    """Every audited touch of a run."""

    verdicts: list[Verdict] = field(default_factory=list)
    #: touches no trace record accounts for
    unattributed: int = 0

    @property
    def wrong(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.outcome == "wrong"]

    @property
    def unknown(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.outcome == "unknown"]

    @property
    def right(self) -> int:
        return sum(1 for v in self.verdicts if v.outcome == "right")


def meant_of(record: dict[str, Any]) -> Meant | None:
    """What a trace record's action meant, from its ``element``/``child`` (an action) or its
    ``step`` (a navigation step); None for a record that does not touch the screen."""
    if record.get("event") == "action":
        if record.get("call") not in TOUCHING:
            return None
        found = _parse_handle(str(record.get("element", "")))
        if found is None:
            return None
        child = record.get("child")
        if isinstance(child, str) and child:
            found = Meant(found.element, found.item, found.query, child.lstrip("$"))
        return found
    if record.get("event") == "navigation" and record.get("action") in TOUCHING:
        step = str(record.get("step", ""))
        head = step.rsplit(".", 1)[0] if step.endswith(")") else step
        found = _parse_handle(head)
        if found is None:
            return None
        if record.get("grounded") == "first item":
            return Meant(found.element, "first")
        return found
    return None


def _parse_handle(text: str) -> Meant | None:
    m = _HANDLE.match(text.strip())
    if m is None:
        return None
    name, rest = m.group("name"), m.group("rest")
    item: str | None = None
    query: str | dict[str, Any] | None = None
    pos = 0
    while pos < len(rest):
        s = _SELECTOR.match(rest, pos)
        if s is None:
            break
        if s.group("index") is not None:
            item, query = "index", None
        else:
            item = "match"
            try:
                value = ast.literal_eval(s.group("query"))
            except (ValueError, SyntaxError):
                value = None
            query = value if isinstance(value, str | dict) else None
        pos = s.end()
    return Meant(name, item, query)


def audit_touches(document: AppDocument, records: Sequence[dict[str, Any]], touches: Sequence[Any]) -> Audit:
    """Pair the run's touches with its trace records and judge each (see the module docstring).
    ``touches`` are ``TouchAudit`` values (x, y, view, target, plain_xml)."""
    audit = Audit()
    grounder = Grounder(document, config=_EXACT)
    pending = [(r, meant_of(r)) for r in records]
    acting = [(r, m) for r, m in pending if m is not None and isinstance(r.get("bounds"), list)]
    k = 0
    for touch in touches:
        found = None
        for j in range(k, len(acting)):
            x1, y1, x2, y2 = acting[j][0]["bounds"]
            if x1 <= touch.x < x2 and y1 <= touch.y < y2:
                found = j
                break
        if found is None:
            audit.unattributed += 1
            continue
        record, meant = acting[found]
        k = found + 1
        assert meant is not None
        audit.verdicts.append(_judge(grounder, document, record, meant, touch))
    return audit


def _action_text(record: dict[str, Any]) -> str:
    if record.get("event") == "navigation":
        return f"navigation {record.get('step')}"
    line = record.get("line")
    return f"line {line}: {record.get('statement') or record.get('element')}" if line else str(record.get("element"))


def _judge(grounder: Grounder, document: AppDocument, record: dict[str, Any], meant: Meant, touch: Any) -> Verdict:
    action = _action_text(record)

    def verdict(outcome: str, why: str, touched: UINode | None = None, tree: UITree | None = None) -> Verdict:
        label = _describe(tree, touched) if tree is not None and touched is not None else ""
        risky = outcome == "wrong" and tree is not None and touched is not None and _destructive(tree, touched)
        return Verdict(action, str(meant), outcome, label, why, risky, str(getattr(touch, "view", "")))

    if touch.plain_xml is None:
        return verdict("unknown", "the drifted window has other views than the undrifted one")
    tree = parse_uiautomator(touch.plain_xml)
    if touch.target is None:
        return verdict("wrong", "the touch reached no view")
    touched = tree.node(touch.target)
    element = document.element(meant.element)
    if element is None:
        return verdict("unknown", f"the document has no element {meant.element}", touched, tree)
    try:
        if meant.item is None and not element.item_of:
            return _judge_element(grounder, element, tree, touched, verdict)
        return _judge_item(grounder, document, element, meant, tree, touched, verdict)
    except TapirError as exc:
        return verdict("unknown", f"cannot tell: {exc.message}", touched, tree)


def _reached(tree: UITree, node: UINode) -> int:
    """The view a tap on ``node``'s centre reaches: itself when clickable, else the clickable view
    holding it (the simulator dispatches touches to the deepest clickable view)."""
    for n in (node, *tree.ancestors(node.id)):
        if n.clickable or n.long_clickable:
            return n.id
    return node.id


def _judge_element(grounder: Grounder, element: Element, tree: UITree, touched: UINode, verdict: Any) -> Verdict:
    found = grounder.ground(element.name, tree)
    if found is None:
        view = grounder.view(tree)
        hits = [n for i in element.identifiers for n in _safe_evaluate(i, view)]
        if hits:
            return verdict("unknown", "its identifiers find several views even undrifted", touched, tree)
        return verdict("wrong", f"${element.name} is not on this screen", touched, tree)
    want = _reached(tree, found.node) if element.kind != Kind.INPUT else found.node.id
    if touched.id == want or (element.kind == Kind.INPUT and touched.id == _reached(tree, found.node)):
        return verdict("right", "", touched, tree)
    return verdict("wrong", f"meant {_describe(tree, tree.node(want))}", touched, tree)


def _judge_item(grounder: Grounder, document: AppDocument, element: Element, meant: Meant, tree: UITree,
                touched: UINode, verdict: Any) -> Verdict:
    list_name = element.item_of or element.name
    child = meant.child or (element.name if element.item_of else None)
    try:
        items = grounder.items(list_name, tree)
    except TapirError:
        return verdict("wrong", f"${list_name} is not on this screen", touched, tree)
    chain = {touched.id, *(a.id for a in tree.ancestors(touched.id))}
    item = next((i for i in items if i.id in chain or touched.id == _reached(tree, i)), None)
    if item is None:
        return verdict("wrong", f"not an item of ${list_name}", touched, tree)
    if meant.item == "match" and isinstance(meant.query, str):
        q = fold(meant.query)
        if not any(fold(s) == q for s in item_strings(tree, item)):
            # what matching picks among the items on the undrifted labels (a label may hold
            # more than the query: "Gym" names "Gym · Mon, Wed, Fri")
            picked, _ = match_text(tree, items, meant.query, context=list_name, config=_MATCH, embedder=None)
            if picked is None or picked.node.id != item.id:
                return verdict("wrong", f"an item that does not show {meant.query!r}", touched, tree)
    if child is None:
        # the item itself: a tap on it reaches the item (or the clickable view around it), not a
        # button inside it
        reached = _reached(tree, item)
        if touched.id == reached or (reached == item.id and touched.id == item.id):
            return verdict("right", "", touched, tree)
        if not (item.clickable or item.long_clickable) and reached == item.id:
            return verdict("right", "", touched, tree)  # a plain row: whatever inside it takes the tap
        return verdict("wrong", f"meant the item itself, {_describe(tree, item)}", touched, tree)
    found = grounder.child(list_name, child, item, tree)
    if found is None:
        view = grounder.view(tree)
        el = document.element(child)
        hits = [n for i in (el.identifiers if el else ()) for n in _safe_evaluate(i, view, within=item.id)]
        if hits:
            return verdict("unknown", f"${child} finds several views in the item even undrifted", touched, tree)
        return verdict("wrong", f"the item has no ${child}", touched, tree)
    if touched.id == _reached(tree, found.node):
        return verdict("right", "", touched, tree)
    return verdict("wrong", f"meant {_describe(tree, found.node)}", touched, tree)


def _safe_evaluate(identifier: Any, view: Any, within: int | None = None) -> list[UINode]:
    try:
        return evaluate(identifier, view, within=within)
    except TapirError:
        return []


def _labels(tree: UITree, node: UINode) -> list[str]:
    out = []
    for n in (node, *tree.descendants(node.id)[:12]):
        for s in (n.text.strip(), n.content_desc.strip()):
            if s and s not in out:
                out.append(s)
    return out


def _describe(tree: UITree | None, node: UINode) -> str:
    shown = _labels(tree, node)[:2] if tree is not None else []
    name = node.resource_name or node.short_class
    return f"{name} {' / '.join(repr(s) for s in shown)}".strip()


def _destructive(tree: UITree, node: UINode) -> bool:
    said: Iterable[str] = [*_labels(tree, node), node.resource_name]
    return any(w in DESTRUCTIVE for s in said for w in words(s).split())


__all__ = ["Audit", "Meant", "Verdict", "audit_touches", "meant_of"]
