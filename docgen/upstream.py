"""Import AutoDroid-V2 app documents into the Tapir format.

Upstream documents are JSON ``{screen: {skeleton, elements: {name: {type, options, name,
description, effect?, xpath[], paths[[step...]], id, state_tag, element}}}}`` with names as
``screen__element`` or, before upstream's own formatting pass, ``screen:element``. Their XPaths
target the HTML-ised tree, so every identifier is imported in the ``html`` dialect. The free-form
``type`` is mapped onto ``Kind``; whatever has no equivalent becomes ``other`` and is reported.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lxml import etree
from tapir.docgen.loader import LoadResult, loads_document, parse_step
from tapir.docgen.model import Step
from tapir.docgen.writer import FlowList, to_yaml
from tapir.dsl.api import Kind
from tapir.dsl.diagnostics import Diagnostic
from tapir.dsl.errors import DocumentError

# Upstream ``type`` values (written by GPT-4o, so free-form) and what they mean here.
TYPE_TO_KIND: dict[str, Kind] = {
    "button": Kind.BUTTON,
    "input": Kind.INPUT,
    "edittext": Kind.INPUT,
    "checkbox": Kind.CHECKBOX,
    "radiobutton": Kind.CHECKBOX,
    "switch": Kind.SWITCH,
    "toggle": Kind.SWITCH,
    "p": Kind.TEXT,
    "text": Kind.TEXT,
    "textview": Kind.TEXT,
    "image": Kind.IMAGE,
    "imageview": Kind.IMAGE,
    "element_list": Kind.LIST,
    "list": Kind.LIST,
    "recyclerview": Kind.LIST,
    "listview": Kind.LIST,
    "scroller": Kind.SCROLLER,
    "scrollbar": Kind.SCROLLER,
    "scrollview": Kind.SCROLLER,
    "tab": Kind.TAB,
}

# Upstream fields with no place in the Tapir format: the exploration node id and step tag
# (meaningless outside upstream's recordings) and the node's HTML snapshot.
DROPPED_FIELDS = ("id", "state_tag", "element")

_COLON_NAME = re.compile(r"\b([A-Za-z0-9_]+):([A-Za-z0-9_]+)\b")
_RESOURCE_ID = re.compile(r'resource_id="([^"]+)"')
_BAD_ALT = re.compile(r"\band alt=")
# A double-quoted XPath literal whose value holds double quotes itself (upstream does not escape):
# the value runs to the quote that is followed by the end of the predicate or a boolean operator.
_QUOTED_VALUE = re.compile(r'(@[\w-]+|text\(\))="(.*?)"(?=\s*(?:\]| and | or ))')


@dataclass(frozen=True)
class ImportReport:
    """What an import did, for the user and the tests."""

    source: str
    name_form: str
    counts: dict[str, int]
    kinds: dict[str, int]
    #: Upstream types with no Tapir kind (imported as ``other``), with their counts.
    unmapped_types: dict[str, int]
    #: Dropped path steps and paths, by reason.
    dropped: dict[str, int]
    renamed: dict[str, str]
    #: Screens whose skeleton has no resource id of its own: only the skeleton can recognise them.
    screens_without_distinct_ids: tuple[str, ...]
    problems: tuple[Diagnostic, ...] = field(default=())
    notes: tuple[str, ...] = ()

    def render(self) -> str:
        c = self.counts
        lines = [
            f"imported {self.source}: {c['screens']} screens, {c['elements']} elements, "
            f"{c['identifiers']} identifiers, {c['paths']} dependency paths ({self.name_form} names)",
            "kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())),
        ]
        if self.unmapped_types:
            lines.append("not mapped (imported as 'other'): "
                         + ", ".join(f"type {t!r} x{n}" for t, n in sorted(self.unmapped_types.items())))
        for reason, n in sorted(self.dropped.items()):
            lines.append(f"dropped: {n} {reason}")
        if self.renamed:
            lines.append(f"renamed {len(self.renamed)} names to fit the language: "
                         + ", ".join(f"{a} -> {b}" for a, b in sorted(self.renamed.items())[:5]))
        if self.screens_without_distinct_ids:
            lines.append("screens recognised by skeleton only (no resource id of their own): "
                         + ", ".join(self.screens_without_distinct_ids))
        lines.extend(self.notes)
        warnings = [p for p in self.problems if p.severity == "warning"]
        if warnings:
            by_code = Counter(p.code for p in warnings)
            lines.append("warnings on the result: " + ", ".join(f"{code} x{n}" for code, n in sorted(by_code.items())))
        return "\n".join(lines)


def map_type(upstream_type: str | None) -> Kind | None:
    """The kind of an upstream ``type``; None when nothing fits."""
    if not upstream_type:
        return None
    t = upstream_type.strip().lower()
    if t in TYPE_TO_KIND:
        return TYPE_TO_KIND[t]
    # Raw Android class names sometimes appear instead of a category.
    short = t.rsplit(".", 1)[-1]
    for key in ("edittext", "radiobutton", "checkbox", "switch", "button", "recyclerview", "listview",
                "scrollview", "imageview", "textview"):
        if key in short:
            return TYPE_TO_KIND[key]
    return None


def default_app_name(path: str | Path) -> str:
    """``.../applauncher/doc.json`` -> applauncher; ``.../clock_doc.json`` -> clock."""
    p = Path(path)
    stem = p.stem
    if stem in ("doc", "document", "doc_colon_names"):
        return p.parent.name or stem
    return re.sub(r"_doc$", "", stem)


def import_file(
    path: str | Path, *, package: str | None = None, app_name: str | None = None
) -> tuple[str, ImportReport]:
    """Convert the upstream JSON at ``path``; returns the YAML text and the report."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}", filename=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text: {exc}", filename=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise DocumentError("not JSON", [Diagnostic.at_line(exc.msg, exc.lineno, exc.colno, code="syntax")],
                            filename=str(path)) from exc
    name = app_name or default_app_name(path)
    return import_data(data, source=str(path), package=package, app_name=name)


