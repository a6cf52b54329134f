"""Checks after a script finished without an error: did it do what its plan said? (no silent failures)

Most failed scripts of a small model run to their end without doing the task: an element of the
plan never touched, a text typed and never saved. Nothing stopped them, so the repair loop never
saw them. These checks read what the run did (its trace records, through ``tapir.run``'s
``ScriptRun.records``) against the answer's plan and the document, and give a ``Finding`` that
goes back to the model like an error:

* ``screen-walk``: the script goes through one screen's elements in the document's order, a
  call each, instead of doing the task (``tapir.codegen.screen_walk``);
* ``unused-element``: an element the plan (the answer's ``Elements:`` line) or the script names
  was never acted on nor read (a branch not taken is fine when the element was read to decide);
* ``unconfirmed-input``: the last text typed (``set_text``) on a screen whose document has a
  confirming element (Save, OK, Done, Add...) was followed by no tap on one, nor ``enter()``; or
  the run's last action was a choice in a dialog that closed onto a screen with a Save, Apply or
  Done (customize colors: the theme picked, never saved);
* ``permission-asked``: the run's last action left the system's permission prompt over the app
  ("Allow Calendar to access your contacts?"), unanswered; the fix grants it
  (``tap_text("Allow")``, or "While using the app" where the prompt offers it), which the guards
  refuse unless the run allows it (``docs/safety.md``);
* ``toggled-back``: the run tapped the same checkbox or switch (the same item's) twice in a row,
  from two unindented lines: the second tap undid the first ("turn on the Gym alarm", its switch
  tapped on line 2 and again on line 3). The fix removes the second line; a task that says twice,
  again, back or toggle gives no finding;
* ``toggle-undone``: the task's words turn toggles on ("tick everything", "switch on") or off
  ("untick", "disable"), and the run tapped a checkbox or switch that already was so (the state
  its trace record had before the tap): the tap undid it. A loop's tap is guarded by the state,
  a lone tap's line goes (``tapir.codegen.toggles``);
* ``dialog-left-open``: the run's last action opened a dialog (a transient screen of the
  document, not its launch screen) with a button that decides (named for one of Yes, Delete,
  Save, Apply...; or, in a generated document, Android's positive button beside a negative one:
  a question; or an OK beside a Cancel: a form in a dialog; not a plain OK alone, which an
  information dialog has), and the script ended there: the confirmation the task needs ("Delete
  all events?", the export's OK) was never given;
* ``effect-not-reached``: the task names an effect screen (``expect_screen``) and no action of
  the run ended on it;
* ``option-not-picked``: the task's words name an option the document lists for an element
  ("descending" for a sort order's 'Descending', "to 3" with "column" for '3 columns') and the run
  never tapped, typed or picked anything so labelled (the model chose the neighbouring list, or
  stopped one step short). Only an option on a screen the run showed or stopped one step short of:
  one elsewhere belongs to another feature of the app. Beside a list the run picked from in a
  dialog, any word names one ("by name" for the sort field beside the order). Of two lists with
  the option, the fix picks the one whose words the task says ("max reminder duration");
* ``element-not-used``: the task's words name an element by the label the document gives it
  ('Enable delivery reports', 'Start week on Sunday', 'Max reminder duration': two or more words
  that are not numbers, and either three besides the verbs or one rare in the document) and the
  run never acted on it, nor on anything else so labelled. A small model often toggles the
  setting next to the one the task names; beside a toggle the run tapped, any two words name one
  (it ticked 'Show private contacts' for "show phone numbers", the next checkbox).
* ``control-not-used``: the task's words name a control by the words of its id ('album art' of
  ``album_art_switch``, "call" of ``call_button``, "minute" of ``minutes_input``) on a screen where
  the run acted, and the run never acted on it nor on anything else its id's words name. The words
  are the id's less those that say the control's kind (button, switch, input...); at least one of
  them used on at most two screens of the document (not the app's vocabulary: "note" in a notes
  app), none of them quoted in the task (the quoted note 'Diary' is data, not the Diary tab), none
  standing next to a word of what the run acted on ("mobile number" when it typed the number: the
  word says which number, not which control), and the task not a question ("how many...", "print
  the number"), which reads and acts on nothing. A small model taps the SMS button beside Call, or
  sets the theme on the screen of the album art switch. Only a button's fix is a statement (a tap);
  a toggle's or a field's is the model's to write.
* ``toggle-only-read``: the run read a checkbox's or a switch's state and tapped nothing after it,
  and the task is no question: the condition it read went the wrong way ("untick Eggs", and
  ``if not ...["checked"]:`` before the tap), or the body never tapped ("switch on every alarm
  that is off", the state read twice). The model is told what ``checked`` means; where the task's
  words say which way ("untick", "switch on"), the ``if`` is set right without it: turned round,
  or given the tap (``tapir.codegen.toggles``).
* ``search-not-typed``: the task says to search ("search contact Alice") and the run typed into
  none of the document's search fields (an input named or described as one): a small model picks
  the result from the list it already shows. The fix types the term (what the script picks with
  ``.match()``, when the task says it; else the text the task quotes) into the one search field
  (the document's only one, or the one beside the list picked from), before that pick.
* ``search-left``: the task says to search, the run typed into a search field, and the next list
  it picked from is on another screen, though the search field's screen has its own: a small
  model types the term, then picks from the list it knows ("Search for Kestrel and play 'Signal
  Lost' from the results", the song picked on the songs screen, the runtime going back there).
  The fix names the search screen's one list on that line instead.
* ``text-typed-twice``: the run typed a text into one field of a screen and its first or last
  words again into another ("Grace Hopper" as the first name, "Hopper" as the last). The fix
  types the rest ("Grace") into the first.
* ``text-not-given``: the task quotes a text (a name, a title, a message: 'Summer drive') and the
  run never typed it, nor tapped or picked anything showing it. A small model often opens the
  right form and types nothing, or types the old name. Typed with the same words but other
  characters (the final full stop left out, another case) is a finding too: a quoted text is
  meant as written. The fix types it into the form the run left untyped: a dialog or form a
  line opened and the run left without typing there (the rename dialog, then "Navigate up"),
  right after that line with its confirming button; or the form whose Save the run tapped with
  nothing typed, right before that tap (the field the task's other words name, of several).
  Else into the one field of the screen the run ended on.

``control-not-used`` on a field gives a fix too where the task puts a number before the field's
unit ("a 10-minute timer", ``minutes_input``): typed before the run's first action on its screen.
A control counts as used when the run tapped an element whose description says a tap does what
the control's words say (the phone number that says "tap to call", for the Call button).

A fix in the script's middle (``Finding.replaces``) that the run gets past stands even when a
later line then stops the run; that line's error goes to repair (``Finding.ends``).

    findings = post_run_findings(doc, script, records, plan_elements=("notes__save",), task="Save a note")
    findings[0].check, findings[0].message

A finding that names exactly one thing to do (the dialog's one confirming button, the screen's one
Save, the one option the task names, the one control whose label the task says) carries it as a
statement, ``Finding.fix``; ``completed`` appends it, and the generator runs that before it asks
the model anything (``GenConfig.completions``): a run one tap short needs no model to add the tap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tapir.codegen import language as L
from tapir.codegen.screen_walk import screen_walk
from tapir.codegen.toggles import ASKS as _ASKS
from tapir.codegen.toggles import guarded_tap, indent_of, read_fix, taps_undone, wanted_state

__all__ = ["POSTCHECKS", "Finding", "closest_to_task", "completed", "grant_button", "plan_after", "post_run_findings"]

#: The checks, in the order they are reported.
POSTCHECKS = ("screen-walk", "unused-element", "unconfirmed-input", "permission-asked", "toggled-back",
              "toggle-undone", "dialog-left-open", "form-left-open", "dialog-cancelled", "effect-not-reached",
              "option-not-picked", "element-not-used", "control-not-used", "toggle-only-read", "search-not-typed",
              "search-left", "text-typed-twice", "text-not-given")

_NAME = re.compile(r"\$?([A-Za-z_][\w%]*)")
_ELEMENT = re.compile(r"\$([A-Za-z_][\w%]*)")
_CONFIRM = re.compile(r"\b(save|ok|okay|done|confirm|apply|add|create|submit|set|yes|send|update)\b")
_TAPS = frozenset({"tap", "long_tap"})
#: A dialog's button that gives the decision the dialog asks for; not a plain OK (an information
#: dialog's, which only closes it) nor Send (a sensitive action the guards ask about).
_DECIDE = re.compile(r"\b(yes|delete|remove|save|apply|confirm|overwrite|discard|rename|create|replace)\b")
_WORD = re.compile(r"[^\W_]+%?")
#: A text the task quotes; a single quote only at a word's edge (not "Bob's").
_QUOTED = re.compile(r"(?<!\w)'([^']+?)'(?!\w)|\"([^\"]+?)\"|“([^”]+?)”|‘([^’]+?)’")
#: Words too common to say which option a task means ("turn it on", "all of them").
_PLAIN = frozenset({"a", "an", "the", "on", "off", "all", "none", "no", "yes", "ok", "to", "of", "in", "and", "or",
                    "by", "for", "with", "at", "it", "is", "new", "more", "other", "cancel"})


@dataclass(frozen=True)
class _Nothing:
    item_of: str | None = None


_NO = _Nothing()


@dataclass(frozen=True)
class Finding:
    check: str
    message: str
    #: The one statement that does what the finding says is left undone, when there is exactly
    #: one ("$dialog__ok_button.tap()"): appended to the script, it completes the run without
    #: asking the model (``complete``). None when the finding leaves a choice open.
    fix: str | None = None
    #: The script's line (1-based) that ``fix`` takes the place of (the Cancel tapped instead of
    #: the OK; an empty ``fix``: the line goes, a switch tapped a second time); None: ``fix`` is
    #: appended.
    replaces: int | None = None

    def render(self) -> str:
        """As the repair prompt quotes a run's error (``Kind: message``)."""
        return f"PostRunCheck: {self.message}"

    @property
    def ends(self) -> int | None:
        """The last line of the fixed script that the fix wrote, for a fix in the script's middle
        (``replaces``); a run of the fixed script that stops after it got past the fix, and its
        error is the model's to repair (a line the fix dropped: the line before its place). None
        for a fix appended at the end."""
        if self.replaces is None or self.fix is None:
            return None
        return self.replaces - 1 + len(self.fix.splitlines())

    def change(self) -> str:
        """What the fix does to the script, in one line: ``$x.tap()`` appended, ``line 3 dropped``,
        ``line 3 set to if not ...: item.tap(...)``."""
        one = ""
        for part in (self.fix or "").splitlines():
            one += ("" if not one else " " if one.endswith(":") else "; ") + part.strip()
        if self.replaces is None:
            return one
        return f"line {self.replaces} dropped" if not one else f"line {self.replaces} set to {one}"


