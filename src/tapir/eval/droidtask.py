"""DroidTask as a task suite: ground-truth traces become reference scripts, scored by the upstream rule.

A DroidTask folder (``tasks.json`` beside ``apps/<app>/``) is a suite as it is: every app with a
DroidBot recording (``states/``, ``events/``) becomes a replay app, with its AutoDroid-V2 document
(``doc.json``) when it has one and otherwise a document built from the recording (the paper's
offline stage, ``tapir.docgen.build.document_from_recording``; the suite's notes name those), and
each of its tasks with a trace (``traces/taskN.yaml``) a task::

    suite = load_droidtask_suite(Path("../shared/upstream/droidtask/tasks.json"))
    suite.tasks[0].id, suite.tasks[0].actions    # 'applauncher/task1', ('tap: search input text: clock', ...)

For each app this module

1. imports the app's AutoDroid-V2 document (``tapir.docgen.upstream``, repairing its defects), or
   builds one from the recording (kept in Tapir's cache folder, so that the report can name it);
2. turns each ground-truth task trace into a Tapir script (the task's reference), mechanically:
   each acted view (the record's ``Choice``, a DroidBot ``temp_id``, on the recorded state of
   the record's ``tag``) is mapped to the document element whose identifier finds exactly that
   view (or the clickable view around it); a view that only a list element contains becomes an
   item of that list, matched by its text (``$list.match('3 columns').tap()``). A view on another
   app's screen (a permission prompt, the contacts app the dialer opens) that the document does
   not confidently describe, or one no element finds, becomes a screen-level action on its text
   (``tap_text("Allow")``); the task allows what the step needs, and the app's document allows
   the packages the tasks go on in (``app.allow_apps``), so that confinement lets the run act there;
3. gives the task the upstream success rule (``run_droidtask_experiment.py``): every ground-truth
   action, rendered lower-cased as ``tap: <text or alt>`` (``tap: <label> input text: <text>`` for
   typed text; scrolls dropped), must appear in the log of actions the runtime performed,
   navigation steps included. Order and extra actions do not matter.

The harness (``tapir.eval.runner``) runs the tasks on the recording replayed as a simulated app
(``ReplayApp``) and reads the action log from the run's trace (``action_log``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

from tapir.core.document import AppDocument, Dialect, Element
from tapir.core.errors import DocumentError, TapirError, UsageError
from tapir.docgen.loader import loads_document
from tapir.dsl.api import Kind
from tapir.eval.suite import AppSpec, Location, Suite, Task, suite_digest
from tapir.hierarchy.model import UINode, UITree
from tapir.hierarchy.parse import parse_droidbot_state
from tapir.runtime.grounding import Grounder
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.items import item_nodes, node_text
from tapir.runtime.trace import read_trace

_PREFERRED = {Kind.BUTTON: 0, Kind.CHECKBOX: 0, Kind.SWITCH: 0, Kind.INPUT: 0, Kind.TAB: 0, Kind.IMAGE: 1,
              Kind.SCROLLER: 1, Kind.TEXT: 2, Kind.OTHER: 3, Kind.LIST: 4}


@dataclass(frozen=True)
class GroundTruthStep:
    action: str  # click, long_click, input_text, scroll
    choice: int
    tag: str
    label: str
    text: str | None = None
    direction: str | None = None
    #: The recorded screen as AutoDroid-V2's HTML (for states whose raw views were not kept).
    html: str = ""

    @property
    def rendered(self) -> str | None:
        """The upstream metric's string for this action (None for scrolls, which it drops)."""
        return render_action(self.action, self.label, self.text)


