"""Shared fixtures. Tests that read third-party data skip when ../shared/upstream is absent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed so that a landing is reproducible; local runs
# explore new examples each time (that is how the `in` evaluation-order bug was found).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

#: The checker's golden scripts have deliberate errors: never pytest items, even under
#: `pytest tests/`, where the Tapir plugin would collect the .tap files of a path given.
collect_ignore_glob = ["golden/*"]

REPO = Path(__file__).resolve().parent.parent
#: ``$TAPIR_UPSTREAM`` points elsewhere (e.g. from a git worktree, whose parent has no shared/).
UPSTREAM = Path(os.environ.get("TAPIR_UPSTREAM") or REPO.parent / "shared" / "upstream")


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The third-party data folder; the test is skipped when a fresh clone does not have it."""
    if not UPSTREAM.is_dir():
        pytest.skip("../shared/upstream is not present")
    return UPSTREAM


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def adb_port() -> Iterator[int]:
    """A private adb server (real adb binary) on a free port, shared by the whole session.

    adbutils is pointed at /bin/false meanwhile, so that it can never start a stray server on
    the default port; the test is skipped when no adb binary is installed."""
    from tapir.sim.errors import SimDeviceError
    from tapir.sim.launch import find_adb, free_port, kill_adb_server, start_adb_server

    try:
        find_adb()
    except SimDeviceError as exc:
        pytest.skip(str(exc))
    saved = os.environ.get("ADBUTILS_ADB_PATH")
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
    port = free_port()
    start_adb_server(port)
    try:
        yield port
    finally:
        kill_adb_server(port)
        if saved is None:
            os.environ.pop("ADBUTILS_ADB_PATH", None)
        else:
            os.environ["ADBUTILS_ADB_PATH"] = saved


@pytest.fixture(scope="session")
def npm_deps() -> Path:
    """editors/vscode with its npm dependencies installed; skips when node is not installed."""
    from vscode_support import install_npm_deps

    return install_npm_deps()
