"""The device layer without a device: command strings, text escaping, output parsing, the
retry policy and serial selection (the transport itself: test_adb_transport.py)."""

from __future__ import annotations

import base64
import errno
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

import adbutils
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tapir.core.errors import DeviceError, UsageError
from tapir.hierarchy import parse_uiautomator
from tapir.runtime import adb_shell
from tapir.runtime.device import AdbDevice, Device, resolve_serial
from tapir.runtime.retry import FailureKind, NotSent, RetryPolicy, TransientError, call_with_retry, classify

# -- what `input text` does on the device -----------------------------------------------------


def android_send_text(arg: str) -> str:
    """Android's InputShellCommand.sendText: each "%s" becomes a space, nothing else changes."""
    buff = list(arg)
    escape = False
    i = 0
    while i < len(buff):
        if escape:
            escape = False
            if buff[i] == "s":
                buff[i] = " "
                del buff[i - 1]
                i -= 1
        if buff[i] == "%":
            escape = True
        i += 1
    return "".join(buff)


def typed_by(commands: list[str], split: Callable[[str], list[str]] = shlex.split) -> str:
    """What the phone receives: run each command line through a POSIX shell word splitter."""
    out = []
    for line in commands:
        argv = split(line)
        if argv[:2] == ["input", "text"]:
            assert len(argv) == 3, f"text must stay one argument: {argv}"
            out.append(android_send_text(argv[2]))
        elif argv == ["input", "keyevent", "KEYCODE_ENTER"]:
            out.append("\n")
        elif argv == ["input", "keyevent", "KEYCODE_TAB"]:
            out.append("\t")
        else:
            raise AssertionError(f"unexpected command {line!r}")
    return "".join(out)


def test_android_send_text_model() -> None:
    # the model itself, on the cases AOSP documents: %s is a space, a lone % stays
    assert android_send_text("a%sb") == "a b"
    assert android_send_text("100%") == "100%"
    assert android_send_text("%%s") == "% "


TRICKY = [
    "hello world", "it's", 'say "hi"', "a & b", "a; reboot", "x | y", "$HOME", "${PATH}", "`id`", "$(id)",
    "(paren)", "50%", "%s", "a%sb", "%%s", "% s", "back\\slash", "*.txt ?", "~user #tag !bang", "<in> >out",
    "{a,b} [c]", "  two  spaces ", "-n", "tab\there", "line1\nline2", "'", "''", "\"'\"", "%", "s%s%s%",
]


@pytest.mark.parametrize("text", TRICKY)
def test_input_text_escaping_round_trips(text: str) -> None:
    assert typed_by(adb_shell.input_text_commands(text)) == text


@pytest.mark.skipif(shutil.which("sh") is None, reason="no /bin/sh")
def test_input_text_escaping_survives_a_real_shell() -> None:
    """The same commands through a real POSIX sh (the device runs `sh -c <line>`)."""

    def real_sh(line: str) -> list[str]:
        script = 'input() { printf "input\\0"; for a in "$@"; do printf "%s\\0" "$a"; done; }; ' + line
        out = subprocess.run(["sh", "-c", script], capture_output=True, check=True).stdout
        return out.decode().split("\0")[:-1]

    for text in TRICKY:
        assert typed_by(adb_shell.input_text_commands(text), real_sh) == text, text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\n\t%s")))
def test_input_text_escaping_property(text: str) -> None:
    assert typed_by(adb_shell.input_text_commands(text)) == text


def test_input_text_spaces_and_literal_percent_s() -> None:
    assert adb_shell.input_text_commands("hello world") == ["input text hello%sworld"]
    # a literal "%s" is split between two calls so `input` cannot collapse it
    assert adb_shell.input_text_commands("a%sb") == ["input text a%", "input text sb"]
    assert adb_shell.input_text_commands("") == []


@pytest.mark.parametrize("text", ["caf\u00e9", "\u4f60\u597d", "\U0001f600", "a\rb", "\x1b"])
def test_input_text_refuses_what_input_cannot_type(text: str) -> None:
    assert not adb_shell.is_typeable(text)
    with pytest.raises(UsageError, match="ADBKeyBoard"):
        adb_shell.input_text_commands(text)


