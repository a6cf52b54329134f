"""A test run as one self-contained HTML file (``tapir test --html FILE``).

    Path("report.html").write_text(report_html(run), encoding="utf-8")

Everything is inside the file (CSS, a little JavaScript, screenshots as data URIs), so it can be
attached to a CI job or mailed and opened anywhere, offline. It shows:

* the totals, a bar of the outcomes, buttons that filter by outcome and a search box;
* per script (failed ones open): its outcome, tags, time, device and, for each attempt, every
  step of its trace (the statement, the call, the element, how it was grounded and with what
  score, the screens before and after, the duration, the screenshot after it), with the
  navigation steps and list scrolls the runtime took on its own beneath the call they served;
* for a failed attempt: the error as the command line shows it, the failing line in its context,
  the screenshot when it failed, the last hierarchy dump the runtime read, and where its
  artifacts were saved; for a flaky script, the failed attempts before the one that passed;
* beside each ``screenshot("name")`` step, the file it saved (linked, and shown small).

Screenshots come as thumbnails the runner made (``Step.thumbnail``); each distinct image is
embedded once, as a CSS class that every place showing it uses. The page is complete without
JavaScript (the script only adds filters, search and a lightbox), which is also what a DOM dump
of it shows.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import time
from importlib import resources
from pathlib import Path

from tapir import __version__
from tapir.runner.images import image_mime
from tapir.runner.results import STATUSES, Attempt, ScriptResult, Step, TestRun

__all__ = ["report_html"]

#: Lines of the hierarchy shown for a failed attempt (the whole dump is in its artifacts).
MAX_HIERARCHY_LINES = 2000


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _asset(name: str) -> str:
    return (resources.files("tapir.runner") / "assets" / name).read_text(encoding="utf-8")


class _Images:
    """Each distinct image once, as a CSS class (``.i3 { background-image: url(data:...) }``)."""

    def __init__(self) -> None:
        self._classes: dict[str, str] = {}
        self._rules: list[str] = []

    def css_class(self, data: bytes) -> str:
        key = hashlib.blake2b(data, digest_size=10).hexdigest()
        found = self._classes.get(key)
        if found is not None:
            return found
        name = f"i{len(self._classes)}"
        self._classes[key] = name
        ratio = _aspect(data)
        uri = f"data:{image_mime()};base64,{base64.b64encode(data).decode('ascii')}"
        self._rules.append(f".{name}{{background-image:url({uri});aspect-ratio:{ratio}}}")
        return name

    def shot(self, data: bytes | None, label: str, size: str = "thumb") -> str:
        if not data:
            return ""
        return f'<div class="shot {size} {self.css_class(data)}" role="img" aria-label="{_e(label)}"></div>'

    def css(self) -> str:
        return "\n".join(self._rules)


def _aspect(data: bytes) -> str:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return f"{image.width}/{image.height}"
    except OSError:
        return "9/20"


def _how(step: Step) -> str:
    if not step.grounded:
        return ""
    score = f' <span class="score">{step.score:.2f}</span>' if isinstance(step.score, int | float) else ""
    return f'<span class="how">{_e(step.grounded)}</span>{score}'


def _screens(step: Step) -> str:
    before, after = step.screen_before, step.screen_after
    if before is None and after is None:
        return ""
    if before == after or before is None or after is None:
        return f'<span class="screens">{_e(after or before)}</span>'
    return f'<span class="screens">{_e(before)} → {_e(after)}</span>'


def _href(path: Path, base: Path | None) -> str:
    """A link to a kept file: relative to the report's folder when known (the report and the
    artifacts move together), else the path as the run named it."""
    import os
    from urllib.parse import quote

    shown = os.path.relpath(path, base) if base is not None else str(path)
    return quote(Path(shown).as_posix())


def _saved(step: Step, folder: Path | None, base: Path | None) -> str:
    """Where a ``screenshot()`` step's file is, linked (nothing when it was not kept)."""
    if not step.saved or folder is None:
        return ""
    return (f'<div class="saved">saved <a href="{_e(_href(folder / step.saved, base))}">{_e(step.saved)}</a>'
            "</div>")


