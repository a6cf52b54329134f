"""The evaluation harness: task suites run end to end, task -> script -> execution -> verdict.

    from tapir.eval import EvalConfig, OracleSource, load_suite, report_json, run_suite

    suite = load_suite("samples/suite")                  # or a DroidTask folder with tasks.json
    run = run_suite(suite, OracleSource(), EvalConfig(jobs=2))
    data = report_json(run)                              # success_rate, by_difficulty, by_app, tasks
    print(data["success_rate"], data["by_difficulty"]["hard"]["rrr"])

Modules: ``suite`` (the format and its loader), ``checks`` (success expressions on the app's
state), ``droidtask`` (a DroidTask folder as a replay suite; the upstream metric), ``sources``
(where scripts come from: the oracle, or a model behind ``ScriptSource``), ``runner`` (devices,
sessions, verdicts), ``audit`` (did each tap reach the view meant: wrong and destructive taps on
simulated apps), ``report`` (JSON and Markdown) and ``compare`` (two reports side by side).
The format is described in ``docs/eval.md``; ``tapir eval`` is the command.
"""

from tapir.eval.audit import Audit, Verdict, audit_touches
from tapir.eval.compare import Comparison, compare_reports, load_report
from tapir.eval.report import REPORT_FORMAT, report_json, report_markdown, summarize
from tapir.eval.runner import EvalConfig, EvalRun, TaskResult, run_suite, run_task
from tapir.eval.sources import (
    CallableSource,
    Generation,
    GenerationRequest,
    OracleSource,
    ReportSource,
    ScriptSource,
    Tokens,
)
from tapir.eval.suite import LEVELS, AppSpec, Suite, SuiteError, Task, load_suite

__all__ = [
    "LEVELS",
    "REPORT_FORMAT",
    "AppSpec",
    "Audit",
    "CallableSource",
    "Comparison",
    "EvalConfig",
    "EvalRun",
    "Generation",
    "GenerationRequest",
    "OracleSource",
    "ReportSource",
    "ScriptSource",
    "Suite",
    "SuiteError",
    "Task",
    "TaskResult",
    "Tokens",
    "Verdict",
    "audit_touches",
    "compare_reports",
    "load_report",
    "load_suite",
    "report_json",
    "report_markdown",
    "run_suite",
    "run_task",
    "summarize",
]
