"""The alert dialogs the sample apps share, all built by one helper: ``alert``.

Confirmations (Delete / Cancel), forms (inputs with OK / Cancel), notices (OK only) and single
choices (radio buttons / Cancel) are one Android ``AlertDialog`` with different buttons, so one
function builds them and the apps' dialogs stay alike (positive, negative and neutral buttons in
their usual places; "Cancel" and "OK" close the dialog). ``ToolkitApp`` has them as methods that
close with ``self.close``::

    @dialog
    def delete_note(self, note: int) -> Dialog:
        return self.confirm_dialog("Delete note?", "“Groceries” will be deleted permanently.",
                                   ("Delete", partial(self.remove_note, note)))

    @dialog
    def units(self) -> Dialog:
        return self.choice_dialog("Units", "choice_list", UNITS, self.state.units, self.choose_units)

A dialog built here is the same widget tree as the ``Dialog(...)`` it replaces: the apps' dumps,
and the identifiers their documents use, do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TypeVar

from tapir.sim.toolkit.widgets import Button, Dialog, Handler, Radio, RadioGroup, Widget

T = TypeVar("T")

#: A dialog button: its label and what tapping it does.
Action = tuple[str, Handler]


def _button(action: Action | None, enabled: bool = True) -> Button | None:
    return None if action is None else Button(action[0], enabled=enabled, on_tap=action[1])


def alert(title: str, *, message: str = "", body: Sequence[Widget | None] = (), ok: Action | None = None,
          cancel: Action | None = None, neutral: Action | None = None, ok_enabled: bool = True,
          cancelable: bool = True) -> Dialog:
    """An alert dialog: a title, a message and/or a body, and up to three buttons (``ok`` is the
    positive one, disabled while ``ok_enabled`` is false, e.g. until a form is valid)."""
    return Dialog(title=title, message=message, body=body, positive=_button(ok, ok_enabled),
                  negative=_button(cancel), neutral=_button(neutral), cancelable=cancelable)


class DialogBuilders:
    """The shared dialogs as methods of an app (``ToolkitApp``); the dismissing button closes the
    dialog with the app's ``close``."""

    def close(self) -> None:  # pragma: no cover - ToolkitApp's close comes first in the MRO
        raise NotImplementedError

    def confirm_dialog(self, title: str, message: str, ok: Action, *, cancel: str = "Cancel",
                       cancelable: bool = True) -> Dialog:
        """A question with an answer that acts (``("Delete", ...)``) and one that closes."""
        return alert(title, message=message, ok=ok, cancel=(cancel, self.close), cancelable=cancelable)

    def form_dialog(self, title: str, body: Sequence[Widget | None], ok: Action, *,
                    ok_enabled: bool = True) -> Dialog:
        """Inputs with a positive button (enabled while ``ok_enabled``) and Cancel."""
        return alert(title, body=body, ok=ok, cancel=("Cancel", self.close), ok_enabled=ok_enabled)

    def notice_dialog(self, title: str, *, message: str = "", body: Sequence[Widget | None] = ()) -> Dialog:
        """Information with a single OK that closes it."""
        return alert(title, message=message, body=body, ok=("OK", self.close))

    def choice_dialog(self, title: str, group_id: str, choices: Iterable[T], selected: T,
                      on_choose: Callable[[T], None], *, label: Callable[[T], str] = str,
                      choice_id: Callable[[T], str | None] = lambda _: None) -> Dialog:
        """A single-choice dialog: a radio button per choice (``selected`` checked) and Cancel."""
        return alert(title, body=[RadioGroup(id=group_id, children=[
            Radio(label(c), id=choice_id(c), checked=c == selected, on_tap=partial(on_choose, c))
            for c in choices])], cancel=("Cancel", self.close))
