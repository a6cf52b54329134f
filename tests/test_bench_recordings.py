"""The DroidTask-recording benches still run and print what they promise: ``bench/docgen_quality.py
droidbot`` and ``bench/drift.py``, each run as a user runs it on one or two apps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.upstream  # about 4 s together

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _run(upstream: Path, *args: str) -> dict:
    env = {**os.environ, "TAPIR_UPSTREAM": str(upstream)}
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=240,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _rate(value: float | None) -> None:
    assert value is not None and 0.0 <= value <= 1.0


def test_docgen_quality_on_recordings_with_and_without_an_upstream_document(upstream: Path) -> None:
    report = _run(upstream, str(BENCH / "docgen_quality.py"), "droidbot", "--recordings", "applauncher,messenger",
                  "--upstream", str(upstream))["droidbot"]
    assert set(report) == {"applauncher", "messenger"}
    for app, row in report.items():
        assert row["trace"]["states"] > 50 and row["trace"]["steps"] > 50, app
        assert row["generated"]["screens"] >= 3 and row["generated"]["elements"] >= row["generated"]["screens"]
        assert 10 <= row["task_steps"] and 0 <= row["task_steps_covered_generated"] <= row["task_steps"]
        assert row["task_steps_in_app_covered_generated"] <= row["task_steps_in_app"] <= row["task_steps"]
        _rate(row["share_steps_generated"])
        assert row["share_steps_generated"] >= 0.8, app  # 1.0 and 0.977 when this was written
    with_doc, without = report["applauncher"], report["messenger"]
    assert with_doc["upstream_document"] and not without["upstream_document"]
    assert with_doc["upstream_screens_found"] <= with_doc["upstream"]["screens"]
    seen = with_doc["upstream_elements_seen"]
    assert with_doc["upstream_elements_covered"] <= seen <= with_doc["upstream"]["elements"]
    for key in ("share_covered", "share_same_control", "share_steps_upstream"):
        _rate(with_doc[key])
    assert with_doc["share_covered"] >= 0.3  # 0.473 when this was written
    assert without["upstream"] is None and without["share_covered"] is None
    assert without["task_steps_covered_upstream"] is None


def test_drift_on_one_app_trace_steps_and_recording(upstream: Path) -> None:
    kinds = ("none", "changed_text", "removed_id", "reordered_list")
    result = _run(upstream, str(BENCH / "drift.py"), "--apps", "applauncher", "--no-embedding", "--limit", "30",
                  "--kinds", ",".join(kinds), "--upstream", str(upstream))
    assert result["cases"] == 30
    assert result["sources"]["raw"] > 0 and result["sources"]["recording"] > 0
    assert result["sources"]["uiautomator"] == 0  # --apps leaves the dumps out
    stats = result["recordings"]["applauncher"]
    assert stats["used"] > 0 and stats["used"] + stats["trace_steps"] + stats["repeats"] == stats["view_events"]
    assert set(result["drifts"]) == set(kinds)
    none = result["drifts"]["none"]
    assert none["tapir"]["correct"] == none["applied"] > 0  # undrifted, every lookup is right
    for method in ("first_identifier", "upstream_queue", "tapir"):  # --no-embedding: no ablation
        tally = result["overall_drifted"][method]
        assert tally["correct"] + tally["wrong"] + tally["refused"] == tally["n"] > 0
        _rate(tally["correct_rate"])
        _rate(tally["wrong_rate"])
    app = result["per_app_drifted"]["applauncher"]
    assert app["lookups"] == result["overall_drifted"]["tapir"]["n"] == app["tapir"]["n"]
    assert app["tapir"]["n"] == app["upstream_queue"]["n"]  # the same lookups for both
    assert set(result["per_source_drifted"]) <= {"raw", "html", "recording", "uiautomator"}
    assert result["target"]["tapir_wrong_rate_at_most"] == 0.003 and isinstance(result["target"]["met"], bool)
    drifted = result["overall_drifted"]
    assert drifted["tapir"]["correct_rate"] > drifted["upstream_queue"]["correct_rate"]
