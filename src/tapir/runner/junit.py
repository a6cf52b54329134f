"""A test run as JUnit XML, the report every CI server reads.

    Path("junit.xml").write_text(junit_xml(run))

One ``<testsuite>`` per folder of scripts (``samples/music``), one ``<testcase>`` per script:
``classname`` is the folder with dots (``samples.music``), ``name`` the file name, ``file`` the
path. Outcomes:

* failed (the script failed: an assert, an element not found, a budget): ``<failure>``;
* error (it could not run: refused by the check, no device): ``<error>``;
* skipped (``# skip:``, or not reached before Ctrl-C): ``<skipped message="reason"/>``;
* flaky (failed, then passed on a retry): a passing testcase with one ``<flakyFailure>`` per
  failed attempt, and a failed script's earlier attempts are ``<rerunFailure>``s: the elements
  Maven Surefire writes for reruns, which Jenkins and GitLab show; other readers ignore them and
  see the final outcome.

``type`` is the error's category (``AssertionFailed``, ``ElementNotFound``...), ``message`` its
first line and the text the whole rendered error. ``<system-out>`` holds what the script printed
and ``[[ATTACHMENT|path]]`` lines naming a failed script's screenshot, dump and trace and the
files any script's ``screenshot()`` calls saved (GitLab shows the screenshot in the merge
request's test report). Counts on each suite and on ``<testsuites>`` follow the JUnit schema:
``tests`` counts every testcase, ``failures``, ``errors`` and ``skipped`` their outcomes (a flaky
script counts as passed).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import PurePath

from tapir.runner.results import Attempt, ScriptResult, TestRun

__all__ = ["junit_xml"]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _outcome(tag: str, attempt: Attempt) -> ET.Element:
    el = ET.Element(tag, {"type": attempt.category or "error", "message": _first_line(attempt.error or "")})
    return el


def _rerun(tag: str, attempt: Attempt) -> ET.Element:
    """Surefire's ``flakyFailure``/``rerunFailure``: the error text goes in ``<stackTrace>``."""
    el = _outcome(tag, attempt)
    trace = ET.SubElement(el, "stackTrace")
    trace.text = f"attempt {attempt.number} on {attempt.device or 'no device'}:\n{attempt.error or ''}"
    if attempt.printed:
        ET.SubElement(el, "system-out").text = "\n".join(attempt.printed)
    return el


def _case(r: ScriptResult, classname: str) -> ET.Element:
    case = ET.Element("testcase", {"classname": classname, "name": PurePath(r.script).name, "file": r.script,
                                   "time": f"{r.seconds:.3f}"})
    last = r.last
    if r.status == "skipped":
        ET.SubElement(case, "skipped", {"message": r.reason or "skipped"})
    elif r.status in ("failed", "error") and last is not None:
        el = _outcome("failure" if r.status == "failed" else "error", last)
        el.text = last.error
        case.append(el)
        for earlier in r.attempts[:-1]:
            case.append(_rerun("rerunFailure" if earlier.kind == "failure" else "rerunError", earlier))
    elif r.status == "flaky":
        for earlier in r.attempts[:-1]:
            case.append(_rerun("flakyFailure" if earlier.kind == "failure" else "flakyError", earlier))
    out: list[str] = list(last.printed) if last is not None else []
    if r.status in ("failed", "error", "flaky"):
        if len(r.attempts) > 1:
            out.append(f"attempts: {len(r.attempts)} ({', '.join('passed' if a.ok else 'failed' for a in r.attempts)})")
    for a in r.attempts:
        for name in (a.screenshot, a.hierarchy, a.trace, *a.saved):
            path = a.path(name)
            if path is not None:
                out.append(f"[[ATTACHMENT|{path}]]")
    if r.warnings:
        ET.SubElement(case, "system-err").text = r.warnings
    if out:
        ET.SubElement(case, "system-out").text = "\n".join(out)
    return case


def _counts(results: Iterable[ScriptResult]) -> dict[str, str]:
    rs = list(results)
    return {
        "tests": str(len(rs)),
        "failures": str(sum(r.status == "failed" for r in rs)),
        "errors": str(sum(r.status == "error" for r in rs)),
        "skipped": str(sum(r.status == "skipped" for r in rs)),
        "time": f"{sum(r.seconds for r in rs):.3f}",
    }


def junit_xml(run: TestRun, name: str = "tapir") -> str:
    """The run as a JUnit XML document (see the module docstring)."""
    groups: dict[str, list[ScriptResult]] = {}
    for r in run.results:
        groups.setdefault(PurePath(r.script).parent.as_posix(), []).append(r)
    root = ET.Element("testsuites", {"name": name, **_counts(run.results)})
    root.set("time", f"{run.wall_s:.3f}")
    for folder, results in groups.items():
        classname = ".".join(p for p in PurePath(folder).parts if p not in (".", "/")) or name
        suite = ET.SubElement(root, "testsuite", {"name": folder if folder != "." else name, **_counts(results)})
        if run.started:
            suite.set("timestamp", run.started)
        for r in results:
            suite.append(_case(r, classname))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