def _base(name: object) -> str | None:
    if not isinstance(name, str):
        return None
    m = _NAME.match(name.strip())
    return m.group(1) if m else None


def _acted(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in records if r.get("event") == "action"]


def _said(element: L.Element) -> str:
    """An element's name and the first sentence of its description, as words."""
    return " ".join([element.local_name.replace("_", " "), element.description.split(".")[0]]).lower()


def _is_confirm(doc: L.AppDocument, name: str) -> bool:
    element = doc.element(name)
    if element is None or element.item_of:
        return False
    return bool(_CONFIRM.search(_said(element))) and element.kind in (L.Kind.BUTTON, L.Kind.TEXT, L.Kind.IMAGE,
                                                                       L.Kind.OTHER)


#: Units as tasks shorten them ("snooze time to 30 min" for the option '30 minutes').
_UNITS = {"min": "minute", "mins": "minute", "sec": "second", "secs": "second", "hr": "hour", "hrs": "hour"}


def _words(text: str) -> frozenset[str]:
    """Lower-cased words, a plural's s dropped ("columns" is "column"), a unit's short form
    written out ("min" is "minute")."""
    return frozenset(_UNITS.get(w) or (w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
                     for w in _WORD.findall(text.lower()))


#: An option word the document uses for more elements than this is the app's vocabulary ("photo"
#: in a camera, "alarm" in a clock: tabs, screens, titles), not a choice the task makes.
RARE_WORD = 3


def _word_uses(doc: L.AppDocument, form: Callable[[str], str] = str) -> dict[str, int]:
    """How many elements of ``doc`` say each word (``form`` of it) in their name, description or
    options: a word said by more than ``RARE_WORD`` is the app's vocabulary."""
    uses: dict[str, int] = {}
    for element in doc.elements:
        said = {form(w) for w in _words(" ".join([element.local_name.replace("_", " "), element.description,
                                                   *element.options]))}
        for word in said:
            uses[word] = uses.get(word, 0) + 1
    return uses


def _options_named(doc: L.AppDocument, task: str, chosen: Collection[str] = ()) -> list[tuple[str, str]]:
    """``(element, option)`` for each option whose words all appear in ``task`` and one of them is
    rare in the document or a number (one per element: the option with the most words). For the
    lists in ``chosen`` (beside one the run picked from in a dialog) any word will do: a sort
    dialog's 'Name' beside its 'Descending', for "by name in descending order"."""
    said = _words(task)
    uses = _word_uses(doc)
    named: list[tuple[str, str]] = []
    for element in doc.elements:
        best: tuple[int, str] | None = None
        for option in element.options:
            words = _words(option)
            # bare numbers are a picker's values ("00" of an hour for a task's "5:00"), not a choice
            if not words or not words <= said or words <= _PLAIN or all(w.isdigit() for w in words):
                continue
            if element.name not in chosen and not any(w.isdigit() or uses.get(w, 0) <= RARE_WORD
                                                        for w in words - _PLAIN):
                continue
            if best is None or len(words) > best[0]:
                best = (len(words), option)
        if best is not None:
            named.append((element.name, best[1]))
    return named


#: What a control does, said by tasks and labels alike ("Add favorites" for "add Bob to favorites"):
#: never the word that makes a label the one the task names.
_VERBS = frozenset({"add", "show", "enable", "disable", "use", "change", "set", "delete", "remove", "open", "create",
                    "edit", "select", "turn", "make", "view", "go", "save", "send", "call", "search", "sort",
                    "export", "import", "move", "copy", "rename", "start", "stop", "display", "hide", "allow"})
_FILE_NAME = re.compile(r"\w\.[A-Za-z0-9]{1,4}\b")


def _label(element: L.Element) -> str | None:
    """The text an element shows, the first its identifiers give (``L.shown_labels``); None for
    a list (its identifier's text runs its items together) and for a text the document gives only
    as an example ("Text, e.g. '07:00'": it changes)."""
    if element.is_list or element.item_of or "e.g." in element.description:
        return None
    label = next(iter(L.shown_labels(element)), None)
    # a file's name ('Diary.pdf') is what a field holds now, not what the control is
    return None if label is None or _FILE_NAME.search(label) else label


def _stem(word: str) -> str:
    """A word without its -ing or -ed ("sending" is "send"), so a task's verb form meets a label's."""
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    return word


def _elements_named(doc: L.AppDocument, task: str, beside: Collection[str] = ()) -> list[tuple[str, str, int]]:
    """``(element, label, words)`` for each element whose label's words all appear in ``task``:
    two or more that are neither plain nor numbers, and either three that are not verbs either
    or one of those rare in the document; for an element of ``beside`` (a toggle beside the one
    the run toggled) any two will do."""
    said = {_stem(w) for w in _words(task)}
    uses = _word_uses(doc, _stem)
    named = []
    for element in doc.elements:
        label = _label(element)
        if label is None:
            continue
        words = {_stem(w) for w in _words(label)} - _PLAIN
        content = {w for w in words if not w.isdigit()}
        # a verb and a word the app uses everywhere ('Add favorites') may be the task's by chance;
        # three other words ('Max reminder duration'), or a rare one ('Enable delivery reports'),
        # are what it names
        specific = content - _VERBS
        if len(content) < 2 or not words <= said or (element.name not in beside and len(specific) < 3
                                                     and all(uses.get(w, 0) > RARE_WORD for w in specific)):
            continue
        named.append((element.name, label, len(words)))
    return named


def _picked(records: Iterable[Mapping[str, Any]], option: str) -> bool:
    """Whether the run acted on something showing ``option`` (its script or its navigation), or
    typed it (a search for it)."""
    words = _words(option)
    for r in records:
        if r.get("event") not in ("action", "navigation") or r.get("ok") is False:
            continue
        args = r.get("args") or {}
        # a matched item is picked (``match("Driftwood").tap($more)`` taps its menu, not its title)
        shown = [r.get("label"), r.get("text"), r.get("text_typed"), args.get("text"), args.get("query")]
        if any(isinstance(s, str) and words <= _words(s) for s in shown):
            return True
    return False


def _near_screens(doc: L.AppDocument, records: Sequence[Mapping[str, Any]], touched: set[str]) -> set[str]:
    """The screens the run showed, and those one documented step away from them."""
    seen = {s for r in records for key in ("screen", "screen_before", "screen_after")
            if isinstance(s := r.get(key), str)}
    seen |= {e.screen for name in touched if (e := doc.element(name)) is not None}
    near = set(seen)
    for e in doc.elements:
        if e.screen in seen and e.leads_to:
            near.add(e.leads_to)
        # a path's last step is taken on the screen just before the element's
        if any(path and path[-1].target and (path[-1].target.split("__", 1)[0]) in seen for path in e.paths):
            near.add(e.screen)
    return near


_TOGGLES = frozenset({L.Kind.CHECKBOX, L.Kind.SWITCH})


def _toggles_beside(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> set[str]:
    """The other toggles (checkboxes, switches) of each screen where the run tapped one: a small
    model often toggles the setting next to the one the task names ("show phone numbers", and
    'Show private contacts' ticked), and there the task's words need not be rare."""
    return _beside(doc, actions, lambda e: e.kind in _TOGGLES and not e.item_of)


def closest_to_task(doc: L.AppDocument, names: Sequence[str], task: str) -> str | None:
    """The one of the elements ``names`` the task means: the only one, or the one whose name,
    description and screen's description share more words with ``task`` than each other's; None
    when none does."""
    if len(names) <= 1:
        return names[0] if names else None
    wanted = {w for w in _words(task) if len(w) > 2}
    scored = []
    for name in names:
        e = doc.element(name)
        screen = doc.screen(e.screen) if e is not None else None
        said = " ".join([name.replace("_", " "), e.description if e else "", screen.description if screen else ""])
        scored.append((len(wanted & _words(said)), name))
    scored.sort(key=lambda s: -s[0])
    return scored[0][1] if scored[0][0] > scored[1][0] else None


_AGAIN = re.compile(r"\b(twice|again|back|toggle)\b", re.IGNORECASE)


def _toggled_back(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]], script: str, task: str
                  ) -> tuple[str, int, int] | None:
    """(the toggle, the line of its first tap, the line of the second) when the run tapped the same
    checkbox or switch (the same item's, for a list's) twice in a row from two unindented lines of
    the script: a small model that writes the switch's tap twice turns it on and off again. None
    when the task says to (twice, again, back, toggle)."""
    if _AGAIN.search(task):
        return None
    lines = script.splitlines()
    taps = [r for r in actions if r.get("call") != "match"]  # a match() reads, it does not act
    for before, after in zip(taps, taps[1:], strict=False):
        element = doc.element(_base(after.get("resolved")) or "")
        first, second = before.get("line"), after.get("line")
        if (element is None or element.kind not in _TOGGLES or after.get("call") not in _TAPS
                or before.get("call") != after.get("call") or before.get("element") != after.get("element")
                or before.get("resolved") != after.get("resolved") or not before.get("ok", True)
                or not after.get("ok", True) or not isinstance(first, int) or not isinstance(second, int)
                or first == second or not 1 <= second <= len(lines) or lines[second - 1][:1].isspace()):
            continue
        return str(after.get("element")), first, second
    return None