def test_adb_keyboard_command_is_base64_of_utf8() -> None:
    command = adb_shell.adb_keyboard_command("caf\u00e9 \u2615 'x'")
    argv = shlex.split(command)
    assert argv[:5] == ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es"] and argv[5] == "msg"
    assert base64.b64decode(argv[6]).decode() == "caf\u00e9 \u2615 'x'"


# -- keys, apps, gestures ---------------------------------------------------------------------

@pytest.mark.parametrize("key, arg", [
    ("back", "KEYCODE_BACK"), ("ENTER", "KEYCODE_ENTER"), ("home", "KEYCODE_HOME"), (" Back ", "KEYCODE_BACK"),
    ("KEYCODE_VOLUME_UP", "KEYCODE_VOLUME_UP"), (4, "4"), ("66", "66"), ("backspace", "KEYCODE_DEL"),
])
def test_keyevent_names(key: str | int, arg: str) -> None:
    assert adb_shell.key_command(key) == f"input keyevent {arg}"


@pytest.mark.parametrize("key", ["bak", "KEYCODE_back; reboot", -1, 1000, True])
def test_bad_keys_are_usage_errors(key: object) -> None:
    with pytest.raises(UsageError):
        adb_shell.keyevent_arg(key)  # type: ignore[arg-type]


def test_app_commands() -> None:
    assert adb_shell.app_start_command("org.example.music") == \
        "monkey -p org.example.music -c android.intent.category.LAUNCHER 1"
    assert adb_shell.app_start_command("org.example", ".ui.Main") == "am start -n org.example/.ui.Main"
    assert shlex.split(adb_shell.app_start_command("org.example", "org.example.A$B")) == \
        ["am", "start", "-n", "org.example/org.example.A$B"]
    assert adb_shell.app_stop_command("org.example") == "am force-stop org.example"
    for bad in ("org.example; reboot", "", "1abc", "a b"):
        with pytest.raises(UsageError):
            adb_shell.app_start_command(bad)
    with pytest.raises(UsageError):
        adb_shell.app_start_command("org.example", "Main; reboot")


def test_gesture_commands() -> None:
    assert adb_shell.tap_command(10.6, 20) == "input tap 10 20"  # type: ignore[arg-type]
    assert adb_shell.swipe_command(1, 2, 3, 4, 300) == "input swipe 1 2 3 4 300"
    assert adb_shell.long_tap_command(5, 6, 800) == "input swipe 5 6 5 6 800"
    with pytest.raises(UsageError):
        adb_shell.swipe_command(1, 2, 3, 4, -1)


# -- parsing what the device prints -----------------------------------------------------------

FOCUS_ANDROID_9 = """WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #5 Window{2b1e6f0 u0 com.android.settings/com.android.settings.Settings}:
  mCurrentFocus=Window{2b1e6f0 u0 com.android.settings/com.android.settings.Settings}
  mFocusedApp=AppWindowToken{9c4f1d token=Token{e2a03c ActivityRecord{4b7d5af u0 com.android.settings/.Settings t12}}}
"""
FOCUS_ANDROID_13 = """  mCurrentFocus=Window{8a3f6d1 u0 org.tapir.music/org.tapir.music.PlayerActivity}
  mFocusedApp=ActivityRecord{e8a1c9 u0 org.tapir.music/.PlayerActivity t31}"""
FOCUS_POPUP = """  mCurrentFocus=Window{77e1 u0 PopupWindow:3f2a}
  mFocusedApp=ActivityRecord{e8a1c9 u0 org.tapir.music/.PlayerActivity t31}"""
ACTIVITIES = """ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)
    mResumedActivity: ActivityRecord{1c2d3e u0 com.example.notes/.NotesActivity t7}"""


@pytest.mark.parametrize("dumpsys, expected", [
    (FOCUS_ANDROID_9, ("com.android.settings", "com.android.settings.Settings")),
    (FOCUS_ANDROID_13, ("org.tapir.music", "org.tapir.music.PlayerActivity")),
    (FOCUS_POPUP, ("org.tapir.music", "org.tapir.music.PlayerActivity")),
    (ACTIVITIES, ("com.example.notes", "com.example.notes.NotesActivity")),
    ("  mCurrentFocus=Window{77e1 u0 NotificationShade}", None),
])
def test_parse_current_app(dumpsys: str, expected: tuple[str, str] | None) -> None:
    assert adb_shell.parse_current_app(dumpsys) == expected


