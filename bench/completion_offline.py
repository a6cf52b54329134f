"""What completion would make of a report's scripts, with no model: each finished run is completed
(``tapir.codegen.postchecks.completed``, up to ``--steps`` statements) and judged again.

    python bench/completion_offline.py ../shared/upstream/droidtask --scripts-from REPORT.json
    python bench/completion_offline.py samples/suite --scripts-from REPORT.json

Each round runs the scripts through ``tapir.eval.run_suite`` with their traces kept, reads each
finished run's findings as ``tapir eval --model`` does, and runs the completed script again; a
completed script that stops on an error is dropped and the run before it stands, as in the
harness. Prints JSON: passes before and after, the tasks gained and lost, and the steps appended.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

from tapir.codegen.postchecks import completed, post_run_findings
from tapir.core.errors import TapirError
from tapir.eval import EvalConfig, ReportSource, load_suite, run_suite


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--scripts-from", metavar="REPORT.json", required=True, help="the report whose scripts to complete")
    ap.add_argument("--steps", type=int, default=3, help="statements appended to one script at most (3, as tapir eval)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.steps < 0:
        ap.error(f"--steps must be 0 or more, not {args.steps}")
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
    steps: dict[str, list[dict[str, str]]] = {}
    active = {k for k in scripts if k in tasks}
    for step in range(args.steps + 1):
        source = ReportSource({"tasks": [{"id": k, "script": scripts[k]} for k in sorted(active)]}, args.scripts_from)
        part = dataclasses.replace(suite, tasks=tuple(t for t in suite.tasks if t.id in active))
        with tempfile.TemporaryDirectory() as tmp:
            run = run_suite(part, source, EvalConfig(jobs=args.jobs, trace_dir=Path(tmp)))
            again: set[str] = set()
            for r in run.results:
                if step == 0:
                    before[r.id] = r.verdict
                elif r.error is not None or not r.finished:
                    # the appended step broke the run: the one before it stands
                    steps[r.id][-1]["broke"] = "yes"
                    continue
                verdicts[r.id] = r.verdict
                if step == args.steps or not r.finished or not r.trace or not Path(r.trace).is_file():
                    continue
                records = [json.loads(line) for line in Path(r.trace).read_text(encoding="utf-8").splitlines()
                           if line]
                task = tasks[r.id]
                more = completed(scripts[r.id], post_run_findings(suite.apps[task.app].document, scripts[r.id],
                                                                  records, task=task.text))
                if more is not None:
                    scripts[r.id], finding = more
                    steps.setdefault(r.id, []).append({"check": finding.check, "statement": finding.fix or ""})
                    again.add(r.id)
        active = again
        if not active:
            break
    passed = {k for k, v in verdicts.items() if v == "pass"}
    was = {k for k, v in before.items() if v == "pass"}
    json.dump({"suite": args.suite, "scripts_from": args.scripts_from, "tasks": len(before),
               "passed_before": len(was), "passed_after": len(passed),
               "gained": sorted(passed - was), "lost": sorted(was - passed),
               "completed": {k: v for k, v in sorted(steps.items())},
               "wall_s": round(time.monotonic() - started, 1)}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
