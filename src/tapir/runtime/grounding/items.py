"""List elements: what their items are, what an item says, and which item a query means.

**Items.** The items of a list element are the direct children of its container node: one notion
for ``len($list)``, ``$list[i]``, ``for item in $list`` and ``$list.match(...)`` (upstream used
three). A container whose only child is a wrapper (``ScrollView > LinearLayout > rows``) is seen
through, but a list with one row left is a list of one item, not a list of that row's parts: an
adapter view's (``RecyclerView``, ``ListView``, ``GridView``) children are always its items, a
scroll view's one child is always a wrapper (Android lets it hold only one), and elsewhere a
lone child is an item when it is interactive (clickable, long-clickable, checkable) or when the
caller says it holds the parts of one item (``is_item``: the grounder asks whether the list's
item children are found in it). Headers and footers are left out: when one shape (class and
resource id) covers most children, children of other shapes are not items ("Recent" headers,
"Load more" footers). Invisible children are never items. A list the document names by its first
row, its other rows being that row's siblings, has those siblings for items (``option_rows``).

**Attributes.** ``node_attributes`` is the dict ``get_attributes()`` returns (the registry's
keys). As upstream does, ``selected`` is true for a checked *or* selected view; for a list item
``checked``/``selected``/``focused`` also hold when a view inside the item has them (a radio row is
selected when its radio button is), and ``text`` is the item's first text.

**Match.** ``match(text)`` tries, in order: exact equality with a string of the item (its own and
its descendants' texts and content descriptions), equality after case and space folding, fuzzy
similarity (an item showing only part of the query's words, "Play" for "Play next", gets no credit
for the part: ``fuzzy.shown_similarity``), then embedding similarity with the query and the items
put in the list's context
("theme black" vs "theme Dark"), each stage with a threshold and a margin over the runner-up.
Both similarity stages compare words only (``words_only``: a counter both labels show, "(0)", is
no likeness), take no item missing a number the query names (``numbers``), and by meaning take no
item that is not nearer the query than the list's topic alone, by the margin when it is the only
candidate (the DroidTask groups list holding only "Classmates (0)" is not "Family (0)").
``match(dict)`` takes the first item whose attributes equal every given value.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from rapidfuzz.utils import default_process

from tapir.core.errors import ActionError
from tapir.hierarchy import UINode, UITree
from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.embedding import Embedder
from tapir.runtime.grounding.fuzzy import fold, shown_similarity, topic
from tapir.runtime.grounding.result import Grounding

#: Keys of ``get_attributes()`` (see ``tapir.dsl.api``): booleans, then strings.
BOOL_KEYS = ("selected", "checked", "enabled", "focused", "scrollable", "editable", "clickable")
STR_KEYS = ("text", "content_desc", "resource_id")
#: Item attributes that hold when any view inside the item has them.
_AGGREGATED = frozenset({"selected", "checked", "focused"})
#: Share of the children the dominant shape must cover for other shapes to count as headers.
_DOMINANT_SHARE = 0.6


#: Views whose children are the rows an adapter made: never a wrapper between them and the rows.
ADAPTER_VIEWS = ("RecyclerView", "ListView", "GridView", "ViewPager", "ViewPager2", "Spinner")
#: Views that hold exactly one child, which wraps the content.
SCROLL_VIEWS = ("ScrollView", "NestedScrollView", "HorizontalScrollView")


def item_nodes(tree: UITree, container: UINode, is_item: Callable[[UINode], bool] | None = None) -> list[UINode]:
    """The items of the list whose container is ``container`` (see the module docstring)."""
    node = container
    for _ in range(3):  # see through wrappers, a few levels at most
        if node.short_class.endswith(ADAPTER_VIEWS):
            break
        kids = _visible_children(tree, node)
        if len(kids) != 1 or not kids[0].children:
            break
        only = kids[0]
        if not node.short_class.endswith(SCROLL_VIEWS) and (
                only.clickable or only.long_clickable or only.checkable or (is_item is not None and is_item(only))):
            break  # a list of one row
        node = only
    kids = _visible_children(tree, node)
    if len(kids) < 3:
        return kids
    shapes = Counter((k.class_name, k.resource_id) for k in kids)
    shape, count = shapes.most_common(1)[0]
    if count >= 2 and count / len(kids) >= _DOMINANT_SHARE and len(shapes) > 1:
        return [k for k in kids if (k.class_name, k.resource_id) == shape]
    return kids


def option_rows(tree: UITree, container: UINode, items: list[UINode], options: tuple[str, ...]) -> list[UINode] | None:
    """The rows of a list the document names by one of its rows, or None when it does not.

    Generated documents often give a list of settings the XPath of its first row
    (``settings_manage_favorites_holder``) and the other rows' texts as its options ('Manage
    shown tabs', 'Font size'): the rows are the row's siblings, each its own view with its own id,
    not children of one container. When the items found show at most one documented option and
    the siblings of the container (or of its parent) show two or more, the siblings that show an
    option are the list's rows, the container among them. A real list's container (an adapter or
    scroll view) is never a row: a list scrolled to one documented item stays that list."""
    wanted = {fold(o) for o in options if o.strip()}
    if len(wanted) < 2 or container.scrollable or container.short_class.endswith(ADAPTER_VIEWS + SCROLL_VIEWS):
        return None

    def shows(node: UINode) -> bool:
        return any(fold(s) in wanted for s in item_strings(tree, node))

    if sum(shows(i) for i in items) >= 2:
        return None
    row = container
    for _ in range(2):
        parent = tree.parent(row.id)
        if parent is None:
            return None
        rows = [k for k in _visible_children(tree, parent) if k.id == row.id or shows(k)]
        if sum(shows(k) for k in rows) >= 2:
            return rows
        row = parent
    return None


def _visible_children(tree: UITree, node: UINode) -> list[UINode]:
    return [c for c in tree.children(node.id) if c.visible and (c.bounds.area > 0 or node.bounds.area == 0)]


def node_text(tree: UITree, node: UINode) -> str:
    """The node's text, else the first text below it (depth first), else the first description."""
    if node.text:
        return node.text
    below = tree.descendants(node.id)
    for d in below:
        if d.text and d.visible:
            return d.text
    if node.content_desc:
        return node.content_desc
    for d in below:
        if d.content_desc and d.visible:
            return d.content_desc
    return ""