@dataclass
class TaskScript:
    task: str
    name: str
    steps: list[GroundTruthStep]
    lines: list[str] = field(default_factory=list)
    #: Steps that could not be mapped to a document element, with the reason.
    unmapped: list[str] = field(default_factory=list)
    #: Steps written as screen-level actions (``tap_text``...), with why: the recorded view is on
    #: another app's screen, or no element of the document finds it.
    on_screen: list[str] = field(default_factory=list)
    #: Other apps' packages the recorded person acted in (the app handed over to them).
    packages: list[str] = field(default_factory=list)
    #: Permission tokens the screen-level steps need (a permission prompt's Allow, a Call button):
    #: the recorded person did them, so the task allows them, as it allows its own elements.
    allow: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        doc = f'"""{self.task}"""\n' if '"""' not in self.task else ""
        return doc + "\n".join(self.lines) + "\n"


def render_action(action: str, label: str, text: str | None = None) -> str | None:
    if action == "scroll":
        return None
    verb = "long tap" if action == "long_click" else "tap"
    out = f"{verb}: {label}"
    if action == "input_text":
        out += f" input text: {text or ''}"
    # the ground truth's labels are read from HTML with runs of white space as one space; a label
    # the runtime logs keeps the view's line breaks ("content\n(changing")
    return " ".join(out.lower().split())


def _html_label(element_html: str) -> str:
    """Text, else alt, of an upstream ``action_element`` snippet (the metric's label)."""
    root = etree.fromstring(element_html.strip(), etree.XMLParser(recover=True))
    if root is None:
        return ""
    text = "".join(root.itertext()).strip()
    return " ".join(text.split()) or (root.get("alt") or "").strip()


def import_document(app_dir: Path, package: str) -> AppDocument:
    from tapir.docgen.upstream import import_file

    text, _ = import_file(app_dir / "doc.json", package=package, app_name=app_dir.name)
    result = loads_document(text, source=str(app_dir / "doc.json"))
    if result.document is None:
        raise DocumentError("the imported document does not load", list(result.errors))
    return result.document


def load_tasks(folder: Path, app: str) -> list[tuple[str, str, list[GroundTruthStep]]]:
    """(trace name, task, ground-truth steps) of every task of ``app`` with a trace; ``folder``
    holds ``tasks.json`` and ``apps/``."""
    tasks = json.loads((folder / "tasks.json").read_text(encoding="utf-8"))[app]
    app_dir = folder / "apps" / app
    out = []
    for name in sorted(tasks, key=lambda n: int("".join(c for c in n if c.isdigit()) or 0)):
        trace_path = app_dir / "traces" / name
        if not trace_path.is_file():
            continue
        records = [r for r in yaml.safe_load(trace_path.read_text(encoding="utf-8"))["records"] if r["Choice"] != -1]
        solution = tasks[name]["solution"]
        steps = []
        for rec, sol in zip(records, solution, strict=False):
            kind = {"touch": "click", "long_touch": "long_click"}.get(rec["Action"], rec["Action"])
            details = rec.get("ActionDetails") or {}
            steps.append(GroundTruthStep(
                action=kind, choice=int(rec["Choice"]), tag=str(rec["tag"]),
                label=_html_label(sol["action_element"]), text=rec.get("Input"),
                direction=str(details.get("direction") or "down").lower() if kind == "scroll" else None,
                html=str(rec.get("State") or ""),
            ))
        out.append((name, tasks[name]["task"], steps))
    return out


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


