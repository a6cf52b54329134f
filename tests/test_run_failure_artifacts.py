"""A failing `tapir run` keeps the screen, the last dump, the trace and the error, in a folder the
error names (``RunOptions.failure_artifacts``); a passing one, or --no-failure-artifacts, keeps nothing."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from tapir.cli import main

pytestmark = [pytest.mark.adb]

MUSIC = Path(__file__).resolve().parent.parent / "samples" / "music" / "music.yaml"
FAILING = f"""\
# doc: {MUSIC}
$songs_screen__song_list.match("Lanterns").tap()
title = $now_playing_screen__title_text.get_text()
assert title == "Nope", f"playing {{title}}"
"""


def _tapir(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.mark.timeout(120)
def test_a_failed_run_keeps_its_artifacts_in_the_folder_the_error_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.tap").write_text(FAILING)
    code, out = _tapir("run", "broken.tap", "--device", "sim:music")
    assert code == 1 and "playing Lanterns" in out, out
    named = re.search(r"hierarchy dump, trace and error are in (\S+)/\n", out)
    assert named is not None, out
    folder = tmp_path / named[1]
    assert folder.parent == tmp_path / "tapir-artifacts" and folder.name.startswith("broken-"), folder
    assert sorted(p.name for p in folder.iterdir()) == ["error.txt", "hierarchy.xml", "screenshot.png", "trace.jsonl"]
    assert (folder / "screenshot.png").read_bytes().startswith(b"\x89PNG")
    assert "Lanterns" in (folder / "hierarchy.xml").read_text()
    events = [json.loads(line)["event"] for line in (folder / "trace.jsonl").read_text().splitlines()]
    assert events[0] == "session" and "action" in events
    assert "playing Lanterns" in (folder / "error.txt").read_text()


@pytest.mark.timeout(120)
def test_a_passing_run_or_the_flag_off_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.tap").write_text(FAILING)
    (tmp_path / "fine.tap").write_text(FAILING.replace('"Nope"', '"Lanterns"'))
    assert _tapir("run", "fine.tap", "--device", "sim:music")[0] == 0
    code, out = _tapir("run", "broken.tap", "--device", "sim:music", "--no-failure-artifacts")
    assert code == 1 and "are in" not in out, out
    assert not (tmp_path / "tapir-artifacts").exists()
    code, out = _tapir("run", "broken.tap", "--device", "sim:music", "--failure-artifacts", "kept")
    assert code == 1 and "trace and error are in kept/" in out, out
    assert (tmp_path / "kept" / "screenshot.png").is_file()
