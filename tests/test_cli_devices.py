"""Choosing the device and the adb server from the command line: ``--device``, ``$ANDROID_SERIAL``,
``--adb-port``, ``$ANDROID_ADB_SERVER_PORT``; and the commands ``tapir sim`` suggests.

The device runs use a simulator attached to the test session's private adb server, reached by
serial exactly as a phone would be.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tapir.cli import main
from tapir.cli.sim import try_commands

PLAY_SONG = Path(__file__).resolve().parent.parent / "samples" / "music" / "play_song.tap"


@pytest.fixture
def music(adb_port: int, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    for name in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_PORT"):
        monkeypatch.delenv(name, raising=False)
    app = get_app("music")
    with start_sim([app], adb_port=adb_port, foreground="org.tapir.music") as sim:
        yield sim, app


@pytest.mark.adb
def test_android_serial_is_the_device_when_there_is_no_flag(music: tuple[Any, Any], adb_port: int,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    sim, app = music
    monkeypatch.setenv("ANDROID_SERIAL", sim.serial)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
    code = main(["run", str(PLAY_SONG)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "now playing: Lanterns by Harbor Lane" in out and app.state.song(app.state.now_playing).title == "Lanterns"


@pytest.mark.adb
def test_adb_port_flag_chooses_the_server(music: tuple[Any, Any], adb_port: int,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sim, app = music
    assert main(["run", str(PLAY_SONG), "--device", sim.serial, "--adb-port", str(adb_port)]) == 0
    assert "now playing: Lanterns" in capsys.readouterr().out


@pytest.mark.adb
def test_a_wrong_android_serial_is_named_in_the_error(music: tuple[Any, Any], adb_port: int,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANDROID_SERIAL", "emulator-5598")
    assert main(["run", str(PLAY_SONG), "--adb-port", str(adb_port)]) == 1
    assert "ANDROID_SERIAL names device 'emulator-5598', which is not connected" in capsys.readouterr().err


def test_android_serial_without_a_document_runs_scripts_that_need_no_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANDROID_SERIAL", "emulator-5554")
    script = tmp_path / "s.tap"
    script.write_text("print(6 * 7)\n")
    assert main(["run", str(script)]) == 0
    assert capsys.readouterr().out == "42\n"
    # a script that works on the app is refused before it runs, as `tapir check` reports it
    script.write_text("print(1)\n$home__songs.tap()\n")
    assert main(["run", str(script)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "s.tap:2:1: error[no-document]:" in err and "not run" in err


@pytest.mark.parametrize(("argv", "env", "message"), [
    (["--device", "emulator-5554", "--adb-port", "0"], {}, "--adb-port must be a port between 1 and 65534, not 0"),
    (["--adb-port", "5038"], {}, "--adb-port needs a device run"),
])
def test_bad_adb_ports_are_usage_errors(argv: list[str], env: dict[str, str], message: str,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main(["run", str(PLAY_SONG), *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_server_port_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "five")
    assert main(["sim", "--app", "music"]) == 2
    assert "ANDROID_ADB_SERVER_PORT must be a port number, not 'five'" in capsys.readouterr().err


def test_sim_suggests_commands_for_a_fresh_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adb = tmp_path / "platform tools" / "adb"
    adb.parent.mkdir()
    adb.write_text("#!/bin/sh\n")
    adb.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no adb on it
    dump, shot, run = try_commands(str(adb), 15037, "127.0.0.1:40001")
    assert dump == f"'{adb}' -P 15037 -s 127.0.0.1:40001 exec-out uiautomator dump /dev/tty"
    assert shot.endswith("exec-out screencap -p > screen.png")
    assert run == "tapir run SCRIPT.tap --device 127.0.0.1:40001 --adb-port 15037"
    monkeypatch.setenv("PATH", f"{adb.parent}:/usr/bin:/bin")  # this adb on PATH, default port
    dump, _, run = try_commands(str(adb), 5037, "emulator-5554")
    assert dump == "adb -s emulator-5554 exec-out uiautomator dump /dev/tty"
    assert run == "tapir run SCRIPT.tap --device emulator-5554"


def test_simulator_errors_become_tapir_errors() -> None:
    from tapir.core.errors import DeviceError, UsageError
    from tapir.runtime.simulator import simulator_errors
    from tapir.sim.errors import SimDeviceError, SimUsageError

    with pytest.raises(UsageError) as usage, simulator_errors():
        raise SimUsageError("unknown simulated app 'x'", hint="known apps: music")
    assert (usage.value.message, usage.value.hint) == ("unknown simulated app 'x'", "known apps: music")
    with pytest.raises(DeviceError, match="no adb binary found"), simulator_errors():
        raise SimDeviceError("no adb binary found")


@pytest.mark.adb
def test_a_device_runtime_settles_the_heap_once_made(music: tuple[Any, Any], adb_port: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.runtime import connect as connect_module
    from tapir.runtime.connect import Connection, load_run_document

    settled: list[bool] = []
    monkeypatch.setattr(connect_module, "settle", lambda: settled.append(True))
    sim, _ = music
    document = load_run_document(PLAY_SONG.parent / "music.yaml")
    runtime = connect_module.connect(Connection(device=sim.serial, document=document, adb_port=adb_port))
    try:
        assert settled == [True]
    finally:
        runtime.close()