class ScriptWriter:
    """Maps recorded actions to document elements (see the module docstring)."""

    def __init__(self, document: AppDocument, app_dir: Path) -> None:
        self.document = document
        self.app_dir = app_dir
        self.grounder = Grounder(document)

    def tree(self, tag: str) -> UITree | None:
        path = self.app_dir / "states" / f"state_{tag}.json"
        if not path.is_file():
            return None
        return parse_droidbot_state(json.loads(path.read_text(encoding="utf-8")))

    def write(self, name: str, task: str, steps: list[GroundTruthStep]) -> TaskScript:
        script = TaskScript(task, name, steps)
        screen: str | None = None
        for step in steps:
            tree = self.tree(step.tag)
            if tree is None or tree.get(step.choice) is None:
                # the raw views of this state were not kept: read the trace's HTML rendering
                line = self._line_from_html(step, screen)
                html_tree = self._html_tree(step) if line is None else None
                if html_tree is not None and html_tree.get(step.choice) is not None:
                    # a document whose identifiers are written for dumps (a built one): run them
                    # on the HTML read back into views
                    screen = self.grounder.identify_screen(html_tree).name or screen
                    line = self._line(step, html_tree, screen)
                if line is not None:
                    script.lines.append(line)
                elif not self._on_screen(script, step, None, f"no document element finds view {step.choice} in "
                                                                 f"the recorded HTML of state {step.tag}"):
                    script.unmapped.append(f"{step.action} on view {step.choice}: no document element finds it "
                                           f"in the recorded HTML of state {step.tag}")
                continue
            package = tree.node(step.choice).package or tree.package
            if package and package != self.document.app.package:
                # another app's screen (a permission prompt, the app the recorded one handed over
                # to): the document's element when the document surely describes that screen (a
                # camera's document, the gallery's viewer it opens), else the view by its text: an
                # element of a screen that only resembles it is a look-alike of the app's own
                match = self.grounder.identify_screen(tree)
                here = match.name if match.confident else None
                line = self._line(step, tree, here) if here else None
                if line is not None and all(n.startswith(f"{here}__") for n in re.findall(r"\$(\w+)", line)):
                    screen = here
                    script.lines.append(line)
                elif not self._on_screen(script, step, tree, f"on {package}'s screen"):
                    script.unmapped.append(f"{step.action} on view {step.choice} of {package}: it shows no text")
                elif not _is_home(package):
                    script.packages.append(package)
                continue
            screen = self.grounder.identify_screen(tree).name or screen
            line = self._line(step, tree, screen)
            if line is not None:
                script.lines.append(line)
            elif not self._on_screen(script, step, tree, f"no document element finds view {step.choice}"):
                script.unmapped.append(f"{step.action} {step.label!r}: no document element finds view {step.choice}")
        return script

    def _on_screen(self, script: TaskScript, step: GroundTruthStep, tree: UITree | None, why: str) -> bool:
        """Write ``step`` as screen-level actions on the acted view's text or description
        (``tap_text("Allow")``; typed text: the field tapped by its text or hint, then
        ``type_text``); False when the
        view shows nothing to find it by. The tokens the step's tap needs go to ``script.allow``."""
        node = tree.node(step.choice) if tree is not None else None
        shown = ((node.text or "").strip() or (node.content_desc or "").strip()) if node is not None else ""
        label = shown or step.label
        if step.action == "scroll":
            script.lines.append(f"scroll_screen({_literal(step.direction or 'down')})")
        elif not label:
            return False
        elif step.action == "input_text":
            script.lines += [f"tap_text({_literal(label)})", f"type_text({_literal(step.text or '')})"]
        else:
            script.lines.append(f"{'long_tap_text' if step.action == 'long_click' else 'tap_text'}({_literal(label)})")
        script.on_screen.append(f"{step.action} {label or step.direction!r} as a screen-level action: {why}")
        if tree is not None and step.action in ("click", "long_click"):
            script.allow.extend(_sensitive_tokens(self.document, tree, step.choice)[:1])
        return True

    def _line(self, step: GroundTruthStep, tree: UITree, screen: str | None) -> str | None:
        element = self._element_for(tree, step.choice, screen, step)
        found = None
        if element is not None and screen is not None and element.screen != screen and step.action != "scroll":
            # an element of another screen that finds the view is a look-alike's (an export
            # dialog's checkbox where the alignment dialog shows its choices): an item of a list
            # of the screen shown is the view itself
            found = self._item_for(tree, step.choice, screen)
            if found is not None and found[0].screen != screen:
                found = None
        if element is not None and found is None:
            if step.action == "input_text":
                return f"${element.name}.set_text({_literal(step.text or '')})"
            if step.action == "scroll":
                return f"${element.name}.scroll({_literal(step.direction or 'down')})"
            verb = "long_tap" if step.action == "long_click" else "tap"
            return f"${element.name}.{verb}()"
        if step.action == "scroll":
            return None
        found = found or self._item_for(tree, step.choice, screen)
        if found is None:
            return None
        lst, item, index = found
        verb = "long_tap" if step.action == "long_click" else "tap"
        label = step.label or node_text(tree, item)
        if label:
            return f"${lst.name}.match({_literal(label)}).{verb}()"
        return f"${lst.name}[{index}].{verb}()"

    def _line_from_html(self, step: GroundTruthStep, screen: str | None) -> str | None:
        """``_line`` on the trace's HTML: identifiers evaluated with lxml, ids are the views' ids."""
        if not step.html:
            return None
        root = etree.fromstring(step.html.encode("utf-8"), etree.XMLParser(recover=True))
        if root is None:
            return None
        verb = {"input_text": "set_text", "long_click": "long_tap", "scroll": "scroll"}.get(step.action, "tap")
        best: tuple[tuple[int, ...], Element] | None = None
        lists: list[tuple[tuple[int, ...], Element]] = []
        for element in self.document.elements:
            if element.item_of:
                continue
            for index, ident in enumerate(element.identifiers):
                if ident.dialect is not Dialect.HTML:
                    continue
                try:
                    hits = [h for h in root.xpath(ident.xpath) if isinstance(h, etree._Element)]
                except etree.XPathError:
                    continue
                if not hits:
                    continue
                ids = [h.get("id") for h in hits]
                rank = (0 if element.screen == screen else 1, _PREFERRED.get(element.kind, 3), index)
                if element.is_list:
                    if len(hits) == 1 and any(str(step.choice) == d.get("id") for d in hits[0].iter()):
                        lists.append((rank, element))
                elif ids == [str(step.choice)] and (best is None or rank < best[0]):
                    best = (rank, element)
                break
        if best is not None:
            element = best[1]
            if verb == "set_text":
                return f"${element.name}.set_text({_literal(step.text or '')})"
            if verb == "scroll":
                return f"${element.name}.scroll({_literal(step.direction or 'down')})"
            return f"${element.name}.{verb}()"
        if lists and step.label and verb in ("tap", "long_tap"):
            return f"${min(lists, key=lambda r: r[0])[1].name}.match({_literal(step.label)}).{verb}()"
        return None

    def _html_tree(self, step: GroundTruthStep) -> UITree | None:
        """The trace's HTML rendering of the step's state as views (see ``_tree_from_html``)."""
        if not step.html:
            return None
        root = etree.fromstring(step.html.encode("utf-8"), etree.XMLParser(recover=True))
        if root is None:
            return None
        return _tree_from_html(root, self.document.app.package, self._full_ids)

    @functools.cached_property
    def _full_ids(self) -> dict[str, str]:
        """Full resource ids the document's identifiers name, by their part after ``/`` (those
        with one full form only): the HTML keeps the short part."""
        found: dict[str, set[str]] = {}
        for element in self.document.elements:
            for ident in element.identifiers:
                for full in _RESOURCE_ID.findall(ident.xpath):
                    found.setdefault(full.partition(":id/")[2], set()).add(full)
        return {short: next(iter(full)) for short, full in found.items() if short and len(full) == 1}

    def _unique_hit(self, element: Element, tree: UITree) -> tuple[UINode, int] | None:
        """The single view the element's first hitting identifier finds, and that identifier's index."""
        view = self.grounder.view(tree)
        for index, ident in enumerate(element.identifiers):
            try:
                hits = evaluate(ident, view)
            except TapirError:
                continue
            if len(hits) == 1:
                return hits[0], index
            if hits:
                continue
        return None

    def _element_for(self, tree: UITree, choice: int, screen: str | None, step: GroundTruthStep) -> Element | None:
        best: tuple[tuple[int, ...], Element] | None = None
        owner = _clickable_owner(tree, choice)
        nested: dict[int, set[int]] = {}
        for element in self.document.elements:
            if element.is_list or element.item_of:
                continue
            if step.action == "input_text" and element.kind is not Kind.INPUT:
                continue
            if step.action == "scroll" and element.kind not in (Kind.SCROLLER, Kind.LIST):
                continue
            hit = self._unique_hit(element, tree)
            if hit is None:
                continue
            node, index = hit
            if node.id == choice:
                closeness = 0
            elif owner is not None and (node.id == owner or _clickable_owner(tree, node.id) == choice):
                closeness = 1
            elif _one_control(tree, node.id, choice):
                # a row clicked whose checkbox is the element, or the reverse
                closeness = 2 if tree.node(node.id).bounds == tree.node(choice).bounds else 3
            else:
                continue
            # the view itself and the clickable view around it are one control: the screen shown
            # decides between them (the tab "Groups" over another screen's look-alike checkbox
            # that finds its label)
            rank = (closeness if closeness >= 2 else 0, 0 if element.screen == screen else 1, closeness,
                    _PREFERRED.get(element.kind, 3), index)
            nested.setdefault(closeness, set()).add(node.id)
            if best is None or rank < best[0]:
                best = (rank, element)
        if best is not None and best[0][0] >= 2 and len(nested[best[0][0]]) > 1:
            return None  # views around the clicked one that are not the same control: none is it
        return best[1] if best else None

    def _item_for(self, tree: UITree, choice: int, screen: str | None) -> tuple[Element, UINode, int] | None:
        path = {choice, *(a.id for a in tree.ancestors(choice))}
        candidates = []
        for element in self.document.elements:
            if not element.is_list:
                continue
            hit = self._unique_hit(element, tree)
            if hit is None or hit[0].id not in path:
                continue
            items = item_nodes(tree, hit[0])
            for index, item in enumerate(items):
                if item.id in path:
                    # of two lists finding the same view, the one whose better identifier finds
                    # it (the groups list by its position, not the contacts list by its plain id)
                    rank = (0 if element.screen == screen else 1, -len(tree.ancestors(hit[0].id)), hit[1])
                    candidates.append((rank, element, item, index))
        if not candidates:
            return None
        candidates.sort(key=lambda c: c[0])
        _, element, item, index = candidates[0]
        return element, item, index


