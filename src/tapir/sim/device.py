"""The simulated Android device, independent of any transport.

``SimDevice`` holds what a phone holds for a UI-automation client: installed apps, the
foreground app and the home screen, a small file system, system properties and settings.
It answers shell command lines through ``run_shell`` with the output formats of a real
Android 14 device, since clients parse them with regular expressions (adbutils reads
``mCurrentFocus=Window{... pkg/act}``, ``Physical size: WxH``, ``UI hierchary dumped to:``...).
The ADB transport (``adbd.py``) is a thin layer on top; tests may also call the device directly::

    device = SimDevice([get_app("music")])
    device.start_app("org.tapir.music")
    device.run_shell("input tap 540 1200; uiautomator dump /dev/tty").text

This module is the phone's state and the operations on it (start, stop, tap, keys, dumps); the
Android commands that drive it are handlers in ``commands/`` (``input.py``, ``activity.py`` for
``am``, ``package.py`` for ``pm``...), dispatched through one table, ``DEVICE_COMMANDS``.

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

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from tapir.sim.app import SCREEN_HEIGHT, SCREEN_WIDTH, SimApp
from tapir.sim.commands import DEVICE_COMMANDS, SELF_LOCKING

# Names that lived here before the commands moved to ``commands/`` (clients import them from here).
from tapir.sim.commands.input import LONG_PRESS_MS as LONG_PRESS_MS
from tapir.sim.commands.input import TOUCH_SLOP_PX as TOUCH_SLOP_PX
from tapir.sim.commands.uiautomator import DEFAULT_DUMP_PATH as DEFAULT_DUMP_PATH
from tapir.sim.faults import FaultEvent, Faults
from tapir.sim.files import FileSystem as FileSystem
from tapir.sim.launcher import LAUNCHER_PACKAGE, Launcher
from tapir.sim.phone import ADB_KEYBOARD_ACTIONS as ADB_KEYBOARD_ACTIONS
from tapir.sim.phone import ADB_KEYBOARD_IME as ADB_KEYBOARD_IME
from tapir.sim.phone import DENSITY as DENSITY
from tapir.sim.phone import IMES as IMES
from tapir.sim.phone import LATIN_IME as LATIN_IME
from tapir.sim.phone import SYSTEM_PACKAGES as SYSTEM_PACKAGES
from tapir.sim.phone import default_props as default_props
from tapir.sim.shell import GENERIC_COMMANDS, CommandFn, Ctx, Shell, ShellResult
from tapir.sim.system_dialog import SystemDialog
from tapir.sim.touch import EventHub, Hands

_SHELL_ENV = {"PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/vendor/bin",
              "HOME": "/", "USER": "shell", "HOSTNAME": "tapir_sim", "TMPDIR": "/data/local/tmp",
              "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "EXTERNAL_STORAGE": "/sdcard"}


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
        #: The input methods enabled (``ime enable``); the selected one is ``default_input_method``.
        self.enabled_imes = {LATIN_IME}
        self._time_debt = 0.0
        #: A system dialog covering the screen (it takes every touch), if one shows.
        self.dialog: SystemDialog | None = None
        #: The labels tapped on system dialogs, oldest first.
        self.dialog_answers: list[str] = []
        # a late app: the screen dumps still show, and until when (time.monotonic())
        self._stale: tuple[str, float] | None = None
        self.launcher = Launcher(self._launcher_entries, self._open_from_launcher, self.screen_size)
        #: The kernel's input events, read by ``getevent`` (``touch.py``).
        self.input_events = EventHub()
        #: A person's hands: touches and keys that ``getevent`` reports, then the app receives.
        self.hands = Hands(self.input_events, self._lock, lambda: self.foreground, self.press_key, self.screen_size)
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

    @property
    def running_packages(self) -> list[str]:
        """The packages with a process, in the order they were started."""
        with self._lock:
            return list(self._running)

    def pid(self, package: str) -> int | None:
        """The app's process id, None when it does not run."""
        with self._lock:
            return self._running.get(package)

    def task_id(self, package: str) -> int:
        """The id of the app's task; 1, the home task, for the launcher and apps never started."""
        with self._lock:
            return self._tasks.get(package, 1)

    def link_handler(self, uri: str) -> str | None:
        """The installed app whose ``link_schemes`` has the scheme of ``uri`` (a deep link), if any:
        with no browser installed, a web link has none."""
        scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
        with self._lock:
            return next((pkg for pkg, app in self._apps.items() if scheme in getattr(app, "link_schemes", ())), None)

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

    def type_text(self, text: str) -> None:
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

    def input_begins(self) -> None:
        """An input arrives (``input ...``). A late app (``Faults.input_lag``): for a while, dumps
        show the screen from before this input (or from before the first of several inputs in
        quick succession)."""
        with self._lock:
            lag = self.faults.input_lag
            if lag > 0:
                now = time.monotonic()
                shown = self._stale[0] if self._stale is not None and now < self._stale[1] else self.dump_xml()
                self._stale = (shown, now + lag)

    def observed_xml(self) -> str:
        """The hierarchy a ``uiautomator dump`` sees now: the screen, or while a late app lags
        behind its last input (``input_begins``), the screen from before it."""
        with self._lock:
            xml = self.dump_xml()
            if self._stale is not None:
                if time.monotonic() < self._stale[1]:
                    xml = self._stale[0]
                else:
                    self._stale = None
            return xml

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
        """The shell's command table: the generic commands, then the Android ones (``commands/``)
        bound to this phone; each runs holding the lock, then the faults armed for it fire."""
        commands: dict[str, CommandFn] = {name: self._locked(fn) for name, fn in GENERIC_COMMANDS.items()}
        for name, handler in DEVICE_COMMANDS.items():
            bound: CommandFn = partial(handler, self)
            commands[name] = bound if name in SELF_LOCKING else self._locked(bound)
        return commands

    def _locked(self, fn: CommandFn) -> CommandFn:
        def run(ctx: Ctx) -> int:
            with self._lock:
                status = fn(ctx)
                for event in self.faults.take_events(ctx.argv[0]) if self.faults.events else ():
                    self._fire(event)
                return status
        return run
