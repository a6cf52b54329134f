"""Screen-level actions on a device: a text tapped, a point tapped, the screen swiped, a key pressed,
text typed into the focused field, the keyboard hidden, a link opened (``tapir.dsl.screen_calls``; ``DeviceRuntime``'s
``ScreenRuntime`` methods are entry points to this).

They need no document: a text is found on the dump as ``wait_text`` finds it (a view's text or
description, whole, ignoring case), and a point is a point. They pass the same guard as element
taps: the view under the finger is checked by ``SensitiveGate`` (a label that says Delete, an
answer to a permission or payment dialog, an element the document marks sensitive), so
``tap_text("Delete")`` and ``tap_at`` on the Delete button are refused as ``$note__delete.tap()``
is. With a document, the view is grounded to its element first, for the document's marks and the
trace. Typed text goes to the field the dump says is focused, through the same ``input text`` as
``set_text`` (``AdbDevice.input_text``: spaces and shell characters escaped), and a ``secret()``
passes the same secret guard: typed only into a password field unless ``--allow secrets``.

    actions = ScreenActions(document, screen, checks, guards, waiter, config)
    actions.tap_text("Settings", long=False, timeout=5, span=span, c=call)
    actions.swipe("up", c=call)            # the finger moves up
    actions.type_text(secret, span=span, c=call)   # into the focused field
"""

from __future__ import annotations

import re
import shlex

from tapir.core.document import AppDocument, AppInfo, Element
from tapir.core.errors import ActionError, DeviceError, Span
from tapir.core.secrets import MASK, Secret
from tapir.hierarchy.model import Bounds, UINode, UITree
from tapir.runtime.action_checks import ActionChecks
from tapir.runtime.guards import Guards
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, SessionConfig, action_label, bounds_tuple, editable_node
from tapir.runtime.settle import Expectation, Observation
from tapir.runtime.waiting import Waiter
from tapir.runtime.watching import text_node

__all__ = ["SCREEN_ONLY_PACKAGE", "ScreenActions", "focused_field", "keyboard_shown", "screen_only_document"]

#: The package of ``screen_only_document``: none (the run stays in no app of its own).
SCREEN_ONLY_PACKAGE = ""

#: A finger moving up shows what is further down: ``ScreenCache.swipe`` takes what is to be shown.
_SHOWS = {"up": "down", "down": "up", "left": "right", "right": "left"}
#: Keys that send the app away (HOME, the recent apps).
_LEAVING_KEYS = ("KEYCODE_HOME", "3", "KEYCODE_APP_SWITCH", "187")
_INPUT_SHOWN = re.compile(r"\bmInputShown=(true|false)\b")


def screen_only_document() -> AppDocument:
    """The document of a run without one: no screens, no elements, no app. Screen-level actions work
    on it; an element reference is ``UnknownElement`` (the front ends refuse such a script first)."""
    return AppDocument(AppInfo(SCREEN_ONLY_PACKAGE, "(no app document)", ""), (), source=None)


def keyboard_shown(dumpsys_input_method: str) -> bool | None:
    """Whether ``dumpsys input_method`` says the on-screen keyboard shows (None: it does not say)."""
    m = _INPUT_SHOWN.search(dumpsys_input_method)
    return None if m is None else m.group(1) == "true"


def focused_field(tree: UITree) -> UINode | None:
    """The text field that has the keyboard focus on ``tree`` (the last one, as the dump lists
    them: a dialog's field over its screen's), or None."""
    found = None
    for node in tree.nodes:
        if node.focused:
            field = editable_node(tree, node)
            if field is not None and field.enabled:
                found = field
    return found


