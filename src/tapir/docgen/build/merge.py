"""Regenerating a document after more exploration (an app update, say) without losing hand edits.

``merge(old, result)`` matches what was just built against the document being updated, on the
new recorded hierarchies:

* a new element *is* an old element when the old element's identifiers find its node (the first
  identifier that finds exactly one view, as the runtime reads a queue) on most of the
  hierarchies it was seen in; a new screen is the old screen most of its elements belong to.
  On a matched screen, what is left is paired by kind and label similarity (rapidfuzz): an update
  that renamed an id or reworded a label keeps the element's name;
* matched screens and elements keep everything the old document says: names, descriptions,
  notes, kinds, effects, options, paths. Their identifier queues keep the old identifiers that
  still find the element (or nothing), followed by the new ones; an old identifier that now finds
  a different view is dropped and reported. Options and paths gain what is new;
* old screens and elements the new traces never showed stay as they were (an element the
  exploration did not reach is not an element that is gone); they are listed in the report;
* new screens and elements are added with generated names that do not collide with old ones.
  Every generated name in effects, ``leads_to``, ``item_of`` and paths is rewritten to the name
  kept.

YAML comments in the old file are not carried over (put remarks in ``notes`` fields).

    merged, report = merge(load_document("music.yaml"), build_document(traces))
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tapir.core.document import AppDocument, Dialect, Element, Identifier, Screen, Step
from tapir.docgen.build.builder import BuildResult
from tapir.docgen.build.elements import ElementDraft, ScreenDraft
from tapir.docgen.build.naming import Namer, resource_words
from tapir.docgen.build.xpath import XPathView
from tapir.docgen.loader import parse_step
from tapir.docgen.writer import FlowList, element_to_data, identifier_to_data, screen_to_data, watcher_to_data

#: Hierarchies per element used to match it against the old document.
SAMPLES = 5


@dataclass
class MergeReport:
    kept_screens: list[str] = field(default_factory=list)
    new_screens: list[str] = field(default_factory=list)
    unseen_screens: list[str] = field(default_factory=list)
    kept_elements: int = 0
    new_elements: list[str] = field(default_factory=list)
    unseen_elements: list[str] = field(default_factory=list)
    dropped_identifiers: list[str] = field(default_factory=list)
    signatures_replaced: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"merged: {len(self.kept_screens)} screens and {self.kept_elements} elements kept their names "
                 f"and edits; {len(self.new_screens)} new screens, {len(self.new_elements)} new elements"]
        if self.new_screens:
            lines.append("new screens: " + ", ".join(self.new_screens))
        if self.new_elements:
            lines.append("new elements: " + ", ".join(self.new_elements[:10])
                         + (" ..." if len(self.new_elements) > 10 else ""))
        if self.unseen_screens or self.unseen_elements:
            lines.append(f"kept as they were (not seen in the new traces): {len(self.unseen_screens)} screens, "
                         f"{len(self.unseen_elements)} elements")
        for what in self.dropped_identifiers:
            lines.append(f"dropped identifier (it now finds another view): {what}")
        for screen in self.signatures_replaced:
            lines.append(f"signature of {screen} replaced: the old one no longer recognises it")
        return "\n".join(lines)


class _Matcher:
    def __init__(self, old: AppDocument, result: BuildResult) -> None:
        self.old = old
        self.result = result
        self.views: dict[str, XPathView] = {}

    def view(self, screen: ScreenDraft, state: str) -> XPathView:
        found = self.views.get(state)
        if found is None:
            found = self.views[state] = XPathView(screen.group.anatomies[state].tree)
        return found

    @staticmethod
    def first_unique(view: XPathView, element: Element, within: int | None = None) -> int | None | bool:
        """The node the element's queue finds (first identifier with exactly one hit); None when
        nothing is found; False when identifiers only find several views."""
        ambiguous = False
        for ident in element.identifiers:
            hits = view.select(ident, within)
            if len(hits) == 1:
                return hits[0]
            ambiguous = ambiguous or bool(hits)
        return False if ambiguous else None

    def match(self, screen: ScreenDraft, d: ElementDraft, candidates: list[Element]) -> Element | None:
        sample = d.seen[:: max(len(d.seen) // SAMPLES, 1)][:SAMPLES]
        votes: Counter[str] = Counter()
        for s in sample:
            view = self.view(screen, s.state)
            for e in candidates:
                found = self.first_unique(view, e, s.item if d.role == "child" else None)
                if found is not None and found is not False and found == s.node:
                    votes[e.name] += 1
        if not votes:
            return None
        name, n = votes.most_common(1)[0]
        return self.old.element(name) if n * 2 > len(sample) else None

    def consistent(self, screen: ScreenDraft, d: ElementDraft, ident: Identifier) -> bool:
        """Does the identifier find the element, or nothing, wherever the element was seen?"""
        for s in d.seen[:SAMPLES * 2]:
            hits = self.view(screen, s.state).select(ident, s.item if d.role == "child" else None)
            if hits and hits != [s.node]:
                return False
        return True

    def signature_holds(self, screen: ScreenDraft, old: Screen) -> bool:
        sig = old.signature
        if sig.skeleton and not sig.all_of:
            return True  # a skeleton is compared by similarity at run time: nothing to check here
        for sid in screen.group.states:
            anatomy = screen.group.anatomies[sid]
            if sig.activity and not _same_activity(sig.activity, anatomy.activity, self.old.app.package):
                return False
            view = self.view(screen, sid)
            if not all(view.select(i) for i in sig.all_of) or any(view.select(i) for i in sig.none_of):
                return False
        return True


_LITERAL = re.compile(r"""@(resource-id|resource_id|text|content-desc|alt)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
#: How alike the labels of an old and a new element must be to call them one (app updates reword).
LABEL_SIMILARITY = 0.75


