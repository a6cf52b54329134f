"""mypy, with the project's configuration (pyproject.toml) and nothing else: no symlink,
no MYPYPATH, no extra paths. The ``src/`` layout is what makes a plain ``mypy`` see the package
under its own name, whatever the checkout's folder is called."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_every_package_folder_has_an_init() -> None:
    """setuptools finds packages by their ``__init__.py``: a folder without one would ship nothing."""
    for folder in (REPO / "src" / "tapir").rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), f"{folder.relative_to(REPO)} has modules but no __init__.py"


@pytest.mark.slow
def test_mypy_passes_on_the_whole_package(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy_cache")],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
