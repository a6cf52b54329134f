"""A person's actions written as a Tapir script, each grounded to a document element.

    recorder = ScriptRecorder(runtime, output=Path("play.tap"), doc_path=Path("music.yaml"))
    recorder.tap(obs, node)                 # $songs_screen__song_list.match("Lanterns").tap()
    recorder.typed(obs, field, "milk")      # $notes_screen__title_input.set_text("milk")
    recorder.scroll(obs, node, "down")      # $songs_screen__song_list.scroll("down")
    recorder.key("back")                    # back()
    recorder.script()                       # the script so far; ``save()`` writes it (after every action)

``obs`` is the dump the person acted on (the screen *before* the action). A touch is written for
the element the runtime would touch the same way: an element claims a touch when tapping it as
``tapir run`` does (its grounded view, at the point ``ActionChecks.tap_point`` picks) lands on the
view that received the person's touch (the touched view, or its nearest ancestor that takes
touches). So a tap on a song's title is ``$song_list.match("Lanterns").tap()`` (the row takes the
touch), a tap on the row's menu button is ``$song_list.match("Lanterns").tap($song_more_button)``
when the document has that child element, and nothing at all when it does not: tapping the row
would not do what the person did. A list item is named by ``match()`` with the first of its texts
that the grounder maps back to that item exactly (the list's ``options`` first); an item with no
such text is named by its position on the screen, with a comment saying that is fragile.

An action on a view no element claims is written as comments: what was touched and the
identifiers ``tapir inspect`` would write for it (unique ones first), so the element can be added
to the document (from the inspector's page) and the line recorded again. The elements of the
screen identified on the dump are tried first, then those of the other screens.

Consecutive ``set_text`` into one field keep the last text. A comment names the document screen
each time it changes, so the script reads as a walk through the app.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tapir.core.document import AppDocument, Element
from tapir.core.errors import TapirError
from tapir.dsl.api import Kind
from tapir.hierarchy.model import UINode, UITree
from tapir.inspector.files import write_atomic
from tapir.inspector.screen import node_at, receiver
from tapir.inspector.views import checked_identifiers
from tapir.runtime.screen_elements import describe_node
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.session_model import editable_node
from tapir.runtime.settle import Observation

__all__ = ["RecordedStep", "ScriptRecorder", "tapir_string"]

#: Identifiers suggested in the comment of an unclaimed action.
SUGGESTED_IDENTIFIERS = 3


def tapir_string(text: str) -> str:
    """A Tapir (Python) string literal for ``text``."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class RecordedStep:
    """One recorded action: its statement (None when no element claims it: comments only)."""

    action: str
    statement: str | None
    comments: tuple[str, ...] = ()
    element: str | None = None
    screen: str | None = None
    #: For set_text: the field's key, so that typing more replaces the step.
    field: str | None = None

    def lines(self) -> list[str]:
        return [f"# {c}" if c else "#" for c in self.comments] + ([self.statement] if self.statement else [])


@dataclass(frozen=True)
class _Target:
    """Something a statement can touch: an element, a list's item, or a child element in an item."""

    element: Element
    node: UINode
    ref: str
    child: str | None = None
    #: How sure the reference is (a position instead of a match() is fragile).
    note: str | None = None