def test_parse_wm_size() -> None:
    assert adb_shell.parse_wm_size("Physical size: 1080x2400\n") == (1080, 2400)
    assert adb_shell.parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n") == (720, 1600)
    assert adb_shell.parse_wm_size("wm: not found") is None


# -- retry policy -----------------------------------------------------------------------------

@dataclass
class Flaky:
    """A callable that fails ``failures`` times with ``error`` and then returns ``"ok"``."""

    failures: int
    error: Callable[[], BaseException] = lambda: TransientError("ERROR: could not get idle state.")
    calls: int = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error()
        return "ok"


@dataclass
class Sleeps:
    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.mark.parametrize("failures", [0, 1, 2, 3])
def test_transient_failures_are_retried_with_backoff(failures: int) -> None:
    fn, sleep = Flaky(failures), Sleeps()
    assert call_with_retry(fn, serial="emu-1", command="uiautomator dump", sleep=sleep) == "ok"
    assert fn.calls == failures + 1
    assert sleep.waits == [0.2, 0.5, 1.0][:failures]


def test_persistent_failure_becomes_one_device_error() -> None:
    fn, sleep = Flaky(10), Sleeps()
    with pytest.raises(DeviceError) as err:
        call_with_retry(fn, serial="emu-1", command="uiautomator dump", sleep=sleep)
    assert fn.calls == 4 and sleep.waits == [0.2, 0.5, 1.0]
    message = err.value.message
    assert "emu-1" in message and "uiautomator dump" in message and "after 4 attempts" in message
    assert "could not get idle state" in message and "animations" in (err.value.hint or "")
    assert isinstance(err.value.__cause__, TransientError)


def test_retry_policy_is_configurable() -> None:
    fn, sleep = Flaky(10), Sleeps()
    with pytest.raises(DeviceError):
        call_with_retry(fn, serial="s", command="c", policy=RetryPolicy((0.01,)), sleep=sleep)
    assert fn.calls == 2 and sleep.waits == [0.01]
    fn = Flaky(1)
    with pytest.raises(DeviceError):
        call_with_retry(fn, serial="s", command="c", policy=RetryPolicy.none(), sleep=sleep)
    assert fn.calls == 1


def test_actions_are_not_repeated_when_they_may_have_run() -> None:
    """A dropped connection after a tap was sent could mean the tap happened: no second tap."""
    fn, sleep = Flaky(1, lambda: ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")), Sleeps()
    with pytest.raises(DeviceError, match="Connection reset"):
        call_with_retry(fn, serial="s", command="input tap 1 2", idempotent=False, sleep=sleep)
    assert fn.calls == 1 and sleep.waits == []


def test_actions_are_retried_when_they_never_reached_the_device() -> None:
    fn, sleep = Flaky(2, lambda: NotSent(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))), Sleeps()
    assert call_with_retry(fn, serial="s", command="input tap 1 2", idempotent=False, sleep=sleep) == "ok"
    assert fn.calls == 3


@pytest.mark.parametrize("error, kind", [
    (TransientError("x"), FailureKind.TRANSIENT),
    (ConnectionResetError(), FailureKind.TRANSIENT),
    (TimeoutError(), FailureKind.TRANSIENT),
    (adbutils.AdbTimeout("adb read timeout"), FailureKind.TRANSIENT),
    (adbutils.AdbError("device offline"), FailureKind.TRANSIENT),
    (adbutils.AdbError("device 'emu-9' not found"), FailureKind.FATAL),
    (adbutils.AdbError("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"), FailureKind.FATAL),
    (NotSent(adbutils.AdbError("device offline")), FailureKind.NOT_SENT),
    (NotSent(adbutils.AdbError("device 'x' not found")), FailureKind.FATAL),
    (ValueError("bug"), FailureKind.FATAL),
])
def test_failure_classification(error: BaseException, kind: FailureKind) -> None:
    assert classify(error) is kind


