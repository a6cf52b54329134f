"""Backward-dependency navigation (Algorithm 1): path choice, chaining, fallbacks and bounds.

The planner is tested against a scripted host (screens as a little state machine, no device),
then end to end on the simulated Music app with its sample document.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_helpers import make_runtime

from tapir.core.document import AppDocument, Step
from tapir.core.errors import ScreenNotReached, SensitiveActionRefused
from tapir.docgen.loader import load_document, loads_document
from tapir.dsl.interpreter import run_script
from tapir.hierarchy.model import UITree
from tapir.runtime.navigation import NavigationConfig, Navigator, pages_of
from tapir.runtime.settle import Observation
from tapir.sim.apps import get_app

REPO = Path(__file__).resolve().parent.parent
MUSIC_DOC = REPO / "samples" / "music" / "music.yaml"

DOC = """\
format: 1
app: {package: org.t, name: T, start_screen: home}
screens:
  home:
    description: start
    signature: {activity: .Home}
    elements:
      home__open_list:
        kind: button
        description: opens the list
        identifiers: ["//node[@resource-id='a']"]
        leads_to: items
      home__menu:
        kind: button
        description: opens the menu
        identifiers: ["//node[@resource-id='m']"]
        leads_to: menu
      home__prefs:
        kind: button
        description: opens the preferences
        identifiers: ["//node[@resource-id='p']"]
  items:
    description: a list
    signature: {activity: .Items}
    elements:
      items__open_detail:
        kind: button
        description: opens a detail
        identifiers: ["//node[@resource-id='b']"]
        leads_to: detail
        paths: [[home__open_list.tap()]]
  detail:
    description: one item
    signature: {activity: .Detail}
    elements:
      detail__title:
        kind: text
        description: title
        identifiers: ["//node[@resource-id='c']"]
        paths:
          - [home__open_list.tap(), items__open_detail.tap()]
          - [items__open_detail.tap()]
      detail__edit:
        kind: button
        description: opens the editor
        identifiers: ["//node[@resource-id='e']"]
        leads_to: editor
  editor:
    description: editor
    signature: {activity: .Editor}
    elements:
      editor__field:
        kind: input
        description: a field
        identifiers: ["//node[@resource-id='f']"]
        paths: [[detail__edit.tap()]]
  menu:
    description: a menu
    signature: {activity: .Menu}
    elements:
      menu__settings:
        kind: button
        description: settings
        identifiers: ["//node[@resource-id='s']"]
        leads_to: settings
  settings:
    description: settings
    signature: {activity: .Settings}
    elements:
      settings__dark:
        kind: switch
        description: dark theme
        identifiers: ["//node[@resource-id='d']"]
  settings_more:
    description: the settings scrolled further (a screen of its own; a swipe leads here, no element)
    signature: {activity: .Settings}
    elements:
      settings_more__about:
        kind: button
        description: about the app
        identifiers: ["//node[@resource-id='ab']"]
  prefs:
    description: the preferences' top (a recording's page)
    signature: {activity: .Prefs}
    elements:
      prefs__scroller: {kind: scroller, description: the page, identifiers: ["//node[@resource-id='sv']"]}
      prefs__sound: {kind: switch, description: sounds, identifiers: ["//node[@resource-id='so']"],
                     paths: [[home__prefs.tap()]]}
  prefs_lower:
    description: the preferences' lower half, recorded only scrolled down (no way in of its own)
    signature: {activity: .Prefs}
    elements:
      prefs_lower__scroller: {kind: scroller, description: the page, identifiers: ["//node[@resource-id='sv']"]}
      prefs_lower__about: {kind: button, description: about the app, identifiers: ["//node[@resource-id='ab2']"]}
  orphan:
    description: nothing leads here
    signature: {activity: .Orphan}
    elements:
      orphan__thing:
        kind: button
        description: unreachable
        identifiers: ["//node[@resource-id='o']"]
        paths: [[settings__dark.tap()]]
