"""Reports of a run: the JSON file, the Markdown file, and the figures both are made of.

    data = report_json(run)             # a dict: json.dump(data, f)
    data["success_rate"], data["by_difficulty"]["hard"]["success_rate"], data["tasks"][0]["verdict"]
    text = report_markdown(data)        # from the dict, so a saved report can be rendered again

The JSON (format ``tapir-eval/1``) holds the suite (name, path, digest), the source and its
settings, the run's settings (devices, jobs, seed, budgets, drift, repairs), the environment, the
overall figures, the same per difficulty level (``by_difficulty``) and per app (``by_app``), and
``tasks``: one object per task with its verdict and figures (``tapir.eval.runner.TaskResult``).
With ``--repairs N`` a task's ``first_attempt_ok`` says whether its first script passed and
``repairs_used`` how many repaired scripts ran, so one run gives both success rates.

Figures of a group of tasks: ``success_rate`` (passed / tasks, 0 to 1, repairs included),
``success_rate_without_repair`` (``passed_first_attempt`` / tasks: the first script alone),
``repaired`` (tasks passed after a repair) and ``repairs_used``, ``rrr`` (mean reversed
redundancy ratio over the passed tasks that have ground-truth steps), ``tokens`` (totals; null
when the source reports none, as the oracle), ``model_latency_s`` (mean per task; null likewise)
``wall_s`` (sum of the tasks' wall times; tasks overlap when several devices run at once,
so the run's own ``wall_s`` is given at the top level), and the wrong-target audit's
``audited_taps``, ``wrong_taps`` and ``destructive_taps`` (``tapir.eval.audit``: taps that
reached another view than the one meant, on simulated apps).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tapir.eval.runner import VERDICTS, EvalRun
from tapir.eval.suite import LEVELS

REPORT_FORMAT = "tapir-eval/1"


def summarize(tasks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of a group of task objects (as in the report's ``tasks``)."""
    items = list(tasks)
    passed = [t for t in items if t["verdict"] == "pass"]
    # reports written before first_attempt_ok existed: a pass with one attempt was a first-attempt pass
    first = [t for t in items if t.get("first_attempt_ok", t["verdict"] == "pass" and t.get("attempts", 1) == 1)]
    rrrs = [t["rrr"] for t in passed if t.get("rrr") is not None]
    with_tokens = [t["tokens"] for t in items if t.get("tokens")]
    latencies = [t["model_latency_s"] for t in items if t.get("model_latency_s") is not None]
    tokens = None
    if with_tokens:
        tokens = {k: sum(int(t[k]) for t in with_tokens) for k in ("cached", "computed", "generated")}
    return {
        "total": len(items),
        "passed": len(passed),
        "success_rate": round(len(passed) / len(items), 4) if items else 0.0,
        "passed_first_attempt": len(first),
        "success_rate_without_repair": round(len(first) / len(items), 4) if items else 0.0,
        "repaired": sum(1 for t in items if t["verdict"] == "pass" and t.get("attempts", 1) > 1),
        "repairs_used": sum(int(t.get("attempts", 1)) - 1 for t in items),
        "finished": sum(1 for t in items if t["finished"]),
        "verdicts": {v: n for v in VERDICTS if (n := sum(1 for t in items if t["verdict"] == v))},
        "rrr": round(sum(rrrs) / len(rrrs), 4) if rrrs else None,
        "actions": sum(int(t["actions"]) for t in items),
        "audited_taps": sum(int(t.get("audited_taps", 0)) for t in items),
        "wrong_taps": sum(len(t.get("wrong_taps", ())) for t in items),
        "destructive_taps": sum(1 for t in items for w in t.get("wrong_taps", ()) if w.get("destructive")),
        "tokens": tokens,
        "tokens_per_task": {k: round(v / len(with_tokens), 1) for k, v in tokens.items()} if tokens else None,
        "model_latency_s": round(sum(latencies) / len(latencies), 4) if latencies else None,
        "wall_s": round(sum(float(t["wall_s"]) for t in items), 3),
        **lever_figures(items),
    }


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    v = sorted(values)
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def lever_figures(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the code generator's levers did over a group of tasks (``TaskResult.events``) and the
    prompt figures they are judged by: ``loops_stopped`` (tasks with an answer stopped for
    repeating itself), ``postchecks`` (per post-run check: tasks it ``caught``, of those ``fixed``
    (passed in the end) and ``caught_passing`` (the run it sent back had passed: a false alarm)),
    ``median_prompt_tokens`` (per model call: a task's prompt tokens over its attempts),
    ``cached_share`` (cached / all prompt tokens), ``median_task_s`` (a task's wall time) and
    ``resampled`` (tasks where a repair that repeated the failed script was asked again, and of
    those ``fixed``: passed in the end) and ``completions`` (per post-run check: tasks whose script
    got the step its finding named appended (``tasks``), of those ``fixed``, and ``broke``: tasks
    where that step stopped the run), and ``corrections`` alike (per correction: tasks whose
    script had the line its run stopped on set right, ``tapir.codegen.corrections``)."""
    checks: dict[str, dict[str, int]] = {}
    for t in items:
        posts = [e for e in t.get("events", ()) if e.startswith("postcheck:")]
        fired = {e.split(":")[1] for e in posts}
        passing = {e.split(":")[1] for e in posts if e.endswith(":passing")}
        for check in sorted(fired):
            c = checks.setdefault(check, {"caught": 0, "fixed": 0, "caught_passing": 0})
            c["caught"] += 1
            c["fixed"] += t["verdict"] == "pass"
            c["caught_passing"] += check in passing
    per_call = [(t["tokens"]["cached"] + t["tokens"]["computed"]) / max(1, int(t.get("attempts", 1)))
                for t in items if t.get("tokens")]
    cached = sum(t["tokens"]["cached"] for t in items if t.get("tokens"))
    prompt = sum(t["tokens"]["cached"] + t["tokens"]["computed"] for t in items if t.get("tokens"))
    median_tokens = _median(per_call)
    median_s = _median([float(t["wall_s"]) for t in items])
    again = [t for t in items if any(e.startswith("resampled:") for e in t.get("events", ()))]
    return {
        "loops_stopped": sum(1 for t in items if "loop" in t.get("events", ())),
        "resampled": {"tasks": len(again), "fixed": sum(t["verdict"] == "pass" for t in again)},
        "postchecks": checks,
        "completions": _model_free(items, "completed:", "completion-broke:"),
        "corrections": _model_free(items, "corrected:", "correction-broke:"),
        "median_prompt_tokens": round(median_tokens, 1) if median_tokens is not None else None,
        "cached_share": round(cached / prompt, 4) if prompt else None,
        "median_task_s": round(median_s, 3) if median_s is not None else None,
    }


def _model_free(items: Sequence[Mapping[str, Any]], done: str, broke: str) -> dict[str, dict[str, int]]:
    """Per check, the tasks whose script a model-free fix changed (events ``done<check>``), of
    those ``fixed`` (passed in the end), and ``broke`` (events ``broke<check>``: the fix was dropped)."""
    found: dict[str, dict[str, int]] = {}
    for t in items:
        events = t.get("events", ())
        for check in sorted({e[len(done):] for e in events if e.startswith(done)}):
            c = found.setdefault(check, {"tasks": 0, "fixed": 0, "broke": 0})
            c["tasks"] += 1
            c["fixed"] += t["verdict"] == "pass"
        for check in sorted({e[len(broke):] for e in events if e.startswith(broke)}):
            found.setdefault(check, {"tasks": 0, "fixed": 0, "broke": 0})["broke"] += 1
    return found


def levers_text(figures: Mapping[str, Any]) -> str:
    """One line on the levers and prompt figures of a group ("" when there is nothing to say)."""
    parts = []
    if figures.get("median_prompt_tokens") is not None:
        share = figures.get("cached_share")
        parts.append(f"median prompt {figures['median_prompt_tokens']:.0f} tokens"
                     + (f", {share * 100:.1f}% cached" if share is not None else ""))
    if figures.get("median_task_s") is not None and figures.get("tokens"):
        parts.append(f"median {figures['median_task_s']:.1f} s/task")
    if figures.get("loops_stopped"):
        parts.append(f"loops stopped in {figures['loops_stopped']} task(s)")
    again = figures.get("resampled") or {}
    if again.get("tasks"):
        parts.append(f"repeated repairs asked again in {again['tasks']} task(s), {again['fixed']} then passed")
    for check, c in (figures.get("corrections") or {}).items():
        parts.append(f"corrected ({check}): {c['tasks']} task(s), {c['fixed']} then passed"
                     + (f", {c['broke']} broke" if c.get("broke") else ""))
    for check, c in (figures.get("completions") or {}).items():
        parts.append(f"completed after {check}: {c['tasks']} task(s), {c['fixed']} then passed"
                     + (f", {c['broke']} broke" if c.get("broke") else ""))
    for check, c in (figures.get("postchecks") or {}).items():
        parts.append(f"post-run check {check}: caught {c['caught']}, fixed {c['fixed']}"
                     + (f" ({c['caught_passing']} had passed)" if c.get("caught_passing") else ""))
    return " · ".join(parts)


def report_json(run: EvalRun) -> dict[str, Any]:
    tasks = [r.as_dict() for r in run.results]
    levels = [lv for lv in LEVELS if any(t["difficulty"] == lv for t in tasks)]
    apps = list(dict.fromkeys(t["app"] for t in tasks))
    overall = summarize(tasks)
    return {
        "format": REPORT_FORMAT,
        "suite": {"name": run.suite.name, "path": run.suite.path, "kind": run.suite.kind,
                  "digest": run.suite.digest, "notes": list(run.suite.notes)},
        "source": {"name": run.source_name, "settings": run.source_settings},
        "settings": run.config.as_dict(),
        "environment": run.environment(),
        "started": run.started,
        "interrupted": bool(run.not_run),
        "not_run": list(run.not_run),
        **overall,
        "wall_s": run.wall_s,
        "task_wall_s": overall["wall_s"],
        "by_difficulty": {lv: summarize(t for t in tasks if t["difficulty"] == lv) for lv in levels},
        "by_app": {app: summarize(t for t in tasks if t["app"] == app) for app in apps},
        "tasks": tasks,
    }


def merge_reports(reports: Sequence[Mapping[str, Any]], *, names: Sequence[str] = ()) -> dict[str, Any]:
    """One report from the reports of parts of a run (``tapir eval --task``/``--app`` in several
    sittings): the tasks of all, the figures computed again over them. The parts must be of the
    same suite (digest) with the same source settings and run settings but for what selects the
    tasks; a task in two parts is a ``ValueError``, as are parts that do not agree. ``names``
    (file names) make the messages say which part."""
    if not reports:
        raise ValueError("no reports to merge")
    label = list(names) + [f"report {i + 1}" for i in range(len(names), len(reports))]
    first = reports[0]
    for key, what in (("format", "format"), ("suite", "suite (name, path, digest)"), ("source", "source")):
        for other, name in zip(reports[1:], label[1:], strict=False):
            if _comparable(other.get(key)) != _comparable(first.get(key)):
                raise ValueError(f"{name} is not a part of the same run as {label[0]}: its {what} differs")
    seen: dict[str, str] = {}
    tasks: list[dict[str, Any]] = []
    for report, name in zip(reports, label, strict=False):
        for n, task in enumerate(report.get("tasks", ()), 1):
            missing = [k for k in _TASK_KEYS if not isinstance(task, Mapping) or k not in task]
            if missing:
                raise ValueError(f"{name}: task {n} is not a task of a report (no {', '.join(missing)})")
            if task["id"] in seen:
                raise ValueError(f"task {task['id']} is in {seen[task['id']]} and in {name}")
            seen[task["id"]] = name
            tasks.append(dict(task))
    levels = [lv for lv in LEVELS if any(t["difficulty"] == lv for t in tasks)]
    apps = list(dict.fromkeys(t["app"] for t in tasks))
    overall = summarize(tasks)
    return {
        **{k: first[k] for k in ("format", "suite", "source", "settings", "environment", "started") if k in first},
        "merged_from": [{"part": name, "started": r.get("started"), "tasks": len(r.get("tasks", ())),
                         "wall_s": r.get("wall_s")} for r, name in zip(reports, label, strict=False)],
        "interrupted": any(r.get("interrupted") for r in reports),
        "not_run": [i for r in reports for i in r.get("not_run", ()) if i not in seen],
        **overall,
        "wall_s": round(sum(float(r.get("wall_s") or 0) for r in reports), 3),
        "task_wall_s": overall["wall_s"],
        "by_difficulty": {lv: summarize(t for t in tasks if t["difficulty"] == lv) for lv in levels},
        "by_app": {app: summarize(t for t in tasks if t["app"] == app) for app in apps},
        "tasks": tasks,
    }


#: What every task of a report has, and merging reads.
_TASK_KEYS = ("id", "app", "difficulty", "verdict", "finished", "actions", "wall_s")


def _comparable(value: Any) -> Any:
    """A report section without what differs between the parts of one run (which tasks ran)."""
    if isinstance(value, Mapping):
        return {k: _comparable(v) for k, v in value.items() if k not in ("notes",)}
    return value


# ---------------------------------------------------------------------------------------------
# Text forms shared by the console and Markdown


def percent(rate: float | None) -> str:
    return "–" if rate is None else f"{rate * 100:.1f}%"


def ratio(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def tokens_text(tokens: Mapping[str, Any] | None) -> str:
    if not tokens:
        return "–"
    return f"{tokens['cached']}/{tokens['computed']}/{tokens['generated']}"


def seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def failure_reason(task: Mapping[str, Any]) -> str:
    """One line on why a task did not pass ("" when it did)."""
    if task["verdict"] == "pass":
        if not task.get("finished", True) and task.get("error"):
            return "passed, but the script then stopped: " + task["error"].strip().splitlines()[0]
        return ""
    if task["verdict"] == "error" and task.get("error"):
        return task["error"].strip().splitlines()[0]
    if task.get("failed_checks"):
        return "check: " + task["failed_checks"][0]
    if task.get("missing_actions"):
        return "missing: " + ", ".join(task["missing_actions"])
    error = (task.get("error") or "").strip().splitlines()
    return error[0] if error else task["verdict"]


def without_repair(figures: Mapping[str, Any]) -> str:
    """A group's success rate counting only first scripts, with the count: ``50.0% (8)``."""
    rate = figures.get("success_rate_without_repair")
    return "–" if rate is None else f"{percent(rate)} ({figures.get('passed_first_attempt', 0)})"


def repairs_text(task: Mapping[str, Any]) -> str:
    """A task's repairs: ``0``; ``2`` when two repaired scripts ran."""
    return str(task.get("repairs_used", int(task.get("attempts", 1)) - 1))


def wrong_text(figures: Mapping[str, Any]) -> str:
    """Wrong taps of a task or group: ``2 (1 destructive)``; ``–`` when nothing was audited."""
    wrong = figures.get("wrong_taps", ())
    n = wrong if isinstance(wrong, int) else len(wrong)
    destructive = figures.get("destructive_taps")
    if destructive is None and not isinstance(wrong, int):
        destructive = sum(1 for w in wrong if w.get("destructive"))
    if not n and not figures.get("audited_taps"):
        return "–"
    return f"{n} ({destructive} destructive)" if destructive else str(n)


def run_line(data: Mapping[str, Any]) -> str:
    """Who ran what, how: one line for the heads of the console output and the Markdown."""
    settings = data.get("settings", {})
    devices = ", ".join(settings.get("devices", [])) or "sim"
    jobs = settings.get("jobs", 1)
    extra = []
    if settings.get("drift"):
        extra.append(f"drift {settings['drift']}")
    if settings.get("repairs"):
        extra.append(f"{settings['repairs']} repair round(s)")
    tail = (", " + ", ".join(extra)) if extra else ""
    return (f"{data['suite']['name']} ({data['suite']['kind']}, digest {data['suite']['digest']}) · source "
            f"{data['source']['name']} · devices {devices} × {jobs} · seed {settings.get('seed', 0)}{tail}")


def summary_rows(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    # the groups' wall time is the sum of their tasks' (the run's own elapsed time is data["wall_s"])
    rows: list[tuple[str, Mapping[str, Any]]] = [("all", {**data, "wall_s": data.get("task_wall_s", data["wall_s"])})]
    rows += [(level, s) for level, s in data.get("by_difficulty", {}).items()]
    rows += [(f"app {app}", s) for app, s in data.get("by_app", {}).items()]
    return rows


def report_markdown(data: Mapping[str, Any]) -> str:
    lines = [f"# Tapir eval: {data['suite']['name']}", "", run_line(data), "",
             f"Started {data.get('started', '?')}; wall time {data['wall_s']:.1f} s "
             f"(tasks {data.get('task_wall_s', data['wall_s']):.1f} s).", ""]
    for note in data["suite"].get("notes", []):
        lines.append(f"> {note}")
    if data["suite"].get("notes"):
        lines.append("")
    lines += ["| group | tasks | passed | success | without repair | RRR | wrong taps "
              "| tokens cached/computed/generated | latency | task time |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in summary_rows(data):
        lines.append(f"| {name} | {s['total']} | {s['passed']} | {percent(s['success_rate'])} "
                     f"| {without_repair(s)} | {ratio(s['rrr'])} "
                     f"| {wrong_text(s)} | {tokens_text(s['tokens'])} | {seconds(s['model_latency_s'])} "
                     f"| {s['wall_s']:.1f} s |")
    lines += ["", "## Tasks", "",
              "| task | level | verdict | repairs | RRR | actions | wrong taps | tokens | latency | wall | why |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for t in data["tasks"]:
        why = failure_reason(t).replace("|", "\\|")
        lines.append(f"| {t['id']} | {t['difficulty']} | {t['verdict']} | {repairs_text(t)} | {ratio(t.get('rrr'))} "
                     f"| {t['actions']} "
                     f"| {wrong_text(t)} | {tokens_text(t.get('tokens'))} | {seconds(t.get('model_latency_s'))} "
                     f"| {t['wall_s']:.2f} s | {why} |")
    wrong = [(t["id"], w) for t in data["tasks"] for w in t.get("wrong_taps", ())]
    if wrong:
        lines += ["", "## Wrong taps", "", "| task | action | touched | why |", "|---|---|---|---|"]
        for task_id, w in wrong:
            cells = [str(w.get(k, "")).replace("|", "\\|") for k in ("action", "touched", "why")]
            lines.append(f"| {task_id} | {cells[0]} | {cells[1]}{' (destructive)' if w.get('destructive') else ''} "
                         f"| {cells[2]} |")
    return "\n".join(lines) + "\n"


__all__ = ["REPORT_FORMAT", "failure_reason", "merge_reports", "percent", "ratio", "repairs_text", "report_json",
           "report_markdown", "run_line", "seconds", "summarize", "summary_rows", "tokens_text", "without_repair",
           "wrong_text"]
