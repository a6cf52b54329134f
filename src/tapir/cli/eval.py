"""``tapir eval``: run a task suite end to end and report success rate, RRR, tokens and times."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tapir.cli.common import (
    Subparsers,
    adb_server,
    add_adb_flags,
    check_positive,
    device_on_server,
    project_config,
    signals_ignored,
    stop_signals,
    stopped_name,
    stopped_status,
)
from tapir.cli.gen import PROMPT_STYLES
from tapir.core.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from tapir.eval.runner import TaskResult


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "eval",
        help="run a task suite (task -> script -> execution -> verdict) and report success rate, RRR, tokens",
        description=(
            "Run every task of SUITE on a fresh device and judge it by the suite's success checks.\n"
            "SUITE is a folder with suite.yaml (see docs/eval.md), e.g. samples/suite, or a DroidTask\n"
            "folder with tasks.json, whose apps with a recording run as a replay suite.\n\n"
            "Scripts come from --oracle (the suite's reference scripts: separates runtime failures from\n"
            "generation failures), --model, or --scripts-from (the scripts of an earlier report, run\n"
            "again without the model). A table of the tasks and the success rate per difficulty level\n"
            "and per app are printed; --json/--markdown write reports. Exit status 1 when the\n"
            "success rate is below --fail-under (default: 1.0 with --oracle, else 0). Ctrl-C or SIGTERM\n"
            "stops the run: the reports hold the tasks that ran, exit status 130 (143 for SIGTERM).\n\n"
            "  tapir eval samples/suite --oracle -j 2 --json oracle.json\n"
            "  tapir eval --compare oracle.json model.json\n"
            "  tapir eval samples/suite --scripts-from model.json --json again.json  # same scripts, today's Tapir"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("suite", nargs="?", metavar="SUITE", help="suite folder or file (suite.yaml, tasks.json)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--oracle", action="store_true", help="run the suite's reference scripts")
    source.add_argument("--model", metavar="SPEC", help="generate each script with the code generator (tapir gen)")
    source.add_argument("--scripts-from", metavar="REPORT.json",
                        help="run again the scripts an earlier report holds (each task's last script), without the "
                             "model: re-judges a model's answers on the Tapir of today; only the report's tasks run")
    p.add_argument("--device", action="append", metavar="sim|SERIAL",
                   help="where tasks run: sim (a fresh simulator per task; the default), an adb serial or "
                        "HOST:PORT/SERIAL; repeat to spread tasks over several devices (and adb servers)")
    add_adb_flags(p)
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="simulators running at once (default: 1)")
    p.add_argument("--task", action="append", default=[], metavar="PATTERN",
                   help="only tasks whose id matches (shell pattern, e.g. 'music/*'); repeatable")
    p.add_argument("--app", action="append", default=[], metavar="APP", help="only the tasks of APP; repeatable")
    p.add_argument("--level", action="append", default=[], metavar="LEVEL",
                   help="only tasks of this difficulty (easy, medium, hard); repeatable")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON (per task, per level, per app)")
    p.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    p.add_argument("--trace-dir", metavar="DIR", help="keep each task's trace as DIR/<app>__<task>.jsonl")
    p.add_argument("--seed", type=int, default=0, help="seed for sampling models and for --drift (default: 0)")
    p.add_argument("--repairs", type=int, default=0, metavar="N",
                   help="after a run that stopped on an error, ask the model for a repair, up to N times")
    p.add_argument("--drift", metavar="KIND",
                   help="run on a 'next version' of the sample apps: text, ids, insert, reorder or all")
    p.add_argument("--max-actions", type=int, metavar="N", help="UI action budget per script (default: 50)")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-clock budget per script in seconds (default: 60)")
    p.add_argument("--in-process", action="store_true",
                   help="run the setup and scripts in this process, without the child process and its OS limits "
                        "that tapir run has (for debugging: a script's long C-level operation then runs to its end)")
    p.add_argument("--allow", action="append", default=[], metavar="WHAT",
                   help="allow every task's script what the guards refuse (docs/safety.md): 'sensitive', a word "
                        "such as 'delete', an element; tasks add their own `allow:`; repeatable")
    p.add_argument("--fail-under", type=float, metavar="RATE",
                   help="exit status 1 when the success rate (0 to 1) is below RATE")
    p.add_argument("--ctx", type=int, metavar="N",
                   help="with --model: the model's context size in tokens, to which prompts are fitted (a local "
                        "model: 6144; a server's URL: asked of the server when not given)")
    p.add_argument("--prompt-style", default="auto", choices=PROMPT_STYLES,
                   help="with --model: auto (the default: the largest form that fits --ctx), described, names "
                        "(the paper's compressed form) or focused (the screens relevant to the task)")
    p.add_argument("--threads", type=int, metavar="N", help="with --model: CPU threads for the local model")
    p.add_argument("--examples-file", action="append", default=[], metavar="FILE.jsonl",
                   help="with --model: more examples to retrieve from, e.g. `tapir synth` output (pairs that do not "
                        "check against a task's document are left out; the suite's own tasks and near-copies of "
                        "them always are); repeatable")
    p.add_argument("--no-examples", action="store_true",
                   help="with --model: no in-context examples (neither beside the documents nor --examples-file)")
    p.add_argument("--no-postchecks", action="store_true",
                   help="with --model: do not send a run that finished without doing what its plan names back "
                        "for repair (post-run checks; they need --repairs)")
    p.add_argument("--no-completion", action="store_true",
                   help="with --model: do not append the one step a post-run check names (a dialog's OK, a "
                        "screen's Save) to a run that finished one step short; the model is asked instead")
    p.add_argument("--no-correction", action="store_true",
                   help="with --model: do not set right the line a run stopped on when the document says how (a "
                        ".match() on a list that lacks the item, rewritten on the list the document gives it to; a "
                        "permission prompt in the way, answered; the option the task names, passed by, picked "
                        "before the line); the model is asked instead")
    p.add_argument("--no-loop-stop", action="store_true",
                   help="with --model: let an answer that repeats itself run on to the token limit")
    p.add_argument("--resamples", type=int, metavar="N",
                   help="with --model: ask a repair that repeats the failed script word for word again, sampled, "
                        "up to N times (default 2; 0: keep the repeated answer)")
    p.add_argument("--no-drafts", action="store_true",
                   help="with a local --model: decode a token at a time, without drafts copied from the prompt "
                        "(the answers are the model's either way, but not bit for bit: a batch is computed "
                        "with other kernels; for comparing with reports made before drafts)")
    p.add_argument("--retrieval", default="minilm", choices=("minilm", "tf-idf"),
                   help="with --model: how examples are retrieved (minilm: sentence embeddings, when installed)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary, not a row per task")
    p.add_argument("--merge", nargs="+", metavar="PART.json",
                   help="merge the reports of parts of one run (tasks run in several sittings, e.g. with --app or "
                        "--task) into one: with --json/--markdown it writes the merged report; the figures are "
                        "computed again over every task")
    p.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                   help="print what changed per task between two reports (exit status 1 when a task regressed)")
    p.set_defaults(handler=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.merge:
        if args.suite or args.compare:
            raise UsageError("--merge takes the reports of a run's parts, not a suite or --compare")
        return _merge(args)
    if args.compare:
        if args.suite:
            raise UsageError("--compare takes two reports, not a suite")
        return _compare(args.compare[0], args.compare[1])
    if not args.suite:
        raise UsageError("give a suite (e.g. samples/suite) or --compare A.json B.json")
    if not args.oracle and not args.model and not args.scripts_from:
        raise UsageError("choose where scripts come from: --oracle (the reference scripts), --model SPEC or "
                         "--scripts-from REPORT.json")
    check_positive(max_actions=args.max_actions, timeout=args.timeout, jobs=args.jobs, ctx=args.ctx,
                   threads=args.threads)
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        raise UsageError("--fail-under is a success rate between 0 and 1")
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from tapir.core.safety import Safety
    from tapir.dsl.budget import Budgets
    from tapir.eval import EvalConfig, OracleSource, load_suite, report_json, report_markdown, run_suite
    from tapir.eval.runner import check_config
    from tapir.eval.sources import ReportSource, ScriptSource, model_source

    for flag, value in (("--json", args.json), ("--markdown", args.markdown)):
        if value and (Path(value).is_dir() or not Path(value).resolve().parent.is_dir()):
            raise UsageError(f"{flag}: cannot write {value} (not a file in an existing folder)")
    suite = load_suite(args.suite).select(ids=args.task, apps=args.app, levels=args.level)
    earlier = ReportSource.load(args.scripts_from) if args.scripts_from else None
    if earlier is not None:  # the report's tasks only (ids, not patterns: a task id is its own pattern)
        if not set(earlier.scripts) & {t.id for t in suite.tasks}:
            raise UsageError(f"--scripts-from: {args.scripts_from} holds no script of a selected task of the suite")
        suite = suite.select(ids=sorted(earlier.scripts))
    adb_host, adb_port = adb_server(args, project_config(args.suite))
    devices = tuple(device_on_server(d, adb_host, adb_port) or d for d in args.device or ["sim"])
    config = EvalConfig(
        devices=devices, adb_port=adb_port, jobs=args.jobs, seed=args.seed, repairs=args.repairs, drift=args.drift,
        budgets=Budgets().replace(max_actions=args.max_actions, timeout_s=args.timeout),
        trace_dir=Path(args.trace_dir) if args.trace_dir else None,
        allow=tuple(Safety.from_options(allow=args.allow).allowed),  # a malformed token: a usage error now
        isolation="inline" if args.in_process else "process",
    )
    check_config(suite, config)
    source: ScriptSource = OracleSource() if args.oracle else earlier if earlier is not None else model_source(
        args.model, seed=args.seed, ctx=args.ctx, style=args.prompt_style, threads=args.threads,
        example_files=args.examples_file, examples=not args.no_examples, postchecks=not args.no_postchecks,
        loop_stop=not args.no_loop_stop, retrieval=args.retrieval, resamples=args.resamples,
        drafts=not args.no_drafts, completion=not args.no_completion,
        correction=not args.no_correction)
    err = _console(sys.stderr)
    for note in suite.notes:
        err.print(f"note: {note}", highlight=False, markup=False)
    try:
        with stop_signals() as stopped_by, _EvalProgress(err, len(suite.tasks)) as progress:
            run = run_suite(suite, source, config, on_result=progress.done)
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            close()  # a model's memory and threads
    with signals_ignored():  # a stopped run's reports are written whole
        data = report_json(run)
        _print_report(data, quiet=args.quiet)
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if args.markdown:
            Path(args.markdown).write_text(report_markdown(data), encoding="utf-8")
    if run.not_run:
        signame = stopped_name(stopped_by)
        print(f"interrupted ({signame}): {len(data['tasks'])} of {len(suite.tasks)} tasks ran; the reports hold "
              "those", file=sys.stderr)
        return stopped_status(stopped_by)
    internal = [t for t in data["tasks"] if t.get("category") == "InternalError"]
    if internal:
        print(f"tapir: internal error in {len(internal)} task(s), e.g. {internal[0]['id']}:\n{internal[0]['error']}",
              file=sys.stderr)
        return 70
    threshold = args.fail_under if args.fail_under is not None else (1.0 if args.oracle else 0.0)
    return 0 if data["success_rate"] >= threshold else 1


def _merge(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from tapir.eval.compare import load_report
    from tapir.eval.report import merge_reports, report_markdown

    try:
        data = merge_reports([load_report(path) for path in args.merge], names=args.merge)
    except ValueError as exc:
        raise UsageError(f"--merge: {exc}") from None
    _print_report(data, quiet=args.quiet)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report_markdown(data), encoding="utf-8")
    return 0


def _compare(a: str, b: str) -> int:
    from tapir.eval.compare import compare_reports, load_report

    diff = compare_reports(load_report(a), load_report(b))
    print(diff.render())
    return 1 if diff.regressions else 0


# ---------------------------------------------------------------------------------------------
# Presentation


def _console(stream: Any) -> Console:
    from rich.console import Console

    # Off a terminal (CI logs, pipes) rich would wrap tables at 80 columns.
    return Console(file=stream, width=None if stream.isatty() else 160, highlight=False)


_STYLE = {"pass": "green", "fail": "red", "error": "red", "setup_error": "magenta", "no_script": "yellow"}


class _EvalProgress:
    """A progress bar on a terminal; one line per finished task otherwise (CI logs)."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.count = 0
        self._bar: Any = None

    def __enter__(self) -> _EvalProgress:
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[last]}"), console=self.console, transient=True)
            self._bar.start()
            self._id = self._bar.add_task("eval", total=self.total, last="")
        return self

    def done(self, r: TaskResult) -> None:
        from rich.markup import escape

        from tapir.eval.report import failure_reason

        self.count += 1
        # (an error quotes paths like "[back()]", which rich would take for markup and drop)
        why = escape(failure_reason(r.as_dict()))
        line = f"[{_STYLE.get(r.verdict, '')}]{r.verdict.upper():<5}[/] {r.id} ({r.wall_s:.2f} s)"
        if self._bar is not None:
            self._bar.update(self._id, advance=1, last=r.id)
            if why:
                self._bar.console.print(f"{line}  {why}", markup=True)
        else:
            self.console.print(f"[{self.count}/{self.total}] {line}" + (f"  {why}" if why else ""), markup=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def _print_report(data: dict[str, Any], *, quiet: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    from tapir.eval.report import (
        failure_reason,
        levers_text,
        percent,
        ratio,
        repairs_text,
        run_line,
        seconds,
        summary_rows,
        tokens_text,
        without_repair,
        wrong_text,
    )

    out = _console(sys.stdout)
    if not quiet:
        table = Table(title=None, box=None, pad_edge=False, header_style="bold")
        for name, justify in (("task", "left"), ("level", "left"), ("verdict", "left"), ("repairs", "right"),
                              ("RRR", "right"),
                              ("actions", "right"), ("wrong", "right"), ("tokens c/c/g", "right"),
                              ("latency", "right"), ("wall", "right"), ("why", "left")):
            table.add_column(name, justify=justify, no_wrap=name != "why")  # type: ignore[arg-type]
        for t in data["tasks"]:
            table.add_row(t["id"], t["difficulty"], f"[{_STYLE.get(t['verdict'], '')}]{t['verdict']}[/]",
                          repairs_text(t), ratio(t.get("rrr")), str(t["actions"]), wrong_text(t),
                          tokens_text(t.get("tokens")),
                          seconds(t.get("model_latency_s")), f"{t['wall_s']:.2f} s", escape(failure_reason(t)))
        out.print(table)
        out.print()
    groups = Table(box=None, pad_edge=False, header_style="bold")
    for name in ("group", "tasks", "passed", "success", "no repair", "RRR", "wrong taps", "tokens c/c/g", "latency",
                 "task time"):
        groups.add_column(name, justify="left" if name == "group" else "right", no_wrap=True)
    for name, s in summary_rows(data):
        groups.add_row(name, str(s["total"]), str(s["passed"]), percent(s["success_rate"]), without_repair(s),
                       ratio(s["rrr"]),
                       wrong_text(s), tokens_text(s["tokens"]), seconds(s["model_latency_s"]), f"{s['wall_s']:.1f} s")
    out.print(groups)
    out.print()
    out.print(run_line(data), markup=False)
    first = (f" · without repair {percent(data['success_rate_without_repair'])} "
             f"({data['passed_first_attempt']}/{data['total']})" if data["settings"].get("repairs") else "")
    out.print(f"success rate {percent(data['success_rate'])} ({data['passed']}/{data['total']}){first}"
              f" · RRR {ratio(data['rrr'])} · wall time {data['wall_s']:.1f} s", markup=False)
    levers = levers_text(data)
    if levers:
        out.print(levers, markup=False)
    if data.get("audited_taps"):
        out.print(f"wrong taps {data['wrong_taps']} of {data['audited_taps']} audited, "
                  f"{data['destructive_taps']} destructive", markup=False)
        for t in data["tasks"]:
            for w in t.get("wrong_taps", ()):
                out.print(f"  wrong tap in {t['id']}: {w['action']}: touched {w['touched']} ({w['why']})"
                          + (" [destructive]" if w.get("destructive") else ""), markup=False)
