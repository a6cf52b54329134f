"""The code base stays ruff-clean (the rules are in pyproject.toml), wherever it is checked out."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> str:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    return ruff


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", str(root)],
                          capture_output=True, text=True)


def test_ruff_is_clean() -> None:
    done = _check(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("folder", ["tapir", "checkout"])
def test_ruff_does_not_depend_on_the_folder_name(tmp_path: Path, folder: str) -> None:
    """ruff's isort takes the package name from the folder name unless the config fixes it, so a
    clone into ``tapir/`` used to fail on import order that passed everywhere else."""
    copy = tmp_path / folder
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".*_cache"))
    done = _check(copy)
    assert done.returncode == 0, done.stdout + done.stderr