"""

_EMPTY = UITree(nodes=(), roots=(), source="test")

# screen -> {element tapped: next screen}; BACK goes to the parent
GRAPH = {
    "home": {"home__open_list": "items", "home__menu": "menu", "home__prefs": "prefs"},
    "items": {"items__open_detail": "detail"},
    "detail": {"detail__edit": "editor"},
    "editor": {},
    "menu": {"menu__settings": "settings"},
    "settings": {"settings__dark": "settings"},
    "prefs": {},
}
#: screen -> the screen a swipe down shows (the same activity scrolled further)
SCROLLED = {"settings": "settings_more", "prefs": "prefs_lower"}
PARENT = {"settings_more": "home", "items": "home", "detail": "items", "editor": "detail", "menu": "home",
          "settings": "home", "prefs": "home", "prefs_lower": "home"}


class ScriptedHost:
    """Screens of ``GRAPH``; elements are present on their own screen only."""

    def __init__(self, document: AppDocument, screen: str | None, package: str = "org.t") -> None:
        self.document = document
        self.screen = screen
        self.package = package
        self.seq = 0
        self.done: list[str] = []
        #: the script's chosen item of each list (``NavigationHost.chosen_item``)
        self.chosen: dict[str, str] = {}

    def observe(self) -> Observation:
        self.seq += 1
        return Observation(_EMPTY, self.screen, f"{self.package}:{self.screen}", self.package, self.seq)

    def where(self, obs: Observation) -> str:
        return repr(obs.screen) if obs.package == "org.t" else f"another app ({obs.package})"

    def chosen_item(self, list_name: str) -> str | None:
        return self.chosen.get(list_name)

    def typed_screen(self) -> str | None:
        return None

    def step_available(self, step: Step, obs: Observation) -> bool:
        if step.target is None:
            return True
        el = self.document.element(step.target)
        if el is None:
            return obs.screen == step.target
        return obs.package == "org.t" and obs.screen == el.screen

    def run_step(self, step: Step, obs: Observation, span: object, toward: str | None = None) -> Observation:
        self.done.append(str(step))
        if step.target is None or self.document.element(step.target) is None:
            if self.screen == "home":
                self.package, self.screen = "launcher", None
            else:
                self.screen = PARENT.get(self.screen or "", "home")
        else:
            self.screen = GRAPH[self.screen or ""].get(step.target, self.screen)
        return self.observe()

    def handed_over(self, obs: Observation) -> bool:
        return False

    def scroll_screen(self, obs: Observation, span: object, direction: str = "down") -> Observation | None:
        moves = SCROLLED if direction == "down" else {v: k for k, v in SCROLLED.items()}
        if self.screen not in moves:
            return None  # nothing scrolls, or the end is showing
        self.done.append(f"scroll({direction!r})")
        self.screen = moves[self.screen]
        return self.observe()

    def launch_app(self, span: object) -> Observation:
        self.done.append("launch org.t")
        self.package, self.screen = "org.t", "home"
        return self.observe()


@pytest.fixture(scope="module")
def doc() -> AppDocument:
    result = loads_document(DOC, "nav.yaml")
    assert result.document is not None, result.problems
    return result.document


def _reach(doc: AppDocument, start: str | None, target: str, package: str = "org.t",
           config: NavigationConfig | None = None) -> tuple[ScriptedHost, list[str]]:
    host = ScriptedHost(doc, start, package)
    el = doc.element(target)
    assert el is not None
    obs, nav = Navigator(host, config).reach(el, lambda o: o.screen == el.screen and o.package == "org.t")
    assert obs.screen == el.screen
    assert [s.step for s in nav.steps] == host.done
    return host, host.done


def test_already_there_does_nothing(doc: AppDocument) -> None:
    _, done = _reach(doc, "detail", "detail__title")
    assert done == []


def test_the_path_with_an_available_step_closest_to_the_end_is_taken(doc: AppDocument) -> None:
    # from items, [items__open_detail.tap()] (one step left) beats the longer path's second step
    _, done = _reach(doc, "items", "detail__title")
    assert done == ["items__open_detail.tap()"]
    _, done = _reach(doc, "home", "detail__title")
    assert done == ["home__open_list.tap()", "items__open_detail.tap()"]


def test_a_path_is_chained_from_where_its_first_step_can_be_reached(doc: AppDocument) -> None:
    # editor__field's only path starts on detail; detail's own paths start on home
    _, done = _reach(doc, "home", "editor__field")
    assert done == ["home__open_list.tap()", "items__open_detail.tap()", "detail__edit.tap()"]


def test_leads_to_links_route_when_no_path_applies(doc: AppDocument) -> None:
    _, done = _reach(doc, "home", "settings__dark")
    assert done == ["home__menu.tap()", "menu__settings.tap()"]


def test_back_is_the_fallback_and_the_app_is_relaunched_when_left(doc: AppDocument) -> None:
    # from the editor no path or route leads to settings: BACK up to home, then the route
    _, done = _reach(doc, "editor", "settings__dark")
    assert done[:3] == ["back()", "back()", "back()"] and done[3:] == ["home__menu.tap()", "menu__settings.tap()"]
    _, done = _reach(doc, None, "detail__title", package="launcher")
    assert done[0] == "launch org.t" and done[1:] == ["home__open_list.tap()", "items__open_detail.tap()"]


def test_a_screen_that_is_the_current_one_scrolled_further_is_reached_by_scrolling(doc: AppDocument) -> None:
    # nothing leads to settings_more; it is the settings activity scrolled: a swipe, not BACK
    _, done = _reach(doc, "settings", "settings_more__about")
    assert done == ["scroll('down')"]
    # from another activity no swipe is tried: the menu scrolled is not the settings
    host = ScriptedHost(doc, "menu")
    el = doc.element("settings_more__about")
    assert el is not None
    with pytest.raises(ScreenNotReached):
        Navigator(host).reach(el, lambda o: o.screen == "settings_more")
    assert "scroll('down')" not in host.done


def test_a_page_with_no_way_in_is_reached_through_its_other_page_then_scrolled(doc: AppDocument) -> None:
    # a recording filed the preferences' lower half as a screen of its own that no path leads to:
    # the way onto its top page (same activity, same scroll view) leads there, then a swipe
    _, done = _reach(doc, "home", "prefs_lower__about")
    assert done == ["home__prefs.tap()", "scroll('down')"]
    _, done = _reach(doc, "detail", "prefs_lower__about")
    assert done[-2:] == ["home__prefs.tap()", "scroll('down')"]
    # the settings' scrolled screen shares no scroll view with another: no page of anything, and
    # from another activity nothing is borrowed for it (the test above)
    more = doc.screen("settings_more")
    assert more is not None and pages_of(doc, more) == []


def test_a_screen_scrolled_past_is_reached_by_scrolling_back_up(doc: AppDocument) -> None:
    # the script scrolled the settings down past the switch: BACK would leave the activity (here
    # it goes home), so the page is scrolled down to its end, then up to the switch's part of it
    _, done = _reach(doc, "settings_more", "settings__dark")
    assert done == ["scroll('up')"]


def test_failure_names_the_screen_and_what_was_tried(doc: AppDocument) -> None:
    host = ScriptedHost(doc, "home")
    el = doc.element("orphan__thing")
    assert el is not None
    with pytest.raises(ScreenNotReached) as info:
        Navigator(host).reach(el, lambda o: o.screen == "orphan")
    message = info.value.message
    assert "'orphan'" in message and "$orphan__thing" in message
    # the route to the path's first step, then the path itself, which leads nowhere
    assert "tried route [home__menu.tap(), menu__settings.tap()]; [settings__dark.tap()]" in message
    assert host.done[:3] == ["home__menu.tap()", "menu__settings.tap()", "settings__dark.tap()"]
    assert message.endswith(f"the device shows {host.screen!r}")


def test_navigation_is_bounded(doc: AppDocument) -> None:
    host = ScriptedHost(doc, "home")
    el = doc.element("orphan__thing")
    assert el is not None
    with pytest.raises(ScreenNotReached):
        Navigator(host, NavigationConfig(max_steps=3, max_rounds=50)).reach(el, lambda o: o.screen == "orphan")
    assert len(host.done) <= 3


GUARDED_DOC = """\
format: 1
app: {package: org.t, name: T, start_screen: home}
screens:
  home:
    description: start
    signature: {activity: .Home}
    elements:
      home__buy: {kind: button, description: "buys the pro version, which also shows the detail",
                  identifiers: ["//node[@resource-id='buy']"], leads_to: pro}
      home__open_list: {kind: button, description: opens the list, identifiers: ["//node[@resource-id='a']"],
                        leads_to: items}
  items:
    description: a list
    signature: {activity: .Items}
    elements:
      items__open_detail: {kind: button, description: opens a detail, identifiers: ["//node[@resource-id='b']"],
                           leads_to: detail}
  detail:
    description: one item
    signature: {activity: .Detail}
    elements:
      detail__title: {kind: text, description: title, identifiers: ["//node[@resource-id='c']"],
                      paths: [[home__buy.tap()], [home__open_list.tap(), items__open_detail.tap()]]}
  pro:
    description: what only buying shows
    signature: {activity: .Pro}
    elements:
      pro__badge: {kind: text, description: the badge, identifiers: ["//node[@resource-id='p']"],
                   paths: [[home__buy.tap()]]}
