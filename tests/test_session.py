"""``DeviceRuntime`` on the simulated Music app: lists beyond the screen, checks before and after
actions, errors, reads that reuse the last dump, and settling with few dumps.

The device is the real ``AdbDevice`` command layer talking in-process to the simulator; the
grounder is the plain XPath one of ``runtime_helpers`` so that these tests are about the session.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import make_runtime

from tapir.core.document import AppDocument
from tapir.core.errors import ActionError, ElementNotFound, Span, UnknownElement
from tapir.docgen.loader import load_document
from tapir.dsl.interpreter import RunResult, run_script
from tapir.dsl.values import ElementHandle
from tapir.hierarchy.model import Bounds, UINode, UITree
from tapir.runtime.list_access import documented_elsewhere
from tapir.runtime.lists import align, new_above
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.runtime.settle import Expectation, Observation, SettleConfig, settle
from tapir.sim.apps import get_app
from tapir.sim.apps.music import MusicApp

REPO = Path(__file__).resolve().parent.parent
SPAN = Span(1, 1, 1, 2)
SONGS = "songs_screen__song_list"


@pytest.fixture(scope="module")
def doc() -> AppDocument:
    return load_document(REPO / "samples" / "music" / "music.yaml")


def music() -> MusicApp:
    app = get_app("music")
    assert isinstance(app, MusicApp)
    return app


def run(rt: DeviceRuntime, source: str) -> RunResult:
    return run_script(source, lambda: rt, output=None)


def titles(app: MusicApp) -> list[str]:
    return [s.title for s in app.sorted_songs()]


# ---------------------------------------------------------------------------------------------
# Lists longer than the screen


def test_len_and_iteration_see_every_item_once(doc: AppDocument) -> None:
    app = music()
    # dumps stay fresh for the whole test (dumps are counted): on a loaded machine the 44 reads
    # below may take longer than the simulator's 0.25 s, and a stale dump is dumped again by design
    steady = SessionConfig(settle=dataclasses.replace(SettleConfig.for_simulator(), fresh_s=3600.0))
    rt, _, _ = make_runtime(app, doc, config=steady)
    result = run(rt, f"n = len(${SONGS})\nnames = [s.get_text($songs_screen__song_title) for s in ${SONGS}]")
    assert result.ok, result.error
    assert result.variables["n"] == str(len(app.state.songs)) == "44"
    assert result.variables["names"].startswith(repr(titles(app)[:3])[:-1])
    state = rt.lists.lists[SONGS]
    assert [s.split("\x1f")[0] for s in state.sigs if s] == titles(app)
    # len() swiped to the end; reading all 44 rows afterwards cost no dump at all
    dumps = rt.stats.dumps
    assert run(rt, f"x = [s.get_text() for s in ${SONGS}]").ok
    assert rt.stats.dumps == dumps


def test_items_below_the_fold_are_scrolled_to_and_back(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)
    assert run(rt, f"${SONGS}[40].tap()").ok
    assert app.state.now_playing == app.sorted_songs()[40].id
    assert run(rt, f"${SONGS}[2].tap()").ok
    assert app.state.now_playing == app.sorted_songs()[2].id
    assert rt.stats.list_scrolls >= 6  # down to row 40 and back up again


def test_index_out_of_range_says_how_many_items_there_are(doc: AppDocument) -> None:
    rt, _, _ = make_runtime(music(), doc)
    result = run(rt, f"${SONGS}[44].tap()")
    assert isinstance(result.error, ActionError)
    assert "index 44 is out of range" in result.error.message and "44 items" in result.error.message
    assert result.error.span is not None and result.error.span.line == 1


def test_match_scrolls_to_find_and_folds_case(doc: AppDocument) -> None:
    app = music()
    rt, _, trace = make_runtime(app, doc)
    assert run(rt, f"${SONGS}.match('via roma').tap()").ok
    assert app.state.song(app.state.now_playing).title == "Via Roma"
    match = trace.events("action")[0]
    assert match["call"] == "match" and match["index"] == titles(app).index("Via Roma")


def test_match_without_a_hit_names_what_it_saw(doc: AppDocument) -> None:
    rt, _, _ = make_runtime(music(), doc)
    result = run(rt, f"${SONGS}.match('Not A Song').tap()")
    assert isinstance(result.error, ActionError)
    assert "no item of $songs_screen__song_list matches 'Not A Song' (44 items seen" in result.error.message


def test_match_without_a_hit_names_the_list_whose_documented_items_have_it() -> None:
    # the model's commonest repeated mistake on real apps: a dialog's item matched on the dialog's
    # other list (DroidTask dialer: 'First name' on the sorting order's list); the error says which
    contacts = load_document(REPO / "samples" / "contacts" / "contacts.yaml")
    rt, _, _ = make_runtime(get_app("contacts"), contacts)
    result = run(rt, "$main_menu__options.match('first name').tap()")
    assert isinstance(result.error, ActionError)
    assert result.error.message.endswith("; the document lists 'first name' as an item of $sort_dialog__sort_options")
    assert result.error.hint == "match it on that list: $sort_dialog__sort_options.match('first name')"
    # a text no documented list has keeps the general hint
    rt, _, _ = make_runtime(get_app("contacts"), contacts)
    result = run(rt, "$main_menu__options.match('Nobody').tap()")
    assert isinstance(result.error, ActionError) and "the document lists" not in result.error.message
    assert result.error.hint is not None and result.error.hint.startswith("match() finds an item the list shows now")


def test_documented_elsewhere_prefers_the_same_screen_and_near_words() -> None:
    clock = load_document(REPO / "samples" / "clock" / "clock.yaml")
    menu = clock.element("main_menu__options")
    assert menu is not None
    assert [e.name for e in documented_elsewhere(clock, "10  MINUTES", menu)] == ["snooze_dialog__snooze_options"]
    assert [e.name for e in documented_elsewhere(clock, "Edit labels", menu)] == ["alarm_options_menu__options"]
    assert documented_elsewhere(clock, "Settings", menu) == []  # the list itself has it: no other to name
    assert documented_elsewhere(clock, "  ", menu) == []


def test_match_by_attributes(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)  # installing the app resets it: play afterwards
    app.play(app.sorted_songs()[30].id)
    result = run(rt, f"t = ${SONGS}.match({{'selected': True}}).get_text($songs_screen__song_title)")
    assert result.ok, result.error
    assert result.variables["t"] == repr(app.sorted_songs()[30].title)


def test_scroll_reports_the_end_only_when_the_list_did_not_move(doc: AppDocument) -> None:
    rt, _, trace = make_runtime(music(), doc)
    result = run(rt, f"n = 0\nwhile not ${SONGS}.scroll():\n    n += 1\nup = ${SONGS}.scroll('up')")
    assert result.ok, result.error
    moves = [r["moved"] for r in trace.events("scroll")]
    assert moves[-2] is False and all(moves[:-2]) and moves[-1] is True
    assert int(result.variables["n"]) == len(moves) - 2 >= 3
    assert result.variables["up"] == "False"


# ---------------------------------------------------------------------------------------------
# Checks before and after actions


def open_new_playlist_dialog(rt: DeviceRuntime) -> None:
    assert run(rt, "$songs_screen__playlists_tab.tap()\n$playlists_screen__new_playlist_button.tap()").ok


def test_set_text_replaces_what_is_there_and_is_verified(doc: AppDocument) -> None:
    app = music()
    rt, _, trace = make_runtime(app, doc)
    open_new_playlist_dialog(rt)
    result = run(rt, "$new_playlist_dialog__name_input.set_text('Road')\n"
                     "$new_playlist_dialog__name_input.set_text('Gym mix')\n"
                     "shown = $new_playlist_dialog__name_input.get_text()\n"
                     "$new_playlist_dialog__create_button.tap()")
    assert result.ok, result.error
    assert result.variables["shown"] == "'Gym mix'"
    assert [p.name for p in app.state.playlists][-1] == "Gym mix"
    sets = [r for r in trace.events("action") if r["call"] == "set_text"]
    assert [r["verified"] for r in sets] == [True, True]


class DropFirstText:
    """A device whose first ``drop`` typed texts go nowhere (a keyboard that was not ready)."""

    def __init__(self, device: Any, drop: int) -> None:
        self._device = device
        self.drop = drop

    def input_text(self, text: str) -> None:
        if self.drop > 0:
            self.drop -= 1
            return
        self._device.input_text(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


def test_set_text_retries_once_when_the_text_did_not_land(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)
    open_new_playlist_dialog(rt)
    rt.device = DropFirstText(rt.device, drop=1)  # type: ignore[assignment]
    assert run(rt, "$new_playlist_dialog__name_input.set_text('Focus')").ok
    assert app.field("playlist_name") == "Focus"
    rt.device = DropFirstText(rt.device, drop=2)  # type: ignore[assignment]
    result = run(rt, "$new_playlist_dialog__name_input.set_text('Other')")
    assert isinstance(result.error, ActionError)
    assert "the text did not land in $new_playlist_dialog__name_input" in result.error.message


def test_set_text_needs_an_editable_field(doc: AppDocument) -> None:
    rt, _, _ = make_runtime(music(), doc)
    handle = ElementHandle("songs_screen__song_count")
    with pytest.raises(ActionError, match="not an editable field"):
        rt.set_text(handle, "x", SPAN)


def test_a_disabled_button_is_not_tapped(doc: AppDocument) -> None:
    app = music()
    rt, sim, _ = make_runtime(app, doc)
    open_new_playlist_dialog(rt)
    sent = len(sim.log)
    result = run(rt, "$new_playlist_dialog__create_button.tap()")  # the name is still empty
    assert isinstance(result.error, ActionError) and "is disabled" in result.error.message
    assert not any(cmd.startswith("input tap") for cmd in list(sim.log)[sent:])
    assert app.current_dialog == "new_playlist"


def test_absent_element_on_its_own_screen_is_element_not_found(doc: AppDocument) -> None:
    rt, _, _ = make_runtime(music(), doc)  # nothing plays, so there is no now-playing bar
    result = run(rt, "$songs_screen__now_playing_bar.tap()")
    assert isinstance(result.error, ElementNotFound)
    assert "the device shows 'songs_screen'" in result.error.message


def test_unknown_element_is_reported_before_any_device_call(doc: AppDocument) -> None:
    rt, sim, _ = make_runtime(music(), doc)
    with pytest.raises(UnknownElement, match=r"\$songs_screen__song_lst") as info:
        rt.tap(ElementHandle("songs_screen__song_lst"), None, SPAN)
    assert "$songs_screen__song_list" in (info.value.hint or "")
    assert not sim.log


def test_attributes_of_an_item_and_of_a_switch(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)
    app.play(app.sorted_songs()[1].id)
    result = run(rt, f"a = ${SONGS}[1].get_attributes()\nb = ${SONGS}[0].get_attributes()\n"
                     "s = $settings_screen__album_art_switch.get_attributes()")
    assert result.ok, result.error
    assert "'selected': True" in result.variables["a"] and "'selected': False" in result.variables["b"]
    assert "'checked': True" in result.variables["s"]


def test_back_and_enter(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)
    result = run(rt, "$search_screen__search_input.set_text('lights')\nenter()\n"
                     "n = len($search_screen__result_list)\nback()")
    assert result.ok, result.error
    assert result.variables["n"] == str(sum("lights" in f"{s.title} {s.artist}".lower() for s in app.state.songs))
    assert app.current_screen == "songs"


# ---------------------------------------------------------------------------------------------
# Dumps: reads reuse the last one, actions cost about one


def test_reads_reuse_the_dump_and_actions_cost_one(doc: AppDocument) -> None:
    app = music()
    rt, sim, trace = make_runtime(app, doc)
    result = run(rt, "$songs_screen__more_options_button.tap()\n"
                     "$main_menu__options.match('Settings').tap()\n"
                     "a = $settings_screen__theme_value.get_text()\n"
                     "b = $settings_screen__sort_value.get_text()\n"
                     "c = $settings_screen__gapless_switch.get_attributes()")
    assert result.ok, result.error
    dumps = [r["dumps"] for r in trace.events("action")]
    assert dumps == [2, 0, 1, 0, 0, 0]  # the first dump, one per tap, none for match or reads
    assert sum("uiautomator dump" in c for c in sim.log) == rt.stats.dumps == 3


def _obs(seq: int, digest: str, screen: str | None = "a") -> Observation:
    node = UINode.build({
        "id": 0, "parent": None, "children": (), "path": (), "class_name": "android.widget.FrameLayout",
        "resource_id": "", "text": digest, "content_desc": "", "bounds": Bounds(0, 0, 100, 100), "package": "p",
        "clickable": False, "long_clickable": False, "checkable": False, "checked": False, "selected": False,
        "scrollable": False, "editable": False, "focusable": False, "focused": False, "enabled": True,
        "visible": True, "password": False,
    })
    return Observation(UITree((node,), (0,), "test"), screen, digest, "p", seq)


@pytest.mark.parametrize(("dumps", "expect", "used", "reason"), [
    (["b"], Expectation(change=True), 1, "changed"),
    (["a", "a"], Expectation(change=True), 2, "stable"),          # late app: look once more
    (["a", "b"], Expectation(change=True), 2, "changed"),
    (["a"], Expectation(change=False), 1, "unchanged"),
    (["c"], Expectation(change=True, screen="a"), 1, "expected-screen"),
    (["a", "b", "c", "d"], Expectation(change=True), 2, "changed"),
])
def test_settling_spends_a_second_dump_only_when_needed(dumps: list[str], expect: Expectation, used: int,
                                                        reason: str) -> None:
    before = _obs(0, "a")
    seen = iter(_obs(i + 1, d) for i, d in enumerate(dumps))
    slept: list[float] = []
    done = settle(lambda: next(seen), before, expect, SettleConfig(0.1, 0.2, 3), slept.append)
    assert (done.dumps, done.reason) == (used, reason)
    assert slept == [0.1] + [0.2] * (used - 1)


def test_settling_gives_up_at_the_dump_limit() -> None:
    seen = iter(_obs(i, str(i)) for i in range(1, 10))
    done = settle(lambda: next(seen), _obs(0, "0", screen="x"), Expectation(screen="never"),
                  SettleConfig(0, 0, 3), lambda s: None)
    assert done.reason in ("changed", "limit") and done.dumps <= 3


# ---------------------------------------------------------------------------------------------
# Aligning items across swipes


def test_align_picks_the_consistent_offset_nearest_the_hint() -> None:
    known = ["a", "b", "c", "d", "e"]
    assert align(known, ["c", "d", "e", "f"], hint=2) == 2
    assert align(known, ["f", "g"], hint=3) == 5                     # nothing overlaps: all new
    same = ["x"] * 6
    assert align(same, ["x", "x", "x"], hint=3) == 3                  # identical rows: the hint decides
    assert align(known, [None, "d", "e", None], hint=0) == 2          # cut-off rows match anything
    assert align(known, [None, None], hint=1) == 5                    # ...but cannot overlap alone
    assert align(known, ["b", "c"], hint=0, minimum=2) == 5


def test_new_rows_above_the_first_known_one() -> None:
    assert new_above(["c", "d", "e"], ["a", "b", "c", "d"]) == 2
    assert new_above(["c", "d"], ["x", "y"]) == 2
    assert new_above(["c", "d"], ["c", "d"]) == 0


def test_a_list_that_shrank_is_counted_again(doc: AppDocument) -> None:
    app = music()
    rt, _, _ = make_runtime(app, doc)
    result = run(rt, "$songs_screen__playlists_tab.tap()\nbefore = len($playlists_screen__playlist_list)")
    assert result.ok and result.variables["before"] == "2"
    app.state.playlists.pop()  # the app changes behind the script's back...
    result = run(rt, "back()\n$songs_screen__playlists_tab.tap()\nafter = len($playlists_screen__playlist_list)")
    assert result.ok, result.error
    assert result.variables["after"] == "1"  # ...and the next look at the list sees it
