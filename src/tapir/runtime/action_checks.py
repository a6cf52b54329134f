"""The checks before and after an action (AndroidGen's AutoCheck): a tap needs a visible,
enabled element and touches its label; ``set_text`` needs an editable field and checks on the
next dump that the text landed, typing once more if not."""

from __future__ import annotations

from tapir.core.errors import ActionError, Span
from tapir.core.secrets import MASK, Secret
from tapir.dsl.values import ElementHandle
from tapir.hierarchy.model import Bounds, UINode, UITree
from tapir.runtime.grounding.fuzzy import fold
from tapir.runtime.reaching import Reacher
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, ResolvedTarget, editable_node
from tapir.runtime.settle import Expectation, Observation, clip


class ActionChecks:
    """Preconditions, touch points and the typed-text postcondition of ``DeviceRuntime``'s actions."""

    def __init__(self, screen: ScreenCache, reacher: Reacher) -> None:
        self.screen = screen
        self.reacher = reacher

    def check_tappable(self, t: ResolvedTarget, handle: ElementHandle, span: Span) -> None:
        node, tree = t.node, t.obs.tree
        if not node.enabled or any(not a.enabled for a in tree.ancestors(node.id) if a.clickable):
            raise ActionError(f"{handle} is disabled: it cannot be tapped now", span,
                              hint="an earlier step may be missing (e.g. a required field is still empty)")
        screen = Bounds(0, 0, tree.width or 10**6, tree.height or 10**6)
        if clip(node.bounds, screen).area == 0:
            raise ActionError(f"{handle} is not visible (bounds {node.bounds})", span)

    def tap_point(self, node: UINode, obs: Observation) -> tuple[int, int]:
        """Where to touch the node: the centre of its label when it is a container without text
        of its own (a row around a title), else its centre; always inside the visible part of
        the node, the screen and the scroll view around it.

        A label inside the node that no other clickable view owns passes the touch to the node
        on any phone, and it is where a person (and a recording of one) touches."""
        tree = obs.tree
        screen = Bounds(0, 0, tree.width or node.bounds.x2, tree.height or node.bounds.y2)
        visible = clip(node.bounds, screen) if clip(node.bounds, screen).area else node.bounds
        for a in tree.ancestors(node.id):
            if a.scrollable and a.bounds.area:
                inner = clip(visible, a.bounds)
                if inner.area:
                    visible = inner
                break
        if not node.text and not node.content_desc:
            label = self._label_node(tree, node)
            if label is not None:
                spot = clip(label.bounds, visible)
                if spot.area:
                    return spot.center
        return visible.center

    @staticmethod
    def shown_target(tree: UITree, item: UINode, text: str) -> UINode | None:
        """What a tap on the item matched by ``text`` (``$list.match("30")``) acts on when it is
        not the item itself: the clickable (or checkable) view inside ``item`` around the one
        visible view that shows ``text`` (exactly, else after case and space folding). An item can
        hold several tap targets (the days of a month page, the buttons of a row); its centre
        would be another of them. None when no view or several show it, or when the touch on it
        goes to ``item``."""
        inside = [item, *(d for d in tree.descendants(item.id) if d.visible and d.bounds.area)]
        for same in (lambda s: s.strip() == text.strip(), lambda s: fold(s) == fold(text)):
            showing = [d for d in inside if same(d.text) or same(d.content_desc)]
            if showing:
                break
        if len(showing) != 1:
            return None
        owner: UINode | None = showing[0]
        while owner is not None and owner.id != item.id and not (owner.clickable or owner.checkable):
            owner = tree.parent(owner.id)
        return None if owner is None or owner.id == item.id else owner

    @staticmethod
    def _label_node(tree: UITree, node: UINode) -> UINode | None:
        """The first text inside ``node`` whose touches ``node`` itself would receive."""
        for d in tree.descendants(node.id):
            if not (d.visible and d.text and d.bounds.area):
                continue
            owner: UINode | None = d
            while owner is not None and owner.id != node.id and not (owner.clickable or owner.checkable):
                owner = tree.parent(owner.id)
            if owner is not None and owner.id == node.id:
                return d
        return None

    def type_into(self, t: ResolvedTarget, text: str | Secret, span: Span | None, c: CallFacts | None, *,
                  handle: ElementHandle | None = None) -> None:
        """Focus, clear, type; then check on the next dump that the field shows ``text``; once more
        if not. A ``Secret`` is typed as its value and named ``*****`` in errors."""
        shown = handle or ElementHandle(t.element.name)
        said = MASK if isinstance(text, Secret) else repr(text)
        text = text.reveal() if isinstance(text, Secret) else text
        field_node = editable_node(t.obs.tree, t.node)
        if field_node is None:
            raise ActionError(f"{shown} is not an editable field ({t.node.short_class or 'a view'}): "
                              "set_text() needs a text input", span)
        if not field_node.enabled:
            raise ActionError(f"{shown} is disabled: no text can be entered now", span)
        obs = t.obs
        device = self.screen.device
        for attempt in (1, 2):
            if not field_node.focused:
                x, y = self.tap_point(field_node, obs)
                self.screen.input(lambda x=x, y=y: device.tap(x, y), c)  # type: ignore[misc]
            current = field_node.text
            if current and not field_node.password:
                self.screen.keys(["KEYCODE_MOVE_END", *(["KEYCODE_DEL"] * len(current))], c)
            if text:
                self.screen.input(lambda: device.input_text(text), c)
            after = self.screen.settle(Expectation(change=True), c).observation
            landed, now = self._text_landed(t, shown, text, after)
            if c is not None:
                c.extra["verified"] = landed
            if landed:
                return
            if attempt == 2 or now is None:
                break
            field_node = now
            obs = after
        raise ActionError(
            f"the text did not land in {shown}: it shows {(now.text if now is not None else '(field gone)')!r} "
            f"instead of {said}", span,
            hint="the field may reformat or limit its input, or another view took the keyboard focus",
        )

    def _text_landed(self, t: ResolvedTarget, shown: ElementHandle, text: str,
                     after: Observation) -> tuple[bool, UINode | None]:
        """Whether the field shows ``text`` on ``after`` (a password field cannot be read back)."""
        g = self.reacher.present(t.element, after) if t.list_name is None else None
        node = g.node if g is not None else None
        if node is None and t.list_name is None:
            return (text == "" or after.digest != t.obs.digest), None  # the field left the screen: trust it
        if node is None:
            return True, None  # an item's field: re-finding it would cost scrolls; typed text is trusted
        field_node = editable_node(after.tree, node) or node
        if field_node.password or not text:
            # a password cannot be read back; an emptied field shows its hint, which is not known
            return True, field_node
        return field_node.text == text, field_node
