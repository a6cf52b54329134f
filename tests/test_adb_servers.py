"""Phones on several adb servers: device specs that name their server (``HOST:PORT/SERIAL``),
``--adb-host``/``--adb-port`` on every device command and in ``tapir.toml``, and one ``tapir test``
run over simulators attached to two private adb servers, its JUnit counts read back."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.core.errors import UsageError
from tapir.runtime.device_spec import DeviceSpec, parse_device, with_server

MUSIC = Path(__file__).resolve().parent.parent / "samples" / "music"


def _tapir(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def _help(command: str) -> str:
    from tapir.cli import _build_parser

    parser = _build_parser()
    sub = next(a for a in parser._actions if a.choices and command in a.choices)  # type: ignore[operator]
    return str(sub.choices[command].format_help())  # type: ignore[index]


def test_a_spec_names_its_server_before_the_slash() -> None:
    assert parse_device("10.0.0.2:5037/emulator-5554") == DeviceSpec("emulator-5554", "10.0.0.2", 5037)
    assert parse_device("5038/127.0.0.1:41037") == DeviceSpec("127.0.0.1:41037", None, 5038)
    assert parse_device("[::1]:5037/R58M") == DeviceSpec("R58M", "::1", 5037)
    assert parse_device("5038/") == DeviceSpec(None, None, 5038)  # the only device of that server
    # an `adb connect` address is a serial, not a server
    assert parse_device("127.0.0.1:5555") == DeviceSpec("127.0.0.1:5555")
    with pytest.raises(UsageError, match="before the '/' goes the adb server"):
        parse_device("not a host/emulator-5554")
    with pytest.raises(UsageError, match="between 1 and 65534, not 70000"):
        parse_device("70000/emulator-5554")


def test_adb_flags_fill_in_the_server_of_phones_that_name_none() -> None:
    assert with_server("emulator-5554", None, 5038) == "5038/emulator-5554"
    assert with_server("emulator-5554", "10.0.0.2", 5037) == "10.0.0.2:5037/emulator-5554"
    assert with_server("9000/emulator-5554", "10.0.0.2", 5037) == "9000/emulator-5554"  # its own wins
    assert with_server("sim:music", "10.0.0.2", 5037) == "sim:music"
    assert with_server(None, "::1", 5037) == "[::1]:5037/"
    assert with_server("emulator-5554", None, None) == "emulator-5554"


@pytest.mark.parametrize("command", ["run", "repl", "test", "inspect", "explore", "eval", "gen"])
def test_every_device_command_takes_the_adb_flags(command: str) -> None:
    out = _help(command)
    assert "--adb-host HOST" in out and "--adb-port PORT" in out, out


def test_a_bad_server_in_a_device_or_the_project_is_a_usage_error(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.tap").write_text("print(1)\n")
    code, out = _tapir("test", "t.tap", "--device", "no host/emulator-5554")
    assert code == 2 and "before the '/' goes the adb server" in out, out
    code, out = _tapir("test", "t.tap", "--adb-port", "0")
    assert code == 2 and "--adb-port must be a port between 1 and 65534, not 0" in out, out
    (tmp_path / "tapir.toml").write_text('[device]\nadb_port = 70000\nadb_host = ""\n')
    code, out = _tapir("test", "t.tap")
    assert code == 2 and "[device] adb_port must be a port between 1 and 65534, not 70000" in out, out
    assert "[device] adb_host must be a host name or address" in out


@pytest.fixture
def second_adb_port(adb_port: int) -> Iterator[int]:
    """Another private adb server, beside the session's."""
    from tapir.sim.launch import kill_adb_server, start_private_adb_server

    port = start_private_adb_server()
    try:
        yield port
    finally:
        kill_adb_server(port)


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_one_test_run_uses_phones_on_two_adb_servers(adb_port: int, second_adb_port: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from junitparser import JUnitXml

    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    for name in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_PORT", "ANDROID_ADB_SERVER_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    names = ("play_song.tap", "dark_theme.tap", "shuffle_playlist.tap", "rename_playlist.tap")
    scripts = [str(MUSIC / n) for n in names]
    with start_sim([get_app("music")], adb_port=adb_port, foreground="org.tapir.music") as one, \
            start_sim([get_app("music")], adb_port=second_adb_port, foreground="org.tapir.music") as two:
        # the serial alone is on neither default server: the error names the server it asked
        code, out = _tapir("run", scripts[0], "--device", one.serial, "--adb-port", str(second_adb_port))
        assert code == 1 and f"to the adb server at 127.0.0.1:{second_adb_port}" in out, out
        first, second = f"{adb_port}/{one.serial}", f"127.0.0.1:{second_adb_port}/{two.serial}"
        code, out = _tapir("test", *scripts, "--device", first, "--device", second, "--reset",
                           "--junit", "junit.xml", "--json", "run.json")
        assert code == 0, out
    suite = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    assert (suite.tests, suite.failures, suite.errors) == (4, 0, 0)
    report = json.loads((tmp_path / "run.json").read_text())
    used = {a["device"] for s in report["scripts"] for a in s["attempts"]}
    assert used == {first, second}  # both servers' phones took scripts


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_tapir_toml_names_the_adb_server(adb_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    for name in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_PORT", "ANDROID_ADB_SERVER_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    with start_sim([get_app("music")], adb_port=adb_port, foreground="org.tapir.music") as sim:
        (tmp_path / "tapir.toml").write_text(f'[device]\ndefault = "{sim.serial}"\nadb_host = "127.0.0.1"\n'
                                             f"adb_port = {adb_port}\n")
        (tmp_path / "play.tap").write_text((MUSIC / "play_song.tap").read_text().replace(
            "# doc: music.yaml", f"# doc: {MUSIC / 'music.yaml'}"))
        code, out = _tapir("run", "play.tap")
    assert code == 0 and "now playing: Lanterns" in out, out
