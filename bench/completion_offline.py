"""What the model-free fixes would make of a report's scripts: each run that stopped on a line the
document can set right is corrected (``tapir.codegen.corrections``, up to ``--corrections`` lines),
each finished run is completed (``tapir.codegen.postchecks.completed``, up to ``--steps``
statements), and judged again.

    python bench/completion_offline.py ../shared/upstream/droidtask --scripts-from REPORT.json
    python bench/completion_offline.py samples/suite --scripts-from REPORT.json

Each round runs the scripts through ``tapir.eval.run_suite`` with their traces kept, reads each
finished run's findings as ``tapir eval --model`` does, and runs the completed script again; a
completed or corrected script that stops on an error on the fixed line or before is dropped and
the run before it stands, as in the harness (a completion appended at the end: on any error).
Prints JSON: passes before and after, the tasks gained and lost, and each task's steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tapir.codegen.corrections import corrected
from tapir.codegen.postchecks import completed, post_run_findings
from tapir.codegen.source import repair_note
from tapir.core.errors import TapirError
from tapir.eval import EvalConfig, ReportSource, load_suite, run_suite


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--scripts-from", metavar="REPORT.json", required=True, help="the report whose scripts to complete")
    ap.add_argument("--steps", type=int, default=3, help="statements appended to one script at most (3, as tapir eval)")
    ap.add_argument("--corrections", type=int, default=2,
                    help="lines of one script set right at most (2, as tapir eval; 0: completion only)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.steps < 0 or args.corrections < 0:
        ap.error("--steps and --corrections must be 0 or more")
    try:
        suite = load_suite(args.suite)
        report = ReportSource.load(args.scripts_from)
    except TapirError as exc:  # a suite or report that is not there: said, not a traceback
        print(f"completion_offline: {exc.render()}", file=sys.stderr)
        return 2
    started = time.monotonic()
    tasks = {t.id: t for t in suite.tasks}
    scripts = dict(report.scripts)
    verdicts: dict[str, str] = {}
    before: dict[str, str] = {}
    steps: dict[str, list[dict[str, Any]]] = {}
    #: what the script of a task run again was given: ("complete", None) or ("correct", line)
    given: dict[str, tuple[str, int | None]] = {}
    kept: dict[str, str] = {}  # the script before the last step, should that step be dropped
    active = {k for k in scripts if k in tasks}
    for step in range(args.steps + args.corrections + 1):
        source = ReportSource({"tasks": [{"id": k, "script": scripts[k]} for k in sorted(active)]}, args.scripts_from)
        part = dataclasses.replace(suite, tasks=tuple(t for t in suite.tasks if t.id in active))
        with tempfile.TemporaryDirectory() as tmp:
            run = run_suite(part, source, EvalConfig(jobs=args.jobs, trace_dir=Path(tmp)))
            again: set[str] = set()
            for r in run.results:
                if step == 0:
                    before[r.id] = r.verdict
                else:
                    kind, line = given[r.id]
                    stopped = _stopped_line(r.error) if r.error is not None else None
                    # a fix the run stopped on or before is dropped (a completion's in the script's
                    # middle, ``Finding.ends``, and a correction's: one the run got past stands)
                    if (kind == "complete" and (r.error is None and not r.finished or r.error is not None and (
                            stopped is None or line is None or stopped <= line))) or (
                            kind == "correct" and r.error is not None and (stopped is None or line is None
                                                                           or stopped <= line)):
                        # the step broke the run (or it stopped on the corrected line again): dropped
                        steps[r.id][-1]["broke"] = "yes"
                        scripts[r.id] = kept[r.id]
                        continue
                verdicts[r.id] = r.verdict
                task = tasks[r.id]
                doc = suite.apps[task.app].document
                kept[r.id] = scripts[r.id]
                if r.error is not None:
                    if counts_of(steps, r.id, "correct") >= args.corrections:
                        continue
                    note = repair_note(scripts[r.id], r.error)
                    records = [json.loads(line) for line in Path(r.trace).read_text(encoding="utf-8").splitlines()
                               if line] if r.trace and Path(r.trace).is_file() else []
                    fix = corrected(doc, scripts[r.id], note.line, note.message, task.text, records)
                    if fix is not None:
                        scripts[r.id] = fix.script
                        given[r.id] = ("correct", fix.line)
                        steps.setdefault(r.id, []).append({"kind": "correct", "check": fix.check,
                                                           "statement": fix.statement})
                        again.add(r.id)
                    continue
                if (counts_of(steps, r.id, "complete") >= args.steps or not r.finished or not r.trace
                        or not Path(r.trace).is_file()):
                    continue
                records = [json.loads(line) for line in Path(r.trace).read_text(encoding="utf-8").splitlines()
                           if line]
                more = completed(scripts[r.id], post_run_findings(doc, scripts[r.id], records, task=task.text))
                if more is not None:
                    scripts[r.id], finding = more
                    given[r.id] = ("complete", finding.ends)
                    steps.setdefault(r.id, []).append({"kind": "complete", "check": finding.check,
                                                       "statement": finding.fix or ""})
                    again.add(r.id)
        active = again
        if not active:
            break
    passed = {k for k, v in verdicts.items() if v == "pass"}
    was = {k for k, v in before.items() if v == "pass"}
    json.dump({"suite": args.suite, "scripts_from": args.scripts_from, "tasks": len(before),
               "passed_before": len(was), "passed_after": len(passed),
               "gained": sorted(passed - was), "lost": sorted(was - passed),
               "steps": {k: v for k, v in sorted(steps.items())},
               "wall_s": round(time.monotonic() - started, 1)}, sys.stdout, indent=2)
    print()
    return 0


def counts_of(steps: dict[str, list[dict[str, Any]]], task: str, kind: str) -> int:
    """Steps of ``kind`` a task's script was given that were kept."""
    return sum(1 for s in steps.get(task, ()) if s["kind"] == kind and "broke" not in s)


def _stopped_line(error: str) -> int | None:
    return repair_note("", error).line


if __name__ == "__main__":
    raise SystemExit(main())
