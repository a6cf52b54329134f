"""Typed page objects: the classes follow the API registry, call the runtime the interpreter
uses, and `mypy --strict` accepts correct use and rejects wrong use of a generated module."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import ActionError, Span
from tapir.core.watchers import Watcher
from tapir.docgen import pages
from tapir.docgen.loader import load_document
from tapir.docgen.stubs import KIND_CLASS_NAMES, attribute_name, class_name, generate_stubs
from tapir.dsl.api import ELEMENT_METHODS, LIST_KINDS, Kind, methods_for
from tapir.dsl.runtime_api import UIRuntime
from tapir.dsl.values import ElementHandle

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "tests" / "golden" / "example_app.yaml"


def _every_kind_document() -> Any:
    """A document with one element of every kind (lists hold items of every kind too)."""
    from tapir.docgen.loader import loads_document

    elements = "".join(
        f"      s__{k.value}_x:\n        kind: {k.value}\n        description: a {k.value}\n"
        f"        identifiers: [\"//node[@resource-id='{k.value}']\"]\n" for k in Kind)
    text = (f"app:\n  package: org.x\n  name: X\n  start_screen: s\nscreens:\n  s:\n    description: s\n"
            f"    signature:\n      activity: .S\n    elements:\n{elements}")
    result = loads_document(text)
    assert result.document is not None, result.problems
    return result.document


def test_each_kind_class_has_exactly_the_registry_methods(tmp_path: Path) -> None:
    source = generate_stubs(_every_kind_document(), "x.yaml")
    path = tmp_path / "every_pages.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("every_pages", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    list_protocol = {"__getitem__", "__iter__", "__len__"}
    for kind, name in KIND_CLASS_NAMES.items():
        cls = getattr(module, name)
        public = {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}
        assert public == {e.name for e in methods_for(kind)}, kind
        assert cls.kind is kind
        has_items = list_protocol <= set(dir(cls))
        assert has_items == (kind in LIST_KINDS), kind
    # Every registry method is reachable on some kind.
    assert set(ELEMENT_METHODS) <= {n for name in KIND_CLASS_NAMES.values() for n in dir(getattr(module, name))}


class Recorder:
    """A UIRuntime that records calls; lists have three items."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def _log(self, *call: Any) -> None:
        self.calls.append(call)

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._log("tap", str(handle), child and str(child))

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._log("long_tap", str(handle), child and str(child))

    def set_text(self, handle: ElementHandle, text: str, span: Span) -> None:
        self._log("set_text", str(handle), text)

    def scroll(self, handle: ElementHandle, direction: str, span: Span) -> bool:
        self._log("scroll", str(handle), direction)
        return True

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str:
        self._log("get_text", str(handle), child and str(child))
        return f"text of {handle}"

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        self._log("get_attributes", str(handle), child and str(child))
        return {"checked": True}

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        return 3

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        if index >= 3:
            raise ActionError("out of range", span)
        return handle.at(index)

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Span) -> ElementHandle:
        return handle.matching(query)

    def back(self, span: Span) -> None:
        self._log("back", span.line)

    def enter(self, span: Span) -> None:
        self._log("enter")

    def wait_for(self, target: ElementHandle | str, gone: bool, timeout: float, span: Span, *,
                 watchers: bool = True, must: bool = False) -> bool:
        self._log("wait_for", str(target), gone, timeout)
        return True

    def sleep(self, seconds: float, span: Span) -> None:
        self._log("sleep", seconds)

    def app(self, action: str, extras: dict[str, Any] | None, span: Span) -> None:
        self._log("app", action, extras)

    def screenshot(self, name: str | None, span: Span) -> str:
        self._log("screenshot", name)
        return f"{name}.png"

    def watch(self, watcher: Watcher, span: Span) -> None:
        self._log("watch", watcher.tap, watcher.when, watcher.when_text)

    def close(self) -> None:
        pass


def _load_generated(tmp_path: Path) -> Any:
    source = generate_stubs(load_document(EXAMPLE), "example_app.yaml")
    path = tmp_path / "music_pages.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("music_pages", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_page_objects_drive_the_runtime(tmp_path: Path) -> None:
    module = _load_generated(tmp_path)
    runtime = Recorder()
    assert isinstance(runtime, UIRuntime)
    app = module.connect(runtime)
    app.home_screen.search_input.set_text("Emil")
    app.home_screen.songs_button.tap()
    songs = app.songs_screen.song_list
    assert isinstance(songs, pages.ElementList) and len(songs) == 3
    for song in songs:
        song.tap(song.song_menu_button)
    assert songs.match("Emil").song_artist.get_text() == 'text of $songs_screen__song_list.match(\'Emil\')'
    songs[-1].long_tap()
    assert songs.scroll() is True
    assert app.settings_screen.dark_theme_switch.get_attributes() == {"checked": True}
    app.back()
    assert runtime.calls == [
        ("set_text", "$home_screen__search_input", "Emil"),
        ("tap", "$home_screen__songs_button", None),
        ("tap", "$songs_screen__song_list[0]", "$songs_screen__song_menu_button"),
        ("tap", "$songs_screen__song_list[1]", "$songs_screen__song_menu_button"),
        ("tap", "$songs_screen__song_list[2]", "$songs_screen__song_menu_button"),
        ("get_text", "$songs_screen__song_list.match('Emil')", "$songs_screen__song_artist"),
        ("long_tap", "$songs_screen__song_list[2]", None),
        ("scroll", "$songs_screen__song_list", "down"),
        ("get_attributes", "$settings_screen__dark_theme_switch", None),
        ("back", runtime.calls[-1][1]),
    ]
    # The span handed to the runtime is the caller's line, for traces and error messages.
    assert runtime.calls[-1][1] > 0
    with pytest.raises(ActionError):
        songs[-4]
    assert isinstance(app.songs_screen.sort_button, module.Button)
    assert isinstance(app.songs_screen.sort_button, pages.Element)
    assert not hasattr(app.songs_screen.sort_button, "set_text")


