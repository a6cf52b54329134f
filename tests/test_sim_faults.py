"""The simulator's fault options in process (no adb): events, the system dialog, a late app,
and their command-line forms. The same faults through real adb are in test_faults_e2e.py."""

from __future__ import annotations

import time

import pytest
from lxml import etree

from tapir.sim.apps import get_app
from tapir.sim.device import SimDevice
from tapir.sim.errors import SimUsageError
from tapir.sim.faults import FaultEvent, Faults, parse_event
from tapir.sim.launcher import LAUNCHER_PACKAGE
from tapir.sim.system_dialog import PERMISSION_PACKAGE, SystemDialog

MUSIC = "org.tapir.music"


def device(**faults: object) -> SimDevice:
    dev = SimDevice([get_app("music")], faults=Faults(**faults))  # type: ignore[arg-type]
    dev.start_app(MUSIC)
    return dev


def dump(dev: SimDevice) -> etree._Element:
    out = dev.run_shell("uiautomator dump /sdcard/d.xml && cat /sdcard/d.xml").output.decode()
    return etree.fromstring(out[out.index("<?xml"):].encode())


def center(root: etree._Element, text: str) -> tuple[int, int]:
    node = root.xpath(f"//node[@text={text!r}]")[0]
    x1, y1, x2, y2 = (int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))
    return (x1 + x2) // 2, (y1 + y2) // 2


def test_an_event_fires_once_after_its_count_of_commands() -> None:
    dev = device(events=[FaultEvent("crash", after=2)])
    dev.run_shell("input keyevent KEYCODE_DPAD_DOWN")
    dev.run_shell("uiautomator dump")  # not an input: not counted
    assert dev.current_package == MUSIC and dev.faults.events
    dev.run_shell("input keyevent KEYCODE_DPAD_DOWN")
    assert dev.current_package == LAUNCHER_PACKAGE and not dev.is_running(MUSIC)
    assert [e.what for e in dev.faults.fired] == ["crash"] and not dev.faults.events


def test_equal_events_count_apart() -> None:
    faults = Faults()
    faults.arm(FaultEvent("home", after=1))
    faults.take_events("input")
    faults.arm(FaultEvent("home", after=1))
    assert len(faults.take_events("input")) == 1 and len(faults.fired) == 2


def test_an_event_may_be_a_tests_own_change() -> None:
    seen: list[str] = []
    dev = device(events=[FaultEvent(lambda d: seen.append(d.current_package), after=1, command="uiautomator")])
    dev.run_shell("uiautomator dump")
    assert seen == [MUSIC]


def test_the_permission_dialog_takes_every_touch_until_answered() -> None:
    dev = device()
    dev.faults.arm(FaultEvent("dialog", after=1))
    dev.run_shell("input swipe 540 1800 540 900")
    root = dump(dev)
    assert root.xpath("//node/@package")[0] == PERMISSION_PACKAGE
    assert root.xpath("//node[@resource-id='com.android.permissioncontroller:id/permission_message']/@text") == [
        "Allow Music to send you notifications?"]
    dev.run_shell("input keyevent KEYCODE_BACK")  # the dialog is modal
    dev.run_shell("input tap 540 200")  # nor does a touch outside its buttons
    assert dev.dialog is not None and dev.current_package == MUSIC
    x, y = center(root, "Don\u2019t allow")
    dev.run_shell(f"input tap {x} {y}")
    assert dev.dialog is None and dev.dialog_answers == ["Don\u2019t allow"]
    assert dump(dev).xpath("//node/@package")[0] == MUSIC
    assert dev.run_shell("screencap -p").output.startswith(b"\x89PNG")


def test_a_cancelable_dialog_goes_with_back_and_a_crash_takes_it_away() -> None:
    dev = device()
    dev.show_dialog(SystemDialog.permission("Music", owner=MUSIC, cancelable=True))
    dev.run_shell("input keyevent KEYCODE_BACK")
    assert dev.dialog is None and dev.current_package == MUSIC  # the BACK went to the dialog only
    dev.show_dialog()
    assert dev.screenshot_png().startswith(b"\x89PNG")
    assert dev.crash() == MUSIC and dev.dialog is None
    assert dev.crash() is None  # the launcher does not crash


def test_a_late_app_shows_an_inputs_effect_after_its_lag() -> None:
    dev = device(input_lag=0.3)
    before = dump(dev)
    x, y = center(before, before.xpath("//node[@resource-id='org.tapir.music:id/song_title']/@text")[0])
    dev.run_shell(f"input tap {x} {y}")  # plays the song: the now-playing bar shows
    assert etree.tostring(dump(dev)) == etree.tostring(before)  # not redrawn yet
    time.sleep(0.35)
    assert etree.tostring(dump(dev)) != etree.tostring(before)


def test_fault_options_are_checked() -> None:
    with pytest.raises(SimUsageError, match="unknown fault event 'boom'"):
        FaultEvent("boom")
    with pytest.raises(SimUsageError, match="at least one command"):
        FaultEvent("crash", after=0)
    with pytest.raises(SimUsageError, match="drop-at must be one of open, reply"):
        Faults(drop_at="later")
    with pytest.raises(SimUsageError, match="input lag must not be negative"):
        Faults.from_options(input_lag=-1)
    assert parse_event("crash@3") == FaultEvent("crash", 3, "input")
    assert parse_event("dialog@2:uiautomator") == FaultEvent("dialog", 2, "uiautomator")
    for bad in ("crash", "crash@x", "@2"):
        with pytest.raises(SimUsageError):
            parse_event(bad)
    assert FaultEvent("crash", 3).describe() == "crash after 3 `input`"


@pytest.mark.parametrize("argv, message", [
    (["--event", "crash@x"], "an event looks like WHAT@N or WHAT@N:COMMAND"),
    (["--event", "boom@2"], "unknown fault event 'boom'"),
    (["--input-lag", "-1"], "input lag must not be negative"),
])
def test_tapir_sim_refuses_bad_fault_options_before_starting(argv: list[str], message: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    assert main(["sim", "--adb-port", "15999", *argv]) == 2
    assert message in capsys.readouterr().err