def test_fatal_errors_fail_at_once_with_a_hint() -> None:
    fn, sleep = Flaky(5, lambda: NotSent(adbutils.AdbError("device 'emu-9' not found"))), Sleeps()
    with pytest.raises(DeviceError) as err:
        call_with_retry(fn, serial="emu-9", command="wm size", sleep=sleep)
    assert fn.calls == 1 and "adb devices" in (err.value.hint or "")
    assert err.value.message == "device emu-9: `wm size` failed: device 'emu-9' not found"


# -- AdbDevice over a fake transport ----------------------------------------------------------

XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node/></hierarchy>"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\n\r\n" * 4


class FakeTransport:
    """Answers shell commands from a script: a function of the command, or exceptions to raise."""

    def __init__(self, respond: Callable[[str], bytes | BaseException] = lambda c: b"") -> None:
        self.respond = respond
        self.commands: list[str] = []

    def shell(self, command: str, *, timeout: float) -> bytes:
        self.commands.append(command)
        result = self.respond(command)
        if isinstance(result, BaseException):
            raise result
        return result


def device(respond: Callable[[str], bytes | BaseException]) -> tuple[AdbDevice, FakeTransport, Sleeps]:
    transport, sleep = FakeTransport(respond), Sleeps()
    return AdbDevice("emu-1", transport=transport, sleep=sleep), transport, sleep


def test_adb_device_is_a_device() -> None:
    dev, _, _ = device(lambda c: b"")
    assert isinstance(dev, Device) and dev.serial == "emu-1"


def test_dump_strips_the_banner_and_sends_one_command() -> None:
    dev, transport, _ = device(lambda c: f"UI hierchary dumped to: {adb_shell.DUMP_PATH}\n{XML}\n".encode())
    assert dev.dump_hierarchy() == XML
    assert transport.commands == [adb_shell.dump_command()]
    assert transport.commands[0].startswith("rm -f ")  # a failed dump must not cat a stale file


def test_dump_retries_idle_state_errors_then_succeeds() -> None:
    answers = iter([b"ERROR: could not get idle state.\ncat: x: No such file or directory\n",
                    b"ERROR: null root node returned by UiTestAutomationBridge.\n", XML.encode()])
    dev, transport, sleep = device(lambda c: next(answers))
    assert dev.dump_hierarchy() == XML
    assert len(transport.commands) == 3 and sleep.waits == [0.2, 0.5]


def test_dump_that_never_settles_is_one_device_error() -> None:
    dev, transport, sleep = device(lambda c: b"ERROR: could not get idle state.\n")
    with pytest.raises(DeviceError) as err:
        dev.dump_hierarchy()
    assert len(transport.commands) == 4
    assert err.value.message.startswith("device emu-1: `uiautomator dump` failed after 4 attempts")
    assert "DeviceError" in err.value.render() and "hint:" in err.value.render()


def test_dump_refused_by_another_automation_client_is_not_retried() -> None:
    dev, transport, _ = device(lambda c: b"ERROR: UiAutomationService android.accessibilityservice."
                                         b"IAccessibilityServiceClient$Stub$Proxy@1 already registered!")
    with pytest.raises(DeviceError) as err:
        dev.dump_hierarchy()
    assert len(transport.commands) == 1 and "uiautomator2" in (err.value.hint or "")


def test_truncated_dump_is_retried() -> None:
    answers = iter([XML[:40].encode(), XML.encode()])
    dev, transport, _ = device(lambda c: next(answers))
    assert dev.dump_hierarchy() == XML and len(transport.commands) == 2


def test_dump_as_bytes_is_what_the_device_sent_and_checked_the_same_way() -> None:
    sent = f"UI hierchary dumped to: {adb_shell.DUMP_PATH}\n{XML}\n".encode()
    dev, _, _ = device(lambda c: sent)
    assert dev.dump_hierarchy_bytes() is sent  # not decoded, not copied: the parser skips the banner
    assert parse_uiautomator(dev.dump_hierarchy_bytes()).nodes[0].id == 0
    answers = iter([b"ERROR: could not get idle state.\n", XML[:40].encode(), XML.encode()])
    dev, transport, _ = device(lambda c: next(answers))
    assert dev.dump_hierarchy_bytes() == XML.encode() and len(transport.commands) == 3
    dev, _, _ = device(lambda c: b"ERROR: UiAutomationService x already registered!")
    with pytest.raises(DeviceError):
        dev.dump_hierarchy_bytes()


