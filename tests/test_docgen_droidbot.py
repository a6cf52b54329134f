"""DroidBot recordings into traces, and documents built from them, against upstream's documents
and DroidTask ground truth (skipped when ../shared/upstream is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapir.docgen.build import build_document, import_droidbot, read_trace
from tapir.docgen.loader import loads_document
from tapir.eval.droidtask import import_document, load_tasks
from tapir.hierarchy import parse_droidbot_state
from tapir.runtime.explore.compare import RecordedTaskStep, compare_documents, step_coverage

pytestmark = pytest.mark.upstream


@pytest.fixture(scope="module", params=["applauncher", "clock"])
def built(request: pytest.FixtureRequest, upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    app = request.param
    app_dir = upstream / "droidtask" / "apps" / app
    summary = import_droidbot(app_dir, tmp_path_factory.mktemp(app) / "trace")
    trace = read_trace(summary.output)
    return app, app_dir, summary, trace, build_document([trace])


def test_recordings_become_traces(built: tuple) -> None:
    app, app_dir, summary, trace, _ = built
    # every recorded state is kept, every event that acts on the app is a step
    assert summary.states == len(list((app_dir / "states").glob("state_*.json")))
    assert summary.package == f"com.simplemobiletools.{app}"
    assert len(trace.steps) == summary.steps and summary.skipped["kill_app events (nothing to act on)"] > 0
    for step in trace.steps:
        if step.action.target is not None:
            node = trace.tree(step.before).get(step.action.target.node)
            assert node is not None and node.bounds == step.action.target.bounds
    assert trace.meta["source"] == "droidbot"


def test_documents_load_and_resemble_upstream(built: tuple) -> None:
    app, app_dir, summary, trace, result = built
    doc = loads_document(result.text).document
    assert doc is not None
    reference = import_document(app_dir, summary.package)
    trees = [trace.tree(s) for s in trace.states if trace.package_of(s) == summary.package]
    c = compare_documents(doc, reference, trees)
    assert len(c.screens_found) >= 0.7 * c.reference_screens
    assert c.share_same_control >= 0.6
    # the other apps the launcher opened are left out, and said so
    if app == "applauncher":
        assert result.report.dropped["hierarchies: of another app or the launcher"] > 50


def test_every_ground_truth_step_is_grounded_by_a_generated_element(built: tuple, upstream: Path) -> None:
    app, app_dir, _, _, result = built
    doc = loads_document(result.text).document
    assert doc is not None
    steps = []
    for _, _, gt in load_tasks(Path(upstream) / "droidtask", app):
        for s in gt:
            path = app_dir / "states" / f"state_{s.tag}.json"
            if path.is_file():
                tree = parse_droidbot_state(json.loads(path.read_text()))
                if tree.get(s.choice) is not None:
                    steps.append(RecordedTaskStep(tree, s.choice, s.label))
    covered, total = step_coverage(doc, steps)
    assert total >= 15 and covered == total