"""


class GuardedHost(ScriptedHost):
    """The screens of ``GUARDED_DOC``; the guard refuses every tap on ``home__buy``."""

    MOVES = {"home__buy": "pro", "home__open_list": "items", "items__open_detail": "detail"}

    def run_step(self, step: Step, obs: Observation, span: object, toward: str | None = None) -> Observation:
        if step.target == "home__buy":
            raise SensitiveActionRefused(f"tap on ${step.target} refused: it pays")
        if step.target is None:  # BACK on the launch screen leaves the app
            return super().run_step(step, obs, span, toward)
        self.done.append(str(step))
        self.screen = self.MOVES.get(step.target, self.screen)
        return self.observe()


def test_a_step_the_guard_refuses_is_passed_over_for_another_path() -> None:
    result = loads_document(GUARDED_DOC, "guarded.yaml")
    assert result.document is not None, result.problems
    doc = result.document
    host = GuardedHost(doc, "home")
    el = doc.element("detail__title")
    assert el is not None
    # the shortest path buys; the other one goes round by the list
    obs, _ = Navigator(host).reach(el, lambda o: o.screen == "detail")
    assert obs.screen == "detail" and host.done == ["home__open_list.tap()", "items__open_detail.tap()"]
    # with no other way the refusal itself is the error (it says how to allow the step)
    host = GuardedHost(doc, "home")
    el = doc.element("pro__badge")
    assert el is not None
    with pytest.raises(SensitiveActionRefused, match="refused: it pays"):
        Navigator(host).reach(el, lambda o: o.screen == "pro")
    assert host.done == []


DIALOG_DOC = """\
format: 1
app: {package: org.t, name: T, start_screen: home}
screens:
  home:
    description: start
    signature: {activity: .Home}
    elements:
      home__sort_button:
        kind: button
        description: opens the sort dialog
        identifiers: ["//node[@resource-id='sort']"]
        leads_to: sort_dialog
      home__groups_tab:
        kind: tab
        description: the groups tab (reloads the groups when tapped again)
        identifiers: ["//node[@text='Groups']"]
      home__groups_list:
        kind: list
        description: the groups, shown after the tab is tapped
        identifiers: ["//node[@resource-id='groups']"]
        paths: [[home__groups_tab.tap()]]
      home__empty_text:
        kind: text
        description: shown at times; only a path from another screen leads here
        identifiers: ["//node[@resource-id='empty']"]
        paths: [[detail__title.tap()]]
      home__open_detail:
        kind: button
        description: opens the detail
        identifiers: ["//node[@resource-id='open']"]
        leads_to: detail
  sort_dialog:
    description: a dialog
    signature: {activity: .Home}
    elements:
      sort_dialog__options:
        kind: list
        description: the orders
        identifiers: ["//node[@resource-id='options']"]
      sort_dialog__ok_button:
        kind: button
        description: applies the order
        identifiers: ["//node[@resource-id='android:id/button1' and @text='OK']"]
      sort_dialog__cancel_button:
        kind: button
        description: closes the dialog
        identifiers: ["//node[@resource-id='android:id/button2' and @text='Cancel']"]
  detail:
    description: a detail
    signature: {activity: .Detail}
    elements:
      detail__title:
        kind: text
        description: title
        identifiers: ["//node[@resource-id='t']"]
        paths: [[home__open_detail.tap()]]
