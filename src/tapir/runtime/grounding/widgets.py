"""One widget seen on several screens: a tab bar's items and a toolbar's buttons, which every tab
of one activity shows.

Upstream documents describe each tab of an activity as a screen of its own, each with its own
copy of the tab bar and the toolbar, under its own names: ``main_screen__clock_tab_button`` and
``main_screen_timer_tab__clock_tab_button`` are one view. The grounder refuses an element when
another screen that defines its identifiers is showing (a look-alike dialog's OK button answers
another question); for such copies that refusal is wrong: the Clock tab is on the screen while
the Timer tab shows, and tapping it does what the script asks.

Elements are one widget when they have the same identifiers (all of them), are on screens that
stay (not dialogs, menus or popups), are neither lists nor list items (which item to tap is the
script's to say), and every one of them that the document says leads somewhere (``leads_to``, or
what follows its tap in a dependency path) leads to the same screen, and at least one does. A
"New" button that opens a new alarm on one tab and a new timer on another is two widgets; so are
buttons of which the document says nothing.
"""

from __future__ import annotations

from collections import defaultdict

from tapir.core.document import AppDocument, Element


def shared_widgets(document: AppDocument, transient: frozenset[str]) -> dict[frozenset[str], frozenset[str]]:
    """Identifier set (its XPaths) -> the screens that show that one widget, for every widget
    that two or more screens show (see the module docstring). ``transient``: the names of the
    document's dialogs, menus and popups."""
    families: dict[frozenset[str], list[Element]] = defaultdict(list)
    for e in document.elements:
        if e.identifiers and not e.is_list and e.item_of is None and e.screen not in transient:
            families[frozenset(i.xpath for i in e.identifiers)].append(e)
    families = {k: v for k, v in families.items() if len({e.screen for e in v}) > 1}
    if not families:
        return {}
    leads = _destinations(document)
    out: dict[frozenset[str], frozenset[str]] = {}
    for key, members in families.items():
        where = set().union(*(leads.get(e.name, set()) for e in members))
        if len(where) == 1:
            out[key] = frozenset(e.screen for e in members)
    return out


def _destinations(document: AppDocument) -> dict[str, set[str]]:
    """Element -> the screens the document says a tap on it leads to: its ``leads_to``, and in each
    dependency path the screen of the step after its tap (the screen of the path's own element
    when the tap is the path's last step)."""
    out: dict[str, set[str]] = defaultdict(set)
    for e in document.elements:
        if e.leads_to:
            out[e.name].add(e.leads_to)
        for path in e.paths:
            for i, step in enumerate(path):
                if step.target is None or step.action != "tap" or step.match is not None:
                    continue
                if i + 1 == len(path):
                    out[step.target].add(e.screen)
                    continue
                after = path[i + 1].target
                if after is None:
                    continue  # a global step (back()) next: where it is done is not said
                el = document.element(after)
                screen = el.screen if el is not None else after if document.screen(after) is not None else None
                if screen is not None:
                    out[step.target].add(screen)
    return out