def _of_choices(doc: L.AppDocument, name: str) -> bool:
    """Whether screen ``name`` is a dialog of choices: transient, or with an OK beside a Cancel
    (a generated document may take a sort dialog for a screen)."""
    screen = doc.screen(name)
    return screen is not None and (L.transient(doc, name) or bool(_form_keeps(screen)))


def _beside_picks(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> set[str]:
    """The other lists of each dialog where the run tapped an item of a list (``$list.match(...)
    .tap()``): in a dialog of choices, the list beside the one picked from is likely the task's
    too (a sort dialog's field beside its order); the list picked from is not (one pick is made)."""
    return _beside(doc, actions, lambda e: e.is_list, lambda screen: screen != doc.app.start_screen
                   and _of_choices(doc, screen))


def _beside(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]], kind: Callable[[L.Element], bool],
            where: Callable[[str], bool] = lambda screen: True) -> set[str]:
    """The elements of ``kind`` on the screens (those ``where`` admits) where the run tapped one of
    that kind, less the ones it tapped."""
    tapped = {e for r in actions if r.get("call") in _TAPS and r.get("ok", True)
              and (e := doc.element(_base(r.get("resolved")) or "")) is not None and kind(e) and where(e.screen)}
    screens = {e.screen for e in tapped}
    return {e.name for e in doc.elements if e.screen in screens and kind(e)} - {e.name for e in tapped}


def _within_reach(doc: L.AppDocument, element: str, near: set[str]) -> bool:
    """Whether the run came to ``element``'s screen or stopped one step short of it: an option of
    a screen the run never came near is another feature's ('10 minutes' of a snooze dialog for a
    10-minute timer, 'First name' of a sort order for a contact's first name), not a choice missed."""
    e = doc.element(element)
    return not near or e is None or e.screen in near


def _last_action(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]
                 ) -> tuple[Mapping[str, Any], L.Element] | None:
    """The last action that ran and the document's element it acted on (None: no such action, or
    an element the document does not have)."""
    done = [r for r in actions if r.get("ok", True)]
    if not done:
        return None
    element = doc.element(_base(done[-1].get("resolved")) or _base(done[-1].get("element")) or "")
    return (done[-1], element) if element is not None else None


def _is_choice(element: L.Element) -> bool:
    """An item picked or a box ticked: what a dialog's OK or a screen's Save then applies."""
    return element.is_list or element.item_of is not None or element.kind in (L.Kind.CHECKBOX, L.Kind.SWITCH)