class ScreenActions:
    """The screen-level actions of one runtime (see the module docstring)."""

    def __init__(self, document: AppDocument, screen: ScreenCache, checks: ActionChecks, guards: Guards,
                 waiter: Waiter, config: SessionConfig) -> None:
        self.document = document
        self.screen = screen
        self.checks = checks
        self.guards = guards
        self.waiter = waiter
        self.config = config

    # -- taps ----------------------------------------------------------------------------------------

    def tap_text(self, text: str, *, long: bool, timeout: float, span: Span, c: CallFacts) -> None:
        """Tap the view showing ``text`` (waiting up to ``timeout`` s for it; ``WaitTimeout`` names what
        the device shows instead); the touch goes to the clickable view around the text."""
        self.waiter.wait(text, gone=False, timeout=timeout, span=span, c=c, must=True)
        obs = self.screen.observe(fresh=False)
        node = text_node(obs.tree, text)
        if node is None:  # (the wait just saw it on this dump)
            raise ActionError(f"no view shows {text!r}", span)
        target = _touched(obs.tree, node)
        if not target.enabled:
            raise ActionError(f"the view showing {text!r} is disabled: it cannot be tapped now", span,
                              hint="an earlier step may be missing (e.g. a required field is still empty)")
        x, y = self.checks.tap_point(target, obs)
        self._tap(target, obs, x, y, long=long, shown=f"the view showing {text!r}", span=span, c=c)

    def tap_at(self, x: float, y: float, *, long: bool, span: Span, c: CallFacts) -> None:
        """Tap a point: pixels, or fractions of the screen when both are floats (``tap_at(0.5, 0.5)``)."""
        obs = self.screen.observe()
        c.observed, c.screen_before = True, obs.screen
        width, height = _screen_size(obs.tree)
        if type(x) is float or type(y) is float:
            px, py = round(x * (width - 1)) if type(x) is float else int(x), \
                round(y * (height - 1)) if type(y) is float else int(y)
        else:
            px, py = int(x), int(y)
        if not (0 <= px < width and 0 <= py < height):
            raise ActionError(f"({px}, {py}) is off the screen ({width}x{height} pixels)", span)
        hit = obs.tree.node_at(px, py)
        target = _touched(obs.tree, hit) if hit is not None else None
        self._tap(target, obs, px, py, long=long, shown=f"the point ({px}, {py})", span=span, c=c)

    def _tap(self, target: UINode | None, obs: Observation, x: int, y: int, *, long: bool, shown: str, span: Span,
             c: CallFacts) -> None:
        c.observed, c.screen_before = True, obs.screen
        element = self._element_of(target, obs) if target is not None else None
        if target is not None:
            # what a person would call it, for the trace and the guard's message
            c.extra["label"] = action_label(obs.tree, target)
            c.extra["bounds"] = list(bounds_tuple(target.bounds))
            if element is not None:
                c.extra["element"] = f"${element.name}"
            self.guards.sensitive.check("long tap" if long else "tap", target, obs, element=element, shown=shown,
                                        item=element is None and _is_row(obs.tree, target), span=span)
        c.point = (x, y)
        device = self.screen.device
        if long:
            self.screen.input(lambda: device.long_tap(x, y, self.config.long_tap_ms), c)
        else:
            self.screen.input(lambda: device.tap(x, y), c)
        after = self.screen.settle(Expectation(change=True, screen=element.leads_to if element else None),
                                   c).observation
        c.extra["changed"] = after.digest != obs.digest

    def _element_of(self, node: UINode, obs: Observation) -> Element | None:
        """The document element of the current screen grounded on ``node`` (None without one)."""
        screen = self.document.screen(obs.screen) if obs.screen else None
        for el in screen.elements if screen is not None else ():
            if el.item_of is not None:
                continue
            g = self.screen.ground(el.name, obs)
            if g is not None and g.node.id == node.id:
                return el
        return None

    # -- typing --------------------------------------------------------------------------------------

    def type_text(self, text: str | Secret, *, span: Span, c: CallFacts) -> None:
        """Type ``text`` into the focused field, after what it holds (Maestro's ``inputText``); a
        ``Secret`` only into a password field (the secret guard). The field is read back on the
        next dump: ``ActionError`` when the text did not land (a password field cannot be read)."""
        obs = self.screen.observe()
        c.observed, c.screen_before = True, obs.screen
        field = focused_field(obs.tree)
        if field is None:
            raise ActionError("no text field has the keyboard focus: nothing was typed", span,
                              hint='tap the field first, e.g. tap_text("Email")')
        name = _field_name(field)
        shown = f"the focused field '{name}'" if name else "the focused field"
        c.extra["field"] = name
        c.extra["bounds"] = list(bounds_tuple(field.bounds))
        self.guards.check_secret_field(text, field, obs.screen, shown, span)
        said = MASK if isinstance(text, Secret) else repr(text)
        value = text.reveal() if isinstance(text, Secret) else text
        before = field.text
        device = self.screen.device
        self.screen.input(lambda: device.input_text(value), c)
        after = self.screen.settle(Expectation(change=True), c).observation
        if field.password or "\n" in value or "\t" in value:
            return  # a password cannot be read back; ENTER and TAB may move the focus on
        now = focused_field(after.tree)
        landed = now is not None and now.text.endswith(value)
        c.extra["verified"] = landed
        if not landed:
            shows = f"it shows {now.text!r}" if now is not None else "no field has the focus now"
            raise ActionError(f"{said} did not land in {shown} ({before!r} before): {shows}", span,
                              hint="the field may reformat or limit its input, or another view took the focus")

    # -- gestures, keys, links -------------------------------------------------------------------------

    def swipe(self, direction: str, *, c: CallFacts) -> bool:
        """Move a finger across the middle of the screen in ``direction``; True when nothing changed."""
        obs = self.screen.observe()
        c.observed, c.screen_before = True, obs.screen
        width, height = _screen_size(obs.tree)
        self.screen.swipe(Bounds(0, 0, width, height), _SHOWS[direction], c)
        after = self.screen.settle(Expectation(change=True), c).observation
        moved = after.digest != obs.digest
        c.extra["moved"] = moved
        return not moved

    def press_key(self, keycode: str, *, c: CallFacts) -> None:
        obs = self.screen.observe()
        c.observed, c.screen_before = True, obs.screen
        device = self.screen.device
        self.screen.input(lambda: device.key(keycode), c)
        if keycode in _LEAVING_KEYS:
            # the script itself sent its app away, as stop_app() does: another app in front is
            # expected until the app is in front again (the confinement guard leaves it alone)
            self.guards.confinement.outside_expected = True
        self.screen.settle(Expectation(change=keycode in (*_LEAVING_KEYS, "KEYCODE_BACK", "4")), c)

    def hide_keyboard(self, *, c: CallFacts) -> bool:
        """ESCAPE, then BACK if the keyboard still shows (Appium's way); nothing when it does not show
        (BACK would leave the screen). Whether it showed."""
        shown = self._keyboard()
        c.extra["keyboard"] = shown
        if not shown:
            return False
        device = self.screen.device
        for key in ("KEYCODE_ESCAPE", "KEYCODE_BACK"):
            self.screen.input(lambda key=key: device.key(key), c)  # type: ignore[misc]
            if not self._keyboard():
                break
        self.screen.settle(Expectation(change=False), c)
        return True

    def _keyboard(self) -> bool:
        out = self._shell("dumpsys input_method")
        return bool(keyboard_shown(out))

    def open_link(self, url: str, *, span: Span, c: CallFacts) -> None:
        """``am start -a android.intent.action.VIEW -d URL``; ``DeviceError`` when no app takes it."""
        out = self._shell(f"am start -W -a android.intent.action.VIEW -d {shlex.quote(url)}", c=c)
        for line in out.splitlines():
            if line.startswith(("Error", "Exception")) or "unable to resolve" in line:
                raise DeviceError(f"no app on the device opens {url}: {line.strip()}", span=span,
                                  hint="a deep link needs an installed app that declares its scheme")
        after = self.screen.settle(Expectation(change=True), c).observation
        c.extra["package"] = after.package
        if after.package and not self.guards.confinement.allows(after.package):
            self.guards.confinement.outside_expected = True  # the link's app: where the script sent the run

    def _shell(self, command: str, c: CallFacts | None = None) -> str:
        shell = getattr(self.screen.device, "shell", None)
        if not callable(shell):
            raise DeviceError(f"this device cannot run `{command.split()[0]}`: it has no shell")
        if c is None:
            return str(shell(command))
        out: list[str] = []
        self.screen.input(lambda: out.append(str(shell(command))), c)
        return out[0]


def _field_name(field: UINode) -> str:
    """A field as a person names it: its resource id, else its description (never its text: it
    may hold what was typed); "" when it has neither."""
    return field.resource_name or field.content_desc.strip()


def _screen_size(tree: UITree) -> tuple[int, int]:
    root = tree.root
    width = tree.width or (root.bounds.x2 if root is not None else 0)
    height = tree.height or (root.bounds.y2 if root is not None else 0)
    return max(width, 1), max(height, 1)


def _touched(tree: UITree, node: UINode) -> UINode:
    """The view that receives a touch on ``node``: itself when clickable, else its nearest clickable
    ancestor (a row around a title), else itself."""
    if node.clickable or node.long_clickable or node.checkable or node.editable:
        return node
    return next((a for a in tree.ancestors(node.id) if a.clickable or a.long_clickable or a.checkable), node)


def _is_row(tree: UITree, node: UINode) -> bool:
    """A row of a scrolling list (content, such as a note titled "Delete old photos"), not a control."""
    parent = tree.parent(node.id)
    return parent is not None and parent.scrollable and len(parent.children) > 1
