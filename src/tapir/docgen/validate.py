"""Cross-reference checks of a loaded app document.

The loader has already reported what is malformed in itself (types, unknown fields and kinds,
duplicate keys, unparsable path steps). This module checks what needs the whole document:
names, the start screen, lists and their child elements, ``leads_to``, dependency paths
against the API registry, and that every XPath compiles (with lxml, the engine the runtime uses).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from functools import lru_cache

from lxml import etree

from tapir.core.diagnostics import Diagnostic
from tapir.core.document import AppDocument, Dialect, Element, Identifier, Step, Watcher
from tapir.dsl.api import ELEMENT_METHODS, GLOBALS

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The API functions a dependency path may use: keys the navigator presses.
PATH_KEYS = ("back", "enter")

# Attributes that only exist in the other dialect: a strong hint of a mislabelled XPath.
#: ``add(line, message, code, severity="error")``
Add = Callable[..., None]

_FOREIGN_ATTRS = {
    Dialect.UIAUTOMATOR: ("@resource_id", "@alt"),
    Dialect.HTML: ("@resource-id", "@content-desc"),
}


def validate(doc: AppDocument) -> list[Diagnostic]:
    problems: list[Diagnostic] = []

    def add(line: int | None, message: str, code: str, severity: str = "error") -> None:
        problems.append(Diagnostic.at_line(message, line, severity=severity, code=code))

    screen_names = {s.name for s in doc.screens}
    if doc.app.start_screen not in screen_names:
        add(doc.app.line, f"app.start_screen {doc.app.start_screen!r} is not a screen of the document",
            "unknown-screen")

    seen: dict[str, Element] = {}
    for screen in doc.screens:
        if not NAME.match(screen.name) or "__" in screen.name:
            add(screen.line, f"screen name {screen.name!r} must be a name without '__' (letters, digits, _)",
                "bad-name")
        if screen.signature.is_empty:
            add(screen.line, f"screen {screen.name!r} has no signature (give activity, all or skeleton) "
                             "so the runtime cannot recognise it", "no-signature")
        for ident in screen.signature.all_of + screen.signature.none_of:
            _check_identifier(ident, f"screen {screen.name!r}", add)
        for e in screen.elements:
            if not NAME.match(e.name) or "__" not in e.name:
                add(e.line, f"element name {e.name!r} must have the form screen__element", "bad-name")
            elif e.screen != screen.name:
                add(e.line, f"element {e.name!r} is listed under screen {screen.name!r}; its name must start "
                            f"with '{screen.name}__'", "bad-name")
            if e.name in seen:
                add(e.line, f"duplicate element name {e.name!r} (first at line {seen[e.name].line})",
                    "duplicate-name")
            else:
                seen[e.name] = e

    for e in doc.elements:
        where = f"element {e.name!r}"
        if not e.identifiers:
            add(e.line, f"{where} has an empty identifier list", "empty-identifiers")
        for ident in e.identifiers:
            _check_identifier(ident, where, add)
        if e.item_of is not None:
            parent = seen.get(e.item_of)
            if parent is None:
                add(e.line, f"{where} is a child of {e.item_of!r}, which is not an element of the document",
                    "orphan-child")
            elif not parent.is_list:
                add(e.line, f"{where} is a child of {e.item_of!r}, which is a {parent.kind.value}, not a list",
                    "orphan-child")
            elif parent.screen != e.screen:
                add(e.line, f"{where} is a child of {e.item_of!r} on another screen", "orphan-child")
            if e.is_list:
                add(e.line, f"{where}: nested lists are not supported (a list cannot be a child element)",
                    "nested-list")
        if e.leads_to is not None and e.leads_to not in screen_names:
            add(e.line, f"{where}: leads_to names {e.leads_to!r}, which is not a screen", "unknown-screen")
        for path in e.paths:
            for step in path:
                _check_step(step, screen_names, seen, where, add)
    for w in doc.watchers:
        _check_watcher(w, seen, add)
    return problems


def _check_watcher(w: Watcher, elements: dict[str, Element], add: Add) -> None:
    where = f"watcher {w.name!r}"
    if not NAME.match(w.name):
        add(w.line, f"{where}: a watcher's name is letters, digits and '_'", "bad-name")
    for field_, name in (("tap", w.tap), ("when", w.when)):
        if name is None:
            continue
        el = elements.get(name.removeprefix("$"))
        if el is None:
            close = difflib.get_close_matches(name, list(elements), n=1)
            add(w.line, f"{where}: {field_} names {name!r}, which is not an element of the document"
                        + (f"; did you mean {close[0]!r}?" if close else ""), "unknown-name")
        elif el.item_of is not None or el.is_list:
            add(w.line, f"{where}: {field_} names {name!r}, a list or an element inside a list's items; a watcher "
                        "needs an element that shows once", "bad-watcher")


def _check_identifier(ident: Identifier, where: str, add: Add) -> None:
    error = _xpath_error(ident.xpath)
    if error is not None:
        add(ident.line, f"{where}: malformed XPath {ident.xpath!r}: {error}", "bad-xpath")
        return
    for attr in _FOREIGN_ATTRS[ident.dialect]:
        if attr in ident.xpath:
            other = Dialect.HTML if ident.dialect == Dialect.UIAUTOMATOR else Dialect.UIAUTOMATOR
            add(ident.line, f"{where}: XPath {ident.xpath!r} is marked {ident.dialect.value} but uses {attr}, "
                            f"an attribute of the {other.value} dialect", "dialect-mismatch", "warning")
            break


@lru_cache(maxsize=4096)
def _xpath_error(xpath: str) -> str | None:
    if not xpath.strip():
        return "empty"
    try:
        etree.XPath(xpath)
    except etree.XPathSyntaxError as exc:
        return str(exc) or "syntax error"
    return None


def _check_step(
    step: Step, screens: set[str], elements: dict[str, Element], where: str, add: Add
) -> None:
    if step.target is None:
        # of the API's functions only the keys move between screens (launch_app() and sleep() do not)
        entry = GLOBALS.get(step.action) if step.action in PATH_KEYS else None
        if entry is None:
            add(step.line, f"{where}: path step {step}: {step.action}() is not a global path step "
                           f"(known: {', '.join(f'{k}()' for k in PATH_KEYS)})", "bad-step")
        elif len(step.args) != len(entry.params):
            add(step.line, f"{where}: path step {step}: {step.action}() takes no arguments", "bad-step")
        return
    if step.target in screens and step.target not in elements:
        if step.action != "back" or step.args:
            add(step.line, f"{where}: path step {step}: on a screen only back() is possible", "bad-step")
        return
    target = elements.get(step.target)
    if target is None:
        add(step.line, f"{where}: path step {step} names {step.target!r}, which is neither an element nor a "
                       "screen of the document", "unknown-name")
        return
    entry = ELEMENT_METHODS.get(step.action)
    if entry is None or not entry.is_action:
        actions = ", ".join(n for n, e in ELEMENT_METHODS.items() if e.is_action)
        add(step.line, f"{where}: path step {step}: {step.action!r} is not an action (known: {actions})",
            "bad-step")
        return
    top = entry.max_args if entry.max_args is not None else len(step.args)
    if not entry.min_args <= len(step.args) <= top or (step.args and entry.params[0].type == "element"):
        add(step.line, f"{where}: path step {step}: wrong arguments for {entry.signature()}", "bad-step")
        return
    if step.match is not None and not target.is_list:
        add(step.line, f"{where}: path step {step}: match() needs a list, {target.name!r} is a {target.kind.value}",
            "bad-step")
        return
    if step.match is None and target.kind not in entry.kinds:
        add(step.line, f"{where}: path step {step}: {step.action}() is not possible on a {target.kind.value}",
            "kind-action", "warning")