def _clickable_owner(tree: UITree, node_id: int) -> int | None:
    node: UINode | None = tree.node(node_id)
    while node is not None:
        if node.clickable or node.checkable:
            return node.id
        node = tree.parent(node.id)
    return None


def _is_home(package: str) -> bool:
    return "launcher" in package or package.endswith((".home", ".launcher"))


def _sensitive_tokens(document: AppDocument, tree: UITree, choice: int) -> list[str]:
    """The permission tokens (most specific first) that a tap on view ``choice`` of the recorded
    ``tree`` needs, as the runtime's sensitive guard judges the view a screen-level tap touches
    (the clickable view around it); none when it is not sensitive."""
    from tapir.core.safety import Safety
    from tapir.runtime.guards.sensitive import SensitiveGate
    from tapir.runtime.settle import Observation

    target = tree.node(_clickable_owner(tree, choice) or choice)
    parent = tree.parent(target.id)
    row = parent is not None and parent.scrollable and len(parent.children) > 1
    gate = SensitiveGate(document, Safety(), lambda _record: None, lambda: 0.0)
    reason = gate.reason(target, Observation(tree, None, "", tree.package, 0), element=None, item=row)
    return list(reason.tokens) if reason is not None else []


def _is_control(node: UINode) -> bool:
    return node.clickable or node.checkable or node.editable