def _one_word(element: L.Element) -> str | None:
    """The one word an element's name says besides "button" ("ok" of ``dialog__ok_button``), else None."""
    said = set(element.local_name.split("_")) - {"button", ""}
    return next(iter(said)) if len(said) == 1 else None


def _dialog_left_open(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]] | None:
    """(dialog, its confirming elements) when the last action that ran opened a dialog with one."""
    found = _last_action(doc, actions)
    if found is None:
        return None
    last, element = found
    after = last.get("screen_after")
    if not isinstance(after, str) or element.screen == after or not L.transient(doc, after):
        return None
    screen = doc.screen(after)
    if screen is None or after == doc.app.start_screen:  # a launch screen named "main_menu" is no dialog
        return None
    asks = any(_android(e, "button2") for e in screen.elements)  # an AlertDialog with a negative button
    # "yes_button", "delete_button"; or the positive button beside a negative one; or an OK
    # beside a Cancel (a form in a dialog: export's file name, never sent off)
    confirms = _buttons(screen, _DECIDE, "button1" if asks else None) or _form_keeps(screen)
    return (after, confirms) if confirms else None


def _android(element: L.Element, button: str) -> bool:
    """Whether an identifier of ``element`` names Android's dialog button ``button`` (``button1``:
    the positive one)."""
    return any(f"'android:id/{button}'" in i.xpath for i in element.identifiers)


def _buttons(screen: L.Screen, word: re.Pattern[str], android: str | None = None) -> list[str]:
    """The controls of ``screen`` (no text, list nor list item) whose name says one word that
    ``word`` matches ("ok" of ``dialog__ok_button``), or that are Android's ``android`` button
    under a generated name (``button_1_button``) or none."""
    found = []
    for e in screen.elements:
        if e.kind is L.Kind.TEXT or e.item_of or e.is_list:
            continue
        said = _one_word(e)
        if said is not None and word.fullmatch(said) or (android is not None and said in ("1", "2", None)
                                                         and _android(e, android)):
            found.append(e.name)
    return found


#: A form's button that keeps what it holds, and one that leaves it.
_KEEP = re.compile(r"(save|ok|okay|done|confirm|apply)")
_LEAVE = re.compile(r"(cancel|discard|close)")


def _form_left_open(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]] | None:
    """(screen, its keeping buttons) when the last action that ran opened a screen that is no
    dialog but a form (a Save or OK beside a Cancel: a new timer, a new event) and the run ended
    there: what the task adds was never kept."""
    found = _last_action(doc, actions)
    if found is None:
        return None
    last, element = found
    after = last.get("screen_after")
    if (not isinstance(after, str) or element.screen == after or L.transient(doc, after)
            or after == doc.app.start_screen):
        return None
    screen = doc.screen(after)
    keeps = _form_keeps(screen) if screen is not None else []
    return (after, keeps) if keeps else None


def _form_keeps(screen: L.Screen) -> list[str]:
    """A form's buttons that keep what it holds (Save, OK beside a Cancel); none when ``screen``
    has no such pair."""
    keeps = _buttons(screen, _KEEP)
    return keeps if keeps and _buttons(screen, _LEAVE) else []


#: A dialog's button that dismisses it; a task that says so wants it dismissed.
_DISMISS = re.compile(r"(cancel|no)")
_SAYS_DISMISS = re.compile(r"\b(cancel|dismiss|abort|keep|don't|do not|never)\b")


def _cancelled(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]], script: str,
               task: str | None) -> tuple[str, str, list[str], int | None] | None:
    """(dialog, the dismissing button, the dialog's deciding buttons, the script's line that
    tapped it when it is the script's last, unindented) when the run's last action dismissed a
    dialog that asks for a decision (Cancel beside Delete, OK, Rename...) and the task does not
    say to cancel: the model wrote the task up to its last step and then took the wrong one."""
    found = _last_action(doc, actions)
    if found is None or task is None or _SAYS_DISMISS.search(task.lower()):
        return None
    last, element = found
    if last.get("call") not in _TAPS or not L.transient(doc, element.screen) or element.screen == doc.app.start_screen:
        return None
    screen = doc.screen(element.screen)
    if screen is None or element.name not in _buttons(screen, _DISMISS, "button2"):
        return None
    decides = _buttons(screen, _ANSWER, "button1")
    if not decides:
        return None
    line = last.get("line")
    lines = script.rstrip().splitlines()
    at = line if isinstance(line, int) and line == len(lines) and not lines[-1][:1].isspace() else None
    return element.screen, element.name, decides, at


#: A dialog's button that confirms a choice made in it (a sort order picked, a box ticked).
_CONFIRM_CHOICE = re.compile(r"(ok|okay|done|apply|save|set|confirm|select)")
#: What answers a dialog that asks: a decision or a confirmation.
_ANSWER = re.compile(f"{_DECIDE.pattern}|{_CONFIRM_CHOICE.pattern}")


def _choice_left_open(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]] | None:
    """(dialog, its confirming buttons) when the last action that ran picked an item or ticked a
    box in a dialog that stayed open, and the dialog has a button to confirm it (OK included: after
    a choice an OK applies it, not only closes the dialog)."""
    found = _last_action(doc, actions)
    if found is None:
        return None
    last, element = found
    screen = doc.screen(element.screen)
    if last.get("screen_after") != element.screen or screen is None or element.screen == doc.app.start_screen:
        return None
    if not _is_choice(element):
        return None
    if not L.transient(doc, element.screen):
        # a screen that is a form (a sort order's page with OK and Cancel) asks the same
        keeps = _form_keeps(screen)
        return (element.screen, keeps) if keeps else None
    confirms = _buttons(screen, _CONFIRM_CHOICE, "button1")
    return (element.screen, confirms) if confirms else None


#: A screen's button that keeps what was changed on it (customize colors: Save).
_SAVE = re.compile(r"(save|apply|done)")


