"""Shared fixtures. Tests that read third-party data skip when ../shared/upstream is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = REPO.parent / "shared" / "upstream"


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The third-party data folder; the test is skipped when a fresh clone does not have it."""
    if not UPSTREAM.is_dir():
        pytest.skip("../shared/upstream is not present")
    return UPSTREAM


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
