"""The code-generation prompt, after AutoDroid-V2 (section 3.2.1, Listing 2, and section 3.3.2).

A prompt is a system message (the instruction) and a user message in two parts:

* the **prefix**, the same for every task on one document: the language's API (printed from the
  registry), the document's elements by screen (name, kind, a short description, options,
  where they lead, a list's item children), usage notes, the answer format and the document's
  standing examples. Its model state is computed once and reused (``tapir.codegen.prefix_cache``);
* the **rest**, per task: examples retrieved for this task, the current screen (when a device is
  connected), the task, and in a repair round the failed script with its error.

A small example pool (the hand-written ones) fits in the prefix whole, where it costs nothing per
task; from a larger pool (synthesised pairs) the most similar examples are retrieved per task and
placed after the prefix, so that it stays cacheable. Retrieved examples are ordered by their place
in the pool (not by score), so two tasks that retrieve the same examples share them too.

    p = build_prompt(doc, "Play the song Lanterns", examples=[...], screen=None)
    p.system, p.prefix, p.rest

``PROMPT_VERSION`` names this layout; it is part of the prefix cache's key (through the prefix
text), so changing the layout means a new version.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tapir.codegen import language as L
from tapir.codegen.examples import Example

__all__ = ["PROMPT_STYLES", "PROMPT_VERSION", "Prompt", "RepairNote", "ScreenInfo", "build_prompt", "relevant_screens",
           "render_prefix", "render_screens", "render_summary_prefix", "task_words"]

#: ``auto``: the largest form that fits the model's context (``described``, else ``names``, else
#: ``focused``); ``described``: every element with its description; ``names``: the paper's
#: compressed form; ``focused``: a cached summary of every screen, then the elements of the screens
#: relevant to the task only (after the cached part, so the prefix stays the same for every task).
PROMPT_STYLES = ("auto", "described", "names", "focused")

PROMPT_VERSION = "7"

SYSTEM = (
    "Imagine that you are an agent using a smartphone to complete a task. You need to write scripts to "
    "manipulate the GUI elements in the app. You cannot see the screen: the script is run for you."
)

_ANSWER = """Answer in exactly this format:
Plan: <a one-line, high-level plan>
Elements: <the elements the script uses, e.g. $screen__element, $screen__other>
```python
<the script>
```"""

_RULES = "\n".join([
    "Rules:",
    "- Write an element as $ and its name. An element is not a value: call a method on it, or use a list in "
    "`for`, `len()`, `[index]` or `.match()`.",
    "- The runtime finds each element's screen by itself (it taps through the app), so the script only names "
    "the elements the task needs, in order.",
    "- Items of a list are reached with `$list[index]`, `$list.match(\"text\")` or `for item in $list:`; act on "
    "a part of one item by passing a child element: `item.tap($child)`, `item.get_text($child)`.",
    "- `print()` what the task asks to find out.",
])

#: What a small model needs said (it otherwise lists a screen's elements, a tap each); left out
#: of the smallest prompt only (``render_summary_prefix(shape=False)``, a context too small).
_STEP_RULES = [
    "- Write only the steps the task needs, usually one to six: never go through a screen's elements one by one.",
    "- Type a text the task gives (a title, a name, a search, a new item) with `set_text`, and end a form or "
    "dialog with its confirming button (Save, OK).",
    # PROMPT_VERSION 3 said "pick an item by its text with .match()" and nothing more: the model
    # then matched items that do not exist yet ("add Butter") and states ("on") as texts.
    "- Pick an item a list or menu already shows by its text with `.match(\"text\")`; items chosen by their "
    "state (on, off, checked) or all of them are visited with `for item in $list:` and "
    "`item.get_attributes($child)[\"checked\"]`.",
]

#: How an answer looks, for a document without examples of its own: a made-up app, so that its
#: element names (which the answer grammar refuses) cannot be copied, only the shape of a script
#: that names few elements, types what the task gives, picks an item by its text and saves.
_SHAPE = """For example, in a notes app (not this one), for the task "Add the note 'milk' to the list Shopping and \
save it":
Plan: open the list Shopping, add a note, type milk, save it
Elements: $lists_screen__lists, $list_screen__add_button, $note_screen__text_input, $note_screen__save_button
```python
$lists_screen__lists.match("Shopping").tap()
$list_screen__add_button.tap()
$note_screen__text_input.set_text("milk")
$note_screen__save_button.tap()
```"""

#: Said again right before the task, after the (long) list of elements: a small model otherwise
#: goes on listing them, one `.tap()` each.
_REMINDER = ("Write the script for this task only: the few elements it needs, in order (not every element of a "
             "screen), with `set_text` for a text it gives and `.match()` for an item the list already shows.")


@dataclass(frozen=True)
class ScreenInfo:
    """The screen a device shows: its document name (None if unknown) and the elements found on it."""

    name: str | None
    elements: tuple[str, ...] = ()
    #: Visible texts, for a screen the document does not know.
    texts: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.name is None:
            shown = ", ".join(repr(t) for t in self.texts[:12])
            return f"a screen the document does not describe{': ' + shown if shown else ''}"
        els = ", ".join(f"${e}" for e in self.elements) or "none of its elements were found"
        return f"{self.name}, showing {els}"


@dataclass(frozen=True)
class RepairNote:
    """What a repair round tells the model about the previous script."""

    script: str
    category: str
    message: str
    line: int | None
    source_line: str | None
    screen: ScreenInfo | None


@dataclass(frozen=True)
class Prompt:
    system: str
    prefix: str
    rest: str
    #: A readable name of the prefix for cache files: ``<app>-p<version>``.
    label: str

    @property
    def text(self) -> str:
        return f"{self.system}\n\n{self.prefix}{self.rest}"


def _api_lines() -> list[str]:
    out = []
    for m in L.element_methods():
        kinds = set(m.kinds)
        only = "" if kinds == set(L.Kind) else " Only on " + ", ".join(sorted(k.value for k in kinds)) + "."
        receiver = "$list" if kinds <= set(L.LIST_KINDS) else "$element"
        out.append(f"- {m.signature(receiver)}: {m.doc}{only}")
    for g in L.global_functions():
        out.append(f"- {g.signature(None)}: {g.doc}")
    out.append("- $list[index] -> element; len($list) -> int; for item in $list: ... (items, from the top; "
               "the list scrolls as needed)")
    out.append("- Builtins: " + ", ".join(L.builtins()) + "; str, list and dict methods as in Python.")
    return out


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _element_line(doc: L.AppDocument, e: L.Element, style: str) -> str:
    kind = e.kind.value
    if e.item_of:
        kind = f"child of ${e.item_of}"
    if style == "names":
        return f"- ${e.name} ({kind})"
    parts = [f"- ${e.name} ({kind}): {_short(e.description)}"]
    if e.options:
        shown = ", ".join(repr(o) for o in e.options[:10])
        parts.append(f"Options: {shown}{', ...' if len(e.options) > 10 else ''}.")
    if e.kind in L.LIST_KINDS:
        kids = [c for c in doc.elements if c.item_of == e.name]
        if kids:
            parts.append("Item children: " + ", ".join(f"${c.name}" for c in kids) + ".")
    if e.effect:
        parts.append(f"Effect: {_short(e.effect, 70)}")
    elif e.leads_to:
        parts.append(f"Leads to {e.leads_to}.")
    return " ".join(parts)


def render_prefix(doc: L.AppDocument, style: str = "described", examples: Sequence[Example] = (),
                  screens: Collection[str] | None = None) -> str:
    """The document part of the prompt (``described``: with descriptions; ``names``: the paper's
    compressed form, element names only), with the standing ``examples``; ``screens``: only those
    screens' elements (a focused prompt), else every screen's."""
    lines = ["In the script, except for the common Python control flow (for, if-else, function def/calls, etc.), "
             "you can use the following APIs:"]
    lines += _api_lines()
    lines += ["", _RULES, *_STEP_RULES, "",
              f"You can use the following GUI elements of the app {doc.app.name}, screen by screen "
              f"(the app starts on {doc.app.start_screen}):"]
    for screen in doc.screens:
        if screens is not None and screen.name not in screens:
            continue
        lines.append(f"screen {screen.name}: {_short(screen.description, 100)}")
        lines += [_element_line(doc, e, style) for e in screen.elements]
    return "\n".join(lines + _closing_lines(doc, examples)) + "\n"


def _closing_lines(doc: L.AppDocument, examples: Sequence[Example], shape: bool = True) -> list[str]:
    """What every prompt ends its stable part with: the document's notes, the answer format and
    the standing examples (without any, and with ``shape``, a made-up app's answer)."""
    lines = ["", "Notes: " + " ".join(doc.notes.split())] if doc.notes else []
    lines += ["", _ANSWER, ""]
    if not examples and shape:
        lines += [_SHAPE, ""]
    if examples:
        lines.append("Examples of tasks and answers:")
        lines += [_example_block(ex) for ex in examples]
        lines.append("")
    return lines


def render_summary_prefix(doc: L.AppDocument, examples: Sequence[Example] = (), *, screen_list: bool = True,
                          shape: bool = True) -> str:
    """The stable part of a focused prompt, the same for every task on one document (so it is
    cached): the API, the rules, every screen in one line (what it is, which elements lead to it),
    the notes, the answer format and the standing examples. The elements of the screens a task
    needs follow in the per-task part (``render_screens``). ``screen_list=False`` leaves the
    screens out (a context too small for them), ``shape=False`` the made-up answer and the rules on
    steps too."""
    into: dict[str, list[str]] = {}
    for e in doc.elements:
        if e.leads_to:
            into.setdefault(e.leads_to, []).append(f"${e.name}")
    lines = ["In the script, except for the common Python control flow (for, if-else, function def/calls, etc.), "
             "you can use the following APIs:"]
    lines += _api_lines()
    lines += ["", _RULES, *(_STEP_RULES if shape else ()), "",
              f"The screens of the app {doc.app.name} (it starts on {doc.app.start_screen}); the "
              "elements of the screens this task needs are listed after the examples:"]
    for screen in doc.screens if screen_list else ():
        reached = into.get(screen.name, [])[:4]
        lines.append(f"- {screen.name}: {_short(screen.description, 80)}"
                     + (f" Reached by {', '.join(reached)}." if reached else ""))
    return "\n".join(lines + _closing_lines(doc, examples, shape)) + "\n"


def render_screens(doc: L.AppDocument, screens: Collection[str]) -> str:
    """The elements of ``screens`` (a focused prompt's per-task part), in document order."""
    lines = ["The elements of the screens relevant to the task:"]
    for screen in doc.screens:
        if screen.name in screens:
            lines.append(f"screen {screen.name}: {_short(screen.description, 100)}")
            lines += [_element_line(doc, e, "described") for e in screen.elements]
    return "\n".join(lines) + "\n"


def relevant_screens(doc: L.AppDocument, task: str) -> list[str]:
    """The document's screens, most relevant to ``task`` first.

    A screen scores the task's words found in its name, description and its elements' names,
    descriptions and options (a word counted once a screen), each weighed by how few screens have
    it (a word on every screen, such as the app's own subject, tells none apart), plus the words
    of the element that leads to it (the task "create a new event" names the button 'New Event'
    of the launch screen, which opens the event editor, whose own elements never say "new").
    The launch screen comes first among equals (a script often starts there)."""
    wanted = _words(task)
    found: dict[str, set[str]] = {}
    for screen in doc.screens:
        text = [screen.name, screen.description]
        for e in screen.elements:
            text += [e.local_name, e.description, *e.options[:20]]
        found[screen.name] = wanted & _words(" ".join(text))
    weight = {w: math.log((len(doc.screens) + 1) / (1 + sum(w in f for f in found.values()))) for w in wanted}
    entry: dict[str, float] = {}
    for e in doc.elements:
        if e.leads_to in found and e.item_of is None:
            words = wanted & _words(" ".join([e.local_name, e.description]))
            entry[e.leads_to] = max(entry.get(e.leads_to, 0.0), sum(weight[w] for w in words))
    scored = []
    for order, screen in enumerate(doc.screens):
        score = sum(weight[w] for w in found[screen.name]) + entry.get(screen.name, 0.0)
        scored.append((-round(score, 6), screen.name != doc.app.start_screen, order, screen.name))
    return [name for *_, name in sorted(scored)]


_STOP = frozenset({"the", "a", "an", "to", "of", "in", "on", "and", "or", "for", "with", "my", "me", "it", "is",
                   "i", "all", "as", "at", "by", "from", "this", "that", "be", "then", "set", "screen"})


def task_words(text: str) -> set[str]:
    """The words of a text that say what it is about (lower case, stop words dropped)."""
    return _words(text)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " ")) if w not in _STOP and len(w) > 1}


