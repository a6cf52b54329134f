"""How good are generated app documents? Sample apps and DroidBot recordings.

**Sample apps** (``samples``): each simulated app is explored through ``--device sim:APP`` with a
fixed step budget (depth-first, seed 0), a document is built from the trace, and it is compared
with the hand-written ``samples/<app>/<app>.yaml``:

* screens found: hand-written screens some recorded hierarchy shows, of all hand-written screens;
* elements covered: hand-written elements that ground (identifiers only) to the same node as an
  element of the generated screen identified on the same hierarchy, of those that ground at all;
* scripts: every ``samples/<app>/*.tap`` rewritten to the generated names (the mapping is written
  by hand in ``bench/data/docgen_names/<app>.json``: a measurement aid, not a feature) and run on
  a fresh simulator with the generated document; the script's own asserts decide.

**DroidBot recordings** (``droidbot``, needs ``../shared/upstream``): every DroidTask app with a
recording (``--recordings`` picks some) gets a document built from it
(``tapir.docgen.build.document_from_recording``; ``docgen_s`` is import and build). Where upstream
has a document (``doc.json``, imported with its defects repaired) the two are compared (screens,
elements, elements covered); for every app, each ground-truth task step whose recorded hierarchy
was kept counts as grounded when some element of the document grounds to the acted-on node (or
the clickable view around it, or a list item holding it): for the generated document and, where
there is one, upstream's. Tasks cross into other apps (Camera into Gallery, Dialer into Contacts,
permission dialogs), which a document built from the recording does not describe:
``task_steps_in_app`` are the steps on the recorded app's own screens. Apps without an upstream
document have ``null`` in the comparison keys.

    python bench/docgen_quality.py [samples|droidbot|all] [--steps 300] [--apps music,notes] [--allow-dangerous]
                                   [--recordings clock,calendar]

Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NAMES = REPO / "bench" / "data" / "docgen_names"
SAMPLE_APPS = ("music", "clock", "notes", "contacts")
PACKAGES = {"music": "org.tapir.music", "clock": "org.tapir.clock", "notes": "org.tapir.notes",
            "contacts": "org.tapir.contacts"}


def rewrite(source: str, names: dict[str, str]) -> str:
    """The script with every ``$name`` the mapping knows replaced by its generated name."""
    return re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: "$" + names.get(m.group(1), m.group(1)), source)


def run_script_on_sim(app: str, source: str, name: str, document: Any, adb_port: int) -> str | None:
    """Run a script on a fresh simulator with ``document``; None when it finished, else the error."""
    from tapir.docgen.symbols import build_symbols
    from tapir.dsl.interpreter import run_script
    from tapir.runtime.connect import Connection

    conn = Connection(device=f"sim:{app}", document=document, source=source, script=name, adb_port=adb_port)
    made: list[Any] = []

    def factory() -> Any:
        from tapir.runtime.connect import connect

        rt = connect(conn)
        made.append(rt)
        return rt

    try:
        result = run_script(source, factory, output=None, symbols=build_symbols(document), filename=name)
    finally:
        for rt in made:
            rt.close()
    return None if result.ok else (result.error.render() if result.error else "failed")


def samples(apps: list[str], steps: int, adb_port: int, work: Path, *, dangerous: bool = False) -> dict[str, Any]:
    from tapir.docgen.build import BuildOptions, DangerPolicy, build_document, read_trace
    from tapir.docgen.loader import load_document, loads_document
    from tapir.runtime.explore import ExploreConfig, explore
    from tapir.runtime.explore.compare import compare_documents

    out: dict[str, Any] = {}
    for app in apps:
        trace_dir = work / f"{app}-trace"
        t0 = time.perf_counter()
        policy = DangerPolicy.none() if dangerous else DangerPolicy.default()
        result = explore(f"sim:{app}", ExploreConfig(PACKAGES[app], max_steps=steps, delay=0.0, policy=policy),
                         trace_dir, adb_port=adb_port)
        explored = time.perf_counter() - t0
        trace = read_trace(trace_dir)
        t0 = time.perf_counter()
        built = build_document([trace], BuildOptions(app_name=app.capitalize()))
        built_s = time.perf_counter() - t0
        (work / f"{app}.yaml").write_text(built.text, encoding="utf-8")
        generated = loads_document(built.text, source=f"{app}.yaml").document
        assert generated is not None
        reference = load_document(REPO / "samples" / app / f"{app}.yaml")
        trees = [trace.tree(s) for s in trace.states if trace.package_of(s) == reference.app.package]
        comparison = compare_documents(generated, reference, trees)
        mapping_file = NAMES / f"{app}.json"
        mapping = json.loads(mapping_file.read_text(encoding="utf-8")) if mapping_file.is_file() else {}
        scripts: dict[str, Any] = {}
        for script in sorted((REPO / "samples" / app).glob("*.tap")):
            source = rewrite(script.read_text(encoding="utf-8"), mapping)
            error = run_script_on_sim(app, source, script.name, generated, adb_port)
            scripts[script.name] = {"ok": error is None, "error": error}
        out[app] = {
            "steps": result.steps, "exhausted": result.exhausted, "explore_s": round(explored, 1),
            "docgen_s": round(built_s, 3),
            "hand_screens": comparison.reference_screens, "screens_found": len(comparison.screens_found),
            "generated_screens": comparison.generated_screens,
            "hand_elements": comparison.reference_elements, "elements_seen": len(comparison.elements_seen),
            "elements_covered": len(comparison.elements_covered),
            "share_covered": round(comparison.share_covered, 3),
            "generated_elements": comparison.generated_elements,
            "screens_not_found": [s.name for s in reference.screens if s.name not in comparison.screens_found],
            "missed": comparison.missed,
            "scripts_ok": sum(1 for s in scripts.values() if s["ok"]), "scripts": len(scripts),
            "script_results": scripts,
        }
    return out


def recorded_apps(upstream: Path) -> list[str]:
    """Every DroidTask app with a DroidBot recording (``states/`` and ``events/``)."""
    apps = upstream / "droidtask" / "apps"
    return sorted(d.name for d in apps.iterdir() if (d / "states").is_dir() and (d / "events").is_dir())


def task_steps(upstream: Path, app: str) -> tuple[list[Any], dict[str, int]]:
    """The ground-truth task steps of ``app`` whose raw DroidBot state was kept (recorded steps),
    and counts: steps without a raw state (or without the acted node in it), steps whose raw state
    renders differently from the trace's HTML (kept: the acted node is the trace's)."""
    from tapir.eval.droidtask import load_tasks
    from tapir.hierarchy import parse_droidbot_state, render_html
    from tapir.runtime.explore.compare import RecordedTaskStep

    app_dir = upstream / "droidtask" / "apps" / app
    steps: list[RecordedTaskStep] = []
    counts = {"without_raw_state": 0, "html_differs": 0}
    if not (upstream / "droidtask" / "tasks.json").is_file():
        return steps, counts
    for _, _, gt in load_tasks(upstream / "droidtask", app):
        for step in gt:
            path = app_dir / "states" / f"state_{step.tag}.json"
            tree = parse_droidbot_state(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None
            if tree is None or tree.get(step.choice) is None:
                counts["without_raw_state"] += 1
                continue
            if step.html and _lines(render_html(tree)) != _lines(step.html):
                counts["html_differs"] += 1
            steps.append(RecordedTaskStep(tree, step.choice, step.label))
    return steps, counts


def _lines(html: str) -> list[str]:
    return [line.strip() for line in html.strip().splitlines()]


def droidbot(upstream: Path, work: Path, apps: list[str] | None = None) -> dict[str, Any]:
    """Every recorded app (or ``apps``): the document built from its recording, compared with
    upstream's document where there is one, and the ground-truth task steps it grounds."""
    from tapir.docgen.build import document_from_recording, import_droidbot, read_trace
    from tapir.docgen.loader import loads_document
    from tapir.eval.droidtask import import_document
    from tapir.runtime.explore.compare import compare_documents, step_coverage

    out: dict[str, Any] = {}
    for app in apps or recorded_apps(upstream):
        app_dir = upstream / "droidtask" / "apps" / app
        t0 = time.perf_counter()
        text, report = document_from_recording(app_dir)
        built_s = time.perf_counter() - t0
        work.mkdir(parents=True, exist_ok=True)
        (work / f"{app}.yaml").write_text(text, encoding="utf-8")
        generated = loads_document(text, source=f"{app}.yaml").document
        assert generated is not None
        package = report.recording.package
        steps, counts = task_steps(upstream, app)
        gen_cov = step_coverage(generated, steps)
        # tasks cross into other apps (Camera into Gallery, Dialer into Contacts, permission dialogs):
        # a document built from the recording describes its own app only
        in_app = [st for st in steps if st.tree.node(st.node).package == package]
        gen_in_app = step_coverage(generated, in_app)
        row: dict[str, Any] = {
            "trace": {"states": report.recording.states, "steps": report.recording.steps},
            "warnings": len(report.warnings),
            "docgen_s": round(built_s, 3),
            "generated": {"screens": report.screens, "elements": report.elements},
            "upstream_document": (app_dir / "doc.json").is_file(),
            "upstream": None, "upstream_screens_found": None, "upstream_elements_seen": None,
            "upstream_elements_covered": None, "share_covered": None, "share_same_control": None,
            "task_steps": len(steps), "task_steps_without_raw_state": counts["without_raw_state"],
            "task_steps_html_differs": counts["html_differs"],
            "task_steps_covered_generated": gen_cov[0], "task_steps_covered_upstream": None,
            "share_steps_generated": round(gen_cov[0] / len(steps), 3) if steps else None,
            "share_steps_upstream": None,
            "task_steps_in_app": len(in_app), "task_steps_in_app_covered_generated": gen_in_app[0],
            "share_steps_in_app_generated": round(gen_in_app[0] / len(in_app), 3) if in_app else None,
            "task_steps_in_app_covered_upstream": None,
        }
        if row["upstream_document"]:
            trace_dir = work / f"{app}-droidbot"
            import_droidbot(app_dir, trace_dir)
            trace = read_trace(trace_dir)
            reference = import_document(app_dir, package)
            trees = [trace.tree(s) for s in trace.states if trace.package_of(s) == package]
            comparison = compare_documents(generated, reference, trees)
            ref_cov = step_coverage(reference, steps)
            row.update({
                "upstream": {"screens": comparison.reference_screens, "elements": comparison.reference_elements},
                "upstream_screens_found": len(comparison.screens_found),
                "upstream_elements_seen": len(comparison.elements_seen),
                "upstream_elements_covered": len(comparison.elements_covered),
                "share_covered": round(comparison.share_covered, 3),
                "share_same_control": round(comparison.share_same_control, 3),
                "task_steps_covered_upstream": ref_cov[0],
                "share_steps_upstream": round(ref_cov[0] / len(steps), 3) if steps else None,
                "task_steps_in_app_covered_upstream": step_coverage(reference, in_app)[0],
            })
        out[app] = row
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=["samples", "droidbot", "all"], default="all")
    parser.add_argument("--steps", type=int, default=300, help="exploration step budget per sample app")
    parser.add_argument("--apps", default=",".join(SAMPLE_APPS), help="sample apps, comma-separated")
    parser.add_argument("--recordings", metavar="APPS",
                        help="DroidTask recordings to measure, comma-separated (default: all recorded apps)")
    parser.add_argument("--upstream",
                        default=os.environ.get("TAPIR_UPSTREAM") or str(REPO.parent / "shared" / "upstream"))
    parser.add_argument("--keep", metavar="DIR", help="keep traces and documents in DIR")
    parser.add_argument("--allow-dangerous", action="store_true",
                        help="explore the sample apps without the danger policy (delete dialogs included)")
    args = parser.parse_args(argv)
    from tapir.sim.launch import free_port, kill_adb_server, start_adb_server

    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray adb server on 5037
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.what in ("samples", "all"):
            port = free_port()
            start_adb_server(port)
            try:
                apps = [a.strip() for a in args.apps.split(",") if a.strip()]
                report["samples"] = samples(apps, args.steps, port, work / "samples", dangerous=args.allow_dangerous)
            finally:
                kill_adb_server(port)
        if args.what in ("droidbot", "all"):
            upstream = Path(args.upstream)
            if (upstream / "droidtask").is_dir():
                chosen = [a.strip() for a in args.recordings.split(",") if a.strip()] if args.recordings else None
                report["droidbot"] = droidbot(upstream, work / "droidbot", chosen)
            else:
                report["droidbot"] = {"skipped": f"no DroidTask data in {upstream}"}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
