"""The simulated device without a transport: its shell, its Android commands and its state.

Output formats are checked with the parsers real clients use (adbutils' regular expressions),
so a format drift breaks these tests rather than a user's run.
"""

from __future__ import annotations

import base64
import io
import re
import shlex
import struct
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from PIL import Image
from sim_tiny_app import DETAILS, DETAILS_BUTTON, GREET_BUTTON, LIST_ITEM, MAIN, PACKAGE, TinyApp, center

from tapir.sim.device import ADB_KEYBOARD_IME, SimDevice
from tapir.sim.faults import Faults, parse_latency
from tapir.sim.files import FileSystem
from tapir.sim.filesync import serve_sync
from tapir.sim.keycodes import parse_keycode
from tapir.sim.launcher import LAUNCHER_ACTIVITY, LAUNCHER_PACKAGE
from tapir.sim.shell import GENERIC_COMMANDS, Shell, parse

# The exact patterns adbutils 2.12 applies (shell.py: app_current, _wm_size, rotation).
ADBUTILS_FOCUS = re.compile(r"mCurrentFocus=Window{.*\s+(?P<package>[^\s]+)/(?P<activity>[^\s]+)\}")
ADBUTILS_RESUMED = re.compile(
    r"mResumedActivity: ActivityRecord\{.*?\s+(?P<package>[^\s]+)/(?P<activity>[^\s]+)\s.*?\}")
ADBUTILS_TOP = re.compile(r"ACTIVITY (?P<package>[^\s]+)/(?P<activity>[^/\s]+) \w+ pid=(?P<pid>\d+)")


@pytest.fixture
def app() -> TinyApp:
    return TinyApp()


@pytest.fixture
def dev(app: TinyApp) -> SimDevice:
    device = SimDevice([app])
    device.start_app(PACKAGE)
    return device


def sh(dev: SimDevice, line: str) -> tuple[str, int]:
    result = dev.run_shell(line)
    return result.text, result.exit_code


# -- the shell language -------------------------------------------------------------------------


def test_sequencing_and_exit_status() -> None:
    dev = SimDevice()
    assert sh(dev, "echo a; false; echo X4EXIT:$?") == ("a\nX4EXIT:1\n", 0)
    assert sh(dev, "true && echo yes || echo no") == ("yes\n", 0)
    assert sh(dev, "false && echo yes || echo no") == ("no\n", 0)
    assert sh(dev, "exit 7; echo never") == ("", 7)
    assert sh(dev, "! false && echo negated") == ("negated\n", 0)
    # the line adbutils' shell2() sends when the device lacks shell_v2
    assert sh(dev, "exit 3; echo X4EXIT:$?")[1] == 3


def test_unknown_command_is_127_with_mksh_wording() -> None:
    result = SimDevice().run_shell("frobnicate --now; echo $?")
    assert result.stderr == b"/system/bin/sh: frobnicate: inaccessible or not found\n"
    assert result.stdout == b"127\n"


def test_quoting_and_parameters() -> None:
    dev = SimDevice()
    assert sh(dev, """echo 'a  b' "c  $?" d\\ e""")[0] == "a  b c  0 d e\n"
    assert sh(dev, 'X="1 2"; echo $X "$X" ${X}')[0] == "1 2 1 2 1 2\n"
    assert sh(dev, "echo ''")[0] == "\n"
    assert sh(dev, "echo $NOPE|grep -c ^$")[0] == "1\n"


def test_refuses_what_it_cannot_run() -> None:
    dev = SimDevice()
    for line in ("echo $(id)", "echo `id`", "if true; then echo; fi", "(echo a)", "for x in 1; do echo; done"):
        out, status = sh(dev, line)
        assert status != 0 and "not supported by the simulated shell" in out, line
    assert sh(dev, "echo 'open") == ("/system/bin/sh: no closing quote\n", 1)
    assert sh(dev, "; echo")[1] == 1