def test_page_objects_wait_watch_and_take_screenshots(tmp_path: Path) -> None:
    """The script features are page-object methods too: elements passed to the app's functions
    are passed as the handles a script would pass."""
    app = _load_generated(tmp_path).connect(runtime := Recorder())
    assert app.songs_screen.sort_button.exists(timeout=2) is True
    app.songs_screen.song_list.wait_gone()
    app.watch(app.home_screen.settings_button, when="Rate us")
    assert app.screenshot(name="after") == "after.png"
    app.launch_app(args={"tab": "songs"})
    app.sleep(1.5)
    assert runtime.calls == [
        ("wait_for", "$songs_screen__sort_button", False, 2),
        ("wait_for", "$songs_screen__song_list", True, 10),
        ("watch", "home_screen__settings_button", None, "Rate us"),
        ("screenshot", "after"),
        ("app", "launch", {"tab": "songs"}),
        ("sleep", 1.5),
    ]
    assert not hasattr(app, "param")  # a run's parameter is no page-object method


def test_names_of_generated_classes_and_attributes() -> None:
    assert class_name("songs_screen", "song_list") == "SongsScreenSongList"
    assert class_name("2nd_screen") == "_2ndScreen"
    assert attribute_name("class", set()) == "class_"
    assert attribute_name("tap", {"tap"}) == "tap_"


def test_generated_module_for_every_kind_compiles(tmp_path: Path) -> None:
    module = _load_generated(tmp_path)
    assert {"connect", "MusicApp", "SongsScreenPage", "SongsScreenSongListItem"} <= set(module.__all__)
    assert module.MusicApp.package == "org.example.music"
    assert "Script name: $songs_screen__song_list" in (module.SongsScreenPage.song_list.__doc__ or "")
    assert module.Switch.kind is Kind.SWITCH


GOOD_TEST = '''\
from music_pages import MusicApp, connect
from tapir.docgen.pages import PageRuntime


def add_emil_songs(runtime: PageRuntime) -> int:
    app: MusicApp = connect(runtime)
    app.home_screen.search_input.set_text("Emil")
    app.home_screen.songs_button.tap()
    added = 0
    for song in app.songs_screen.song_list:
        if song.song_artist.get_text() == "Emil":
            song.tap(song.song_menu_button)
            app.song_options_popup.add_to_playlist_button.tap()
            app.add_playlist_screen.playlists.match("Emil").tap()
            added += 1
    reached_end: bool = app.songs_screen.song_list.scroll("down")
    checked = bool(app.settings_screen.dark_theme_switch.get_attributes()["checked"])
    return added + len(app.songs_screen.song_list) + int(reached_end) + int(checked)
'''

BAD_TEST = '''\
from music_pages import connect
from tapir.docgen.pages import PageRuntime


def wrong(runtime: PageRuntime) -> None:
    app = connect(runtime)
    app.home_screen.songs_button.set_text("x")
    app.home_screen.no_such_button.tap()
    app.songs_screen.sort_button.scroll("down")
    app.songs_screen.song_list.scroll("sideways")
    app.songs_screen.song_list[0].song_album.get_text()
    app.songs_screen.song_list.match(3)
'''


# mypy finds `tapir` where Python does (an install, or the src/ folder an editable install names);
# no cache and no project config, so only --strict decides.
MYPY_ARGS = ["--strict", "--follow-imports=silent", "--no-incremental", "--cache-dir", os.devnull,
             "--config-file", os.devnull, "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}"]


@pytest.mark.slow
def test_mypy_strict_accepts_correct_use_and_rejects_wrong_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    (tmp_path / "music_pages.py").write_text(generate_stubs(load_document(EXAMPLE), "example_app.yaml"))
    (tmp_path / "good_test.py").write_text(GOOD_TEST)
    (tmp_path / "bad_test.py").write_text(BAD_TEST)
    monkeypatch.chdir(tmp_path)
    out, err, status = mypy_api.run([*MYPY_ARGS, "music_pages.py", "good_test.py"])
    assert status == 0, out + err
    out, err, status = mypy_api.run([*MYPY_ARGS, "music_pages.py", "good_test.py", "bad_test.py"])
    assert status == 1
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert all(line.startswith("bad_test.py:") for line in errors), out
    by_line = {int(line.split(":")[1]): line for line in errors}
    assert sorted(by_line) == [7, 8, 9, 10, 11, 12], out
    assert '"Button" has no attribute "set_text"' in by_line[7]
    assert '"HomeScreenPage" has no attribute "no_such_button"' in by_line[8]
    assert '"Button" has no attribute "scroll"' in by_line[9]
    assert "sideways" in by_line[10]
    assert '"SongsScreenSongListItem" has no attribute "song_album"' in by_line[11]
    assert '"match"' in by_line[12]


@pytest.mark.slow
@pytest.mark.upstream
def test_mypy_strict_accepts_the_imported_applauncher_pages(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    from tapir.docgen.loader import loads_document
    from tapir.docgen.upstream import import_file

    text, _ = import_file(upstream / "droidtask/apps/applauncher/doc.json")
    doc = loads_document(text).document
    assert doc is not None
    (tmp_path / "applauncher_pages.py").write_text(generate_stubs(doc, "applauncher.yaml"))
    out, err, status = mypy_api.run([*MYPY_ARGS, str(tmp_path / "applauncher_pages.py")])
    assert status == 0, out + err