def _one_control(tree: UITree, a: int, b: int) -> bool:
    """Whether views ``a`` and ``b`` are one control: one contains the other, and every control
    inside the outer one is the inner one or inside it (a setting's row and its checkbox; not a
    list and one of its rows)."""
    if a == b:
        return False
    if any(n.id == a for n in tree.ancestors(b)):
        outer, inner = a, b
    elif any(n.id == b for n in tree.ancestors(a)):
        outer, inner = b, a
    else:
        return False
    inside = {inner, *(n.id for n in tree.descendants(inner))}
    return all(n.id in inside for n in tree.descendants(outer) if _is_control(n))


#: ``@resource-id='org.x:id/y'`` in an identifier.
_RESOURCE_ID = re.compile(r"""@resource-id\s*=\s*["']([^"']+:id/[^"']+)["']""")
#: HTML tags for described views (see ``tapir.hierarchy.html``), as the flags that give them.
_HTML_FLAGS = {"button": {"clickable": True}, "checkbox": {"checkable": True, "clickable": True},
               "input": {"editable": True, "clickable": True}, "scrollbar": {"scrollable": True}}
_HTML_CLASSES = {"button": "android.widget.Button", "checkbox": "android.widget.CheckBox",
                 "input": "android.widget.EditText", "scrollbar": "android.widget.ScrollView",
                 "p": "android.widget.TextView"}


