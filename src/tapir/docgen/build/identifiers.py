"""Identifier queues and screen signatures, checked against every recorded hierarchy.

An identifier is a conjunction of node properties (resource id, text, content description,
class), optionally under an ancestor with a given resource id (the element's *position*: where it
sits, told by the nearest ancestor with an id), written as a uiautomator XPath::

    //node[@resource-id='org.x:id/title' and @text='Sort by']
    //node[@resource-id='org.x:id/settings_theme_holder']//node[@resource-id='org.x:id/value']

``identifier_queue`` returns the queue of an element, most precise first (every property that
never changed across its observations), then with properties dropped; position is only ever
added to another property, never used alone. Each identifier is checked against every hierarchy
of the element's screen: where the element was seen it must find that node and nothing else, and
where it was not seen it must find nothing (but a queue of positioned identifiers only ends with
the plain resource id, checked where the element was seen: the same view in another container).
Checks run on an index of each hierarchy (property -> node ids), so thousands of candidates cost
milliseconds; ``xpath`` renders the same conjunction, and the test suite checks that lxml
evaluates the rendering to the same nodes.

    index = TreeIndex(tree)
    queue = identifier_queue([Sighting(index, node_id)], absent=[other_index], scope=None)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tapir.docgen.upstream import xpath_literal
from tapir.hierarchy import UINode, UITree

#: Properties in the order they appear in an XPath, and their uiautomator attribute names.
ATTRIBUTES = {"rid": "resource-id", "text": "text", "desc": "content-desc", "cls": "class", "selected": "selected",
              "label": "text"}
#: Text longer than this is content, never part of an identifier.
MAX_TEXT = 60
#: At most this many identifiers per element.
MAX_QUEUE = 3
#: Ancestor ids beyond the nearest tried as an element's position, when none nearer tells it apart.
MAX_FARTHER = 3

Props = tuple[tuple[str, str], ...]

#: The views a label finds (``TreeIndex.labelled`` in XPath): clickable, or selected with no
#: selected parent and nothing clickable above it (a selected tab that is not clickable).
LABELLED = ("@clickable='true' or (@selected='true' and not(../@selected='true')"
            " and not(ancestor::node[@clickable='true']))")


@dataclass(frozen=True)
class Conjunction:
    """Properties that must all hold, optionally below an ancestor with resource id ``anchor``."""

    props: Props
    anchor: str = ""

    def xpath(self) -> str:
        label = next((v for k, v in self.props if k == "label"), None)
        terms = " and ".join(f"@{ATTRIBUTES[k]}={xpath_literal(v)}" for k, v in self.props if k != "label")
        prefix = f"//node[@resource-id={xpath_literal(self.anchor)}]" if self.anchor else ""
        if label is not None:
            # the clickable view nearest above a text: a row or a tab known by the label inside it;
            # where none is clickable, the outermost selected view above it (the selected tab, which
            # is not clickable while it is selected, and tapping it again reloads it)
            own = f"//node[@text={xpath_literal(label)}]/ancestor::node[{LABELLED}][1]"
            return prefix + own + (f"[{terms}]" if terms else "")
        own = f"//node[{terms}]" if terms else "//node"
        return prefix + own

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.props) | ({"pos"} if self.anchor else set())


class TreeIndex:
    """Property -> node ids of one hierarchy: every visible node, as the runtime evaluates
    identifiers (it ignores hits on views that are not visible)."""

    def __init__(self, tree: UITree) -> None:
        self.tree = tree
        self.by: dict[tuple[str, str], set[int]] = {}
        self.all: set[int] = set()
        for n in tree.nodes:
            if not n.visible:
                continue
            self.all.add(n.id)
            for key, value in (("rid", n.resource_id), ("text", n.text), ("desc", n.content_desc),
                               ("cls", n.class_name), ("selected", "true" if n.selected else "false")):
                self.by.setdefault((key, value), set()).add(n.id)
        self._subtree: dict[int, frozenset[int]] = {}
        self._labelled: dict[str, set[int]] = {}

    def subtree(self, node_id: int) -> frozenset[int]:
        """The node and everything below it."""
        found = self._subtree.get(node_id)
        if found is None:
            found = frozenset([node_id, *(d.id for d in self.tree.descendants(node_id))])
            self._subtree[node_id] = found
        return found

    def labelled(self, text: str) -> set[int]:
        """The nearest clickable ancestor of each visible node showing ``text``; where it has none,
        the nearest selected ancestor whose parent is not selected (a selected tab, not clickable
        while selected: ``LABELLED``)."""
        found = self._labelled.get(text)
        if found is None:
            found = set()
            for nid in self.by.get(("text", text), set()):
                above = self.tree.ancestors(nid)
                hit = next((a for a in above if a.clickable), None)
                if hit is None:  # the top of the selected views above it: the selected tab
                    hit = next((a for a in above if a.selected and not self._selected_parent(a)), None)
                if hit is not None:
                    found.add(hit.id)
            self._labelled[text] = found
        return found

    def _selected_parent(self, node: UINode) -> bool:
        parent = self.tree.get(node.parent) if node.parent is not None else None
        return parent is not None and parent.selected

    def hits(self, c: Conjunction, scope: int | None = None) -> set[int]:
        """Nodes the conjunction selects, in the whole tree or in the subtree of ``scope``."""
        found: set[int] | None = None
        for prop in c.props:
            ids = self.labelled(prop[1]) if prop[0] == "label" else self.by.get(prop, set())
            found = set(ids) if found is None else found & ids
            if not found:
                return set()
        if found is None:
            found = set(self.all)
        if scope is not None:
            found &= self.subtree(scope)
        if c.anchor and found:
            anchors = self.by.get(("rid", c.anchor), set())
            if scope is not None:
                anchors = anchors & self.subtree(scope)
            found = {n for n in found if any(a.id in anchors for a in self.tree.ancestors(n))}
        return found


@dataclass(frozen=True)
class Sighting:
    """The element seen as ``node`` in a hierarchy (inside the item ``scope`` for child elements)."""

    index: TreeIndex
    node: int
    scope: int | None = None


@dataclass(frozen=True)
class Absence:
    """A hierarchy (or an item) of the element's screen where the element was not seen."""

    index: TreeIndex
    scope: int | None = None


