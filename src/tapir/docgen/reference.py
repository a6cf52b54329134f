"""A human reference of an app document: Markdown with the navigation graph as Mermaid text."""

from __future__ import annotations

from collections import defaultdict

from tapir.core.document import AppDocument, Element, Step
from tapir.core.watchers import DEFAULT_LIMIT

_MAX_LABELS = 3


def navigation_edges(doc: AppDocument) -> dict[tuple[str, str], set[str]]:
    """``(from_screen, to_screen) -> {labels}``, from ``leads_to`` and from dependency paths.

    In a path, each step is done on the screen of its target and the next step's target shows
    where it led; the last step leads to the element's own screen. Steps with no known screen
    (a global ``back()``) and steps that stay on their screen add no edge.
    """
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    screens = {s.name for s in doc.screens}

    def screen_of(step: Step) -> str | None:
        if step.target is None:
            return None
        if step.target in screens:
            return step.target
        e = doc.element(step.target)
        return e.screen if e is not None else None

    def label(step: Step) -> str:
        e = doc.element(step.target or "")
        if e is None:
            return step.action
        name = e.local_name if step.match is None else f"{e.local_name} {step.match}"
        return name if step.action == "tap" else f"{name}.{step.action}"

    for e in doc.elements:
        if e.leads_to and e.leads_to != e.screen:
            edges[(e.screen, e.leads_to)].add(e.local_name)
        for path in e.paths:
            for i, step in enumerate(path):
                nxt = path[i + 1] if i + 1 < len(path) else None
                src = screen_of(step)
                dst = e.screen if nxt is None else screen_of(nxt)
                if src and dst and src != dst:
                    edges[(src, dst)].add(label(step))
    return edges


def mermaid(doc: AppDocument) -> str:
    lines = ["flowchart LR"]
    for s in doc.screens:
        shape = f'(["{s.name}"])' if s.name == doc.app.start_screen else f'["{s.name}"]'
        lines.append(f"  s_{s.name}{shape}")
    for (src, dst), labels in sorted(navigation_edges(doc).items()):
        shown = sorted(labels)
        text = ", ".join(shown[:_MAX_LABELS]) + (f" +{len(shown) - _MAX_LABELS}" if len(shown) > _MAX_LABELS else "")
        lines.append(f"  s_{src} -->|{text}| s_{dst}")
    return "\n".join(lines)


def _cell(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _row(doc: AppDocument, e: Element) -> str:
    effect = e.effect or ""
    if e.leads_to and e.leads_to not in effect:
        effect = (effect + " " if effect else "") + f"→ {e.leads_to}"
    kind = e.kind.value
    if e.is_list:
        kind += f" of {e.item_kind.value}"
    name = f"`${e.name}`" if e.item_of is None else f"`${e.name}` (item child)"
    options = ", ".join(e.options)
    return f"| {name} | {kind} | {_cell(e.description)} | {_cell(effect)} | {_cell(options)} |"


def render_reference(doc: AppDocument) -> str:
    app = doc.app
    c = doc.counts()
    out = [f"# {app.name} (`{app.package}`)", ""]
    facts = [f"Start screen: `{app.start_screen}`"]
    if app.version:
        facts.append(f"version {app.version}")
    facts.append(f"{c['screens']} screens, {c['elements']} elements, {c['identifiers']} identifiers "
                 f"({app.dialect.value} dialect by default), {c['paths']} dependency paths")
    out += ["; ".join(facts) + ".", ""]
    if doc.notes:
        out += ["## Usage notes", "", doc.notes.strip(), ""]
    out += ["## Navigation", "", "```mermaid", mermaid(doc), "```", ""]
    out += ["## Screens", ""]
    for s in doc.screens:
        out += [f"### {s.name}", "", _cell(s.description) or "(no description)", ""]
        sig = s.signature
        how = []
        if sig.activity:
            how.append(f"activity `{sig.activity}`")
        how += [f"`{i.xpath}`" for i in sig.all_of]
        how += [f"not `{i.xpath}`" for i in sig.none_of]
        if sig.skeleton:
            how.append("its layout skeleton")
        if how:
            out += ["Recognised by " + ", ".join(how) + ".", ""]
        if s.notes:
            out += [f"> {_cell(s.notes)}", ""]
        if s.elements:
            out += ["| Element | Kind | Description | Effect | Options |", "|---|---|---|---|---|"]
            out += [_row(doc, e) for e in s.elements]
            out.append("")
        for e in s.elements:
            if e.is_list and doc.children_of(e.name):
                names = ", ".join(f"`${c.name}`" for c in doc.children_of(e.name))
                out += [f"Each item of `${e.name}` has {names}.", ""]
    if doc.watchers:
        out += ["## Watchers", "", "Interruptions the runtime dismisses when they are in a script's way:", ""]
        for w in doc.watchers:
            limit = f" (at most {w.limit} times a run)" if w.limit != DEFAULT_LIMIT else ""
            why = f". {_cell(w.description)}" if w.description else ""
            out.append(f"- `{w.name}`: {w.describe()}{limit}{why}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
