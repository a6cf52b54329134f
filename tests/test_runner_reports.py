"""The reports of `tapir test`: JUnit (read back with junitparser), JSON and the HTML page, from a
run with every outcome; and retries, flaky scripts and kept artifacts (the attempt runner faked)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from lxml import html as lxml_html
from PIL import Image

from tapir.runner import html_report
from tapir.runner.execute import AttemptOptions, PreparedScript
from tapir.runner.html_report import report_html
from tapir.runner.images import thumbnail
from tapir.runner.json_report import report_json
from tapir.runner.junit import junit_xml
from tapir.runner.pool import Slot
from tapir.runner.results import Attempt, ScriptResult, Step, TestRun
from tapir.runner.suite import ARTIFACTS_MARKER, RunOptions, prepare_artifacts, run_prepared

FAILING_SOURCE = "# doc: music.yaml\n$songs__play.tap()\nt = $player__title.get_text()\nassert t == 'x', t\n"
HIERARCHY = ('<?xml version="1.0"?><hierarchy rotation="0"><node class="android.widget.FrameLayout" '
             'package="org.tapir.music" bounds="[0,0][1080,2400]" text="" resource-id="" content-desc="">'
             '<node class="android.widget.TextView" package="org.tapir.music" text="Lanterns" '
             'resource-id="org.tapir.music:id/title" content-desc="" bounds="[0,100][1080,200]"/></node></hierarchy>')


def css(el: Any, selector: str) -> list[Any]:
    """A small CSS selector (``tag.class tag.class ...``, descendants) as XPath, so the tests need no
    cssselect."""
    xpath = "."
    for part in selector.split():
        tag, _, classes = part.partition(".")
        cond = "".join(f"[contains(concat(' ', normalize-space(@class), ' '), ' {c} ')]"
                       for c in classes.split(".") if c)
        xpath += f"//{tag or '*'}{cond}"
    return list(el.xpath(xpath))


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1080, 2400), colour).save(out, "PNG")
    return out.getvalue()


def _steps(thumb: bytes | None) -> tuple[Step, ...]:
    records: list[dict[str, Any]] = [
        {"event": "navigation", "step": "tap $songs__tab", "screen_before": "home", "screen_after": "songs", "ms": 40},
        {"event": "action", "line": 2, "statement": "$songs__play.tap()", "call": "tap", "element": "$songs__play",
         "grounded": "navigation+identifier 0", "score": 0.97, "screen_before": "home", "screen_after": "player",
         "ms": {"total": 812.4}, "ok": True, "screenshot": "001-tap.png"},
        {"event": "action", "line": 3, "statement": "t = $player__title.get_text()", "call": "get_text",
         "element": "$player__title", "grounded": "fuzzy", "score": 0.81, "screen_before": "player",
         "screen_after": "player", "ms": {"total": 3.0}, "ok": True, "result": "Lanterns"},
        {"event": "repeat", "line": 3, "count": 4},
    ]
    steps = tuple(Step.from_record(i, r) for i, r in enumerate(records, 1))
    return tuple(s if s.screenshot is None else Step(**{**s.__dict__, "thumbnail": thumb}) for s in steps)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> TestRun:
    art = tmp_path_factory.mktemp("artifacts")
    kept = art / "flows__music__broken"
    kept.mkdir()
    (kept / "hierarchy.xml").write_text(HIERARCHY, encoding="utf-8")
    (kept / "screenshot.png").write_bytes(_png((200, 30, 30)))
    (kept / "trace.jsonl").write_text("{}\n", encoding="utf-8")
    blue = thumbnail(_png((20, 60, 200)))
    error = ("flows/music/broken.tap:4:1: AssertionFailed: assertion failed: Lanterns\n"
             "    assert t == 'x', t\n    ^^^^^^^^^^^^^^^^^^^")
    failed = Attempt(1, False, 2.5, "sim#1", error, "AssertionFailed", "failure", 4, ("hello",), _steps(blue),
                     actions=1, dumps=3, device_actions=2, start_screenshot="000-start.png", start_thumbnail=blue,
                     folder=kept, screenshot="screenshot.png", hierarchy="hierarchy.xml", trace="trace.jsonl",
                     screenshot_image=thumbnail(_png((200, 30, 30)), 540))
    flaky_fail = Attempt(1, False, 1.0, "sim#2", "flows/notes/tick.tap:2:1: ElementNotFound: $x is not on the screen",
                         "ElementNotFound", "failure", 2)
    passed = Attempt(1, True, 0.8, "sim#2", steps=_steps(blue), printed=("done",))
    refused = Attempt(1, False, 0.0, None, "flows/bad.tap:1:1: error[syntax]: expected ':'", "check", "error")
    return TestRun(
        results=[
            ScriptResult("flows/music/broken.tap", "failed", (failed,), ("smoke",), artifacts=kept,
                         source=FAILING_SOURCE),
            ScriptResult("flows/music/play.tap", "passed", (passed,), ("smoke", "music")),
            ScriptResult("flows/notes/tick.tap", "flaky", (flaky_fail, Attempt(2, True, 0.9, "sim#2")), ()),
            ScriptResult("flows/bad.tap", "error", (refused,), warnings="flows/bad.tap:3:1: warning[unreachable]"),
            ScriptResult("flows/notes/later.tap", "skipped", (), ("notes",), reason="the dialog is being redesigned"),
        ],
        deselected=2, wall_s=6.2, started="2026-01-01T10:00:00+0000", devices=("sim#1", "sim#2"), artifacts=art,
    )


def test_junit_counts_and_outcomes_read_back_with_junitparser(run: TestRun, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml(run), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"flows/music", "flows/notes", "flows"}
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (5, 1, 1, 1)
    music = suites["flows/music"]
    assert (music.tests, music.failures, music.errors, music.skipped) == (2, 1, 0, 0)
    cases = {c.name: c for s in xml for c in s}
    [failure] = cases["broken.tap"].result
    assert isinstance(failure, Failure) and failure.type == "AssertionFailed"
    assert failure.message.startswith("flows/music/broken.tap:4:1:") and "^^^" in (failure.text or "")
    assert cases["broken.tap"].classname == "flows.music" and cases["broken.tap"].time == 2.5
    assert "[[ATTACHMENT|" + str(run.results[0].artifacts / "screenshot.png") + "]]" in cases["broken.tap"].system_out
    assert cases["play.tap"].is_passed and cases["play.tap"].system_out == "done"
    assert cases["tick.tap"].is_passed  # flaky: passed in the end...
    [error] = cases["bad.tap"].result
    assert isinstance(error, Error) and error.type == "check"
    assert "warning[unreachable]" in (cases["bad.tap"].system_err or "")
    [skipped] = cases["later.tap"].result
    assert isinstance(skipped, Skipped) and skipped.message == "the dialog is being redesigned"
    # ...and its failure is there for readers that know Surefire's rerun elements
    text = path.read_text(encoding="utf-8")
    assert text.count("<flakyFailure") == 1 and "attempt 1 on sim#2" in text and "<rerunFailure" not in text


def test_a_failed_retried_script_lists_its_earlier_attempts_as_reruns() -> None:
    a1 = Attempt(1, False, 1.0, "sim#1", "s.tap:1:1: ElementNotFound: gone", "ElementNotFound", "failure", 1)
    a2 = Attempt(2, False, 1.0, "sim#1", "s.tap:2:1: AssertionFailed: no", "AssertionFailed", "failure", 2)
    xml = junit_xml(TestRun([ScriptResult("s.tap", "failed", (a1, a2))]))
    assert xml.count("<rerunFailure") == 1 and 'type="AssertionFailed"' in xml and "attempts: 2 (failed, failed)" in xml
    assert 'tests="1" failures="1" errors="0" skipped="0"' in xml


def test_the_json_report_has_totals_attempts_and_steps(run: TestRun) -> None:
    data = json.loads(json.dumps(report_json(run)))
    assert data["format"] == "tapir-test/1" and data["ok"] is False
    assert data["totals"] == {"scripts": 5, "passed": 1, "flaky": 1, "failed": 1, "error": 1, "skipped": 1,
                              "deselected": 2, "other_shards": 0}
    broken = data["scripts"][0]
    assert broken["status"] == "failed" and broken["tags"] == ["smoke"]
    [attempt] = broken["attempts"]
    assert attempt["line"] == 4 and attempt["kind"] == "failure" and attempt["device"] == "sim#1"
    assert attempt["screenshot"].endswith("flows__music__broken/screenshot.png")
    steps = attempt["steps"]
    assert [s["event"] for s in steps] == ["navigation", "action", "action", "repeat"]
    assert steps[1]["grounded"] == "navigation+identifier 0" and steps[1]["ms"] == 812.4
    assert steps[1]["screenshot"].endswith("flows__music__broken/shots/001-tap.png")
    # a passed attempt's files are not kept: no path to a file that does not exist
    assert data["scripts"][1]["attempts"][0]["steps"][1]["screenshot"] is None
    assert data["scripts"][4]["reason"] == "the dialog is being redesigned"


def test_the_html_report_is_one_file_with_every_step_and_the_failure(run: TestRun) -> None:
    page = report_html(run)
    assert "<link" not in page and 'src="http' not in page and "url(http" not in page  # nothing fetched
    doc = lxml_html.fromstring(page)
    sections = css(doc, "section.script")
    assert [s.get("data-status") for s in sections] == ["failed", "passed", "flaky", "error", "skipped"]
    broken = sections[0]
    assert css(broken, "details")[0].get("open") is not None  # failures open, passes closed
    assert css(sections[1], "details")[0].get("open") is None
    rows = css(broken, "table.steps tbody tr")
    assert [r.get("class").split()[1] for r in rows] == ["navigation", "action", "action", "repeat"]
    tap = rows[1]
    cells = [c.text_content().strip() for c in css(tap, "td")]
    assert cells[2] == "$songs__play.tap()" and cells[3] == "tap" and cells[4] == "$songs__play"
    assert cells[5] == "navigation+identifier 0 0.97" and cells[6] == "home → player" and cells[7] == "812"
    assert css(tap, ".shot")  # the screen after it
    assert not css(rows[2], ".shot")  # a read: no screenshot
    failure = css(broken, ".failure")[0]
    assert "AssertionFailed: assertion failed: Lanterns" in css(failure, "pre.error")[0].text_content()
    [hit] = css(failure, ".source .hit")
    assert hit.text_content() == "4assert t == 'x', t"
    assert css(failure, "figure .shot.big")
    hierarchy = css(failure, ".hierarchy pre")[0].text_content()
    assert "TextView #title 'Lanterns' [0,100][1080,200]" in hierarchy
    assert "flows__music__broken" in css(failure, ".artifacts")[0].text_content()
    flaky = sections[2]
    assert [h.text_content().split(" · ")[1] for h in css(flaky, ".attempt h3")] == ["failed", "passed"]
    assert "the dialog is being redesigned" in sections[4].text_content()
    chips = {c.get("data-filter"): c.text_content() for c in css(doc, ".chip")}
    assert chips == {"passed": "1 passed", "flaky": "1 flaky", "failed": "1 failed", "error": "1 error",
                     "skipped": "1 skipped"}


def test_each_distinct_screenshot_is_embedded_once(run: TestRun) -> None:
    page = report_html(run)
    doc = lxml_html.fromstring(page)
    classes = {c for shot in css(doc, ".shot") for c in shot.get("class").split() if c.startswith("i")}
    # the blue step screen (used 3 times) and the red failure screen
    assert len(classes) == 2 and page.count("data:image/") == 2
    assert len(css(doc, ".shot")) == 4
    assert html_report.MAX_HIERARCHY_LINES >= 1000


def test_thumbnails_are_small_and_keep_the_aspect() -> None:
    small = thumbnail(_png((10, 10, 10)))
    assert small is not None and len(small) < 20_000
    with Image.open(io.BytesIO(small)) as image:
        assert image.width == 360 and image.height == 800
    assert thumbnail(b"not an image") is None


def test_a_screen_made_small_before_comes_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.runner import images

    monkeypatch.setattr(images, "CACHE_SIZE", 2)
    monkeypatch.setattr(images, "_made", type(images._made)())
    green, grey, white = _png((0, 200, 0)), _png((90, 90, 90)), _png((255, 255, 255))
    small = thumbnail(green)
    assert thumbnail(bytes(green)) is small  # the same picture, whatever object holds it
    assert thumbnail(green, 540) is not small  # another size is made anew
    thumbnail(grey)
    thumbnail(white)
    assert len(images._made) == 2 and thumbnail(green) is not small  # the oldest went first


# -- retries, flaky scripts and artifacts, with the attempt runner faked -----------------------------


def _fake_attempts(monkeypatch: pytest.MonkeyPatch, outcomes: list[bool]) -> list[Path]:
    folders: list[Path] = []

    def fake(script: PreparedScript, slot: Slot, number: int, options: AttemptOptions, folder: Path,
             on_step: Any = None) -> Attempt:
        folder.mkdir(parents=True, exist_ok=True)
        folders.append(folder)
        ok = outcomes[number - 1]
        if ok:
            return Attempt(number, True, 0.1, slot.name, folder=folder)
        (folder / "screenshot.png").write_bytes(b"png")
        (folder / "trace.jsonl").write_text(f'{{"attempt": {number}}}\n')
        return Attempt(number, False, 0.1, slot.name, f"s.tap:2:1: AssertionFailed: attempt {number}",
                       "AssertionFailed", "failure", 2, folder=folder, screenshot="screenshot.png",
                       trace="trace.jsonl")

    monkeypatch.setattr("tapir.runner.suite.run_attempt", fake)
    return folders


def _prepared(tmp_path: Path) -> PreparedScript:
    return PreparedScript(tmp_path / "s.tap", "s.tap", "# doc: x\n$a.tap()\n", None, None)  # type: ignore[arg-type]


def test_a_script_that_passes_on_a_retry_is_flaky_and_its_failure_is_kept(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_attempts(monkeypatch, [False, True])
    options = RunOptions(retries=2, artifacts=tmp_path / "art", trace_dir=tmp_path / "traces")
    (tmp_path / "traces").mkdir()
    result = run_prepared(_prepared(tmp_path), Slot("sim#1", "sim"), options, tmp_path / "work", "s")
    assert result.status == "flaky" and result.ok and len(result.attempts) == 2
    first, second = result.attempts
    assert first.folder == tmp_path / "art" / "s" / "attempt-1" and second.folder is None
    assert (first.folder / "error.txt").read_text().startswith("s.tap:2:1: AssertionFailed: attempt 1")
    assert (first.folder / "screenshot.png").is_file() and (first.folder / "script.tap").is_file()
    assert result.artifacts == tmp_path / "art" / "s"


def test_a_script_failing_every_attempt_keeps_the_last_on_top(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    folders = _fake_attempts(monkeypatch, [False, False, False])
    options = RunOptions(retries=2, artifacts=tmp_path / "art", trace_dir=tmp_path / "traces")
    (tmp_path / "traces").mkdir()
    result = run_prepared(_prepared(tmp_path), Slot("sim#1", "sim"), options, tmp_path / "work", "s")
    assert result.status == "failed" and len(folders) == 3
    kept = tmp_path / "art" / "s"
    assert [a.folder for a in result.attempts] == [kept / "attempt-1", kept / "attempt-2", kept]
    assert (kept / "trace.jsonl").read_text() == '{"attempt": 3}\n' and (kept / ARTIFACTS_MARKER).is_file()
    assert (tmp_path / "traces" / "s.jsonl").read_text() == '{"attempt": 3}\n'  # --trace-dir: the last attempt
    # the next run of the script starts from a clean folder; what tapir test did not write stays
    (tmp_path / "art" / "mine").mkdir()
    prepare_artifacts(tmp_path / "art", ["s", "mine"])
    assert not kept.exists() and (tmp_path / "art" / "mine").is_dir()


def test_without_retries_a_failure_is_one_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_attempts(monkeypatch, [False, True])
    result = run_prepared(_prepared(tmp_path), Slot("sim#1", "sim"), RunOptions(), tmp_path / "work", "s")
    assert result.status == "failed" and len(result.attempts) == 1 and result.artifacts is None
    assert result.attempts[0].folder is None  # nothing kept without an artifacts folder
