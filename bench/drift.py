"""Grounding under app drift: Tapir's cascade against upstream AutoDroid-V2's XPath queue.

    python bench/drift.py [--seed 7] [--apps clock,notes] [--kinds removed_id,...] [--limit N]
                          [--sources traces,recordings,dumps] [--no-embedding] [--out result.json]

Screens and targets are real: every step of the DroidTask ground-truth traces (the screen as
upstream recorded it, and the node the human acted on), read from the raw DroidBot state when
the recording has it and its rendering matches the trace, else rebuilt from the trace's HTML
(labels, structure and flags are real; bounds are laid out synthetically); plus the labelled
clickable views of the real uiautomator dumps in ``shared/upstream/uiautomator``; plus every other
action on a view of the 11 DroidBot recordings (``states/``, ``events/``): each event joined to
its start state as ``tapir explore --import-droidbot`` joins it, each distinct (state, view) once,
none that a trace step already is (``recordings`` in the JSON counts, per app, the view events
used, those that were trace steps or repeats, and what the import left out). ``--apps`` keeps
the run to some apps (the dumps only with ``uiautomator`` among them): about 1.5 minutes for all
942 cases on 2 cores, seconds for one app.

For each screen a one-screen document is written the way upstream writes one: every
interactive view becomes an element whose identifier queue follows upstream's rules
(``tapir.runtime.grounding.baseline``), so the acted element has its real queue and its
neighbours compete for the same XPaths. Then each drift is applied to the raw tree,
deterministically from ``--seed``:

* ``none``: no change (a control: everything should be correct);
* ``changed_text``: the acted element's label is reworded, or its number changes ("5 minutes");
* ``removed_id``: the acted view (or its clickable row) loses its resource id;
* ``inserted_sibling``: a copy of the acted row with another label is inserted before it;
* ``reordered_list``: the list holding the acted row is shuffled;
* ``translated_label``: the label is shown in German (word by word, common UI words);
* ``paraphrased_label``: the label is reworded with synonyms ("Delete" -> "Remove");
* ``combined``: two of the above at once, as an app update does.

Three locators ground the acted element on the drifted screen: (a) the first identifier only,
taking its first hit; (b) upstream's queue: XPaths shared with another element dropped, first
XPath with any hit, first hit; (c) Tapir's ``Grounder.ground`` (and (c') the same without the
embedding stage). A result is *correct* when it acts on the acted view (the same node, or the
same clickable / scrollable owner), *wrong* when it acts on another one, *refused* when None.
The JSON gives counts and rates per drift kind and overall (drifted kinds only), per app and
per case source (drifted kinds only, every method on the same lookups), and whether Tapir's
wrong-tap rate meets the target (at most 0.3%).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

from tapir.core.document import AppDocument, AppInfo, Element, Screen, Signature
from tapir.dsl.api import Kind
from tapir.hierarchy import UINode, UITree, load_tree, parse_view_list, render_html
from tapir.runtime.grounding import Grounder, GroundingConfig, default_embedder, embedding_status
from tapir.runtime.grounding.baseline import first_hit, upstream_identifiers, upstream_locate
from tapir.runtime.grounding.screen_view import ScreenView

UPSTREAM = Path(os.environ.get("TAPIR_UPSTREAM")
                or Path(__file__).resolve().parent.parent.parent / "shared" / "upstream")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

KINDS = ("none", "changed_text", "removed_id", "inserted_sibling", "reordered_list",
         "translated_label", "paraphrased_label", "combined")
METHODS = ("first_identifier", "upstream_queue", "tapir", "tapir_no_embedding")
SOURCES = ("raw", "html", "recording", "uiautomator")
#: The issue's target: Tapir taps a wrong view in at most 0.3% of drifted lookups.
WRONG_TARGET = 0.003

# -- cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    key: str
    app: str
    #: ``raw`` (DroidBot state), ``html`` (rebuilt from the trace), ``recording`` (an action of a
    #: DroidBot recording that no trace step repeats) or ``uiautomator`` (a real dump)
    source: str
    tree: UITree
    choice: int
    action: str


_TAG_CLASS = {
    "p": "android.widget.TextView",
    "button": "android.widget.Button",
    "input": "android.widget.EditText",
    "checkbox": "android.widget.CheckBox",
    "scrollbar": "androidx.recyclerview.widget.RecyclerView",
}


def tree_from_html(html: str, width: int = 1080, height: int = 2280) -> UITree:
    """A tree whose AutoDroid-V2 rendering is ``html`` (ids, tags, labels and states kept).

    Clickable/checkable/editable/scrollable come from the tags; bounds are a plain layout
    (children stacked top to bottom in their parent), since the HTML has none.
    """
    root = etree.fromstring(html.encode("utf-8"))
    views: list[dict[str, Any]] = []

    def walk(el: etree._Element, parent: int | None, box: tuple[int, int, int, int]) -> int:
        tag = el.tag
        nid = int(el.get("id"))
        kids = [c for c in el if isinstance(c.tag, str)]
        x1, y1, x2, y2 = box
        view: dict[str, Any] = {
            "temp_id": nid, "parent": parent if parent is not None else -1, "children": [],
            "class": _TAG_CLASS.get(tag, tag), "resource_id": el.get("resource_id") or "",
            "text": (el.text or "").strip() if tag in _TAG_CLASS else "",
            "content_description": el.get("alt") or "",
            "bounds": [[x1, y1], [x2, y2]],
            "clickable": tag == "button", "checkable": tag == "checkbox",
            "checked": tag == "checkbox" and el.get("status") == "selected",
            "selected": tag != "checkbox" and el.get("status") == "selected",
            "editable": tag == "input", "scrollable": tag == "scrollbar", "enabled": True, "visible": True,
        }
        views.append(view)
        step = max((y2 - y1) // max(len(kids), 1), 1)
        for i, c in enumerate(kids):
            view["children"].append(walk(c, nid, (x1, y1 + i * step, x2, y1 + (i + 1) * step)))
        return nid

    tops = [root] if root.tag != "hierarchy" else [c for c in root if isinstance(c.tag, str)]
    for top in tops:
        walk(top, None, (0, 0, width, height))
    return parse_view_list(views)


def _same_html(a: str, b: str) -> bool:
    def norm(s: str) -> list[str]:
        return [line.strip() for line in s.strip().splitlines()]
    return norm(a) == norm(b)


def droidtask_cases(upstream: Path, apps: set[str] | None = None) -> Iterator[Case]:
    for app_dir in sorted((upstream / "droidtask" / "apps").iterdir()):
        if apps and app_dir.name not in apps:
            continue
        for trace in sorted((app_dir / "traces").glob("task*.yaml")):
            records = yaml.load(trace.read_text(encoding="utf-8"), Loader=_LOADER)["records"]
            for i, r in enumerate(records):
                choice = int(r["Choice"])
                if choice < 0:
                    continue
                action = (r.get("ActionDetails") or {}).get("action_type", "click")
                state = app_dir / "states" / f"state_{r['tag']}.json"
                tree, source = None, "html"
                if state.is_file():
                    raw = load_tree(state)
                    if choice in raw and _same_html(render_html(raw), r["State"]):
                        tree, source = raw, "raw"
                if tree is None:
                    tree = tree_from_html(r["State"])
                if choice not in tree:
                    continue
                yield Case(f"{app_dir.name}/{trace.stem}#{i}", app_dir.name, source, tree, choice, action)


def _state_key(path: Path, node: UINode) -> tuple[str, int, tuple[int, int, int, int]] | None:
    """What makes two recorded actions the same lookup: the DroidBot state hash, node and bounds."""
    try:
        state_str = str(json.loads(path.read_text(encoding="utf-8")).get("state_str") or "")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    b = node.bounds
    return (state_str, node.id, (b.x1, b.y1, b.x2, b.y2)) if state_str else None


#: Trace actions on a view, as the drift cases name them (``tapir.docgen.build.droidbot``'s kinds).
_RECORDED_ACTIONS = {"tap": "click", "long_tap": "long_click", "text": "input_text", "scroll": "scroll"}


def _trace_keys(app_dir: Path) -> set[tuple[str, int, tuple[int, int, int, int]]]:
    """The (state, node, bounds) of every ground-truth trace step of ``app_dir`` with a raw state."""
    from tapir.core.errors import TapirError

    keys = set()
    for trace_file in sorted((app_dir / "traces").glob("task*.yaml")):
        for r in yaml.load(trace_file.read_text(encoding="utf-8"), Loader=_LOADER)["records"]:
            state = app_dir / "states" / f"state_{r['tag']}.json"
            choice = int(r["Choice"])
            if choice < 0 or not state.is_file():
                continue
            try:
                tree = load_tree(state)
            except TapirError:
                continue
            if choice in tree and (key := _state_key(state, tree.node(choice))) is not None:
                keys.add(key)
    return keys


def recording_cases(upstream: Path, apps: set[str] | None = None,
                    stats: dict[str, dict[str, Any]] | None = None) -> Iterator[Case]:
    """The actions on a view of every DroidBot recording (``states/``, ``events/``) that are not
    already a ground-truth trace step: each event joined to its start state the way
    ``tapir explore --import-droidbot`` joins it (the node checked by class and bounds), each
    distinct (state, view) once over all recordings. Screens of other apps that a recording passes
    through (Camera opens Gallery, Dialer opens Contacts) are real screens too and are kept.
    ``stats`` gets, per app, how many view events were used and why the others were not."""
    import tempfile

    from tapir.docgen.build import import_droidbot, read_trace

    dirs = [d for d in sorted((upstream / "droidtask" / "apps").iterdir())
            if (not apps or d.name in apps) and (d / "events").is_dir() and (d / "states").is_dir()]
    trace_keys: set[tuple[str, int, tuple[int, int, int, int]]] = set()
    for app_dir in dirs:
        trace_keys |= _trace_keys(app_dir)
    seen = set(trace_keys)
    for app_dir in dirs:
        app = app_dir.name
        count: dict[str, Any] = {"view_events": 0, "used": 0, "used_on_other_apps": 0, "trace_steps": 0,
                                 "repeats": 0}
        with tempfile.TemporaryDirectory(prefix="tapir-drift-") as tmp:
            summary = import_droidbot(app_dir, Path(tmp) / "trace")
            count["import_left_out"] = dict(summary.skipped)
            trace = read_trace(summary.output)
            for i, step in enumerate(trace.steps):
                target = step.action.target
                if target is None:
                    continue
                count["view_events"] += 1
                tree = trace.tree(step.before)
                key = _state_key(trace.directory / trace.states[step.before].hierarchy, tree.node(target.node))
                if key is not None and key in seen:
                    count["trace_steps" if key in trace_keys else "repeats"] += 1
                    continue
                if key is not None:
                    seen.add(key)
                count["used"] += 1
                count["used_on_other_apps"] += trace.package_of(step.before) != summary.package
                yield Case(f"{app}/recording#{i}", app, "recording", tree, target.node,
                           _RECORDED_ACTIONS.get(step.action.kind, "click"))
        if stats is not None:
            stats[app] = count


def uiautomator_cases(upstream: Path, per_screen: int = 25) -> Iterator[Case]:
    """Labelled clickable views of the real dumps, an even sample of at most ``per_screen``."""
    for dump in sorted((upstream / "uiautomator").glob("*.xml")):
        tree = load_tree(dump)
        view = ScreenView(tree)
        picks = [n for n in tree.nodes if n.visible and n.clickable and view.html.element(n.id) is not None
                 and (n.text or n.content_desc or any(d.text or d.content_desc for d in tree.descendants(n.id)))]
        step = max(len(picks) // per_screen, 1)
        for n in picks[::step][:per_screen]:
            yield Case(f"uiautomator/{dump.stem}#{n.id}", dump.stem, "uiautomator", tree, n.id, "click")


def load_cases(upstream: Path, apps: set[str] | None = None, *, dumps: bool = True, traces: bool = True,
               recordings: bool = False, stats: dict[str, dict[str, int]] | None = None) -> list[Case]:
    """Ground-truth trace steps, the real dumps and (``recordings``) the other recorded actions."""
    cases = list(droidtask_cases(upstream, apps)) if traces else []
    if recordings:
        cases += list(recording_cases(upstream, apps, stats))
    if dumps and (not apps or "uiautomator" in apps):
        cases += list(uiautomator_cases(upstream))
    return cases


def _group(case: Case) -> str:
    """The app a case is reported under: its DroidTask app, or ``uiautomator`` for the dumps."""
    return "uiautomator" if case.source == "uiautomator" else case.app


# -- documents --------------------------------------------------------------------------------

_INTERACTIVE = {"button": Kind.BUTTON, "checkbox": Kind.CHECKBOX, "input": Kind.INPUT, "scrollbar": Kind.SCROLLER}
_SLUG = re.compile(r"[^a-z0-9]+")


def _kind(view: ScreenView, node_id: int, action: str | None = None) -> Kind:
    if action == "scroll":
        return Kind.SCROLLER
    if action == "input_text":
        return Kind.INPUT
    return _INTERACTIVE.get(view.html.tag(node_id) or "", Kind.OTHER)


def _label(tree: UITree, node: UINode) -> str:
    for n in (node, *tree.descendants(node.id)):
        if n.text or n.content_desc:
            return n.text or n.content_desc
    return node.resource_name or node.short_class


def build_document(case: Case) -> tuple[AppDocument, str]:
    """A one-screen document of the case's screen, written by upstream's rules; the acted
    element's name."""
    view = ScreenView(case.tree)
    wanted = [nid for nid, el in view.html.elements.items() if el.described and el.tag in _INTERACTIVE]
    if case.choice not in wanted:
        wanted.append(case.choice)
    elements: list[Element] = []
    used: set[str] = set()
    acted = ""
    for nid in wanted:
        identifiers = upstream_identifiers(view, nid)
        if not identifiers:
            continue
        node = case.tree.node(nid)
        slug = _SLUG.sub("_", _label(case.tree, node).lower()).strip("_")[:40] or "view"
        name = f"screen__{slug}"
        if name in used:
            name = f"{name}_{nid}"
        used.add(name)
        kind = _kind(view, nid, case.action if nid == case.choice else None)
        elements.append(Element(name, kind, f"the {_label(case.tree, node)!r} view", identifiers))
        if nid == case.choice:
            acted = name
    doc = AppDocument(AppInfo("bench.app", case.app, "screen"),
                      (Screen("screen", "the recorded screen", Signature(), tuple(elements)),))
    return doc, acted