"""


class DialogHost(ScriptedHost):
    """The screens of ``DIALOG_DOC``: BACK does nothing on the dialog (a replay that never
    recorded it); its buttons close it to home when ``closing`` names them, else do nothing too.
    ``available`` counts the planner's questions (what a search costs)."""

    def __init__(self, document: AppDocument, screen: str, closing: frozenset[str | None] = frozenset(),
                 keyboard: bool = False) -> None:
        super().__init__(document, screen)
        self.closing = closing
        #: A keyboard is up on a dialog BACK closes: the first BACK hides it (the hierarchy does not
        #: change), the second closes the dialog.
        self.keyboard = keyboard
        self.available = 0
        self.shown = False

    def step_available(self, step: Step, obs: Observation) -> bool:
        self.available += 1
        return super().step_available(step, obs)

    def run_step(self, step: Step, obs: Observation, span: object, toward: str | None = None) -> Observation:
        self.done.append(str(step))
        if step.target in self.closing:
            self.screen = "home"
        elif step.target == "home__sort_button":
            self.screen = "sort_dialog"
        elif step.target == "home__groups_tab":
            self.shown = True
        elif step.target == "home__open_detail":
            self.screen = "detail"
        elif step.target is None and self.screen == "sort_dialog" and self.keyboard:
            self.keyboard = False
            self.closing = self.closing | {None}
        elif step.target is None and (self.screen != "sort_dialog" or None in self.closing):
            self.screen = "home"
        return self.observe()


