"""mypy, with the project's configuration (pyproject.toml), passes on the whole package: every
package pyproject.toml installs (the tests and benchmarks, which are not installed, aside). This
takes in what earlier checks named one by one (dsl/, service/, lsp/, the REPL, the test runner)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def installed_packages() -> list[str]:
    """The packages pyproject.toml installs (``[tool.setuptools] packages``)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages: list[str] = config["tool"]["setuptools"]["packages"]
    return packages


def test_the_package_list_covers_every_package_folder() -> None:
    """A folder with an ``__init__.py`` that pyproject.toml forgot would escape the check."""
    listed = set(installed_packages())
    for init in REPO.rglob("__init__.py"):
        folder = init.parent.relative_to(REPO)
        if folder.parts and folder.parts[0] in ("tests", "bench", "editors", "node_modules"):
            continue
        name = ".".join(("tapir", *folder.parts))
        assert name in listed, f"{name} has an __init__.py but is not in pyproject.toml's packages"


@pytest.mark.slow
def test_mypy_passes_on_the_whole_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    # mypy cannot follow the editable install's import hook: it is shown the sources as `tapir`
    # through MYPYPATH (as tests/test_docgen_pages.py does), with the project's own config.
    (tmp_path / "tapir").symlink_to(REPO, target_is_directory=True)
    monkeypatch.setenv("MYPYPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    targets: list[str] = []
    listed = installed_packages()
    for package in listed:
        # `-p tapir` would take in the tests and benchmarks, which live under the same folder;
        # `-p` checks subpackages, so only the packages right under `tapir` are named
        if package == "tapir":
            targets += ["-m", package]
        elif package.count(".") == 1:
            targets += ["-p", package]
        else:
            assert package.rsplit(".", 1)[0] in listed, f"{package}'s parent package is not installed"
    out, err, status = mypy_api.run([
        "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"), *targets,
    ])
    assert status == 0, out + err
    assert "Success: no issues found" in out

