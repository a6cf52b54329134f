"""Running the VS Code extension's node side from pytest (tests/test_editors_*.py).

``install_npm_deps()`` (behind the ``npm_deps`` fixture of conftest.py) skips when node is not
installed, installs the locked npm dependencies when ``editors/vscode/node_modules`` is missing or
older than the lock file (.ci/run does that first), and returns the extension folder. ``probe(command, request)`` runs
``editors/vscode/test/probe.js`` and returns its JSON answer.

    def test_x(npm_deps: Path) -> None:
        lines = probe("tokenize", {"texts": [{"name": "a", "text": "$a__b.tap()"}]})["a"]
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
VSCODE = REPO / "editors" / "vscode"


def npm_install_needed(folder: Path = VSCODE) -> bool:
    """True when node_modules is missing or older than package-lock.json (npm writes its own
    node_modules/.package-lock.json on every install)."""
    marker = folder / "node_modules" / ".package-lock.json"
    return not marker.is_file() or marker.stat().st_mtime < (folder / "package-lock.json").stat().st_mtime


def install_npm_deps() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if npm_install_needed():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("node is installed but npm is not: install npm, then run `npm ci` in editors/vscode")
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=VSCODE, capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            pytest.fail(f"`npm ci` in editors/vscode failed:\n{done.stdout}\n{done.stderr}")
    return VSCODE


def run_node(args: list[str], stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``node ARGS`` in the extension folder; fails the test with node's output when it fails."""
    done = subprocess.run(["node", *args], cwd=VSCODE, input=stdin, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"node {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def probe(command: str, request: dict[str, Any]) -> Any:
    return json.loads(run_node(["test/probe.js", command], stdin=json.dumps(request)).stdout)