def _old_labels(e: Element) -> set[str]:
    out = {e.local_name.replace("_", " ")}
    for ident in e.identifiers:
        for m in _LITERAL.finditer(ident.xpath):
            value = m.group(2) if m.group(2) is not None else m.group(3)
            out.add(resource_words(value).replace("_", " ") if m.group(1).startswith("resource") else value)
    return {x for x in out if x}


def _new_labels(d: ElementDraft) -> set[str]:
    out = {d.name.split("__", 1)[-1].replace("_", " "), d.display}
    if d.resource_id:
        out.add(resource_words(d.resource_id).replace("_", " "))
    return {x for x in out if x}


def _match_by_labels(screen: ScreenDraft, target: Screen, old: AppDocument, found: dict[str, Element],
                     used: set[str]) -> None:
    """Second chance for what the old identifiers no longer find (an update renamed an id or
    reworded a label): pair the rest of the screen's old and new elements of the same kind whose
    labels are most alike, best pairs first; children only under paired lists."""
    from rapidfuzz import fuzz

    def pairs(new: list[ElementDraft], olds: list[Element]) -> list[tuple[float, ElementDraft, Element]]:
        out = []
        for d in new:
            for e in olds:
                if e.kind != d.kind:
                    continue
                score = max(fuzz.token_set_ratio(a.lower(), b.lower()) / 100
                            for a in _new_labels(d) for b in _old_labels(e))
                out.append((score, d, e))
        return sorted(out, key=lambda p: -p[0])

    def assign(candidates: list[tuple[float, ElementDraft, Element]]) -> None:
        for score, d, e in candidates:
            if score < LABEL_SIMILARITY or d.key in found or e.name in used:
                continue
            found[d.key] = e
            used.add(e.name)

    singles = [d for d in screen.elements if d.role != "child" and d.key not in found]
    assign(pairs(singles, [e for e in target.elements if not e.item_of and e.name not in used]))
    lists = {d.key: found[d.key] for d in screen.elements if d.role == "list" and d.key in found}
    for key, lst in lists.items():
        kids = [d for d in screen.elements if d.role == "child" and d.list_key == key and d.key not in found]
        assign(pairs(kids, [e for e in old.children_of(lst.name) if e.name not in used]))


def _same_activity(wanted: str, actual: str, package: str) -> bool:
    full = package + wanted if wanted.startswith(".") else wanted
    short = wanted.rsplit("/", 1)[-1]
    return actual in (full, short) or actual.endswith(short if short.startswith(".") else "." + short)


def _rename_step(text: str, names: dict[str, str]) -> str:
    step = parse_step(text)
    if step is None or step.target is None:
        return text
    return str(Step(names.get(step.target, step.target), step.action, step.args, match=step.match))