def _choice_unsaved(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> tuple[str, str, list[str]] | None:
    """(dialog, screen, its saving buttons) when the last action that ran picked an item or ticked
    a box in a dialog that then closed onto a screen (not a dialog) with a Save, Apply or Done."""
    found = _last_action(doc, actions)
    if found is None:
        return None
    last, element = found
    after = last.get("screen_after")
    if not isinstance(after, str) or after == element.screen:
        return None
    screen = doc.screen(after)
    if not _is_choice(element) or screen is None or not L.transient(doc, element.screen) or L.transient(doc, after):
        return None
    saves = _buttons(screen, _SAVE)
    return (element.screen, after, saves) if saves else None


def post_run_findings(doc: L.AppDocument, script: str, records: Sequence[Mapping[str, Any]], *,
                      plan_elements: Iterable[str] = (), effect_screen: str | None = None,
                      task: str | None = None) -> list[Finding]:
    """What the finished run left undone (empty when every check holds); see the module docstring."""
    actions = _acted(records)
    touched: set[str] = set()
    for r in actions:
        for key in ("element", "child", "resolved"):
            base = _base(r.get(key))
            if base:
                touched.add(base)
    known = {e.name for e in doc.elements}
    named = list(dict.fromkeys([*(_base(p) or "" for p in plan_elements), *_ELEMENT.findall(script)]))
    findings: list[Finding] = []
    walk = screen_walk(doc, script)
    if walk is not None:
        findings.append(Finding("screen-walk", f"the script finished, but {walk.message()}"))
    # children of a list item count as used when their list was (item.tap($child) names the list)
    unused = [n for n in named if n in known and n not in touched and (doc.element(n) or _NO).item_of not in touched]
    if unused:
        shown = ", ".join(f"${n}" for n in unused)
        findings.append(Finding("unused-element", f"the script finished, but never acted on {shown}, which "
                                                  "the plan names: the task is probably not done"))
    typed = [i for i, r in enumerate(actions) if r.get("call") == "set_text" and r.get("ok", True)]
    if typed:
        last = typed[-1]
        name = _base(actions[last].get("resolved")) or _base(actions[last].get("element")) or ""
        element = doc.element(name)
        screen = doc.screen(element.screen) if element is not None else None
        confirms = [e.name for e in (screen.elements if screen is not None else ()) if _is_confirm(doc, e.name)]
        after = actions[last + 1:]
        confirmed = any(r.get("call") == "enter" or (r.get("call") in _TAPS and r.get("ok", True))
                        for r in after)
        if confirms and not confirmed:
            shown = ", ".join(f"${c}" for c in confirms)
            findings.append(Finding("unconfirmed-input", f"the script typed into ${name} and then did nothing "
                                                         f"more: its screen has {shown}; tap it to confirm",
                                    _tap(confirms)))
    kept = _choice_unsaved(doc, actions) if not any(f.check == "unconfirmed-input" for f in findings) else None
    if kept is not None:
        dialog, onto, saves = kept
        shown = ", ".join(f"${c}" for c in saves)
        findings.append(Finding("unconfirmed-input", f"the script made its choice in {dialog}, which closed onto "
                                                     f"{onto}, and then did nothing more: {onto} has {shown}; "
                                                     "tap it to keep the change", _tap(saves)))
    asked = _permission_asked(actions[-1:])
    if asked is not None:
        grant, question = asked
        findings.append(Finding("permission-asked", f"the script finished with the system asking {question!r} "
                                                    f"over the app: grant it with tap_text({grant!r}) if the "
                                                    "task needs it", f"tap_text({grant!r})"))
    twice = _toggled_back(doc, actions, script, task or "")
    if twice is not None:
        toggle, first, second = twice
        findings.append(Finding("toggled-back", f"the script tapped {toggle} on line {first} and again on line "
                                                f"{second}, nothing between: the second tap undid the first", "",
                                second))
    wanted = wanted_state(task) if task else None
    undone = taps_undone(actions, {e.name for e in doc.elements if e.kind in _TOGGLES}, wanted) \
        if wanted is not None and twice is None else []
    if undone:
        undid = undone[0]
        at = undid.get("line")
        fix = guarded_tap(script, at, wanted) if isinstance(at, int) and wanted is not None else None
        what = f"{undid.get('element')}" + (f" ({undid['text']!r})" if undid.get("text") else "")
        state = "ticked or on" if wanted else "unticked or off"
        findings.append(Finding("toggle-undone", f"the script tapped {what} on line {at}, which was already "
                                                 f"{state}, as the task wants it: the tap undid it; tap a toggle "
                                                 "only where get_attributes(...)[\"checked\"] says it is not so yet",
                                fix, at if fix is not None else None))
    opened = _dialog_left_open(doc, actions)
    if opened is not None:
        dialog, confirms = opened
        shown = ", ".join(f"${c}" for c in confirms)
        findings.append(Finding("dialog-left-open", f"the script finished with {dialog} open (its last tap opened "
                                                    f"it): confirm it with {shown} if the task needs it done",
                                    _tap(confirms)))
    chosen = _choice_left_open(doc, actions) if opened is None else None
    if chosen is not None:
        dialog, confirms = chosen
        shown = ", ".join(f"${c}" for c in confirms)
        findings.append(Finding("dialog-left-open", f"the script made its choice in {dialog} and finished with it "
                                                    f"open: confirm the choice with {shown}", _tap(confirms)))
    form = _form_left_open(doc, actions) if opened is None else None
    if form is not None:
        opened_form, keeps = form
        shown = ", ".join(f"${c}" for c in keeps)
        findings.append(Finding("form-left-open", f"the script finished on {opened_form}, which its last tap opened, "
                                                  f"and never kept what it holds: tap {shown} if the task adds or "
                                                  "changes something", _tap(keeps)))
    cancelled = _cancelled(doc, actions, script, task)
    if cancelled is not None:
        dialog, cancel, decides, line = cancelled
        shown = ", ".join(f"${c}" for c in decides)
        fix = _tap(decides) if line is not None else None
        findings.append(Finding("dialog-cancelled", f"the script's last tap, ${cancel}, dismissed {dialog}: the "
                                                    f"task does not say to cancel; tap {shown} instead",
                                fix, line if fix is not None else None))
    if effect_screen:
        screens = {r.get("screen_after") or r.get("screen") for r in records}
        if effect_screen not in screens:
            findings.append(Finding("effect-not-reached", f"the script finished, but the app never showed "
                                                          f"{effect_screen}, where the task's effect is"))
    if task:
        near = _near_screens(doc, records, touched)
        missed = [(name, option) for name, option in _options_named(doc, task, _beside_picks(doc, actions))
                  if not _picked(records, option) and _within_reach(doc, name, near)]
        if missed:
            shown = "; ".join(f"'{o}' is an option of ${n}: ${n}.match({o!r}).tap()" for n, o in missed[:3])
            # one option, or the one on the list the task names (its 'max reminder duration' dialog)
            meant = missed[0] if len(missed) == 1 else next(
                (m for m in missed if m[0] == closest_to_task(doc, [n for n, _ in missed], task)), None)
            fix = f"${meant[0]}.match({meant[1]!r}).tap()" if meant is not None else None
            findings.append(Finding("option-not-picked", f"the script finished, but never picked what the task "
                                                         f"names: {shown}", fix))
    if task:
        labelled = _elements_named(doc, task, _toggles_beside(doc, actions))
        if labelled and not any(name in touched or _picked(records, label) for name, label, _ in labelled):
            most = max(n for _, _, n in labelled)
            best = [name for name, _, n in labelled if n == most]
            shown = "; ".join(f"${name} ({label!r})" for name, label, n in labelled if n == most)
            # a control is acted on by a tap; a field's or a text's use is the model's to say
            control = doc.element(best[0]) if len(best) == 1 else None
            fix = _tap(best) if control is not None and control.kind in _TAPPED else None
            findings.append(Finding("element-not-used", f"the script finished, but never acted on what the task "
                                                        f"names: {shown}; act on it (the runtime goes to its "
                                                        f"screen)", fix))
    only_read = _toggle_only_read(doc, actions, task) if task else None
    if only_read is not None:
        mended = read_fix(script, only_read, wanted)
        findings.append(Finding("toggle-only-read", f"the script read ${only_read} and tapped nothing after it: the "
                                                    "task changes something; its 'checked' is True while it is "
                                                    "ticked or on, so tap it where that is not what the task wants",
                                *(mended or (None, None))))
    searched = _search_not_typed(doc, script, actions, task) if task else None
    # a search field the task names is search-not-typed's to tell, with the term to type
    if task and searched is None and not any(f.check == "element-not-used" for f in findings):
        controls = _controls_named(doc, task, actions, touched, records)
        if controls:
            shown = "; ".join(f"${name} ({' '.join(words)!r})" for name, words in controls)
            element = doc.element(controls[0][0]) if len(controls) == 1 else None
            fix = f"${element.name}.tap()" if element is not None and element.kind is L.Kind.BUTTON else None
            at = None
            if element is not None and element.kind is L.Kind.INPUT:
                # "a 10-minute timer" and minutes_input: typed before the run's first action there
                number = _number_for(task, controls[0][1])
                first_act = _first_line_on(doc, script, actions, element.screen) if number else None
                if first_act is not None:
                    at, line_text = first_act
                    fix = f"{indent_of(line_text)}${element.name}.set_text({number!r})\n{line_text}"
            findings.append(Finding("control-not-used", f"the script finished, but never acted on what the task "
                                                        f"names, on a screen where it acted: {shown}; act on it "
                                                        "if the task needs it", fix, at))
    if searched is not None:
        field, term, line = searched
        shown = f"${field}.set_text({term!r})" if field else "set_text into the app's search field"
        fix = f"${field}.set_text({term!r})" if field and term else None
        if fix is not None and line is not None:
            fix = f"{fix}\n{script.splitlines()[line - 1]}"  # typed first, then the pick the model wrote
        findings.append(Finding("search-not-typed", f"the task says to search, but the script never typed into a "
                                                    f"search field: {shown}"
                                                    + (" before picking the result" if line is not None else ""),
                                fix, line if fix is not None else None))
    left = _search_left(doc, actions, task) if task and searched is None else None
    if left is not None:
        field, picked, results, line = left
        shown = ", ".join(f"${r}" for r in results)
        fix = None
        if len(results) == 1 and line is not None and 1 <= line <= len(script.splitlines()):
            fix = script.splitlines()[line - 1].replace(f"${picked}", f"${results[0]}")
        findings.append(Finding("search-left", f"the script typed into ${field}, then picked from ${picked} on "
                                               f"another screen: the search's results are in {shown}",
                                fix, line if fix is not None else None))
    typed_twice = _typed_twice(doc, script, actions, quoted_texts(task) if task else ())
    if typed_twice is not None:
        at_line, whole, part, into, other, split = typed_twice
        findings.append(Finding("text-typed-twice", f"the script typed {whole!r} into ${into} and {part!r} into "
                                                    f"${other} on the same form: the part goes into one field "
                                                    f"only; {split.strip()}", split, at_line))
    if task:
        quoted = quoted_texts(task)
        missing = [q for q in quoted if not _picked(records, _given(q))]
        retyped = [(q, t) for q in quoted if q not in missing and (t := _typed_otherwise(records, q)) is not None]
        if retyped and not missing:
            text, typed_as = retyped[0]
            findings.append(Finding("text-not-given", f"the script typed {typed_as!r}, but the task gives "
                                                      f"{text!r}: type it exactly as quoted"))
        if missing:
            text = missing[0]
            # the form a line opened and the run left untyped; else the one field where the run stopped
            passed = _field_passed(doc, script, actions, task, _given(text)) if len(missing) == 1 else None
            field = _one_field(doc, actions) if passed is None else None
            fix = f"${field}.set_text({_given(text)!r})" if field is not None and len(missing) == 1 else None
            at = None
            if passed is not None:
                at, fix = passed
            findings.append(Finding("text-not-given", f"the script finished, but never typed nor picked {text!r}, "
                                                      f"which the task gives: type it with set_text into the field "
                                                      f"it belongs to (and confirm), or pick it with "
                                                      f".match({text!r})", fix, at))
    return findings


#: Words of an id that say what kind of control it is, not which one.
_KIND_WORDS = frozenset({"button", "btn", "switch", "checkbox", "check", "input", "edit", "text", "txt", "list",
                         "tab", "item", "row", "title", "label", "field", "value", "menu", "option", "dialog",
                         "screen", "bar", "toolbar", "container", "layout", "fab", "icon", "image", "img", "more",
                         "navigate", "up", "back", "home", "action", "holder", "id", "et", "tv", "iv", "ib"})
#: The kinds of control a task names by what it does.
_CONTROLS = frozenset({L.Kind.BUTTON, L.Kind.SWITCH, L.Kind.CHECKBOX, L.Kind.INPUT, L.Kind.TAB})
#: A word of ids on more screens than this is the app's vocabulary, not one control's.
SPREAD_SCREENS = 2


def _id_words(name: str, plain: bool = False) -> frozenset[str]:
    """The words of an id that say which control it is ('album art' of ``album_art_switch``); with
    ``plain``, its plain words too ('all' of ``delete_all_button``)."""
    words = {_stem(w) for w in _words(name.replace("_", " "))} - _KIND_WORDS
    return frozenset(w for w in words if not w.isdigit() and (plain and w in _PLAIN or w not in _PLAIN and len(w) > 2))


#: What a description says a tap on the element does ("The phone number; tap to call.").
_TAP_TO = re.compile(r"\btap(?:ped)?(?: it| here| on it)? to (\w+)", re.IGNORECASE)


def _tap_does(description: str | None) -> frozenset[str]:
    """The verbs ``description`` says a tap on its element does: tapping the number that says "tap
    to call" is the call, however the call button went untouched."""
    return frozenset(_stem(w) for m in _TAP_TO.finditer(description or "") for w in _words(m.group(1)))


def _task_sequence(task: str) -> list[str]:
    """The task's words in order, in the form ``_words`` and ``_stem`` give them."""
    return [_stem(next(iter(_words(w)), w)) for w in _WORD.findall(task.lower())]


def _controls_named(doc: L.AppDocument, task: str, actions: Sequence[Mapping[str, Any]], touched: set[str],
                    records: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """``(element, words)`` for each control the task names by its id's words on a screen where the
    run acted, which the run never used (``control-not-used`` in the module docstring)."""
    if _ASKS.search(task):
        return []
    quoted = {_stem(w) for q in quoted_texts(task) for w in _words(q)}
    said = {_stem(w) for w in _words(task)} - quoted
    spread: dict[str, set[str]] = {}
    for screen in doc.screens:
        for word in _id_words(screen.name) | {w for e in screen.elements for w in _id_words(e.local_name)}:
            spread.setdefault(word, set()).add(screen.name)
    used = [e for name in touched if (e := doc.element(name)) is not None]
    used_words = {w for e in used for w in _id_words(e.local_name) | _tap_does(e.description)}
    sequence = _task_sequence(task)

    def qualifies(word: str) -> bool:  # "mobile number", the number typed: it says which number
        at = [i for i, w in enumerate(sequence) if w == word]
        return any(0 <= j < len(sequence) and sequence[j] in used_words for i in at for j in (i - 1, i + 1))

    # the screen an action's element is on (the runtime may have navigated there first)
    acted = dict.fromkeys([*(s for r in actions if isinstance(s := r.get("screen_before"), str)),
                           *(e.screen for e in used)])
    named: list[tuple[str, list[str]]] = []
    for screen_name in acted:
        shown = doc.screen(screen_name)
        controls = [e for e in (shown.elements if shown is not None else ()) if e.kind in _CONTROLS
                    and not e.item_of]
        words = {e.name: _id_words(e.local_name) for e in controls}
        for e in controls:
            own = words[e.name]
            # every word of the id is the task's: 'delete all' is not "delete the last photo"
            if (not own or not _id_words(e.local_name, plain=True) <= said or e.name in touched or own & used_words
                    or all(len(spread.get(w, ())) > SPREAD_SCREENS for w in own)
                    or any(own & words[o.name] for o in controls if o is not e)
                    or any(_picked(records, w) for w in own) or any(qualifies(w) for w in own)):
                continue
            named.append((e.name, sorted(own)))
    return named


def _toggle_only_read(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]], task: str) -> str | None:
    """The toggle the run read (``toggle-only-read`` in the module docstring) and tapped nothing
    after; None when the run tapped after its first read, read no toggle, or the task asks."""
    if _ASKS.search(task):
        return None
    read: str | None = None
    for r in actions:
        if r.get("call") in _TAPS and r.get("ok", True):
            if read is not None:
                return None
            continue
        name = _base(r.get("resolved")) or _base(r.get("child")) or _base(r.get("element"))
        element = doc.element(name) if name else None
        if read is None and element is not None and element.kind in _TOGGLES and r.get("ok", True):
            read = element.name
    return read


