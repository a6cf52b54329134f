"""``match(text)`` on lists recorded in DroidTask: a labelled set of (query, items, expected item).

The items are the lists of the apps' recorded screens; the queries are their own labels, folded
or shortened (which must find the item), and labels the same list showed on other screens (near
misses of the same form, "Family (0)" for a list holding "Classmates (0)"), which must find none.
A wrong item is the failure that counts: a refusal is an error the user sees, a wrong item is a
tap on the wrong thing. ``build_cases`` and ``score`` are also run by hand to measure a change."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tapir.core.errors import ActionError, ElementNotFound
from tapir.eval.droidtask import document_for
from tapir.hierarchy import UINode, UITree
from tapir.hierarchy.parse import parse_droidbot_state
from tapir.runtime.grounding import Grounder
from tapir.runtime.grounding.fuzzy import fold
from tapir.runtime.grounding.items import item_strings
from tapir.sim.replay import ReplayApp

pytestmark = [pytest.mark.upstream]

APPS = ("contacts", "calendar", "notes", "gallery", "filemanager", "clock")
_COUNTER = re.compile(r"^(.*\S)\s*\(\d+\)$")


@dataclass(frozen=True)
class Case:
    app: str
    element: str
    state: str
    query: str
    labels: tuple[str, ...]
    expected: int | None  # the item's index, None: no item


@dataclass
class Instance:
    app: str
    element: str
    state: str
    tree: UITree
    items: list[UINode]
    strings: list[tuple[str, ...]]


def _words(s: str) -> set[str]:
    return set(fold(s).replace("(", " ").replace(")", " ").split())


def instances(folder: Path, apps: tuple[str, ...] = APPS, per_element: int = 8
              ) -> tuple[dict[str, Grounder], list[Instance]]:
    """The lists of the apps' documents on the recorded screens that show them (the first
    ``per_element`` different ones of each), with their items."""
    import json

    grounders: dict[str, Grounder] = {}
    out: list[Instance] = []
    for app in apps:
        app_dir = folder / "apps" / app
        document, _, _ = document_for(app_dir, ReplayApp(app_dir).package)
        g = grounders[app] = Grounder(document)
        lists = [e for e in document.elements if e.is_list]
        seen: set[tuple[str, tuple[tuple[str, ...], ...]]] = set()
        for path in sorted((app_dir / "states").glob("*.json")):
            tree = parse_droidbot_state(json.loads(path.read_text(encoding="utf-8")))
            for el in lists:
                if sum(1 for k in seen if k[0] == el.name) >= per_element:
                    continue
                try:
                    items = g.items(el.name, tree)
                except (ElementNotFound, ActionError):
                    continue
                strings = [item_strings(tree, n) for n in items]
                key = (el.name, tuple(strings))
                if not items or not all(strings) or key in seen:
                    continue
                seen.add(key)
                out.append(Instance(app, el.name, path.stem, tree, items, strings))
    return grounders, out


def build_cases(instances_: list[Instance], *, per_element: int = 8, misses: int = 3) -> list[Case]:
    """Cases from the first ``per_element`` lists of each list element, with ``misses`` near
    misses each (the labels the element showed elsewhere, in a fixed order)."""
    by_element: dict[tuple[str, str], set[str]] = {}
    for inst in instances_:
        by_element.setdefault((inst.app, inst.element), set()).update(ss[0] for ss in inst.strings)
    cases: list[Case] = []
    taken: dict[tuple[str, str], int] = {}
    for inst in instances_:
        taken[(inst.app, inst.element)] = n = taken.get((inst.app, inst.element), 0) + 1
        if n > per_element:
            continue
        labels = tuple(ss[0] for ss in inst.strings)
        shown = [{fold(s) for s in ss} for ss in inst.strings]
        if len({fold(s) for s in labels}) != len(labels):
            continue  # two items showing one label: no query names one of them

        def case(query: str, expected: int | None, inst: Instance = inst, labels: tuple[str, ...] = labels) -> None:
            cases.append(Case(inst.app, inst.element, inst.state, query, labels, expected))

        for i, label in enumerate(labels):
            case(f"  {label.upper()} ", i)  # case and spaces
            m = _COUNTER.match(label)
            if m and sum(fold(m.group(1)) in {fold(s) for s in ss} or
                         _COUNTER.match(ss[0]) is not None and fold(_COUNTER.match(ss[0]).group(1))  # type: ignore[union-attr]
                         == fold(m.group(1)) for ss in inst.strings) == 1:
                case(m.group(1), i)  # 'DCIM' for 'DCIM (12)'
        near = 0
        for other in sorted(by_element[(inst.app, inst.element)]):
            words = _words(other)
            # a near miss: shown by this list elsewhere, shares no item's words, nor is part of one
            if any(fold(other) in sh for sh in shown):
                continue
            if any(words <= _words(s) or _words(s) <= words for ss in inst.strings for s in ss):
                continue
            if near < misses:
                case(other, None)
                near += 1
    return cases


def score(grounders: dict[str, Grounder], instances_: list[Instance], cases: list[Case]) -> dict[str, object]:
    where = {(i.app, i.element, i.state): i for i in instances_}
    counts = {"correct": 0, "wrong": 0, "refused": 0, "positives": 0, "negatives": 0}
    wrong: list[str] = []
    refused: list[str] = []
    for c in cases:
        inst = where[(c.app, c.element, c.state)]
        found = grounders[c.app].match_item(c.element, inst.items, inst.tree, c.query)
        got = None if found is None else inst.items.index(found.node)
        counts["positives" if c.expected is not None else "negatives"] += 1
        if got == c.expected:
            counts["correct"] += 1
        elif got is None:
            counts["refused"] += 1
            refused.append(f"{c.app} {c.element} {c.query!r} in {list(c.labels)[:6]}")
        else:
            counts["wrong"] += 1
            wrong.append(f"{c.app} {c.element} {c.query!r} -> {c.labels[got]!r} ({found.method}) "  # type: ignore[union-attr]
                         f"in {list(c.labels)[:6]}")
    return {"counts": counts, "wrong": wrong, "refused": refused}


def test_recorded_lists_find_their_items_and_refuse_near_misses(upstream: Path) -> None:
    grounders, found = instances(upstream / "droidtask", apps=("contacts",))
    cases = build_cases(found, misses=8)
    result = score(grounders, found, cases)
    counts = result["counts"]
    assert isinstance(counts, dict) and counts["positives"] > 50 and counts["negatives"] > 20
    # every label, folded or without its counter, finds its item
    misses = [c for c in cases if c.expected is not None]
    assert not [w for w in result["wrong"] + result["refused"]  # type: ignore[operator]
                if any(f"{c.query!r} " in w for c in misses)]
    # the groups list holding only "Classmates (0)" takes none of the contacts' names (the groups
    # tab's list is an element of its own since the contacts tab's list has one too)
    (one,) = {(i.element, i.state) for i in found if [s[0] for s in i.strings] == ["Classmates (0)"]}
    names = sorted({s[0] for i in found for s in i.strings if i.element != one[0]} - {"1"})
    assert {"Alice", "Bob", "Jack"} <= set(names)
    groups = [Case("contacts", one[0], one[1], name, ("Classmates (0)",), None) for name in names]
    taken = score(grounders, found, groups)
    assert taken["counts"]["correct"] == len(groups), taken["wrong"]  # type: ignore[index]