def _rename_text(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b[a-z][a-z0-9_]*\b", lambda m: names.get(m.group(0), m.group(0)), text)


def merge(old: AppDocument, result: BuildResult) -> tuple[dict[str, Any], MergeReport]:
    """The merged document data (for ``to_yaml``) and what the merge did."""
    matcher = _Matcher(old, result)
    report = MergeReport()
    dialect = old.app.dialect
    matches: dict[int, dict[str, Element]] = {}
    screen_of: dict[int, Screen] = {}
    old_singles = [e for e in old.elements if not e.item_of]
    used: set[str] = set()
    for s in result.screens:
        found: dict[str, Element] = {}
        for d in s.elements:
            if d.role == "child":
                continue
            e = matcher.match(s, d, [e for e in old_singles if e.name not in used])
            if e is not None:
                found[d.key] = e
                used.add(e.name)
        votes = Counter(e.screen for e in found.values())
        if votes:
            name, n = votes.most_common(1)[0]
            target = old.screen(name)
            if target is not None and target.name not in {x.name for x in screen_of.values()}:
                screen_of[s.group.index] = target
        for d in s.elements:
            if d.role != "child" or d.list_key not in found:
                continue
            parent = found[d.list_key]
            kids = [e for e in old.children_of(parent.name) if e.name not in used]
            e = matcher.match(s, d, kids)
            if e is not None:
                found[d.key] = e
                used.add(e.name)
        # only elements of the screen it maps to keep an old name: the rest are new here
        target = screen_of.get(s.group.index)
        matches[s.group.index] = {k: e for k, e in found.items() if target is not None and e.screen == target.name}
        if target is not None:
            _match_by_labels(s, target, old, matches[s.group.index], used)

    # names: generated -> kept
    names: dict[str, str] = {}
    screen_namer = Namer(s.name for s in old.screens)
    for s in result.screens:
        target = screen_of.get(s.group.index)
        names[s.name] = target.name if target is not None else screen_namer.unique(s.name)
    for s in result.screens:
        target = screen_of.get(s.group.index)
        taken = Namer(e.local_name for e in target.elements) if target is not None else Namer()
        for d in s.elements:
            e = matches[s.group.index].get(d.key)
            if e is not None:
                names[d.name] = e.name
            else:
                local = d.name.split("__", 1)[1]
                names[d.name] = f"{names[s.name]}__{taken.unique(local)}"

    generated = result.data["screens"]
    out_screens: dict[str, Any] = {}
    merged_old: set[str] = set()
    for screen in old.screens:
        source = next((s for s in result.screens if screen_of.get(s.group.index) is screen), None)
        if source is None:
            out_screens[screen.name] = screen_to_data(screen, dialect)
            report.unseen_screens.append(screen.name)
            report.unseen_elements += [e.name for e in screen.elements]
            continue
        merged_old.add(screen.name)
        report.kept_screens.append(screen.name)
        data = screen_to_data(screen, dialect)
        gen_screen = generated[source.name]
        if not matcher.signature_holds(source, screen):
            data["signature"] = gen_screen["signature"]
            report.signatures_replaced.append(screen.name)
        by_old = {e.name: d for d in source.elements if (e := matches[source.group.index].get(d.key)) is not None}
        elements: dict[str, Any] = {}
        for e in screen.elements:
            draft = by_old.get(e.name)
            if draft is None:
                elements[e.name] = element_to_data(e, dialect)
                report.unseen_elements.append(e.name)
                continue
            elements[e.name] = _merge_element(e, draft, gen_screen["elements"][draft.name], matcher, source,
                                              names, dialect, report)
            report.kept_elements += 1
        for d in source.elements:
            if d.key in matches[source.group.index]:
                continue
            elements[names[d.name]] = _renamed(gen_screen["elements"][d.name], names)
            report.new_elements.append(names[d.name])
        data["elements"] = elements
        out_screens[screen.name] = data
    for s in result.screens:
        if s.group.index in screen_of:
            continue
        data = dict(generated[s.name])
        data["elements"] = {names[d.name]: _renamed(generated[s.name]["elements"][d.name], names)
                            for d in s.elements}
        out_screens[names[s.name]] = data
        report.new_screens.append(names[s.name])
    app: dict[str, Any] = {"package": old.app.package, "name": old.app.name}
    if old.app.version:
        app["version"] = old.app.version
    app["start_screen"] = old.app.start_screen if old.screen(old.app.start_screen) is not None else names.get(
        result.data["app"]["start_screen"], result.data["app"]["start_screen"])
    app["dialect"] = dialect.value
    out: dict[str, Any] = {"format": 1, "app": app}
    if old.notes:
        out["notes"] = old.notes
    out["screens"] = out_screens
    if old.watchers:  # written by hand, naming elements that keep their names: kept as they are
        out["watchers"] = {w.name: watcher_to_data(w) for w in old.watchers}
    return out, report


def _renamed(item: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    out = dict(item)
    for key in ("leads_to", "item_of"):
        if key in out:
            out[key] = names.get(out[key], out[key])
    if "effect" in out:
        out["effect"] = _rename_text(out["effect"], names)
    if "paths" in out:
        out["paths"] = [FlowList(_rename_step(step, names) for step in path) for path in out["paths"]]
    return out


def _merge_element(e: Element, d: ElementDraft, generated: dict[str, Any], matcher: _Matcher,
                   screen: ScreenDraft, names: dict[str, str], dialect: Dialect,
                   report: MergeReport) -> dict[str, Any]:
    data = element_to_data(e, dialect)
    new = _renamed(generated, names)
    kept: list[Any] = []
    seen_xpaths: set[str] = set()
    for ident in e.identifiers:
        if matcher.consistent(screen, d, ident):
            kept.append(identifier_to_data(ident, dialect))
            seen_xpaths.add(ident.xpath)
        else:
            report.dropped_identifiers.append(f"{e.name}: {ident.xpath}")
    for xpath in new["identifiers"]:
        if xpath not in seen_xpaths:
            kept.append(identifier_to_data(Identifier(xpath, Dialect.UIAUTOMATOR), dialect))
    data["identifiers"] = kept or data["identifiers"]
    if new.get("options"):
        data["options"] = list(dict.fromkeys([*data.get("options", []), *new["options"]]))
    for key in ("effect", "leads_to"):
        if key not in data and key in new:
            data[key] = new[key]
    if new.get("sensitive"):
        data["sensitive"] = True
    if new.get("paths"):
        old_paths = [list(p) for p in data.get("paths", [])]
        extra = [list(p) for p in new["paths"] if list(p) not in old_paths]
        data["paths"] = [FlowList(p) for p in old_paths + extra]
    return data


__all__ = ["MergeReport", "merge"]
