"""The sensitive-action guard: a tap that deletes, sends, pays, calls or answers a payment,
permission or warning dialog needs permission.

A tap (or long tap) is **sensitive** when

* the app document marks its element (or the list of its item) ``sensitive: true``;
* it is a control (not a row of content) whose label, description, resource id or element name
  says delete, send, pay, call, sign out... (the danger policy's words, several languages:
  ``tapir.docgen.build.policy.DANGEROUS``); a row counts as a control on a menu or dialog. A
  checkbox, switch or radio button is an option, not an action ("Send message on pressing Enter",
  "Do not ask again"): ticking it does nothing yet. A Send outside a dialog sends what was written,
  so it counts only where the screen has a field to write in: "Send SMS" on a contact's page opens
  a composer;
* it answers a dialog whose texts ask for a permission (a default-app role too), a payment (or
  warn of charges) or warn of a loss (``lexicon.dialog_category``), with anything but a declining
  answer (Cancel, Not now, Deny...). An answer is a button: not the dialog's title or message, not
  a container of other controls, not one of its choices (the apps listed under "Set Firefox as
  your default browser app?" are picked, not answered).
  A warning that offers no way to decline (one OK under "WARNING: some launchers do not handle
  icon customization") only informs: acknowledging it changes nothing that dismissing it would
  not, so it is not sensitive. (A button that itself says Delete still is, by its label.)

Whoever taps (the script, navigation on a dependency path, a watcher) passes the same check, just
before the input would be sent. A sensitive tap goes ahead when the run allows it
(``Safety.allowed_by``: ``--allow``, ``tapir.toml``, ``# allow:``, ``allow()``), or, in the REPL,
when the person answers yes; otherwise ``SensitiveActionRefused`` names it, says why and how to
allow it, and nothing is sent. Every decision is a ``guard`` line in the trace.

    gate = SensitiveGate(document, safety, trace.write, screen.elapsed)
    gate.check("tap", node, obs, element=el, shown="$notes__delete_button", item=False, span=span)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tapir.core.document import AppDocument, Element, Screen
from tapir.core.errors import SensitiveActionRefused, Span
from tapir.core.kinds import Kind
from tapir.core.safety import ALLOW_ALL, Safety
from tapir.docgen.build.policy import DANGEROUS, DangerPolicy
from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.grounding.fuzzy import words
from tapir.runtime.guards.lexicon import declines, dialog_category
from tapir.runtime.session_model import action_label
from tapir.runtime.settle import Observation

__all__ = ["SensitiveGate", "SensitiveReason", "is_dialog"]

#: Words of a document screen's name that make it a dialog (menus and popups are not: their rows
#: are choices, and a menu with a Delete row does not make Open sensitive).
_DIALOG_NAMES = frozenset({"dialog", "alert", "prompt", "sheet", "confirm", "confirmation"})
_MENU_NAMES = frozenset({"menu", "popup", "dropdown", "chooser", "picker"})
#: Resource ids (after ``:id/``) of the platform's dialogs and of permission prompts.
_DIALOG_IDS = ("alertTitle", "parentPanel", "permission_message", "grant_dialog", "permission_allow_button")
_DIALOG_TEXT_IDS = ("alertTitle", "message", "permission_message", "title", "subtitle", "detail_message")
#: Packages whose screens are permission prompts.
PERMISSION_PACKAGES = frozenset({"com.android.permissioncontroller", "com.google.android.permissioncontroller",
                                 "com.android.packageinstaller", "com.google.android.packageinstaller"})
#: The danger policy's words for sending: they send what was written, so they need a field to write in.
_SEND_WORDS = frozenset({"send", "envoyer", "senden", "enviar", "invia"}) & frozenset(DANGEROUS)


@dataclass(frozen=True)
class SensitiveReason:
    """Why a tap is sensitive, and the permission tokens that would allow it (most specific first)."""

    why: str
    tokens: tuple[str, ...]


def _id_tail(node: UINode) -> str:
    return node.resource_id.rsplit("/", 1)[-1] if node.resource_id else ""


def _screen_words(screen: Screen | None) -> set[str]:
    return set(words(screen.name).split()) if screen is not None else set()


def is_dialog(tree: UITree, screen: Screen | None) -> bool:
    """A dialog: the document's screen is named one, or the dump has a platform dialog's or a
    permission prompt's views."""
    if _screen_words(screen) & _DIALOG_NAMES:
        return True
    if tree.package in PERMISSION_PACKAGES or any(n.package in PERMISSION_PACKAGES for n in tree.nodes[:3]):
        return True
    return any(_id_tail(n) in _DIALOG_IDS for n in tree.nodes)


def _dialog_texts(tree: UITree) -> list[str]:
    """The title and message of a dialog (its buttons and any content rows left out), or every
    text when it has no such views."""
    texts = [n.text or n.content_desc for n in tree.nodes if n.visible and _id_tail(n) in _DIALOG_TEXT_IDS]
    texts = [t for t in texts if t]
    if texts:
        return texts
    return [t for n in tree.nodes if n.visible for t in (n.text, n.content_desc) if t]


def _offers_decline(tree: UITree, node: UINode) -> bool:
    """Whether the dialog on ``tree`` has, beside ``node``, an answer that declines (Cancel, No...):
    a warning without one is information, not a question."""
    return any(other.id != node.id and other.visible and (other.clickable or other.checkable)
               and declines(action_label(tree, other)) for other in tree.nodes)


