"""The grounding cascade: from a document element to the node to act on, or a refusal.

    grounder = Grounder(document, embedder=None, config=GroundingConfig())
    grounder.identify_screen(tree) -> ScreenMatch
    grounder.ground("main_screen__sort_button", tree) -> Grounding | None
    grounder.items("songs_screen__song_list", tree) -> list[UINode]
    grounder.match_item("songs_screen__song_list", items, tree, "Yesterday") -> Grounding | None
    grounder.child("songs_screen__song_list", "songs_screen__song_menu_button", item, tree) -> Grounding | None

``ground`` (paper 3.3.1, Algorithm 1, made robust to drift):

1. **Screen check.** When another screen is confidently showing and that screen defines an
   element with one of this element's identifiers, the hit would be *its* element: refuse
   (the caller navigates). Elements that merely appear on several screens still ground.
2. **Identifiers**, most precise first. An XPath whose hits act on more than one distinct
   target is ambiguous and skipped (upstream takes its first hit); the first XPath with exactly
   one target wins. ``uiautomator`` XPaths run on the dump form, ``html`` ones on AutoDroid-V2's
   rendering.
3. **Fuzzy**: the element's known labels (texts and descriptions read from its identifiers) and
   resource names against every candidate node, with rapidfuzz.
4. **Embedding**: the same labels and the element's name against the candidates' texts,
   descriptions and resource-id words, with all-MiniLM-L6-v2 (skipped, and said once, when
   sentence-transformers is not installed).

Stages 3 and 4 only consider nodes that can be the element's kind (a button must be clickable
itself or inside a clickable view, an input editable...), group candidates by the node they would
act on, and accept the best only when it reaches the stage's threshold and leads the runner-up
by the stage's margin (``GroundingConfig``). Otherwise the answer is None: a refused element is
an ``ElementNotFound`` for the caller, never a tap on the wrong view. ``last_detail`` says why.

Elements are looked up by name; an unknown name raises ``UnknownElement`` with the closest
names as a hint. Everything derived from a tree (both XPath forms, the screen match) is cached
for the last few trees, so identifying the screen and grounding several elements on one dump
renders it once.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from rapidfuzz import fuzz, process

from tapir.core.document import AppDocument, Element, Identifier
from tapir.core.errors import ActionError, DocumentError, ElementNotFound, UnknownElement
from tapir.dsl.api import Kind
from tapir.hierarchy import UINode, UITree
from tapir.runtime.grounding.claims import ClaimIndex, other_elements
from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.embedding import Embedder, default_embedder, embedding_status
from tapir.runtime.grounding.fuzzy import (
    KIND_WORDS,
    fold,
    label_similarity,
    rid_similarity,
    shown_similarity,
    topic,
    words,
)
from tapir.runtime.grounding.identifiers import Labels, evaluate, labels, positional, renamed_identifier
from tapir.runtime.grounding.items import item_nodes, match_attributes, match_text, option_rows
from tapir.runtime.grounding.result import Grounding, ScreenMatch
from tapir.runtime.grounding.screen_view import ScreenView
from tapir.runtime.grounding.screens import ScreenIdentifier
from tapir.runtime.grounding.targets import eligible, list_like, target, target_key
from tapir.runtime.grounding.widgets import shared_widgets

# Views kept: the current dump's and the one before (the session works on these; an older dump a
# list read goes back to gets its view again). Each holds its tree: keeping eight made a step on
# a 688-view screen 15% slower, the CPU cache thrashing over trees no one would ask about again.
_VIEW_CACHE = 2
_LETTERS = re.compile(r"[^\W\d_]")
# Weights of label and resource-id evidence in the fuzzy score. A list item's child shows data
# (a song title) that differs from item to item, so its resource id carries the evidence.
_WEIGHTS = (0.65, 0.35)
_CHILD_WEIGHTS = (0.2, 0.8)
# A candidate without a resource id, for an element known by one, keeps this share of its score
# (ids get dropped between app versions, so this is weak evidence against it).
_MISSING_RID = 0.9


class Grounder:
    """Grounds the elements of one app document on screens; see the module docstring."""

    def __init__(
        self,
        document: AppDocument,
        *,
        embedder: Embedder | None = None,
        config: GroundingConfig = GroundingConfig(),  # noqa: B008 - frozen, shared default is safe
    ) -> None:
        self.document = document
        self.config = config
        self._embedder = embedder
        self._embedder_resolved = embedder is not None
        self._screens = ScreenIdentifier(document, config)
        self._views: OrderedDict[int, ScreenView] = OrderedDict()
        self._labels: dict[str, Labels] = {}
        # per screen: XPath -> the elements using it (to spot look-alikes on other screens)
        self._xpaths_by_screen: dict[str, dict[str, list[Element]]] = {}
        for s in document.screens:
            table: dict[str, list[Element]] = {}
            for e in s.elements:
                for i in e.identifiers:
                    table.setdefault(i.xpath, []).append(e)
            self._xpaths_by_screen[s.name] = table
        # one widget on several screens (the tab bar of every tab): identifier set -> those screens
        from tapir.runtime.navigation import transient_screen  # (navigation imports grounding)

        self._widgets = shared_widgets(document, frozenset(s.name for s in document.screens if transient_screen(s)))
        self._single_screen = len(document.screens) <= 1
        # resource ids the document names: never taken for another one renamed
        named = [i for s in document.screens for i in (*s.signature.all_of, *s.signature.none_of)]
        named += [i for e in document.elements for i in e.identifiers]
        self._reserved = frozenset(labels(named).rids)
        self._claim_index = ClaimIndex(document, self.labels_of)
        #: why the last ``ground``/``match_item``/``child`` call answered what it did
        self.last_detail = ""
        #: things worth saying once per run (malformed XPaths, embedding stage off)
        self.notes: list[str] = []

    # -- lookups --------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        if not self._embedder_resolved:
            self._embedder_resolved = True
            if self.config.use_embedding:
                self._embedder = default_embedder()
                if self._embedder is None:
                    self._note(embedding_status())
        return self._embedder

    def element(self, name: str) -> Element:
        """The document element called ``name`` (``screen:element`` is accepted too)."""
        found = self.document.element(name) or self.document.element(name.replace(":", "__"))
        if found is not None:
            return found
        names = [e.name for e in self.document.elements]
        close = process.extract(name, names, scorer=fuzz.WRatio, limit=3, score_cutoff=60)
        hint = "did you mean " + " or ".join(repr(c[0]) for c in close) + "?" if close else None
        raise UnknownElement(f"the app document has no element {name!r}", hint=hint)

    def view(self, tree: UITree) -> ScreenView:
        """The cached ``ScreenView`` of ``tree`` (the same object while the tree is recent)."""
        key = id(tree)
        found = self._views.get(key)
        if found is not None and found.tree is tree:
            self._views.move_to_end(key)
            return found
        view = ScreenView(tree, self._reserved)
        self._views[key] = view
        while len(self._views) > _VIEW_CACHE:
            self._views.popitem(last=False)
        return view

    def labels_of(self, element: Element) -> Labels:
        found = self._labels.get(element.name)
        if found is None:
            found = self._labels[element.name] = labels(element.identifiers, own=True)
        return found

    def _note(self, text: str) -> None:
        if text and text not in self.notes:
            self.notes.append(text)

    # -- screens --------------------------------------------------------------------------------

    def identify_screen(self, tree: UITree) -> ScreenMatch:
        """Which document screen ``tree`` shows (cached for the tree)."""
        view = self.view(tree)
        found: ScreenMatch | None = view.memo.get("screen")
        if found is None:
            found = view.memo["screen"] = self._screens.identify(view)
            for message in self._screens.broken.values():
                self._note(f"screen signature XPath skipped: {message}")
        return found

    def _other_screen_owns(self, element: Element, tree: UITree) -> str | None:
        """The confidently showing screen that has a different element with this element's
        identifiers, if not the element's own screen.

        An element of the same local name, with the same identifiers, leading to the same known
        screen is the same widget seen on another screen (the settings button of every tab of a
        main screen), not a look-alike; "more options" buttons that open different menus are
        look-alikes. So is a screen showing a copy of the element under another name
        (``tapir.runtime.grounding.widgets``: a tab's button on each tab's screen).
        """
        own = {i.xpath for i in element.identifiers}
        copies = self._widgets.get(frozenset(own), frozenset())

        def same_widget(other: Element) -> bool:
            return (other.local_name == element.local_name and element.leads_to is not None
                    and other.leads_to == element.leads_to)

        def lookalike(screen: str) -> bool:
            if element.screen in copies and screen in copies:
                return False  # it shows this very widget
            table = self._xpaths_by_screen.get(screen, {})
            return any(not same_widget(o) for x in own for o in table.get(x, ()))

        if not any(lookalike(name) for name in self._xpaths_by_screen if name != element.screen):
            return None  # no other screen could be mistaken for this one
        match = self.identify_screen(tree)
        if match.name is None or not match.rules_out(element.screen, self.config.screen_margin):
            return None
        if lookalike(match.name):
            return match.name
        return None

    # -- elements -------------------------------------------------------------------------------

    def ground(self, element_name: str, tree: UITree, *, within: UINode | None = None) -> Grounding | None:
        """The node ``element_name`` acts on in ``tree`` (inside ``within`` if given), or None."""
        element = self.element(element_name)
        if within is None and self.config.check_screen and element.item_of is None:
            other = self._other_screen_owns(element, tree)
            if other is not None:
                self.last_detail = (f"{other} is showing, not {element.screen}, and defines the same "
                                    f"identifiers as {element.name}")
                return None
        return self._ground(element, self.view(tree), within, child=element.item_of is not None)

    def _ground(self, element: Element, view: ScreenView, within: UINode | None, *, child: bool) -> Grounding | None:
        notes: list[str] = []
        within_id = within.id if within is not None else None
        found, doubtful = self._by_identifiers(element, view, within_id, child, notes)
        guessing = self.config.use_fuzzy or self.config.use_embedding
        if found is None and guessing and within is None and not self._screen_plausible(element, view.tree):
            match = self.identify_screen(view.tree)
            notes.append(f"no similarity search: {match.name} is showing, not {element.screen}")
            found = doubtful
        elif found is None:
            claimed = self._claim_check(element, view) if within is None else None
            if self.config.use_fuzzy:
                found = self._by_fuzzy(element, view, within_id, child, claimed, notes)
            if doubtful is not None:
                # a doubtful identifier hit stands unless the labels clearly point elsewhere
                if found is None or found.node.id == doubtful.node.id:
                    found = doubtful
                else:
                    found = replace(found, detail=f"{found.detail} (instead of {doubtful.detail})")
            if found is None:
                found = self._by_structure(element, view, within_id, claimed, notes)
            if found is None and self.config.use_embedding:
                found = self._by_embedding(element, view, within_id, claimed, notes)
        self.last_detail = found.detail if found is not None else (
            f"{element.name} not found: " + "; ".join(notes) if notes else f"{element.name} not found")
        return found

    # -- structure: no label needed ---------------------------------------------------------------

    def _hits_of(self, element: Element, view: ScreenView, within: int | None = None) -> list[UINode]:
        """The views the element's first identifier that finds any finds, as written or with its
        resource id renamed; bare positions left out."""
        for renamed in (False, True):
            for written in element.identifiers:
                identifier = None if positional(written.xpath) else _as_read(written, view, renamed)
                if identifier is None:
                    continue
                try:
                    hits = evaluate(identifier, view, within=within)
                except DocumentError:
                    continue
                if hits:
                    return hits
        return []

    def _parts(self, list_element: str) -> list[Element]:
        return [e for e in self.document.elements if e.item_of == list_element]

    def _by_structure(self, element: Element, view: ScreenView, within: int | None,
                      claimed: Callable[[UINode], str | None] | None, notes: list[str]) -> Grounding | None:
        """Where labels say nothing (a resource id dropped, no text), the structure may: a list is
        the list view whose rows hold the list's item children; a part of a list item (a toggle,
        field, button or text) is the one view of its role in the item that no other documented
        part accounts for, when the item has as many views of that role as the document has
        parts (a button's words must not disagree with the element's)."""
        tree = view.tree
        if element.kind == Kind.LIST and within is None:
            votes: Counter[int] = Counter()
            for part in self._parts(element.name):
                lists = set()
                for hit in self._hits_of(part, view):
                    holder = next((a for a in tree.ancestors(hit.id) if list_like(a) and a.visible), None)
                    if holder is not None:
                        lists.add(holder.id)
                votes.update(lists)
            ranked = [(n, tree.node(i)) for i, n in votes.most_common()
                      if claimed is None or claimed(tree.node(i)) is None]
            if not ranked and element.options:
                # no item child found: the view holding the options the document lists is the list
                holder = _holder_of_options(tree, element.options)
                if holder is not None and (claimed is None or claimed(holder) is None):
                    return Grounding(holder, "structure", None, 1.0, None,
                                     f"structure: {_describe(holder)} holds its documented options")
            if not ranked:
                notes.append("structure: no list view holds its item children")
                return None
            if len(ranked) > 1 and ranked[1][0] == ranked[0][0]:
                notes.append("structure: its item children are in several list views")
                return None
            count, holder = ranked[0]
            return Grounding(holder, "structure", None, 1.0, None,
                             f"structure: {_describe(holder)} holds {count} of its item children")
        role = _ROLE_OF.get(element.kind)
        if role is None:
            return None
        if within is None or element.item_of is None:
            if within is not None or role not in _SCREEN_ROLES:
                return None
            # a field or a toggle of the screen: the screen's one view of that role no other
            # element of the screen accounts for, when the counts agree
            where = "screen"
            inside = [n for n in tree.nodes if n.visible]
            screen = self.document.screen(element.screen)
            parts = [p for p in (screen.elements if screen else ())
                     if p.item_of is None and _ROLE_OF.get(p.kind) == role]
        else:
            where = "item"
            inside = [n for n in tree.descendants(within) if n.visible]
            parts = [p for p in self._parts(element.item_of) if _ROLE_OF.get(p.kind) == role]
        pool = [n for n in inside if _has_role(n, role)]
        found = {part.name: {h.id for h in self._hits_of(part, view, within)}
                 for part in parts if part.name != element.name}
        explained = set().union(*found.values())
        left = [n for n in pool if n.id not in explained]
        node: UINode | None = left[0] if len(left) == 1 else None
        how = "no other element accounts for"
        if len(pool) == len(parts) and len(left) > 1:
            # several unaccounted for: a form keeps its order between versions, so when every view
            # accounted for sits where the document lists its element, the rest do too
            at = {n.id: i for i, n in enumerate(pool)}
            anchors = [(i, at[h]) for i, part in enumerate(parts) for h in found.get(part.name, ()) if h in at]
            if anchors and all(d == v for d, v in anchors):
                mine = next(i for i, part in enumerate(parts) if part.name == element.name)
                if pool[mine].id not in explained:
                    node, how = pool[mine], "in the document's order, the others being where it lists them"
        if len(pool) != len(parts) or node is None:
            # the item shows other views of this role than the document's parts (an inserted
            # badge, a button the document does not know): which is which cannot be told
            notes.append(f"structure: the {where} has {len(pool)} {role}(s) for {len(parts)} documented, "
                         f"{len(left)} unaccounted for")
            return None
        said = set(self._words_of(element))
        shown = set(_node_words(view, node))
        if role == "button" and said and shown and not said & shown:
            notes.append(f"structure: the {where}'s only other {role} {_describe(node)} says nothing of {element.name}")
            return None
        return Grounding(node, "structure", None, 1.0, None,
                         f"structure: the {where}'s {role} {how}, {_describe(node)}")

    def _words_of(self, element: Element) -> list[str]:
        known = self.labels_of(element)
        out = topic(element.local_name).split()
        for label in (*known.words, *known.rids):
            out += [w for w in words(label).split() if w not in KIND_WORDS]
        return out

    def _claim_check(self, element: Element, view: ScreenView) -> Callable[[UINode], str | None]:
        owners: dict[int, str | None] = {}

        def owner(node: UINode) -> str | None:
            if node.id not in owners:
                owners[node.id] = self._owner_of(element, view, node)
            return owners[node.id]
        return owner

    def _screen_plausible(self, element: Element, tree: UITree) -> bool:
        """False when another screen clearly is showing: similar-looking views there are not this element."""
        if self._single_screen:
            return True
        match = self.identify_screen(tree)
        if match.name is None or match.name == element.screen:
            return True
        return match.score_of(match.name) - match.score_of(element.screen) < self.config.screen_margin \
            and element.screen not in match.beaten

    def _unique_hit(self, element: Element, view: ScreenView) -> tuple[int, int] | None:
        """(identifier index, view id) of the element's identifier stage on ``view``, cached."""
        cache: dict[str, tuple[int, int] | None] = view.memo.setdefault("unique_hits", {})
        if element.name not in cache:
            hit = self._first_unique(element, view, None, [], 0, positions=False) or self._first_unique(
                element, view, None, [], 0, positions=False, renamed=True)
            cache[element.name] = (hit[0], hit[1].id) if hit is not None else None
        return cache[element.name]

    def _owner_of(self, element: Element, view: ScreenView, node: UINode, *, first_only: bool = False) -> str | None:
        """Another element of the screen whose identifiers find ``node``, if any (bare positions
        do not count: after a drift they point anywhere).

        Fuzzy and embedding candidates exclude such views: when "Max reminder duration" of the
        timer section is scrolled away, the alarm section's label of the same text belongs to
        the alarm element and must not be taken for the timer's. ``first_only`` counts only an
        element's first (most precise) identifier: proof enough to refuse another element's
        fallback XPath that lands there. Only the suspects are evaluated (``ClaimIndex``).
        """
        for other in other_elements(self.document, self._claim_index.suspects(element.screen, node), element.name):
            hit = self._unique_hit(other, view)
            if hit is not None and hit[1] == node.id and (hit[0] == 0 or not first_only):
                return other.name
        return None

    def _first_unique(self, element: Element, view: ScreenView, within: int | None, skipped: list[str],
                      start: int, *, positions: bool = True, renamed: bool = False) -> tuple[int, UINode] | None:
        """The first identifier from ``start`` on whose hits act on one target, and its first hit
        (``positions=False``: bare-position XPaths do not count; ``renamed``: only identifiers
        whose resource id the screen shows renamed, read with the new id)."""
        for index in range(start, len(element.identifiers)):
            written = element.identifiers[index]
            if not positions and positional(written.xpath):
                continue
            identifier = _as_read(written, view, renamed)
            if identifier is None:
                continue
            if not renamed and index > start and self._renamed_hit(element, view, start, index, within):
                return None  # an identifier before this one finds its view renamed: that comes first
            try:
                hits = evaluate(identifier, view, within=within)
            except DocumentError as exc:
                self._note(f"{element.name}: identifier #{index} skipped: {exc.message}")
                skipped.append(f"#{index} invalid")
                continue
            if not hits:
                continue
            keys = {target_key(view, h, element.kind) for h in hits}
            if len(keys) > 1:
                skipped.append(f"#{index} matches {len(keys)} views")
                continue
            return index, hits[0]
        return None

    def _renamed_hit(self, element: Element, view: ScreenView, start: int, before: int, within: int | None) -> bool:
        """Whether an identifier from ``start`` to ``before`` finds a view once its resource id is
        read renamed (a renamed id of a precise identifier beats a fallback identifier as written)."""
        for identifier in element.identifiers[start:before]:
            renamed = renamed_identifier(identifier, view)
            if renamed is None:
                continue
            try:
                if evaluate(renamed, view, within=within):
                    return True
            except DocumentError:
                continue
        return False

    def _by_identifiers(self, element: Element, view: ScreenView, within: int | None, child: bool,
                        notes: list[str]) -> tuple[Grounding | None, Grounding | None]:
        """The identifier stage: (a sure grounding, or a doubtful one for the fuzzy stage to check).

        A fallback XPath (not the first) dropped some of the element's properties, so its hit is
        checked: a view that another element's first XPath finds is that element's and is skipped;
        a view whose label is unlike every label the element is known by is skipped when the XPath
        is a bare position, and otherwise only doubtful.
        """
        skipped: list[str] = []
        known = self.labels_of(element)
        start = 0
        renamed = False
        while True:
            found = self._first_unique(element, view, within, skipped, start, renamed=renamed)
            if found is None and not renamed:
                # none finds a view as written: read them with the ids the screen shows renamed
                renamed, start = True, 0
                found = self._first_unique(element, view, within, skipped, start, renamed=True)
            if found is None:
                notes.append("identifiers: " + (", ".join(skipped) if skipped else "none matches"))
                return None, None
            index, hit = found
            identifier = element.identifiers[index]
            if renamed:
                identifier = renamed_identifier(identifier, view) or identifier
            node = target(view, hit, element.kind, strict=renamed) or (None if renamed else hit)
            if node is None:
                skipped.append(f"#{index} (renamed) finds a view that cannot be a {element.kind.value}")
                start = index + 1
                continue
            doubt = ""
            if (index > 0 or renamed) and not child and within is None:
                owner = self._owner_of(element, view, hit, first_only=True)
                if owner is not None:
                    skipped.append(f"#{index} finds the view of {owner}")
                    start = index + 1
                    continue
                shown = self._label_conflict(view, hit, node, known)
                if shown is not None:
                    if positional(identifier.xpath):
                        skipped.append(f"#{index} (a position) finds a view showing {shown!r}")
                        start = index + 1
                        continue
                    doubt = f", but it shows {shown!r}"
            note = f" after skipping {', '.join(skipped)}" if skipped else ""
            how = " (its resource id renamed)" if renamed else ""
            grounding = Grounding(node, "identifier", index, 1.0, None,
                                  f"identifier #{index} {identifier.xpath}{how}{note}{doubt}")
            return (None, grounding) if doubt else (grounding, None)

    def _label_conflict(self, view: ScreenView, hit: UINode, node: UINode, known: Labels) -> str | None:
        """The label a view shows when it is unlike every known label of the element, else None."""
        # values (a time, a percentage, a count) change by nature; only worded labels can conflict
        worded = [k for k in known.words if len(_LETTERS.findall(k)) >= 2]
        if not worded:
            return None
        strings = list(view.strings(hit))
        for d in (node, *view.tree.descendants(node.id)[:30]):
            strings.extend(s for s in view.strings(d) if s not in strings)
        if not strings:
            return None  # an icon: nothing to contradict
        best = max(label_similarity(k, s) for k in worded for s in strings)
        return strings[0] if best < self.config.verify_threshold else None

    def _candidates(self, view: ScreenView, within: int | None, *, shown: bool = False) -> list[UINode]:
        """The views a similarity stage compares; ``shown``: the element is known by a label it
        shows, so a view that shows nothing and is no control (a fragment's container, known by
        its resource id alone) and a text filling most of the screen (an empty-state placeholder,
        "No history here") are left out: neither is a label."""
        tree = view.tree
        nodes = tree.nodes if within is None else (tree.node(within), *tree.descendants(within))
        area = _screen_area(tree) if shown else 0
        return [n for n in nodes if n.visible and (
            n.text or n.content_desc or n.resource_id
            or (n.children and (n.clickable or n.long_clickable) and view.subtree_text(n.id)))
            and not (shown and _no_label(n, area))]

    def _by_fuzzy(self, element: Element, view: ScreenView, within: int | None, child: bool,
                  claimed: Callable[[UINode], str | None] | None, notes: list[str]) -> Grounding | None:
        known = self.labels_of(element)
        if not known:
            notes.append("fuzzy: the identifiers name no text, description or resource id")
            return None
        wl, wr = _CHILD_WEIGHTS if child else _WEIGHTS
        # an element known by its resource id alone, against a view without one (the new version
        # dropped it): the id's words stand for its label ("add_item" is the button "Add item"),
        # without the words of its kind and of its screen ("edit_note" on the note screen: "edit")
        id_words: list[str] = []
        if not known.words and not child:
            screen_words = set(words(element.screen).split())
            for r in known.rids:
                kept = [w for w in words(r).split() if w not in screen_words]
                for said in (" ".join(kept), " ".join(w for w in kept if w not in KIND_WORDS)):
                    if said and said not in id_words:
                        id_words.append(said)
        scored: list[tuple[float, UINode]] = []
        for node in self._candidates(view, within, shown=bool(known.words)):
            total = weight = 0.0
            factor = 1.0
            if known.words:
                strings = view.strings(node)
                sl = max((shown_similarity(k, s) for k in known.words for s in strings), default=0.0)
                total += wl * sl
                weight += wl
            if known.rids:
                if node.resource_id:
                    total += wr * max(rid_similarity(r, node.resource_name) for r in known.rids)
                    weight += wr
                else:
                    factor = _MISSING_RID
                    if id_words:
                        total += max((shown_similarity(k, s) for k in id_words for s in view.strings(node)),
                                     default=0.0)
                        weight += 1.0
            if weight:
                scored.append((total / weight * factor, node))
        return self._decide(element, view, scored, "fuzzy", self.config.fuzzy_threshold,
                            self.config.fuzzy_margin, claimed, notes)

    def _by_embedding(self, element: Element, view: ScreenView, within: int | None,
                      claimed: Callable[[UINode], str | None] | None, notes: list[str]) -> Grounding | None:
        embedder = self.embedder
        if embedder is None:
            notes.append("embedding: off")
            return None
        known = self.labels_of(element)
        queries = list(known.words)
        name = topic(element.local_name) or words(element.local_name)
        if name and name not in queries:
            queries.append(name)
        pool: list[tuple[str, UINode]] = []
        for node in self._candidates(view, within, shown=bool(known.words)):
            if not eligible(view, node, element.kind):
                continue
            for s in view.strings(node):
                pool.append((s, node))
            if node.resource_id:
                pool.append((words(node.resource_name), node))
        if not queries or not pool:
            notes.append("embedding: nothing to compare")
            return None
        strings = list(dict.fromkeys(s for s, _ in pool))
        sims = embedder.similarity(queries, strings)
        best_of = {s: max(row[j] for row in sims) for j, s in enumerate(strings)}
        per_node: dict[int, tuple[float, UINode]] = {}
        for s, node in pool:
            score = float(best_of[s])
            if node.id not in per_node or score > per_node[node.id][0]:
                per_node[node.id] = (score, node)
        return self._decide(element, view, list(per_node.values()), "embedding",
                            self.config.embedding_threshold, self.config.embedding_margin, claimed, notes)

    def _decide(self, element: Element, view: ScreenView, scored: list[tuple[float, UINode]], method: str,
                threshold: float, margin: float, claimed: Callable[[UINode], str | None] | None,
                notes: list[str]) -> Grounding | None:
        """The best candidate, if above the threshold and ahead of the best one with another target
        by the margin. Views of the wrong kind and views other elements find are passed over."""
        best: tuple[float, UINode, int] | None = None
        runner: tuple[float, UINode] | None = None
        passed: list[str] = []
        for score, node in sorted(scored, key=lambda p: -p[0]):
            if not eligible(view, node, element.kind):
                continue
            key = target_key(view, node, element.kind)
            if best is not None and key == best[2]:
                continue
            if best is None and score < threshold:
                break  # nothing left can pass
            owner = _claim_on(view, node, element.kind, claimed) if claimed is not None else None
            if owner is not None:
                if len(passed) < 3:
                    passed.append(f"{_describe(node)} is {owner}")
                continue
            if best is None:
                best = (score, node, key)
                continue
            runner = (score, node)
            break
        skipped = f" (passed over: {'; '.join(passed)})" if passed else ""
        if best is None:
            top = max((p for p in scored if eligible(view, p[1], element.kind)), key=lambda p: p[0], default=None)
            if top is None:
                notes.append(f"{method}: no candidate of kind {element.kind.value}")
            else:
                notes.append(f"{method}: best {top[0]:.2f} < {threshold:.2f} ({_describe(top[1])}){skipped}")
            return None
        score, node, _ = best
        if runner is not None and score - runner[0] < margin:
            notes.append(f"{method}: {_describe(node)} {score:.2f} and {_describe(runner[1])} "
                         f"{runner[0]:.2f} are too close{skipped}")
            return None
        acted = target(view, node, element.kind, strict=True) or node
        return Grounding(acted, method, None, round(score, 4), None if runner is None else round(runner[0], 4),
                         f"{method} {score:.2f} on {_describe(node)}"
                         + (f", runner-up {runner[0]:.2f}" if runner is not None else "") + skipped)

    # -- lists ----------------------------------------------------------------------------------

    def _list(self, list_element_name: str) -> Element:
        element = self.element(list_element_name)
        if element.kind != Kind.LIST:
            raise ActionError(f"{element.name} is a {element.kind.value}, not a list")
        return element

    def items(self, list_element_name: str, tree: UITree) -> list[UINode]:
        """The items of the list on screen; ``ElementNotFound`` when the list itself is not there."""
        element = self._list(list_element_name)
        found = self.ground(element.name, tree)
        if found is None:
            raise ElementNotFound(f"{element.name} is not on the screen ({self.last_detail})")
        items = item_nodes(tree, found.node, self._holds_one_item(element, self.view(tree)))
        return option_rows(tree, found.node, items, element.options) or items

    def _holds_one_item(self, element: Element, view: ScreenView) -> Callable[[UINode], bool]:
        """Whether a list's lone child holds the parts of one item: the list's item children
        (``item_of``) found in it under different children of it (a wrapper holds rows, each with
        all the parts)."""
        parts = [e for e in self.document.elements if e.item_of == element.name]

        def is_item(node: UINode) -> bool:
            tree = view.tree
            under: dict[int, int] = {}  # a child of ``node`` -> parts found below it
            for part in parts:
                where: set[int] = set()
                for identifier in part.identifiers:
                    if positional(identifier.xpath):
                        continue
                    try:
                        hits = evaluate(identifier, view)
                    except DocumentError:
                        continue
                    for hit in hits:
                        path = [hit.id, *(a.id for a in tree.ancestors(hit.id))]
                        if node.id in path:
                            k = path.index(node.id)
                            where.add(path[k - 1] if k > 0 else node.id)
                    if hits:
                        break
                for child in where:
                    under[child] = under.get(child, 0) + 1
            return len(under) >= 2 or node.id in under
        return is_item

    def match_item(self, list_element_name: str, items: list[UINode], tree: UITree,
                   query: str | Mapping[str, Any]) -> Grounding | None:
        """The item of ``items`` that ``query`` (text, or attribute dict) names, or None."""
        element = self._list(list_element_name)
        if isinstance(query, Mapping):
            found = match_attributes(tree, items, query)
            self.last_detail = found.detail if found else f"no item of {element.name} has {dict(query)}"
            return found
        # the list's topic ("theme" of theme_options); a list named for its kind only ("options")
        # takes its screen's ("song" of song_options_menu)
        context = element.local_name if topic(element.local_name) else element.screen
        found, why = match_text(tree, items, str(query), context=context, config=self.config,
                                embedder=None, options=element.options, resolve_embedder=lambda: self.embedder)
        self.last_detail = found.detail if found else f"no item of {element.name} matches {query!r}: {why}"
        return found

    def child(self, list_element_name: str, child_element_name: str, item: UINode,
              tree: UITree) -> Grounding | None:
        """``child_element_name`` inside ``item`` of the list, or None."""
        self._list(list_element_name)
        child = self.element(child_element_name)
        return self._ground(child, self.view(tree), item, child=True)