def node_attributes(tree: UITree, node: UINode, *, item: bool = False) -> dict[str, Any]:
    """``get_attributes()`` of a node; ``item=True`` folds in the state of the views inside it."""
    below = [d for d in tree.descendants(node.id) if d.visible] if item else []
    attrs: dict[str, Any] = {
        "selected": node.selected or node.checked or any(d.selected or d.checked for d in below),
        "checked": node.checked or any(d.checked for d in below),
        "enabled": node.enabled,
        "focused": node.focused or any(d.focused for d in below),
        "scrollable": node.scrollable,
        "editable": node.editable,
        "clickable": tree.inherits(node.id, "clickable"),
        "text": node_text(tree, node),
        "content_desc": node.content_desc,
        "resource_id": node.resource_id,
    }
    return attrs


def item_strings(tree: UITree, node: UINode) -> tuple[str, ...]:
    """Every text and description of an item, its own first."""
    out: list[str] = []
    for n in (node, *tree.descendants(node.id)):
        if not n.visible:
            continue
        for s in (n.text, n.content_desc):
            s = s.strip()
            if s and s not in out:
                out.append(s)
    return tuple(out)


def match_attributes(tree: UITree, items: list[UINode], query: Mapping[str, Any]) -> Grounding | None:
    unknown = [k for k in query if k not in BOOL_KEYS and k not in STR_KEYS]
    if unknown:
        raise ActionError(f"match() does not know the attribute{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(map(repr, unknown))}; known: {', '.join(BOOL_KEYS + STR_KEYS)}")
    matching = []
    for node in items:
        attrs = node_attributes(tree, node, item=True)
        if all(_equal(attrs[k], v, short_id=k == "resource_id") for k, v in query.items()):
            matching.append(node)
    if not matching:
        return None
    more = f" (first of {len(matching)})" if len(matching) > 1 else ""
    return Grounding(matching[0], "attributes", None, 1.0, None, f"attributes {dict(query)} hold{more}")


def _equal(actual: Any, wanted: Any, *, short_id: bool = False) -> bool:
    if isinstance(actual, bool):
        return actual is bool(wanted) if isinstance(wanted, bool | int) else False
    if short_id and "/" not in str(wanted):
        actual = str(actual).rsplit("/", 1)[-1]  # {'resource_id': 'title'} names org.x:id/title
    return fold(str(actual)) == fold(str(wanted))