@dataclass
class QueueResult:
    identifiers: list[Conjunction]
    #: Properties left out because they changed across observations.
    changed: list[str] = field(default_factory=list)
    #: Candidates refused, with why (for the report).
    refused: int = 0


def _stable(values: Iterable[str]) -> str | None:
    found = set(values)
    if len(found) != 1:
        return None
    value = found.pop()
    return value or None


def _anchor(node: UINode, tree: UITree, scope: int | None) -> str:
    for a in tree.ancestors(node.id):
        if scope is not None and a.id == scope:
            return ""
        if a.resource_id:
            return a.resource_id
    return ""


def _ids_above(node: UINode, tree: UITree, scope: int | None) -> list[str]:
    """The resource ids of the ancestors of ``node`` (below ``scope``), nearest first."""
    out: list[str] = []
    for a in tree.ancestors(node.id):
        if scope is not None and a.id == scope:
            break
        if a.resource_id and a.resource_id not in out:
            out.append(a.resource_id)
    return out


def _farther_anchors(sightings: Sequence[Sighting], tried: str) -> list[str]:
    """Ancestor ids above every sighting, nearest first, other than ``tried`` (the nearest one's):
    the same layout in two fragments of a pager (a list on the Contacts tab and one on the Groups
    tab, both ``fragment_list`` in a ``fragment_wrapper``) is told apart only by the fragment
    around it, further up."""
    chains = [_ids_above(s.index.tree.node(s.node), s.index.tree, s.scope) for s in sightings]
    if not chains:
        return []
    common = [a for a in chains[0] if a != tried and all(a in c for c in chains[1:])]
    return common[:MAX_FARTHER]


def _label(node: UINode, tree: UITree) -> str:
    """The first text below a clickable (or selected) node without text of its own (a row's or a
    tab's label)."""
    if node.text or node.content_desc or not (node.clickable or node.selected):
        return ""
    for d in tree.descendants(node.id):
        if d.text.strip() and d.visible:
            return d.text
    return ""