def _as_read(identifier: Identifier, view: ScreenView, renamed: bool) -> Identifier | None:
    """The identifier as written, or (``renamed``) with the id the screen shows renamed, None
    when it has no such id."""
    return renamed_identifier(identifier, view) if renamed else identifier


#: Roles the structure stage also counts over a whole screen (a screen has many buttons and
#: texts no document lists, but its fields and toggles usually all are).
_SCREEN_ROLES = frozenset({"toggle", "text field"})
#: The role a list item's part plays, by its kind: what the structure stage counts.
_ROLE_OF = {Kind.CHECKBOX: "toggle", Kind.SWITCH: "toggle", Kind.INPUT: "text field", Kind.BUTTON: "button",
            Kind.TEXT: "text"}


def _has_role(node: UINode, role: str) -> bool:
    if role == "toggle":
        return node.checkable
    if role == "text field":
        return node.editable
    if role == "button":
        return (node.clickable or node.long_clickable) and not node.checkable and not node.editable
    return bool(node.text.strip()) and not node.children and not node.editable and not node.checkable


def _holder_of_options(tree: UITree, options: tuple[str, ...]) -> UINode | None:
    """The innermost view holding every view that shows one of ``options`` (two at least)."""
    want = {fold(o) for o in options}
    shown = [n for n in tree.nodes if n.visible and (fold(n.text) in want or fold(n.content_desc) in want)]
    if len(shown) < 2:
        return None
    chains = [[n.id, *(a.id for a in tree.ancestors(n.id))] for n in shown]
    common = set(chains[0]).intersection(*chains[1:])
    return next((tree.node(i) for i in chains[0] if i in common), None)