def match_text(
    tree: UITree,
    items: list[UINode],
    query: str,
    *,
    context: str,
    config: GroundingConfig,
    embedder: Embedder | None,
    options: tuple[str, ...] = (),
    resolve_embedder: Callable[[], Embedder | None] | None = None,
) -> tuple[Grounding | None, str]:
    """The item ``query`` names, and a sentence on how (or why none) for traces and errors.

    ``options`` are the items the document says the list has: when the query is one of them, an
    item showing exactly another is that one, and no candidate for similarity ("Play" is not
    "Play next" reworded).
    Nor is an item that shows only part of the query's words, in any stage. ``resolve_embedder``
    gives the embedder when ``embedder`` is None and the embedding stage is reached (so that only a
    match that needed it says the stage is off)."""
    strings = [item_strings(tree, n) for n in items]
    for i, ss in enumerate(strings):
        if query in ss:
            return Grounding(items[i], "exact", None, 1.0, None, f"item {i} shows {query!r}"), ""
    q = fold(query)
    for i, ss in enumerate(strings):
        if any(fold(s) == q for s in ss):
            return Grounding(items[i], "exact", None, 1.0, None, f"item {i} shows {query!r} (case/space folded)"), ""

    # the query is one of the documented options: the items that show the others are those
    documented = {fold(o) for o in options}
    others = documented - {q} if q in documented else set()
    query_words = set(default_process(query).split())

    def candidate(ss: tuple[str, ...]) -> bool:
        if any(fold(s) in others for s in ss):
            return False  # it is another documented item
        shown = [set(default_process(s).split()) for s in ss]
        return any(w and not w < query_words for w in shown)

    # numbers name things ("7:00", "Page 2"): an item missing one of the query's is another thing
    wanted_numbers = numbers(query)
    eligible = [candidate(ss) and wanted_numbers <= {n for s in ss for n in numbers(s)} for ss in strings]
    notes: list[str] = []
    if config.use_fuzzy:
        scores = [max((word_similarity(query, s) for s in ss), default=0.0) if ok else 0.0
                  for ss, ok in zip(strings, eligible, strict=True)]
        found = _pick(items, scores, config.match_fuzzy_threshold, config.match_fuzzy_margin, "fuzzy")
        if isinstance(found, Grounding):
            return found, ""
        notes.append(found)
    if config.use_embedding and embedder is None and resolve_embedder is not None:
        embedder = resolve_embedder()
    if config.use_embedding and embedder is not None:
        # Put the query and the items in the list's context: alone, "black" is nearest "White"
        # (both colours); as "theme black" it is nearest "theme Dark".
        prefix = f"{topic(context)} " if topic(context) else ""
        flat = [(i, s) for i, ss in enumerate(strings) if eligible[i] for s in ss if words_only(s)]
        folded = [fold(o) for o in options]
        if q in folded:
            paired = _pair_options(items, strings, query, options, prefix, config, embedder)
            if isinstance(paired, Grounding):
                return paired, ""
            if paired:
                notes.append(paired)
                return None, "; ".join(notes)
        if flat:
            # counters and punctuation both show ("Family (0)", "Classmates (0)") are no likeness
            said = words_only(query) or query
            bare = [prefix.strip()] if prefix else []
            sims = embedder.similarity([prefix + said], [prefix + words_only(s) for _, s in flat] + bare)[0]
            escores = [0.0] * len(items)
            for (i, _), sim in zip(flat, sims[:len(flat)], strict=True):
                escores[i] = max(escores[i], float(sim))
            # an item no nearer the query than the list's topic alone says nothing of it; a lone
            # candidate has no runner-up to beat by the margin, so it must beat the topic by it
            floor = float(sims[-1]) if bare else None
            found = _pick(items, escores, config.match_embedding_threshold, config.match_embedding_margin,
                          "embedding", floor=floor)
            if isinstance(found, Grounding):
                return found, ""
            notes.append(found)
    elif config.use_embedding:
        notes.append("embedding stage off")
    return None, "; ".join(notes)


#: Pairings tried at most when matching a list's documented options to its items.
_MAX_PAIRINGS = 50_000


