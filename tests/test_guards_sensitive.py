"""The sensitive-action guard (runtime/guards/sensitive.py, docs/safety.md).

A delete in the Notes sample app is refused by `tapir run` and `tapir test` with a message that
names the element and how to allow it, and nothing reaches the device; `--allow`, a `# allow:`
line and `allow()` let it through; a script from a model cannot allow itself anything; the REPL
asks through its confirmation hook; navigation never taps a sensitive element on its own, and a
watcher is held to the same rule. The dialog rule is checked on permission prompts in several
languages without a device.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tapir.core.document import AppDocument
from tapir.core.errors import SafetyError, ScreenNotReached, SensitiveActionRefused
from tapir.core.safety import Safety
from tapir.docgen.loader import load_document, loads_document
from tapir.docgen.symbols import build_symbols
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult, run_script
from tapir.hierarchy import parse_uiautomator
from tapir.runtime.connect import Connection, connect
from tapir.runtime.guards.sensitive import SensitiveGate
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.settle import Observation

REPO = Path(__file__).resolve().parent.parent
NOTES_DOC = REPO / "samples" / "notes" / "notes.yaml"
DELETE = ('$notes_screen__note_list.match("Passwords hint").tap()\n'
          "$note_screen__delete_button.tap()\n"
          "$delete_note_dialog__delete_button.tap()\n")
REFUSED = ("tap on $note_screen__delete_button ('Delete') refused: its label says 'delete'; a sensitive action "
           "needs permission, and the tap was not sent to the device")


class Notes:
    """One run on a fresh simulated Notes app behind the session's adb server."""

    def __init__(self, adb_port: int, tmp: Path, safety: Safety | None = None, doc: AppDocument | None = None,
                 source: str | None = None) -> None:
        self.doc = doc or load_document(NOTES_DOC)
        self.safety = safety if safety is not None else Safety()
        self.trace = tmp / "trace.jsonl"
        self.conn = Connection(device="sim:notes", document=self.doc, trace_path=str(self.trace), adb_port=adb_port,
                               safety=self.safety, source=source)
        self.runtime: DeviceRuntime | None = None

    def run(self, source: str) -> RunResult:
        def factory() -> DeviceRuntime:
            self.runtime = connect(self.conn)
            return self.runtime

        return run_script(source, factory, output=None, symbols=build_symbols(self.doc), filename="s.tap",
                          inputs=ScriptInputs(safety=self.safety))

    @property
    def state(self) -> Any:
        assert self.runtime is not None
        return self.runtime.simulator.device.app("org.tapir.notes").state

    def taps(self) -> list[str]:
        assert self.runtime is not None
        return [c for c in self.runtime.simulator.device.log if c.startswith("input tap")]

    def guards(self) -> list[dict[str, Any]]:
        return [r for r in map(json.loads, self.trace.read_text().splitlines()) if r["event"] == "guard"]


def _titles(state: Any) -> list[str]:
    return [n.title for n in state.notes]


