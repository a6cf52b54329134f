"""The simulated Android device, independent of any transport.

``SimDevice`` holds what a phone holds for a UI-automation client: installed apps, the
foreground app and the home screen, a small file system, system properties and settings.
It answers shell command lines through ``run_shell`` with the output formats of a real
Android 14 device, since clients parse them with regular expressions (adbutils reads
``mCurrentFocus=Window{... pkg/act}``, ``Physical size: WxH``, ``UI hierchary dumped to:``...).
The ADB transport (``adbd.py``) is a thin layer on top; tests may also call the device directly.

Foreground model, as on Android: starting an app that is not running shows its launch screen
(``SimApp.launch``); starting one that is running brings it back where it was; ``am force-stop``
or ``am start -S`` ends it; ``pm clear`` wipes its data (``SimApp.reset``). BACK that the app
does not consume and HOME show the launcher. The extras of an ``am start`` intent
(``--es``/``--ez``/``--ei``...) reach apps that have ``on_intent(extras)``.

Faults (``faults.py``) are consulted as commands run: latency before each, dump errors, a late
app (``input_lag``: for a while after an input, dumps still show the screen from before it) and events after
each (the app crashing, a system dialog covering it: ``show_dialog``, ``SystemDialog``).

Time is the apps' own (deterministic, moved by inputs); ``advance_time(seconds)`` and the shell's
``sleep N`` let it pass at once for every app that keeps time, as a wait on a phone would
(``tapir.runtime.clock``).
"""

from __future__ import annotations

import base64
import binascii
import io
import random
import re
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from PIL import Image
from tapir.runtime.sim.app import SCREEN_HEIGHT, SCREEN_WIDTH, SimApp
from tapir.runtime.sim.faults import IDLE_STATE_ERROR, FaultEvent, Faults
from tapir.runtime.sim.files import FileSystem as FileSystem
from tapir.runtime.sim.files import FsError
from tapir.runtime.sim.keycodes import parse_keycode
from tapir.runtime.sim.launcher import LAUNCHER_PACKAGE, Launcher
from tapir.runtime.sim.shell import GENERIC_COMMANDS, CommandFn, Ctx, Shell, ShellResult
from tapir.runtime.sim.system_dialog import SystemDialog

DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
DENSITY = 420
LONG_PRESS_MS = 400  # ViewConfiguration.getLongPressTimeout()
TOUCH_SLOP_PX = 21  # 8dp at 420dpi: a "swipe" that moves less is a press
_SHELL_ENV = {"PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/vendor/bin",
              "HOME": "/", "USER": "shell", "HOSTNAME": "tapir_sim", "TMPDIR": "/data/local/tmp",
              "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "EXTERNAL_STORAGE": "/sdcard"}
LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
#: ADBKeyBoard (github.com/senzhk/ADBKeyBoard) comes with the simulated device, not enabled:
#: clients that need non-ASCII text enable and select it as they would on a phone.
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_ACTIONS = ("ADB_INPUT_TEXT", "ADB_INPUT_B64", "ADB_INPUT_CODE", "ADB_CLEAR_TEXT")
IMES = [LATIN_IME, ADB_KEYBOARD_IME]
SYSTEM_PACKAGES = (LAUNCHER_PACKAGE, "com.android.inputmethod.latin", "com.android.adbkeyboard")
_INPUT_SOURCES = {"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus",
                  "dpad", "gamepad", "touchscreen", "rotaryencoder"}


def default_props(serial: str, model: str) -> dict[str, str]:
    return {
        "ro.product.model": model,
        "ro.product.name": "tapir_sim",
        "ro.product.device": "tapir_sim",
        "ro.product.brand": "tapir",
        "ro.product.manufacturer": "Tapir",
        "ro.product.cpu.abi": "x86_64",
        "ro.build.version.sdk": "34",
        "ro.build.version.release": "14",
        "ro.build.version.codename": "REL",
        "ro.build.id": "UQ1A.240205.004",
        "ro.build.type": "userdebug",
        "ro.build.tags": "test-keys",
        "ro.build.fingerprint": f"tapir/tapir_sim/tapir_sim:14/UQ1A.240205.004/1:userdebug/test-keys ({model})",
        "ro.serialno": serial,
        "ro.debuggable": "1",
        "ro.sf.lcd_density": str(DENSITY),
        "sys.boot_completed": "1",
        "init.svc.bootanim": "stopped",
        "persist.sys.locale": "en-US",
        "persist.sys.timezone": "UTC",
    }


def _short_activity(package: str, activity: str) -> str:
    """``pkg/pkg.Main`` is printed as ``pkg/.Main`` in ActivityRecords."""
    return activity[len(package):] if activity.startswith(package + ".") else activity


def _hex_id(*parts: object) -> str:
    return format(zlib.crc32("/".join(map(str, parts)).encode()), "07x")[:7]


class SimDevice:
    """A phone with some ``SimApp``s installed. All methods are thread-safe."""

    def __init__(self, apps: Iterable[SimApp] = (), *, serial: str = "tapir-sim", model: str = "TapirSim",
                 faults: Faults | None = None, props: dict[str, str] | None = None,
                 screen_size: tuple[int, int] | None = None) -> None:
        apps = list(apps)
        #: The display in pixels: given, else the first app's (a replayed recording keeps the
        #: size of the phone it was recorded on), else 1080x2400.
        self.screen_size = screen_size or (apps[0].screen_size if apps else (SCREEN_WIDTH, SCREEN_HEIGHT))
        self.serial = serial
        self.faults = faults or Faults()
        self.fs = FileSystem()
        self.props = default_props(serial, model) | dict(props or {})
        self.settings: dict[str, dict[str, str]] = {
            "system": {"screen_brightness": "102", "screen_brightness_mode": "0", "screen_off_timeout": "600000"},
            "secure": {"android_id": "7a3c5e1f9b2d4c60", "default_input_method": LATIN_IME},
            "global": {"adb_enabled": "1", "airplane_mode_on": "0", "wifi_on": "1",
                       "window_animation_scale": "0.0", "transition_animation_scale": "0.0",
                       "animator_duration_scale": "0.0"},
        }
        #: Every command line run, oldest first (tests assert on what a client sent).
        self.log: deque[str] = deque(maxlen=10_000)
        self._lock = threading.RLock()
        self._apps: dict[str, SimApp] = {}
        self._running: dict[str, int] = {}  # package -> pid
        self._tasks: dict[str, int] = {}  # package -> task id
        self._next_pid = 4100
        self._next_task = 10
        self._front = LAUNCHER_PACKAGE
        self._enabled_imes = {LATIN_IME}
        self._time_debt = 0.0
        #: A system dialog covering the screen (it takes every touch), if one shows.
        self.dialog: SystemDialog | None = None
        #: The labels tapped on system dialogs, oldest first.
        self.dialog_answers: list[str] = []
        # a late app: the screen dumps still show, and until when (time.monotonic())
        self._stale: tuple[str, float] | None = None
        self.launcher = Launcher(self._launcher_entries, self._open_from_launcher, self.screen_size)
        for app in apps:
            self.install(app)
        self._commands = self._build_commands()

    # -- apps and the foreground -------------------------------------------------------------

    def install(self, app: SimApp) -> None:
        """Install (or replace) an app in its freshly installed state."""
        with self._lock:
            if app.package == LAUNCHER_PACKAGE:
                raise ValueError(f"{LAUNCHER_PACKAGE} is the launcher's package")
            app.reset()
            self._apps[app.package] = app
            self._running.pop(app.package, None)
            if self.faults.drift is not None and hasattr(app, "set_drift"):
                app.set_drift(self.faults.drift, **self.faults.drift_options)

    def uninstall(self, package: str) -> bool:
        with self._lock:
            if package not in self._apps:
                return False
            self.force_stop(package)
            del self._apps[package]
            return True

    @property
    def apps(self) -> dict[str, SimApp]:
        """Installed apps by package (a copy)."""
        with self._lock:
            return dict(self._apps)

    def app(self, package: str) -> SimApp:
        with self._lock:
            return self._apps[package]

    @property
    def foreground(self) -> SimApp:
        """The app on screen: an installed app or the launcher."""
        with self._lock:
            return self._apps.get(self._front, self.launcher)  # type: ignore[return-value]

    @property
    def current_package(self) -> str:
        with self._lock:
            return self._front

    @property
    def current_activity(self) -> str:
        with self._lock:
            return self.foreground.activity

    def is_running(self, package: str) -> bool:
        with self._lock:
            return package in self._running

    def start_app(self, package: str, *, stop_first: bool = False) -> str:
        """Bring an app to the front; ``"cold"`` when it had to be started, else ``"hot"``."""
        with self._lock:
            if package == LAUNCHER_PACKAGE:
                self.go_home()
                return "hot"
            app = self._apps[package]
            if stop_first:
                self.force_stop(package)
            state = "hot"
            if package not in self._running:
                self._running[package] = self._next_pid
                self._next_pid += 1
                self._tasks.setdefault(package, self._next_task)
                self._next_task += 1
                app.launch()
                state = "cold"
            self._front = package
            return state

    def advance_time(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass for every installed app that keeps time (whole
        seconds reach the apps; the fractions add up)."""
        with self._lock:
            self._time_debt += seconds
            whole = int(self._time_debt)
            if whole <= 0:
                return
            self._time_debt -= whole
            for app in self._apps.values():
                advance = getattr(app, "advance", None)
                if callable(advance):
                    advance(whole)

    def go_home(self) -> None:
        with self._lock:
            self._front = LAUNCHER_PACKAGE

    def force_stop(self, package: str) -> None:
        with self._lock:
            self._running.pop(package, None)
            if self._front == package:
                self._front = LAUNCHER_PACKAGE
            if self.dialog is not None and self.dialog.owner == package:
                self.dialog = None

    def crash(self) -> str | None:
        """The foreground app dies (the launcher shows, its process is gone); its package, or None
        when the launcher was in front."""
        with self._lock:
            package = self._front
            if package == LAUNCHER_PACKAGE:
                return None
            self.force_stop(package)
            return package

    def show_dialog(self, dialog: SystemDialog | None = None) -> SystemDialog:
        """Cover the screen with a system dialog (default: the notification-permission prompt of
        the foreground app) until one of its buttons is tapped."""
        with self._lock:
            if dialog is None:
                front = self.foreground
                dialog = SystemDialog.permission(front.label, owner=front.package, size=self.screen_size)
            self.dialog = dialog
            return dialog

    def clear_data(self, package: str) -> None:
        with self._lock:
            self.force_stop(package)
            self._apps[package].reset()

    def press_key(self, keycode: str) -> None:
        """Deliver a key (``KEYCODE_BACK``...) as the system would."""
        with self._lock:
            if keycode == "KEYCODE_HOME":
                self.go_home()
                return
            if keycode in ("KEYCODE_POWER", "KEYCODE_WAKEUP", "KEYCODE_SLEEP", "KEYCODE_APP_SWITCH"):
                return
            if self.dialog is not None:
                if keycode == "KEYCODE_BACK" and self.dialog.cancelable:
                    self.dialog = None
                return
            front = self.foreground
            consumed = front.key(keycode)
            if keycode == "KEYCODE_BACK" and not consumed and front is not self.launcher:
                self.go_home()

    def set_drift(self, value: Any, package: str | None = None, **options: Any) -> list[str]:
        """Pass a UI-drift setting (and options such as ``seed``/``rate``) to apps that have
        ``set_drift``: all of them, or one package. Returns the packages that took it."""
        with self._lock:
            if package is None:
                self.faults.drift, self.faults.drift_options = value, dict(options)
            took = []
            for pkg, app in self._apps.items():
                if (package is None or pkg == package) and hasattr(app, "set_drift"):
                    app.set_drift(value, **options)
                    took.append(pkg)
            return took

    def _launcher_entries(self) -> list[tuple[str, str]]:
        return [(pkg, app.label) for pkg, app in self._apps.items()]

    def _open_from_launcher(self, package: str) -> None:
        self.start_app(package)

    def dump_xml(self) -> str:
        with self._lock:
            return self.dialog.dump_xml() if self.dialog is not None else self.foreground.dump_xml()

    def screenshot_png(self) -> bytes:
        with self._lock:
            below = self.foreground.screenshot_png()
            return self.dialog.screenshot_png(below) if self.dialog is not None else below

    def tap(self, x: int, y: int, *, long: bool = False) -> None:
        """A touch at (x, y): on the dialog when one shows (only its buttons react), else the app."""
        with self._lock:
            if self.dialog is not None:
                label = self.dialog.button_at(x, y)
                if label is not None:
                    dialog, self.dialog = self.dialog, None
                    self.dialog_answers.append(label)
                    if dialog.on_answer is not None:
                        dialog.on_answer(label)
            elif long:
                self.foreground.long_tap(x, y)
            else:
                self.foreground.tap(x, y)

    def _type(self, text: str) -> None:
        """Text into the focused input (a system dialog has none: typing on it does nothing)."""
        with self._lock:
            if self.dialog is None:
                self.foreground.input_text(text)

    def _fire(self, event: FaultEvent) -> None:
        """A fault event happens now (``Faults.events``)."""
        with self._lock:
            if callable(event.what):
                event.what(self)
            elif event.what == "crash":
                self.crash()
            elif event.what == "dialog":
                self.show_dialog()
            elif event.what == "home":
                self.go_home()
            elif event.what == "back":
                self.press_key("KEYCODE_BACK")

    def _input_begins(self) -> None:
        """A late app (``Faults.input_lag``): for a while, dumps show the screen from before this
        input (or from before the first of several inputs in quick succession)."""
        lag = self.faults.input_lag
        if lag > 0:
            now = time.monotonic()
            shown = self._stale[0] if self._stale is not None and now < self._stale[1] else self.dump_xml()
            self._stale = (shown, now + lag)

    # -- the shell -----------------------------------------------------------------------------

    def run_shell(self, command: str, stdin: Callable[[], bytes] | None = None) -> ShellResult:
        """Run a command line as ``adb shell`` does (in ``/``, as the shell user)."""
        self.log.append(command)
        shell = Shell(self.fs, self._commands, _SHELL_ENV, before_command=self._before_command)
        return shell.run(command, stdin)

    def _before_command(self, name: str) -> None:
        delay = self.faults.latency_for(name)
        if delay > 0:
            threading.Event().wait(delay)  # outside the device lock: other streams go on

    def _build_commands(self) -> dict[str, CommandFn]:
        own: dict[str, CommandFn] = {
            "uiautomator": self._uiautomator, "input": self._input, "am": self._am, "monkey": self._monkey,
            "pm": self._pm, "cmd": self._cmd, "dumpsys": self._dumpsys, "wm": self._wm,
            "screencap": self._screencap, "getprop": self._getprop, "setprop": self._setprop,
            "settings": self._settings, "pidof": self._pidof, "ime": self._ime,
        }
        commands: dict[str, CommandFn] = {}
        for name, fn in {**GENERIC_COMMANDS, **own}.items():
            commands[name] = self._locked(fn)
        commands["sleep"] = self._sleep  # takes the lock itself, briefly
        return commands

    def _sleep(self, ctx: Ctx) -> int:
        """``sleep N``: the apps' time is simulated, so N seconds of it pass at once and nothing
        waits (a client waiting on the device sees the time pass, deterministically)."""
        try:
            seconds = float(ctx.args[0]) if ctx.args else 0.0
        except ValueError:
            return ctx.fail(f"invalid number '{ctx.args[0]}'")
        if not seconds >= 0 or seconds == float("inf"):
            return ctx.fail(f"invalid number '{ctx.args[0]}'")
        self.advance_time(seconds)
        return 0

    def _locked(self, fn: CommandFn) -> CommandFn:
        def run(ctx: Ctx) -> int:
            with self._lock:
                status = fn(ctx)
                for event in self.faults.take_events(ctx.argv[0]) if self.faults.events else ():
                    self._fire(event)
                return status
        return run

    # -- uiautomator ---------------------------------------------------------------------------

    def _uiautomator(self, ctx: Ctx) -> int:
        if not ctx.args or ctx.args[0] not in ("dump", "help"):
            if ctx.args and ctx.args[0] in ("runtest", "events"):
                return ctx.fail(f"'{ctx.args[0]}' is not available on the simulated device")
            ctx.out("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                    "help: displays help message\n\n"
                    "dump: creates an XML dump of current UI hierarchy\n"
                    "    dump [--verbose][file]\n"
                    "      [--compressed]: dumps compressed layout information.\n"
                    "      [file]: the location where the dumped XML should be stored, default is\n"
                    f"      {DEFAULT_DUMP_PATH}\n")
            return 0
        if ctx.args[0] == "help":
            return self._uiautomator(Ctx(["uiautomator"], ctx.env, ctx.stdout, ctx.stderr, ctx.shell))
        operands = [a for a in ctx.args[1:] if not a.startswith("--")]
        path = operands[0] if operands else DEFAULT_DUMP_PATH
        if self.faults.take_dump_error():
            # uiautomator prints the error and returns normally: exit status 0, no file.
            ctx.err(IDLE_STATE_ERROR + "\n")
            return 0
        xml = self.dump_xml()
        if self._stale is not None:
            if time.monotonic() < self._stale[1]:
                xml = self._stale[0]
            else:
                self._stale = None
        try:
            ctx.write_file(path, xml.encode("utf-8"))
        except FsError as exc:
            ctx.err(f"java.io.FileNotFoundException: {path}: open failed: {exc.reason}\n")
            return 1
        ctx.out(f"UI hierchary dumped to: {ctx.path(path)}\n")
        return 0

    # -- input ---------------------------------------------------------------------------------

    def _input(self, ctx: Ctx) -> int:
        args = list(ctx.args)
        if args and args[0] in _INPUT_SOURCES:
            args.pop(0)
        if len(args) >= 2 and args[0] == "-d":
            args = args[2:]
        if not args:
            return self._input_usage(ctx)
        verb, rest = args[0], args[1:]
        self._input_begins()
        if verb == "text":
            if not rest:
                return self._input_invalid(ctx, verb)
            # Input.sendText: "%s" stands for a space; everything else is typed as is, one
            # key event per character through the virtual keyboard's key map, which only has
            # ASCII (anything else fails before a single key is sent).
            text = rest[0].replace("%s", " ")
            if any(not (" " <= ch <= "~" or ch in "\n\t") for ch in text):
                ctx.err("Exception occurred while executing 'text':\n"
                        "java.lang.NullPointerException: Attempt to get length of null array\n")
                return 255
            for piece in re.split(r"([\n\t])", text):
                if piece in ("\n", "\t"):
                    self.press_key("KEYCODE_ENTER" if piece == "\n" else "KEYCODE_TAB")
                elif piece:
                    self._type(piece)
            return 0
        if verb == "keyevent":
            flags = [a for a in rest if a.startswith("--")]
            codes = [a for a in rest if not a.startswith("--")]
            if not codes:
                return self._input_invalid(ctx, verb)
            for arg in codes:
                name = parse_keycode(arg)
                if name is None:
                    ctx.err(f"Error: Unknown keycode: {arg}\n")
                    return 1
                self.press_key(name)
                if "--doubletap" in flags:
                    self.press_key(name)
            return 0
        if verb in ("tap", "press"):
            coords = self._coords(rest, 2)
            if coords is None:
                return self._input_invalid(ctx, verb)
            self.tap(coords[0], coords[1])
            return 0
        if verb in ("swipe", "draganddrop"):
            coords = self._coords(rest[:4], 4)
            duration = 300
            if coords is not None and len(rest) > 4:
                try:
                    duration = int(float(rest[4]))
                except ValueError:
                    coords = None
            if coords is None:
                return self._input_invalid(ctx, verb)
            x1, y1, x2, y2 = coords
            still = abs(x2 - x1) <= TOUCH_SLOP_PX and abs(y2 - y1) <= TOUCH_SLOP_PX
            if still:
                self.tap(x1, y1, long=duration >= LONG_PRESS_MS)
            elif self.dialog is None:
                self.foreground.swipe(x1, y1, x2, y2, duration)
            return 0
        ctx.err(f"Error: Unknown command: {verb}\n")
        self._input_usage(ctx)
        return 1

    @staticmethod
    def _coords(values: list[str], count: int) -> list[int] | None:
        if len(values) != count:
            return None
        try:
            return [round(float(v)) for v in values]
        except ValueError:
            return None

    def _input_invalid(self, ctx: Ctx, verb: str) -> int:
        ctx.err(f"Error: Invalid arguments for command: {verb}\n")
        self._input_usage(ctx)
        return 1

    @staticmethod
    def _input_usage(ctx: Ctx) -> int:
        ctx.err("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
                "The commands and default sources are:\n"
                "      text <string> (Default: keyboard)\n"
                "      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n"
                "      tap <x> <y> (Default: touchscreen)\n"
                "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      press (Default: trackball)\n")
        return 1

    # -- am / monkey ---------------------------------------------------------------------------

    def _am(self, ctx: Ctx) -> int:
        if not ctx.args:
            ctx.out("Activity manager (activity) commands:\n  help\n  start [-W] [-S] [-n <COMPONENT>] ...\n"
                    "  force-stop <PACKAGE>\n  kill <PACKAGE>\n  broadcast <INTENT>\n")
            return 0
        verb, rest = ctx.args[0], ctx.args[1:]
        if verb in ("start", "start-activity"):
            return self._am_start(ctx, rest)
        if verb in ("force-stop", "kill", "stop-app"):
            packages = [a for a in rest if not a.startswith("--") and not a.isdigit()]
            for package in packages:
                self.force_stop(package)
            return 0
        if verb == "kill-all":
            for package in list(self._running):
                if package != self._front:
                    self.force_stop(package)
            return 0
        if verb == "broadcast":
            return self._am_broadcast(ctx, rest)
        if verb == "get-current-user":
            ctx.out("0\n")
            return 0
        ctx.err(f"Unknown command: {verb}\n")
        return 1

    def _am_start(self, ctx: Ctx, args: list[str]) -> int:
        action = data = package = component = None
        categories: list[str] = []
        extras: dict[str, str] = {}
        wait = stop_first = False
        with_value = {"-a", "-d", "-t", "-c", "-n", "-p", "-f", "--user", "-P", "--start-profiler",
                      "--sampling", "-R", "--display", "--windowingMode", "--activityType", "--task"}
        with_two = {"-e", "--es", "--ez", "--ei", "--el", "--ef", "--eu", "--ecn", "--eia", "--ela", "--efa",
                    "--esa", "--esn"}
        i = 0
        while i < len(args):
            a = args[i]
            if a in with_value:
                if i + 1 >= len(args):
                    ctx.err(f"Error: No argument expected after \"{a}\"\n")
                    return 1
                value = args[i + 1]
                if a == "-a":
                    action = value
                elif a == "-d":
                    data = value
                elif a == "-c":
                    categories.append(value)
                elif a == "-n":
                    component = value
                elif a == "-p":
                    package = value
                i += 2
            elif a in with_two:
                if i + 2 >= len(args):
                    ctx.err(f"Error: No argument expected after \"{a}\"\n")
                    return 1
                extras[args[i + 1]] = args[i + 2]
                i += 3
            elif a in ("-W",):
                wait = True
                i += 1
            elif a in ("-S",):
                stop_first = True
                i += 1
            elif a.startswith("-"):
                i += 1  # flags without a value: -D, -N, --activity-clear-top, --receiver-foreground...
            else:
                if "/" in a and ":" not in a:
                    component = a
                else:
                    data = a
                i += 1
        target_pkg = target_act = None
        if component:
            target_pkg, _, target_act = component.partition("/")
            if target_act.startswith("."):
                target_act = target_pkg + target_act
        elif package:
            target_pkg = package
        elif "android.intent.category.HOME" in categories:
            target_pkg = LAUNCHER_PACKAGE

        desc = []
        if action:
            desc.append(f"act={action}")
        if categories:
            desc.append(f"cat=[{','.join(categories)}]")
        if data:
            desc.append(f"dat={data}")
        if package and not component:
            desc.append(f"pkg={package}")
        if component:
            desc.append(f"cmp={target_pkg}/{_short_activity(target_pkg or '', target_act or '')}")
        if extras:
            desc.append("(has extras)")
        intent = "Intent { " + " ".join(desc) + " }"
        ctx.out(f"Starting: {intent}\n")
        if target_pkg is None:
            ctx.err(f"Error: Activity not started, unable to resolve {intent}\n")
            return 1
        if target_pkg != LAUNCHER_PACKAGE and target_pkg not in self._apps:
            shown = f"{{{target_pkg}/{target_act}}}" if component else f"{{{target_pkg}}}"
            ctx.err(f"Error type 3\nError: Activity class {shown} does not exist.\n")
            return 1
        was_front = self._front == target_pkg
        state = self.start_app(target_pkg, stop_first=stop_first)
        front = self.foreground
        on_intent = getattr(front, "on_intent", None)
        if extras and callable(on_intent) and target_pkg != LAUNCHER_PACKAGE:
            on_intent(dict(extras))
        if state == "hot" and target_pkg != LAUNCHER_PACKAGE:
            if was_front:
                ctx.err("Warning: Activity not started, intent has been delivered to currently running "
                        "top-most instance.\n")
            else:
                ctx.err("Warning: Activity not started, its current task has been brought to the front\n")
        if wait:
            ctx.out("Status: ok\n")
            ctx.out(f"LaunchState: {'COLD' if state == 'cold' else 'HOT'}\n")
            ctx.out(f"Activity: {front.package}/{front.activity}\n")
            if state == "cold":
                ctx.out("TotalTime: 215\n")
            ctx.out("WaitTime: 218\nComplete\n")
        return 0

    def _am_broadcast(self, ctx: Ctx, args: list[str]) -> int:
        action = None
        extras: dict[str, str] = {}
        i = 0
        while i < len(args):
            if args[i] == "-a" and i + 1 < len(args):
                action = args[i + 1]
                i += 2
            elif args[i] in ("--es", "--ei", "--ez", "--el", "--ef", "-e") and i + 2 < len(args):
                extras[args[i + 1]] = args[i + 2]
                i += 3
            else:
                i += 1
        shown = f"act={action} " if action else ""
        ctx.out(f"Broadcasting: Intent {{ {shown}flg=0x400000{' (has extras)' if extras else ''} }}\n")
        if action in ADB_KEYBOARD_ACTIONS and self.settings["secure"]["default_input_method"] == ADB_KEYBOARD_IME:
            self._adb_keyboard(action, extras)
        ctx.out("Broadcast completed: result=0\n")
        return 0

    def _adb_keyboard(self, action: str, extras: dict[str, str]) -> None:
        """ADBKeyBoard, the IME that types any Unicode text sent to it by broadcast."""
        if action == "ADB_INPUT_TEXT" and "msg" in extras:
            self._type(extras["msg"])
        elif action == "ADB_INPUT_B64" and "msg" in extras:
            try:
                self._type(base64.b64decode(extras["msg"]).decode("utf-8"))
            except (binascii.Error, UnicodeDecodeError):
                pass  # the IME ignores a message it cannot decode
        elif action == "ADB_INPUT_CODE" and extras.get("code", "").isdigit():
            name = parse_keycode(extras["code"])
            if name is not None:
                self.press_key(name)

    def _ime(self, ctx: Ctx) -> int:
        verb = ctx.args[0] if ctx.args else ""
        rest = [a for a in ctx.args[1:] if not a.startswith("-")]
        flags = [a for a in ctx.args[1:] if a.startswith("-")]
        if verb == "list":
            shown = IMES if "-a" in flags else [i for i in IMES if i in self._enabled_imes]
            for ime in shown:
                ctx.out(f"{ime}\n" if "-s" in flags else f"{ime}:\n  mId={ime}\n")
            return 0
        if verb in ("enable", "disable", "set") and rest:
            ime = rest[0]
            if ime not in IMES:
                ctx.err(f"Unknown input method {ime} cannot be {'selected' if verb == 'set' else verb + 'd'} "
                        "for user #0\n")
                return 255
            if verb == "enable":
                self._enabled_imes.add(ime)
                ctx.out(f"Input method {ime}: now enabled for user #0\n")
            elif verb == "disable":
                self._enabled_imes.discard(ime)
                ctx.out(f"Input method {ime}: now disabled for user #0\n")
            else:
                self._enabled_imes.add(ime)
                self.settings["secure"]["default_input_method"] = ime
                ctx.out(f"Input method {ime} selected for user #0\n")
            return 0
        if verb == "reset":
            self._enabled_imes = {IMES[0]}
            self.settings["secure"]["default_input_method"] = IMES[0]
            return 0
        ctx.err("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset\n")
        return 1

    def _monkey(self, ctx: Ctx) -> int:
        args = list(ctx.args)
        for a in args:
            ctx.out(f"  bash arg: {a}\n")
        packages: list[str] = []
        seed = 0
        count = 0
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-p" and i + 1 < len(args):
                packages.append(args[i + 1])
                i += 2
            elif a == "-s" and i + 1 < len(args):
                seed = int(args[i + 1]) if args[i + 1].isdigit() else 0
                i += 2
            elif a in ("-c", "--throttle", "--pct-touch", "--pct-motion", "--pct-syskeys",
                       "--pct-appswitch", "--pct-anyevent", "--pct-nav", "--pct-majornav",
                       "--pct-trackball", "--pct-flip", "--pct-pinchzoom", "--pct-rotation"):
                i += 2
            elif a.isdigit():
                count = int(a)
                i += 1
            else:
                i += 1
        ctx.out(f"args: [{', '.join(args)}]\n")
        for a in args:
            ctx.out(f' arg: "{a}"\n')
        for a in args:
            if not a.startswith("-") and not a.isdigit():
                ctx.out(f'data="{a}"\n')
        runnable = [p for p in packages if p in self._apps]
        if not runnable or count <= 0:
            if count <= 0:
                ctx.err("** Error: Count not specified\n")
                return 1
            ctx.out("** No activities found to run, monkey aborted.\n")
            return 252
        rng = random.Random(seed)
        self.start_app(runnable[0])
        # Events after the first app switch are random taps on whatever is on screen.
        for _ in range(count - 1):
            self.foreground.tap(rng.randrange(self.screen_size[0]), rng.randrange(self.screen_size[1]))
        ctx.out(f"Events injected: {count}\n")
        ctx.out("## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, 14ms not connected)\n")
        return 0

    # -- pm / cmd ------------------------------------------------------------------------------

    def _apk_path(self, package: str) -> str:
        return f"/data/app/~~{_hex_id('apk', package)}==/{package}-{_hex_id('dir', package)}==/base.apk"

    def _pm(self, ctx: Ctx) -> int:
        if not ctx.args:
            ctx.out("Package manager (package) commands:\n  list packages [-f] [-3] [-s] [FILTER]\n"
                    "  path PACKAGE\n  clear PACKAGE\n  uninstall PACKAGE\n")
            return 0
        verb, rest = ctx.args[0], ctx.args[1:]
        if verb == "list" and rest[:1] == ["packages"]:
            opts = [a for a in rest[1:] if a.startswith("-")]
            operands = [a for a in rest[1:] if not a.startswith("-") and not a.isdigit()]
            names = list(self._apps)
            if "-3" not in opts:
                names = [*SYSTEM_PACKAGES, *names]
            if "-s" in opts:
                names = list(SYSTEM_PACKAGES)
            for name in names:
                if operands and operands[0] not in name:
                    continue
                prefix = f"{self._apk_path(name)}=" if "-f" in opts else ""
                ctx.out(f"package:{prefix}{name}\n")
            return 0
        if verb == "path":
            pkg = rest[-1] if rest else ""
            if pkg not in self._apps and pkg != LAUNCHER_PACKAGE:
                return 1
            ctx.out(f"package:{self._apk_path(pkg)}\n")
            return 0
        if verb == "resolve-activity":
            pkg = next((a for a in reversed(rest) if not a.startswith("-") and "." in a
                        and not a.startswith("android.intent.")), "")
            app = self._apps.get(pkg)
            if app is None:
                ctx.out("No activity found\n")
                return 0
            activity = getattr(app, "launch_activity", None) or app.activity
            ctx.out("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
                    f"{pkg}/{_short_activity(pkg, activity)}\n")
            return 0
        if verb == "clear":
            pkg = rest[-1] if rest else ""
            if pkg not in self._apps:
                ctx.out("Failed\n")
                return 1
            self.clear_data(pkg)
            ctx.out("Success\n")
            return 0
        if verb == "uninstall":
            pkg = rest[-1] if rest else ""
            if self.uninstall(pkg):
                ctx.out("Success\n")
                return 0
            ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
            return 1
        if verb in ("install", "install-create", "install-multiple"):
            ctx.out("Failure [INSTALL_FAILED_INVALID_APK: the simulated device cannot install APKs]\n")
            return 1
        if verb in ("grant", "revoke", "enable", "disable", "disable-user", "set-permission-flags"):
            return 0
        ctx.err(f"Unknown command: {verb}\n")
        return 1

    def _cmd(self, ctx: Ctx) -> int:
        services = {"package": self._pm, "activity": self._am, "input": self._input, "window": self._wm,
                    "settings": self._settings}
        if not ctx.args or ctx.args[0] == "-l":
            ctx.out("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(services)))
            return 0
        fn = services.get(ctx.args[0])
        if fn is None:
            ctx.err(f"cmd: Can't find service: {ctx.args[0]}\n")
            return 20
        return fn(Ctx([ctx.args[0], *ctx.args[1:]], ctx.env, ctx.stdout, ctx.stderr, ctx.shell,
                      ctx.stdin_source))

    # -- dumpsys -------------------------------------------------------------------------------

    def _record(self, package: str, activity: str) -> str:
        task = self._tasks.get(package, 1)
        return f"ActivityRecord{{{_hex_id('rec', package)} u0 {package}/{_short_activity(package, activity)} t{task}}}"

    def _window(self, package: str, activity: str) -> str:
        return f"Window{{{_hex_id('win', package)} u0 {package}/{activity}}}"

    def _stack(self) -> list[SimApp]:
        """Visible-first list of the front app and the launcher behind it."""
        front = self.foreground
        return [front] if front is self.launcher else [front, self.launcher]  # type: ignore[list-item]

    def _dumpsys_window(self, sub: str) -> str:
        front = self.foreground
        w, h = self.screen_size
        lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
        for i, app in enumerate(self._stack()):
            visible = "true" if app is front else "false"
            uid = 10100 + list(self._apps).index(app.package) if app.package in self._apps else 10020
            lines += [
                f"  Window #{i} {self._window(app.package, app.activity)}:",
                f"    mDisplayId=0 rootTaskId={self._tasks.get(app.package, 1)} "
                f"mSession=Session{{{_hex_id('ses', app.package)} "
                f"{self._running.get(app.package, 1800)}:u0a{uid % 10000}}}",
                f"    mOwnerUid={uid} showForAllUsers=false package={app.package} appop=NONE",
                "    mAttrs={(0,0)(fillxfill) sim={adjust=pan} ty=BASE_APPLICATION fmt=TRANSLUCENT}",
                f"    Requested w={w} h={h} mLayoutSeq=42",
                f"    mHasSurface={visible} isReadyForDisplay()={visible}",
                f"    isOnScreen={visible}",
                f"    isVisible={visible}",
            ]
        lines += [
            "",
            f"  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h914dp {DENSITY}dpi nrml "
            "long port finger -keyb/v/h -nav/h winConfig={ mBounds=Rect(0, 0 - "
            f"{w}, {h}) mAppBounds=Rect(0, 0 - {w}, {h}) "
            "mWindowingMode=fullscreen mActivityType=undefined} s.1}",
            "  mHasPermanentDpad=false",
            "  mTopFocusedDisplayId=0",
            "  mInputMethodWindow=null",
            f"  mCurrentFocus={self._window(front.package, front.activity)}",
            f"  mFocusedApp={self._record(front.package, front.activity)}",
        ]
        return "\n".join(lines) + "\n"

    def _dumpsys_activity(self, sub: str) -> str:
        front = self.foreground
        if sub == "top":
            lines = [f"TASK 10100:{front.package} id={self._tasks.get(front.package, 1)} userId=0",
                     f"  ACTIVITY {front.package}/{_short_activity(front.package, front.activity)} "
                     f"{_hex_id('rec', front.package)} pid={self._running.get(front.package, 1800)}"]
            return "\n".join(lines) + "\n"
        lines = ["ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
                 "Display #0 (activities from top to bottom):"]
        for app in self._stack():
            task = self._tasks.get(app.package, 1)
            visible = "true" if app is front else "false"
            lines += [
                f"  * Task{{{_hex_id('task', app.package)} #{task} type=standard A=10100:{app.package} U=0 "
                f"visible={visible} visibleRequested={visible} mode=fullscreen translucent=false sz=1}}",
                f"    * Hist  #0: {self._record(app.package, app.activity)}",
                f"      packageName={app.package} processName={app.package}",
            ]
        record = self._record(front.package, front.activity)
        lines += [
            "",
            "  Resumed activities in task display areas (from top to bottom):",
            f"    Resumed: {record}",
            "",
            f"  mFocusedApp={record}",
            f"  mResumedActivity: {record}",
            f"  ResumedActivity: {record}",
        ]
        return "\n".join(lines) + "\n"

    def _dumpsys_display(self) -> str:
        w, h = self.screen_size
        return (
            "DISPLAY MANAGER (dumpsys display)\n"
            "  mOnlyCore=false\n  mSafeMode=false\n  mPendingTraversal=false\n"
            "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, "
            "uniqueId='local:4619827259835644672', physicalPort=0, orientation=0, "
            f"logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), "
            f"deviceWidth={w}, deviceHeight={h}}}]\n"
            "  mDefaultDisplayDefaultColorMode=0\n\n"
            "Display Devices: size=1\n"
            f"  DisplayDeviceInfo{{\"Built-in Screen\": uniqueId=\"local:4619827259835644672\", {w} x {h}, "
            f"modeId 1, defaultModeId 1, density {DENSITY}, {DENSITY}.0 x {DENSITY}.0 dpi, touch INTERNAL, "
            "rotation 0, type INTERNAL, state ON, FLAG_ALLOWED_TO_BE_DEFAULT_DISPLAY, FLAG_ROTATES_WITH_CONTENT}\n"
            "    mCurrentLayerStack=0\n    mCurrentOrientation=0\n"
        )

    def _dumpsys_package(self, package: str) -> str:
        if package not in self._apps:
            return ""
        return (
            "Packages:\n"
            f"  Package [{package}] ({_hex_id('pkg', package)}):\n"
            f"    userId={10100 + list(self._apps).index(package)}\n"
            f"    pkg=Package{{{_hex_id('pkgobj', package)} {package}}}\n"
            f"    codePath={self._apk_path(package).rsplit('/', 1)[0]}\n"
            "    versionCode=1 minSdk=24 targetSdk=34\n"
            "    versionName=1.0\n"
            "    signatures=PackageSignatures{7a1b2c3 version:2, signatures:[5e6f7a8b], past signatures:[]}\n"
            "    firstInstallTime=2026-01-01 00:00:00\n"
            "    lastUpdateTime=2026-01-01 00:00:00\n"
        )

    def _dumpsys(self, ctx: Ctx) -> int:
        services: dict[str, Callable[[str], str]] = {
            "window": self._dumpsys_window,
            "activity": self._dumpsys_activity,
            "display": lambda sub: self._dumpsys_display(),
            "package": self._dumpsys_package,
            "power": lambda sub: ("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n"
                                  "  mHoldingDisplaySuspendBlocker=true\n  mHoldingWakeLockSuspendBlocker=false\n"),
            "battery": lambda sub: ("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
                                    "  Wireless powered: false\n  Max charging current: 500000\n"
                                    "  Max charging voltage: 5000000\n  Charge counter: 4000000\n"
                                    "  status: 2\n  health: 2\n  present: true\n  level: 100\n  scale: 100\n"
                                    "  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n"),
        }
        if not ctx.args or ctx.args[0] == "-l":
            if ctx.args:
                ctx.out("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(services)))
                return 0
            for name in ("window", "activity", "display"):
                ctx.out("-" * 78 + f"\nDUMP OF SERVICE {name}:\n" + services[name]("") + "\n")
            return 0
        name = ctx.args[0]
        fn = services.get(name)
        if fn is None:
            ctx.err(f"Can't find service: {name}\n")
            return 0
        sub = next((a for a in ctx.args[1:] if not a.startswith("-")), "")
        ctx.out(fn(sub))
        return 0

    # -- wm / screencap / props / settings ----------------------------------------------------

    def _wm(self, ctx: Ctx) -> int:
        verb = ctx.args[0] if ctx.args else ""
        rest = ctx.args[1:]
        if verb == "size" and not rest:
            ctx.out(f"Physical size: {self.screen_size[0]}x{self.screen_size[1]}\n")
            return 0
        if verb == "density" and not rest:
            ctx.out(f"Physical density: {DENSITY}\n")
            return 0
        if verb in ("size", "density") and rest == ["reset"]:
            return 0
        if verb in ("size", "density"):
            ctx.err(f"Error: the simulated device cannot change its {verb}\n")
            return 1
        ctx.err(f"Error: Unknown command: {verb}\n" if verb else "Error: no command given\n")
        return 1

    def _screencap(self, ctx: Ctx) -> int:
        png = False
        operands = []
        args = list(ctx.args)
        while args:
            a = args.pop(0)
            if a == "-p":
                png = True
            elif a == "-d" and args:
                args.pop(0)
            elif a == "-h":
                ctx.out("usage: screencap [-hp] [-d display-id] [FILENAME]\n"
                        "   -h: this message\n   -p: save the file as a png.\n"
                        "If FILENAME ends with .png it will be saved as a png.\n"
                        "If FILENAME is not given, the results will be printed to stdout.\n")
                return 0
            elif a.startswith("-"):
                continue
            else:
                operands.append(a)
        data = self.screenshot_png()
        if operands and operands[0].endswith(".png"):
            png = True
        if not png:
            image = Image.open(io.BytesIO(data)).convert("RGBA")
            # Raw format: width, height, pixel format (1 = RGBA_8888), data space; then pixels.
            data = struct.pack("<4I", image.width, image.height, 1, 0) + image.tobytes()
        if operands:
            try:
                ctx.write_file(operands[0], data)
            except FsError as exc:
                ctx.err(f"Error opening file: {operands[0]} ({exc.reason})\n")
                return 1
        else:
            ctx.out(data)
        return 0

    def _getprop(self, ctx: Ctx) -> int:
        if not ctx.args:
            for key in sorted(self.props):
                ctx.out(f"[{key}]: [{self.props[key]}]\n")
            return 0
        default = ctx.args[1] if len(ctx.args) > 1 else ""
        ctx.out(self.props.get(ctx.args[0], default) + "\n")
        return 0

    def _setprop(self, ctx: Ctx) -> int:
        if len(ctx.args) != 2:
            return ctx.fail("need 2 arguments", 1)
        key, value = ctx.args
        if key.startswith("ro.") and key in self.props:
            ctx.err(f"Failed to set property '{key}' to '{value}'.\n")
            return 1
        self.props[key] = value
        return 0

    def _settings(self, ctx: Ctx) -> int:
        args = [a for a in ctx.args if a not in ("--user", "current") and not a.isdigit()]
        if len(args) < 2 or args[1] not in self.settings:
            ctx.err("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                    "        settings [--user <USER_ID> | current] put namespace key value\n"
                    "        settings [--user <USER_ID> | current] list namespace\n")
            return 1
        verb, table = args[0], self.settings[args[1]]
        if verb == "get" and len(args) >= 3:
            ctx.out(table.get(args[2], "null") + "\n")
            return 0
        if verb == "put" and len(args) >= 4:
            table[args[2]] = args[3]
            return 0
        if verb == "delete" and len(args) >= 3:
            ctx.out(f"Deleted {1 if table.pop(args[2], None) is not None else 0} rows\n")
            return 0
        if verb == "list":
            for key in sorted(table):
                ctx.out(f"{key}={table[key]}\n")
            return 0
        return ctx.fail(f"Invalid command: {verb}")

    def _pidof(self, ctx: Ctx) -> int:
        pids = [str(self._running[p]) for p in ctx.args if p in self._running]
        if not pids:
            return 1
        ctx.out(" ".join(pids) + "\n")
        return 0
