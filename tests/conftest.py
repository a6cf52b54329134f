"""Shared fixtures. Tests that read third-party data skip when ../shared/upstream is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed so that a landing is reproducible; local runs
# explore new examples each time (that is how the `in` evaluation-order bug was found).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

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