def candidates(sightings: Sequence[Sighting]) -> tuple[list[Conjunction], list[str]]:
    """Candidate conjunctions, most precise first, from properties stable across the sightings."""
    nodes = [(s.index.tree.node(s.node), s) for s in sightings]
    changed: list[str] = []

    def stable(key: str, values: list[str]) -> str | None:
        value = _stable(values)
        if value is None and len(set(values)) > 1:
            changed.append(key)
        return value

    rid = stable("resource id", [n.resource_id for n, _ in nodes])
    text = stable("text", [n.text for n, _ in nodes])
    if text is not None and (len(text) > MAX_TEXT or "\n" in text):
        text = None
    desc = stable("content description", [n.content_desc for n, _ in nodes])
    if desc is not None and (len(desc) > MAX_TEXT or "\n" in desc):
        desc = None
    label = _stable(_label(n, s.index.tree) for n, s in nodes)
    if label is not None and (len(label) > MAX_TEXT or "\n" in label):
        label = None
    cls = _stable(n.class_name for n, _ in nodes)
    anchor = _stable(_anchor(n, s.index.tree, s.scope) for n, s in nodes) or ""
    have = {k: v for k, v in (("rid", rid), ("text", text), ("desc", desc), ("label", label)) if v}
    order = [("rid", "text", "desc"), ("rid", "desc"), ("rid", "text"), ("rid", "label"), ("rid",),
             ("desc", "text"), ("desc",), ("text",), ("label",)]
    out: list[Conjunction] = []
    seen: set[Props] = set()
    for combo in order:
        if not all(k in have for k in combo):
            continue
        props = tuple((k, have[k]) for k in combo)
        if props not in seen:
            seen.add(props)
            out.append(Conjunction(props))
    # label-only candidates tightened by class, then everything tightened by position
    tightened = [Conjunction((*c.props, ("cls", cls))) for c in out if "rid" not in c.keys and cls]
    positioned = [Conjunction(c.props, anchor) for c in out + tightened if anchor] if anchor else []
    last: list[Conjunction] = []
    if not out and cls:
        # no id, text or description: the class alone (a screen's only ListView), else the class
        # under a positioned ancestor (still a property, not position alone)
        last.append(Conjunction((("cls", cls),)))
        if anchor:
            last.append(Conjunction((("cls", cls),), anchor))
    return out + tightened + positioned + last, changed


def check(c: Conjunction, sightings: Sequence[Sighting], absences: Sequence[Absence]) -> bool:
    """True when ``c`` finds exactly the element where it was seen and nothing where it was not."""
    for s in sightings:
        if s.index.hits(c, s.scope) != {s.node}:
            return False
    return all(not a.index.hits(c, a.scope) for a in absences)


def identifier_queue(sightings: Sequence[Sighting], absences: Sequence[Absence] = (),
                     limit: int = MAX_QUEUE) -> QueueResult:
    """The checked identifiers of one element, most precise first (see the module docstring)."""
    cands, changed = candidates(sightings)
    kept, refused = _checked(cands, sightings, absences, limit)
    if not kept:
        # nothing near tells it apart: an ancestor further up may (the fragment of its tab)
        tried = next((c.anchor for c in cands if c.anchor), "")
        plain = [c for c in cands if not c.anchor]
        farther = [Conjunction(p.props, a) for a in _farther_anchors(sightings, tried) for p in plain]
        kept, more = _checked(farther, sightings, absences, limit)
        refused += more
    fallback = _id_fallback(cands, kept, sightings)
    if fallback is not None and len(kept) < limit:
        kept.append(fallback)
    return QueueResult(kept, changed, refused)


def _checked(cands: Sequence[Conjunction], sightings: Sequence[Sighting], absences: Sequence[Absence],
             limit: int) -> tuple[list[Conjunction], int]:
    """The first ``limit`` candidates that pass ``check``, and how many were refused before."""
    kept: list[Conjunction] = []
    refused = 0
    for c in cands:
        if len(kept) >= limit:
            break
        if check(c, sightings, absences):
            kept.append(c)
        else:
            refused += 1
    return kept, refused


def _id_fallback(cands: Sequence[Conjunction], kept: Sequence[Conjunction],
                 sightings: Sequence[Sighting]) -> Conjunction | None:
    """The plain resource id, for a queue whose every identifier is positioned: where the view
    sits is what changes first (the same list under another container on another tab), so the id
    alone comes last, as long as it finds the element alone wherever it was seen. It may find a
    view where the element was not seen: it is only tried when the positioned ones find nothing."""
    if not kept or not all(c.anchor for c in kept):
        return None
    plain = next((c for c in cands if c.keys == {"rid"}), None)
    if plain is None or any(s.index.hits(plain, s.scope) != {s.node} for s in sightings):
        return None
    return plain


