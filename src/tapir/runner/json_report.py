"""A test run as JSON (``tapir test --json FILE``), for dashboards and scripts.

    data = report_json(run)
    data["totals"]        # {'scripts': 80, 'passed': 78, 'failed': 1, 'error': 0, 'flaky': 1, 'skipped': 0, ...}
    data["scripts"][0]    # {'script': ..., 'status': ..., 'attempts': [{..., 'steps': [...]}]}

The format (``format: tapir-test/1``) is the ``as_dict`` of ``TestRun``'s parts
(``tapir.runner.results``): per script its status, tags, warnings, skip reason, artifacts folder
and attempts; per attempt its device, error (rendered, with its category, JUnit kind and line),
printed lines, counts, kept files and steps; per step the trace's statement, call, element, how
it was grounded, screens, duration and screenshot (a path when the attempt's files were kept).
"""

from __future__ import annotations

import platform
from typing import Any

from tapir import __version__
from tapir.runner.results import TestRun

__all__ = ["FORMAT", "report_json"]

FORMAT = "tapir-test/1"


def report_json(run: TestRun) -> dict[str, Any]:
    counts = run.counts()
    return {
        "format": FORMAT,
        "tapir": __version__,
        "python": platform.python_version(),
        "started": run.started,
        "wall_s": run.wall_s,
        "devices": list(run.devices),
        "ok": run.ok,
        "interrupted": run.interrupted,
        "totals": {"scripts": len(run.results), **counts, "deselected": run.deselected,
                   "other_shards": run.other_shards},
        "artifacts": str(run.artifacts) if run.artifacts else None,
        "scripts": [r.as_dict() for r in run.results],
    }