# -- drifts -----------------------------------------------------------------------------------

Views = dict[int, dict[str, Any]]

_EXTRA_WORDS = ("now", "all", "options", "here", "more")
_FILLERS = ("What's new", "Tips and tricks", "Sponsored", "Beta features", "Send feedback")
# Common UI words in German (what a German locale shows), lower case.
GERMAN = {
    "more": "weitere", "options": "optionen", "option": "option", "settings": "einstellungen", "ok": "ok",
    "save": "speichern", "cancel": "abbrechen", "delete": "löschen", "search": "suchen", "sort": "sortieren",
    "by": "nach", "menu": "menü", "label": "bezeichnung", "theme": "design", "light": "hell", "dark": "dunkel",
    "yes": "ja", "no": "nein", "font": "schrift", "size": "größe", "create": "erstellen", "new": "neu",
    "note": "notiz", "notes": "notizen", "send": "senden", "title": "titel", "type": "tippen", "message": "nachricht",
    "a": "eine", "the": "die", "call": "anrufen", "number": "nummer", "toggle": "umschalten", "favorite": "favorit",
    "first": "vor", "name": "name", "allow": "erlauben", "add": "hinzufügen", "holidays": "feiertage",
    "event": "termin", "regular": "regulärer", "internal": "intern", "recents": "verlauf", "change": "ändern",
    "view": "ansicht", "print": "drucken", "to": "als", "insert": "einfügen", "text": "text", "here": "hier",
    "checklist": "checkliste", "date": "datum", "created": "erstellt", "edit": "bearbeiten", "contact": "kontakt",
    "contacts": "kontakte", "surname": "nachname", "max": "max", "reminder": "erinnerung", "duration": "dauer",
    "minutes": "minuten", "minute": "minute", "alarm": "wecker", "clock": "uhr", "snooze": "schlummer",
    "time": "zeit", "column": "spalten", "count": "anzahl", "video": "video", "front": "vorne", "back": "hinten",
    "camera": "kamera", "history": "verlauf", "manage": "verwalten", "shown": "angezeigte", "tabs": "tabs",
    "recent": "letzte", "files": "dateien", "file": "datei", "large": "groß", "medium": "mittel", "small": "klein",
    "gallery": "galerie", "always": "immer", "favorites": "favoriten", "download": "herunterladen",
    "downloads": "downloads", "last": "zuletzt", "modified": "geändert", "storage": "speicher",
    "temporarily": "vorübergehend", "show": "zeigen", "hidden": "versteckte", "grid": "raster",
    "bookmarks": "lesezeichen", "set": "festlegen", "as": "als", "default": "standard", "browser": "browser",
    "language": "sprache", "customize": "anpassen", "colors": "farben", "color": "farbe", "autosave": "autospeichern",
    "rename": "umbenennen", "alignment": "ausrichtung", "center": "mitte", "export": "exportieren",
    "groups": "gruppen", "group": "gruppe", "start": "beginnen", "week": "woche", "on": "am", "sunday": "sonntag",
    "about": "über", "vibrate": "vibrieren", "timer": "timer", "folder": "ordner", "filter": "filtern",
    "media": "medien", "folders": "ordner", "list": "liste", "columns": "spalten", "photo": "foto",
    "quality": "qualität", "sync": "synchronisieren", "and": "und", "your": "deine", "data": "daten",
    "sign": "anmelden", "in": "in", "descending": "absteigend", "ascending": "aufsteigend", "shutter": "auslöser",
    "captured": "aufgenommene", "stopwatch": "stoppuhr", "navigate": "navigieren", "up": "nach oben",
    "open": "öffnen", "close": "schließen", "share": "teilen", "done": "fertig", "dialpad": "wähltastatur",
    "remember": "merken", "playback": "wiedergabe", "position": "position", "increase": "erhöhen",
    "volume": "lautstärke", "gradually": "allmählich", "use": "verwenden", "same": "gleiche",
}
# Rewordings with the same meaning; phrases first.
SYNONYMS = {
    "more options": "more actions", "sort by": "order by", "create a new note": "add a note",
    "type a message…": "write a message…", "view last captured media": "open the latest photo",
    "settings": "preferences", "ok": "confirm", "save": "store", "delete": "remove", "search": "find",
    "menu": "navigation", "label": "name", "theme": "appearance", "yes": "confirm", "send": "submit",
    "title": "heading", "font": "text", "size": "scale", "create": "make", "new": "add", "call": "phone",
    "number": "phone number", "edit": "modify", "change": "switch", "view": "display", "show": "display",
    "allow": "permit", "add": "insert", "about": "info", "light": "bright", "dark": "night", "close": "dismiss",
    "cancel": "dismiss", "alarm": "wake-up alarm", "reminder": "alert", "duration": "length",
    "customize": "personalize", "colors": "colours", "color": "colour", "large": "big", "small": "little",
    "descending": "newest first", "ascending": "oldest first", "history": "log", "files": "documents",
    "folder": "directory", "photo": "picture", "storage": "memory", "download": "fetch", "favorite": "starred",
    "contact": "person", "contacts": "people", "message": "text", "note": "memo", "notes": "memos",
    "shutter": "take photo", "video": "movie", "rename": "change name", "export": "save as", "print": "output",
    "language": "locale", "grid": "tiles", "list": "rows", "date": "day", "time": "hour", "clock": "time",
}
_WORD = re.compile(r"[A-Za-zÀ-ÿ]+|[^A-Za-zÀ-ÿ]+")