# ---------------------------------------------------------------------------------------------
# Screen signatures


def features(index: TreeIndex, kept: Iterable[int], content: frozenset[int] = frozenset()) -> set[Conjunction]:
    """Facts a hierarchy shows that can tell its screen apart: ids, titled ids, descriptions,
    labels of controls, selected ids and list classes. Nodes in ``content`` (inside list items)
    are left out: rows come and go."""
    out: set[Conjunction] = set()
    tree = index.tree
    for nid in kept:
        if nid in content:
            continue
        n = tree.node(nid)
        if n.resource_id:
            out.add(Conjunction((("rid", n.resource_id),)))
            if n.text and len(n.text) <= MAX_TEXT and "\n" not in n.text:
                out.add(Conjunction((("rid", n.resource_id), ("text", n.text))))
            if n.selected:
                out.add(Conjunction((("rid", n.resource_id), ("selected", "true"))))
        if n.content_desc and len(n.content_desc) <= MAX_TEXT:
            out.add(Conjunction((("desc", n.content_desc),)))
        if n.text and (n.clickable or n.checkable) and len(n.text) <= MAX_TEXT and "\n" not in n.text:
            out.add(Conjunction((("text", n.text),)))
        if any(c in n.short_class for c in ("ListView", "RecyclerView", "GridView", "RadioGroup")):
            out.add(Conjunction((("cls", n.class_name),)))
    return out


def _preference(c: Conjunction) -> tuple[int, str]:
    """Lower is better: the app's own ids first, framework ids (android:id/...) after them."""
    keys = c.keys
    rank = 0 if keys == {"rid"} else 2 if "rid" in keys else 4 if "desc" in keys else 6 if "text" in keys else 8
    if any(k == "rid" and v.startswith("android:") for k, v in c.props):
        rank += 1
    return rank, c.xpath()


@dataclass
class _SignatureDraft:
    all_of: list[Conjunction]
    none_of: list[Conjunction]
    #: Hierarchies of other screens the signature still matches (0 when it tells the screen apart).
    ambiguous: int = 0


def screen_signature(own: Sequence[tuple[TreeIndex, Iterable[int], frozenset[int]]], others: Sequence[TreeIndex],
                     limit: int = 3, rest: Sequence[TreeIndex] = ()) -> _SignatureDraft:
    """Facts present in every hierarchy of the screen that rule out the other screens' hierarchies.

    Greedy: the fact that rules out the most remaining ``others`` first (ties: the one that rules
    out most of ``rest``, hierarchies already told apart otherwise, e.g. by activity; then ids
    before labels), up to ``limit``; then, for what is left, facts that those show and this
    screen never does.
    """
    common: set[Conjunction] | None = None
    for index, kept, content in own:
        facts = features(index, kept, content)
        common = facts if common is None else common & facts
    common = {c for c in (common or set()) if all(index.hits(c) for index, _, _ in own)}
    remaining = list(others)
    chosen: list[Conjunction] = []
    pool = sorted(common, key=_preference)
    while pool and len(chosen) < limit:
        best = min(pool, key=lambda c: (-sum(1 for o in remaining if not o.hits(c)),
                                        -sum(1 for o in rest if not o.hits(c)), _preference(c)))
        ruled_out = [o for o in remaining if not o.hits(best)]
        if not ruled_out and chosen:
            break
        chosen.append(best)
        pool.remove(best)
        remaining = [o for o in remaining if o.hits(best)]
        if not remaining:
            break
    none_of: list[Conjunction] = []
    while remaining and len(none_of) < limit:
        shown: set[Conjunction] = set()
        for o in remaining:
            shown |= features(o, (n.id for n in o.tree.nodes))
        usable = [c for c in shown if not any(index.hits(c) for index, _, _ in own)]
        if not usable:
            break
        best = max(sorted(usable, key=_preference), key=lambda c: sum(1 for o in remaining if o.hits(c)))
        none_of.append(best)
        remaining = [o for o in remaining if not o.hits(best)]
    return _SignatureDraft(chosen, none_of, len(remaining))