@pytest.fixture(scope="module")
def dialog_doc() -> AppDocument:
    result = loads_document(DIALOG_DOC, "dialog.yaml")
    assert result.document is not None, result.problems
    return result.document


def test_a_dialog_that_back_does_not_close_is_left_by_its_cancel_button(dialog_doc: AppDocument) -> None:
    # BACK twice (it changes nothing; the first might only have hidden a keyboard) and not again
    # there, then the dialog's Cancel, not its OK (which would apply an order), then the way on
    host = DialogHost(dialog_doc, "sort_dialog", closing=frozenset({"sort_dialog__cancel_button",
                                                                     "sort_dialog__ok_button"}))
    el = dialog_doc.element("home__sort_button")
    assert el is not None
    obs, nav = Navigator(host).reach(el, lambda o: o.screen == "home")
    assert obs.screen == "home" and host.done == ["back()", "back()", "sort_dialog__cancel_button.tap()"]
    assert [s.via for s in nav.steps] == ["back", "back", "exit"]
    # a read takes no OK: with only OK closing the dialog, the read is stuck where an action is not
    host = DialogHost(dialog_doc, "sort_dialog", closing=frozenset({"sort_dialog__ok_button"}))
    Navigator(host).reach(el, lambda o: o.screen == "home")
    assert host.done == ["back()", "back()", "sort_dialog__cancel_button.tap()", "sort_dialog__ok_button.tap()"]
    host = DialogHost(dialog_doc, "sort_dialog", closing=frozenset({"sort_dialog__ok_button"}))
    with pytest.raises(ScreenNotReached):
        Navigator(host).reach(el, lambda o: o.screen == "home", read=True)
    assert "sort_dialog__ok_button.tap()" not in host.done


def test_a_second_back_closes_a_dialog_whose_keyboard_the_first_hid(dialog_doc: AppDocument) -> None:
    host = DialogHost(dialog_doc, "sort_dialog", keyboard=True)
    el = dialog_doc.element("home__sort_button")
    assert el is not None
    obs, nav = Navigator(host).reach(el, lambda o: o.screen == "home")
    assert obs.screen == "home" and host.done == ["back()", "back()"] and nav.stuck == []


def test_a_dead_end_gives_up_at_once_and_says_what_it_tried(dialog_doc: AppDocument) -> None:
    """Nothing closes the dialog: BACK and each way out are tried once, the search for a path
    (chained through other elements' paths, which costs no step) is bounded, and the error says
    what was tried and where it got stuck."""
    host = DialogHost(dialog_doc, "sort_dialog")
    el = dialog_doc.element("detail__title")
    assert el is not None
    config = NavigationConfig(max_steps=30, max_rounds=50, max_back=10)
    with pytest.raises(ScreenNotReached) as info:
        Navigator(host, config).reach(el, lambda o: o.screen == "detail")
    assert host.done == ["back()", "back()", "sort_dialog__cancel_button.tap()", "sort_dialog__ok_button.tap()"]
    message = info.value.message
    assert "tried [sort_dialog__cancel_button.tap()]; [sort_dialog__ok_button.tap()]" in message
    assert "stuck: back() changed nothing on 'sort_dialog'" in message
    assert "[sort_dialog__cancel_button.tap()] changed nothing on 'sort_dialog'" in message
    assert "gave up" not in message and host.available < 100  # each element is chained to once here
    # the bound is its own: fewer planning rounds, fewer questions
    few = DialogHost(dialog_doc, "sort_dialog")
    with pytest.raises(ScreenNotReached, match="gave up after 2 planning rounds"):
        Navigator(few, NavigationConfig(max_plans=2)).reach(el, lambda o: o.screen == "detail")
    assert few.available < host.available


