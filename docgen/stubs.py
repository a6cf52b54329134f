"""Generate a typed Python module of page objects from an app document.

The module defines one class per screen (a property per element), one class per list item type
(a property per child element) and an app class (a property per screen), all built on
``tapir.docgen.pages``. Every element property is typed by its kind (``Button``, ``Input``,
``ElementList[SongsScreenSongListItem]``, ...) and documented from the document, so editors
complete it and ``mypy --strict`` rejects unknown elements and actions a kind does not allow.
The output depends only on the document (no paths, no dates), so it is stable under version control.
"""

from __future__ import annotations

import keyword
import re
import textwrap
from pathlib import Path

from tapir.docgen import pages
from tapir.docgen.model import AppDocument, Element, Screen
from tapir.dsl.api import Kind

_WIDTH = 100


def class_name(*parts: str) -> str:
    """``songs_screen``, ``song_list`` -> ``SongsScreenSongList`` (always a valid identifier)."""
    words = [w for p in parts for w in re.split(r"[^A-Za-z0-9]+", p) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "X"
    return "_" + name if name[0].isdigit() else name


def attribute_name(local: str, reserved: set[str]) -> str:
    """A Python attribute for an element's local name; clashes get a trailing ``_``."""
    name = local if local.isidentifier() else re.sub(r"\W", "_", local)
    if name[:1].isdigit():
        name = "_" + name
    while keyword.iskeyword(name) or name in reserved:
        name += "_"
    return name


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("__")}


_SCREEN_RESERVED = _public(pages.Screen) | {"_runtime"}
_APP_RESERVED = _public(pages.App) | {"_runtime"}