def _views(tree: UITree) -> Views:
    out: Views = {}
    for n in tree.nodes:
        out[n.id] = {
            "temp_id": n.id, "parent": n.parent if n.parent is not None else -1, "children": list(n.children),
            "class": n.class_name, "resource_id": n.resource_id, "text": n.text, "content_description": n.content_desc,
            "bounds": [[n.bounds.x1, n.bounds.y1], [n.bounds.x2, n.bounds.y2]], "package": n.package,
            "clickable": n.clickable, "long_clickable": n.long_clickable, "checkable": n.checkable,
            "checked": n.checked, "selected": n.selected, "scrollable": n.scrollable, "editable": n.editable,
            "focusable": n.focusable,
            "focused": n.focused, "enabled": n.enabled, "visible": n.visible, "is_password": n.password,
        }
    return out


def _labelled(tree: UITree, choice: int) -> UINode | None:
    """The node showing the acted element's label: itself, else the first labelled view inside."""
    for n in (tree.node(choice), *tree.descendants(choice)):
        if (n.text or n.content_desc) and n.visible:
            return n
    return None


def _relabel(views: Views, node: UINode, change: Callable[[str], str | None]) -> bool:
    v = views[node.id]
    done = False
    for key in ("text", "content_description"):
        if v[key]:
            new = change(v[key])
            if new is not None and new != v[key]:
                v[key] = new
                done = True
    return done


