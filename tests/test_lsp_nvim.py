"""A real editor as the client of the real server: headless Neovim with editors/nvim/tapir.lua
starts `tapir lsp`, opens a sample script with a mistake, and shows our diagnostics and our
completion list (tests/nvim_client.py, tests/nvim_driver.lua). Skipped without Neovim
(.ci/run installs Debian's)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from nvim_client import nvim_or_skip, run_nvim

REPO = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "tapir.cli", "lsp"]


@pytest.fixture()
def sample(tmp_path: Path) -> Path:
    """samples/music/play_song.tap with one element misspelt, beside its document."""
    nvim_or_skip()
    shutil.copy(REPO / "samples" / "music" / "music.yaml", tmp_path / "music.yaml")
    (tmp_path / "tapir.toml").write_text("", encoding="utf-8")
    text = (REPO / "samples" / "music" / "play_song.tap").read_text(encoding="utf-8")
    assert "$songs_screen__now_playing_bar.tap()" in text
    script = tmp_path / "play_song.tap"
    script.write_text(text.replace("$songs_screen__now_playing_bar.tap()",
                                   "$songs_screen__now_playin_bar.tap()\n$songs_screen__"), encoding="utf-8")
    return script


def test_neovim_shows_our_diagnostics_and_completion(sample: Path) -> None:
    lines = sample.read_text(encoding="utf-8").split("\n")
    typo = next(i for i, line in enumerate(lines) if "now_playin_bar" in line)
    completing = typo + 1  # the line that is only `$songs_screen__`
    answer = run_nvim(sample, server=SERVER, completion_at=(completing, len(lines[completing])), timeout_s=40)
    (client,) = answer["clients"]
    assert client["cmd"] == SERVER and Path(client["root_dir"]) == sample.parent
    by_line = {d["line"]: d for d in answer["diagnostics"]}
    mistake = by_line[typo]
    assert mistake["col"] == 0 and mistake["severity"] == 1
    assert "songs_screen__now_playin_bar" in mistake["message"]
    assert "songs_screen__now_playing_bar" in mistake["message"]  # did you mean
    completion = answer["completion"]
    assert "$songs_screen__song_list" in completion and "$songs_screen__now_playing_bar" in completion
    assert all(label.startswith("$songs_screen__") for label in completion)