def _tree_from_html(root: etree._Element, package: str, full_ids: dict[str, str]) -> UITree | None:
    """AutoDroid-V2's HTML of a recorded screen read back into views, for a trace state whose
    raw views were not kept: ids are the HTML's ``id`` (DroidBot's temp ids), flags come from the
    tag, resource ids are completed from the document (``full_ids``) or the app's package, and
    each view gets a slice of its parent's box (the HTML has no bounds; nesting is what counts)."""
    from tapir.hierarchy.parse import parse_view_list

    views: list[dict[str, object]] = []

    def add(element: etree._Element, parent: int | None, box: tuple[int, int, int, int]) -> int | None:
        if not isinstance(element.tag, str) or not (element.get("id") or "").isdigit():
            return None
        vid = int(element.get("id") or 0)
        tag = element.tag
        short = element.get("resource_id") or ""
        view: dict[str, object] = {
            "temp_id": vid, "parent": parent, "class": _HTML_CLASSES.get(tag, f"android.widget.{tag}"),
            "resource_id": full_ids.get(short, f"{package}:id/{short}") if short else "",
            "text": (element.text or "").strip() if tag in _HTML_CLASSES else "",
            "content_description": element.get("alt") or "", "package": package,
            "checked": element.get("status") == "selected", "selected": element.get("status") == "selected",
            "bounds": [[box[0], box[1]], [box[2], box[3]]], **_HTML_FLAGS.get(tag, {}),
        }
        views.append(view)
        kids = [k for k in element if isinstance(k.tag, str)]
        step = (box[3] - box[1]) // max(1, len(kids))
        view["children"] = [c for i, k in enumerate(kids)
                            if (c := add(k, vid, (box[0], box[1] + i * step, box[2], box[1] + (i + 1) * step)))
                            is not None]
        return vid

    if add(root, None, (0, 0, 1080, 2400)) is None:
        return None
    try:
        return parse_view_list(views)
    except TapirError:
        return None


def performed_actions(trace_path: Path) -> list[str]:
    """The runtime's action log in a trace file, rendered as the metric renders agent actions."""
    return action_log(read_trace(trace_path))


#: Script calls the upstream metric counts, as the recorded action each performs: element
#: actions and screen-level ones (``type_text`` types into the field tapped before it).
_LOGGED_CALLS = {"tap": "click", "long_tap": "long_click", "set_text": "input_text", "tap_text": "click",
                 "long_tap_text": "long_click", "tap_at": "click", "type_text": "input_text"}