def _reword(rng: random.Random) -> Callable[[str], str | None]:
    def change(label: str) -> str | None:
        if re.search(r"\d", label):
            return re.sub(r"\d", lambda m: str((int(m.group()) + 1 + rng.randrange(8)) % 10), label)
        how = rng.randrange(4)
        if how == 0:
            return f"{label} {rng.choice(_EXTRA_WORDS)}"
        if how == 1:
            return label.upper() if label != label.upper() else label.title()
        if how == 2 and " " in label.strip():
            return label.rsplit(" ", 1)[0]
        return label.rstrip(".") + "…"
    return change


def _by_words(table: dict[str, str], need_share: float) -> Callable[[str], str | None]:
    def change(label: str) -> str | None:
        low = label.lower()
        for phrase, other in table.items():
            if " " in phrase and phrase in low:
                return other[:1].upper() + other[1:] if label[:1].isupper() else other
        parts = _WORD.findall(label)
        words = [p for p in parts if p[:1].isalpha()]
        known = [w for w in words if w.lower() in table]
        if not words or len(known) / len(words) < need_share:
            return None
        out = []
        for p in parts:
            t = table.get(p.lower()) if p[:1].isalpha() else None
            if t is None:
                out.append(p)
            else:
                out.append(t.upper() if p.isupper() and len(p) > 1 else t[:1].upper() + t[1:] if p[:1].isupper() else t)
        return "".join(out)
    return change


