"""Headless Neovim as a language client, for tests of the editor configuration and the server.

``run_nvim`` starts ``nvim --headless`` with ``editors/nvim/tapir.lua`` as its only configuration
(in a private XDG home, so a user's own configuration plays no part), opens a file, waits for the
language server, and returns what the editor holds as a dict: the filetype and buffer options,
the attached clients, the diagnostics, the completion labels asked for, whether the server came
back after each crash, and ``:messages``. ``tests/nvim_driver.lua`` does the work inside Neovim.

    answer = run_nvim(script, server=["tapir", "lsp"], completion_at=(3, 20))
    assert answer["diagnostics"][0]["message"] == ...
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
NVIM_CONFIG = REPO / "editors" / "nvim" / "tapir.lua"
DRIVER = Path(__file__).resolve().parent / "nvim_driver.lua"


def nvim_or_skip() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (Debian: apt-get install neovim)")
    return nvim


def run_nvim(
    file: Path,
    *,
    server: list[str] | None = None,
    options: dict[str, Any] | None = None,
    completion_at: tuple[int, int] | None = None,
    crash_command: str | None = None,
    crashes: int = 0,
    probe: tuple[int, int] | None = None,
    timeout_s: float = 20,
) -> dict[str, Any]:
    """What headless Neovim shows for ``file``. ``server`` is the server command (vim.g.tapir.cmd),
    ``options`` other vim.g.tapir options; ``completion_at`` is a 0-based (line, character);
    ``probe`` a 1-based (line, column) whose syntax group is reported."""
    nvim = nvim_or_skip()
    with tempfile.TemporaryDirectory(prefix="tapir-nvim-") as home:
        out = Path(home) / "answer.json"
        settings = dict(options or {})
        if server is not None:
            settings["cmd"] = server
        request = {
            "file": str(file), "out": str(out), "timeout_ms": int(timeout_s * 1000),
            "completion": {"line": completion_at[0], "character": completion_at[1]} if completion_at else None,
            "crash_command": crash_command, "crashes": crashes, "probe": list(probe) if probe else None,
        }
        request = {k: v for k, v in request.items() if v is not None}  # JSON null is not nil in Lua
        env = {**os.environ, "TAPIR_NVIM_REQUEST": json.dumps(request), "TAPIR_NVIM_OPTIONS": json.dumps(settings)}
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            env[var] = str(Path(home) / var.lower())
        args = [nvim, "--headless", "-n", "-i", "NONE",
                "--cmd", "lua vim.g.tapir = vim.fn.json_decode(os.getenv('TAPIR_NVIM_OPTIONS'))",
                "-u", str(NVIM_CONFIG), "-c", f"luafile {DRIVER}"]
        done = subprocess.run(args, env=env, cwd=file.parent, capture_output=True, text=True,
                              timeout=timeout_s * (3 + crashes) + 10, stdin=subprocess.DEVNULL)
        if not out.is_file():
            pytest.fail(f"Neovim wrote no answer (exit {done.returncode}):\n"
                        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        answer: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if "error" in answer:
        pytest.fail(f"the Neovim driver failed: {answer['error']}")
    return answer
