"""Telling a script that walks through a screen from one that does a task.

A small model given a long list of elements often answers by copying it: the elements of one
screen in the document's order, a ``.tap()`` each (``$event_screen__event_start_date_button.tap()``,
``..._start_time_button.tap()``, ``..._repetition_button.tap()``...), or the items of a list one
index after another (``$options[2].tap()``, ``$options[3].tap()``...). Such a script never types
the task's text nor picks its item; when it fails, the run's error (a screen not reached) sends
the repair after navigation instead. ``screen_walk`` finds the first such run of statements so
that the repair prompt (and ``tapir gen``'s static check) can say what is wrong::

    walk = screen_walk(doc, script)
    walk.first_line, walk.last_line, walk.screen, walk.message()

A walk is ``MIN_WALK`` or more consecutive statements, each one call without arguments on an
element of the same screen, on distinct elements in the document's order, or on one list's items
at consecutive indexes (``$list[i]``). Toggling several switches or checkboxes in order is
a task ("turn on A, B, C and D"), so a walk of switches and checkboxes only is not one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.codegen import language as L

__all__ = ["MIN_WALK", "Walk", "screen_walk"]

#: Statements in a row that make a walk.
MIN_WALK = 4

_TOGGLES = frozenset({L.Kind.SWITCH, L.Kind.CHECKBOX})


@dataclass(frozen=True)
class Walk:
    """Lines ``first_line`` to ``last_line`` (1-based) walk through ``screen``'s ``elements``."""

    first_line: int
    last_line: int
    screen: str
    elements: tuple[str, ...]

    def message(self) -> str:
        shown = ", ".join(f"${e}" for e in self.elements[:4]) + (", ..." if len(self.elements) > 4 else "")
        return (f"lines {self.first_line}-{self.last_line} go through the elements of {self.screen} one by one, "
                f"in the document's order ({shown}), instead of doing the task: name only the elements the task "
                "needs, type a text it gives with set_text() and pick an item it names with .match(\"text\")")


@dataclass(frozen=True)
class _Step:
    line: int
    screen: str
    order: int
    index: int | None
    name: str
    kind: L.Kind


def _step(doc: L.AppDocument, order: dict[str, int], stmt: L.A.Node) -> _Step | None:
    """``stmt`` as a step of a walk: ``$element.method()`` or ``$list[i].method()``, no arguments."""
    if not isinstance(stmt, L.A.ExprStmt):
        return None
    call = stmt.value
    if not isinstance(call, L.A.Call) or call.args or call.keywords or not isinstance(call.func, L.A.Attribute):
        return None
    target, index = call.func.value, None
    if isinstance(target, L.A.Subscript):
        at = target.index
        if not (isinstance(at, L.A.Constant) and type(at.value) is int and at.value >= 0):
            return None
        target, index = target.value, at.value
    if not isinstance(target, L.A.ElementRef):
        return None
    element = doc.element(target.name)
    if element is None:
        return None
    return _Step(stmt.span.line, element.screen, order[element.name], index,
                 element.name + (f"[{index}]" if index is not None else ""), element.kind)


def _follows(a: _Step, b: _Step) -> bool:
    """Whether ``b`` goes on the walk that ``a`` is on."""
    if a.screen != b.screen:
        return False
    if a.index is not None or b.index is not None:
        # items walk only along one list (picking an item of each of two lists is a task's choice)
        return a.order == b.order and a.index is not None and b.index == a.index + 1
    return b.order > a.order


def screen_walk(doc: L.AppDocument, script: str) -> Walk | None:
    """The first walk through a screen in ``script`` (see the module docstring), None if none.

    Only the script's top-level statements are looked at: a loop or a branch is the model's own
    logic, never a copied list. A part that does not parse breaks a walk as any statement does."""
    order = {e.name: i for i, e in enumerate(doc.elements)}
    run: list[_Step] = []
    for stmt in L.parse_module(script).body:
        step = _step(doc, order, stmt)
        if step is not None and run and _follows(run[-1], step):
            run.append(step)
            continue
        if len(run) >= MIN_WALK and not all(s.kind in _TOGGLES for s in run):
            break
        run = [step] if step is not None else []
    if len(run) < MIN_WALK or all(s.kind in _TOGGLES for s in run):
        return None
    return Walk(run[0].line, run[-1].line, run[0].screen, tuple(s.name for s in run))