def _node_words(view: ScreenView, node: UINode) -> list[str]:
    out: list[str] = []
    for s in (*view.strings(node), node.resource_name):
        out += [w for w in words(s).split() if w not in KIND_WORDS]
    return out


def _claim_on(view: ScreenView, node: UINode, kind: Kind, claimed: Callable[[UINode], str | None]) -> str | None:
    """The other element that ``node`` belongs to: one that finds ``node`` itself, or a view inside
    it whose tap lands where a tap on ``node`` would (a row whose label another element names:
    "Import messages" is that element's row, whatever an embedding thinks of "Export")."""
    owner = claimed(node)
    if owner is not None or not node.children:
        return owner
    acted = target(view, node, kind, strict=True)
    if acted is None:
        return None
    for inner in view.tree.descendants(node.id)[:40]:
        if (inner.text or inner.content_desc) and (owner := claimed(inner)) is not None:
            if target(view, inner, kind, strict=True) is acted:
                return owner
    return None


#: A text covering more than this share of the screen fills the page: a placeholder, not a label.
_PAGE_SHARE = 0.6


def _screen_area(tree: UITree) -> int:
    if tree.width and tree.height:
        return tree.width * tree.height
    return max((tree.node(r).bounds.area for r in tree.roots), default=0)


def _no_label(node: UINode, screen_area: int) -> bool:
    """A view that cannot be the label of an element known by what it shows (``_candidates``)."""
    if node.clickable or node.long_clickable or node.checkable or node.editable or node.scrollable:
        return False
    if node.children:
        return not (node.text or node.content_desc)
    return screen_area > 0 and node.bounds.area > _PAGE_SHARE * screen_area


def _describe(node: UINode) -> str:
    label = node.text or node.content_desc or node.resource_name or node.short_class
    return f"{node.short_class or 'view'} #{node.id} {label[:30]!r}"