def action_log(records: Iterable[dict[str, Any]]) -> list[str]:
    """The actions among trace records (script calls and navigation steps that were carried out),
    rendered as the metric renders agent actions; scrolls and reads are left out."""
    out = []
    tapped = ""  # the label of the last tap: the field that ``type_text`` types into
    for r in records:
        if r.get("event") == "action" and r.get("ok") and r.get("call") in _LOGGED_CALLS:
            args = r.get("args") or {}
            action = "long_click" if r["call"] == "tap_at" and args.get("long") else _LOGGED_CALLS[r["call"]]
            label = r.get("label") or (tapped if r["call"] == "type_text" else "")
            rendered = render_action(action, label, args.get("text"))
            if action == "click":
                tapped = label
        elif r.get("event") == "navigation" and r.get("action") in ("tap", "long_tap", "set_text"):
            action = {"tap": "click", "long_tap": "long_click", "set_text": "input_text"}[r["action"]]
            rendered = render_action(action, r.get("label") or "", r.get("text_typed"))
        else:
            continue
        if rendered:
            out.append(rendered)
    return out


def replay_apps(folder: Path) -> list[str]:
    """Apps of a DroidTask folder with a recording (states and events), with or without a document."""
    base = folder / "apps"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "states").is_dir() and (p / "events").is_dir())


def built_documents_dir() -> Path:
    """Where documents built from recordings are kept: ``$TAPIR_CACHE_DIR/documents``, else
    ``$XDG_CACHE_HOME/tapir/documents``, else ``~/.cache/tapir/documents``."""
    base = os.environ.get("TAPIR_CACHE_DIR")
    if base:
        return Path(base) / "documents"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tapir" / "documents"


#: The packages whose code decides what a built document holds (the builder and the hierarchy
#: parsing and queries it runs on recordings).
_BUILDER_PACKAGES = ("docgen", "hierarchy")