def _step_row(step: Step, images: _Images, script: str, folder: Path | None = None, base: Path | None = None
              ) -> str:
    classes = ["step", step.event, "ok" if step.ok else "failed"]
    if step.event == "repeat":
        count = step.record.get("count")
        text = f"the read above, {count} more time{'s' if count != 1 else ''}, same result"
        return (f'<tr class="{" ".join(classes)}"><td class="num">{step.seq}</td><td class="num">{_e(step.line)}</td>'
                f'<td class="stmt" colspan="7">{_e(text)}</td></tr>')
    if step.event == "scroll":
        moved = "moved" if step.record.get("moved") else "at the end"
        statement = f"scroll {step.record.get('direction', '')} ({moved})"
    else:
        statement = step.statement or ""
    ms = f"{step.ms:,.0f}" if isinstance(step.ms, int | float) else ""
    label = f"{script}: the screen after step {step.seq}"
    error = f'<div class="err">{_e(step.error)}</div>' if step.error else ""
    shot = images.shot(step.thumbnail, label)
    if not shot and step.saved_thumbnail:  # screenshot() sends no input: its own file is the screen after it
        shot = images.shot(step.saved_thumbnail, f"{script}: {step.saved}, saved by step {step.seq}")
    return (
        f'<tr class="{" ".join(classes)}" data-seq="{step.seq}">'
        f'<td class="num">{step.seq}</td><td class="num">{_e(step.line)}</td>'
        f'<td class="stmt"><code>{_e(statement)}</code>{error}{_saved(step, folder, base)}</td>'
        f'<td class="mono">{_e(step.call)}</td><td class="mono">{_e(step.element)}</td>'
        f"<td>{_how(step)}</td><td>{_screens(step)}</td><td class=\"ms\">{ms}</td>"
        f"<td>{shot}</td></tr>"
    )


def _source_excerpt(source: str | None, line: int | None, context: int = 3) -> str:
    if not source or not line:
        return ""
    lines = source.splitlines()
    lo, hi = max(1, line - context), min(len(lines), line + context)
    rows = []
    for n in range(lo, hi + 1):
        hit = ' class="hit"' if n == line else ""
        rows.append(f'<div{hit}><span class="ln">{n}</span>{_e(lines[n - 1])}</div>')
    return f'<div class="source mono" aria-label="the failing line in context">{"".join(rows)}</div>'


def _hierarchy(path: Path | None) -> str:
    if path is None or not path.is_file():
        return ""
    from tapir.core.errors import HierarchyError
    from tapir.hierarchy import parse_uiautomator

    try:
        xml = path.read_text(encoding="utf-8")
        tree = parse_uiautomator(xml)
    except (OSError, UnicodeDecodeError, HierarchyError):
        return ""
    out = []
    for node in tree.nodes[:MAX_HIERARCHY_LINES]:
        parts = [node.short_class or "view"]
        if node.resource_id:
            parts.append("#" + node.resource_name)
        if node.text:
            parts.append(repr(node.text))
        if node.content_desc:
            parts.append(f"desc={node.content_desc!r}")
        flags = [f for f in ("clickable", "checked", "selected", "focused", "scrollable", "editable")
                 if getattr(node, f)]
        if not node.enabled:
            flags.append("disabled")
        parts.append(str(node.bounds))
        if flags:
            parts.append(" ".join(flags))
        out.append("  " * node.depth + " ".join(parts))
    more = len(tree.nodes) - MAX_HIERARCHY_LINES
    if more > 0:
        out.append(f"... {more} more views (the whole dump: {path})")
    package = tree.package or next((n.package for n in tree.nodes if n.package), "")
    what = f"{len(tree.nodes)} views" + (f", {package}" if package else "")
    return (f'<details class="hierarchy"><summary>Hierarchy: the last dump the runtime read ({_e(what)})</summary>'
            f'<pre>{_e(chr(10).join(out))}</pre></details>')


def _failure(r: ScriptResult, a: Attempt, images: _Images) -> str:
    shot = images.shot(a.screenshot_image, f"{r.script}: the screen when it failed", "big")
    figure = f"<figure>{shot}<figcaption>The screen when it failed</figcaption></figure>" if shot else "<div></div>"
    kept = (f'<p class="artifacts">Artifacts: <span class="mono">{_e(a.folder)}</span> '
            f'({", ".join(n for n in (a.screenshot, a.hierarchy, a.trace) if n)})</p>') if a.folder else ""
    return (f'<div class="failure"><div><pre class="error">{_e(a.error)}</pre>{_source_excerpt(r.source, a.line)}'
            f"{_hierarchy(a.path(a.hierarchy))}{kept}</div>{figure}</div>")


