"""Generated documents against the hand-written ones, end to end (issue 12's measurements, in
small): each sample app is explored in-process with the default budget, its document built, and

* it loads, validates and covers every hand-written element that the recorded screens show;
* every sample script, rewritten to the generated names with the hand-written mapping in
  ``bench/data/docgen_names`` (a measurement aid), runs with the generated document;
* ``tapir docgen --update`` keeps names and hand edits when the app changes under it;
* ``tapir docgen`` itself refuses what it should.

``bench/docgen_quality.py`` measures the same through real adb and prints the numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import make_runtime, sim_device

from tapir.core.safety import Safety
from tapir.docgen.build import build_document, merge, read_trace
from tapir.docgen.build.trace import TraceWriter
from tapir.docgen.loader import load_document, loads_document
from tapir.docgen.symbols import build_symbols
from tapir.docgen.writer import to_yaml
from tapir.dsl.interpreter import run_script
from tapir.runtime.explore import ExploreConfig, Explorer
from tapir.runtime.explore.compare import compare_documents
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.sim.apps import get_app

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"music": "org.tapir.music", "notes": "org.tapir.notes", "clock": "org.tapir.clock",
            "contacts": "org.tapir.contacts"}
#: Hand-written screens exploration must not reach: their only way in is a dangerous control, or
#: (the rating prompt) a launch extra that exploration does not send.
BEHIND_DANGER = {"delete_song_dialog", "delete_playlist_dialog", "delete_note_dialog", "delete_contact_dialog",
                 "rate_dialog"}
#: Samples that need what only the hand-written document has: its watcher for the rating prompt, and
#: the finished timer (exploration never waits, so it never sees a timer run out).
HAND_WRITTEN_ONLY = {"rate_prompt.tap", "run_timer.tap"}


def explore(tmp: Path, app: Any, package: str, steps: int = 300) -> Path:
    _, device, _ = sim_device(app, foreground=False)
    out = tmp / "trace"
    writer = TraceWriter.create(out, app=package, source="explore")
    Explorer(device, ExploreConfig(package, max_steps=steps, delay=0, screenshots=False), writer).run()
    return out


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_generated_document_covers_the_hand_written_one_and_runs_its_scripts(name: str, tmp_path: Path) -> None:
    trace = read_trace(explore(tmp_path, get_app(name), PACKAGES[name]))
    result = build_document([trace])
    generated = loads_document(result.text, source=f"{name}.yaml").document
    assert generated is not None
    reference = load_document(REPO / "samples" / name / f"{name}.yaml")
    trees = [trace.tree(s) for s in trace.states if trace.package_of(s) == reference.app.package]
    comparison = compare_documents(generated, reference, trees)
    assert set(comparison.screens_found) | BEHIND_DANGER >= {s.name for s in reference.screens}
    assert comparison.share_covered == 1.0, comparison.missed
    assert len(comparison.elements_seen) >= 0.9 * (comparison.reference_elements - sum(
        len(reference.screen(s).elements) for s in BEHIND_DANGER if reference.screen(s)))

    names = json.loads((REPO / "bench" / "data" / "docgen_names" / f"{name}.json").read_text())
    config = GroundingConfig(use_embedding=False)
    for script in sorted((REPO / "samples" / name).glob("*.tap")):
        if script.name in HAND_WRITTEN_ONLY or script.name.startswith("_"):
            continue  # (a flow, `_login.tap`, runs from the script that calls it)
        source = re.sub(r"\$([a-z_]+)", lambda m: "$" + names.get(m.group(1), m.group(1)), script.read_text())
        # the generated document marks more elements sensitive than the hand-written one (the favourite
        # toggle reads "Remove from favourites" once tapped): the runs allow them, the guards are
        # tested in tests/test_guards_*.py
        rt, _, _ = make_runtime(get_app(name), generated, grounder=Grounder(generated, config=config),
                                safety=Safety.from_options(allow=["sensitive"]))
        run = run_script(source, lambda rt=rt: rt, output=None, symbols=build_symbols(generated),
                         filename=str(script))  # (its flows are found beside it)
        assert run.ok, f"{script.name}: {run.error.render() if run.error else ''}"


def test_regenerating_keeps_names_and_hand_edits_across_an_app_update(tmp_path: Path) -> None:
    first = build_document([read_trace(explore(tmp_path / "v1", get_app("music"), "org.tapir.music"))])
    # a person renames a screen and an element and writes a description
    text = first.text.replace("songs_screen", "library_screen")
    text = text.replace("library_screen__more_options_button", "library_screen__overflow_button")
    text = text.replace("description: Button 'Search'.", "description: Opens the search (hand-written).", 1)
    edited = loads_document(text).document
    assert edited is not None
    # the next version of the app: labels reworded, ids renamed, widgets inserted
    updated = get_app("music")
    updated.set_drift("all", seed=1, rate=0.5)
    second = build_document([read_trace(explore(tmp_path / "v2", updated, "org.tapir.music"))])
    data, report = merge(edited, second)
    merged = loads_document(to_yaml(data)).document
    assert merged is not None
    assert merged.app.start_screen == "library_screen"
    overflow = merged.element("library_screen__overflow_button")
    assert overflow is not None and overflow.leads_to is not None
    search = merged.element("library_screen__search_button")
    assert search is not None and search.description == "Opens the search (hand-written)."
    assert report.kept_elements >= 0.8 * sum(1 for _ in edited.elements)
    assert report.new_elements  # the inserted widgets
    assert not any(s.name.startswith("songs_screen") for s in merged.screens)
    # every generated name that survived is one of the edited document's, or new and unique
    old_names = {e.name for e in edited.elements}
    assert all(e.name in old_names or e.name in report.new_elements for e in merged.elements)


def tapir(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapir.cli", *args], capture_output=True, text=True, timeout=300)


def test_docgen_command(tmp_path: Path) -> None:
    trace = explore(tmp_path, get_app("notes"), "org.tapir.notes")
    out = tmp_path / "notes.yaml"
    r = tapir("docgen", str(trace), "-o", str(out), "--report", str(tmp_path / "report.json"),
              "--compare", str(REPO / "samples" / "notes" / "notes.yaml"))
    assert r.returncode == 0, r.stderr
    assert "screens" in r.stdout and "reference elements seen are covered (100%" in r.stdout
    assert json.loads((tmp_path / "report.json").read_text())["elements"] > 20
    assert tapir("doc", "validate", str(out)).returncode == 0
    assert tapir("compile", str(out), "-o", str(tmp_path / "generated")).returncode == 0
    r = tapir("docgen", str(trace), "-o", str(out))
    assert r.returncode == 2 and "--update" in r.stderr and "--force" in r.stderr
    r = tapir("docgen", str(trace), "-o", str(out), "--update", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["merge"]["kept_elements"] > 20
    r = tapir("docgen", str(trace), "-o", str(tmp_path / "new.yaml"), "--update")
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = tapir("docgen", str(tmp_path), "-o", str(tmp_path / "x.yaml"))
    assert r.returncode == 2 and "not a trace" in r.stderr
    r = tapir("docgen", str(trace), "-o", str(tmp_path / "x.yaml"), "--package", "org.other")
    assert r.returncode == 2 and "no hierarchy of org.other" in r.stderr
