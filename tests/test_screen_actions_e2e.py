"""Screen-level actions end to end on the simulated Notes app through the real adb server: the
Maestro-style sample flow (with its shared login flow, `_login.tap`) by `tapir run` on an adb
serial, with its document and without one, the same in the REPL, text and a secret typed into the focused field
through `adb shell input text`, the sensitive guard on a tapped text and point, and the
confinement guard after HOME."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tapir.core.errors import ActionError, DeviceError, SecretRefused, SensitiveActionRefused
from tapir.core.safety import Safety
from tapir.core.secrets import SecretStore
from tapir.docgen.loader import load_document
from tapir.dsl.budget import Budgets
from tapir.run import Runner, RunOptions
from tapir.runtime.screen_actions import screen_only_document

pytestmark = [pytest.mark.adb, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "notes" / "maestro_flow.tap"
NOTES = REPO / "samples" / "notes" / "notes.yaml"
PACKAGE = "org.tapir.notes"


def _bread(app: object) -> bool:
    shopping = next(n for n in app.state.notes if n.title == "Shopping list")  # type: ignore[attr-defined]
    return next(i for i in shopping.items if i.text == "Bread").checked  # type: ignore[no-any-return]


def _signed_in(app: object) -> tuple[str | None, str | None]:
    """Who the app is signed in as, and with what password (the sample's login flow types them)."""
    return app.state.account, app.state.password  # type: ignore[attr-defined]


@pytest.mark.parametrize("document", [True, False], ids=["its-document", "no-document"])
def test_the_sample_flow_runs_with_tapir_run_on_a_serial(document: bool, adb_port: int, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    script = SAMPLE
    if not document:  # the same flow and its login flow, without the `# doc:` line (Maestro's appId)
        script = tmp_path / SAMPLE.name
        script.write_text(SAMPLE.read_text(encoding="utf-8").replace("# doc: notes.yaml\n", "", 1), encoding="utf-8")
        (tmp_path / "_login.tap").write_text((SAMPLE.parent / "_login.tap").read_text(encoding="utf-8"))
        assert not script.read_text(encoding="utf-8").startswith("# doc:")
    app = get_app("notes")
    with start_sim([app], adb_port=adb_port, foreground=PACKAGE) as sim:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        code = main(["run", str(script), "--device", sim.serial, "--stats"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert out == "2 of 5 done\n"
        assert _bread(app)
        # the shared login flow (_login.tap, run by run_flow) typed both fields, the space included
        assert _signed_in(app) == ("ada@example.com", "correct horse")
        assert "error" not in err and "warning" not in err


def test_the_sample_flow_runs_in_the_repl_started_without_a_document(tmp_path: Path, adb_port: int) -> None:
    from tapir.repl import ReplSession

    out, err = io.StringIO(), io.StringIO()
    session = ReplSession(device="sim:notes", document=None, out=out, err=err, cwd=tmp_path, adb_port=adb_port,
                          budgets=Budgets(max_actions=100, timeout_s=120))
    try:
        assert session.link.document is None
        assert session.handle('tap_text("Shopping list")'), err.getvalue()
        assert session.handle('text_visible("Milk")') and out.getvalue().endswith("True\n")
        assert session.handle('press_key("back")')
        assert session.handle(f":load {SAMPLE}"), err.getvalue()
        assert "2 of 5 done" in out.getvalue()
        app = session.link.runtime().simulator.device.app(PACKAGE)
        assert _bread(app)
        assert _signed_in(app) == ("ada@example.com", "correct horse")
    finally:
        session.close()


def _run(source: str, doc: object, adb_port: int, safety: Safety | None = None, **options: object) -> object:
    return Runner(doc, "sim:notes", RunOptions(isolation="inline", adb_port=adb_port, safety=safety,  # type: ignore[arg-type]
                                               output=None, **options)).run(source, "s.tap")  # type: ignore[arg-type]


#: What a shell would take apart: spaces, quotes, `;`, `&`, `$`, backquotes, and a literal "%s".
ODD = "o'hara & \"co\"; $HOME `id` 100%s@example.com"


def test_type_text_types_odd_characters_and_a_secret_into_the_focused_fields(adb_port: int, tmp_path: Path) -> None:
    password = "pa ss'; rm -rf $HOME &"
    safety = Safety(secrets=SecretStore({"NOTES_PASSWORD": password}))
    states: list[object] = []
    source = ('open_link("tapirnotes://account")\ntap_text("Email")\n'
              f'type_text({ODD!r})\ntap_text("Password")\ntype_text(secret("NOTES_PASSWORD"))\n'
              'tap_text("Sign in")\n'
              f'assert_text("Signed in as {ODD.replace(chr(34), chr(92) + chr(34))}")\n')
    run = _run(source, screen_only_document(), adb_port, safety, trace=tmp_path / "trace.jsonl",
               on_connect=lambda rt: states.append(rt.simulator.app_state(PACKAGE).state))
    assert run.ok, run.error and run.error.render()  # type: ignore[attr-defined]
    assert (states[0].account, states[0].password) == (ODD, password)  # type: ignore[attr-defined]
    trace = (tmp_path / "trace.jsonl").read_text(encoding="utf-8")
    typed = [json.loads(line) for line in trace.splitlines() if '"type_text"' in line]
    assert [(r["args"]["text"], r["field"], r.get("verified")) for r in typed] == [
        (ODD, "email_input", True), ("*****", "password_input", None)]
    assert password not in trace and "rm -rf" not in trace


def test_type_text_needs_a_focused_field_and_a_secret_a_password_field(adb_port: int) -> None:
    nothing = _run('open_link("tapirnotes://account")\ntype_text("x")\n', screen_only_document(), adb_port)
    assert isinstance(nothing.error, ActionError)  # type: ignore[attr-defined]
    assert "no text field has the keyboard focus: nothing was typed" in nothing.error.message  # type: ignore[attr-defined]
    safety = Safety(secrets=SecretStore({"NOTES_PASSWORD": "hunter22"}))
    source = 'open_link("tapirnotes://account")\ntap_text("Email")\ntype_text(secret("NOTES_PASSWORD"))\n'
    refused = _run(source, screen_only_document(), adb_port, safety)
    assert isinstance(refused.error, SecretRefused), refused.error  # type: ignore[attr-defined]
    assert "not typed into the focused field 'email_input'" in refused.error.message  # type: ignore[attr-defined]
    assert "hunter22" not in refused.error.render()  # type: ignore[attr-defined]


def _delete_button() -> tuple[int, int]:
    """The centre of the note screen's Delete button (the simulator's layout is deterministic)."""
    from tapir.hierarchy import parse_uiautomator
    from tapir.sim.apps import get_app
    from tapir.sim.device import SimDevice

    device = SimDevice([get_app("notes")])
    device.run_shell("am start -a android.intent.action.VIEW -d tapirnotes://note/3")
    node = next(n for n in parse_uiautomator(device.dump_xml()).nodes if n.content_desc == "Delete")
    return node.bounds.center


@pytest.mark.parametrize("tap", ['tap_text("Delete")', "tap_at(DELETE_X, DELETE_Y)"])
def test_a_tapped_text_or_point_passes_the_sensitive_guard(tap: str, adb_port: int) -> None:
    # the note screen's Delete button (content-desc "Delete") without a document
    x, y = _delete_button()
    source = 'open_link("tapirnotes://note/3")\n' + tap.replace("DELETE_X, DELETE_Y", f"{x}, {y}") + \
        '\nassert_text("Delete note?", timeout=1)\n'
    refused = _run(source, screen_only_document(), adb_port)
    assert isinstance(refused.error, SensitiveActionRefused), refused.error  # type: ignore[attr-defined]
    assert "its label says 'delete'" in refused.error.message and "was not sent" in refused.error.message  # type: ignore[attr-defined]
    allowed = _run(source, screen_only_document(), adb_port, Safety(allowed={"delete": "--allow"}))
    assert allowed.ok, allowed.error and allowed.error.render()  # type: ignore[attr-defined]


def test_home_then_a_text_of_the_launcher_is_not_undone_by_the_confinement_guard(adb_port: int) -> None:
    source = 'tap_text("New note")\npress_key("home")\nassert_text("Notes")\ntap_text("Notes")\n' \
             'assert_text("New note")\nprint(scroll_screen("down"))\npress_key("volume_up")\n'
    run = _run(source, load_document(NOTES), adb_port)
    assert run.ok, run.error and run.error.render()  # type: ignore[attr-defined]


def test_a_link_no_app_opens_is_a_device_error_naming_it(adb_port: int) -> None:
    run = _run('open_link("https://example.com")\n', screen_only_document(), adb_port)
    assert isinstance(run.error, DeviceError)  # type: ignore[attr-defined]
    assert "no app on the device opens https://example.com" in run.error.message  # type: ignore[attr-defined]