def test_an_element_on_its_screen_but_not_shown_is_revealed_by_its_own_path(dialog_doc: AppDocument) -> None:
    host = DialogHost(dialog_doc, "home")
    groups = dialog_doc.element("home__groups_list")
    assert groups is not None
    done = Navigator(host).reveal(groups, lambda o: host.shown)
    assert done is not None and host.shown and host.done == ["home__groups_tab.tap()"]
    assert [s.step for s in done[1].steps] == ["home__groups_tab.tap()"]
    # a path that starts on another screen, or another element's path, is not taken from here
    host = DialogHost(dialog_doc, "home")
    for name in ("home__empty_text", "home__sort_button"):
        el = dialog_doc.element(name)
        assert el is not None
        assert Navigator(host).reveal(el, lambda o: False) is None
    assert host.done == []


# ---------------------------------------------------------------------------------------------
# On the simulated Music app


@pytest.fixture(scope="module")
def music_doc() -> AppDocument:
    return load_document(MUSIC_DOC)


def test_script_starting_elsewhere_navigates_through_document_paths(music_doc: AppDocument) -> None:
    app = get_app("music")
    rt, _, trace = make_runtime(app, music_doc)
    result = run_script("$rename_playlist_dialog__name_input.set_text('Best of')\n"
                        "$rename_playlist_dialog__rename_button.tap()", lambda: rt, output=None)
    assert result.ok, result.error
    assert [p.name for p in app.state.playlists][0] == "Best of"
    steps = [r["step"] for r in trace.events("navigation")]
    assert steps == ["songs_screen__playlists_tab.tap()", "playlists_screen__playlist_list.tap()",
                     "playlist_screen__more_options_button.tap()",
                     "playlist_menu__options.match('Rename').tap()"]
    first = trace.events("action")[0]
    assert first["navigation"] == steps and first["grounded"].startswith("navigation+")
    assert first["screen_before"] == "songs_screen"


def test_app_in_the_background_is_launched_first(music_doc: AppDocument) -> None:
    app = get_app("music")
    rt, sim, trace = make_runtime(app, music_doc, foreground=False)
    assert sim.current_package != app.package
    result = run_script("print($settings_screen__theme_value.get_text())", lambda: rt, output=None)
    assert result.ok, result.error
    assert result.printed == ("White",)
    assert [r["step"] for r in trace.events("navigation")][0] == "launch org.tapir.music"
    assert app.current_screen == "settings"


MENU_DOC = """\
format: 1
app: {package: org.t, name: T, start_screen: main_screen}
screens:
  main_screen:
    description: the notes
    signature: {activity: .Main}
    elements:
      main_screen__more_button: {kind: button, description: opens the menu,
                                 identifiers: ["//node[@resource-id='more']"], leads_to: more_options_popup}
  more_options_popup:
    description: the menu
    signature: {activity: .Main}
    elements:
      more_options_popup__options_list:
        kind: list
        description: the menu's items
        identifiers: ["//node[@resource-id='menu']"]
        options: [Rename note, Share, Delete note, Settings, Settings and more settings]
  configure_settings:
    description: the settings
    signature: {activity: .Settings}
    elements:
      configure_settings__font_size:
        kind: button
        description: font size
        identifiers: ["//node[@resource-id='font']"]
        paths: [[main_screen__more_button.tap(), more_options_popup__options_list.tap()]]
  rename_note_dialog:
    description: renames the note
    signature: {activity: .Main}
    elements:
      rename_note_dialog__title_input: {kind: input, description: the title, identifiers: ["//node[@resource-id='t']"],
                                        paths: [[more_options_popup__options_list.tap()]]}
  delete_note_dialog:
    description: deletes the note
    signature: {activity: .Main}
    elements:
      delete_note_dialog__ok_button: {kind: button, description: deletes, identifiers: ["//node[@resource-id='ok']"],
                                      paths: [[more_options_popup__options_list.tap(), delete_note_dialog.back()]]}
"""


