"""Running test scripts at scale: ``tapir test``, its reports and the pytest plugin.

    from tapir.runner import RunOptions, collect, run_tests, junit_xml, report_html

    run = run_tests(collect(["samples/"]), RunOptions(devices=("sim",), jobs=2, retries=1))
    Path("report.html").write_text(report_html(run))   # screenshots=True, thumbnails=True: every screen
    run.summary()                        # '80 passed in 20.0 s'
    Path("junit.xml").write_text(junit_xml(run))

``collect`` (paths, globs, ``# tags:`` and ``# skip:`` headers, tag selection, shards), ``pool``
(device slots: N simulators and/or phones, one adb server; shared with ``tapir eval``),
``execute`` (one attempt: the script, its trace, screenshots, failure artifacts), ``suite``
(checking, retries, artifacts folders), ``results`` (statuses, attempts, steps), the report
writers ``junit``, ``json_report`` and ``html_report``, ``console`` (what the command prints)
and ``pytest_plugin`` (``.tap`` files as pytest items; device fixtures). docs/testing.md is the
user's guide.
"""

from tapir.runner.collect import Header, Selection, collect, read_header, select
from tapir.runner.html_report import report_html
from tapir.runner.json_report import report_json
from tapir.runner.junit import junit_xml
from tapir.runner.pool import DevicePool, PoolRun, Slot, plan_slots
from tapir.runner.results import STATUSES, Attempt, ScriptResult, Step, TestRun
from tapir.runner.suite import Listener, RunOptions, run_tests

__all__ = [
    "STATUSES", "Attempt", "DevicePool", "Header", "Listener", "PoolRun", "RunOptions", "ScriptResult", "Selection",
    "Slot", "Step", "TestRun", "collect", "junit_xml", "plan_slots", "read_header", "report_html", "report_json",
    "run_tests", "select",
]