#: Kinds of element whose use is a tap.
_TAPPED = frozenset({L.Kind.BUTTON, L.Kind.CHECKBOX, L.Kind.SWITCH, L.Kind.TAB, L.Kind.OTHER, L.Kind.IMAGE})


def _tap(names: Sequence[str]) -> str | None:
    """The tap on the one element of ``names``; None when there are several to choose from."""
    return f"${names[0]}.tap()" if len(names) == 1 else None


#: Checks whose fix does part of the task, not the step that ends it (a permission prompt first:
#: it covers the app, and nothing else can be done before it is answered).
_DOING = ("permission-asked", "toggled-back", "toggle-undone", "option-not-picked", "element-not-used",
          "control-not-used", "search-not-typed", "search-left", "text-typed-twice", "text-not-given")

#: A permission prompt's buttons that grant, the narrowest first ("While using the app" before
#: "Allow": Android 11+ asks both ways).
_GRANT = ("While using the app", "Only this time", "Allow")


def grant_button(record: Mapping[str, Any]) -> str | None:
    """The text of the button that grants the system's permission prompt an action's trace record
    left over the app (``app_after``, ``texts_after``); None when it left none."""
    if not L.permission_prompt(record.get("app_after")):
        return None
    shown = {t.strip().casefold(): t.strip() for t in record.get("texts_after") or () if isinstance(t, str)}
    return next((shown[g.casefold()] for g in _GRANT if g.casefold() in shown), None)


