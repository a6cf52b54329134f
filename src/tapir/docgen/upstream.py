"""Import AutoDroid-V2 app documents into the Tapir format.

Upstream documents are JSON ``{screen: {skeleton, elements: {name: {type, options, name,
description, effect?, xpath[], paths[[step...]], id, state_tag, element}}}}`` with names as
``screen__element`` or, before upstream's own formatting pass, ``screen:element``. Their XPaths
target the HTML-ised tree, so every identifier is imported in the ``html`` dialect. The free-form
``type`` is mapped onto ``Kind``; whatever has no equivalent becomes ``other`` and is reported.

Real upstream documents carry defects (GPT-4o names the elements): an element filed under a
screen its name does not belong to, duplicate names, an element with no XPath at all, path steps
naming elements that do not exist, XPaths that do not parse. Each is repaired, or the part is left
out, and every repair is listed in the report (``ImportReport.repairs``): a document is refused
whole only when it is not an app document at all, or with ``strict=True``, which refuses whatever
would have been repaired, with the same messages.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lxml import etree

from tapir.core.diagnostics import Diagnostic
from tapir.core.document import Step
from tapir.core.errors import DocumentError
from tapir.core.nesting import load_json
from tapir.docgen.loader import LoadResult, loads_document, parse_step
from tapir.docgen.writer import FlowList, to_yaml
from tapir.dsl.api import Kind

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
#: An XPath that is a bare path of tags (``//FrameLayout/LinearLayout/button``): a position, no property.
_POSITIONAL = re.compile(r"/{1,2}[\w-]+(/{1,2}[\w-]+)*")
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
    #: Every defect of the upstream document that was repaired or left out, one sentence each
    #: (which element or screen, what was done). ``strict=True`` refuses these instead.
    repairs: tuple[str, ...] = ()

    def repair_warnings(self) -> tuple[Diagnostic, ...]:
        """The repairs as warnings of the upstream file (no line: they name the element)."""
        return tuple(Diagnostic.at_line(r, None, severity="warning", code="repaired") for r in self.repairs)

    def render(self, *, repairs: bool = True) -> str:
        """The report as lines of text; ``repairs=False`` leaves the repair lines (not their count)
        to the caller, which shows them as warnings (``tapir doc import`` prints them on stderr)."""
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
        if self.repairs:
            n = len(self.repairs)
            lines.append(f"repaired {n} defect{'s' if n != 1 else ''} of the upstream document"
                         + (":" if repairs else " (listed as warnings)"))
            if repairs:
                lines.extend(f"  {r}" for r in self.repairs)
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
    path: str | Path, *, package: str | None = None, app_name: str | None = None, strict: bool = False
) -> tuple[str, ImportReport]:
    """Convert the upstream JSON at ``path``; returns the YAML text and the report.

    Defects are repaired and listed in ``ImportReport.repairs``; ``strict=True`` refuses them
    instead (a :class:`DocumentError` whose errors are the repairs it would have made).
    """
    try:
        data = load_json(Path(path).read_text(encoding="utf-8"), filename=str(path))  # depth-bounded
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}", filename=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text: {exc}", filename=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise DocumentError("not JSON", [Diagnostic.at_line(exc.msg, exc.lineno, exc.colno, code="syntax")],
                            filename=str(path)) from exc
    name = app_name or default_app_name(path)
    return import_data(data, source=str(path), package=package, app_name=name, strict=strict)


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
    data: Any, *, source: str, package: str | None = None, app_name: str = "app", strict: bool = False
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
    if strict and conv.repairs:
        raise DocumentError(
            f"the upstream document has {len(conv.repairs)} defect{'s' if len(conv.repairs) != 1 else ''} "
            "(refused: strict; without it they are repaired)",
            [Diagnostic.at_line(r.message, None, code=r.code) for r in conv.repairs], filename=source)
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
        # at unrelated lines of the JSON (the messages name the screen or element). What was
        # repaired on the way comes first, as warnings: it often explains what is left.
        repaired = [Diagnostic.at_line(r.message, None, severity="warning", code=r.code) for r in conv.repairs]
        problems = repaired + [replace(p, span=None) for p in result.errors]
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
        repairs=tuple(r.message for r in conv.repairs),
    )
    return text, report


def _ident(text: str) -> str:
    out = re.sub(r"\W", "_", text, flags=re.ASCII)
    return "_" + out if out[:1].isdigit() else out


def _unique(name: str, taken: Collection[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... the first not in ``taken``."""
    if name not in taken:
        return name
    n = 2
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


