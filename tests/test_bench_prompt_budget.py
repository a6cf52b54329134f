"""bench/prompt_budget.py: a focused prompt's per-task part follows ``--focus-tokens`` (the
measure behind docs/eval.md's focus-budget figures), counted with SmolLM2's vocabulary alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("prompt_budget", REPO / "bench" / "prompt_budget.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(300)
def test_the_focus_budget_bounds_the_per_task_part() -> None:
    from tapir.codegen.models import find_model

    if find_model("smollm2-135m") is None:
        pytest.skip("smollm2-135m is not installed (tapir model install smollm2-135m)")
    bench = _bench()
    common = dict(example_files=[], style="focused", ctx=8192, apps=["music"], examples=False, kept_bytes=0)
    small = bench.measure(str(REPO / "samples" / "suite"), "smollm2-135m", focus_tokens=150, **common)
    large = bench.measure(str(REPO / "samples" / "suite"), "smollm2-135m", focus_tokens=1200, **common)
    assert small["focus_tokens"] == 150 and large["focus_tokens"] == 1200
    assert small["overall"]["median_per_task_tokens"] < large["overall"]["median_per_task_tokens"]
    assert small["overall"]["median_prompt_tokens"] < large["overall"]["median_prompt_tokens"]
