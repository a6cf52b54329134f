"""A run that stopped on a line the document can set right: that line set right, no model asked.

A small model often picks an item on the wrong list: ``$settings__snooze_options.match("5 minutes")``
where the minutes are the items of the snooze dialog's list. The run stops with "no item of
$settings__snooze_options matches '5 minutes'; the document lists '5 minutes' as an item of
$snooze_time_dialog__radio_button_list", and a repair round shown that hint still writes the same line
about half the time. The document says which list has the item, so the line can be rewritten on that
list (``wrong-list``) and run again before the model is asked anything:

* the item is documented on exactly one other list: that list;
* on several: the one whose name and description share the most words with the task ("snooze"
  for the snooze dialog, not the reminder duration's), when one shares more than every other.

    fixed = corrected(doc, script, line=3, message="no item of $a matches 'x' (...)", task="...")
    fixed.script, fixed.check, fixed.line

``permission-in-the-way``: the run stopped because the system's permission prompt covered the app
("Allow Calendar to access your contacts?": the element could not be reached); ``tap_text("Allow")``
goes before the line (the guards refuse it unless the run allows it, ``docs/safety.md``).

``pick-skipped``: the run stopped on a line after passing by the option the task names without
picking it ("Switch custom colors to light and save it": the theme dialog opened, the Save that
only a new theme shows was not there). The post-run check ``option-not-picked``, read on the run
up to the line, names the pick; it goes before the line.

``match-by-item``: the run stopped because ``.match()`` was given an element: inside ``for item
in $list:``, a small model writes ``$list.match(item)`` for the loop's item ("match() argument
'query' must be str | dict, not element"). The loop's item is that item: ``$list.match(item)``
becomes ``item`` throughout the loop's body.

The harness (``tapir eval --model``) and ``tapir gen --run`` keep the rewritten script only when its
run gets past the line (``Correction.line``); otherwise the run as the model wrote it goes to repair.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tapir.codegen import language as L
from tapir.codegen.postchecks import closest_to_task, grant_button, post_run_findings

__all__ = ["CORRECTIONS", "Correction", "corrected"]

#: The corrections, by the name events and reports give them.
CORRECTIONS = ("wrong-list", "permission-in-the-way", "pick-skipped", "match-by-item")

_MATCH = re.compile(r"\$([A-Za-z_][\w%]*)\.match\(\s*(?P<q>'[^'\\]*'|\"[^\"\\]*\")\s*\)")
#: ``$list.match(item)`` with a name for the query (an item the loop already holds).
_MATCH_NAME = re.compile(r"\$([A-Za-z_][\w%]*)\.match\(\s*([A-Za-z_]\w*)\s*\)")
_FOR = re.compile(r"^(\s*)for\s+([A-Za-z_]\w*)\s+in\s+\$([A-Za-z_][\w%]*)\s*:\s*$")


@dataclass(frozen=True)
class Correction:
    #: The whole script with the line rewritten.
    script: str
    #: Which correction (``CORRECTIONS``).
    check: str
    #: The rewritten line (1-based): a run of ``script`` that stops on it again gained nothing.
    line: int
    #: The line as it now reads (for a report or the console).
    statement: str
    #: The element the line named, and the one it names now (``wrong-list``): a plan that named
    #: the first is read as naming the second (the post-run checks would miss it otherwise).
    replaced: tuple[str, str] | None = None

    def plan(self, elements: Sequence[str]) -> tuple[str, ...]:
        """The answer's ``Elements:`` with the replaced element's name changed."""
        if self.replaced is None:
            return tuple(elements)
        was, now = self.replaced
        return tuple(e[:len(e) - len(e.lstrip("$"))] + now if e.lstrip("$") == was else e for e in elements)


def corrected(doc: L.AppDocument, script: str, line: int | None, message: str, task: str = "",
              records: Sequence[Mapping[str, Any]] = ()) -> Correction | None:
    """``script`` with its failing ``line`` set right, when the error (``message``) is one the
    document can answer, or its run's trace (``records``) shows what stood in the way; None
    otherwise."""
    lines = script.splitlines()
    if line is None or not 1 <= line <= len(lines):
        return None
    source = lines[line - 1]
    grant = _permission_in_the_way(records, line)
    if grant is not None:
        indent = source[:len(source) - len(source.lstrip())]
        lines[line - 1:line - 1] = [f"{indent}tap_text({grant!r})"]
        return Correction("\n".join(lines) + "\n", "permission-in-the-way", line + 1, f"tap_text({grant!r})")
    for m in _MATCH.finditer(source):
        name, quoted = m.group(1), m.group("q")
        if not message.startswith(f"no item of ${name} matches"):
            continue
        element = doc.element(name)
        if element is None:
            return None
        query = quoted[1:-1]
        other = _the_list(doc, L.lists_with_item(doc, query, element), task)
        if other is None:
            return None
        statement = source[:m.start()] + f"${other.name}.match({quoted})" + source[m.end():]
        lines[line - 1] = statement
        return Correction("\n".join(lines) + "\n", "wrong-list", line, statement.strip(), (name, other.name))
    if "match() argument 'query'" in message and message.endswith("not element"):
        fixed = _match_by_item(lines, line)
        if fixed is not None:
            return Correction("\n".join(fixed) + "\n", "match-by-item", line, fixed[line - 1].strip())
    pick = _pick_skipped(doc, lines, line, task, records)
    if pick is not None:
        indent = source[:len(source) - len(source.lstrip())]
        lines[line - 1:line - 1] = [f"{indent}{pick}"]
        return Correction("\n".join(lines) + "\n", "pick-skipped", line + 1, pick)
    return None


def _pick_skipped(doc: L.AppDocument, lines: list[str], line: int, task: str,
                  records: Sequence[Mapping[str, Any]]) -> str | None:
    """The pick of the option the task names that the run up to ``line`` never made, when the
    post-run checks read on that part of the run name one (``option-not-picked`` with a fix);
    None otherwise (no task, no trace, no such option, or several to choose from)."""
    if not task:
        return None
    first = next((i for i, r in enumerate(records) if r.get("event") == "action" and r.get("line") == line), None)
    if first is None:
        return None
    ran = records[:first]
    if not any(r.get("event") == "action" and r.get("ok", True) for r in ran):
        return None  # nothing was passed by: the run stopped on its first step
    before = "\n".join(lines[:line - 1]) + "\n"
    findings = post_run_findings(doc, before, ran, task=task)
    pick = next((f.fix for f in findings if f.check == "option-not-picked" and f.fix), None)
    if pick is None or pick.split(".", 1)[0] in lines[line - 1]:
        return None  # the line itself acts on that list: its error is another matter
    return pick


def _match_by_item(lines: list[str], line: int) -> list[str] | None:
    """The lines with ``$list.match(item)`` made ``item`` throughout the loop ``for item in
    $list:`` that holds ``line``: the loop's item already is the list's item (the error said the
    query is an element, not a text). None when ``line`` has no such call in such a loop."""
    m = _MATCH_NAME.search(lines[line - 1])
    if m is None:
        return None
    listed, name = m.groups()
    depth = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for start in range(line - 2, -1, -1):
        loop = _FOR.match(lines[start])
        indent = len(lines[start]) - len(lines[start].lstrip())
        if lines[start].strip() and indent < depth:
            if loop is None or loop.group(2) != name or loop.group(3) != listed:
                depth = indent  # an if or another loop between: look further out
                if indent == 0 and loop is None:
                    return None
                continue
            call = re.compile(rf"\${re.escape(listed)}\.match\(\s*{re.escape(name)}\s*\)")
            out = list(lines)
            for i in range(start + 1, len(lines)):
                if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent:
                    break
                out[i] = call.sub(name, lines[i])
            return out
    return None


def _permission_in_the_way(records: Sequence[Mapping[str, Any]], line: int) -> str | None:
    """The button that grants the permission prompt the failed action on ``line`` was left facing
    (``app_after`` of its trace record: the system's prompt over the app), None when none was."""
    failed = [r for r in records if r.get("event") == "action" and r.get("ok") is False and r.get("line") == line]
    return grant_button(failed[-1]) if failed else None


def _the_list(doc: L.AppDocument, lists: list[L.Element], task: str) -> L.Element | None:
    """The one of ``lists`` the task means: the only one, or the one sharing most words with it."""
    name = closest_to_task(doc, [e.name for e in lists], task)
    return doc.element(name) if name is not None else None
