"""What can be done on a screen while exploring it, and what to type into fields.

``candidates(anatomy, policy)`` lists the actions a GUI tester would try on one hierarchy: tap
every enabled interactive element (long tap it too when it takes long taps), type plausible text
into fields, scroll what scrolls, and press BACK. Lists are sampled, not exhausted: every option
of a small fixed list (a menu, a choice dialog) is tried, but of a content list (songs, contacts)
only the first item and its controls, since rows are alike. Elements the danger policy marks
(delete, send, pay, sign out) are left out and counted.

Each candidate has a ``key`` that is the same on every hierarchy of the same screen, so a strategy
can remember what it already tried there.

    for c in candidates(Anatomy.of(tree), DangerPolicy.default()).actions:
        print(c.key, c.kind, c.node)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tapir.docgen.build.anatomy import MAX_OPTIONS, Anatomy, interactive
from tapir.docgen.build.policy import DangerPolicy

#: (words in a field's id, hint or label, text typed). The first match wins.
PLAUSIBLE_TEXT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("email", "mail"), "alex.morgan@example.com"),
    (("password", "passwd", "pin"), "Tapir-2024!"),
    (("phone", "mobile", "tel", "number"), "5550123"),
    (("url", "link", "website", "address"), "https://example.com"),
    (("search", "find", "query", "filter"), "a"),
    (("first", "given"), "Alex"),
    (("last", "family", "surname"), "Morgan"),
    (("name", "title", "label", "playlist"), "Morning run"),
    (("amount", "price", "count", "quantity", "age", "minutes", "hours", "seconds"), "5"),
    (("date",), "2024-05-17"),
    (("time",), "07:30"),
    (("note", "message", "comment", "description", "body", "text", "content"), "Buy milk and bread"),
)
DEFAULT_TEXT = "Hello Tapir"
_WORD = re.compile(r"[a-z]+")


def plausible_text(*labels: str) -> str:
    """Text a person might type into a field known by these labels (id, hint, nearby caption)."""
    words: set[str] = set()
    for label in labels:
        spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", label.rsplit("/", 1)[-1])
        words |= set(_WORD.findall(spaced.lower().replace("_", " ")))
    for keys, text in PLAUSIBLE_TEXT:
        if words & set(keys):
            return text
    return DEFAULT_TEXT


@dataclass(frozen=True)
class Candidate:
    key: str
    #: ``tap``, ``long_tap``, ``text``, ``scroll``, ``back`` or ``enter``.
    kind: str
    node: int | None = None
    text: str | None = None
    direction: str | None = None


@dataclass
class Candidates:
    actions: list[Candidate] = field(default_factory=list)
    #: Keys of elements left out as dangerous, with the word that made them so.
    dangerous: dict[str, str] = field(default_factory=dict)


def candidates(anatomy: Anatomy, policy: DangerPolicy) -> Candidates:
    """The actions to try on this hierarchy (see the module docstring), BACK last."""
    t = anatomy.tree
    out = Candidates()
    seen: set[str] = set()

    def add(c: Candidate) -> None:
        if c.key not in seen:
            seen.add(c.key)
            out.actions.append(c)

    def risky(nid: int, key: str) -> bool:
        node = t.node(nid)
        reason = policy.reason(node.text, node.content_desc, node.resource_id, anatomy.label(nid))
        if reason:
            out.dangerous[key] = reason
        return reason is not None

    def node_actions(nid: int, key: str) -> None:
        node = t.node(nid)
        if not node.enabled or risky(nid, key):
            return
        if node.editable:
            hint = node.text if not node.focused else ""
            add(Candidate(f"{key}:text", "text", nid, plausible_text(node.resource_id, hint, node.content_desc)))
            return
        if node.clickable or node.checkable:
            add(Candidate(f"{key}:tap", "tap", nid))
        if node.long_clickable:
            add(Candidate(f"{key}:long", "long_tap", nid))
        if node.scrollable and nid not in anatomy.lists:
            add(Candidate(f"{key}:scroll", "scroll", nid, direction="down"))

    for nid in anatomy.order:
        node = t.node(nid)
        if nid in anatomy.lists:
            info = anatomy.lists[nid]
            key = info.key
            fixed = not info.scrollable and len(info.items) <= MAX_OPTIONS
            if fixed:
                for item in info.items:
                    node_actions(item, f"{key}:item:{anatomy.label(item)}")
            else:
                first = info.items[0]
                node_actions(first, f"{key}:item")
                for inside in t.descendants(first):
                    ck = anatomy.child_key.get(inside.id)
                    if ck and ck[1] and interactive(inside):
                        node_actions(inside.id, f"{key}:child:{ck[1]}")
            if info.scrollable:
                add(Candidate(f"{key}:scroll", "scroll", nid, direction="down"))
            continue
        if nid in anatomy.in_item or nid not in anatomy.key_of or not interactive(node):
            continue
        node_actions(nid, anatomy.key_of[nid])
    if any(t.node(n).editable and t.node(n).focused for n in anatomy.order):
        add(Candidate("enter", "enter"))
    add(Candidate("back", "back"))
    return out
