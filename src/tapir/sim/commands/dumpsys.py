"""``dumpsys SERVICE``: window, activity, display, package, power and battery, as Android 14 prints them.

    dumpsys window | grep mCurrentFocus   # mCurrentFocus=Window{... org.tapir.music/...MainActivity}
    dumpsys activity top                  # ACTIVITY org.tapir.music/.activities.MainActivity ... pid=4100

Clients parse these with regular expressions (adbutils reads ``mCurrentFocus=Window{... pkg/act}``
and ``mResumedActivity: ActivityRecord{...}``), so the lines they read keep Android's exact form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tapir.sim.app import SimApp
from tapir.sim.commands.records import apk_path, hex_id, short_activity
from tapir.sim.phone import DENSITY
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

_POWER = ("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n"
          "  mHoldingDisplaySuspendBlocker=true\n  mHoldingWakeLockSuspendBlocker=false\n")
_BATTERY = ("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
            "  Wireless powered: false\n  Max charging current: 500000\n"
            "  Max charging voltage: 5000000\n  Charge counter: 4000000\n"
            "  status: 2\n  health: 2\n  present: true\n  level: 100\n  scale: 100\n"
            "  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n")


def dumpsys(device: SimDevice, ctx: Ctx) -> int:
    services: dict[str, Callable[[str], str]] = {
        "window": lambda sub: _window_service(device),
        "activity": lambda sub: _activity_service(device, sub),
        "display": lambda sub: _display_service(device),
        "package": lambda sub: _package_service(device, sub),
        "power": lambda sub: _POWER,
        "battery": lambda sub: _BATTERY,
        "input_method": lambda sub: _input_method_service(device),
    }
    if not ctx.args or ctx.args[0] == "-l":
        if ctx.args:
            ctx.out("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(services)))
            return 0
        for name in ("window", "activity", "display"):  # a bare dumpsys: the services clients read
            ctx.out("-" * 78 + f"\nDUMP OF SERVICE {name}:\n" + services[name]("") + "\n")
        return 0
    name = ctx.args[0]
    fn = services.get(name)
    if fn is None:
        ctx.err(f"Can't find service: {name}\n")
        return 0  # dumpsys says so, yet exits 0
    sub = next((a for a in ctx.args[1:] if not a.startswith("-")), "")
    ctx.out(fn(sub))
    return 0


def _record(device: SimDevice, package: str, activity: str) -> str:
    task = device.task_id(package)
    return f"ActivityRecord{{{hex_id('rec', package)} u0 {package}/{short_activity(package, activity)} t{task}}}"


def _window(package: str, activity: str) -> str:
    return f"Window{{{hex_id('win', package)} u0 {package}/{activity}}}"


def _pid(device: SimDevice, package: str) -> int:
    """The app's process id; the launcher (system UI) and stopped apps show system_server's."""
    pid = device.pid(package)
    return 1800 if pid is None else pid


def _stack(device: SimDevice) -> list[SimApp]:
    """Visible-first list of the front app and the launcher behind it."""
    front = device.foreground
    return [front] if front is device.launcher else [front, device.launcher]  # type: ignore[list-item]


def _window_service(device: SimDevice) -> str:
    front = device.foreground
    installed = list(device.apps)
    w, h = device.screen_size
    lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
    for i, app in enumerate(_stack(device)):
        visible = "true" if app is front else "false"
        uid = 10100 + installed.index(app.package) if app.package in installed else 10020
        lines += [
            f"  Window #{i} {_window(app.package, app.activity)}:",
            f"    mDisplayId=0 rootTaskId={device.task_id(app.package)} "
            f"mSession=Session{{{hex_id('ses', app.package)} "
            f"{_pid(device, app.package)}:u0a{uid % 10000}}}",
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
        f"  mCurrentFocus={_window(front.package, front.activity)}",
        f"  mFocusedApp={_record(device, front.package, front.activity)}",
    ]
    return "\n".join(lines) + "\n"


def _activity_service(device: SimDevice, sub: str) -> str:
    front = device.foreground
    if sub == "top":
        lines = [f"TASK 10100:{front.package} id={device.task_id(front.package)} userId=0",
                 f"  ACTIVITY {front.package}/{short_activity(front.package, front.activity)} "
                 f"{hex_id('rec', front.package)} pid={_pid(device, front.package)}"]
        return "\n".join(lines) + "\n"
    lines = ["ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
             "Display #0 (activities from top to bottom):"]
    for app in _stack(device):
        task = device.task_id(app.package)
        visible = "true" if app is front else "false"
        lines += [
            f"  * Task{{{hex_id('task', app.package)} #{task} type=standard A=10100:{app.package} U=0 "
            f"visible={visible} visibleRequested={visible} mode=fullscreen translucent=false sz=1}}",
            f"    * Hist  #0: {_record(device, app.package, app.activity)}",
            f"      packageName={app.package} processName={app.package}",
        ]
    record = _record(device, front.package, front.activity)
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


def _display_service(device: SimDevice) -> str:
    w, h = device.screen_size
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


def _package_service(device: SimDevice, package: str) -> str:
    installed = list(device.apps)
    if package not in installed:
        return ""
    return (
        "Packages:\n"
        f"  Package [{package}] ({hex_id('pkg', package)}):\n"
        f"    userId={10100 + installed.index(package)}\n"
        f"    pkg=Package{{{hex_id('pkgobj', package)} {package}}}\n"
        f"    codePath={apk_path(package).rsplit('/', 1)[0]}\n"
        "    versionCode=1 minSdk=24 targetSdk=34\n"
        "    versionName=1.0\n"
        "    signatures=PackageSignatures{7a1b2c3 version:2, signatures:[5e6f7a8b], past signatures:[]}\n"
        "    firstInstallTime=2026-01-01 00:00:00\n"
        "    lastUpdateTime=2026-01-01 00:00:00\n"
    )


def _input_method_service(device: SimDevice) -> str:
    """The lines of ``dumpsys input_method`` that say whether the keyboard shows."""
    shown = bool(getattr(device.foreground, "keyboard_shown", False))
    ime = device.settings["secure"].get("default_input_method", "")
    return (f"Input method service state:\n  mCurMethodId={ime}\n"
            f"  mInputShown={'true' if shown else 'false'} mShowRequested={'true' if shown else 'false'}\n")