def _row(tree: UITree, view: ScreenView, choice: int) -> UINode:
    """The acted view's row: its clickable owner when it has one below the root."""
    owner = view.clickable_owner(choice)
    node = tree.node(owner if owner is not None else choice)
    return node if node.parent is not None else tree.node(choice)


def _copy_subtree(views: Views, tree: UITree, top: UINode, new_parent: int, next_id: list[int],
                  label: str) -> int:
    mapping: dict[int, int] = {}
    for n in (top, *tree.descendants(top.id)):
        mapping[n.id] = next_id[0]
        next_id[0] += 1
    for n in (top, *tree.descendants(top.id)):
        v = dict(views[n.id])
        v["temp_id"] = mapping[n.id]
        v["parent"] = new_parent if n.id == top.id else mapping[n.parent]  # type: ignore[index]
        v["children"] = [mapping[c] for c in n.children]
        if v["text"]:
            v["text"] = label
        if v["content_description"]:
            v["content_description"] = label
        v["checked"] = v["selected"] = False
        views[mapping[n.id]] = v
    return mapping[top.id]


def apply_drift(tree: UITree, choice: int, kind: str, rng: random.Random) -> UITree | None:
    """The drifted tree, or None when the drift does not apply to this element."""
    if kind == "none":
        return tree
    if kind == "combined":
        kinds = [k for k in KINDS if k not in ("none", "combined")]
        rng.shuffle(kinds)
        current, applied = tree, 0
        for k in kinds:
            drifted = apply_drift(current, choice, k, rng)
            if drifted is not None:
                current, applied = drifted, applied + 1
            if applied == 2:
                return current
        return None
    view = ScreenView(tree)
    views = _views(tree)
    if kind in ("changed_text", "translated_label", "paraphrased_label"):
        node = _labelled(tree, choice)
        if node is None:
            return None
        change = {"changed_text": _reword(rng), "translated_label": _by_words(GERMAN, 0.5),
                  "paraphrased_label": _by_words(SYNONYMS, 0.01)}[kind]
        if not _relabel(views, node, change):
            return None
    elif kind == "removed_id":
        targets = [n for n in (tree.node(choice), _row(tree, view, choice)) if n.resource_id]
        if not targets:
            return None
        for n in targets:
            views[n.id]["resource_id"] = ""
    elif kind == "inserted_sibling":
        row = _row(tree, view, choice)
        if row.parent is None:
            return None
        next_id = [max(views) + 1]
        new = _copy_subtree(views, tree, row, row.parent, next_id, rng.choice(_FILLERS))
        kids = views[row.parent]["children"]
        kids.insert(kids.index(row.id), new)
    elif kind == "reordered_list":
        item: UINode | None = _row(tree, view, choice)
        while item is not None and item.parent is not None:
            parent = tree.node(item.parent)
            shape = (item.class_name, item.resource_id)
            if sum((tree.node(c).class_name, tree.node(c).resource_id) == shape for c in parent.children) >= 2:
                kids = views[parent.id]["children"]
                before = kids.index(item.id)
                for _ in range(8):
                    rng.shuffle(kids)
                    if kids.index(item.id) != before:
                        break
                if kids.index(item.id) == before:
                    return None
                break
            item = parent
        else:
            return None
    else:
        raise ValueError(f"unknown drift {kind!r}")
    return parse_view_list(list(views.values()))


