"""Generate a typed Python module of page objects from an app document and the registry.

The module defines one class per element kind the document uses (``Button``, ``Input``,
``ElementList``...: exactly the registry's methods legal on that kind, typed from their
signatures, each calling the registry's implementation), one class per screen (a property per
element), one class per list item type (a property per child element) and an app class (a
property per screen, and the registry's API functions), all built on ``tapir.docgen.pages``.
Every element property is typed by its kind and documented from the document, so editors complete
it and ``mypy --strict`` rejects unknown elements and actions a kind does not allow. The output
depends only on the document and the registry (no paths, no dates), so it is stable under
version control.
"""

from __future__ import annotations

import keyword
import re
import textwrap

from tapir.core.document import AppDocument, Element, Screen
from tapir.docgen import pages
from tapir.dsl.registry import REGISTRY, Entry, Namespace, Param
from tapir.dsl.types import ALL_KINDS, ITEM, LIST_KINDS, NONE, Kind, annotation, parse_type

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

#: The class each element kind gets in a generated module.
KIND_CLASS_NAMES: dict[Kind, str] = {
    Kind.BUTTON: "Button", Kind.INPUT: "Input", Kind.CHECKBOX: "Checkbox", Kind.SWITCH: "Switch", Kind.TEXT: "Text",
    Kind.IMAGE: "Image", Kind.LIST: "ElementList", Kind.SCROLLER: "Scroller", Kind.TAB: "Tab", Kind.OTHER: "Element",
}
_KIND_DOCS: dict[Kind, str] = {
    Kind.BUTTON: "A button.", Kind.INPUT: "A text field.", Kind.CHECKBOX: "A checkbox.", Kind.SWITCH: "A switch.",
    Kind.TEXT: "A text.", Kind.IMAGE: "An image.", Kind.LIST: "A list element: index it, iterate it, match an item.",
    Kind.SCROLLER: "A scrollable area.", Kind.TAB: "A tab.", Kind.OTHER: "An element of any kind.",
}


def element_methods(kind: Kind) -> list[Entry]:
    """The registry's element methods a page object of ``kind`` has."""
    return [e for e in REGISTRY.methods_for(kind) if e.page_object]


def app_functions() -> list[Entry]:
    """The registry's API functions the app object has."""
    return [e for e in REGISTRY.entries(Namespace.GLOBAL) if e.page_object]


def _choice_alias(entry: Entry, p: Param) -> str:
    """The module-level name of a parameter's closed set of values: ``ScrollDirection``."""
    return class_name(entry.name, p.name)


def _param_annotation(entry: Entry, p: Param) -> str:
    text = _choice_alias(entry, p) if p.choices else annotation(p.type)
    if p.default == "None" and NONE not in parse_type(p.type):
        text += " | None"
    return text


def _method(entry: Entry, call: str) -> list[str]:
    """A page-object method for a registry entry; ``call`` is the base-class call to make."""
    params = ["self"] + [f"{p.name}: {_param_annotation(entry, p)}" + (f" = {p.default}" if p.default else "")
                         for p in entry.params]
    returns = "ItemT" if entry.returns == ITEM else annotation(entry.returns, result=True)
    doc = entry.doc + "".join(f"\n\n{p.name}: {p.doc}" for p in entry.params if p.doc)
    args = ", ".join(f"{p.name}={p.name}" for p in entry.params)
    invoke = f"self.{call}({entry.name!r}{', ' + args if args else ''})"
    out = [f"    def {entry.name}({', '.join(params)}) -> {returns}:", *_docstring(doc, " " * 8)]
    if entry.returns == NONE:
        out.append(f"        {invoke}")
    elif entry.returns == ITEM:
        out.append(f"        return self._item({invoke})")
    else:
        out += [f"        result: {returns} = {invoke}", "        return result"]
    return out + [""]


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
        taken = {n for n in dir(pages) if not n.startswith("_")} | set(KIND_CLASS_NAMES.values()) | {
            "ElementHandle", "annotations", "Any", "Kind", "Literal", "Mapping", "TypeVar", "ItemT", "pages"}
        taken |= {_choice_alias(e, p) for e in REGISTRY.entries(Namespace.ELEMENT) for p in e.params if p.choices}
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


def generate_stubs(doc: AppDocument, source_name: str | None = None) -> str:
    """The page-object module for ``doc`` as Python source."""
    return _Generator(doc).module(source_name)