def _permission_asked(actions: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(the button that grants, the question) when the last of ``actions`` left the system's
    permission prompt over the app; None otherwise."""
    grant = grant_button(actions[-1]) if actions else None
    if grant is None:
        return None
    texts = [t for t in actions[-1].get("texts_after") or () if isinstance(t, str)]
    return grant, next((t for t in texts if t.rstrip().endswith("?")), texts[0])

_SEARCH = re.compile(r"\bsearch", re.IGNORECASE)
_PICK = re.compile(r"^\$([A-Za-z_][\w%]*)\.match\(\s*('[^'\\]*'|\"[^\"\\]*\")\s*\)")


def _search_not_typed(doc: L.AppDocument, script: str, actions: Sequence[Mapping[str, Any]], task: str
                      ) -> tuple[str | None, str | None, int | None] | None:
    """The task says to search and the run typed into no search field: the field (the document's
    one search input, or the one on the screen of the list the script picks from), the term (what
    the script picks with ``.match()`` when the task says it, else the text the task quotes) and
    the script's line that picks it (the text is typed just before); None when the check holds.
    A small model picks the contact from the list and never searches ("search contact Alice")."""
    if not _SEARCH.search(task):
        return None
    fields = [e for e in doc.elements if e.kind is L.Kind.INPUT and not e.item_of
              and _SEARCH.search(f"{e.local_name.replace('_', ' ')} {e.description}")]
    if not fields:
        return None
    names = {e.name for e in fields}
    if any(r.get("call") == "set_text" and r.get("ok", True)
           and (_base(r.get("resolved")) in names or _base(r.get("element")) in names) for r in actions):
        return None
    asked = _words(task)
    term: str | None = None
    line: int | None = None
    picked: str | None = None
    for i, text in enumerate(script.splitlines(), 1):
        m = _PICK.match(text)
        if m and _words(m.group(2)[1:-1]) and _words(m.group(2)[1:-1]) <= asked:
            picked, term, line = m.group(1), m.group(2)[1:-1], i
            break
    if term is None:
        quoted = quoted_texts(task)
        term = quoted[0] if quoted else None
    field = fields[0] if len(fields) == 1 else None
    if field is None and picked is not None:
        element = doc.element(picked)
        beside = [e for e in fields if element is not None and e.screen == element.screen]
        field = beside[0] if len(beside) == 1 else None
    return (field.name if field is not None else None), term, line


def _search_left(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]], task: str
                 ) -> tuple[str, str, list[str], int | None] | None:
    """(the search field typed into last, the list picked from after it on another screen, the
    lists of the field's screen, the script's line of that pick); None when the task does not
    say search, the run picked from its field's screen, or that screen has no list of its own."""
    if not _SEARCH.search(task):
        return None
    typed: tuple[int, L.Element] | None = None
    for i, r in enumerate(actions):
        name = _base(r.get("resolved")) or _base(r.get("element"))
        element = doc.element(name) if name else None
        if (r.get("call") == "set_text" and r.get("ok", True) and element is not None
                and element.kind is L.Kind.INPUT and _SEARCH.search(f"{element.local_name} {element.description}")):
            typed = (i, element)
    if typed is None:
        return None
    at, field = typed
    screen = doc.screen(field.screen)
    results = [e.name for e in (screen.elements if screen is not None else ()) if e.is_list and not e.item_of]
    if not results:
        return None
    for r in actions[at + 1:]:
        name = _base(r.get("element"))
        element = doc.element(name) if name else None
        if element is None or r.get("call") not in ("match", "tap", "item"):
            continue
        if not element.is_list or element.screen == field.screen:
            return None
        line = r.get("line")
        return field.name, element.name, results, line if isinstance(line, int) else None
    return None


def completed(script: str, findings: Sequence[Finding]) -> tuple[str, Finding] | None:
    """``script`` with the first finding's one fixing statement (``Finding.fix``) appended, or in
    the place of the line it replaces (``Finding.replaces``), and that finding; None when no
    finding has one. The run stopped one step short (the dialog's OK, the screen's Save, the option
    the task names) or took the wrong last step (Cancel): that step needs no model to write it."""
    fixing = [f for f in findings if f.fix or (f.fix == "" and f.replaces is not None)]
    # what the task names comes before the tap that closes its screen (Descending, then OK)
    finding = min(fixing, key=lambda f: _DOING.index(f.check) if f.check in _DOING else len(_DOING), default=None)
    if finding is None or finding.fix is None:
        return None
    lines = script.rstrip().splitlines()
    if finding.replaces is not None:
        if not 1 <= finding.replaces <= len(lines):
            return None
        if finding.fix:
            lines[finding.replaces - 1] = finding.fix
        else:  # the line is one too many: it goes
            del lines[finding.replaces - 1]
    else:
        lines.append(finding.fix)
    return "\n".join(lines) + "\n", finding


def plan_after(plan: Sequence[str], before: str, after: str) -> tuple[str, ...]:
    """The plan's elements less those a fix took out of the script (named in ``before``, no longer
    in ``after``: the second tap of a toggle dropped). Left in, ``unused-element`` would send the
    fixed run back for the very tap the fix removed."""
    gone = set(_ELEMENT.findall(before)) - set(_ELEMENT.findall(after))
    return tuple(p for p in plan if _base(p) not in gone)


def _one_field(doc: L.AppDocument, actions: Sequence[Mapping[str, Any]]) -> str | None:
    """The one text field of the screen the run ended on (a search box, a name dialog's input),
    None when it has none or several."""
    found = _last_action(doc, actions)
    if found is None:
        return None
    last, element = found
    after = last.get("screen_after")
    screen = doc.screen(after if isinstance(after, str) else element.screen)
    fields = [e.name for e in (screen.elements if screen is not None else ())
              if e.kind is L.Kind.INPUT and not e.item_of]
    return fields[0] if len(fields) == 1 else None


def _typed_twice(doc: L.AppDocument, script: str, actions: Sequence[Mapping[str, Any]], quoted: Sequence[str] = ()
                 ) -> tuple[int, str, str, str, str, str] | None:
    """``(line, whole, part, field, other field, the line fixed)`` when the run typed a text into
    one field of a screen and its first or last words again into another ("Grace Hopper" as the
    first name, "Hopper" as the last): the whole name went into the first field. The fixed line
    types the whole less the part ("Grace"). None when no two fields were so typed, or the line
    does not hold the whole as one literal, or the task quotes the whole as it was typed (a note
    titled 'Shopping' whose text is 'Shopping list: milk')."""
    typed: list[tuple[int, str, str, str]] = []  # (line, text, field, screen)
    for r in actions:
        text = (r.get("args") or {}).get("text")
        element = doc.element(_base(r.get("resolved")) or _base(r.get("element")) or "")
        if r.get("call") == "set_text" and isinstance(text, str) and element is not None and isinstance(
                r.get("line"), int):
            typed.append((r["line"], text, element.name, element.screen))
    lines = script.splitlines()
    given = {" ".join(q.split()) for q in quoted}
    for line, whole, field, screen in typed:
        words = whole.split()
        if " ".join(words) in given:
            continue
        for _, part, other, where in typed:
            cut = part.split()
            if where != screen or other == field or not cut or len(cut) >= len(words):
                continue
            rest = words[:-len(cut)] if words[-len(cut):] == cut else words[len(cut):] if words[:len(cut)] == cut \
                else None
            if rest is None or not 1 <= line <= len(lines):
                continue
            literals = [q for q in (repr(whole), f'"{whole}"') if lines[line - 1].count(q) == 1]
            if not literals:
                continue
            return line, whole, part, field, other, lines[line - 1].replace(literals[0], repr(" ".join(rest)))
    return None


def _number_for(task: str, words: Sequence[str]) -> str | None:
    """The number the task gives right before one of a field's id ``words`` ("a 10-minute timer",
    "3 servings"), None when it gives none there or several."""
    tokens = _WORD.findall(task.lower())
    found = {tokens[i - 1] for i, t in enumerate(tokens)
             if i and tokens[i - 1].isdigit() and _stem(next(iter(_words(t)), t)) in words}
    return found.pop() if len(found) == 1 else None


def _first_line_on(doc: L.AppDocument, script: str, actions: Sequence[Mapping[str, Any]], screen: str
                   ) -> tuple[int, str] | None:
    """``(line, its text)`` of the run's first action on an element of ``screen``, when that line
    is a simple statement (what goes before it goes on the same footing)."""
    lines = script.splitlines()
    for r in actions:
        element = doc.element(_base(r.get("resolved")) or _base(r.get("element")) or "")
        line = r.get("line")
        if element is None or element.screen != screen or not isinstance(line, int):
            continue
        if not 1 <= line <= len(lines) or lines[line - 1].rstrip().endswith(":"):
            return None
        return line, lines[line - 1]
    return None


def _field_passed(doc: L.AppDocument, script: str, actions: Sequence[Mapping[str, Any]], task: str, text: str
                  ) -> tuple[int, str] | None:
    """``(line, what takes its place)``: ``text`` typed into the form the run left untyped, the
    field the task's other words name where there are several. Either a line opened a dialog or
    form with a text field and the run left it without typing there (the rename dialog opened
    from the menu, then "Navigate up"): the text goes right after that line, with the confirming
    tap where the run's next action was not that tap. Or the run tapped the Save of a form none of
    whose fields it typed into (the runtime opened the note's editor for it): the text goes right
    before that line. None when the run typed there, stayed there to its end (``_one_field``'s
    case), did something else there, or the line is not a simple statement."""
    done = [r for r in actions if r.get("ok", True)]
    lines = script.splitlines()
    said = _QUOTED.sub(" ", task)  # the field is named by the task's words, not by its data
    typed = {doc.element(n).screen for r in done if r.get("call") == "set_text"  # type: ignore[union-attr]
             and (n := _base(r.get("resolved")) or _base(r.get("element")) or "") and doc.element(n) is not None}

    def form(name: str) -> tuple[list[str], list[str]] | None:
        screen = doc.screen(name)
        if screen is None or name == doc.app.start_screen:
            return None
        fields = [e.name for e in screen.elements if e.kind is L.Kind.INPUT and not e.item_of]
        keeps = (_buttons(screen, _DECIDE) or _form_keeps(screen)) if L.transient(doc, name) else _form_keeps(screen)
        return (fields, keeps) if fields and keeps else None

    for i, r in enumerate(done):
        after, line = r.get("screen_after"), r.get("line")
        element = doc.element(_base(r.get("resolved")) or _base(r.get("element")) or "")
        if element is None or not isinstance(line, int) or not 1 <= line <= len(lines) or lines[line - 1].rstrip(
                ).endswith(":"):
            continue
        own = lines[line - 1]
        page = doc.screen(element.screen)
        if (r.get("call") in _TAPS and element.screen not in typed and page is not None
                and element.name in _buttons(page, _KEEP)
                and (fields := [e.name for e in page.elements if e.kind is L.Kind.INPUT and not e.item_of])):
            field = closest_to_task(doc, fields, said)  # its Save tapped, nothing typed there
            return (line, f"{indent_of(own)}${field}.set_text({text!r})\n{own}") if field else None
        if not isinstance(after, str) or element.screen == after or i + 1 >= len(done) or (
                shown := form(after)) is None:
            continue
        fields, keeps = shown
        if after in typed or done[i + 1].get("screen_before") != after:
            return None
        field = closest_to_task(doc, fields, said)
        if field is None:
            return None
        fix = [own, f"{indent_of(own)}${field}.set_text({text!r})"]
        on = doc.element(_base(done[i + 1].get("resolved")) or _base(done[i + 1].get("element")) or "")
        if on is not None and on.screen == after:
            if on.name not in keeps or done[i + 1].get("call") not in _TAPS:
                return None  # it acted there (a choice, a Cancel): what it meant is the model's to say
        elif len(keeps) == 1:
            fix.append(f"{indent_of(own)}${keeps[0]}.tap()")
        return line, "\n".join(fix)
    return None


def _typed_otherwise(records: Iterable[Mapping[str, Any]], text: str) -> str | None:
    """A text the run typed with the words of ``text`` but not its characters ('Booked for the
    28th, 10:00' for 'Booked for the 28th, 10:00.'), unless it also typed ``text`` itself; None
    when it did not. Only typing counts: a pick by ``.match()`` is fuzzy by design."""
    want = " ".join(text.split())
    near = None
    for r in records:
        if r.get("event") != "action" or r.get("ok") is False or r.get("call") != "set_text":
            continue
        typed = (r.get("args") or {}).get("text")
        if not isinstance(typed, str):
            continue
        if " ".join(typed.split()) == want:
            return None
        if near is None and _words(typed) == _words(text) and _words(text):
            near = typed
    return near


def _given(text: str) -> str:
    """What of a quoted text a run must show: a path's last folder ('Internal/DCIM/': the run may
    start inside Internal), a file name without its extension (the app often adds it)."""
    parts = [p for p in text.split("/") if _words(p)]
    last = parts[-1] if parts else text
    stem = re.sub(r"\.[A-Za-z0-9]{1,4}$", "", last.strip())
    return stem if _words(stem) else last


def quoted_texts(task: str) -> list[str]:
    """The texts ``task`` quotes, in order (a name to type, an item to pick)."""
    found = (next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(task))
    return list(dict.fromkeys(t for t in found if _words(t)))