# -- evaluation -------------------------------------------------------------------------------


def same_target(view: ScreenView, got: UINode | None, want: int) -> bool | None:
    """True/False for a right/wrong view, None for no answer."""
    if got is None:
        return None
    if got.id == want:
        return True
    for owner in (view.clickable_owner, view.scrollable_owner):
        a, b = owner(got.id), owner(want)
        if a is not None and a == b:
            return True
    return False


@dataclass
class Tally:
    correct: int = 0
    wrong: int = 0
    refused: int = 0

    def add(self, verdict: bool | None) -> None:
        if verdict is True:
            self.correct += 1
        elif verdict is False:
            self.wrong += 1
        else:
            self.refused += 1

    def as_dict(self) -> dict[str, Any]:
        n = self.correct + self.wrong + self.refused
        return {"n": n, "correct": self.correct, "wrong": self.wrong, "refused": self.refused,
                "correct_rate": round(self.correct / n, 4) if n else None,
                "wrong_rate": round(self.wrong / n, 4) if n else None}


def run(cases: list[Case], kinds: tuple[str, ...], seed: int, *, embedding: bool,
        progress: bool = False, examples_per_kind: int = 5) -> dict[str, Any]:
    embedder = default_embedder() if embedding else None
    methods = METHODS if embedder is not None else tuple(m for m in METHODS if m != "tapir_no_embedding")
    tallies = {k: {m: Tally() for m in methods} for k in kinds}
    groups = sorted({_group(c) for c in cases})
    per_app = {g: {m: Tally() for m in methods} for g in groups}
    per_source = {s: {m: Tally() for m in methods} for s in SOURCES}
    applied_per_app = dict.fromkeys(groups, 0)
    applied = dict.fromkeys(kinds, 0)
    examples: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    refusals: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    seconds = dict.fromkeys(methods, 0.0)
    full = GroundingConfig(use_embedding=embedder is not None)
    exact = GroundingConfig(use_embedding=False)
    for i, case in enumerate(cases):
        if progress and i % 50 == 0:
            print(f"  {i}/{len(cases)} cases", file=sys.stderr)
        doc, name = build_document(case)
        if not name:
            continue
        element = doc.element(name)
        assert element is not None
        screen_elements = doc.screens[0].elements
        grounders = {"tapir": Grounder(doc, embedder=embedder, config=full)}
        if "tapir_no_embedding" in methods:
            grounders["tapir_no_embedding"] = Grounder(doc, config=exact)
        for kind in kinds:
            rng = random.Random(f"{seed}:{case.key}:{kind}")
            tree = apply_drift(case.tree, case.choice, kind, rng)
            if tree is None:
                continue
            applied[kind] += 1
            view = ScreenView(tree)
            results: dict[str, UINode | None] = {}
            t = time.perf_counter()
            hit = first_hit(element.identifiers[:1], view)
            results["first_identifier"] = hit[0] if hit else None
            seconds["first_identifier"] += time.perf_counter() - t
            t = time.perf_counter()
            results["upstream_queue"] = upstream_locate(element, view, screen_elements)
            seconds["upstream_queue"] += time.perf_counter() - t
            for m, g in grounders.items():
                t = time.perf_counter()
                found = g.ground(name, tree)
                seconds[m] += time.perf_counter() - t
                results[m] = found.node if found else None
            verdicts = {m: same_target(view, results[m], case.choice) for m in methods}
            for m in methods:
                tallies[kind][m].add(verdicts[m])
                if kind != "none":
                    per_app[_group(case)][m].add(verdicts[m])
                    per_source[case.source][m].add(verdicts[m])
            applied_per_app[_group(case)] += kind != "none"
            if verdicts["tapir"] is False and len(examples[kind]) < examples_per_kind:
                examples[kind].append({"case": case.key, "element": name, "detail": grounders["tapir"].last_detail})
            if verdicts["tapir"] is None and verdicts["upstream_queue"] and len(refusals[kind]) < examples_per_kind:
                refusals[kind].append({"case": case.key, "element": name, "detail": grounders["tapir"].last_detail})
    overall = {m: Tally() for m in methods}
    for kind in kinds:
        if kind == "none":
            continue
        for m in methods:
            for f in ("correct", "wrong", "refused"):
                setattr(overall[m], f, getattr(overall[m], f) + getattr(tallies[kind][m], f))
    calls = sum(applied.values()) or 1
    return {
        "seed": seed,
        "cases": len(cases),
        "sources": {s: sum(c.source == s for c in cases) for s in SOURCES},
        "embedding": embedding_status() if embedding else "embedding stage off (--no-embedding)",
        "drifts": {k: {"applied": applied[k], **{m: tallies[k][m].as_dict() for m in methods}} for k in kinds},
        "overall_drifted": {m: overall[m].as_dict() for m in methods},
        "target": {"tapir_wrong_rate_at_most": WRONG_TARGET,
                   "met": (overall["tapir"].as_dict()["wrong_rate"] or 0.0) <= WRONG_TARGET},
        "per_app_drifted": {g: {"cases": sum(_group(c) == g for c in cases), "lookups": applied_per_app[g],
                                **{m: per_app[g][m].as_dict() for m in methods}} for g in groups},
        "per_source_drifted": {s: {m: per_source[s][m].as_dict() for m in methods}
                               for s in SOURCES if per_source[s]["tapir"].as_dict()["n"]},
        "mean_ms_per_lookup": {m: round(seconds[m] / calls * 1000, 3) for m in methods},
        "tapir_wrong_examples": {k: v for k, v in examples.items() if v},
        "tapir_refused_where_upstream_right": {k: v for k, v in refusals.items() if v},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--apps", help="comma-separated DroidTask apps (and/or 'uiautomator'); default all")
    parser.add_argument("--sources", default="traces,recordings,dumps",
                        help="comma-separated case sources: traces (ground-truth steps), recordings (the other "
                             "recorded actions), dumps (real uiautomator dumps); default all")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated drift kinds")
    parser.add_argument("--limit", type=int, help="at most this many cases (evenly spread)")
    parser.add_argument("--no-embedding", action="store_true", help="leave the embedding stage out")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--examples", type=int, default=5, help="failure examples kept per drift kind")
    parser.add_argument("--upstream", type=Path, default=UPSTREAM)
    args = parser.parse_args()
    if not args.upstream.is_dir():
        print(json.dumps({"error": f"{args.upstream} not found"}))
        return 1
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        print(json.dumps({"error": f"unknown drift kinds {unknown}; known: {list(KINDS)}"}))
        return 2
    apps = {a.strip() for a in args.apps.split(",") if a.strip()} if args.apps else None
    sources = {s.strip() for s in args.sources.split(",") if s.strip()}
    if sources - {"traces", "recordings", "dumps"}:
        print(json.dumps({"error": f"unknown sources {sorted(sources - {'traces', 'recordings', 'dumps'})}"}))
        return 2
    start = time.perf_counter()
    recorded: dict[str, dict[str, Any]] = {}
    cases = load_cases(args.upstream, apps, traces="traces" in sources, recordings="recordings" in sources,
                       dumps="dumps" in sources, stats=recorded)
    load_s = time.perf_counter() - start
    if args.limit and len(cases) > args.limit:
        step = len(cases) / args.limit
        cases = [cases[int(i * step)] for i in range(args.limit)]
    start = time.perf_counter()
    result = run(cases, kinds, args.seed, embedding=not args.no_embedding, progress=True,
                 examples_per_kind=args.examples)
    result["recordings"] = recorded
    result["load_s"] = round(load_s, 1)
    result["wall_s"] = round(time.perf_counter() - start, 1)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