class _Generator:
    def __init__(self, doc: AppDocument) -> None:
        self.doc = doc
        self.names = _Names(doc)
        self.used: set[str] = {"App", "PageRuntime", "Screen"}
        self.typing: set[str] = set()
        #: A parameter takes a ``secret()`` (``set_text``): the module imports ``Secret``.
        self.secrets = False
        #: The element kinds the module needs a class for.
        self.kinds: set[Kind] = set()
        #: Type aliases for closed sets of values (``ScrollDirection = Literal[...]``), by name.
        self.aliases: dict[str, str] = {}

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
        self.kinds.add(e.kind)
        if e.is_list:
            return f"ElementList[{self.names.items[e.name]}]"
        return KIND_CLASS_NAMES[e.kind]

    def construct(self, e: Element, handle: str) -> str:
        if e.is_list:
            return f"ElementList(self._runtime, {handle}, {self.names.items[e.name]})"
        return f"{KIND_CLASS_NAMES[e.kind]}(self._runtime, {handle})"

    def kind_class(self, kind: Kind) -> list[str]:
        """The class of one element kind: the registry's methods legal on it (those legal on every
        kind are on ``Element``, the base of the others)."""
        name = KIND_CLASS_NAMES[kind]
        if kind == Kind.OTHER:
            out = ["", "", "class Element(pages.Element):"]
            methods = [e for e in element_methods(kind) if e.kinds == ALL_KINDS]
        else:
            base = "Element, pages.ElementList[ItemT]" if kind in LIST_KINDS else "Element"
            out = ["", "", f"class {name}({base}):"]
            methods = [e for e in element_methods(kind) if e.kinds != ALL_KINDS]
        out += _docstring(_KIND_DOCS[kind], "    ")
        out += ["", f"    kind = Kind.{kind.name}", ""]
        for entry in methods:
            out += _method(entry, "_call")
            self.note_types(entry)
        out.pop()
        return out

    def note_types(self, entry: Entry) -> None:
        for p in entry.params:
            if p.choices:
                self.typing.add("Literal")
                self.aliases[_choice_alias(entry, p)] = "Literal[" + ", ".join(repr(c) for c in p.choices) + "]"
            if "Mapping" in annotation(p.type):
                self.typing.add("Mapping")
            if "Any" in annotation(p.type):
                self.typing.add("Any")
            if "Secret" in annotation(p.type):
                self.secrets = True
        if "Any" in annotation(entry.returns, result=True):
            self.typing.add("Any")

    def item_class(self, lst: Element) -> list[str]:
        kind = lst.item_kind if lst.item_kind != Kind.LIST else Kind.OTHER
        self.kinds.add(kind)
        base = KIND_CLASS_NAMES[kind]
        out = ["", "", f"class {self.names.items[lst.name]}({base}):"]
        out += _docstring(f"An item of ${lst.name}: {lst.description}", "    ")
        out.append("")
        reserved = (_public(pages.Element) | {e.name for e in element_methods(kind)}
                    | {"_runtime", "_handle", "_target", "_item", "_call"})
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
        for entry in app_functions():
            out += _method(entry, "_call")
            self.note_types(entry)
        reserved = _public(pages.App) | {"_runtime", "_call"} | {e.name for e in app_functions()}
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
        kinds: list[str] = ["", "", "# Generated modules are skipped when page objects look for their caller's line.",
                            "_TAPIR_PAGES = True"]
        if Kind.LIST in self.kinds:
            kinds += ["", "ItemT = TypeVar(\"ItemT\", bound=pages.Element)"]
            self.typing.add("TypeVar")
        classes = self.kind_class(Kind.OTHER)
        for kind in Kind:
            if kind in self.kinds and kind != Kind.OTHER:
                classes += self.kind_class(kind)
        for alias, literal in sorted(self.aliases.items()):
            kinds += ["", f"{alias} = {literal}"]
        body = kinds + classes + body
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
        ]
        if "Mapping" in self.typing:
            header.append("from collections.abc import Mapping")
        typing_names = sorted(self.typing - {"Mapping"})
        if typing_names:
            header.append("from typing import " + ", ".join(typing_names))
        if "Mapping" in self.typing or typing_names:
            header.append("")
        header.append("from tapir.docgen import pages")
        header.append("from tapir.docgen.pages import " + ", ".join(sorted(self.used)))
        if self.secrets:
            header.append("from tapir.core.secrets import Secret")
        header.append("from tapir.dsl.types import Kind")
        if any(True for _ in doc.elements):
            header.append("from tapir.dsl.values import ElementHandle")
        return "\n".join(header + body)


