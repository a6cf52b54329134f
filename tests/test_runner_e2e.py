"""`tapir test` end to end on simulators through the real adb path: the sample scripts on two
simulators with every report, read back (JUnit with junitparser, the HTML page in headless
Chromium); a failing script's artifacts; `--reset` and the app stop on a device given by serial."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from junitparser import Failure, JUnitXml
from lxml import etree
from lxml import html as lxml_html
from PIL import Image
from test_runner_reports import css

from tapir.cli import main
from tapir.hierarchy import parse_uiautomator
from tapir.runner.collect import collect
from tapir.runner.suite import ARTIFACTS_MARKER, RunOptions, run_tests
from tapir.runtime.trace import read_trace

pytestmark = [pytest.mark.adb]

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
MUSIC = SAMPLES / "music" / "music.yaml"

FAILING = f"""\
# doc: {MUSIC}
# tags: broken
$songs_screen__song_list.match("Lanterns").tap()
$songs_screen__now_playing_bar.tap()
title = $now_playing_screen__title_text.get_text()
assert title == "Nope", f"playing {{title}}"
"""
#: Calls that always send input to the device (a screenshot follows each).
INPUTS = frozenset({"tap", "long_tap", "set_text", "back", "enter"})
MISSING = f"""\
# doc: {MUSIC}
$songs_screen__song_list.match("No such song").tap()
"""


def _tapir(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def samples_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`tapir test samples/ --device sim -j 2 --junit out.xml --html out.html` (and --json)."""
    out = tmp_path_factory.mktemp("samples-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray server on 5037
        mp.chdir(REPO)
        code, printed = _tapir("test", "samples/", "--device", "sim", "-j", "2", "--junit", str(out / "out.xml"),
                               "--html", str(out / "out.html"), "--json", str(out / "out.json"),
                               "--artifacts", str(out / "artifacts"))
    return {"code": code, "printed": printed, "out": out, "scripts": collect([SAMPLES])}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_samples_pass_on_two_simulators_and_junit_counts_them(samples_run: dict[str, Any]) -> None:
    assert samples_run["code"] == 0, samples_run["printed"][-3000:]
    total = len(samples_run["scripts"])
    assert total >= 80
    xml = JUnitXml.fromfile(str(samples_run["out"] / "out.xml"))
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (total, 0, 0, 0)
    cases = [c for suite in xml for c in suite]
    assert len(cases) == total and all(c.is_passed for c in cases)
    assert {s.name for s in xml} >= {"samples/music", "samples/weather", "samples/suite/notes"}
    data = json.loads((samples_run["out"] / "out.json").read_text())
    assert data["ok"] and data["totals"]["passed"] == total and data["devices"] == ["sim#1", "sim#2"]
    assert {s["attempts"][0]["device"] for s in data["scripts"]} == {"sim#1", "sim#2"}  # both ran scripts
    assert f"{total} passed" in samples_run["printed"]
    # nothing failed: nothing kept but what the scripts' own screenshot() calls saved
    kept = [p for p in (samples_run["out"] / "artifacts").rglob("*") if p.is_file() and p.name != ARTIFACTS_MARKER]
    assert kept and all(p.suffix == ".png" and p.name != "screenshot.png" for p in kept), kept


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_html_report_renders_every_step_in_headless_chromium(samples_run: dict[str, Any], tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    page = samples_run["out"] / "out.html"
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    doc = lxml_html.fromstring(dom.stdout)
    data = json.loads((samples_run["out"] / "out.json").read_text())
    sections = css(doc, "section.script")
    assert [s.get("data-status") for s in sections] == ["passed"] * len(data["scripts"])
    rendered_steps = 0
    for section, script in zip(sections, data["scripts"], strict=True):
        assert css(section, ".name")[0].text_content() == script["script"]
        rows = css(section, "table.steps tbody tr")
        steps = script["attempts"][0]["steps"]
        assert len(rows) == len(steps)
        for row, step in zip(rows, steps, strict=True):
            if step["event"] == "action":
                assert css(row, "td.stmt code")[0].text_content() == step["statement"]
                assert css(row, "td.mono")[0].text_content() == step["call"]
                if step["call"] in INPUTS:  # every input is followed by the screen it left
                    assert css(row, ".shot"), (script["script"], step)
        rendered_steps += len(rows)
    assert rendered_steps == sum(len(s["attempts"][0]["steps"]) for s in data["scripts"]) > 500
    # every screenshot after a step is there, drawn from an image embedded in the page
    shots = css(doc, "table.steps .shot")
    assert len(shots) > 300 and all(any(c.startswith("i") for c in s.get("class").split()) for s in shots)
    # and a person can look at it: the page as Chromium draws it
    png = tmp_path / "report.png"
    shot = subprocess.run([*flags, "--window-size=1300,1800", f"--screenshot={png}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0 and png.is_file(), shot.stderr[-2000:]
    with Image.open(png) as image:
        assert image.size == (1300, 1800)
        assert len(image.convert("L").getcolors(maxcolors=65536) or ()) > 16  # not a blank page


@pytest.mark.timeout(300)
def test_a_failing_script_leaves_its_line_screenshot_and_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "fail.tap").write_text(FAILING)
    (tmp_path / "flows" / "missing.tap").write_text(MISSING)
    (tmp_path / "flows" / "play.tap").write_text((SAMPLES / "music" / "play_song.tap").read_text().replace(
        "# doc: music.yaml", f"# doc: {MUSIC}"))
    code, printed = _tapir("test", "flows", "--device", "sim:music", "--junit", "r.xml", "--html", "r.html", "-v")
    assert code == 1, printed
    # -v: a line per step as it runs, under the script it belongs to
    assert "RUN   flows/fail.tap on sim#1\n" in printed
    assert "L4 tap $songs_screen__now_playing_bar  identifier 0 1.00  songs_screen -> now_playing_screen" in printed
    assert "1 passed, 2 failed" in printed and "artifacts: tapir-artifacts/flows__fail" in printed
    kept = tmp_path / "tapir-artifacts" / "flows__fail"
    assert "fail.tap:6:1: AssertionFailed: assertion failed: playing Lanterns" in (kept / "error.txt").read_text()
    with Image.open(kept / "screenshot.png") as image:
        assert image.size == (1080, 2400)
    tree = parse_uiautomator((kept / "hierarchy.xml").read_text())
    assert any(n.text == "Lanterns" for n in tree.nodes)  # the now-playing screen it failed on
    records = read_trace(kept / "trace.jsonl")
    assert [r["call"] for r in records if r["event"] == "action"] == ["match", "tap", "tap", "get_text"]
    assert all((kept / "shots" / r["screenshot"]).is_file() for r in records if r.get("screenshot"))
    missing = tmp_path / "tapir-artifacts" / "flows__missing"
    assert "ActionError" in (missing / "error.txt").read_text() and (missing / "hierarchy.xml").is_file()
    xml = JUnitXml.fromfile(str(tmp_path / "r.xml"))
    cases = {c.name: c for s in xml for c in s}
    [failure] = cases["fail.tap"].result
    assert isinstance(failure, Failure) and failure.message.startswith("flows/fail.tap:6:1: AssertionFailed")
    assert f"[[ATTACHMENT|{Path('tapir-artifacts/flows__fail/screenshot.png')}]]" in cases["fail.tap"].system_out
    doc = lxml_html.fromstring((tmp_path / "r.html").read_text())
    section = [s for s in css(doc, "section.script") if s.get("data-status") == "failed"
               and "fail.tap" in css(s, ".name")[0].text_content()][0]
    assert css(section, ".source .hit")[0].text_content() == '6assert title == "Nope", f"playing {title}"'
    assert css(section, ".failure figure .shot.big") and css(section, ".hierarchy pre")
    # a screenshot after the match (it scrolled the list) and the two taps; the read sent no input
    assert etree.tostring(css(section, "table.steps")[0]).count(b'class="shot') == 3


@pytest.mark.timeout(300)
def test_reset_clears_the_app_on_a_device_given_by_serial(adb_port: int, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    check = tmp_path / "default_playlists.tap"
    check.write_text(f"# doc: {MUSIC}\n"
                     "names = [p.get_text($playlists_screen__playlist_name)\n"
                     "         for p in $playlists_screen__playlist_list]\n"
                     "assert names == ['Favourites', 'Road trip'], f'playlists: {names}'\n")
    with start_sim([get_app("music")], adb_port=adb_port, foreground="org.tapir.music") as sim:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        phone = RunOptions(devices=(sim.serial,))
        renamed = run_tests([SAMPLES / "music" / "rename_playlist.tap"], phone)
        assert renamed.ok and renamed.devices == (sim.serial,)
        # a phone keeps its data between scripts (the app is only force-stopped)...
        [kept] = run_tests([check], phone).results
        assert kept.status == "failed" and "playlists: ['Morning run', 'Road trip']" in (kept.error or "")
        # ...unless --reset clears it (pm clear) and launches the app
        [reset] = run_tests([check], RunOptions(devices=(sim.serial,), reset=True)).results
        assert reset.status == "passed", reset.error
        assert sim.device.app("org.tapir.music").state.playlists[0].name == "Favourites"


@pytest.mark.timeout(300)
def test_several_devices_given_by_serial_share_the_scripts(adb_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    scripts = [SAMPLES / "music" / name for name in ("play_song.tap", "dark_theme.tap", "shuffle_playlist.tap",
                                                      "rename_playlist.tap")]
    with start_sim([get_app("music")], adb_port=adb_port, foreground="org.tapir.music") as one, \
            start_sim([get_app("music")], adb_port=adb_port, foreground="org.tapir.music") as two:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        run = run_tests(scripts, RunOptions(devices=(one.serial, two.serial), reset=True))
    assert run.ok, [r.error for r in run.results]
    assert run.devices == (one.serial, two.serial)
    assert {r.attempts[0].device for r in run.results} == {one.serial, two.serial}  # both phones took scripts


SHOOTS = f"""\
# doc: {MUSIC}
screenshot("songs list")
$songs_screen__song_list.match(param("song")).tap()
screenshot("screenshot")
assert param("song") == "Lanterns"
"""


@pytest.mark.timeout(300)
def test_screenshot_files_go_to_the_scripts_artifacts_and_the_report_shows_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "shoots.tap").write_text(SHOOTS)
    (tmp_path / "flows" / "shoots_wrong.tap").write_text(SHOOTS)
    (tmp_path / "tapir.toml").write_text('[test.params]\nsong = "Lanterns"\n'
                                         '[test.params."flows/*_wrong.tap"]\nsong = "Amalfi Blue"\n')
    code, printed = _tapir("test", "flows", "--device", "sim:music", "--junit", "r.xml",
                           "--html", "out/r.html", "--artifacts", "art")
    assert code == 1 and "1 passed, 1 failed" in printed, printed
    # a passing script keeps the files its screenshot() calls saved, in its own artifacts folder
    passed = tmp_path / "art" / "flows__shoots"
    assert sorted(p.name for p in passed.iterdir()) == [".tapir-artifacts", "screenshot-2.png", "songs_list.png"]
    with Image.open(passed / "songs_list.png") as image:
        assert image.size == (1080, 2400)
    # a failed one keeps them beside its failure files; the failure screenshot replaces none of them
    failed = tmp_path / "art" / "flows__shoots_wrong"
    assert {"songs_list.png", "screenshot-2.png", "screenshot.png", "error.txt"} <= {p.name for p in failed.iterdir()}
    cases = {c.name: c for s in JUnitXml.fromfile(str(tmp_path / "r.xml")) for c in s}
    assert f"[[ATTACHMENT|{Path('art/flows__shoots/songs_list.png')}]]" in cases["shoots.tap"].system_out
    # the report links each file from the step that saved it (relative to the report) and shows it small
    doc = lxml_html.fromstring((tmp_path / "out" / "r.html").read_text())
    section = [s for s in css(doc, "section.script") if s.get("data-status") == "passed"][0]
    rows = [r for r in css(section, "table.steps tr.step") if css(r, ".saved")]
    assert [css(r, ".saved a")[0].get("href") for r in rows] == ["../art/flows__shoots/songs_list.png",
                                                                 "../art/flows__shoots/screenshot-2.png"]
    assert all(css(r, ".shot") for r in rows)


@pytest.mark.timeout(300)
def test_a_cancelled_ci_job_still_writes_its_junit_report(tmp_path: Path, adb_port: int) -> None:
    """SIGTERM (what a CI runner sends a job it cancels) stops `tapir test` as Ctrl-C does: the
    scripts that ran are in the JUnit report, the others skipped as not run; exit status 143."""
    import os
    import signal
    import sys
    import time

    junit = tmp_path / "r.xml"
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "test", "samples/", "--device", "sim", "-j", "1",
                             "--adb-port", str(adb_port), "--junit", str(junit)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ADBUTILS_ADB_PATH": "/bin/false"})
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not any(line.startswith("[2/") for line in seen):
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
    assert any(line.startswith("[2/") for line in seen), (proc.poll(), seen)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "interrupted (SIGTERM)" in stderr
    cases = [c for s in JUnitXml.fromfile(str(junit)) for c in s]
    not_run = [c for c in cases if any("the run was interrupted" in (r.message or "") for r in c.result)]
    assert len(cases) == len(collect([REPO / "samples"])) and 2 <= len(cases) - len(not_run) < len(cases)
