"""Screen-level actions without a device: the registry entries (so the checker, the language
service, page objects and prompts know them), the checker's note on which element a text names,
key names, the refusal of an element in a run without a document, and what the simulator does for
them (deep links, the keyboard, ``dumpsys input_method``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.core.errors import ScriptError
from tapir.docgen.symbols import build_symbols, load_symbols
from tapir.dsl.checker import check_source
from tapir.dsl.parser import parse
from tapir.dsl.registry import REGISTRY, Namespace
from tapir.dsl.screen_calls import element_refs, key_code
from tapir.hierarchy import UINode, parse_uiautomator
from tapir.runtime.screen_actions import keyboard_shown, screen_only_document
from tapir.sim.apps import get_app
from tapir.sim.device import SimDevice

REPO = Path(__file__).resolve().parent.parent
NOTES = REPO / "samples" / "notes" / "notes.yaml"
SAMPLE = REPO / "samples" / "notes" / "maestro_flow.tap"

SCREEN_CALLS = ("tap_text", "long_tap_text", "tap_at", "swipe", "scroll_screen", "press_key", "type_text",
                "hide_keyboard", "open_link", "assert_text", "text_visible")


def test_every_screen_action_is_a_global_of_the_registry_and_acts_are_counted() -> None:
    for name in SCREEN_CALLS:
        entry = REGISTRY.get(Namespace.GLOBAL, name)
        assert entry is not None and entry.needs_device and not entry.navigates, name
        assert entry.acts_on_device == (name not in ("assert_text", "text_visible")), name
    assert REGISTRY.get(Namespace.GLOBAL, "swipe").params[0].choices == ("up", "down", "left", "right")
    assert REGISTRY.get(Namespace.GLOBAL, "tap_text").signature() == "tap_text(text: str, timeout: float = 5) -> None"


def test_the_checker_names_the_element_a_text_is_on_a_document() -> None:
    symbols = load_symbols(NOTES)
    source = ('tap_text("New note")\nassert_text("nothing of the document")\n'
              'if text_visible(text="not now"): tap_text("Navigate up")\n')
    notes = [d for d in check_source(source, symbols) if d.code == "text-element"]
    assert [(d.severity, d.span.line, d.message) for d in notes] == [
        ("info", 1, "'New note' is $notes_screen__new_note_button"),
        ("info", 3, "'not now' is $rate_dialog__not_now_button"),
        ("info", 3, "'Navigate up' is $note_screen__navigate_up_button or $edit_note_screen__navigate_up_button "
                    "or $account_screen__navigate_up_button"),
    ]
    assert check_source(source, None) == []  # no document: nothing to say, nothing wrong


def test_element_texts_come_from_the_identifiers_and_stay_out_of_the_compiled_table() -> None:
    symbols = load_symbols(NOTES)
    assert symbols.element("notes_screen__new_note_button").texts == ("New note",)
    assert "texts" not in symbols.to_json()  # the golden compiled tables are unchanged
    assert build_symbols(screen_only_document()).elements == ()


def test_the_checker_refuses_wrong_screen_calls() -> None:
    source = 'swipe("sideways")\ntap_at("a", 2)\npress_key()\ntap_text("x", 1, 2)\n'
    codes = [(d.span.line, d.code) for d in check_source(source, None)]
    assert codes == [(1, "arg-type"), (2, "arg-type"), (3, "arg-count"), (4, "arg-count")]


@pytest.mark.parametrize(("key", "sent"), [
    ("home", "KEYCODE_HOME"), ("App_Switch", "KEYCODE_APP_SWITCH"), ("volume_up", "KEYCODE_VOLUME_UP"),
    ("KEYCODE_TAB", "KEYCODE_TAB"), ("media_play", "KEYCODE_MEDIA_PLAY"), (66, "66"),
    ("endcall", "KEYCODE_ENDCALL"), ("BACKSLASH", "KEYCODE_BACKSLASH"), ("F1", "KEYCODE_F1"),
])
def test_key_names(key: str | int, sent: str) -> None:
    assert key_code(key) == sent


def test_a_key_that_is_no_key_says_what_was_meant() -> None:
    with pytest.raises(ScriptError, match="'vol-up' is not a key name"):
        key_code("vol-up")
    with pytest.raises(ScriptError, match="not an Android key code"):
        key_code(999)
    # one of ours misspelt is not sent to the phone as KEYCODE_HME
    for typo, meant in (("hme", "home"), ("volum_up", "volume_up"), ("settngs", "settings")):
        with pytest.raises(ScriptError, match=f"did you mean '{meant}'"):
            key_code(typo)


def test_the_sample_flow_names_no_element_and_checks_clean_with_and_without_the_document() -> None:
    source = SAMPLE.read_text(encoding="utf-8")
    assert element_refs(parse(source)) == []
    # (named as the file: its login flow, _login.tap, is found beside it and checked too)
    assert [d for d in check_source(source, None, str(SAMPLE)) if d.severity != "info"] == []
    assert [d for d in check_source(source, load_symbols(NOTES), str(SAMPLE)) if d.severity != "info"] == []


def test_a_run_without_a_document_refuses_an_element_at_its_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    script = tmp_path / "s.tap"
    script.write_text('tap_text("Notes")\n$notes_screen__new_note_button.tap()\n', encoding="utf-8")
    code = main(["run", str(script), "--device", "emulator-5554"])
    err = capsys.readouterr().err
    assert code == 1
    # the first element is where the document is needed: tap_text() on line 1 needs none
    assert f"{script}:2:1: error[no-document]: this script works on the app but names no app document" in err
    assert "Traceback" not in err


def test_screen_level_actions_alone_need_no_document() -> None:
    from tapir.service import Workspace

    ws = Workspace()
    # the sample without its `# doc:` line (its login flow, checked too, has none)
    source = SAMPLE.read_text(encoding="utf-8").replace("# doc: notes.yaml\n", "", 1)
    checked = ws.check(str(SAMPLE), source, doc=None)
    assert checked.document is None
    assert [d.code for d in checked.diagnostics if d.severity in ("error", "warning")] == []
    launch = ws.check("s.tap", 'tap_text("Notes")\nlaunch_app()\n', doc=None)
    assert [(d.code, d.span.line) for d in launch.diagnostics] == [("no-document", 2)]


# -- the simulator ---------------------------------------------------------------------------------


@pytest.fixture
def notes_device() -> SimDevice:
    device = SimDevice([get_app("notes")])
    device.start_app("org.tapir.notes")
    return device


def test_a_deep_link_opens_its_app_where_it_points(notes_device: SimDevice) -> None:
    notes_device.go_home()
    result = notes_device.run_shell("am start -W -a android.intent.action.VIEW -d tapirnotes://note/3")
    assert result.exit_code == 0, result.text
    assert notes_device.current_package == "org.tapir.notes"
    assert "Book recommendations" in notes_device.dump_xml()
    web = notes_device.run_shell("am start -a android.intent.action.VIEW -d https://example.com")
    assert web.exit_code == 1 and "unable to resolve Intent" in web.text


def test_the_keyboard_shows_after_a_tap_on_a_field_and_escape_hides_it(notes_device: SimDevice) -> None:
    def shown() -> bool | None:
        return keyboard_shown(notes_device.run_shell("dumpsys input_method").text)

    notes_device.run_shell("am start -a android.intent.action.VIEW -d tapirnotes://new")
    assert shown() is False
    app = notes_device.foreground
    x, y = next(n.bounds.center for n in _nodes(notes_device) if n.resource_name == "note_title_input")
    app.tap(x, y)
    assert shown() is True
    notes_device.run_shell("input keyevent KEYCODE_ESCAPE")
    assert shown() is False
    assert "note_title_input" in notes_device.dump_xml()  # ESCAPE closed the keyboard, not the editor


# -- type_text: the focused field, on the simulator through the adb client (no server) ------------


def _typing_run(source: str, secrets: dict[str, str] | None = None) -> tuple[object, object, list[dict[str, object]]]:
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from runtime_helpers import make_runtime

    from tapir.core.safety import Safety
    from tapir.core.secrets import SecretStore
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.interpreter import run_script

    app = get_app("notes")
    safety = Safety(secrets=SecretStore(secrets or {}))
    rt, _, trace = make_runtime(app, screen_only_document(), safety=safety)
    run = run_script(source, lambda: rt, output=None, inputs=ScriptInputs({}, safety))
    return run, app.state, [r for r in trace.records if r.get("call") == "type_text"]


def test_type_text_is_maestros_input_text_and_appiums_send_keys() -> None:
    from tapir.dsl.vocabulary import foreign

    entry = REGISTRY.get(Namespace.GLOBAL, "type_text")
    assert entry.signature() == "type_text(text: str | secret) -> None"
    for word, origin in (("inputText", "Maestro"), ("sendKeys", "Appium"), ("send_keys", "Appium")):
        found = foreign(word, Namespace.GLOBAL)
        assert found is not None and (found.call, found.origin) == ('type_text("text")', origin)
    # on an element the same words still mean set_text()
    assert foreign("sendKeys", Namespace.ELEMENT).name == "set_text"  # type: ignore[union-attr]
    codes = [(d.span.line, d.code) for d in check_source('type_text()\ntype_text(3)\ninputText("a")\n', None)]
    assert codes == [(1, "arg-count"), (2, "arg-type"), (3, "unknown-function")]


def test_type_text_appends_to_the_focused_field_with_spaces_and_shell_characters() -> None:
    odd = "a b  'c' \"d\" $HOME; `id` & 5%s|x"
    run, state, typed = _typing_run(f'open_link("tapirnotes://account")\ntap_text("Email")\ntype_text("ada ")\n'
                                    f'type_text({odd!r})\ntap_text("Password")\ntype_text("pw")\ntap_text("Sign in")\n')
    assert run.ok, run.error and run.error.render()  # type: ignore[attr-defined]
    assert (state.account, state.password) == ("ada " + odd, "pw")  # type: ignore[attr-defined]
    assert [(r["field"], r.get("verified")) for r in typed] == [
        ("email_input", True), ("email_input", True), ("password_input", None)]


def test_type_text_without_a_focused_field_or_text_types_nothing() -> None:
    run, state, _ = _typing_run('open_link("tapirnotes://account")\ntype_text("ada")\n')
    assert run.error is not None and run.error.span.line == 2  # type: ignore[attr-defined]
    assert run.error.message == "no text field has the keyboard focus: nothing was typed"  # type: ignore[attr-defined]
    assert 'tap_text("Email")' in (run.error.hint or "")  # type: ignore[attr-defined]
    empty, _, _ = _typing_run('type_text("")\n')
    assert isinstance(empty.error, ScriptError) and "needs a text to type" in empty.error.message  # type: ignore[attr-defined]


def test_a_secret_is_typed_into_a_password_field_only_and_never_traced() -> None:
    source = 'open_link("tapirnotes://account")\ntap_text("{field}")\ntype_text(secret("PW"))\n'
    run, state, typed = _typing_run(source.format(field="Password"), {"PW": "s3cret value"})
    assert run.ok and state.password is None  # type: ignore[attr-defined]
    assert [r["args"] for r in typed] == [{"text": "*****"}] and "s3cret" not in repr(typed)
    refused, _, _ = _typing_run(source.format(field="Email"), {"PW": "s3cret value"})
    assert refused.error is not None and refused.error.code == "secret"  # type: ignore[attr-defined]
    assert "not typed into the focused field 'email_input'" in refused.error.message  # type: ignore[attr-defined]


def _nodes(device: SimDevice) -> list[UINode]:
    return list(parse_uiautomator(device.dump_xml()).nodes)
