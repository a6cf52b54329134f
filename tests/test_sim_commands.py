"""The simulated device's command table: every command it answered before the handlers moved to
``tapir.sim.commands`` still answers, each through one handler, and what it does not know is
refused as Android refuses it."""

from __future__ import annotations

import inspect

import pytest
from sim_tiny_app import PACKAGE, TinyApp

from tapir.sim.commands import DEVICE_COMMANDS, SELF_LOCKING
from tapir.sim.commands.service import SERVICES
from tapir.sim.device import SimDevice
from tapir.sim.faults import FaultEvent
from tapir.sim.launcher import LAUNCHER_PACKAGE
from tapir.sim.shell import GENERIC_COMMANDS

#: The Android commands SimDevice answered when its handlers were methods of the device.
ANDROID_BEFORE = {"uiautomator", "input", "am", "monkey", "pm", "cmd", "dumpsys", "wm", "screencap", "getprop",
                  "setprop", "settings", "pidof", "ime", "getevent", "sleep"}
#: The shell's own commands (builtins and toybox), which the device answered too.
GENERIC_BEFORE = {"echo", "true", "false", ":", "exit", "cd", "pwd", "export", "unset", "sleep", "cat", "rm",
                  "mkdir", "touch", "ls", "md5sum", "grep", "head", "tail", "wc", "id", "whoami", "which", "toybox"}


@pytest.fixture
def dev() -> SimDevice:
    device = SimDevice([TinyApp()])
    device.start_app(PACKAGE)
    return device


def test_the_table_holds_every_android_command_once() -> None:
    assert set(DEVICE_COMMANDS) == ANDROID_BEFORE
    handlers = list(DEVICE_COMMANDS.values())
    assert len({id(h) for h in handlers}) == len(handlers)  # no handler under two names
    for name, handler in DEVICE_COMMANDS.items():
        assert inspect.isfunction(handler), name
        assert handler.__module__.startswith("tapir.sim.commands."), (name, handler.__module__)
        assert list(inspect.signature(handler).parameters) == ["device", "ctx"], name
    assert SELF_LOCKING <= set(DEVICE_COMMANDS)


def test_the_table_cannot_be_changed_by_accident() -> None:
    with pytest.raises(TypeError):
        DEVICE_COMMANDS["reboot"] = DEVICE_COMMANDS["am"]  # type: ignore[index]


def test_the_device_shell_answers_every_command_it_answered_before(dev: SimDevice) -> None:
    assert set(GENERIC_COMMANDS) == GENERIC_BEFORE
    names = sorted(ANDROID_BEFORE | GENERIC_BEFORE)
    result = dev.run_shell("which " + " ".join(n for n in names if n != ":"))
    assert result.exit_code == 0
    assert result.text.split() == [f"/system/bin/{n}" for n in names if n != ":"]
    for name in ANDROID_BEFORE:
        out = dev.run_shell(name).text
        assert "inaccessible or not found" not in out and "simulator error" not in out, (name, out)


def test_an_unknown_command_is_refused_as_mksh_refuses_it(dev: SimDevice) -> None:
    result = dev.run_shell("frobnicate --now")
    assert (result.stdout, result.stderr, result.exit_code) == (
        b"", b"/system/bin/sh: frobnicate: inaccessible or not found\n", 127)
    result = dev.run_shell("/system/bin/frobnicate")
    assert result.stderr == b"/system/bin/sh: /system/bin/frobnicate: inaccessible or not found\n"
    assert result.exit_code == 127
    assert dev.run_shell("frobnicate; echo $?").text.endswith("127\n")


@pytest.mark.parametrize(("line", "stderr", "status"), [
    ("cmd nope", "cmd: Can't find service: nope\n", 20),
    ("dumpsys nope", "Can't find service: nope\n", 0),
    ("am frob", "Unknown command: frob\n", 1),
    ("pm frob", "Unknown command: frob\n", 1),
    ("wm frob", "Error: Unknown command: frob\n", 1),
    ("settings frob global", "settings: Invalid command: frob\n", 1),
])
def test_unknown_services_and_verbs_are_refused_as_before(dev: SimDevice, line: str, stderr: str,
                                                          status: int) -> None:
    result = dev.run_shell(line)
    assert (result.stderr.decode(), result.exit_code) == (stderr, status)


def test_cmd_runs_each_service_through_the_commands_handler(dev: SimDevice) -> None:
    assert dev.run_shell("cmd -l").text == "Currently running services:\n" + "".join(
        f"  {s}\n" for s in sorted(SERVICES))
    assert all(handler in DEVICE_COMMANDS.values() for handler in SERVICES.values())
    assert dev.run_shell("cmd package list packages -3").text == dev.run_shell("pm list packages -3").text
    assert dev.run_shell("cmd window size").text == dev.run_shell("wm size").text == "Physical size: 1080x2400\n"


def test_faults_fire_after_locked_commands_but_not_after_sleep(dev: SimDevice) -> None:
    dev.faults.arm(FaultEvent("home", after=1, command="sleep"))
    assert dev.run_shell("sleep 1").exit_code == 0
    assert dev.current_package == PACKAGE  # sleep takes the lock itself: no fault events after it
    dev.faults.events.clear()
    dev.faults.arm(FaultEvent("home", after=1, command="getprop"))
    dev.run_shell("getprop ro.serialno")
    assert dev.current_package == LAUNCHER_PACKAGE


def test_names_that_lived_in_device_still_import() -> None:
    from tapir.sim.device import (  # noqa: F401
        ADB_KEYBOARD_ACTIONS,
        ADB_KEYBOARD_IME,
        DEFAULT_DUMP_PATH,
        DENSITY,
        IMES,
        LATIN_IME,
        LONG_PRESS_MS,
        SYSTEM_PACKAGES,
        TOUCH_SLOP_PX,
        FileSystem,
        default_props,
    )

    assert DEFAULT_DUMP_PATH == "/sdcard/window_dump.xml" and DENSITY == 420
    assert default_props("s", "m")["ro.sf.lcd_density"] == "420"