def _example_block(ex: Example) -> str:
    return f"Task: {ex.task}\n{ex.answer()}"


def build_prompt(doc: L.AppDocument, task: str, *, examples: Sequence[Example] = (),
                 screen: ScreenInfo | None = None, repair: RepairNote | None = None,
                 style: str = "described", prefix: str | None = None, focus: str = "") -> Prompt:
    """The whole prompt for one task; ``examples`` are the retrieved ones (the standing examples
    are part of ``prefix``, which may be given when already rendered); ``focus``: the task's
    screens (``render_screens``) for a focused prompt, whose prefix is ``render_summary_prefix``."""
    rest: list[str] = [focus] if focus else []
    if examples:
        rest.append("More examples:")
        rest += [_example_block(ex) for ex in examples]
        rest.append("")
    if screen is not None:
        rest.append(f"The current screen: {screen.describe()}.")
    rest.append(_REMINDER)
    rest.append(f"Your task is: {' '.join(task.split())}")
    if repair is not None:
        where = f" at line {repair.line}" if repair.line else ""
        rest += ["", "Your previous script for this task:", "```python", repair.script.rstrip("\n"), "```",
                 f"It failed{where}: {repair.category}: {repair.message}"]
        if repair.source_line:
            rest.append(f"The failing line: {repair.source_line.strip()}")
        if repair.screen is not None:
            rest.append(f"The screen when it failed: {repair.screen.describe()}.")
        rest.append("Write the whole script again, fixed.")
    return Prompt(SYSTEM, prefix if prefix is not None else render_prefix(doc, style),
                  "\n".join(rest) + "\n", f"{doc.app.package.rsplit('.', 1)[-1]}-p{PROMPT_VERSION}-{style}")