def test_the_session_parses_the_dumps_bytes_and_survives_a_broken_character() -> None:
    from tapir.runtime.screen_cache import ScreenCache
    from tapir.runtime.session_model import SessionConfig, SessionStats

    class Grounder:
        def identify_screen(self, tree: object) -> object:
            from tapir.runtime.grounding.result import ScreenMatch
            return ScreenMatch(None, 0.0, ())

    broken = XML.replace("<node/>", '<node text="caf\xe9"/>').encode("latin-1")  # not UTF-8
    dev, transport, _ = device(lambda c: broken)
    screen = ScreenCache(dev, Grounder(), SessionConfig(), SessionStats())  # type: ignore[arg-type]
    obs = screen.observe()
    assert obs.tree.nodes[0].text == "caf\ufffd" and len(transport.commands) == 1


def test_gestures_and_keys_send_input_commands() -> None:
    dev, transport, _ = device(lambda c: b"")
    dev.tap(10, 20)
    dev.long_tap(5, 6)
    dev.swipe(1, 2, 3, 4)
    dev.key("back")
    dev.key(66)
    assert transport.commands == ["input tap 10 20", "input swipe 5 6 5 6 800", "input swipe 1 2 3 4 300",
                                  "input keyevent KEYCODE_BACK", "input keyevent 66"]


def test_a_tap_is_not_sent_twice_after_a_dropped_connection() -> None:
    dev, transport, _ = device(lambda c: ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))
    with pytest.raises(DeviceError, match="input tap 1 2"):
        dev.tap(1, 2)
    assert transport.commands == ["input tap 1 2"]


def test_input_error_output_is_a_device_error() -> None:
    dev, transport, _ = device(lambda c: b"Exception occurred while executing 'tap':\njava.lang.Foo\n")
    with pytest.raises(DeviceError, match="Exception occurred"):
        dev.tap(1, 2)
    assert len(transport.commands) == 1


def test_input_text_is_one_round_trip() -> None:
    dev, transport, _ = device(lambda c: b"")
    dev.input_text("a%sb c")
    assert transport.commands == ["input text a% && input text sb%sc"]
    dev.input_text("")
    assert len(transport.commands) == 1


def test_non_ascii_text_uses_adb_keyboard_when_active() -> None:
    def respond(command: str) -> bytes:
        if command.startswith("settings get"):
            return f"{adb_shell.ADB_KEYBOARD_IME}\n".encode()
        return b"Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n"

    dev, transport, _ = device(respond)
    dev.input_text("caf\u00e9")
    assert transport.commands[0] == "settings get secure default_input_method"
    assert base64.b64decode(shlex.split(transport.commands[1])[-1]).decode() == "caf\u00e9"


def test_non_ascii_text_without_adb_keyboard_explains_the_fix() -> None:
    dev, transport, _ = device(lambda c: b"com.google.android.inputmethod.latin/.LatinIME\n")
    with pytest.raises(DeviceError) as err:
        dev.input_text("\u4f60\u597d")
    assert "ADBKeyBoard" in err.value.message and "LatinIME" in err.value.message
    assert "ime set" in (err.value.hint or "")
    assert transport.commands == ["settings get secure default_input_method"]


def test_screenshot_repairs_pty_line_endings_and_checks_the_signature() -> None:
    dev, _, _ = device(lambda c: PNG.replace(b"\n", b"\r\n"))
    assert dev.screenshot_png() == PNG
    dev, _, _ = device(lambda c: b"/system/bin/sh: screencap: not found")
    with pytest.raises(DeviceError, match="not a PNG"):
        dev.screenshot_png()


