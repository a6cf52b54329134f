"""What a task wants of its checkboxes and switches, and the script lines that set a toggle right.

Two post-run checks (``tapir.codegen.postchecks``) read a run's toggles against the task's words:

* ``toggle-undone``: the task turns things on ("tick everything on my packing list", "switch on
  every alarm") or off ("untick Eggs", "disable the reminders"), and the run tapped a checkbox or
  switch that already was so (its trace record's ``checked``, the state before the tap): the tap
  undid it. A small model writes ``for item in $list: item.tap($box)`` for "tick everything", and
  the items already ticked come out unticked. The fix guards the loop's tap with the state
  (``if not item.get_attributes($box)["checked"]:``), or drops a lone tap's line;
* ``toggle-only-read``'s fix: the run read a toggle's state and tapped nothing after it. Its
  ``if`` on ``["checked"]`` either went the wrong way for the task's words ("untick Eggs" and
  ``if not ...["checked"]:``: the condition is turned round) or its body never taps (the state
  read twice instead: the tap goes first in the body).

A task that says both (turn one on, another off) or neither has no direction, and neither check
guesses one.

    wanted_state("Tick everything on my Lisbon packing list")   # True
    wanted_state("Untick Eggs")                                  # False
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ASKS", "guarded_tap", "indent_of", "read_fix", "taps_undone", "wanted_state"]

#: A state said of what the task leaves behind ("both switched on", "make sure it is enabled",
#: "keep the Gym alarm ticked"), not of what it picks ("remove the ticked items", "the disabled
#: alarms", "disable the one that is enabled"): the participle after a verb of being or keeping,
#: not in a relative clause, or after "both"/"all".
_LEFT = (r"|(?<!that )(?<!which )(?<!who )"
         r"\b(?:is|are|be|been|both|all|stay|stays|remain|remains|left|leave|keep|keeps)\s+"
         r"(?:(?!and\b|or\b)\w+\s+){0,3}?")
#: Words that turn a toggle on or off; "turn ... on" takes up to three words between ("turn the
#: Gym alarm on"), not more (a clause of its own: "switch on every alarm that is off").
_ON = re.compile(r"\b(tick|enable|activate|turn on|switch on|check (?:the |every |all )?box)\b"
                 r"|\b(?:turn|switch|put|set) (?:\w+ ){1,3}on\b" + _LEFT
                 + r"(?:ticked|checked|enabled|activated|(?:switched|turned) on)\b", re.IGNORECASE)
_OFF = re.compile(r"\b(untick|uncheck|disable|deactivate|turn off|switch off|clear the (?:box|check))\b"
                  r"|\b(?:turn|switch|put|set) (?:\w+ ){1,3}off\b" + _LEFT
                  + r"(?:unticked|unchecked|disabled|deactivated|(?:switched|turned) off)\b", re.IGNORECASE)
#: A question: the task reads, it sets nothing ("how many...", "print the number", "is it on?").
#: The post-run checks ask it too (``tapir.codegen.postchecks``), for their one reading of a task.
ASKS = re.compile(r"^\s*(how|what|which|who|when|where|is|are|does|do|check)\b|\bprint (the|it|them|how|what)\b"
                  r"|\?\s*$", re.IGNORECASE)
#: An ``if`` on a toggle's state: indent, ``not``, the receiver, the child (or none).
_IF_CHECKED = re.compile(r"^(\s*)if\s+(not\s+)?(.+?)\.get_attributes\(\s*(\$[\w%]+)?\s*\)\[(['\"])checked\5\]\s*:\s*$")
#: A tap on a loop's item: indent, the item's name, the child.
_ITEM_TAP = re.compile(r"^(\s+)([A-Za-z_]\w*)\.tap\(\s*(\$[\w%]+)\s*\)\s*$")
_FOR = re.compile(r"^(\s*)for\s+([A-Za-z_]\w*)\s+in\s+\$[\w%]+\s*:\s*$")


def wanted_state(task: str) -> bool | None:
    """True when the task turns toggles on, False when off, None when it says neither or both
    (or asks a question)."""
    if ASKS.search(task):
        return None
    on, off = bool(_ON.search(task)), bool(_OFF.search(task))
    return on if on != off else None


def indent_of(line: str) -> str:
    """The leading whitespace of a script line (what a line put in its place keeps)."""
    return line[: len(line) - len(line.lstrip())]


def taps_undone(actions: Sequence[Mapping[str, Any]], toggles: set[str], wanted: bool
                ) -> list[Mapping[str, Any]]:
    """The taps of ``actions`` on a toggle (the element of ``toggles`` tapped, or the child tapped
    on an item) that was already in the ``wanted`` state before: each undid what the task wants.
    Only a toggle's first tap in the run counts (a second one is ``toggled-back``'s to tell)."""
    seen: set[tuple[Any, Any]] = set()
    undone = []
    for r in actions:
        if r.get("call") != "tap" or r.get("ok") is False or not isinstance(r.get("checked"), bool):
            continue
        name = r.get("resolved")
        if name not in toggles:
            continue
        key = (r.get("element"), r.get("child"))
        if key in seen:
            continue
        seen.add(key)
        if r["checked"] is wanted:
            undone.append(r)
    return undone


def guarded_tap(script: str, line: int, wanted: bool) -> str | None:
    """The fix of a tap that undid a toggle on ``line``: a loop's ``item.tap($box)`` guarded by
    the state (tapped only where it is not ``wanted`` yet), a lone unindented tap's line dropped
    (``""``); None for any other line (the model's to write)."""
    lines = script.splitlines()
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    if not text[:1].isspace():
        return "" if ".tap(" in text and not text.rstrip().endswith(":") else None
    m = _ITEM_TAP.match(text)
    if m is None:
        return None
    indent, item, child = m.groups()
    # the line must be the body of the loop over that item, not of an if inside it
    above = next((lines[i] for i in range(line - 2, -1, -1) if lines[i].strip()), "")
    loop = _FOR.match(above)
    if loop is None or loop.group(2) != item or len(loop.group(1)) >= len(indent):
        return None
    test = f'{"not " if wanted else ""}{item}.get_attributes({child})["checked"]'
    return f"{indent}if {test}:\n{indent}    {item}.tap({child})"


def read_fix(script: str, toggle: str, wanted: bool | None) -> tuple[str, int] | None:
    """``(the new line, its number)`` for a run that read ``toggle``'s state and tapped nothing
    after: the first ``if`` on that state is turned round where it goes against the task's
    ``wanted`` state, and given the tap as its body's first statement where the body has none.
    None when the script has no such ``if``, or nothing about it would change."""
    lines = script.splitlines()
    for number, text in enumerate(lines, 1):
        m = _IF_CHECKED.match(text)
        if m is None or m.group(4) != f"${toggle}" and not (m.group(4) is None and toggle in m.group(3)):
            continue
        indent, negated, receiver, child = m.group(1), bool(m.group(2)), m.group(3), m.group(4) or ""
        body = []
        for following in lines[number:]:
            if following.strip() and len(indent_of(following)) <= len(indent):
                break
            body.append(following)
        new = text
        # `if not checked:` acts on what is off: it turns on
        if wanted is not None and negated != wanted:
            new = re.sub(r"^(\s*)if\s+not\s+", r"\1if ", text) if negated else text.replace("if ", "if not ", 1)
        if not any(".tap(" in b for b in body):
            inner = next((indent_of(b) for b in body if b.strip()), indent + "    ")
            new = f"{new}\n{inner}{receiver}.tap({child})"
        return (new, number) if new != text else None
    return None