def _attempt(r: ScriptResult, a: Attempt, images: _Images, base: Path | None) -> str:
    parts = []
    if len(r.attempts) > 1:
        outcome = "passed" if a.ok else ("failed" if a.kind == "failure" else "error")
        parts.append(f"<h3>Attempt {a.number} of {len(r.attempts)} · {outcome} · {a.seconds:.2f} s"
                     f"{' · ' + _e(a.device) if a.device else ''}</h3>")
    if not a.ok:
        parts.append(_failure(r, a, images))
    start = images.shot(a.start_thumbnail, f"{r.script}: the screen at the start")
    if start:
        parts.append(f'<div class="start">{start}<span>The screen when the script started</span></div>')
    if a.steps:
        rows = "".join(_step_row(s, images, r.script, a.folder, base) for s in a.steps)
        parts.append('<table class="steps"><thead><tr><th>#</th><th>line</th><th>statement</th><th>call</th>'
                     "<th>element</th><th>grounded</th><th>screen</th><th>ms</th><th>after</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    elif a.ok:
        parts.append('<p class="screens">No UI call.</p>')
    if a.printed:
        parts.append(f'<pre class="printed" aria-label="printed">{_e(chr(10).join(a.printed))}</pre>')
    return f'<div class="attempt">{"".join(parts)}</div>'


def _section(r: ScriptResult, images: _Images, base: Path | None) -> str:
    last = r.last
    why = ""
    if not r.ok and r.error:
        why = next((line.strip() for line in r.error.splitlines() if line.strip()), "")
    elif r.status == "skipped":
        why = r.reason or ""
    elif r.status == "flaky":
        why = f"passed on attempt {len(r.attempts)}"
    tags = "".join(f'<span class="tag">#{_e(t)}</span>' for t in r.tags)
    steps = sum(1 for s in last.steps if s.event == "action") if last is not None else 0
    facts = " · ".join(x for x in (f"{steps} call{'s' if steps != 1 else ''}" if steps else "",
                                   f"{r.seconds:.2f} s" if r.seconds else "",
                                   last.device if last is not None and last.device else "") if x)
    body = []
    if r.warnings:
        body.append(f'<pre class="warnings">{_e(r.warnings)}</pre>')
    if r.status == "skipped":
        body.append(f'<p class="screens">Skipped: {_e(r.reason)}</p>')
    body += [_attempt(r, a, images, base) for a in r.attempts]
    is_open = " open" if r.status in ("failed", "error", "flaky") else ""
    anchor = "s-" + "".join(c if c.isalnum() else "-" for c in r.script)
    search = " ".join([r.script, r.status, *r.tags]).lower()
    return (f'<section class="script {r.status}" id="{_e(anchor)}" data-status="{r.status}" '
            f'data-search="{_e(search)}"><details{is_open}><summary><span class="badge {r.status}">{r.status}</span>'
            f'<span class="name">{_e(r.script)}</span>{tags}<span class="why">{_e(why)}</span>'
            f'<span class="facts">{_e(facts)}</span></summary><div class="body">{"".join(body)}</div>'
            "</details></section>")


def report_html(run: TestRun, title: str = "Tapir test report", *, base: Path | None = None) -> str:
    """The run as one HTML page (see the module docstring); ``base``: the folder the page will be
    written to (links to kept files are made relative to it)."""
    images = _Images()
    sections = "".join(_section(r, images, base) for r in run.results)
    counts = run.counts()
    total = len(run.results) or 1
    chips = "".join(f'<button class="chip {s}" data-filter="{s}" aria-pressed="false">{counts[s]} {s}</button>'
                    for s in STATUSES if counts[s])
    bar = "".join(f'<span class="{s}" style="width:{100 * counts[s] / total:.3f}%" title="{counts[s]} {s}"></span>'
                  for s in STATUSES if counts[s])
    meta = [run.started or time.strftime("%Y-%m-%dT%H:%M:%S%z"), f"{run.wall_s:.1f} s"]
    if run.devices:
        meta.append(f"devices: {', '.join(run.devices)}")
    if run.deselected:
        meta.append(f"{run.deselected} deselected by tags")
    if run.other_shards:
        meta.append(f"{run.other_shards} in other shards")
    if run.interrupted:
        meta.append("interrupted")
    if run.artifacts:
        meta.append(f"artifacts: {run.artifacts}")
    summary = run.summary()
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tapir {_e(__version__)}">
<title>{_e(title)}: {_e(summary)}</title>
<style>
{_asset("report.css")}
{images.css()}
</style>
</head>
<body>
<header class="top">
<h1>{_e(title)}</h1>
<p class="meta">{_e(" · ".join(meta))}</p>
<div class="bar" role="toolbar" aria-label="filter by outcome">{chips}
<input id="search" type="search" placeholder="Filter by name, tag or outcome" aria-label="filter scripts"></div>
<div class="progress" aria-label="{_e(summary)}">{bar}</div>
</header>
<main>
<p class="summary" id="summary">{_e(summary)}</p>
{sections}
<p class="empty" id="none" hidden>No script matches.</p>
</main>
<footer>Tapir {_e(__version__)} · every step is a line of the run's trace (docs/runtime.md)</footer>
<div id="lightbox" hidden></div>
<script>
{_asset("report.js")}
</script>
</body>
</html>
"""