def _is_answer(tree: UITree, node: UINode) -> bool:
    """Whether ``node`` answers its dialog: a button, not a text of the dialog, a container of other
    controls, or a choice (a checkable view, or a row holding one)."""
    if node.checkable or _id_tail(node) in (*_DIALOG_TEXT_IDS, "parentPanel", "grant_dialog"):
        return False
    stack = list(node.children)
    while stack:
        child = tree.nodes[stack.pop()]
        if child.clickable or child.checkable:
            return False
        stack.extend(child.children)
    return True


def _has_field(tree: UITree) -> bool:
    return any(n.editable and n.visible for n in tree.nodes)


class SensitiveGate:
    """Checks taps against the run's permissions (see the module docstring)."""

    def __init__(self, document: AppDocument, safety: Safety, write: Callable[[dict[str, Any]], None],
                 elapsed: Callable[[], float], policy: DangerPolicy | None = None) -> None:
        self.document = document
        self.safety = safety
        self._write = write
        self._elapsed = elapsed
        self.policy = policy or DangerPolicy.default()

    def reason(self, node: UINode, obs: Observation, *, element: Element | None, item: bool) -> SensitiveReason | None:
        """Why tapping ``node`` is sensitive, or None. ``element``: the document element it was
        grounded as (for an item, its list; for a child element inside an item, the child);
        ``item``: the node is a row of a list."""
        tree = obs.tree
        screen = self.document.screen(obs.screen) if obs.screen else None
        label = action_label(tree, node)
        whys: list[str] = []
        tokens: list[str] = []
        lists = [self.document.element(element.item_of)] if element is not None and element.item_of else []
        for el in (element, *lists):
            if el is not None:
                tokens.append(el.name)
        marked = next((el for el in (element, *lists) if el is not None and el.sensitive), None)
        if marked is not None:
            whys.append(f"the app document marks ${marked.name} sensitive")
        dialog = is_dialog(tree, screen)
        # a row of a list is content (a note titled "Call the plumber"), unless the list is a
        # menu's or a dialog's choices
        # a tab only shows a page: "Call history" or "Trash" on one does not call or delete
        tab = element is not None and element.kind is Kind.TAB and not item
        if (not item or dialog or _screen_words(screen) & _MENU_NAMES) and not node.checkable and not tab:
            own_name = element.local_name if element is not None and not item else ""
            word = self.policy.reason(label, node.content_desc, _id_tail(node), own_name)
            if word in _SEND_WORDS and not dialog and not _has_field(tree):
                word = None
            if word is not None:
                whys.append(f"its label says {word!r}")
                # allowing the verb allows it: `# allow: clear` covers "clear history"
                tokens += [word, word.split()[0]]
        if dialog and not declines(label) and _is_answer(tree, node):
            found = dialog_category(_dialog_texts(tree))
            if found is not None and (found[0] != "warning" or _offers_decline(tree, node)):
                category, phrase = found
                whys.append(f"it answers a {category} dialog ({phrase!r})")
                tokens += [phrase, category]
        if not whys:
            return None
        return SensitiveReason("; ".join(whys), tuple(dict.fromkeys(tokens)))

    def check(self, action: str, node: UINode, obs: Observation, *, element: Element | None, shown: str,
              item: bool, span: Span | None, by: str = "the script") -> None:
        """Let a sensitive ``action`` on ``node`` go ahead, or raise ``SensitiveActionRefused``
        (see the module docstring). ``shown``: how errors name the target (``$x``, a step)."""
        reason = self.reason(node, obs, element=element, item=item)
        if reason is None:
            return
        label = action_label(obs.tree, node)
        subject = f"{action} on {shown}" + (f" ({label!r})" if label else "")
        if by != "the script":
            subject += f" by {by}"
        record: dict[str, Any] = {
            "event": "guard", "guard": "sensitive", "action": action, "target": shown, "label": label or None,
            "by": by, "why": reason.why, "screen": obs.screen, "t": self._elapsed(),
        }
        origin = self.safety.allowed_by(reason.tokens)
        if origin is not None:
            self._write({**record, "decision": "allowed", "allowed_by": origin})
            return
        if self.safety.confirm is not None:
            yes = self.safety.confirm(f"{subject[0].upper()}{subject[1:]}? Sensitive: {reason.why}.")
            self._write({**record, "decision": "confirmed" if yes else "declined"})
            if yes:
                return
            raise SensitiveActionRefused(f"{subject} not done: the answer was no ({reason.why})", span,
                                         hint=self.hint(reason))
        self._write({**record, "decision": "refused"})
        raise SensitiveActionRefused(f"{subject} refused: {reason.why}; a sensitive action needs permission, and "
                                     f"the {action} was not sent to the device", span, hint=self.hint(reason))

    def hint(self, reason: SensitiveReason) -> str:
        """How to allow it: the narrowest tokens first."""
        words_ = [t for t in reason.tokens if "__" not in t]
        elements = [t for t in reason.tokens if "__" in t]
        best = words_[0] if words_ else (elements[0] if elements else ALLOW_ALL)
        others = [f"--allow {t}" for t in [*elements[:1], *words_[1:2]] if t != best]
        text = f"allow it with --allow {best}" + (f" (or {', '.join(others)})" if others else "") + \
            f"; --allow {ALLOW_ALL} allows every sensitive action"
        if self.safety.trust_script:
            text += f"; or in the script: a first comment line `# allow: {best}`, or allow({best!r}) before it"
        elif self.safety.ignored_header:
            text += ("; the script's own " + ", ".join(f"`{h}`" for h in self.safety.ignored_header[:2])
                     + " is ignored: a script written by a model cannot give itself permissions")
        return text
