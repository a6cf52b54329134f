"""The Neovim configuration (editors/nvim/tapir.lua) in a real headless Neovim.

The language server here is tests/lsp_stub_server.py (real pygls over stdio), so these tests
check the editor side alone: filetype, editing settings, starting the server in the project's
root, reading back diagnostics and completion, restarting a server that dies and giving up on
one that keeps dying. Skipped when Neovim is not installed (.ci/run installs Debian's).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from nvim_client import nvim_or_skip, run_nvim

STUB = [sys.executable, str(Path(__file__).resolve().parent / "lsp_stub_server.py")]
SCRIPT = """\
# doc: music.yaml
$songs_screen__song_list.match("Lanterns").tap()
if True:
    $songs_screen__nope.tap()
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project with tapir.toml at its root and the script one folder down."""
    nvim_or_skip()
    (tmp_path / "tapir.toml").write_text("", encoding="utf-8")
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "play.tap"
    script.write_text(SCRIPT, encoding="utf-8")
    return script


def test_tap_files_get_the_filetype_and_python_like_editing(project: Path) -> None:
    answer = run_nvim(project, server=["/nonexistent/tapir", "lsp"], probe=(2, 5), timeout_s=1)
    assert answer["filetype"] == "tapir"
    options = answer["options"]
    assert options["commentstring"] == "# %s" and options["shiftwidth"] == 4 and options["expandtab"]
    assert "$" in options["iskeyword"].split(",") and "%" in options["iskeyword"].split(",")
    assert options["syntax"] == "python" and options["indentexpr"]
    assert options["omnifunc"] == "v:lua.vim.lsp.omnifunc"
    assert answer["syntax_group"] == "tapirElement"


def test_a_missing_server_is_reported_once_and_editing_goes_on(project: Path) -> None:
    answer = run_nvim(project, server=["/nonexistent/tapir", "lsp"], timeout_s=2)
    assert answer["filetype"] == "tapir" and answer["clients"] == []
    assert answer["messages"].count("'/nonexistent/tapir' was not found") == 1


def test_the_server_starts_in_the_project_root_and_its_answers_reach_the_editor(project: Path,
                                                                              tmp_path: Path) -> None:
    wrapper = tmp_path / "tapir-stub"  # a one-word command replaces the default's two words
    wrapper.write_text(f'#!/bin/sh\nexec {" ".join(STUB)} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    answer = run_nvim(project, server=[str(wrapper)], completion_at=(3, 6))
    (client,) = answer["clients"]
    assert client["name"] == "tapir" and client["cmd"] == [str(wrapper)]
    assert Path(client["root_dir"]) == project.parent.parent  # where tapir.toml is
    (diagnostic,) = answer["diagnostics"]
    assert diagnostic == {"line": 3, "col": 4, "message": "unknown element $songs_screen__nope", "severity": 1}
    assert answer["completion"] == ["$songs_screen__song_list", "$songs_screen__song_title"]


def test_a_server_that_dies_is_restarted_until_it_dies_too_often(project: Path) -> None:
    answer = run_nvim(project, server=STUB, options={"max_restarts": 2}, crash_command="stub.crash", crashes=3)
    assert answer["restarts"] == [True, True, False]
    assert "restarting it" in answer["messages"]
    assert "not restarting it" in answer["messages"]