# The value types the converter relies on, per field (None is allowed everywhere: upstream leaves
# fields empty). Checked up front so a malformed file is reported, not crashed on.
_SCREEN_FIELDS: dict[str, type] = {"skeleton": str}
_ELEMENT_FIELDS: dict[str, type] = {"type": str, "description": str, "effect": str, "xpath": list,
                                    "options": list, "paths": list}


def _wrong_shape(data: dict[str, Any]) -> str | None:
    """What in ``data`` does not have upstream's shape (screen and element names), or None."""
    for sname, screen in data.items():
        for key, want in _SCREEN_FIELDS.items():
            if screen.get(key) is not None and not isinstance(screen[key], want):
                return f"screen {sname!r}: {key!r} must be a {want.__name__}"
        for ename, element in screen["elements"].items():
            if not isinstance(element, dict):
                return f"element {ename!r} must be an object"
            for key, want in _ELEMENT_FIELDS.items():
                if element.get(key) is not None and not isinstance(element[key], want):
                    return f"element {ename!r}: {key!r} must be a {want.__name__}"
    return None


def import_data(
    data: Any, *, source: str, package: str | None = None, app_name: str = "app"
) -> tuple[str, ImportReport]:
    if not isinstance(data, dict) or not data or not all(
        isinstance(s, dict) and isinstance(s.get("elements"), dict) for s in data.values()
    ):
        raise DocumentError("not an AutoDroid-V2 document (expected {screen: {skeleton, elements}})",
                            filename=source)
    wrong = _wrong_shape(data)
    if wrong is not None:
        raise DocumentError(f"not an AutoDroid-V2 document: {wrong}", filename=source)
    conv = _Converter(data)
    doc = conv.convert(package or f"unknown.{_ident(app_name)}", app_name)
    header = (
        f"Imported from {Path(source).name} (AutoDroid-V2) by `tapir doc import`.\n"
        "XPaths target AutoDroid-V2's HTML-ised view tree (dialect: html)."
    )
    if package is None:
        header += "\nThe package name is a placeholder: pass --package to set the real one."
    text = to_yaml(doc, header)
    result: LoadResult = loads_document(text, source=source)
    if result.document is None:
        # The lines are those of the converted YAML, not of ``source``: drop them rather than point
        # at unrelated lines of the JSON (the messages name the screen or element).
        problems = [replace(p, span=None) for p in result.errors]
        raise DocumentError("the imported document does not validate", problems, filename=source)
    notes = list(conv.notes)
    if package is None:
        notes.append(f"package unknown: written as {doc['app']['package']!r} (use --package)")
    report = ImportReport(
        source=source,
        name_form=conv.name_form,
        counts=result.document.counts(),
        kinds=dict(conv.kinds),
        unmapped_types=dict(conv.unmapped),
        dropped=dict(conv.dropped),
        renamed=dict(conv.renamed),
        screens_without_distinct_ids=tuple(conv.no_distinct),
        problems=result.problems,
        notes=tuple(notes),
    )
    return text, report


