"""From an element handle (``$list.match('Rock')``, ``$list[2]`` with a child element) to the
node it selects on the current screen: the element reached (``Reacher``), then each selector
applied in turn (an item by position or by match, a child element inside the item).
"""

from __future__ import annotations

from tapir.core.errors import ActionError, ElementNotFound, Span
from tapir.dsl.values import Child, ElementHandle, Index, Match
from tapir.runtime.list_access import ListAccess
from tapir.runtime.reaching import Reacher
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, ResolvedTarget, how_grounded


class Resolver:
    """Resolves handles to ``ResolvedTarget`` values (see the module docstring)."""

    def __init__(self, screen: ScreenCache, reacher: Reacher, lists: ListAccess) -> None:
        self.screen = screen
        self.reacher = reacher
        self.lists = lists

    def resolve(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: CallFacts, *,
                act: bool) -> ResolvedTarget:
        """What ``handle`` (and ``child``) select. ``act``: the node will be acted on, so an item
        must be brought into view; reads may use the dump an item was last seen in, and never
        navigate through risky steps."""
        el = self.reacher.element(handle.name, span)
        obs, g = self.reacher.reach(el, span, c, read=not act)
        target = ResolvedTarget(el, g.node, obs, how_grounded(g), g)
        selectors = list(handle.path)
        if child is not None:
            if child.path:
                raise ActionError(f"{child} cannot select a child element: give the element alone", span)
            selectors.append(Child(child.name))
        for n, sel in enumerate(selectors):
            last_item = not any(isinstance(s, Index | Match) for s in selectors[n + 1:])
            if isinstance(sel, Index | Match):
                if not target.element.is_list:
                    raise ActionError(f"{handle} selects an item of ${target.element.name}, which is a "
                                      f"{target.element.kind.value}, not a list", span)
                if target.list_name is not None:
                    raise ActionError(f"{handle}: nested lists are not supported", span)
                lst = target.element
                if isinstance(sel, Index):
                    index = sel.position
                else:
                    index = self.lists.find_match(lst, sel.as_query(), span, c, read=not act)
                node, where = self.lists.item_node(lst, index, span, c, act=act and last_item,
                                                   from_top=isinstance(sel, Index))
                target = ResolvedTarget(lst, node, where, f"item {index}", list_name=lst.name, item_index=index,
                                        is_item=True)
            elif isinstance(sel, Child):
                ch = self.reacher.element(sel.name, span)
                if target.list_name is not None:
                    g2 = self.screen.grounder.child(target.list_name, ch.name, target.node, target.obs.tree)
                else:
                    g2 = self.screen.ground(ch.name, target.obs, within=target.node)
                if g2 is None:
                    where_ = f"item {target.item_index} of ${target.list_name}" if target.list_name else \
                        f"${target.element.name}"
                    raise ElementNotFound(f"${ch.name} is not inside {where_}", span)
                target = ResolvedTarget(ch, g2.node, target.obs, how_grounded(g2), g2, target.list_name,
                                        target.item_index)
        c.target = target
        return target
