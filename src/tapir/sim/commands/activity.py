"""``am``: the activity manager. Starts and stops apps, delivers intents and broadcasts.

    am start -W -S -n org.tapir.music/.activities.MainActivity --es debug 1
    am force-stop org.tapir.music
    am broadcast -a ADB_INPUT_TEXT --es msg 'héllo'       # to ADBKeyBoard, when it is selected

An intent's extras reach apps that have ``on_intent(extras)``; ``-W`` prints the launch state
(``COLD``/``HOT``) as clients that time launches expect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.commands.keyboard import adb_keyboard
from tapir.sim.commands.records import short_activity
from tapir.sim.launcher import LAUNCHER_PACKAGE
from tapir.sim.phone import ADB_KEYBOARD_ACTIONS, ADB_KEYBOARD_IME
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

#: Options of ``am start`` that take one value, and those that take a key and a value (extras).
_WITH_VALUE = {"-a", "-d", "-t", "-c", "-n", "-p", "-f", "--user", "-P", "--start-profiler",
               "--sampling", "-R", "--display", "--windowingMode", "--activityType", "--task"}
_WITH_TWO = {"-e", "--es", "--ez", "--ei", "--el", "--ef", "--eu", "--ecn", "--eia", "--ela", "--efa",
             "--esa", "--esn"}


def am(device: SimDevice, ctx: Ctx) -> int:
    if not ctx.args:
        ctx.out("Activity manager (activity) commands:\n  help\n  start [-W] [-S] [-n <COMPONENT>] ...\n"
                "  force-stop <PACKAGE>\n  kill <PACKAGE>\n  broadcast <INTENT>\n")
        return 0
    verb, rest = ctx.args[0], ctx.args[1:]
    if verb in ("start", "start-activity"):
        return _start(device, ctx, rest)
    if verb in ("force-stop", "kill", "stop-app"):
        packages = [a for a in rest if not a.startswith("--") and not a.isdigit()]
        for package in packages:
            device.force_stop(package)
        return 0
    if verb == "kill-all":  # background processes only: the app in front keeps running
        for package in device.running_packages:
            if package != device.current_package:
                device.force_stop(package)
        return 0
    if verb == "broadcast":
        return _broadcast(device, ctx, rest)
    if verb == "get-current-user":
        ctx.out("0\n")
        return 0
    ctx.err(f"Unknown command: {verb}\n")
    return 1


def _start(device: SimDevice, ctx: Ctx, args: list[str]) -> int:
    action = data = package = component = None
    categories: list[str] = []
    extras: dict[str, str] = {}
    wait = stop_first = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in _WITH_VALUE:
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
        elif a in _WITH_TWO:
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
    elif data and action in (None, "android.intent.action.VIEW"):
        target_pkg = device.link_handler(data)  # a deep link: the app that declares its scheme

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
        desc.append(f"cmp={target_pkg}/{short_activity(target_pkg or '', target_act or '')}")
    if extras:
        desc.append("(has extras)")
    intent = "Intent { " + " ".join(desc) + " }"
    ctx.out(f"Starting: {intent}\n")
    if target_pkg is None:
        ctx.err(f"Error: Activity not started, unable to resolve {intent}\n")
        return 1
    if target_pkg != LAUNCHER_PACKAGE and target_pkg not in device.apps:
        shown = f"{{{target_pkg}/{target_act}}}" if component else f"{{{target_pkg}}}"
        ctx.err(f"Error type 3\nError: Activity class {shown} does not exist.\n")
        return 1
    was_front = device.current_package == target_pkg
    state = device.start_app(target_pkg, stop_first=stop_first)
    front = device.foreground
    on_intent = getattr(front, "on_intent", None)
    if extras and callable(on_intent) and target_pkg != LAUNCHER_PACKAGE:
        on_intent(dict(extras))
    open_link = getattr(front, "open_link", None)
    if data and callable(open_link) and target_pkg != LAUNCHER_PACKAGE:
        open_link(data)
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


def _broadcast(device: SimDevice, ctx: Ctx, args: list[str]) -> int:
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
    # Only the selected IME receives ADBKeyBoard's broadcasts, as on a phone.
    if action in ADB_KEYBOARD_ACTIONS and device.settings["secure"]["default_input_method"] == ADB_KEYBOARD_IME:
        adb_keyboard(device, action, extras)
    ctx.out("Broadcast completed: result=0\n")
    return 0
