"""What the inspector's page may write (issue 22): recordings only as ``.tap`` files in the
document's folder, edits only to the document itself; everything else is refused with a 4xx and
a JSON message, never written and never a 500."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_inspector import MUSIC, _call

from tapir.core.errors import UsageError
from tapir.inspector.files import confined_recording
from tapir.inspector.session import InspectorOptions, InspectorSession


@pytest.mark.parametrize("output,why", [
    ("../outside.tap", "only in"),
    ("/tmp/anywhere.tap", "only in"),
    ("notes.txt", "is a .tap file"),
    ("music.yaml", "is a .tap file"),
    (".bashrc", "is a .tap file"),
    ("missing/dir/play.tap", "no folder"),
    ("", "name the recording"),
    ("a\0b.tap", "name the recording"),
    ("sub", "is a .tap file"),
])
def test_what_the_page_names_is_confined_to_tap_files_in_the_documents_folder(tmp_path: Path, output: str,
                                                                           why: str) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(UsageError, match=why):
        confined_recording(output, tmp_path)


def test_links_and_folders_are_refused_and_tap_files_below_the_folder_are_accepted(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-victim.tap"
    outside.write_text("precious\n", encoding="utf-8")
    try:
        os.symlink(outside, tmp_path / "link.tap")
        with pytest.raises(UsageError):
            confined_recording("link.tap", tmp_path)
        (tmp_path / "dir.tap").mkdir()
        with pytest.raises(UsageError, match="not a regular file"):
            confined_recording("dir.tap", tmp_path)
        (tmp_path / "sub").mkdir()
        assert confined_recording("sub/play.tap", tmp_path) == (tmp_path / "sub" / "play.tap").resolve()
        assert confined_recording(str(tmp_path / "play.tap"), tmp_path) == (tmp_path / "play.tap").resolve()
        assert outside.read_text(encoding="utf-8") == "precious\n"
    finally:
        outside.unlink()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InspectorSession, Path]]:
    pytest.importorskip("uvicorn")
    doc = tmp_path_factory.mktemp("writes") / "music.yaml"
    shutil.copy(MUSIC, doc)
    with InspectorSession(InspectorOptions(device="sim:music", document=doc, port=0, interval=0.2)) as session:
        yield session, doc


@pytest.mark.adb
def test_the_record_endpoint_refuses_every_path_outside_with_a_4xx(served: tuple[InspectorSession, Path],
                                                                  tmp_path: Path) -> None:
    session, doc = served
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    for output in (str(victim), str(tmp_path / "x.tap"), "../../etc/x.tap", "music.yaml", str(doc),
                   "no/such/folder/play.tap", 12, ["a"], {"a": 1}):
        status, answer = _call(session.url + "api/record", {"action": "start", "output": output})
        assert 400 <= status < 500, (output, status, answer)
        assert isinstance(answer, dict) and answer["error"], (output, answer)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "x.tap").exists()
    status, answer = _call(session.url + "api/record", {"action": "start", "output": "play.tap"})
    assert status == 200, answer
    status, _ = _call(session.url + "api/record", {"action": "stop"})
    assert status == 200 and (doc.parent / "play.tap").is_file()


@pytest.mark.adb
def test_the_edit_endpoints_write_only_the_document(served: tuple[InspectorSession, Path]) -> None:
    session, doc = served
    before = {p: p.stat().st_mtime_ns for p in doc.parent.iterdir()}
    for path, body in (("api/identifier", {"element": "../../x", "xpath": "//x"}),
                       ("api/sensitive", {"element": "/etc/passwd", "sensitive": True}),
                       ("api/element", {"screen": "../x", "name": "y", "kind": "button", "description": "d",
                                        "identifiers": ["//x"]})):
        status, answer = _call(session.url + path, body)
        assert 400 <= status < 500 and answer["error"], (path, status, answer)
    assert {p: p.stat().st_mtime_ns for p in doc.parent.iterdir()} == before


@pytest.mark.adb
def test_what_the_fuzzer_found_is_answered_not_crashed_on(served: tuple[InspectorSession, Path]) -> None:
    from websockets.sync.client import connect

    session, _ = served
    bad: tuple[object, ...] = ({}, [1], "x", 1.5, True)
    for seq in bad:  # was int(seq): a 500 with a traceback
        status, answer = _call(session.url + "api/act", {"action": "tap", "seq": seq, "node": 1})
        assert status == 400 and "whole number" in answer["error"], (seq, status, answer)
    with connect(session.url.replace("http://", "ws://") + "ws", open_timeout=10) as ws:
        ws.recv(timeout=10)
        ws.send(b"\x9eOj binary")  # was receive_text(): KeyError, the socket dropped without a close frame
        ws.send("text")
    status, _ = _call(session.url + "api/state")
    assert status == 200