def test_a_path_that_taps_a_menu_without_naming_an_item_is_given_the_item_that_names_where_it_leads() -> None:
    """Recorded paths often say only "a tap on the menu"; the item is the one of the list's options
    whose words name the screen the step leads to. Named, its words (not the menu's other items',
    such as "Share") decide whether navigation may take it, for a read too."""
    from tapir.runtime.navigation import name_items, step_risk

    result = loads_document(MENU_DOC, "menu.yaml")
    assert result.document is not None, result.problems
    doc = result.document
    menu = Step("more_options_popup__options_list", "tap")
    font, title, ok = (doc.element(n) for n in ("configure_settings__font_size", "rename_note_dialog__title_input",
                                                "delete_note_dialog__ok_button"))
    assert font is not None and title is not None and ok is not None
    (settings,) = [name_items(doc, p, font.screen) for p in font.paths]
    assert settings == (Step("main_screen__more_button", "tap"),
                        Step("more_options_popup__options_list", "tap", match="Settings"))
    assert step_risk(doc, settings[1]) is None  # not "sensitive ('share')" from the menu's other items
    (rename,) = [name_items(doc, p, title.screen) for p in title.paths]
    assert rename[0].match == "Rename note"
    # the next step names where a step leads: the delete dialog, whose item is destructive
    (delete,) = [name_items(doc, p, ok.screen) for p in ok.paths]
    assert delete[0].match == "Delete note"
    assert step_risk(doc, delete[0]) == "more_options_popup__options_list.match('Delete note').tap() is destructive " \
        "('delete')"
    # a step whose options name no screen (or two equally) is left as it was: still not taken
    assert name_items(doc, (menu,), "main_screen") == (menu,)
    assert step_risk(doc, menu) is not None and "without saying which" in str(step_risk(doc, menu))
    assert Navigator(ScriptedHost(doc, "main_screen", "org.t")).paths_for(font)[0].steps == settings


def test_the_last_step_onto_a_goal_no_recorded_option_names_is_named_by_the_goal() -> None:
    """A settings list recorded without its lower items: the path's last step onto about_app_screen
    gets the item named by that screen ('about app'), which the runtime scrolls the list to find.
    Not a dialog's list (each item closes it, any one leads back), not a one-word goal, and not
    when a recorded option shares the goal's words (then that option, or none, as before)."""
    from tapir.runtime.navigation import name_items

    text = MENU_DOC + """\
  settings_page:
    description: the settings
    signature: {activity: .Settings}
    elements:
      settings_page__items: {kind: list, description: the settings, options: [General, Privacy],
                             identifiers: ["//node[@resource-id='si']"]}
  about_app_screen:
    description: about
    signature: {activity: .About}
    elements:
      about_app_screen__version: {kind: text, description: the version, identifiers: ["//node[@resource-id='v']"]}
  about_screen:
    description: about
    signature: {activity: .About2}
    elements:
      about_screen__version: {kind: text, description: the version, identifiers: ["//node[@resource-id='v2']"]}
"""
    doc = loads_document(text, "menu.yaml").document
    assert doc is not None
    step = Step("settings_page__items", "tap")
    assert name_items(doc, (step,), "about_app_screen") == (Step("settings_page__items", "tap", match="about app"),)
    assert name_items(doc, (step,), "about_screen") == (step,)
    # not the last step: the next one names where it leads, and only recorded options are taken
    assert name_items(doc, (step, Step("about_app_screen__version", "tap")), "about_app_screen")[0] == step
    menu = Step("more_options_popup__options_list", "tap")
    assert name_items(doc, (menu,), "about_app_screen") == (menu,)


def test_a_step_that_changed_nothing_is_not_taken_again_on_that_screen_by_another_path() -> None:
    """Recorded documents give many paths that start with the same step (a dialog's list tapped
    first); one that changed nothing on a screen is not taken there again, whichever path it is in."""
    text = DOC.replace("paths: [[settings__dark.tap()]]",
                       "paths: [[settings__dark.tap()], [settings__dark.tap(), menu__settings.tap()],\n"
                       "                [settings__dark.tap(), items__open_detail.tap()]]")
    result = loads_document(text, "nav.yaml")
    assert result.document is not None, result.problems
    doc = result.document
    el = doc.element("orphan__thing")
    assert el is not None and len(el.paths) == 3
    host = ScriptedHost(doc, "settings")
    with pytest.raises(ScreenNotReached):
        Navigator(host, NavigationConfig(max_rounds=50)).reach(el, lambda o: o.screen == "orphan")
    assert host.done.count("settings__dark.tap()") == 1
