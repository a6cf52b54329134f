"""What ``tapir test`` prints as it goes: a line per script, a line per step with ``-v``, a
progress bar on a terminal, and a summary table at the end.

    console = make_console(sys.stdout)
    with ConsoleListener(console, verbose=False) as listener:
        run = run_tests(scripts, options, listener=listener)
    print_summary(console, run)

Off a terminal (a CI log, a pipe) there is no bar and no colour codes, and each script's line
starts with its count (``[12/80]``), so a log read later says how far the run got.
"""

from __future__ import annotations

import threading
from typing import IO, Any

from rich.console import Console
from rich.markup import escape

from tapir.core.terminal import terminal_safe
from tapir.runner.results import ScriptResult, TestRun
from tapir.runner.suite import Listener

__all__ = ["ConsoleListener", "make_console", "print_summary", "step_line"]

_STYLE = {"passed": "green", "flaky": "yellow", "failed": "red", "error": "red", "skipped": "dim"}
_LABEL = {"passed": "PASS", "flaky": "FLAKY", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def make_console(stream: IO[str]) -> Console:
    # Off a terminal rich would wrap at 80 columns: CI logs get long lines instead.
    return Console(file=stream, width=None if stream.isatty() else 200, highlight=False)


def step_line(record: dict[str, Any]) -> str:
    """One trace record as a short line: ``L4 tap $songs__play  identifier 0 1.00  songs -> player  60 ms``."""
    event = record.get("event")
    if event == "navigation":
        return f"  -> {record.get('step', '')}  ({record.get('screen_before')} -> {record.get('screen_after')})"
    if event == "scroll":
        return f"  -> scroll {record.get('element', '')} {record.get('direction', '')}"
    if event == "repeat":
        return f"L{record.get('line')} (the read above, {record.get('count')} more times)"
    parts = [f"L{record.get('line')}", str(record.get("call")), str(record.get("element") or "")]
    if record.get("grounded"):
        score = record.get("score")
        parts.append(f" {record['grounded']}" + (f" {score:.2f}" if isinstance(score, int | float) else ""))
    before, after = record.get("screen_before"), record.get("screen_after")
    if after:
        parts.append(f" {before} -> {after}" if before and before != after else f" {after}")
    ms = record.get("ms")
    if isinstance(ms, dict) and isinstance(ms.get("total"), int | float):
        parts.append(f" {ms['total']:.0f} ms")
    if record.get("ok") is False:
        error = record.get("error")
        parts.append("  FAILED: " + (error.get("message", "") if isinstance(error, dict) else str(error)))
    return " ".join(p for p in parts if p)


class ConsoleListener(Listener):
    """Prints a run as it goes (see the module docstring)."""

    def __init__(self, console: Console, *, verbose: bool = False, show_output: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self.show_output = show_output or verbose
        self.total = 0
        self.count = 0
        self._many_slots = False
        self._bar: Any = None
        self._task: Any = None
        self._lock = threading.Lock()

    def __enter__(self) -> ConsoleListener:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def planned(self, total: int, slots: Any) -> None:
        self.total = total
        self._many_slots = len(slots) > 1
        if self.console.is_terminal and total > 1:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("test"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[last]}"), console=self.console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("test", total=total, last="")

    def step(self, script: str, record: dict[str, Any]) -> None:
        if not self.verbose:
            return
        prefix = f"{script}: " if self._many_slots else "    "
        if record.get("event") == "attempt":
            again = f" (attempt {record['number']})" if record.get("number", 1) > 1 else ""
            with self._lock:
                self.console.print(escape(f"RUN   {script}{again} on {record.get('device')}"), style="dim",
                                   soft_wrap=True)
            return
        with self._lock:
            self.console.print(escape(terminal_safe(prefix + step_line(record))), style="dim", soft_wrap=True)

    def finished(self, result: ScriptResult) -> None:
        self.count += 1
        out = self.console
        head = "" if out.is_terminal else f"[{self.count}/{self.total}] "
        label = _LABEL[result.status]
        facts = []
        if result.seconds:
            facts.append(f"{result.seconds:.2f} s")
        if result.last is not None and result.last.device and self._many_slots:
            facts.append(result.last.device)
        if len(result.attempts) > 1:
            facts.append(f"{len(result.attempts)} attempts")
        line = (f"{head}[{_STYLE[result.status]}]{label:<5}[/] {escape(result.script)}"
                + (f" [dim]({escape(', '.join(facts))})[/]" if facts else ""))
        if result.status == "skipped":
            line += f" [dim]{escape(result.reason or '')}[/]"
        with self._lock:
            out.print(line, soft_wrap=True)
            if result.warnings:
                out.print(escape(_indent(result.warnings)), style="yellow", soft_wrap=True)
            if self.show_output and result.last is not None:
                for printed in result.last.printed:
                    out.print(escape(f"    | {terminal_safe(printed)}"), soft_wrap=True)
            failed = [a for a in result.attempts if not a.ok]
            for a in failed if result.status == "flaky" else failed[-1:]:
                if result.status == "flaky":
                    out.print(f"    [yellow]attempt {a.number} failed:[/]", soft_wrap=True)
                out.print(escape(_indent(a.error or "")), soft_wrap=True)
            if result.artifacts is not None:
                out.print(f"    [dim]artifacts: {escape(str(result.artifacts))}[/]", soft_wrap=True)
            if self._bar is not None:
                self._bar.update(self._task, advance=1, last=result.script)


def _indent(text: str) -> str:
    return "    " + text.replace("\n", "\n    ")


def print_summary(console: Console, run: TestRun, *, verbose: bool = False) -> None:
    """A table of the scripts that did not simply pass (every script with ``verbose``), then the
    totals line."""
    from rich.table import Table

    rows = [r for r in run.results if verbose or r.status != "passed"]
    if rows:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for name, justify in (("script", "left"), ("result", "left"), ("attempts", "right"), ("steps", "right"),
                              ("time", "right"), ("why", "left")):
            table.add_column(name, justify=justify, no_wrap=name != "why")  # type: ignore[arg-type]
        for r in rows:
            last = r.last
            why = ""
            if r.status == "skipped":
                why = r.reason or ""
            elif r.error:
                why = next((line.strip() for line in r.error.splitlines() if line.strip()), "")
            table.add_row(escape(r.script), f"[{_STYLE[r.status]}]{r.status}[/]", str(len(r.attempts)),
                          str(len(last.steps)) if last else "", f"{r.seconds:.2f} s" if r.attempts else "",
                          escape(why))
        console.print()
        console.print(table)
    console.print()
    style = "green" if run.ok else "red"
    extra = ""
    if run.other_shards:
        extra += f" ({run.other_shards} scripts are other shards')"
    if run.interrupted:
        extra += " (interrupted)"
    console.print(f"[bold {style}]{escape(run.summary())}[/]{escape(extra)}")
    if run.artifacts is not None:
        failed = any(not r.ok and r.artifacts is not None for r in run.results)
        console.print(f"{'failure artifacts' if failed else 'artifacts'}: {escape(str(run.artifacts))}")
