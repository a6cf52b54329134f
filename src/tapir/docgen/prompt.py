"""Render an app document as prompt text for a script-writing model.

Two renderings, after the AutoDroid-V2 paper:

* **full** (section 3.2.1, Listing 2): the instruction, the language's API, then every element
  with its description, kind, effect, options and child elements, screen by screen;
* **compressed** (section 3.3.2): the instruction, a terse API list and only the element names.

Both put everything that depends on the document first and the task last, so the document part
is a stable prefix that a model server can keep in its prompt cache across tasks (the paper's
prompt reuse). ``PromptText.prefix`` is that prefix; ``with_task`` appends the task.

The API text is printed from ``tapir.dsl.api``, the same registry the interpreter runs.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tapir.core.document import AppDocument, Element
from tapir.dsl.api import BUILTINS, ELEMENT_METHODS, GLOBALS, LIST_KINDS

TASK_HEADER = "Your task is: "

_INSTRUCTION = (
    "Imagine that you are an agent using a smartphone to complete a task. You cannot see the screen; "
    "you write a script that manipulates the GUI elements of the app {name}, and the script is run for you."
)

_ANSWER_FORMAT = """Your answer should follow this JSON format:

{
  "plan": "<a high-level plan to complete the task>",
  "elements": "<analyze the elements that could be used to complete the task>",
  "script": "<the script to complete the task>"
}"""


@dataclass(frozen=True)
class PromptText:
    """A rendered prompt: the stable document prefix; the task is appended last."""

    style: str
    prefix: str

    def with_task(self, task: str) -> str:
        return f"{self.prefix}{TASK_HEADER}{task.strip()}\n"

    def template(self) -> str:
        """The whole prompt with ``{task}`` where the task goes (what ``tapir compile`` writes)."""
        return self.with_task("{task}")


def _api_lines(terse: bool) -> list[str]:
    lines = []
    for entry in ELEMENT_METHODS.values():
        kinds = "" if len(entry.kinds) > 3 else " [only on " + ", ".join(sorted(k.value for k in entry.kinds)) + "]"
        receiver = "$list" if set(entry.kinds) <= set(LIST_KINDS) else "$element"
        sig = entry.signature(receiver)
        lines.append(f"- {sig}{kinds}" if terse else f"- {sig}{kinds}: {entry.doc}")
    for entry in GLOBALS.values():
        if not entry.in_prompts:
            continue
        sig = entry.signature(None)
        lines.append(f"- {sig}" if terse else f"- {sig}: {entry.doc}")
    lines.append("- $list[index] -> element, len($list) -> int, for item in $list: ..." if terse else
                 "- $list[index] -> element: the item at index (0-based); len($list) -> int: the number of items; "
                 "`for item in $list:` visits every item. Child elements of a list act on one item: "
                 "`$list[0].tap($child)`, `item.get_text($child)`.")
    if not terse:
        lines.append("- Builtins: " + ", ".join(BUILTINS) + ".")
    return lines


def _element_block(doc: AppDocument, e: Element) -> list[str]:
    out = [f"element: ${e.name}", f"  Description: {e.description}", f"  Type: {e.kind.value}"]
    if e.item_of:
        out.append(f"  Child of: ${e.item_of} (use it on an item of that list)")
    if e.effect:
        out.append(f"  Effect: {e.effect}")
    elif e.leads_to:
        out.append(f"  Effect: leads to {e.leads_to}")
    if e.options:
        out.append("  Options: " + ", ".join(repr(o) for o in e.options))
    if e.is_list:
        children = doc.children_of(e.name)
        if children:
            out.append("  Item children: " + ", ".join(f"${c.name}" for c in children))
    if e.sensitive:
        out.append("  Sensitive: hard to undo (delete, send, pay...); use it only when the task asks for it")
    if e.notes:
        out.append(f"  Notes: {e.notes}")
    return out


def render_full(doc: AppDocument) -> PromptText:
    lines = [_INSTRUCTION.format(name=doc.app.name), ""]
    lines.append(
        "In the script, except for the common Python control flow (for, if-else, function def/calls, etc.), "
        "you can use the following APIs. Reference an element with '$' and its name, e.g. "
        f"'${next(iter(doc.elements)).name}'." if any(True for _ in doc.elements) else
        "In the script you can use the following APIs."
    )
    lines += _api_lines(terse=False)
    if doc.notes:
        lines += ["", "Usage notes:", doc.notes.strip()]
    if doc.watchers:
        # the runtime answers these by itself: a script that handles them too would tap twice
        lines += ["", "Interruptions the runtime answers by itself (do not handle them in the script):"]
        lines += [f"- {w.name}: {w.describe()}" + (f" ({w.description.strip()})" if w.description else "")
                  for w in doc.watchers]
    lines += ["", "You can use the following important GUI elements:"]
    for screen in doc.screens:
        lines += ["", f"screen: {screen.name}: {screen.description}"]
        if screen.notes:
            lines.append(f"  Notes: {screen.notes}")
        for e in screen.elements:
            lines += _element_block(doc, e)
    start = doc.screen(doc.app.start_screen)
    if start is not None:
        lines += ["", f"The app starts on {start.name}. The available GUI elements there:",
                  ", ".join(f"${e.name}" for e in start.elements)]
    lines += ["", _ANSWER_FORMAT, "", ""]
    return PromptText("full", "\n".join(lines))


def render_compressed(doc: AppDocument) -> PromptText:
    lines = [_INSTRUCTION.format(name=doc.app.name), "", "APIs:"]
    lines += _api_lines(terse=True)
    lines += ["", "Elements, by screen:"]
    for screen in doc.screens:
        lines.append(f"{screen.name}: " + ", ".join(f"${e.name}" for e in screen.elements))
    lines += ["", f"The app starts on {doc.app.start_screen}. Answer with the script only.", "", ""]
    return PromptText("compressed", "\n".join(lines))


# ---------------------------------------------------------------------------------------------
# Token counts


@dataclass(frozen=True)
class TokenCount:
    count: int
    #: ``tokenizers:<file>`` or ``tiktoken:<encoding>`` for a real tokenizer; ``estimate`` otherwise.
    method: str


_PIECES = re.compile(r"[A-Za-z]+|\d+|_+|\n+|[ \t]+|[^\w\s]|\w", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate, close to BPE tokenizers of Llama-3 / GPT-4 on this kind of text.

    Words count one token per started 6 letters (long words split), digit runs one per 3 digits,
    every punctuation mark and every run of underscores or newlines one; plain spaces fold into
    the next word, as they do in BPE vocabularies. Expect an error of about a fifth either way.
    """
    n = 0
    for m in _PIECES.finditer(text):
        piece = m.group()
        c = piece[0]
        if c == " " or c == "\t":
            continue
        if c.isalpha() and c.isascii():
            n += math.ceil(len(piece) / 6)
        elif c.isdigit():
            n += math.ceil(len(piece) / 3)
        else:
            n += 1
    return n


@lru_cache(maxsize=1)
def _real_tokenizer() -> tuple[Any, str] | None:
    """A real tokenizer when one is installed and usable offline, else None.

    ``TAPIR_TOKENIZER`` may name a Hugging Face ``tokenizer.json`` (e.g. of the script model) for
    the ``tokenizers`` package; otherwise ``tiktoken``'s cl100k encoding is used if it is cached.
    """
    path = os.environ.get("TAPIR_TOKENIZER")
    if path:
        try:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(path)
            return (lambda t: len(tok.encode(t).ids)), f"tokenizers:{os.path.basename(path)}"
        except Exception:  # any failure means "no real tokenizer", never an error
            pass
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base")
        return (lambda t: len(enc.encode(t))), "tiktoken:cl100k_base"
    except Exception:  # not installed, or its data is not cached (no network here)
        return None


def count_tokens(text: str) -> TokenCount:
    real = _real_tokenizer()
    if real is not None:
        fn, method = real
        return TokenCount(int(fn(text)), method)
    return TokenCount(estimate_tokens(text), "estimate")