@dataclass
class ScriptRecorder:
    """Recorded steps and the script they make (see the module docstring)."""

    runtime: DeviceRuntime
    output: Path | None = None
    doc_path: Path | None = None
    device: str = ""
    steps: list[RecordedStep] = field(default_factory=list)
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M"))

    @property
    def document(self) -> AppDocument:
        return self.runtime.document

    def bind(self, runtime: DeviceRuntime) -> None:
        """Go on with another runtime (the document was edited and reloaded)."""
        self.runtime = runtime

    # -- actions -----------------------------------------------------------------------------

    def tap(self, obs: Observation, node: UINode, *, long: bool = False) -> RecordedStep:
        """A tap (or long tap) on ``node`` of ``obs``."""
        action = "long_tap" if long else "tap"
        tree = obs.tree
        touched = receiver(tree, node)
        screen = self._screen(tree)
        target = self._claiming(obs, touched)
        if target is None:
            return self._add(self._unclaimed(action, tree, touched, screen))
        call = f"{target.ref}.{action}({target.child or ''})"
        comments = (target.note,) if target.note else ()
        return self._add(RecordedStep(action, call, comments, target.element.name, screen))

    def typed(self, obs: Observation, field_node: UINode, text: str) -> RecordedStep:
        """``text`` is now what the field ``field_node`` of ``obs`` holds (typed, or typed over)."""
        tree = obs.tree
        screen = self._screen(tree)
        key = f"{field_node.resource_id}|{field_node.bounds}"
        target = None
        for t in self._targets(tree, screen):
            if t.child is None and t.element.kind is Kind.INPUT and not t.element.item_of and (
                    t.node.id == field_node.id or getattr(editable_node(tree, t.node), "id", None) == field_node.id):
                target = t
                break
        if target is None:
            step = self._unclaimed("set_text", tree, field_node, screen, text=text)
            step = RecordedStep(step.action, None, step.comments, None, screen, key)
        else:
            step = RecordedStep("set_text", f"{target.ref}.set_text({tapir_string(text)})", (),
                                target.element.name, screen, key)
        if self.steps and self.steps[-1].action == "set_text" and self.steps[-1].field == key:
            self.steps[-1] = step
            self.save()
            return step
        return self._add(step)

    def scroll(self, obs: Observation, x: int, y: int, direction: str) -> RecordedStep:
        """A swipe that started at (x, y), moving the content ``direction`` (``down``: the finger
        went up, showing what is below)."""
        tree = obs.tree
        screen = self._screen(tree)
        best: _Target | None = None
        for t in self._targets(tree, screen):
            if t.child is None and t.element.kind in (Kind.LIST, Kind.SCROLLER) and t.ref == f"${t.element.name}" \
                    and t.node.bounds.contains(x, y):
                if best is None or t.node.bounds.area < best.node.bounds.area:
                    best = t
        if best is None:
            at = node_at(tree, x, y)
            shown = describe_node(receiver(tree, at)) if at is not None else "no view"
            return self._add(RecordedStep("scroll", None, (
                f"swipe {direction} at ({x}, {y}) on {shown}: no list or scroller of the document is there",),
                None, screen))
        return self._add(RecordedStep("scroll", f"{best.ref}.scroll({tapir_string(direction)})", (),
                                      best.element.name, screen))

    def key(self, name: str) -> RecordedStep:
        """A key: ``back`` and ``enter`` are statements; others (home, app switch) comments."""
        if name in ("back", "enter"):
            return self._add(RecordedStep(name, f"{name}()"))
        return self._add(RecordedStep(name, None, (f"{name.upper()} pressed: the script cannot press it; "
                                                   "the next element used brings the app back",)))

    # -- the script --------------------------------------------------------------------------

    @property
    def actions(self) -> int:
        return len(self.steps)

    def script(self) -> str:
        """The script recorded so far: ``# doc:`` first, then every step."""
        lines: list[str] = []
        if self.doc_path is not None:
            doc = self.doc_path.resolve()
            base = (self.output.resolve().parent if self.output is not None else Path.cwd())
            try:
                shown = os.path.relpath(doc, base)
            except ValueError:  # another drive (Windows)
                shown = str(doc)
            lines.append(f"# doc: {shown}")
        counted = sum(1 for s in self.steps if s.statement)
        unclaimed = len(self.steps) - counted
        where = f" on {self.device}" if self.device else ""
        lines.append(f"# Recorded with `tapir record`{where}, {self.started}: {counted} "
                     f"statement{'s' if counted != 1 else ''}"
                     + (f", {unclaimed} action{'s' if unclaimed != 1 else ''} no element claims "
                        "(as comments)" if unclaimed else "") + ".")
        screen = None
        for step in self.steps:
            if step.screen and step.screen != screen:
                lines.append("")
                lines.append(f"# {step.screen}")
                screen = step.screen
            lines += step.lines()
        return "\n".join(lines) + "\n"

    def save(self) -> None:
        """Write the script to ``output`` (atomically), if there is one."""
        if self.output is None:
            return
        write_atomic(self.output, self.script())

    def _add(self, step: RecordedStep) -> RecordedStep:
        self.steps.append(step)
        self.save()
        return step

    # -- grounding the action ----------------------------------------------------------------

    def _screen(self, tree: UITree) -> str | None:
        return self.runtime.grounder.identify_screen(tree).name

    def _targets(self, tree: UITree, screen: str | None) -> Iterator[_Target]:
        """What statements can touch on ``tree``: the identified screen's elements first."""
        doc = self.document
        order = [s for s in doc.screens if s.name == screen] + [s for s in doc.screens if s.name != screen]
        grounder = self.runtime.grounder
        for scr in order:
            children: dict[str, list[Element]] = {}
            for el in scr.elements:
                if el.item_of:
                    children.setdefault(el.item_of, []).append(el)
            for el in scr.elements:
                if el.item_of:
                    continue
                try:
                    g = grounder.ground(el.name, tree)
                except TapirError:
                    continue
                if g is None:
                    continue
                yield _Target(el, g.node, f"${el.name}")
                if not el.is_list:
                    continue
                try:
                    items = grounder.items(el.name, tree)
                except TapirError:
                    continue
                for i, item in enumerate(items):
                    ref, note = self._item_ref(el, items, item, i, tree)
                    for child in children.get(el.name, []):
                        gc = grounder.child(el.name, child.name, item, tree)
                        if gc is not None:
                            yield _Target(child, gc.node, ref, f"${child.name}", note)
                    yield _Target(el, item, ref, None, note)

    def _item_ref(self, el: Element, items: list[UINode], item: UINode, index: int, tree: UITree
                  ) -> tuple[str, str | None]:
        """``$list.match("text")`` naming ``item``, else ``$list[i]`` with a warning."""
        texts: list[str] = []
        for n in (item, *tree.descendants(item.id)):
            for t in (n.text, n.content_desc):
                t = " ".join(t.split())
                if t and len(t) <= 80 and t not in texts:
                    texts.append(t)
        options = [o for o in el.options if o in texts]
        grounder = self.runtime.grounder
        fallback = None
        for query in options + [t for t in texts if t not in options]:
            g = grounder.match_item(el.name, items, tree, query)
            if g is None or g.node.id != item.id:
                continue
            if g.method in ("exact", "attributes", "identifier"):
                return f"${el.name}.match({tapir_string(query)})", None
            fallback = fallback or query
        if fallback is not None:
            return f"${el.name}.match({tapir_string(fallback)})", None
        return (f"${el.name}[{index}]",
                f"item {index} of the items on the screen when recorded: a position is fragile "
                "(it counts from the top of the whole list)")

    def _claiming(self, obs: Observation, touched: UINode) -> _Target | None:
        """The target whose tap lands on ``touched``, the most specific first."""
        tree = obs.tree
        tap_point = self.runtime.checks.tap_point
        best: tuple[tuple[int, int, int], _Target] | None = None
        screen = self._screen(tree)
        for t in self._targets(tree, screen):
            if t.element.is_list and t.ref == f"${t.element.name}":
                continue  # the list as a whole is scrolled, not tapped
            try:
                x, y = tap_point(t.node, obs)
            except (TapirError, ValueError):
                continue
            hit = node_at(tree, x, y)
            if hit is None or receiver(tree, hit).id != touched.id:
                continue
            rank = (0 if t.node.id == touched.id else 1, 0 if t.element.screen == screen else 1, t.node.bounds.area)
            if best is None or rank < best[0]:
                best = (rank, t)
        return best[1] if best is not None else None

    def _unclaimed(self, action: str, tree: UITree, node: UINode, screen: str | None, *,
                   text: str | None = None) -> RecordedStep:
        what = f"{action} {tapir_string(text)} into" if text is not None else action
        comments = [f"{what} {describe_node(node)}: no element of the document claims this view"]
        idents = [i for i in checked_identifiers(tree, node) if i["unique"]][:SUGGESTED_IDENTIFIERS]
        if idents:
            comments.append("identifiers for it (add it with `tapir inspect`, then record this step again):")
            comments += [f"  {i['xpath']}" for i in idents]
        else:
            comments.append("no identifier selects just this view on this screen")
        return RecordedStep(action, None, tuple(comments), None, screen)