# -- tapir run ----------------------------------------------------------------------------------------


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_tapir_run_refuses_a_delete_and_allow_lets_it_through(adb_port: int, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "delete.tap"
    script.write_text(f"# doc: {NOTES_DOC}\n{DELETE}print('deleted')\n")
    trace = tmp_path / "t.jsonl"
    code = main(["run", str(script), "--device", "sim:notes", "--adb-port", str(adb_port), "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"delete.tap:3:1: SensitiveActionRefused: {REFUSED}" in err
    assert ("hint: allow it with --allow delete (or --allow note_screen__delete_button); --allow sensitive allows "
            "every sensitive action; or in the script: a first comment line `# allow: delete`, or allow('delete') "
            "before it") in err
    guard = [r for r in map(json.loads, trace.read_text().splitlines()) if r["event"] == "guard"]
    assert [(g["target"], g["decision"]) for g in guard] == [("$note_screen__delete_button", "refused")]

    code = main(["run", str(script), "--device", "sim:notes", "--adb-port", str(adb_port), "--trace", str(trace),
                 "--allow", "delete"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "deleted\n", err
    guard = [r for r in map(json.loads, trace.read_text().splitlines()) if r["event"] == "guard"]
    assert [(g["target"], g["decision"], g["allowed_by"]) for g in guard] == [
        ("$note_screen__delete_button", "allowed", "--allow delete"),
        ("$delete_note_dialog__delete_button", "allowed", "--allow delete")]
    assert "it answers a warning dialog ('delete')" in guard[1]["why"]


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_refused_tap_sends_nothing_to_the_device(adb_port: int, tmp_path: Path) -> None:
    run = Notes(adb_port, tmp_path)
    result = run.run(DELETE)
    assert isinstance(result.error, SensitiveActionRefused) and result.error.message == REFUSED
    assert result.error.span is not None and result.error.span.line == 2
    # the note was opened (one tap), then nothing: the Delete icon was never touched
    assert len(run.taps()) == 1 and "Passwords hint" in _titles(run.state)
    assert run.runtime is not None and run.runtime.screen.current is not None
    assert run.runtime.screen.current.screen == "note_screen"


@pytest.mark.adb
@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["flag", "header", "allow()", "element"])
def test_each_way_of_allowing(adb_port: int, tmp_path: Path, how: str) -> None:
    source = DELETE
    safety = Safety()
    if how == "flag":
        safety = Safety.from_options(allow=["delete"])
    elif how == "header":
        source = "# allow: delete\n" + DELETE
    elif how == "allow()":
        source = 'allow("delete")\n' + DELETE
    else:  # the element alone: its tap passes, the dialog's Delete is another element
        safety = Safety.from_options(allow=["$note_screen__delete_button"])
    run = Notes(adb_port, tmp_path, safety, source=source)
    result = run.run(source)
    if how == "element":
        assert isinstance(result.error, SensitiveActionRefused)
        assert result.error.message.startswith("tap on $delete_note_dialog__delete_button ('Delete') refused: its "
                                               "label says 'delete'; it answers a warning dialog ('delete')")
        assert "Passwords hint" in _titles(run.state)
        return
    assert result.ok, result.error and result.error.render()
    assert "Passwords hint" not in _titles(run.state) and len(run.state.notes) == 11
    origin = {"flag": "--allow delete", "header": "# allow: delete (line 1)",
              "allow()": "allow('delete') at line 1"}[how]
    assert {g["allowed_by"] for g in run.guards()} == {origin}


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_allow_after_the_tap_is_too_late_and_cancel_needs_no_permission(adb_port: int, tmp_path: Path) -> None:
    run = Notes(adb_port, tmp_path, Safety.from_options(allow=["note_screen__delete_button"]))
    # Cancel declines the warning dialog: not sensitive
    result = run.run('$notes_screen__note_list.match("Passwords hint").tap()\n$note_screen__delete_button.tap()\n'
                     "$delete_note_dialog__cancel_button.tap()\n$delete_note_dialog__delete_button.tap()\n"
                     'allow("delete")\n')
    assert isinstance(result.error, SensitiveActionRefused) and result.error.span is not None
    assert result.error.span.line == 4  # Cancel went through; the Delete (reopened by navigation) did not
    assert "Passwords hint" in _titles(run.state)


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_script_from_a_model_cannot_allow_itself_anything(adb_port: int, tmp_path: Path) -> None:
    source = "# allow: delete\n" + DELETE
    run = Notes(adb_port, tmp_path, Safety(trust_script=False), source=source)
    result = run.run(source)
    assert isinstance(result.error, SensitiveActionRefused) and result.error.message == REFUSED
    assert result.error.hint is not None and ("the script's own `# allow: delete (line 1)` is ignored: a script "
                                              "written by a model cannot give itself permissions") in result.error.hint
    assert "# allow:" not in result.error.hint.split("; the script's own")[0]  # no advice it cannot follow
    run2 = Notes(adb_port, tmp_path, Safety(trust_script=False))
    result = run2.run('allow("delete")\n' + DELETE)
    assert isinstance(result.error, SafetyError)
    assert result.error.message == ("allow('delete') is refused: this script comes from a model, and a generated "
                                    "script cannot give itself permissions")
    assert result.error.hint == "if the task needs it, pass --allow delete to the command that runs the script"
    assert run2.runtime is None  # refused before any device was needed


# -- tapir test ---------------------------------------------------------------------------------------------


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_tapir_test_refuses_the_delete_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "delete_note.tap"
    script.write_text(f"# doc: {NOTES_DOC}\n{DELETE}assert len($notes_screen__note_list) >= 1\n")
    junit = tmp_path / "report.xml"
    artifacts = tmp_path / "artifacts"
    code = main(["test", str(script), "--junit", str(junit), "--artifacts", str(artifacts)])
    out = capsys.readouterr().out
    assert code == 1 and f"FAIL  {script}" in out and REFUSED in out and "1 failed" in out
    report = junit.read_text()
    assert 'type="SensitiveActionRefused"' in report and "--allow delete" in report
    code = main(["test", str(script), "--allow", "delete", "--artifacts", str(artifacts)])
    out = capsys.readouterr().out
    assert code == 0 and f"PASS  {script}" in out and "1 passed" in out and "failed" not in out


# -- the REPL asks ------------------------------------------------------------------------------------------


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_the_repl_asks_through_its_confirmation_hook(adb_port: int, tmp_path: Path) -> None:
    import io

    from tapir.repl.session import ReplSession

    questions: list[str] = []
    answers = [False, True, True]

    def confirm(question: str) -> bool:
        questions.append(question)
        return answers.pop(0)

    out, err = io.StringIO(), io.StringIO()
    session = ReplSession(device="sim:notes", document=NOTES_DOC, out=out, err=err, confirm=confirm,
                          adb_port=adb_port, cwd=tmp_path)
    try:
        assert session.handle('$notes_screen__note_list.match("Passwords hint").tap()')
        assert not session.handle("$note_screen__delete_button.tap()")  # answered no
        assert ("SensitiveActionRefused: tap on $note_screen__delete_button ('Delete') not done: the answer was no "
                "(its label says 'delete')") in err.getvalue()
        assert session.handle("$note_screen__delete_button.tap()")  # yes
        assert session.handle("$delete_note_dialog__delete_button.tap()")  # yes
        assert questions == [
            "Tap on $note_screen__delete_button ('Delete')? Sensitive: its label says 'delete'.",
            "Tap on $note_screen__delete_button ('Delete')? Sensitive: its label says 'delete'.",
            "Tap on $delete_note_dialog__delete_button ('Delete')? Sensitive: its label says 'delete'; it answers a "
            "warning dialog ('delete').",
        ]
        state = session.link.runtime().simulator.device.app("org.tapir.notes").state
        assert "Passwords hint" not in _titles(state)
        decisions = [r["decision"] for r in session.calls.records if r.get("event") == "guard"]
        assert decisions == ["declined", "confirmed", "confirmed"]
        # allow() in the session: no more questions
        assert session.handle('allow("delete")')
        assert session.handle('$notes_screen__note_list.match("Podcast list").tap()')
        assert session.handle("$note_screen__delete_button.tap()") and len(questions) == 3
    finally:
        session.close()


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_piped_repl_input_has_nobody_to_ask_and_refuses(adb_port: int, tmp_path: Path) -> None:
    import io

    from tapir.repl.session import ReplSession

    err = io.StringIO()
    session = ReplSession(device="sim:notes", document=NOTES_DOC, out=io.StringIO(), err=err, adb_port=adb_port,
                          cwd=tmp_path)
    try:
        assert session.handle('$notes_screen__note_list.match("Passwords hint").tap()')
        assert not session.handle("$note_screen__delete_button.tap()")
        assert REFUSED in err.getvalue()
    finally:
        session.close()


# -- navigation and watchers --------------------------------------------------------------------------------


def _marked(element: str) -> AppDocument:
    """The Notes document with ``element`` marked ``sensitive: true``."""
    text = NOTES_DOC.read_text()
    text, n = re.subn(rf"(\n      {element}:\n        kind: \w+\n)", r"\1        sensitive: true\n", text)
    assert n == 1
    doc = loads_document(text, source=str(NOTES_DOC)).document
    assert doc is not None and doc.element(element) is not None and doc.element(element).sensitive  # type: ignore[union-attr]
    return doc


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_navigation_never_taps_a_marked_element_on_its_own(adb_port: int, tmp_path: Path) -> None:
    doc = _marked("notes_screen__more_options_button")
    # a read takes no such step, even along its own path: nothing is sent
    run = Notes(adb_port, tmp_path, doc=doc)
    result = run.run("$account_screen__status_text.get_text()")
    assert isinstance(result.error, ScreenNotReached)
    assert ("notes_screen__more_options_button.tap() is marked sensitive in the app document (reads take no such "
            "step)") in result.error.message
    assert run.taps() == []
    # a borrowed path (the error text has none of its own) is not taken either
    run = Notes(adb_port, tmp_path, doc=doc)
    result = run.run("$account_screen__error_text.get_text()")
    assert isinstance(result.error, ScreenNotReached) and "is marked sensitive in the app document" in \
        result.error.message and run.taps() == []
    # along the target's own path an action may take it, with the run's permission only
    run = Notes(adb_port, tmp_path, doc=doc)
    result = run.run('$account_screen__email_input.set_text("ada@example.com")')
    assert isinstance(result.error, SensitiveActionRefused)
    assert result.error.message == (
        "tap on $notes_screen__more_options_button ('More options') by navigation (the step "
        "notes_screen__more_options_button.tap(), to reach $account_screen__email_input) refused: the app document "
        "marks $notes_screen__more_options_button sensitive; a sensitive action needs permission, and the tap was not "
        "sent to the device")
    assert run.taps() == []
    run = Notes(adb_port, tmp_path, Safety.from_options(allow=["notes_screen__more_options_button"]), doc=doc)
    assert run.run('$account_screen__email_input.set_text("ada@example.com")').ok
    assert [g["by"] for g in run.guards()] == [
        "navigation (the step notes_screen__more_options_button.tap(), to reach $account_screen__email_input)"]


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_watcher_cannot_tap_a_sensitive_answer(adb_port: int, tmp_path: Path) -> None:
    run = Notes(adb_port, tmp_path, Safety.from_options(allow=["note_screen__delete_button"]))
    result = run.run('$notes_screen__note_list.match("Passwords hint").tap()\n$note_screen__delete_button.tap()\n'
                     "watch($delete_note_dialog__delete_button)\n$notes_screen__new_note_button.tap()\n")
    assert isinstance(result.error, SensitiveActionRefused)
    assert result.error.message.startswith("tap on $delete_note_dialog__delete_button ('Delete') by the watcher "
                                           "watch($delete_note_dialog__delete_button) refused")
    assert "Passwords hint" in _titles(run.state)


# -- the dialog rule, without a device ------------------------------------------------------------------------


def _dialog(package: str, title: str, message: str, buttons: list[str]) -> str:
    nodes = [f'<node text="{title}" resource-id="{package}:id/permission_message" class="android.widget.TextView" '
             f'package="{package}" bounds="[80,900][1000,1000]" />']
    for i, b in enumerate(buttons):
        nodes.append(f'<node text="{b}" resource-id="{package}:id/permission_button{i}" class="android.widget.Button" '
                     f'package="{package}" clickable="true" bounds="[80,{1100 + 150 * i}][1000,{1230 + 150 * i}]" />')
    return (f'<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="{package}" '
            f'bounds="[0,0][1080,2400]">{"".join(nodes)}<node text="{message}" class="android.widget.TextView" '
            f'package="{package}" bounds="[80,1000][1000,1080]" /></node></hierarchy>')


@pytest.mark.parametrize(("title", "allow", "deny"), [
    ("Allow Notes to access your contacts?", "Allow", "Don't allow"),
    ("Autoriser Notes à accéder à vos contacts ?", "Autoriser", "Ne pas autoriser"),
    ("Notes den Zugriff auf deine Kontakte erlauben?", "Zulassen", "Nicht zulassen"),
    ("¿Permitir que Notas acceda a tus contactos?", "Permitir", "No permitir"),
])
def test_a_permission_prompt_is_sensitive_except_its_refusal(title: str, allow: str, deny: str) -> None:
    doc = load_document(NOTES_DOC)
    tree = parse_uiautomator(_dialog("com.android.permissioncontroller", title, "", [allow, deny]))
    obs = Observation(tree, None, "d", "com.android.permissioncontroller", 1)
    gate = SensitiveGate(doc, Safety(), lambda r: None, lambda: 0.0)
    button = {n.text: n for n in tree.nodes if n.clickable}
    reason = gate.reason(button[allow], obs, element=None, item=False)
    assert reason is not None and reason.why.startswith("it answers a permission dialog")
    assert "permission" in reason.tokens
    assert gate.reason(button[deny], obs, element=None, item=False) is None
    with pytest.raises(SensitiveActionRefused, match="answers a permission dialog"):
        gate.check("tap", button[allow], obs, element=None, shown=f"the view showing {allow!r}", item=False,
                   span=None)
    Safety.from_options(allow=["permission"])
    allowed = SensitiveGate(doc, Safety.from_options(allow=["permission"]), lambda r: None, lambda: 0.0)
    allowed.check("tap", button[allow], obs, element=None, shown="x", item=False, span=None)


@pytest.mark.parametrize(("message", "buttons", "tapped", "sensitive"), [
    # Simple Mobile Tools: information with one OK, nothing to decline: acknowledging is not sensitive
    ("WARNING: Some launchers do not handle app icon customization properly.", ["OK"], "OK", False),
    ("Warning: this folder is empty", ["Got it"], "Got it", False),
    # the same words as a question, with a way out: the answer that goes ahead is sensitive
    ("Are you sure you want to delete this note?", ["Yes", "Cancel"], "Yes", True),
    ("Are you sure you want to delete this note?", ["Yes", "Cancel"], "Cancel", False),
    # a lone button that itself deletes is sensitive by its label
    ("Warning: this cannot be undone", ["Delete"], "Delete", True),
])
def test_a_warning_without_a_way_to_decline_only_informs(message: str, buttons: list[str], tapped: str,
                                                          sensitive: bool) -> None:
    doc = load_document(NOTES_DOC)
    tree = parse_uiautomator(_dialog("org.tapir.notes", message, "", buttons))
    obs = Observation(tree, None, "d", "org.tapir.notes", 1)
    gate = SensitiveGate(doc, Safety(), lambda r: None, lambda: 0.0)
    button = next(n for n in tree.nodes if n.clickable and n.text == tapped)
    assert (gate.reason(button, obs, element=None, item=False) is not None) is sensitive


def test_a_row_of_content_is_not_a_control() -> None:
    """A note titled "Call the plumber" is content: tapping it opens it; a menu's "Delete" row is
    a control."""
    doc = load_document(NOTES_DOC)
    gate = SensitiveGate(doc, Safety(), lambda r: None, lambda: 0.0)
    row = ('<hierarchy rotation="0"><node class="android.widget.LinearLayout" package="org.tapir.notes" '
           'clickable="true" bounds="[0,300][1080,500]"><node text="Call the plumber" '
           'resource-id="org.tapir.notes:id/note_title" class="android.widget.TextView" package="org.tapir.notes" '
           'bounds="[40,320][1000,400]" /></node></hierarchy>')
    tree = parse_uiautomator(row)
    node = tree.nodes[0]
    notes_list = doc.element("notes_screen__note_list")
    assert gate.reason(node, Observation(tree, "notes_screen", "d", "org.tapir.notes", 1), element=notes_list,
                       item=True) is None
    menu = doc.element("note_options_menu__options")
    reason = gate.reason(node, Observation(tree, "note_options_menu", "d", "org.tapir.notes", 1), element=menu,
                         item=True)
    assert reason is not None and reason.why == "its label says 'call'"


TABS = """\
format: 1
app: {package: org.t.dialer, name: Dialer, start_screen: contacts}
screens:
  contacts:
    description: the contacts
    signature: {activity: .Main}
    elements:
      contacts__call_history_tab: {kind: tab, description: shows the calls made,
                                   identifiers: ["//node[@text='Call history']"]}
      contacts__call_button: {kind: button, description: calls the number, identifiers: ["//node[@text='Call']"]}
"""


def test_a_tab_shows_a_page_whatever_it_is_called() -> None:
    """A dialer's "Call history" tab calls nobody: neither the guard nor navigation refuses it; its
    "Call" button still is sensitive."""
    from tapir.core.document import Step
    from tapir.runtime.navigation import step_risk

    doc = loads_document(TABS, "dialer.yaml").document
    assert doc is not None
    gate = SensitiveGate(doc, Safety(), lambda r: None, lambda: 0.0)
    tree = parse_uiautomator(
        '<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="org.t.dialer" '
        'bounds="[0,0][1080,2400]">'
        '<node text="Call history" class="android.widget.TextView" package="org.t.dialer" clickable="true" '
        'bounds="[0,100][540,200]" /><node text="Call" class="android.widget.Button" package="org.t.dialer" '
        'clickable="true" bounds="[0,300][540,400]" /></node></hierarchy>')
    obs = Observation(tree, "contacts", "d", "org.t.dialer", 1)
    tab, call = (next(n for n in tree.nodes if n.text == t) for t in ("Call history", "Call"))
    assert gate.reason(tab, obs, element=doc.element("contacts__call_history_tab"), item=False) is None
    reason = gate.reason(call, obs, element=doc.element("contacts__call_button"), item=False)
    assert reason is not None and reason.why == "its label says 'call'"
    assert step_risk(doc, Step("contacts__call_history_tab", "tap")) is None
    assert step_risk(doc, Step("contacts__call_button", "tap")) == "contacts__call_button.tap() is sensitive ('call')"


def test_an_allow_naming_no_element_is_a_usage_error_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "delete.tap"
    script.write_text(f"# doc: {NOTES_DOC}\nprint('ran')\n{DELETE}")
    code = main(["run", str(script), "--device", "sim:notes", "--allow", "note_screen__delete_buton"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("tapir: --allow note_screen__delete_buton: $note_screen__delete_buton is not an element of the app "
                   "document; did you mean $note_screen__delete_button?\n")
    assert main(["run", str(script), "--allow", "??"]) == 2
    assert "tapir: --allow ??: '??' is not something to allow" in capsys.readouterr().err
