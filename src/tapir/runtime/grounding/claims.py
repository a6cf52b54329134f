"""Which other elements of a screen could find a given view, without evaluating them all.

A view that another element's identifiers find belongs to that element: the fuzzy and embedding
stages must not take it, and a fallback XPath landing on it has found the wrong view. Checking
that by evaluating every element of the screen costs a few hundred XPaths on a big screen, so
the grounder asks only the *suspects*: elements with a literal in their identifiers equal to the
view's resource name, text or description, plus the elements whose identifiers cannot be
indexed that way (``contains()``, paths through other views), which are always suspects. Bare
positions (``//FrameLayout/.../button[3]``) never claim a view: after a drift they point anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tapir.core.document import AppDocument, Element
from tapir.hierarchy import UINode
from tapir.runtime.grounding.fuzzy import LABEL_CAP
from tapir.runtime.grounding.identifiers import Labels, positional

# One step with one predicate on the selected view itself: its literals constrain the hit.
_SELF_PREDICATED = re.compile(r"^//(?:\*|[\w.$\-]+)\[[^\[\]/]*\]$")
_FUNCTIONS = re.compile(r"\b(?:contains|starts-with|substring|translate|normalize-space|not)\s*\(")


def indexable(xpath: str) -> bool:
    return bool(_SELF_PREDICATED.match(xpath)) and not _FUNCTIONS.search(xpath)


class ClaimIndex:
    """Per screen: literal value -> elements whose identifiers name it, and the unindexable rest."""

    def __init__(self, document: AppDocument, labels_of: Callable[[Element], Labels]) -> None:
        self._by_value: dict[str, dict[str, set[str]]] = {}
        self._always: dict[str, set[str]] = {}
        for screen in document.screens:
            by_value: dict[str, set[str]] = {}
            always: set[str] = set()
            for element in screen.elements:
                if element.item_of is not None or not element.identifiers:
                    continue
                tests = [i for i in element.identifiers if not positional(i.xpath)]
                if not tests:
                    continue  # bare positions never claim a view
                if not all(indexable(i.xpath) for i in tests):
                    always.add(element.name)
                    continue
                known = labels_of(element)
                values = {*known.texts, *known.descs, *known.rids}
                if not values:
                    always.add(element.name)
                for v in values:
                    by_value.setdefault(v, set()).add(element.name)
            self._by_value[screen.name] = by_value
            self._always[screen.name] = always

    def suspects(self, screen: str, node: UINode) -> Iterable[str]:
        by_value = self._by_value.get(screen, {})
        found = set(self._always.get(screen, ()))
        for value in (node.resource_name, node.resource_id, node.text.strip(), node.text[:50].strip(),
                      node.text.strip()[:LABEL_CAP], node.content_desc.strip()):
            if value:
                found |= by_value.get(value, set())
        return sorted(found)


def other_elements(document: AppDocument, names: Iterable[str], exclude: str) -> list[Element]:
    out = []
    for name in names:
        if name != exclude:
            e = document.element(name)
            if e is not None:
                out.append(e)
    return out
