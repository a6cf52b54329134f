"""Abstract elements of one screen, from every hierarchy recorded of it (AutoDroid-V2, 3.1.2).

For each screen group the nodes are collected by element key (``Anatomy``) across its hierarchies:

* **single elements**: interactive nodes (buttons, inputs, switches, tabs, scrollers), and texts
  worth reading: texts with a resource id, and texts that changed across observations (dynamic:
  a count, a setting's value). A static text without an id is a caption; the first text inside a
  clickable row is that row's label. Both are left out and counted;
* **element lists**: list containers, with the labels of the items seen (``options`` when the
  list is a fixed set of choices, examples otherwise) and what one item is (``item_kind``);
* **child elements**: what an item holds (a row's title, artist, menu button), keyed relative to
  the item; lists whose items are a single label have none (``match`` is enough).

Each element then gets its identifier queue (``identifiers.identifier_queue``) checked against
every hierarchy of the screen (for child elements, every item seen); an element without one is
dropped, and why is kept for the report.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tapir.docgen.build.anatomy import MAX_OPTIONS, TITLE_IDS, Anatomy, interactive, looks_static
from tapir.docgen.build.grouping import ScreenGroup
from tapir.docgen.build.identifiers import Absence, Conjunction, Sighting, TreeIndex, identifier_queue
from tapir.dsl.api import Kind
from tapir.hierarchy import UINode, UITree


@dataclass
class Seen:
    """One observation of an element: the node in a state (inside ``item`` for child elements)."""

    state: str
    node: int
    item: int = -1


@dataclass
class ElementDraft:
    key: str
    #: ``single``, ``list`` or ``child``.
    role: str
    screen: int
    seen: list[Seen] = field(default_factory=list)
    list_key: str = ""
    kind: Kind = Kind.OTHER
    item_kind: Kind = Kind.OTHER
    texts: list[str] = field(default_factory=list)
    descs: list[str] = field(default_factory=list)
    resource_id: str = ""
    class_name: str = ""
    #: The label of a row (clickable container) or the hint of an input.
    label: str = ""
    dynamic: bool = False
    options: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    identifiers: list[Conjunction] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    #: Present in every hierarchy of its screen (else it appears only after some action).
    always: bool = True
    enabled: bool = True
    # filled in by later stages
    name: str = ""
    description: str = ""
    effect: str | None = None
    leads_to: str | None = None
    sensitive: str | None = None
    notes: list[str] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)
    #: For lists: option label -> the screen choosing it leads to.
    option_effects: dict[str, str] = field(default_factory=dict)

    @property
    def stable_desc(self) -> str:
        return self.descs[0] if self.descs and len(set(self.descs)) == 1 else ""

    @property
    def display(self) -> str:
        """How the element reads to a person: its stable label, else its id."""
        for value in (self.label, self.stable_desc, _common(self.texts) if not self.dynamic else ""):
            if value and looks_static(value):
                return value
        return self.resource_id.rsplit("/", 1)[-1]


@dataclass
class Dropped:
    what: str
    reason: str


@dataclass
class ScreenDraft:
    group: ScreenGroup
    elements: list[ElementDraft]
    dropped: list[Dropped]
    indexes: dict[str, TreeIndex]
    name: str = ""
    description: str = ""


def _common(values: list[str]) -> str:
    found = Counter(v for v in values if v)
    return found.most_common(1)[0][0] if found else ""


def kind_of(node: UINode) -> Kind:
    cls = node.short_class.lower()
    if node.editable:
        return Kind.INPUT
    if node.checkable:
        return Kind.SWITCH if ("switch" in cls or "toggle" in cls) else Kind.CHECKBOX
    if node.scrollable:
        return Kind.SCROLLER
    if (node.clickable or node.selected) and ("tab" in cls or "tab" in node.resource_name.lower().split("_")):
        return Kind.TAB
    if node.clickable or node.long_clickable:
        return Kind.BUTTON
    if "image" in cls and not node.text:
        return Kind.IMAGE
    if node.text:
        return Kind.TEXT
    return Kind.OTHER


def _item_kind(items: list[UINode], inside: list[UINode]) -> Kind:
    """What one item is: the item itself decides (a radio button, a clickable row); a row that is
    not clickable is a button when something in it is, else a checkbox when something is."""
    if any(n.checkable for n in items):
        return Kind.CHECKBOX
    if any(n.clickable or n.long_clickable for n in items + inside):
        return Kind.BUTTON
    if any(n.checkable for n in inside):
        return Kind.CHECKBOX
    return Kind.OTHER


def _row_of(tree: UITree, anatomy: Anatomy, nid: int) -> int | None:
    """The clickable container (outside lists) a node sits in, if any."""
    for a in tree.ancestors(nid):
        if a.id in anatomy.in_item:
            return None
        if a.clickable:
            return a.id
    return None


def _selected_tabs(a: Anatomy) -> list[tuple[str, int]]:
    """(key, node) of each selected tab of ``a`` that is no element here (not clickable while
    selected), under the key it has where it is clickable (``Anatomy.keys_around``)."""
    t = a.tree
    out = []
    for nid in a.order:
        node = t.node(nid)
        if not node.selected or nid in a.key_of or nid in a.in_item or interactive(node):
            continue
        parent = t.get(node.parent) if node.parent is not None else None
        if parent is not None and parent.selected:
            continue  # the top of the selected views is the tab
        if a.is_tab(nid) or any(a.is_tab(c.id) for c in t.descendants(nid)[:3]):
            out.append((a.keys_around(nid)[0], nid))
    return out


def collect(group: ScreenGroup, index_of: dict[str, TreeIndex], max_identifiers: int = 3) -> ScreenDraft:
    """The abstract elements of one screen group (see the module docstring)."""
    drafts: dict[str, ElementDraft] = {}
    order: dict[str, tuple[int, int]] = {}
    dropped: list[Dropped] = []
    aliased: set[str] = set()
    row_position: dict[str, list[int]] = {}
    items_seen: dict[str, list[tuple[str, int]]] = {}
    #: (key, state, node) of selected tabs, not clickable while selected: the tab seen there
    selected_tabs: list[tuple[str, str, int]] = []

    def draft(key: str, role: str, position: tuple[int, int], list_key: str = "") -> ElementDraft:
        d = drafts.get(key)
        if d is None:
            d = drafts[key] = ElementDraft(key, role, group.index, list_key=list_key)
            order[key] = position
        return d

    for s_pos, sid in enumerate(group.states):
        a = group.anatomies[sid]
        tree = a.tree
        pre = {nid: i for i, nid in enumerate(a.order)}
        for nid in a.alias:
            aliased.add(a.key_of[nid])
        for nid, key in a.key_of.items():
            node = tree.node(nid)
            role = "list" if nid in a.lists else "single"
            d = draft(key, role, (s_pos, pre[nid]))
            d.seen.append(Seen(sid, nid))
            if role == "list":
                info = a.lists[nid]
                items_seen.setdefault(key, []).extend((sid, i) for i in info.items)
            elif not interactive(node) and node.text:
                row = _row_of(tree, a, nid)
                if row is not None:
                    texts = [x.id for x in tree.descendants(row) if x.id in a.kept and x.text.strip()]
                    row_position.setdefault(key, []).append(texts.index(nid) if nid in texts else 0)
        selected_tabs.extend((key, sid, nid) for key, nid in _selected_tabs(a))
        firsts: dict[tuple[int, str], int] = {}
        for nid, (lkey, ckey) in a.child_key.items():
            if not ckey:
                continue
            item = a.in_item[nid][1]
            if (item, ckey) in firsts:
                continue  # the same child twice in one item: the first one stands for it
            firsts[(item, ckey)] = nid
            d = draft(f"{lkey}/{ckey}", "child", (s_pos, pre[nid]), list_key=lkey)
            d.seen.append(Seen(sid, nid, item))

    for key, sid, nid in selected_tabs:
        tab = drafts.get(key)
        if tab is not None and tab.role == "single" and all(x.state != sid for x in tab.seen):
            tab.seen.append(Seen(sid, nid))  # the tab where it is selected: still there, still tappable
    out: list[ElementDraft] = []
    for key in sorted(drafts, key=order.__getitem__):
        d = drafts[key]
        if key in aliased:
            continue  # a row around a switch: the switch stands for it
        _describe_nodes(d, group)
        reason = _leave_out(d, row_position.get(key), drafts)
        if reason:
            dropped.append(Dropped(f"{d.display or d.key} on screen #{group.index}", reason))
            continue
        if d.role == "list":
            _list_facts(d, group, items_seen.get(key, []))
        out.append(d)
    # lists whose items are one label: their children add nothing to `match`
    labelled = {d.key for d in out if d.role == "list" and _single_label_items(d, group)}
    choices = {d.key for d in out if d.role == "list" and d.options}
    kept: list[ElementDraft] = []
    for d in out:
        if d.role == "child" and d.list_key in labelled and (not d.resource_id or d.list_key in choices):
            # an item's label, without an id of its own or in a fixed list of options: match() and
            # get_text() on the item cover it
            dropped.append(Dropped(f"{d.display or d.key} on screen #{group.index}",
                                   "the label of each item of its list (match and get_text cover it)"))
            continue
        if d.role == "child" and d.list_key not in {x.key for x in out}:
            dropped.append(Dropped(f"{d.display} on screen #{group.index}", "its list was left out"))
            continue
        kept.append(d)
    for d in kept:
        _identify(d, group, index_of, max_identifiers)
    final = []
    for d in kept:
        if d.identifiers:
            final.append(d)
        else:
            why = ("no id, text or description tells it apart from the views around it"
                   if not (d.resource_id or _common(d.descs) or _common(d.texts))
                   else "no identifier finds it, and only it, in every hierarchy of its screen")
            dropped.append(Dropped(f"{d.display or d.class_name} on screen #{group.index}", why))
    return ScreenDraft(group, _without_orphans(final, dropped, group.index), dropped, index_of)


def _without_orphans(drafts: list[ElementDraft], dropped: list[Dropped], screen: int) -> list[ElementDraft]:
    """The drafts less the children of a list that found no identifier: a child is written as an
    item of its list (``item_of``), so it cannot stand without it."""
    lists = {d.key for d in drafts if d.role == "list"}
    out = []
    for d in drafts:
        if d.role == "child" and d.list_key not in lists:
            dropped.append(Dropped(f"{d.display or d.key} on screen #{screen}",
                                   "its list was left out (no identifier finds the list)"))
            continue
        out.append(d)
    return out


def _describe_nodes(d: ElementDraft, group: ScreenGroup) -> None:
    kinds: Counter[Kind] = Counter()
    labels: set[str] = set()
    for s in d.seen:
        a = group.anatomies[s.state]
        node = a.tree.node(s.node)
        kind = Kind.LIST if d.role == "list" else kind_of(node)
        if kind in (Kind.BUTTON, Kind.OTHER) and d.role == "single" and (a.is_tab(s.node) or any(
                a.is_tab(c.id) for c in a.tree.descendants(s.node)[:3])):
            kind = Kind.TAB  # a clickable tab, or the clickable view around one
        kinds[kind] += 1
        d.texts.append(node.text.strip())
        d.descs.append(node.content_desc.strip())
        d.resource_id = d.resource_id or node.resource_id
        d.class_name = d.class_name or node.class_name
        d.enabled = d.enabled and node.enabled
        if d.role != "list" and interactive(node) and not node.text and not node.content_desc:
            labels.add(a.label(s.node))
    # a row's label is the text inside it, when that never changed (a now-playing bar shows content)
    if len(labels) == 1:
        d.label = labels.pop()
    d.kind = kinds.most_common(1)[0][0]
    d.dynamic = len({t for t in d.texts}) > 1
    if d.kind is Kind.INPUT and len(set(d.texts)) == 1 and looks_static(d.texts[0]):
        # an empty field shows its hint as its text: that is the field's label, unless something
        # was typed into it (then the texts differ, and none is a label)
        d.label = d.label or d.texts[0]
    states_with = {s.state for s in d.seen}
    d.always = d.role == "child" or all(sid in states_with for sid in group.states)


def _leave_out(d: ElementDraft, row_positions: list[int] | None, drafts: dict[str, ElementDraft]) -> str | None:
    if d.role == "list" or d.kind is not Kind.TEXT:
        return None
    if d.role == "child":
        return None
    if row_positions is not None and not d.dynamic and min(row_positions) == 0:
        return "the label of the row it sits in (the row is the element)"
    if d.resource_id.rsplit("/", 1)[-1] in TITLE_IDS and not d.dynamic:
        return "the title of its dialog (it names the screen)"
    if d.dynamic or d.resource_id:
        return None
    return "a static text without an id (a caption; it names the screen or a row instead)"


def _single_label_items(d: ElementDraft, group: ScreenGroup) -> bool:
    for s in d.seen:
        a = group.anatomies[s.state]
        info = a.lists[s.node]
        for item in info.items:
            texts = [x for x in a.tree.descendants(item) if x.id in a.kept and (x.text.strip() or interactive(x))]
            if len(texts) > 1:
                return False
    return True


def _list_facts(d: ElementDraft, group: ScreenGroup, items: list[tuple[str, int]]) -> None:
    labels: list[str] = []
    per_state: dict[str, list[str]] = {}
    roots: list[UINode] = []
    inside: list[UINode] = []
    for sid, item in items:
        a = group.anatomies[sid]
        label = a.label(item)
        roots.append(a.tree.node(item))
        inside.extend(x for x in a.tree.descendants(item) if x.id in a.kept)
        per_state.setdefault(sid, []).append(label)
        if label and label not in labels:
            labels.append(label)
    d.item_kind = _item_kind(roots, inside)
    scrollable = any(group.anatomies[s.state].lists[s.node].scrollable for s in d.seen)
    # a menu's or a dialog's items are a fixed set of options; the rows of a full screen (songs,
    # alarms, a checklist) are content however few were seen
    if labels and group.first.window != "full" and not scrollable and len(labels) <= MAX_OPTIONS:
        d.options = labels
    else:
        d.examples = labels[:3]


def _identify(d: ElementDraft, group: ScreenGroup, index_of: dict[str, TreeIndex], limit: int) -> None:
    if d.role == "child":
        sightings = [Sighting(index_of[s.state], s.node, s.item) for s in d.seen]
        where = {(s.state, s.item) for s in d.seen}
        absences: list[Absence] = []
        for sid in group.states:
            a = group.anatomies[sid]
            for info in a.lists.values():
                if info.key != d.list_key:
                    continue
                absences.extend(Absence(index_of[sid], item) for item in info.items if (sid, item) not in where)
    else:
        sightings = [Sighting(index_of[s.state], s.node) for s in d.seen]
        states_with = {s.state for s in d.seen}
        # a hierarchy showing the list empty is no absence: its identifiers rightly find it there
        absences = [Absence(index_of[sid]) for sid in group.states if sid not in states_with
                    and not (d.role == "list" and re.sub(r"#\d+$", "", d.key) in group.anatomies[sid].empty_lists)]
    result = identifier_queue(sightings, absences, limit)
    d.identifiers = result.identifiers
    d.changed = result.changed
