"""The inspector's parts, each on its own: document edits in place, the access policy, the
gesture parser, the recorder's comments for unclaimed views, and the server's API and websocket
on the simulator (the page itself is driven in a browser by ``test_inspector_browser.py``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import UsageError
from tapir.inspector.doc_edit import DocumentEditor, EditRefused
from tapir.inspector.security import AccessPolicy, is_loopback
from tapir.inspector.session import InspectorOptions, InspectorSession
from tapir.runtime.input_events import GestureParser, touch_ranges
from tapir.sim.touch import getevent_devices

ROOT = Path(__file__).resolve().parent.parent
MUSIC = ROOT / "samples" / "music" / "music.yaml"


# -- document edits -----------------------------------------------------------------------------

@pytest.fixture
def music(tmp_path: Path) -> Path:
    doc = tmp_path / "music.yaml"
    shutil.copy(MUSIC, doc)
    return doc


def _only_added(before: str, after: str) -> list[str]:
    """The lines ``after`` has beyond ``before``, asserting every line of ``before`` is kept in order."""
    old, new = before.splitlines(), after.splitlines()
    added, i = [], 0
    for line in new:
        if i < len(old) and line == old[i]:
            i += 1
        else:
            added.append(line)
    assert i == len(old), f"line {i + 1} of the original was changed: {old[i]!r}"
    return added


def test_adding_an_element_adds_only_its_lines_and_the_document_loads_with_it(music: Path) -> None:
    before = music.read_text(encoding="utf-8")
    edit = DocumentEditor(music).add_element(
        "songs_screen", "songs_tab", kind="tab", description="Switches to the songs: it's the first tab.",
        identifiers=["//node[@resource-id='org.tapir.music:id/tab_songs']", "//node[@content-desc='Songs']"])
    added = _only_added(before, music.read_text(encoding="utf-8"))
    assert added == ["      songs_screen__songs_tab:", "        kind: tab",
                     "        description: 'Switches to the songs: it''s the first tab.'",
                     "        identifiers:", "          - //node[@resource-id='org.tapir.music:id/tab_songs']",
                     "          - //node[@content-desc='Songs']"]
    el = edit.document.element("songs_screen__songs_tab")
    assert el.description == "Switches to the songs: it's the first tab." and len(el.identifiers) == 2
    assert music.read_text(encoding="utf-8").splitlines()[edit.line - 1] == "      songs_screen__songs_tab:"


def test_identifiers_are_appended_or_put_first_and_sensitive_is_set(music: Path) -> None:
    ed = DocumentEditor(music)
    before = music.read_text(encoding="utf-8")
    ed.add_identifier("songs_screen__search_button", "//node[@content-desc='Search' and @clickable='true']")
    doc = ed.add_identifier("songs_screen__playlists_tab", "//node[@text='Playlists']", first=True).document
    assert [i.xpath for i in doc.element("songs_screen__search_button").identifiers][-1] == \
        "//node[@content-desc='Search' and @clickable='true']"
    assert doc.element("songs_screen__playlists_tab").identifiers[0].xpath == "//node[@text='Playlists']"
    doc = ed.set_sensitive("songs_screen__search_button").document
    assert doc.element("songs_screen__search_button").sensitive
    assert len(_only_added(before, music.read_text(encoding="utf-8"))) == 3
    doc = ed.set_sensitive("songs_screen__search_button", False).document
    assert not doc.element("songs_screen__search_button").sensitive


@pytest.mark.parametrize(("change", "says"), [
    (lambda ed: ed.add_element("songs_screen", "search_button", kind="button", description="x",
                               identifiers=["//node[@text='x']"]), "search_button"),
    (lambda ed: ed.add_element("songs_screen", "broken", kind="button", description="x",
                               identifiers=["//node[@text='x'"]), ""),
    (lambda ed: ed.add_element("nowhere_screen", "x", kind="button", description="x",
                               identifiers=["//node[@text='x']"]), "no screen 'nowhere_screen'"),
    (lambda ed: ed.add_element("songs_screen", "Bad Name", kind="button", description="x",
                               identifiers=["//node"]), "not an element name"),
    (lambda ed: ed.add_identifier("songs_screen__nothing", "//node"), "nothing"),
])
def test_an_edit_that_would_break_the_document_is_refused_and_the_file_is_unchanged(
        music: Path, change: Any, says: str) -> None:
    before = music.read_bytes()
    with pytest.raises(EditRefused) as caught:
        change(DocumentEditor(music))
    assert says in caught.value.message + " ".join(caught.value.problems)
    assert music.read_bytes() == before


def test_a_json_document_is_edited_as_json_keeping_key_order(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(MUSIC.read_text(encoding="utf-8"))
    path = tmp_path / "music.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    DocumentEditor(path).add_element("songs_screen", "songs_tab", kind="tab", description="The songs tab.",
                                     identifiers=["//node[@resource-id='org.tapir.music:id/tab_songs']"])
    after = json.loads(path.read_text(encoding="utf-8"))
    assert list(after) == list(data)
    assert list(after["screens"]["songs_screen"]["elements"])[-1] == "songs_screen__songs_tab"


# -- who may use the page -------------------------------------------------------------------------

def test_the_policy_answers_this_machine_only_and_checks_the_token() -> None:
    local = AccessPolicy.local(8765)
    assert local.host_allowed("127.0.0.1:8765") and local.host_allowed("localhost:8765")
    assert not local.host_allowed("evil.example:8765") and not local.host_allowed("127.0.0.1:9999")
    assert is_loopback("::1") and not is_loopback("0.0.0.0")
    with pytest.raises(ValueError):
        AccessPolicy.remote("0.0.0.0", 8765, "")
    remote = AccessPolicy.remote("0.0.0.0", 8765, "s3cret")
    assert remote.token_ok({"query_string": b"token=s3cret", "headers": []})
    assert remote.token_ok({"headers": [(b"cookie", b"tapir_inspect=s3cret")]})
    assert not remote.token_ok({"query_string": b"token=guess", "headers": [(b"x-tapir-token", b"nope")]})


def test_listening_beyond_this_machine_needs_allow_remote_and_then_a_token() -> None:
    with pytest.raises(UsageError, match="--allow-remote"):
        InspectorSession(InspectorOptions(device="sim:music", document=MUSIC, host="0.0.0.0", port=0))
    session = InspectorSession(InspectorOptions(device="sim:music", document=MUSIC, host="0.0.0.0", port=0,
                                                allow_remote=True))
    assert session.policy.token and len(session.policy.token) >= 20


# -- getevent ---------------------------------------------------------------------------------------

def test_getevent_lines_become_taps_swipes_and_keys_in_screen_pixels() -> None:
    ranges = touch_ranges(getevent_devices(1080, 2400, labels=True))
    parser = GestureParser(ranges, (1080, 2400))
    dev = "/dev/input/event2"

    def touch(t0: float, t1: float, points: list[tuple[int, int]]) -> list[str]:
        ax = [(round(x * 4095 / 1079), round(y * 4095 / 2399)) for x, y in points]
        lines = [f"[{t0:.6f}] {dev}: EV_ABS ABS_MT_TRACKING_ID 00000001",
                 f"[{t0:.6f}] {dev}: EV_ABS ABS_MT_POSITION_X {ax[0][0]:08x}",
                 f"[{t0:.6f}] {dev}: EV_ABS ABS_MT_POSITION_Y {ax[0][1]:08x}",
                 f"[{t0:.6f}] {dev}: EV_KEY BTN_TOUCH DOWN", f"[{t0:.6f}] {dev}: EV_SYN SYN_REPORT 00000000"]
        for x, y in ax[1:]:
            lines += [f"[{t1:.6f}] {dev}: EV_ABS ABS_MT_POSITION_X {x:08x}",
                      f"[{t1:.6f}] {dev}: EV_ABS ABS_MT_POSITION_Y {y:08x}",
                      f"[{t1:.6f}] {dev}: EV_SYN SYN_REPORT 00000000"]
        lines += [f"[{t1:.6f}] {dev}: EV_ABS ABS_MT_TRACKING_ID ffffffff", f"[{t1:.6f}] {dev}: EV_KEY BTN_TOUCH UP",
                  f"[{t1:.6f}] {dev}: EV_SYN SYN_REPORT 00000000"]
        return lines

    def feed(lines: list[str]) -> list[Any]:
        return [g for line in lines for g in parser.feed(line)]

    (tap,) = feed(touch(10.0, 10.06, [(540, 1200)]))
    assert (tap.kind, abs(tap.x - 540) <= 1, abs(tap.y - 1200) <= 1) == ("tap", True, True)
    (long,) = feed(touch(11.0, 11.8, [(300, 400)]))
    assert long.kind == "long_tap"
    (swipe,) = feed(touch(12.0, 12.3, [(540, 1800), (540, 1200), (540, 600)]))
    assert swipe.kind == "swipe" and swipe.y2 < swipe.y
    keys = feed(["[13.000000] /dev/input/event1: EV_KEY KEY_BACK DOWN",
                 "[13.050000] /dev/input/event1: EV_KEY KEY_BACK UP"])
    assert [(g.kind, g.key) for g in keys] == [("key", "back")]


# -- the server, on the simulator ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InspectorSession, Path]]:
    pytest.importorskip("uvicorn")
    doc = tmp_path_factory.mktemp("served") / "music.yaml"
    shutil.copy(MUSIC, doc)
    with InspectorSession(InspectorOptions(device="sim:music", document=doc, port=0, interval=0.2)) as session:
        yield session, doc


def _call(url: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
          ) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    h = {"Content-Type": "application/json", "X-Tapir": "1"} if body is not None else {}
    req = urllib.request.Request(url, data=data, headers={**h, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, json.loads(raw) if r.headers.get_content_type() == "application/json" else raw
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if e.headers.get_content_type() == "application/json" else raw.decode()


@pytest.mark.adb
def test_the_api_shows_the_screen_a_view_and_refuses_what_it_must(served: tuple[InspectorSession, Path]) -> None:
    session, doc = served
    url = session.url
    status, hello = _call(url + "api/state")
    state = hello["state"]
    assert status == 200 and state["screen"]["name"] == "songs_screen"
    grounded = {e["name"]: e for e in state["elements"]}
    assert grounded["songs_screen__search_button"]["how"] == "identifier 0"
    assert {e["name"] for e in state["absent"]} >= {"songs_screen__now_playing_bar"}
    status, png = _call(url + f"api/shot/{state['seq']}")
    assert status == 200 and png[:8] == b"\x89PNG\r\n\x1a\n"
    node = grounded["songs_screen__search_button"]["node"]
    status, view = _call(url + f"api/view/{state['seq']}/{node}")
    assert status == 200 and view["claimed_by"][0]["element"] == "songs_screen__search_button"
    assert view["identifiers"][0]["unique"]
    status, err = _call(url + f"api/view/{state['seq']}/99999")
    assert status == 400 and "no view 99999" in err["error"]
    # a change without the page's header is refused; a foreign Host too
    req = urllib.request.Request(url + "api/act", data=b'{"action": "back"}',
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=10)
    assert caught.value.code == 403
    assert _call(url + "api/state", headers={"Host": "evil.example"})[0] == 403
    # an edit that would break the document: 400 with its problems, the file unchanged
    before = doc.read_bytes()
    status, err = _call(url + "api/element", {"screen": "songs_screen", "name": "search_button", "kind": "button",
                                              "description": "again", "identifiers": ["//node[@text='x']"]})
    assert status == 400 and doc.read_bytes() == before
    # an action on a dump that is no longer the screen's: 409
    assert _call(url + "api/act", {"action": "tap", "seq": state["seq"] - 1, "node": node})[0] in (400, 409)


@pytest.mark.adb
def test_the_websocket_tells_the_page_of_a_screen_change(served: tuple[InspectorSession, Path]) -> None:
    from websockets.sync.client import connect

    session, _ = served
    ws_url = session.url.replace("http://", "ws://") + "ws"
    with connect(ws_url, open_timeout=10) as ws:
        hello = json.loads(ws.recv(timeout=10))
        assert hello["type"] == "hello" and hello["state"]["screen"]["name"] == "songs_screen"
        status, _ = _call(session.url + "api/act", {"action": "tap", "seq": hello["state"]["seq"],
                                                    "node": next(e["node"] for e in hello["state"]["elements"]
                                                                 if e["name"] == "songs_screen__search_button")})
        assert status == 200
        while True:
            m = json.loads(ws.recv(timeout=10))
            if m["type"] == "screen":
                break
        assert m["state"]["screen"]["name"] == "search_screen"
        assert m["cause"]["action"] == "tap" and m["cause"]["from"] == "page"
        _call(session.url + "api/act", {"action": "back"})
    with pytest.raises(Exception):  # noqa: B017 - the handshake is refused, however the client words it
        with connect(ws_url, open_timeout=10, origin="http://evil.example"):  # type: ignore[arg-type]
            pass


# -- the commands ----------------------------------------------------------------------------------

@pytest.mark.adb
def test_tapir_inspect_serves_until_interrupted(tmp_path: Path) -> None:
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "inspect", "--device", "sim:music", "--port", "0",
                             "--no-screenshots"], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        url = ""
        for _ in range(10):
            line = proc.stderr.readline()
            if "the inspector is at" in line:
                url = line.split()[-1]
                break
        assert url.startswith("http://127.0.0.1:"), line
        status, hello = _call(url + "api/state")
        assert status == 200 and hello["state"]["screen"]["name"] == "songs_screen"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_usage_errors_exit_2_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    assert main(["inspect", "--device", "sim:music", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert main(["record", "--device", "sim:music", "-o", str(ROOT)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["inspect", "--device", "sim:music", "--doc", "nope.yaml"]) == 2


def test_write_atomic_keeps_the_mode_and_leaves_nothing_behind_on_failure(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from tapir.inspector.files import write_atomic

    doc = tmp_path / "app.yaml"
    doc.write_text("app: old\n", encoding="utf-8")
    doc.chmod(0o600)
    write_atomic(doc, "app: new\r\n")
    assert doc.read_bytes() == b"app: new\r\n" and doc.stat().st_mode & 0o777 == 0o600

    def fail(src: str, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomic(doc, "app: lost\n")
    assert doc.read_bytes() == b"app: new\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.yaml"]  # the temporary file is gone


@pytest.mark.adb
def test_tapir_record_without_a_page_stops_on_sigterm_and_says_where_the_script_is(tmp_path: Path) -> None:
    import signal

    out = tmp_path / "flow.tap"
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "record", "--device", "sim:music", "--no-page",
                             "-o", str(out)], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        seen = []
        for _ in range(10):
            seen.append(proc.stderr.readline())
            if "Ctrl-C stops" in seen[-1]:
                break
        assert "recording what is done on the device" in seen[-1], seen
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert f"recorded 0 statements to {out}" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