def test_redirections_and_pipes() -> None:
    dev = SimDevice()
    out, status = sh(dev, "echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f; cat /data/local/tmp/f")
    assert (out, status) == ("one\ntwo\n", 0)
    assert sh(dev, "cat /nope 2>&1 | grep -c 'No such file'")[0] == "1\n"
    assert sh(dev, "cat /nope 2>/dev/null; echo $?")[0] == "1\n"
    assert sh(dev, "echo x > /system/f")[0] == "/system/bin/sh: can't create /system/f: Read-only file system\n"
    assert sh(dev, "printf_missing 2>/dev/null || echo fallback")[0] == "fallback\n"
    assert sh(dev, "grep two < /data/local/tmp/f")[0] == "two\n"
    assert sh(dev, "dumpsys window | grep mCurrentFocus | wc -l")[0] == "1\n"


def test_files_rm_ls_md5() -> None:
    dev = SimDevice()
    assert sh(dev, "rm -f /data/local/tmp/none; echo $?")[0] == "0\n"
    assert sh(dev, "rm /data/local/tmp/none")[0] == "rm: /data/local/tmp/none: No such file or directory\n"
    sh(dev, "mkdir -p /sdcard/a/b && echo hi > /sdcard/a/b/c.txt")
    assert sh(dev, "ls /storage/emulated/0/a/b")[0] == "c.txt\n"
    assert sh(dev, "md5sum /sdcard/a/b/c.txt")[0].startswith("764efa883dda1e11db47671c4a3bbd9e ")
    assert sh(dev, "rm -r /sdcard/a && ls /sdcard/a; echo $?")[0].endswith("1\n")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF, exclude_characters="\r"), max_size=30))
def test_shlex_quoted_words_round_trip(text: str) -> None:
    """What adbutils sends for a list argument (shlex.quote) reaches the command unchanged."""
    tokens = parse(f"echo -n {shlex.quote(text)}")
    assert len(tokens) == 1
    result = Shell(FileSystem(), GENERIC_COMMANDS).run(f"echo -n {shlex.quote(text)}")
    assert result.stdout.decode() == text


# -- uiautomator ------------------------------------------------------------------------------


def test_dump_default_path_message_and_file(dev: SimDevice, app: TinyApp) -> None:
    out, status = sh(dev, "uiautomator dump")
    assert (out, status) == ("UI hierchary dumped to: /sdcard/window_dump.xml\n", 0)
    xml = dev.fs.read("/sdcard/window_dump.xml").decode()
    assert xml == app.dump_xml()
    assert etree.fromstring(xml.encode()).tag == "hierarchy"
    assert sh(dev, "cat /storage/emulated/0/window_dump.xml")[0] == xml


def test_dump_as_adbutils_and_the_runtime_send_it(dev: SimDevice, app: TinyApp) -> None:
    out, _ = sh(dev, "rm -f /data/local/tmp/uidump.xml; uiautomator dump /data/local/tmp/uidump.xml && echo success")
    assert out == "UI hierchary dumped to: /data/local/tmp/uidump.xml\nsuccess\n"
    out, _ = sh(dev, "rm -f /data/local/tmp/t.xml; uiautomator dump /data/local/tmp/t.xml; cat /data/local/tmp/t.xml")
    assert out == "UI hierchary dumped to: /data/local/tmp/t.xml\n" + app.dump_xml()


def test_dump_to_tty_prints_the_xml_then_the_message(dev: SimDevice, app: TinyApp) -> None:
    result = dev.run_shell("uiautomator 'dump' '/dev/tty'")  # what `adb exec-out` sends
    assert result.stdout.decode() == app.dump_xml() + "UI hierchary dumped to: /dev/tty\n"


