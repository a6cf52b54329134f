"""Tapir's cascade against upstream AutoDroid-V2's XPath queue under app drift (a subset of
``bench/drift.py``: the clock and app-launcher steps recorded with raw DroidBot states)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.upstream

BENCH = Path(__file__).resolve().parent.parent / "bench" / "drift.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tapir_bench_drift", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def result(upstream: Path) -> dict:
    drift = _bench()
    cases = [c for c in drift.load_cases(upstream, {"clock", "applauncher"}, dumps=False) if c.source == "raw"]
    assert len(cases) >= 40, "the clock and applauncher traces have about 48 steps with raw states"
    kinds = ("none", "changed_text", "removed_id", "inserted_sibling", "reordered_list", "paraphrased_label",
             "combined")
    return drift.run(cases, kinds, seed=7, embedding=False)


def test_without_drift_everything_is_found(result: dict) -> None:
    none = result["drifts"]["none"]
    assert none["tapir"]["correct"] == none["upstream_queue"]["correct"] == none["applied"]


def test_tapir_grounds_more_and_taps_wrong_less_than_the_upstream_queue(result: dict) -> None:
    tapir, upstream = result["overall_drifted"]["tapir"], result["overall_drifted"]["upstream_queue"]
    assert tapir["n"] == upstream["n"] > 200
    assert tapir["correct"] > upstream["correct"]
    assert tapir["wrong"] <= upstream["wrong"]


def test_a_removed_resource_id_is_survived(result: dict) -> None:
    removed = result["drifts"]["removed_id"]
    assert removed["upstream_queue"]["correct"] == 0  # every XPath of the queue names the id
    assert removed["tapir"]["correct"] >= 0.8 * removed["applied"] and removed["tapir"]["wrong"] == 0


def test_the_first_identifier_alone_is_brittle(result: dict) -> None:
    first, queue = result["overall_drifted"]["first_identifier"], result["overall_drifted"]["upstream_queue"]
    assert first["correct"] < queue["correct"]