@functools.cache
def builder_fingerprint(root: Path | None = None) -> str:
    """A digest of the document builder's code: Tapir's version and every source file of the
    packages in ``_BUILDER_PACKAGES`` under ``root`` (Tapir's own by default). It is part of a built
    document's cache name, so that a change to the builder rebuilds the document."""
    import tapir

    base = root if root is not None else Path(tapir.__file__).parent
    digest = hashlib.sha256(tapir.__version__.encode())
    for package in _BUILDER_PACKAGES:
        for f in sorted((base / package).rglob("*.py")):
            digest.update(f.relative_to(base).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def document_for(app_dir: Path, package: str) -> tuple[AppDocument, Path, bool]:
    """The app's document, the file it was read from, and whether it was built from the recording
    (the app has no ``doc.json``). A built document is written to ``built_documents_dir()`` under a
    name that changes with the recording and with the builder's code (``builder_fingerprint``), so
    it is built once per recording and builder."""
    upstream = app_dir / "doc.json"
    if upstream.is_file():
        return import_document(app_dir, package), upstream, False
    from tapir.docgen.build import document_from_recording

    digest = hashlib.sha256(builder_fingerprint().encode())
    for sub in ("states", "events"):
        for f in sorted((app_dir / sub).glob("*.json")):
            digest.update(f"{sub}/{f.name}:{f.stat().st_size}".encode())
    path = built_documents_dir() / f"{app_dir.name}-{digest.hexdigest()[:12]}.yaml"
    if not path.is_file():
        text, _ = document_from_recording(app_dir, package)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # two runs building at once each write whole files
    result = loads_document(path.read_text(encoding="utf-8"), source=str(path))
    if result.document is None:
        raise DocumentError(f"the document built from {app_dir} does not load", list(result.errors))
    return result.document, path, True


def difficulty_of(ground_truth_steps: int) -> str:
    """DroidTask has no levels; its tasks are banded by ground-truth length (39, 65 and 36 of 140)."""
    if ground_truth_steps <= 2:
        return "easy"
    return "medium" if ground_truth_steps <= 4 else "hard"


def load_droidtask_suite(tasks_json: Path, apps_only: Iterable[str] | None = None) -> Suite:
    """The replay suite of a DroidTask folder (see the module docstring); ``apps_only``: of these
    apps only (``tapir synth --droidtask --app``: the others' documents are not even read)."""
    from tapir.sim.replay import ReplayApp

    folder = tasks_json.parent
    try:
        listed = json.loads(tasks_json.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the DroidTask tasks {tasks_json}: {exc}") from None
    if not isinstance(listed, dict) or not all(isinstance(v, dict) for v in listed.values()):
        raise UsageError(f"{tasks_json} is not a DroidTask tasks.json ({{app: {{taskN.yaml: {{task, solution}}}}}})")
    playable = set(replay_apps(folder))
    if apps_only is not None:
        wanted = set(apps_only)
        unknown = sorted(wanted - set(listed))
        if unknown:
            raise UsageError(f"{tasks_json} has no app {', '.join(unknown)} (it has {', '.join(sorted(listed))})")
        listed = {app: tasks for app, tasks in listed.items() if app in wanted}
    unplayable = [app for app in listed if app not in playable]
    notes = [f"skipped {len(unplayable)} app(s) without a recording (apps/APP/states, events) to replay: "
             f"{', '.join(unplayable)}"] if unplayable else []
    apps: dict[str, AppSpec] = {}
    tasks: list[Task] = []
    data = [tasks_json.read_bytes()]
    built: list[str] = []
    for app in sorted(playable & set(listed)):
        app_dir = folder / "apps" / app
        document, path, was_built = document_for(app_dir, ReplayApp(app_dir).package)
        if was_built:
            built.append(f"{app} ({path})")
        data.append(path.read_bytes())
        writer = ScriptWriter(document, app_dir)
        app_tasks: list[Task] = []
        handed_to: list[str] = []
        for name, text, steps in load_tasks(folder, app):
            script = writer.write(name, text, steps)
            handed_to += script.packages
            stem = name.removesuffix(".yaml")
            expected = tuple(s.rendered for s in steps if s.rendered)
            app_tasks.append(Task(
                id=f"{app}/{stem}", app=app, text=text, difficulty=difficulty_of(len(steps)),
                steps=len(expected) or None, reference=script.source, reference_file=f"{app}/{stem}.tap",
                setup=None, checks=(), actions=expected, where=Location(str(app_dir / "traces" / name)),
                notes=(*(f"reference incomplete: {u}" for u in script.unmapped),
                       *(f"reference step {u}" for u in script.on_screen)),
                # the recorded person did these: the task allows its own ground-truth elements
                # (a warning dialog's OK among them) and screen-level taps, nothing more
                allow=tuple(dict.fromkeys([*re.findall(r"\$(\w+__\w+)", script.source), *script.allow])),
                # the replay starts where the task's trace starts and prefers its recorded outcomes
                device=f"sim:{app_dir.resolve()}#{stem}",
            ))
        if handed_to:
            # the recording shows the app handing over to these apps (the dialer opening the
            # contacts app's editor): a run of the app may be in them, as the recorded person was
            packages = tuple(dict.fromkeys((*document.app.allow_apps, *handed_to)))
            document = dataclasses.replace(document, app=dataclasses.replace(document.app, allow_apps=packages))
            notes.append(f"{app}: the recorded tasks go on in {', '.join(dict.fromkeys(handed_to))}; the app's "
                         "document allows them (app.allow_apps)")
        apps[app] = AppSpec(app, document, f"sim:{app_dir.resolve()}", str(path))
        tasks += app_tasks
    if built:
        notes.append(f"built {len(built)} document(s) from the recording (no doc.json): {', '.join(built)}")
    if not tasks:
        raise UsageError(f"{tasks_json}: no DroidTask app here has a recording to replay "
                         "(each app needs apps/APP/states and events beside tasks.json)")
    return Suite(name=f"droidtask-replay ({', '.join(apps)})", path=str(tasks_json), kind="droidtask", apps=apps,
                 tasks=tuple(tasks), notes=tuple(notes), digest=suite_digest(tasks, data))


__all__ = ["GroundTruthStep", "ScriptWriter", "TaskScript", "action_log", "builder_fingerprint", "built_documents_dir",
           "difficulty_of",
           "document_for", "import_document",
           "load_droidtask_suite", "load_tasks", "performed_actions", "render_action", "replay_apps"]