def _docstring(text: str, indent: str) -> list[str]:
    """A triple-quoted docstring, wrapped, with quotes and backslashes made safe."""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip() or "(no description)"
    if text.endswith('"'):
        text += " "
    paragraphs = [p for p in text.split("\n\n")]
    lines: list[str] = []
    for i, para in enumerate(paragraphs):
        if i:
            lines.append("")
        wrapped = textwrap.wrap(" ".join(para.split()), width=_WIDTH - len(indent)) or [""]
        lines.extend(wrapped)
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    out = [f'{indent}"""{lines[0]}']
    out += [f"{indent}{line}" if line else "" for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


def _element_doc(e: Element) -> str:
    parts = [e.description or "(no description)"]
    details = [f"Kind: {e.kind.value}. Script name: ${e.name}."]
    if e.effect:
        details.append(f"Effect: {e.effect}")
    if e.leads_to:
        details.append(f"Leads to: {e.leads_to}.")
    if e.options:
        details.append("Options: " + ", ".join(repr(o) for o in e.options) + ".")
    parts.append(" ".join(details))
    return "\n\n".join(parts)


class _Names:
    """Class names for screens and item types, unique within the module."""

    def __init__(self, doc: AppDocument) -> None:
        taken = {n for n in dir(pages) if not n.startswith("_")} | {"ElementHandle", "annotations"}
        self.app = self._unique(class_name(doc.app.name) + "App", taken)
        self.screens = {s.name: self._unique(class_name(s.name) + "Page", taken) for s in doc.screens}
        self.items = {
            e.name: self._unique(class_name(e.name) + "Item", taken) for e in doc.elements if e.is_list
        }

    @staticmethod
    def _unique(name: str, taken: set[str]) -> str:
        out, n = name, 2
        while out in taken:
            out, n = f"{name}{n}", n + 1
        taken.add(out)
        return out


def _type_of(e: Element, names: _Names) -> str:
    if e.is_list:
        return f"ElementList[{names.items[e.name]}]"
    return pages.KIND_CLASSES[e.kind].__name__


def _construct(e: Element, names: _Names, handle: str) -> str:
    if e.is_list:
        return f"ElementList(self._runtime, {handle}, {names.items[e.name]})"
    return f"{pages.KIND_CLASSES[e.kind].__name__}(self._runtime, {handle})"


def generate_stubs(doc: AppDocument, source_name: str | None = None) -> str:
    """The page-object module for ``doc`` as Python source."""
    return _Generator(doc).module(source_name)


class _Generator:
    def __init__(self, doc: AppDocument) -> None:
        self.doc = doc
        self.names = _Names(doc)
        self.used: set[str] = {"App", "PageRuntime", "Screen"}

    def prop(self, attr: str, e_or_type: Element | str, doc_text: str, expr: str) -> list[str]:
        type_ = e_or_type if isinstance(e_or_type, str) else self.type_of(e_or_type)
        return [
            "    @property",
            f"    def {attr}(self) -> {type_}:",
            *_docstring(doc_text, " " * 8),
            f"        return {expr}",
            "",
        ]

    def type_of(self, e: Element) -> str:
        if e.is_list:
            self.used.add("ElementList")
            return f"ElementList[{self.names.items[e.name]}]"
        cls = pages.KIND_CLASSES[e.kind].__name__
        self.used.add(cls)
        return cls

    def construct(self, e: Element, handle: str) -> str:
        if e.is_list:
            return f"ElementList(self._runtime, {handle}, {self.names.items[e.name]})"
        return f"{pages.KIND_CLASSES[e.kind].__name__}(self._runtime, {handle})"

    def item_class(self, lst: Element) -> list[str]:
        base = pages.KIND_CLASSES[lst.item_kind if lst.item_kind != Kind.LIST else Kind.OTHER]
        self.used.add(base.__name__)
        out = ["", "", f"class {self.names.items[lst.name]}({base.__name__}):"]
        out += _docstring(f"An item of ${lst.name}: {lst.description}", "    ")
        out.append("")
        reserved = _public(base) | {"_runtime", "_handle", "_target", "_item"}
        children = self.doc.children_of(lst.name)
        for child in children:
            attr = attribute_name(child.local_name, reserved)
            reserved.add(attr)
            out += self.prop(attr, child, _element_doc(child),
                             self.construct(child, f"self._handle.child({child.name!r})"))
        if not children:
            out += ["    pass", ""]
        out.pop()
        return out

    def screen_class(self, screen: Screen) -> list[str]:
        out = ["", "", f"class {self.names.screens[screen.name]}(Screen):"]
        out += _docstring(screen.description or screen.name, "    ")
        out.append("")
        reserved = set(_SCREEN_RESERVED)
        top = [e for e in screen.elements if e.item_of is None]
        for e in top:
            attr = attribute_name(e.local_name, reserved)
            reserved.add(attr)
            out += self.prop(attr, e, _element_doc(e), self.construct(e, f"ElementHandle({e.name!r})"))
        if not top:
            out += ["    pass", ""]
        out.pop()
        return out

    def app_class(self) -> list[str]:
        doc, names = self.doc, self.names
        out = ["", "", f"class {names.app}(App):"]
        text = f"{doc.app.name} ({doc.app.package}); the app starts on {doc.app.start_screen}."
        if doc.notes:
            text += "\n\n" + doc.notes
        out += _docstring(text, "    ")
        out += ["", f"    package = {doc.app.package!r}", ""]
        reserved = set(_APP_RESERVED)
        for screen in doc.screens:
            attr = attribute_name(screen.name, reserved)
            reserved.add(attr)
            cls = names.screens[screen.name]
            out += self.prop(attr, cls, screen.description or screen.name, f"{cls}(self._runtime)")
        out.pop()
        return out

    def module(self, source_name: str | None) -> str:
        doc, names = self.doc, self.names
        body: list[str] = []
        for screen in doc.screens:
            for lst in (e for e in screen.elements if e.is_list):
                body += self.item_class(lst)
            body += self.screen_class(screen)
        body += self.app_class()
        body += ["", "", f"def connect(runtime: PageRuntime) -> {names.app}:"]
        body += _docstring("The app's page objects on ``runtime``.", "    ")
        body.append(f"    return {names.app}(runtime)")
        exported = ["connect", names.app, *names.screens.values(), *names.items.values()]
        body += ["", "", "__all__ = [", *(f"    {n!r}," for n in exported), "]", ""]
        header = [
            f"# Generated by `tapir compile` from {source_name or 'an app document'}; do not edit.",
            *_docstring(
                f"Typed page objects for {doc.app.name} ({doc.app.package}).\n\n"
                f"Build the app object on a runtime and use it as a script would: "
                f"``app = connect(runtime)``, then ``app.{doc.app.start_screen}.<element>.tap()``.",
                "",
            ),
            "",
            "from __future__ import annotations",
            "",
            "from tapir.docgen.pages import " + ", ".join(sorted(self.used)),
        ]
        if any(True for _ in doc.elements):
            header.append("from tapir.dsl.values import ElementHandle")
        return "\n".join(header + body)


def write_stubs(doc: AppDocument, path: str | Path, source_name: str | None = None) -> Path:
    out = Path(path)
    out.write_text(generate_stubs(doc, source_name), encoding="utf-8")
    return out
