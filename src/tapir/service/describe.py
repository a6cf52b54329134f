"""Markdown for what hovers, completion items and signature help show: elements, registry
entries, script functions.

    element_markdown(symbol, loaded)   # kind, description, effect, options, identifiers, how reached
    entry_markdown(entry)              # ```tapir signature``` + doc + parameters
"""

from __future__ import annotations

from tapir.dsl import ast as A
from tapir.dsl.registry import Entry, Namespace
from tapir.dsl.symbols import ElementSymbol, SymbolTable
from tapir.service.documents import LoadedDocument

__all__ = ["element_detail", "element_markdown", "entry_markdown", "function_signature", "screen_markdown"]

#: How many identifiers and dependency paths a hover lists before saying how many more there are.
_LIST_LIMIT = 4


def element_detail(sym: ElementSymbol) -> str:
    """One line: ``list of button · songs_screen``."""
    kind = sym.kind.value + (f" of {sym.item_kind.value}" if sym.item_kind is not None else "")
    where = f"child of ${sym.item_of}" if sym.item_of else sym.screen
    return f"{kind} · {where}"


def element_markdown(sym: ElementSymbol, loaded: LoadedDocument | None = None,
                     symbols: SymbolTable | None = None) -> str:
    """Everything a person wants to know of an element, from the document."""
    lines = [f"**${sym.name}** — {element_detail(sym)}", ""]
    if sym.description:
        lines += [sym.description, ""]
    facts: list[str] = []
    if sym.effect:
        facts.append(f"- **Effect:** {sym.effect}")
    if sym.leads_to:
        facts.append(f"- **Leads to:** `{sym.leads_to}`")
    if sym.options:
        facts.append("- **Options:** " + ", ".join(f"`{o}`" for o in sym.options))
    if sym.item_of:
        facts.append(f"- **Child of** `${sym.item_of}`: use it on an item, e.g. `item.get_text(${sym.name})`")
    if sym.children:
        facts.append("- **Item children:** " + ", ".join(f"`${c}`" for c in sym.children))
    element = loaded.document.element(sym.name) if loaded is not None and loaded.document is not None else None
    if element is not None:
        if element.identifiers:
            shown = element.identifiers[:_LIST_LIMIT]
            facts.append("- **Identifiers** (tried in order): " + ", ".join(f"`{i.xpath}`" for i in shown)
                         + (f" and {len(element.identifiers) - len(shown)} more"
                            if len(element.identifiers) > len(shown) else ""))
        if element.paths:
            shown_paths = element.paths[:_LIST_LIMIT]
            facts.append("- **Reached by:** " + "; ".join(" → ".join(f"`{step}`" for step in path) or "(on screen)"
                                                           for path in shown_paths)
                         + (f"; and {len(element.paths) - len(shown_paths)} more"
                            if len(element.paths) > len(shown_paths) else ""))
        if element.notes:
            facts.append(f"- **Notes:** {element.notes}")
    table = symbols or (loaded.symbols if loaded is not None else None)
    screen = table.screen(sym.screen) if table is not None else None
    if screen is not None and screen.description:
        facts.append(f"- **Screen** `{screen.name}`: {screen.description}")
    return "\n".join(lines + facts).strip()


def screen_markdown(name: str, symbols: SymbolTable) -> str:
    screen = symbols.screen(name)
    if screen is None:
        return f"**{name}**"
    return f"**screen {name}** — {len(screen.elements)} elements\n\n{screen.description}".strip()


def entry_markdown(entry: Entry) -> str:
    """A registry entry: its signature as code, its doc, its parameters and what it does."""
    lines = [f"```tapir\n{entry.signature()}\n```", "", entry.doc]
    documented = [p for p in entry.params if p.doc or p.choices]
    if documented:
        lines.append("")
        for p in documented:
            choices = (" (one of " + ", ".join(f"`{c!r}`" for c in p.choices) + ")") if p.choices else ""
            lines.append(f"- `{p.name}`: {p.doc}{choices}")
    notes = []
    if entry.namespace == Namespace.ELEMENT and len(entry.kinds) < 10:
        notes.append("only on " + ", ".join(sorted(k.value for k in entry.kinds)) + " elements")
    if entry.acts_on_device:
        notes.append("a UI action (counts against the action budget)")
    elif entry.needs_device:
        notes.append("reads the device")
    if entry.legacy_global:
        notes.append(f"also written `{entry.name}($element, ...)`")
    if notes:
        lines += ["", "*" + "; ".join(notes) + "*"]
    return "\n".join(lines).strip()


def function_signature(fn: A.FunctionDef) -> str:
    """``def name(a, b=...)`` as written (defaults shown as ``...`` when not literals)."""
    params = []
    for p in fn.params:
        if p.default is None:
            params.append(p.name)
        elif isinstance(p.default, A.Constant):
            params.append(f"{p.name}={p.default.value!r}")
        else:
            params.append(f"{p.name}=...")
    return f"def {fn.name}({', '.join(params)})"
