"""App confinement (runtime/guards/confinement.py, docs/safety.md): a run stays in its document's
app. The simulator's launcher, or another sample app, comes to the front mid-run; the run goes
back (BACK, then relaunching its app) and says so in the trace and on stderr, or stops with
`OutsideApp` under `--foreign-app stop`; an allowed app is left alone, and so is the home screen
after the script's own `stop_app()`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import OutsideApp
from tapir.core.safety import Safety
from tapir.docgen.loader import load_document
from tapir.docgen.symbols import build_symbols
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult, run_script
from tapir.runtime.connect import Connection, connect
from tapir.runtime.session import DeviceRuntime

pytestmark = [pytest.mark.adb, pytest.mark.timeout(120)]

REPO = Path(__file__).resolve().parent.parent
NOTES_DOC = REPO / "samples" / "notes" / "notes.yaml"
LAUNCHER = "com.android.launcher3"
MUSIC = "org.tapir.music"


class Run:
    """A script on a fresh simulator with the Notes and Music apps; ``print("switch")`` in the
    script brings ``switch_to`` to the front, as a notification or another app would. (The scripts
    then ``sleep(1)``: a switch within the moment a dump is reused, 0.25 s on the simulator, is seen
    on the dump after the next action, docs/safety.md.)"""

    def __init__(self, adb_port: int, tmp: Path, safety: Safety | None = None, switch_to: str = MUSIC) -> None:
        self.doc = load_document(NOTES_DOC)
        self.safety = safety if safety is not None else Safety()
        self.trace = tmp / "trace.jsonl"
        self.conn = Connection(device="sim:notes,music", document=self.doc, trace_path=str(self.trace),
                               adb_port=adb_port, safety=self.safety)
        self.runtime: DeviceRuntime | None = None
        self.switch_to = switch_to

    def run(self, source: str) -> RunResult:
        def factory() -> DeviceRuntime:
            self.runtime = connect(self.conn)
            return self.runtime

        def output(line: str) -> None:
            if line == "switch":
                assert self.runtime is not None
                self.runtime.simulator.device.start_app(self.switch_to)

        return run_script(source, factory, output=output, symbols=build_symbols(self.doc), filename="s.tap",
                          inputs=ScriptInputs(safety=self.safety))

    @property
    def front(self) -> str:
        assert self.runtime is not None
        return str(self.runtime.simulator.device.current_package)

    def guards(self) -> list[dict[str, Any]]:
        return [r for r in map(json.loads, self.trace.read_text().splitlines()) if r["event"] == "guard"]


# A script that leaves its app in the middle: BACK on the notes list closes the app (the launcher
# shows), then it goes on with an element of the app.
#: The app is switched while the script sleeps; then it taps an element of its app.
SWITCH = "$notes_screen__new_note_button.wait()\nprint('switch')\nsleep(1)\n$notes_screen__new_note_button.tap()\n"
LEAVES = ("$notes_screen__new_note_button.wait()\n"
          "back()\n"
          "$notes_screen__note_list.match('Gift ideas').tap()\n"
          "print($note_screen__body_text.get_text())\n")


def test_the_launcher_mid_run_the_run_goes_back_and_says_so(adb_port: int, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "leaves.tap"
    script.write_text(f"# doc: {NOTES_DOC}\n{LEAVES}")
    trace = tmp_path / "t.jsonl"
    code = main(["run", str(script), "--device", "sim:notes", "--adb-port", str(adb_port), "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "Mum: pottery class\nLeo: climbing shoes\n"
    assert err == ("tapir: the home screen (com.android.launcher3) was in front before line 4; the run pressed "
                   "BACK and relaunched org.tapir.notes\n")
    guard = [r for r in map(json.loads, trace.read_text().splitlines()) if r["event"] == "guard"]
    assert len(guard) == 1 and guard[0]["guard"] == "confinement"
    assert (guard[0]["package"], guard[0]["decision"], guard[0]["done"], guard[0]["screen_after"]) == (
        LAUNCHER, "returned", ["pressed BACK", "relaunched org.tapir.notes"], "notes_screen")
    end = [r for r in map(json.loads, trace.read_text().splitlines()) if r["event"] == "end"][0]
    assert end["stats"]["left_app"] == 1


def test_foreign_app_stop_stops_with_a_clear_error(adb_port: int, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "leaves.tap"
    script.write_text(f"# doc: {NOTES_DOC}\n{LEAVES}")
    code = main(["run", str(script), "--device", "sim:notes", "--adb-port", str(adb_port), "--foreign-app", "stop"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert ("leaves.tap:4:1: OutsideApp: the home screen (com.android.launcher3) is in front before line 4, not "
            "org.tapir.notes: the run is bound to org.tapir.notes, so it stops here (--foreign-app stop); nothing "
            "was sent to the other app") in err
    assert ("hint: if the run may use com.android.launcher3, allow it: --allow-app com.android.launcher3 (or "
            "`allow_apps:` under the document's `app:`, or [safety] allow_apps in tapir.toml); or let the run go "
            "back to its app: --foreign-app return") in err


def test_another_app_brought_to_the_front_mid_run_is_left(adb_port: int, tmp_path: Path) -> None:
    run = Run(adb_port, tmp_path)
    result = run.run(SWITCH + "print($edit_note_screen__title_input.get_text())\n")
    assert result.ok, result.error and result.error.render()
    assert result.printed[-1] == "Title" and run.front == "org.tapir.notes"
    guard = run.guards()
    assert [(g["package"], g["decision"], g["done"]) for g in guard] == [
        (MUSIC, "returned", ["pressed BACK", "relaunched org.tapir.notes"])]
    assert run.runtime is not None
    assert run.runtime.notices == ["org.tapir.music was in front during navigation; the run pressed BACK and "
                                   "relaunched org.tapir.notes"]


def test_another_app_under_stop_raises_before_anything_is_sent_to_it(adb_port: int, tmp_path: Path) -> None:
    run = Run(adb_port, tmp_path, Safety.from_options(foreign_app="stop"))
    result = run.run(SWITCH)
    assert isinstance(result.error, OutsideApp)
    assert result.error.message == ("org.tapir.music is in front during navigation, not org.tapir.notes: the run is "
                                    "bound to org.tapir.notes, so it stops here (--foreign-app stop); nothing was sent "
                                    "to the other app")
    assert result.error.span is not None and result.error.span.line == 4
    assert run.front == MUSIC
    assert run.runtime is not None
    assert not [c for c in run.runtime.simulator.device.log if c.startswith(("input", "am start", "monkey"))]


def test_an_allowed_app_is_not_left_by_the_guard(adb_port: int, tmp_path: Path) -> None:
    run = Run(adb_port, tmp_path, Safety.from_options(allow_apps=[MUSIC], foreign_app="stop"))
    result = run.run(SWITCH)
    assert result.ok, result.error and result.error.render()
    assert run.guards() == [] and run.front == "org.tapir.notes"  # navigation relaunched its app, no guard needed


def test_the_home_screen_after_stop_app_is_expected(adb_port: int, tmp_path: Path) -> None:
    run = Run(adb_port, tmp_path, Safety.from_options(foreign_app="stop"))
    result = run.run("stop_app()\n$notes_screen__new_note_button.tap()\n")
    assert result.ok, result.error and result.error.render()
    assert run.guards() == []


def test_when_the_app_cannot_come_back_the_error_says_what_was_tried(adb_port: int, tmp_path: Path) -> None:
    run = Run(adb_port, tmp_path)

    def uninstall_and_switch(line: str) -> None:
        assert run.runtime is not None
        run.runtime.simulator.device.uninstall("org.tapir.notes")

    doc = run.doc
    result = run_script("$notes_screen__new_note_button.wait()\nprint('gone')\nback()\n"
                        "$notes_screen__new_note_button.tap()\n",
                        lambda: run.runtime or _made(run), output=uninstall_and_switch, symbols=build_symbols(doc),
                        filename="s.tap", inputs=ScriptInputs(safety=run.safety))
    assert isinstance(result.error, OutsideApp)
    assert result.error.message.startswith("the home screen (com.android.launcher3) came to the front before line 4, "
                                           "not org.tapir.notes: the run is bound to org.tapir.notes; it pressed BACK "
                                           "and could not relaunch org.tapir.notes (")
    assert result.error.message.endswith("but the home screen (com.android.launcher3) is still in front")
    assert [g["decision"] for g in run.guards()] == ["failed"]


def _made(run: Run) -> DeviceRuntime:
    run.runtime = connect(run.conn)
    return run.runtime


def test_allowed_apps_come_from_the_document_and_tapir_toml(tmp_path: Path) -> None:
    from tapir.docgen.loader import loads_document
    from tapir.runtime.guards.confinement import describe_package
    from tapir.service import Workspace

    text = NOTES_DOC.read_text().replace("  dialect: uiautomator\n",
                                         "  dialect: uiautomator\n  allow_apps: [com.android.chrome]\n", 1)
    doc = loads_document(text, source="notes.yaml").document
    assert doc is not None and doc.app.allow_apps == ("com.android.chrome",)
    (tmp_path / "tapir.toml").write_text('[safety]\nallow = ["delete"]\nallow_apps = ["org.tapir.music"]\n'
                                         'foreign_app = "stop"\n')
    project = Workspace().safety_config(tmp_path / "s.tap")
    safety = Safety.from_options(project=project, allow_apps=["com.example.mail"])
    assert safety.apps == ("org.tapir.music", "com.example.mail") and safety.foreign_app == "stop"
    assert safety.allowed == {"delete": "tapir.toml"}
    assert describe_package(LAUNCHER) == "the home screen (com.android.launcher3)"
    (tmp_path / "tapir.toml").write_text('[safety]\nforeign_app = "wander"\nallowed = 1\n')
    from tapir.service.config import ConfigError, load_config

    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "tapir.toml")
    assert [p.message for p in info.value.problems] == [
        "[safety] foreign_app must be one of return, stop, not 'wander'",
        "[safety] has no setting 'allowed' (known: allow, allow_apps, foreign_app)"]


# -- handing over: the document picker, the share sheet, another app the document describes --------


class _Screen:
    """The two dumps confinement reads: where the last action was taken, and the one after it."""

    def __init__(self, acted_on: str, now: str, screen: str | None = None) -> None:
        from tapir.hierarchy.parse import parse_uiautomator
        from tapir.runtime.settle import Observation

        def obs(package: str, shown: str | None, seq: int) -> Observation:
            xml = f'<hierarchy><node package="{package}" class="android.widget.FrameLayout" text="x" ' \
                  'bounds="[0,0][100,100]" /></hierarchy>'
            return Observation(parse_uiautomator(xml), shown, f"d{seq}", package, seq)

        self.acted_on = obs(acted_on, "main_screen", 1)
        self.current = obs(now, screen, 2)
        self.device = None

    def elapsed(self) -> float:
        return 0.0


def _confinement(screen: _Screen) -> tuple[Any, list[dict[str, Any]]]:
    from tapir.runtime.guards import Confinement

    written: list[dict[str, Any]] = []
    return Confinement(load_document(NOTES_DOC), screen, Safety.from_options(foreign_app="stop"),  # type: ignore[arg-type]
                       written.append), written


NOTES = "org.tapir.notes"


@pytest.mark.parametrize("package", ["com.google.android.documentsui", "com.android.intentresolver",
                                     "com.android.permissioncontroller", "com.android.printspooler"])
def test_a_system_handover_opened_by_the_app_is_part_of_the_run(package: str) -> None:
    confinement, written = _confinement(_Screen(NOTES, package))
    confinement.ensure(None, None)  # no OutsideApp under --foreign-app stop: nothing was left
    assert package in confinement.handed_over
    assert written[-1]["decision"] == "handed over" and written[-1]["why"] == "a system handover"


def test_another_app_showing_a_document_screen_after_the_apps_action_is_handed_over() -> None:
    confinement, written = _confinement(_Screen(NOTES, "org.example.gallery", screen="main_screen"))
    confinement.ensure(None, None)
    assert "org.example.gallery" in confinement.handed_over and "main_screen" in written[-1]["why"]


@pytest.mark.parametrize(("acted_on", "now", "screen"), [
    (NOTES, "org.example.ads", None),  # not a handover package, and no screen of the document
    (LAUNCHER, "com.google.android.documentsui", None),  # not opened from the app
    (NOTES, LAUNCHER, "main_screen"),  # the home screen is never a handover
])
def test_an_app_that_was_not_handed_over_to_is_still_left(acted_on: str, now: str, screen: str | None) -> None:
    confinement, _ = _confinement(_Screen(acted_on, now, screen))
    with pytest.raises(OutsideApp):
        confinement.ensure(None, None)
    assert not confinement.handed_over


def test_a_handover_ends_when_the_app_is_back_in_front() -> None:
    screen = _Screen(NOTES, "com.google.android.documentsui")
    confinement, _ = _confinement(screen)
    confinement.ensure(None, None)
    screen.acted_on, screen.current = screen.current, _Screen(NOTES, NOTES).current
    confinement.ensure(None, None)
    assert not confinement.handed_over