def test_dump_idle_state_fault_writes_no_file_and_exits_0() -> None:
    dev = SimDevice([TinyApp()], faults=Faults(dump_errors=1))
    result = dev.run_shell("rm -f /data/local/tmp/u.xml; uiautomator dump /data/local/tmp/u.xml && echo success")
    assert result.text == "ERROR: could not get idle state.\nsuccess\n"
    assert result.stderr == b"ERROR: could not get idle state.\n"
    assert not dev.fs.exists("/data/local/tmp/u.xml")
    assert "hierchary" in sh(dev, "uiautomator dump /data/local/tmp/u.xml")[0]  # only N dumps fail


def test_latency_fault_delays_only_the_named_command() -> None:
    dev = SimDevice([TinyApp()], faults=Faults(latency=parse_latency(["uiautomator=0.3"])))
    start = time.monotonic()
    sh(dev, "echo fast")
    assert time.monotonic() - start < 0.2
    start = time.monotonic()
    sh(dev, "uiautomator dump")
    assert time.monotonic() - start >= 0.3


# -- input --------------------------------------------------------------------------------------


def test_tap_swipe_and_long_press(dev: SimDevice, app: TinyApp) -> None:
    x, y = center(LIST_ITEM)
    sh(dev, f"input swipe {x} {y} {x} {y} 800")  # a swipe that stays put and lasts: long press
    assert app.events[-1] == ("long_tap", x, y) and app.selected
    sh(dev, f"input swipe {x} {y} {x} {y} 50")  # short and still: a tap
    assert app.events[-1] == ("tap", x, y)
    sh(dev, "input swipe 500 2000 500 1200")
    assert app.events[-1] == ("swipe", 500, 2000, 500, 1200, 300) and app.page == 2
    sh(dev, "input touchscreen tap {} {}".format(*center(DETAILS_BUTTON)))
    assert dev.current_activity == DETAILS
    assert sh(dev, "input tap 1")[1] == 1


def test_input_text_unescapes_like_android(dev: SimDevice, app: TinyApp) -> None:
    sh(dev, "input text Hello%sthere")
    sh(dev, "input text " + shlex.quote(" & 'quoted' $HOME"))
    assert app.name == "Hello there & 'quoted' $HOME"
    out, status = sh(dev, "input text " + shlex.quote("héllo"))
    assert status == 255 and "NullPointerException" in out and "é" not in app.name


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=20))
def test_input_text_of_shlex_quoted_ascii(text: str) -> None:
    app = TinyApp()
    dev = SimDevice([app])
    dev.start_app(PACKAGE)
    dev.run_shell("input text " + shlex.quote(text.replace(" ", "%s")))
    assert app.name == text.replace("%s", " ")


def test_keyevents_by_name_number_and_back_to_launcher(dev: SimDevice, app: TinyApp) -> None:
    sh(dev, "input tap {} {}".format(*center(DETAILS_BUTTON)))
    sh(dev, "input keyevent KEYCODE_BACK")  # consumed: details -> main
    assert (dev.current_package, dev.current_activity) == (PACKAGE, MAIN)
    sh(dev, "input text abc; input keyevent 67; input keyevent ENTER")
    assert app.name == "ab" and app.greeting == "Hello, ab"
    sh(dev, "input keyevent 4")  # not consumed on the first screen: the launcher shows
    assert dev.current_package == LAUNCHER_PACKAGE
    assert sh(dev, "input keyevent NOT_A_KEY") == ("Error: Unknown keycode: NOT_A_KEY\n", 1)
    dev.start_app(PACKAGE)
    sh(dev, "input keyevent KEYCODE_HOME")
    assert dev.current_package == LAUNCHER_PACKAGE and ("key", "KEYCODE_HOME") not in app.events


def test_parse_keycode() -> None:
    assert parse_keycode("4") == "KEYCODE_BACK"
    assert parse_keycode("BACK") == parse_keycode("KEYCODE_BACK") == "KEYCODE_BACK"
    assert parse_keycode("7") == "KEYCODE_0"
    assert parse_keycode("KEYCODE_NOPE") is None and parse_keycode("0") is None


