"""The sample apps' shared dialogs (confirmations, forms, notices, single choices) come from one
helper, ``tapir.sim.toolkit.dialogs.alert``, and are the dialogs the apps built by hand before."""

from __future__ import annotations

import inspect

import pytest

from tapir.sim.apps import APP_NAMES, get_app
from tapir.sim.toolkit import Button, Dialog, Input, Radio, RadioGroup, Text, ToolkitApp, alert
from tapir.sim.toolkit.dump import dump_xml
from tapir.sim.toolkit.layout import FormState, LayoutContext, layout_dialog


def _dump(dialog: Dialog) -> str:
    return dump_xml([layout_dialog(dialog, LayoutContext("org.tapir.test", FormState()))])


def test_alert_builds_the_dialog_an_app_would_build_by_hand() -> None:
    def done() -> None:
        pass

    by_hand = Dialog(title="Delete?", message="Gone for good.", positive=Button("Delete", on_tap=done),
                     negative=Button("Cancel", on_tap=done), cancelable=False)
    built = alert("Delete?", message="Gone for good.", ok=("Delete", done), cancel=("Cancel", done),
                  cancelable=False)
    assert built == by_hand and _dump(built) == _dump(by_hand)
    form = alert("Name", body=[Input(name="n", id="n"), None], ok=("OK", done), cancel=("Cancel", done),
                 ok_enabled=False, neutral=("Later", done))
    assert form == Dialog(title="Name", body=[Input(name="n", id="n")],
                          positive=Button("OK", enabled=False, on_tap=done),
                          negative=Button("Cancel", on_tap=done), neutral=Button("Later", on_tap=done))


def test_the_app_methods_close_with_the_apps_close() -> None:
    app = get_app("notes")
    assert isinstance(app, ToolkitApp)
    close = app.close
    assert app.confirm_dialog("Q?", "M.", ("Yes", print), cancel="No") == Dialog(
        title="Q?", message="M.", positive=Button("Yes", on_tap=print), negative=Button("No", on_tap=close))
    assert app.notice_dialog("Info", message="M.") == Dialog(title="Info", message="M.",
                                                            positive=Button("OK", on_tap=close))
    body = [Text("x")]
    assert app.form_dialog("F", body, ("Save", print), ok_enabled=False) == Dialog(
        title="F", body=body, positive=Button("Save", enabled=False, on_tap=print),
        negative=Button("Cancel", on_tap=close))
    choose = app.choice_dialog("Sort by", "g", ["A", "B"], "B", print)
    group = choose.body[0]
    assert isinstance(group, RadioGroup) and group.id == "g"
    radios = [r for r in group.children if isinstance(r, Radio)]
    assert [(r.text, r.checked, r.on_tap.args) for r in radios] == [  # type: ignore[union-attr]
        ("A", False, ("A",)), ("B", True, ("B",))]
    assert (choose.title, choose.positive, choose.negative) == ("Sort by", None, Button("Cancel", on_tap=close))


@pytest.mark.parametrize("name", APP_NAMES)
def test_no_sample_app_builds_a_dialog_by_hand(name: str) -> None:
    source = inspect.getsource(inspect.getmodule(type(get_app(name))))  # type: ignore[arg-type]
    assert "Dialog(" not in source


def test_a_confirmation_answers_and_cancels_as_before() -> None:
    app = get_app("notes")
    assert isinstance(app, ToolkitApp)
    app.open("delete_note", note=1)
    assert [n.text for n in app.window().walk() if n.cls == "android.widget.Button"] == ["Cancel", "Delete"]
    assert app.find(id="android:id/button1").text == "Delete"  # type: ignore[union-attr]
    app.tap_on(text="Cancel")
    assert app.current_dialog is None
    app.open("rate_app")  # not cancelable: BACK leaves it up
    app.key("KEYCODE_BACK")
    assert app.current_dialog == "rate_app"
    app.tap_on(text="Not now")
    assert app.current_dialog is None