def test_current_app_falls_back_to_the_activity_manager() -> None:
    def respond(command: str) -> bytes:
        return (FOCUS_POPUP.replace("mFocusedApp", "x") if "window" in command else ACTIVITIES).encode()

    dev, transport, _ = device(respond)
    assert dev.current_app() == ("com.example.notes", "com.example.notes.NotesActivity")
    assert transport.commands == ["dumpsys window windows", "dumpsys activity activities"]
    dev, _, _ = device(lambda c: b"nothing useful")
    with pytest.raises(DeviceError, match="foreground app"):
        dev.current_app()


def test_screen_size_and_apps() -> None:
    dev, transport, _ = device(lambda c: b"Physical size: 1080x2400\n" if c == "wm size" else b"")
    assert dev.screen_size() == (1080, 2400)
    dev.app_start("org.example")
    dev.app_start("org.example", ".Main")
    dev.app_stop("org.example")
    assert transport.commands[1:] == ["monkey -p org.example -c android.intent.category.LAUNCHER 1",
                                      "am start -n org.example/.Main", "am force-stop org.example"]


@pytest.mark.parametrize("output, why", [
    (b"  bash arg: -p\n** No activities found to run, monkey aborted.\n", "no launchable activity"),
    (b"Starting: Intent { cmp=org.example/.Nope }\nError type 3\n"
     b"Error: Activity class {org.example/org.example.Nope} does not exist.\n", "Error type 3"),
])
def test_app_start_failures(output: bytes, why: str) -> None:
    dev, _, _ = device(lambda c: output)
    with pytest.raises(DeviceError, match=why):
        dev.app_start("org.example", ".Nope")


# -- choosing the device ----------------------------------------------------------------------

@dataclass
class Info:
    serial: str
    state: str


class FakeClient:
    host, port = "127.0.0.1", 5037

    def __init__(self, devices: list[tuple[str, str]] | Exception) -> None:
        self.devices = devices

    def list(self) -> list[Info]:
        if isinstance(self.devices, Exception):
            raise self.devices
        return [Info(s, st_) for s, st_ in self.devices]


def test_resolve_serial_prefers_explicit_then_environment_then_the_only_device() -> None:
    client = FakeClient([("emu-1", "device"), ("emu-2", "device")])
    assert resolve_serial("emu-2", client=client, env={"ANDROID_SERIAL": "emu-1"}) == "emu-2"
    assert resolve_serial(None, client=client, env={"ANDROID_SERIAL": "emu-1"}) == "emu-1"
    assert resolve_serial(None, client=FakeClient([("only", "device"), ("old", "offline")]), env={}) == "only"


def test_resolve_serial_errors_list_what_is_connected() -> None:
    with pytest.raises(UsageError) as several:
        resolve_serial(None, client=FakeClient([("emu-1", "device"), ("emu-2", "device")]), env={})
    assert "emu-1, emu-2" in several.value.message and "--device" in (several.value.hint or "")
    with pytest.raises(DeviceError, match=r"no device connected \(adb sees: none\)"):
        resolve_serial(None, client=FakeClient([]), env={})
    with pytest.raises(DeviceError, match=r"adb sees: phone \(unauthorized\)"):
        resolve_serial(None, client=FakeClient([("phone", "unauthorized")]), env={})
    with pytest.raises(DeviceError) as missing:
        resolve_serial("10.0.0.5:5555", client=FakeClient([("emu-1", "device")]), env={})
    assert "not connected (connected: emu-1)" in missing.value.message
    assert "adb connect 10.0.0.5:5555" in (missing.value.hint or "")
    with pytest.raises(DeviceError, match="ANDROID_SERIAL names device 'gone'"):
        resolve_serial(None, client=FakeClient([("emu-1", "device")]), env={"ANDROID_SERIAL": "gone"})
    with pytest.raises(DeviceError) as unauthorized:
        resolve_serial("phone", client=FakeClient([("phone", "unauthorized")]), env={})
    assert "USB debugging" in (unauthorized.value.hint or "")


def test_resolve_serial_without_a_server() -> None:
    client = FakeClient(adbutils.AdbError("connect to adb server failed: [Errno 111] Connection refused"))
    with pytest.raises(DeviceError, match="cannot reach the adb server at 127.0.0.1:5037"):
        resolve_serial(None, client=client, env={})