def _ident(text: str) -> str:
    out = re.sub(r"\W", "_", text, flags=re.ASCII)
    return "_" + out if out[:1].isdigit() else out


class _Converter:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.kinds: Counter[str] = Counter()
        self.unmapped: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self.dropped_or_fixed: Counter[str] = Counter()
        self.renamed: dict[str, str] = {}
        self.no_distinct: list[str] = []
        self.notes: list[str] = []
        names = [n for s in data.values() for n in s["elements"]]
        self.name_form = "screen:element" if any(":" in n and "__" not in n for n in names) else "screen__element"

    def name(self, raw: str) -> str:
        fixed = _COLON_NAME.sub(r"\1__\2", raw) if ":" in raw else raw
        clean = _ident(fixed)
        if clean != fixed:
            self.renamed[raw] = clean
        return clean

    def convert(self, package: str, app_name: str) -> dict[str, Any]:
        screens = {self.name(s): s for s in self.data}
        elements = {self.name(n) for s in self.data.values() for n in s["elements"]}
        distinct = self._distinct_ids()
        out_screens: dict[str, Any] = {}
        bad_alt = 0
        for raw_screen, screen in self.data.items():
            sname = self.name(raw_screen)
            sig: dict[str, Any] = {}
            ids = distinct.get(raw_screen, [])[:2]
            if ids:
                sig["all"] = [f"//*[@resource_id='{i}']" for i in ids]
            else:
                self.no_distinct.append(sname)
            if screen.get("skeleton"):
                sig["skeleton"] = screen["skeleton"].strip()
            out_elements: dict[str, Any] = {}
            for raw_name, e in screen["elements"].items():
                ename = self.name(raw_name)
                kind = map_type(e.get("type"))
                if kind is None:
                    self.unmapped[str(e.get("type"))] += 1
                    kind = Kind.OTHER
                self.kinds[kind.value] += 1
                item: dict[str, Any] = {"kind": kind.value, "description": (e.get("description") or "").strip()}
                repaired = (self._xpath(x, ename) for x in (e.get("xpath") or []) if isinstance(x, str))
                xpaths = [x for x in repaired if x is not None]
                bad_alt += sum(1 for x in xpaths if _BAD_ALT.search(x))
                item["identifiers"] = xpaths
                if e.get("options"):
                    item["options"] = [str(o) for o in e["options"]]
                effect = (e.get("effect") or "").strip()
                if effect:
                    item["effect"] = effect
                    target = self._screen_in(effect, screens)
                    if target:
                        item["leads_to"] = target
                paths = self._paths(e.get("paths") or [], elements, screens)
                if paths:
                    item["paths"] = paths
                out_elements[ename] = item
            out_screens[sname] = {"description": _describe(sname), "signature": sig, "elements": out_elements}
        for what, n in self.dropped_or_fixed.items():
            self.notes.append(f"repaired {n} {what}")
        if bad_alt:
            self.notes.append(f"kept {bad_alt} XPaths with upstream's 'and alt=' bug (a child test, not @alt; "
                              "they never match, the next XPath in the queue is used)")
        app: dict[str, Any] = {"package": package, "name": app_name, "start_screen": self.name(next(iter(self.data))),
                               "dialect": "html"}
        return {"format": 1, "app": app, "screens": out_screens}

    def _paths(self, raw_paths: list[Any], elements: set[str], screens: dict[str, Any]) -> list[FlowList]:
        out: list[FlowList] = []
        seen: set[tuple[str, ...]] = set()
        for raw in raw_paths:
            if not isinstance(raw, list):
                self.dropped["malformed paths"] += 1
                continue
            steps: list[str] = []
            reason = None
            for text in raw:
                if not isinstance(text, str):
                    reason = "malformed paths"
                    break
                if text.startswith("open_app("):
                    # Upstream's own formatter drops these: the runtime launches the app anyway.
                    self.dropped["open_app steps (the runtime launches the app)"] += 1
                    continue
                fixed = _COLON_NAME.sub(r"\1__\2", text) if ":" in text.split("(", 1)[0] else text
                step = parse_step(fixed)
                if step is None:
                    reason = "paths with a malformed step"
                    break
                if step.target is not None:
                    target = self.name(step.target)
                    if target not in elements and target not in screens:
                        reason = "paths naming an unknown element (e.g. upstream's 'None.tap()')"
                        break
                    fixed = str(Step(target, step.action, step.args, match=step.match))
                steps.append(fixed)
            if reason is not None:
                self.dropped[reason] += 1
                continue
            key = tuple(steps)
            if key in seen:
                self.dropped["duplicate paths"] += 1
                continue
            seen.add(key)
            out.append(FlowList(steps))
        return out

    def _xpath(self, xpath: str, element: str) -> str | None:
        """The XPath, repaired when upstream left quotes unescaped; None if it stays malformed."""
        if _compiles(xpath):
            return xpath
        fixed = _QUOTED_VALUE.sub(lambda m: f"{m.group(1)}={xpath_literal(m.group(2))}", xpath)
        if _compiles(fixed):
            self.dropped_or_fixed["XPaths with unescaped quotes, re-quoted"] += 1
            return fixed
        self.dropped["malformed XPaths"] += 1
        return None

    def _screen_in(self, effect: str, screens: dict[str, Any]) -> str | None:
        """The first screen the effect text names ("tap to navigate to the alarm_screen, ...")."""
        best: tuple[int, str] | None = None
        for name in screens:
            m = re.search(rf"\b{re.escape(name)}\b", effect)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), name)
        return best[1] if best else None

    def _distinct_ids(self) -> dict[str, list[str]]:
        """Per screen, the resource ids of its skeleton that no other screen's skeleton has."""
        ids = {n: list(dict.fromkeys(_RESOURCE_ID.findall(s.get("skeleton") or ""))) for n, s in self.data.items()}
        out: dict[str, list[str]] = {}
        for name, own in ids.items():
            others = set().union(*(set(v) for k, v in ids.items() if k != name))
            out[name] = [i for i in own if i not in others]
        return out


def xpath_literal(value: str) -> str:
    """``value`` as an XPath 1.0 string literal (XPath has no escapes: concat() mixes quote kinds)."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ", \"'\", ".join(f"'{p}'" for p in parts) + ")"


def _compiles(xpath: str) -> bool:
    try:
        etree.XPath(xpath)
    except etree.XPathSyntaxError:
        return False
    return True


def _describe(screen: str) -> str:
    # Upstream keeps no screen description; the name is all there is ("sorting_dialog").
    return screen.replace("_", " ").capitalize() + "."