def _pair_options(items: list[UINode], strings: list[tuple[str, ...]], query: str, options: tuple[str, ...],
                  prefix: str, config: GroundingConfig, embedder: Embedder) -> Grounding | str:
    """The item the documented option ``query`` became, found by pairing every documented option
    not shown as it is with an item not showing one, so that the pairs are as alike as can be:
    "Play" and "Play next" reworded to "Play now" and "Play after current song" pair up as a
    whole, where "Play next" alone is nearest "Play now". The item is taken when its pair is
    alike enough and any pairing that gives the query another item is worse by the margin.
    "" when the options cannot be paired here (too many), for the caller's usual comparison."""
    shown = {fold(s) for ss in strings for s in ss}
    folded = [fold(o) for o in options]
    rows = [o for o, f in zip(options, folded, strict=True) if f not in shown]
    cols = [i for i, ss in enumerate(strings) if ss and not any(fold(s) in folded for s in ss)]
    if not cols or math.perm(max(len(rows), len(cols)), min(len(rows), len(cols))) > _MAX_PAIRINGS:
        return ""
    flat = [(k, s) for k, i in enumerate(cols) for s in strings[i]]
    sims = embedder.similarity([prefix + o for o in rows], [prefix + s for _, s in flat])
    table = [[0.0] * len(cols) for _ in rows]
    for r in range(len(rows)):
        for (k, _), sim in zip(flat, sims[r], strict=True):
            table[r][k] = max(table[r][k], float(sim))
    me = [fold(o) for o in rows].index(fold(query))
    best: dict[int, float] = {}  # the query's item -> the best total with it
    if len(rows) <= len(cols):
        for pick in itertools.permutations(range(len(cols)), len(rows)):
            total = sum(table[r][k] for r, k in enumerate(pick))
            if total > best.get(pick[me], -1.0):
                best[pick[me]] = total
    else:
        for pick in itertools.permutations(range(len(rows)), len(cols)):
            total = sum(table[r][k] for k, r in enumerate(pick))
            mine = pick.index(me) if me in pick else -1
            if total > best.get(mine, -1.0):
                best[mine] = total
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    k, total = ranked[0]
    lead = total - ranked[1][1] if len(ranked) > 1 else total
    if k < 0:
        return f"embedding: paired with the documented options, {query!r} is left without an item"
    score = table[me][k]
    if score < config.match_embedding_threshold:
        return (f"embedding: {query!r} pairs best with item {cols[k]} at {score:.2f} < "
                f"{config.match_embedding_threshold:.2f}")
    if lead < config.match_embedding_margin:
        return f"embedding: the documented options pair with the items in ways too close to tell ({lead:.2f})"
    return Grounding(items[cols[k]], "embedding", None, round(score, 4), None,
                     f"item {cols[k]} by embedding similarity {score:.2f}, pairing the documented options "
                     f"with the items (ahead by {lead:.2f})")


_NUMBER = re.compile(r"\d+")


def numbers(text: str) -> set[str]:
    """The numbers a label shows, without leading zeros: ``'07:30 (2)'`` -> ``{'7', '30', '2'}``."""
    return {n.lstrip("0") or "0" for n in _NUMBER.findall(text)}


def words_only(text: str) -> str:
    """The label without its tokens that hold no letter (counters, digits, punctuation):
    ``'Family (0)'`` -> ``'Family'``; what tells two items of one list apart."""
    return " ".join(t for t in text.split() if any(ch.isalpha() for ch in t))


def word_similarity(query: str, shown: str) -> float:
    """``shown_similarity`` on the words only: a counter or punctuation both labels have
    ("Work (12)", "Word (12)") does not make them alike. A query without words compares whole."""
    said = words_only(query)
    if not said:
        return shown_similarity(query, shown)
    seen = words_only(shown)
    return shown_similarity(said, seen) if seen else 0.0


def _pick(items: list[UINode], scores: list[float], threshold: float, margin: float,
          method: str, *, floor: float | None = None) -> Grounding | str:
    """The best-scoring item, if it reaches ``threshold`` and leads the next item with a score by
    ``margin``. ``floor``: the score of no item (the list's topic alone); the best must beat it,
    and by ``margin`` when no other item scores (a list of one is no easier to match)."""
    if not items:
        return f"{method}: no items"
    order = sorted(range(len(items)), key=lambda i: -scores[i])
    best = order[0]
    runner = scores[order[1]] if len(order) > 1 and scores[order[1]] > 0 else None
    lead = scores[best] - (runner or 0.0)
    if scores[best] < threshold:
        return f"{method}: best item {best} scores {scores[best]:.2f} < {threshold:.2f}"
    if floor is not None and scores[best] - floor < (margin if runner is None else 0.0):
        return (f"{method}: best item {best} scores {scores[best]:.2f}, no nearer the query than the list's "
                f"topic alone ({floor:.2f})")
    if runner is not None and lead < margin:
        return f"{method}: items {best} and {order[1]} too close ({scores[best]:.2f} vs {runner:.2f})"
    return Grounding(items[best], method, None, round(scores[best], 4),
                     None if runner is None else round(runner, 4),
                     f"item {best} by {method} similarity {scores[best]:.2f}")
