"""How often each post-run check fires on finished runs that passed (false alarms) and that failed.

    python bench/postcheck_alarms.py ../shared/upstream/droidtask            # the reference scripts
    python bench/postcheck_alarms.py samples/suite
    python bench/postcheck_alarms.py ../shared/upstream/droidtask --scripts-from REPORT.json  # a model's

Each task runs through ``tapir.eval.run_suite`` with its trace kept; ``post_run_findings`` then
reads each finished run's trace with the task's text, as ``tapir eval --model`` does after a run.
Prints JSON: per check, how many passing and failing runs it fired on, and which.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tapir.codegen.postchecks import POSTCHECKS, post_run_findings
from tapir.core.errors import TapirError
from tapir.eval import EvalConfig, OracleSource, ReportSource, load_suite, run_suite


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--scripts-from", metavar="REPORT.json", help="a report's scripts instead of the references")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        suite = load_suite(args.suite)
        source = ReportSource.load(args.scripts_from) if args.scripts_from else OracleSource()
    except TapirError as exc:  # a suite or report that is not there: said, not a traceback
        print(f"postcheck_alarms: {exc.render()}", file=sys.stderr)
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        run = run_suite(suite, source, EvalConfig(jobs=args.jobs, trace_dir=Path(tmp)))
        fired: dict[str, Counter[str]] = {c: Counter() for c in POSTCHECKS}
        runs: Counter[str] = Counter()
        which: dict[str, list[str]] = {c: [] for c in POSTCHECKS}
        for r in run.results:
            if not r.finished or not r.script or not r.trace or not Path(r.trace).is_file():
                continue
            outcome = "passing" if r.verdict == "pass" else "failing"
            runs[outcome] += 1
            records = [json.loads(line) for line in Path(r.trace).read_text(encoding="utf-8").splitlines() if line]
            task = next(t for t in suite.tasks if t.id == r.id)
            for check in {f.check for f in post_run_findings(suite.apps[task.app].document, r.script, records,
                                                               task=task.text)}:
                fired[check][outcome] += 1
                which[check].append(f"{r.id} ({outcome})")
    json.dump({"suite": args.suite, "source": source.name, "finished_runs": dict(runs),
               "fired": {c: dict(v) for c, v in fired.items()},
               "tasks": {c: v for c, v in which.items() if v}, "wall_s": round(time.monotonic() - started, 1)},
              sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