def test_adb_keyboard_types_unicode_once_selected(dev: SimDevice, app: TinyApp) -> None:
    msg = base64.b64encode("héllo ✓".encode()).decode()
    sh(dev, f"am broadcast -a ADB_INPUT_B64 --es msg {msg}")
    assert app.name == ""  # the IME is not active yet: the broadcast goes nowhere
    assert sh(dev, f"ime enable {ADB_KEYBOARD_IME} && ime set {ADB_KEYBOARD_IME}")[1] == 0
    assert sh(dev, "settings get secure default_input_method")[0] == ADB_KEYBOARD_IME + "\n"
    out, _ = sh(dev, f"am broadcast -a ADB_INPUT_B64 --es msg {msg}")
    assert "Broadcast completed: result=0" in out and app.name == "héllo ✓"


# -- apps ------------------------------------------------------------------------------------------


def test_monkey_starts_cold_then_brings_back_hot(app: TinyApp) -> None:
    dev = SimDevice([app])
    out, status = sh(dev, f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1")
    assert status == 0 and "Events injected: 1" in out and f"  bash arg: {PACKAGE}" in out
    assert (dev.current_package, app.launches) == (PACKAGE, 1)
    sh(dev, "input tap {} {}".format(*center(DETAILS_BUTTON)))
    sh(dev, "input keyevent HOME")
    sh(dev, f"monkey -p {PACKAGE} -c android.intent.category.LAUNCHER 1")
    assert (dev.current_activity, app.launches) == (DETAILS, 1)  # resumed where it was
    out, status = sh(dev, "monkey -p org.nope -c android.intent.category.LAUNCHER 1")
    assert status == 252 and "** No activities found to run, monkey aborted." in out


def test_am_start_variants_and_force_stop(app: TinyApp) -> None:
    dev = SimDevice([app])
    out, status = sh(dev, f"am start -n {PACKAGE}/.MainActivity")
    assert (out, status) == (f"Starting: Intent {{ cmp={PACKAGE}/.MainActivity }}\n", 0)
    assert dev.current_package == PACKAGE
    sh(dev, "input tap {} {}".format(*center(DETAILS_BUTTON)))
    out, _ = sh(dev, f"am start -W -S -n {PACKAGE}/{MAIN}")  # -S: stop first, so a cold start
    assert "LaunchState: COLD" in out and f"Activity: {PACKAGE}/{MAIN}" in out and dev.current_activity == MAIN
    out, status = sh(dev, "am start -n org.nope/.Main")
    assert status == 1 and "Error type 3\nError: Activity class {org.nope/org.nope.Main} does not exist." in out
    sh(dev, f"am force-stop {PACKAGE}")
    assert dev.current_package == LAUNCHER_PACKAGE and not dev.is_running(PACKAGE)
    sh(dev, f"am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -p {PACKAGE}")
    assert dev.current_package == PACKAGE
    sh(dev, "am start -a android.intent.action.MAIN -c android.intent.category.HOME")
    assert dev.current_package == LAUNCHER_PACKAGE


def test_pm_list_and_clear(dev: SimDevice, app: TinyApp) -> None:
    out, _ = sh(dev, "pm list packages")
    assert f"package:{PACKAGE}\n" in out and f"package:{LAUNCHER_PACKAGE}\n" in out
    assert sh(dev, "pm list packages -3")[0] == f"package:{PACKAGE}\n"
    sh(dev, "input text abc")
    assert sh(dev, f"pm clear {PACKAGE}") == ("Success\n", 0)
    assert app.name == "" and dev.current_package == LAUNCHER_PACKAGE
    assert sh(dev, "pm path org.nope")[1] == 1


def test_dumpsys_formats_parse_with_adbutils_patterns(dev: SimDevice) -> None:
    for line, pattern in (("dumpsys window windows", ADBUTILS_FOCUS),
                          ("dumpsys window", ADBUTILS_FOCUS),
                          ("dumpsys activity activities", ADBUTILS_RESUMED),
                          ("dumpsys activity top", ADBUTILS_TOP)):
        m = pattern.search(sh(dev, line)[0])
        assert m and m["package"] == PACKAGE, line
        assert m["activity"] in (MAIN, ".MainActivity"), line
    assert "mFocusedApp=ActivityRecord{" in sh(dev, "dumpsys window windows")[0]
    sh(dev, "input keyevent HOME")
    m = ADBUTILS_FOCUS.search(sh(dev, "dumpsys window windows")[0])
    assert m and (m["package"], m["activity"]) == (LAUNCHER_PACKAGE, LAUNCHER_ACTIVITY)


def test_wm_size_display_getprop() -> None:
    dev = SimDevice()
    assert sh(dev, "wm size") == ("Physical size: 1080x2400\n", 0)
    m = re.search(r".*?orientation=(?P<o>\d+)", sh(dev, "dumpsys display")[0])
    assert m and m["o"] == "0"
    assert sh(dev, "getprop ro.build.version.sdk") == ("34\n", 0)
    assert sh(dev, "getprop ro.product.model")[0] == "TapirSim\n"
    assert sh(dev, "getprop no.such.prop")[0] == "\n"
    assert "[ro.build.version.release]: [14]\n" in sh(dev, "getprop")[0]


def test_screencap_png_and_raw(dev: SimDevice, app: TinyApp) -> None:
    png = dev.run_shell("screencap -p").stdout
    assert png == app.screenshot_png()
    assert Image.open(io.BytesIO(png)).size == (1080, 2400)
    raw = dev.run_shell("screencap").stdout
    assert struct.unpack("<4I", raw[:16]) == (1080, 2400, 1, 0) and len(raw) == 16 + 1080 * 2400 * 4
    sh(dev, "screencap -p /sdcard/s.png")
    assert dev.fs.read("/sdcard/s.png") == png


def test_launcher_lists_apps_and_opens_them(app: TinyApp) -> None:
    dev = SimDevice([app])
    root = etree.fromstring(dev.run_shell("uiautomator dump /dev/tty").stdout.split(b"UI hier")[0])
    icon = root.xpath("//node[@text='Tiny']")[0]
    assert icon.get("package") == LAUNCHER_PACKAGE and icon.get("clickable") == "true"
    left, top, right, bottom = map(int, re.findall(r"\d+", icon.get("bounds")))
    sh(dev, f"input tap {(left + right) // 2} {(top + bottom) // 2}")
    assert (dev.current_package, dev.current_activity) == (PACKAGE, MAIN)
    dev.go_home()
    assert Image.open(io.BytesIO(dev.screenshot_png())).size == (1080, 2400)


def test_drift_setting_reaches_apps_that_support_it(app: TinyApp) -> None:
    dev = SimDevice([app], faults=Faults(drift="v2"))
    assert app.drift == "v2"
    assert dev.set_drift("v3") == [PACKAGE] and "Tiny (v3)" in app.dump_xml()


def test_command_log_records_what_clients_sent(dev: SimDevice) -> None:
    dev.run_shell("input tap 1 2")
    assert dev.log[-1] == "input tap 1 2"


def test_greet_flow(dev: SimDevice, app: TinyApp) -> None:
    sh(dev, "input text Ann && input tap {} {}".format(*center(GREET_BUTTON)))
    assert 'text="Hello, Ann"' in dev.dump_xml()


# -- file sync, without a transport ----------------------------------------------------------


class _Pipe:
    def __init__(self, data: bytes) -> None:
        self.inbox = bytearray(data)
        self.outbox = bytearray()

    def read_exact(self, n: int) -> bytes:
        if len(self.inbox) < n:
            raise EOFError
        out = bytes(self.inbox[:n])
        del self.inbox[:n]
        return out

    def write(self, data: bytes) -> None:
        self.outbox += data


def _req(ident: bytes, path: str) -> bytes:
    return ident + struct.pack("<I", len(path)) + path.encode()


def test_sync_send_stat_recv_and_errors() -> None:
    fs = FileSystem()
    body = b"x" * 70_000
    chunks = b"".join(b"DATA" + struct.pack("<I", len(c)) + c for c in (body[:65536], body[65536:]))
    pipe = _Pipe(_req(b"SEND", "/data/local/tmp/d/f.bin,33188") + chunks + b"DONE" + struct.pack("<I", 1_700_000_000)
                 + _req(b"STAT", "/data/local/tmp/d/f.bin") + _req(b"STAT", "/nope")
                 + _req(b"RECV", "/nope") + _req(b"QUIT", ""))
    serve_sync(pipe, fs)
    out = bytes(pipe.outbox)
    assert out[:8] == b"OKAY\0\0\0\0"
    assert struct.unpack("<4sIII", out[8:24]) == (b"STAT", 0o100644, 70_000, 1_700_000_000)
    assert struct.unpack("<4sIII", out[24:40]) == (b"STAT", 0, 0, 0)
    msg = b"open failed: No such file or directory"
    assert out[40:] == b"FAIL" + struct.pack("<I", len(msg)) + msg
    assert fs.read("/data/local/tmp/d/f.bin") == body


# -- choosing apps by name --------------------------------------------------------------------


def test_sim_specs_and_unknown_names(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main
    from tapir.sim.errors import SimUsageError
    from tapir.sim.launch import apps_for_spec, is_sim_spec, known_app_names

    assert is_sim_spec("sim") and is_sim_spec("sim:music") and not is_sim_spec("emulator-5554")
    with pytest.raises(SimUsageError, match="unknown simulated app 'nope'; known apps: "):
        apps_for_spec("sim:nope")
    with pytest.raises(SimUsageError, match="replay directory"):
        apps_for_spec("sim:replay:/no/such/dir")
    assert main(["sim", "--app", "nope"]) == 2
    assert "unknown simulated app 'nope'" in capsys.readouterr().err
    names = known_app_names()
    if names:  # the sample apps ship separately; check the registry lookup when they are there
        assert [a.package for a in apps_for_spec(f"sim:{names[0]}")] == [apps_for_spec(f"sim:{names[0]}")[0].package]
        assert len(apps_for_spec("sim")) == len(names)


def test_an_app_crash_is_reported_not_swallowed(app: TinyApp) -> None:
    dev = SimDevice([app])
    dev.start_app(PACKAGE)

    def broken(x: int, y: int) -> None:
        raise RuntimeError("boom")

    app.tap = broken  # type: ignore[method-assign]
    assert sh(dev, "input tap 1 1; echo next") == ("input: simulator error: RuntimeError: boom\nnext\n", 0)


def test_screen_size_follows_the_first_app() -> None:
    class Narrow(TinyApp):
        @property
        def screen_size(self) -> tuple[int, int]:
            return 1080, 2280

    dev = SimDevice([Narrow()])
    assert sh(dev, "wm size")[0] == "Physical size: 1080x2280\n"
    assert "deviceHeight=2280" in sh(dev, "dumpsys display")[0]
    assert Image.open(io.BytesIO(dev.screenshot_png())).size == (1080, 2280)  # the launcher too


def test_sim_command_rejects_bad_ports_and_replay_paths(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import socket

    from tapir.cli import main

    def error(*argv: str) -> str:
        assert main(["sim", *argv]) == 2
        return capsys.readouterr().err

    assert "simulator's port must be between 0 (any free one) and 65535, not 70000" in error("--port", "70000")
    assert "not -1" in error("--port", "-1")
    assert "--adb-port must be a port between 1 and 65534, not 70000" in error("--adb-port", "70000")
    a_file = tmp_path / "recording.txt"
    a_file.write_text("not a folder")
    assert f"replay directory {str(a_file)!r} is not a directory" in error("--replay", str(a_file))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert f"cannot listen on port {port} for the simulator" in error("--port", str(port))