# Why a path is dropped when it is not a list of steps (the ``dropped`` reasons, also repairs).
_MALFORMED = ("malformed paths", "paths with a malformed step")


@dataclass(frozen=True)
class _Repair:
    """One defect repaired; ``code`` is the validator's code for it (what ``strict`` reports)."""

    code: str
    message: str


@dataclass(frozen=True)
class _Entry:
    """One upstream element on its way into the document."""

    #: The (Tapir) name of the screen whose ``elements`` listed it.
    listed_under: str
    #: Its name as upstream wrote it, in the ``screen__element`` form: what paths call it.
    original: str
    #: The screen and name it ends up with (repairs change them).
    screen: str
    name: str
    data: dict[str, Any]
    identifiers: tuple[str, ...]


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
        self.repairs: list[_Repair] = []
        names = [n for s in data.values() for n in s["elements"]]
        self.name_form = "screen:element" if any(":" in n and "__" not in n for n in names) else "screen__element"
        # Filled in by convert(): upstream screen name (normalised) -> the document's, the
        # document's element names, path targets renamed by a repair, and the names left out.
        self.screens: dict[str, str] = {}
        self.listing: dict[str, str] = {}  # upstream's exact screen name -> the document's
        self.elements: set[str] = set()
        self.aliases: dict[str, str] = {}
        self.ambiguous: dict[str, tuple[str, ...]] = {}
        self.left_out: set[str] = set()
        # Path targets that could not be resolved -> (paths dropped, elements whose paths they were).
        self.unresolved: dict[str, tuple[int, set[str]]] = {}
        self.malformed_paths: dict[str, tuple[int, set[str]]] = {}

    def repair(self, code: str, message: str) -> None:
        self.repairs.append(_Repair(code, message))

    def name(self, raw: str) -> str:
        fixed = _COLON_NAME.sub(r"\1__\2", raw) if ":" in raw else raw
        clean = _ident(fixed)
        if clean != fixed:
            self.renamed[raw] = clean
        return clean

    def convert(self, package: str, app_name: str) -> dict[str, Any]:
        self._screen_names()
        entries = self._tighten_positions(self._dedupe(self._place(self._entries())))
        self.elements = {e.name for e in entries}
        self._resolve_renames(entries)
        distinct = self._distinct_ids()
        out_screens: dict[str, Any] = {}
        bad_alt = 0
        for raw_screen, screen in self.data.items():
            sname = self.listing[raw_screen]
            sig: dict[str, Any] = {}
            ids = distinct.get(raw_screen, [])[:2]
            if ids:
                sig["all"] = [f"//*[@resource_id='{i}']" for i in ids]
            else:
                self.no_distinct.append(sname)
            if screen.get("skeleton"):
                sig["skeleton"] = screen["skeleton"].strip()
            out_elements: dict[str, Any] = {}
            for entry in (e for e in entries if e.screen == sname):
                bad_alt += sum(1 for x in entry.identifiers if _BAD_ALT.search(x))
                out_elements[entry.name] = self._element(entry)
            out_screens[sname] = {"description": _describe(sname), "signature": sig, "elements": out_elements}
        self._report_dropped_paths()
        for what, n in self.dropped_or_fixed.items():
            self.notes.append(f"repaired {n} {what}")
        if bad_alt:
            self.notes.append(f"kept {bad_alt} XPaths with upstream's 'and alt=' bug (a child test, not @alt; "
                              "they never match, the next XPath in the queue is used)")
        start = self.listing[next(iter(self.data))]
        app: dict[str, Any] = {"package": package, "name": app_name, "start_screen": start, "dialect": "html"}
        return {"format": 1, "app": app, "screens": out_screens}

    def _element(self, entry: _Entry) -> dict[str, Any]:
        e = entry.data
        kind = map_type(e.get("type"))
        if kind is None:
            self.unmapped[str(e.get("type"))] += 1
            kind = Kind.OTHER
        self.kinds[kind.value] += 1
        item: dict[str, Any] = {"kind": kind.value, "description": (e.get("description") or "").strip()}
        item["identifiers"] = list(entry.identifiers)
        if e.get("options"):
            item["options"] = [str(o) for o in e["options"]]
        effect = (e.get("effect") or "").strip()
        if effect:
            item["effect"] = effect
            target = self._screen_in(effect)
            if target:
                item["leads_to"] = target
        paths = self._paths(e.get("paths") or [], entry.name)
        if paths:
            item["paths"] = paths
        return item

    # -- repairs of the document's structure, in order: screens, findability, placement, names --

    def _screen_names(self) -> None:
        """Each upstream screen's name in the document: a screen name cannot hold ``__`` (it
        separates screen and element), and two names may normalise to one (the first keeps it)."""
        for raw in self.data:
            name = self.name(raw)
            fixed = _unique(re.sub(r"_{2,}", "_", name) or "screen", set(self.listing.values()))
            if fixed != name:
                why = "a screen name cannot hold '__'" if "__" in name else "another screen has that name"
                self.repair("bad-name", f"screen {raw!r}: renamed to {fixed!r} ({why}); its elements follow")
            self.listing[raw] = fixed
            self.screens.setdefault(name, fixed)

    def _entries(self) -> list[_Entry]:
        """Every element with its repaired XPaths; those left with none are left out (nothing
        could ever find them on the screen), by their upstream name, for the paths through them."""
        out: list[_Entry] = []
        for raw_screen, screen in self.data.items():
            listed_under = self.listing[raw_screen]
            for raw_name, e in screen["elements"].items():
                name = self.name(raw_name)
                raw_xpaths = [x for x in (e.get("xpath") or []) if isinstance(x, str)]
                identifiers = tuple(x for x in (self._xpath(x, name, listed_under) for x in raw_xpaths) if x)
                if not identifiers:
                    why = (f"none of its {len(raw_xpaths)} XPaths parses" if raw_xpaths
                           else "its identifier (XPath) list is empty")
                    self.repair("empty-identifiers", f"element {name!r} on screen {listed_under!r}: {why}, "
                                                     "so nothing can find it: left out")
                    self.left_out.add(name)
                    continue
                out.append(_Entry(listed_under, name, listed_under, name, e, identifiers))
        return out

    def _owner(self, name: str) -> tuple[str | None, str, str | None]:
        """(the document's screen the name is prefixed with or None, the element part, the prefix
        as written when it names no screen)."""
        owners = [s for s in self.screens if name.startswith(s + "__")]
        if owners:
            prefix = max(owners, key=len)  # "a__b" before "a" when both are screens
            return self.screens[prefix], name[len(prefix) + 2:], None
        if "__" in name:
            prefix, rest = name.split("__", 1)
            return None, rest, prefix
        return None, name, None

    def _place(self, entries: list[_Entry]) -> list[_Entry]:
        """Every element on the screen its name says, named after it.

        Upstream sometimes files an element under one screen with another screen's prefix (GPT-4o
        named it after a screen that looks alike). When that screen exists and has no element of
        the name, the element moves there (its name, and the paths naming it, stay right);
        otherwise it keeps the screen that lists it and takes that screen's prefix.
        """
        # What each screen has under its own prefix, and what moves in, so two strays for one
        # screen do not both move.
        has: dict[str, set[str]] = {}
        for e in entries:
            owner, rest, _ = self._owner(e.name)
            if owner == e.listed_under:
                has.setdefault(owner, set()).add(rest)
        out: list[_Entry] = []
        for e in entries:
            owner, rest, foreign = self._owner(e.name)
            here = e.listed_under
            where = f"element {e.original!r} listed under screen {here!r}"
            if owner == here:
                name = f"{here}__{rest}"  # the same, or after the screen's own rename (reported)
                out.append(replace(e, name=name))
                continue
            if owner is not None and rest not in has.setdefault(owner, set()):
                has[owner].add(rest)
                self.repair("bad-name", f"{where} is named for screen {owner!r}, which has no element of that "
                                        "name: moved there")
                out.append(replace(e, screen=owner, name=f"{owner}__{rest}"))
                continue
            name = f"{here}__{rest}"
            if owner is not None:
                why = f"is named for screen {owner!r}, which has an element of that name already"
            elif foreign is not None:
                why = f"is named for {foreign!r}, which is not a screen of the document"
            else:
                why = "has no screen prefix (names are screen__element)"
            self.repair("bad-name", f"{where} {why}: renamed to {name!r}")
            has.setdefault(here, set()).add(rest)
            out.append(replace(e, name=name))
        return out

    def _dedupe(self, entries: list[_Entry]) -> list[_Entry]:
        """One element per name: the first keeps it; a later one with the same XPaths is dropped
        (it adds nothing), any other is renamed ``name_2``..."""
        seen: dict[str, _Entry] = {}
        out: list[_Entry] = []
        for e in entries:
            first = seen.get(e.name)
            if first is None:
                seen[e.name] = e
                out.append(e)
                continue
            where = f"duplicate element name {e.name!r} on screen {e.screen!r}"
            if first.identifiers == e.identifiers:
                self.repair("duplicate-name", f"{where}: kept the first, dropped this one (the same XPaths)")
                continue
            name = _unique(e.name, seen)
            self.repair("duplicate-name", f"{where}: kept the first, renamed this one to {name!r}")
            e = replace(e, name=name)
            seen[name] = e
            out.append(e)
        return out

    def _tighten_positions(self, entries: list[_Entry]) -> list[_Entry]:
        """A positional XPath (a bare path of tags) finds whatever sits there: upstream gives the
        same one to elements of different screens that are different views (the unselected tab
        is Video on the photo screen and Photo on the video screen), so on a look-alike screen
        one element's XPath finds the other. Where elements with one positional XPath have
        different descriptions (their ``element`` snippet's ``alt``), each such XPath is
        tightened with its element's own."""
        labels: dict[str, dict[str, str]] = {}
        for e in entries:
            label = _snippet_label(str(e.data.get("element") or ""))
            for x in e.identifiers:
                if _POSITIONAL.fullmatch(x) and label is not None:
                    labels.setdefault(x, {})[e.name] = label[1]
        out: list[_Entry] = []
        for e in entries:
            label = _snippet_label(str(e.data.get("element") or ""))
            idents = list(e.identifiers)
            for i, x in enumerate(idents):
                seen = labels.get(x, {})
                if label is None or len(set(seen.values())) < 2:
                    continue
                attr, value = label
                idents[i] = f"{x}[{attr}={xpath_literal(value)}]"
                others = sorted(n for n, v in seen.items() if v != value)
                self.repair("ambiguous-xpath", f"element {e.name!r} on screen {e.screen!r}: its positional XPath "
                                               f"also finds {_some(set(others))}, described otherwise: "
                                               f"tightened to {idents[i]!r}")
            out.append(replace(e, identifiers=tuple(idents)) if idents != list(e.identifiers) else e)
        return out

    def _resolve_renames(self, entries: list[_Entry]) -> None:
        """Which upstream names paths may still use: a renamed element's old name leads to its new
        one when no element keeps the old name and only one took it."""
        taken: dict[str, list[str]] = {}
        for e in entries:
            if e.name != e.original:
                taken.setdefault(e.original, []).append(e.name)
        for old, new in taken.items():
            if old in self.elements:
                continue  # another element kept it: paths mean that one
            if len(new) == 1:
                self.aliases[old] = new[0]
            else:
                self.ambiguous[old] = tuple(new)

    # -- the parts of an element --

    def _paths(self, raw_paths: list[Any], owner: str) -> list[FlowList]:
        out: list[FlowList] = []
        seen: set[tuple[str, ...]] = set()
        for raw in raw_paths:
            if not isinstance(raw, list):
                self._drop_malformed("malformed paths", owner)
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
                    target = self._resolve(self.name(step.target))
                    if target is None:
                        reason = self._unresolved(self.name(step.target), owner)
                        break
                    fixed = str(Step(target, step.action, step.args, match=step.match))
                steps.append(fixed)
            if reason in _MALFORMED:
                self._drop_malformed(reason, owner)
                continue
            if reason is not None:
                self.dropped[reason] += 1  # the target was counted by _unresolved()
                continue
            key = tuple(steps)
            if key in seen:
                self.dropped["duplicate paths"] += 1
                continue
            seen.add(key)
            out.append(FlowList(steps))
        return out

    def _resolve(self, target: str) -> str | None:
        """The document's name for a path step's target (an element or a screen), or None."""
        if target in self.elements:
            return target
        if target in self.screens:
            return self.screens[target]
        return self.aliases.get(target)

    def _unresolved(self, target: str, owner: str) -> str:
        """Count a path dropped for naming ``target``; returns the reason for ``dropped``."""
        n, owners = self.unresolved.get(target, (0, set()))
        owners.add(owner)
        self.unresolved[target] = (n + 1, owners)
        if target in self.left_out:
            return "paths stepping through an element left out (no identifiers)"
        if target in self.ambiguous:
            return "paths naming an element renamed two ways"
        return "paths naming an unknown element (e.g. upstream's 'None.tap()')"

    def _drop_malformed(self, reason: str, owner: str) -> None:
        self.dropped[reason] += 1
        n, owners = self.malformed_paths.get(reason, (0, set()))
        owners.add(owner)
        self.malformed_paths[reason] = (n + 1, owners)

    def _report_dropped_paths(self) -> None:
        """One repair per path target that was not there, and per kind of malformed path: per
        path would bury the rest (upstream repeats a bad step in hundreds of paths)."""
        for target, (n, owners) in self.unresolved.items():
            paths = f"dropped {n} dependency path{'s' if n != 1 else ''} of {_some(owners)}"
            they, s = ("it", "s") if n == 1 else ("they", "")
            if target in self.left_out:
                self.repair("empty-identifiers", f"{paths}: {they} step{s} through {target!r}, which was left out")
            elif target in self.ambiguous:
                self.repair("unknown-name", f"{paths}: {they} name{s} {target!r}, renamed to both "
                                            + " and ".join(repr(t) for t in self.ambiguous[target]))
            else:
                self.repair("unknown-name", f"{paths}: {they} name{s} {target!r}, which is no element or screen "
                                            "of the document")
        for reason, (n, owners) in self.malformed_paths.items():
            what = "not a list of steps" if reason == "malformed paths" else "a step does not parse"
            self.repair("bad-path", f"dropped {n} dependency path{'s' if n != 1 else ''} of {_some(owners)}: "
                                    f"{what}")

    def _xpath(self, xpath: str, element: str, screen: str) -> str | None:
        """The XPath, repaired when upstream left quotes unescaped; None if it stays malformed."""
        if _compiles(xpath):
            return xpath
        fixed = _QUOTED_VALUE.sub(lambda m: f"{m.group(1)}={xpath_literal(m.group(2))}", xpath)
        if _compiles(fixed):
            self.dropped_or_fixed["XPaths with unescaped quotes, re-quoted"] += 1
            return fixed
        self.dropped["malformed XPaths"] += 1
        self.repair("bad-xpath", f"element {element!r} on screen {screen!r}: dropped the XPath {xpath!r}, "
                                 "which does not parse")
        return None

    def _screen_in(self, effect: str) -> str | None:
        """The first screen the effect text names ("tap to navigate to the alarm_screen, ...")."""
        best: tuple[int, str] | None = None
        for upstream_name, name in self.screens.items():
            m = re.search(rf"\b{re.escape(upstream_name)}\b", effect)
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


def _some(names: set[str]) -> str:
    """``'a'``, or ``3 elements ('a', 'b', ...)`` for a message."""
    ordered = sorted(names)
    if len(ordered) == 1:
        return f"element {ordered[0]!r}"
    shown = ", ".join(repr(n) for n in ordered[:3]) + (", ..." if len(ordered) > 3 else "")
    return f"{len(ordered)} elements ({shown})"


def _snippet_label(snippet: str) -> tuple[str, str] | None:
    """What an upstream ``element`` snippet is called, as an XPath test and its value: its ``alt``
    (``('@alt', 'Photo')``, the view's content description). Not its text: a text is often content
    (a title showing a folder's name), which a tightened XPath would then miss."""
    if not snippet.strip():
        return None
    try:
        root = etree.fromstring(snippet.strip(), etree.XMLParser(recover=True))
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    alt = (root.get("alt") or "").strip()
    return ("@alt", alt) if alt else None


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
