"""The simulated phone's Android commands: one table from command name to handler.

Each handler is a plain function ``(SimDevice, Ctx) -> int`` (``handler.py``) in a module named
for what it does; the phone's state stays in ``SimDevice``, which binds the handlers to itself
and adds the generic shell commands (``echo``, ``cat``, ``grep``... from ``shell.py``)::

    from tapir.sim.commands import DEVICE_COMMANDS

    DEVICE_COMMANDS["input"](device, ctx)    # what `input tap 540 1200` runs
    device.run_shell("input tap 540 1200")   # the usual way: through the device's shell

A command not in the table (nor among the generic ones) is answered as mksh answers it:
``/system/bin/sh: NAME: inaccessible or not found``, exit status 127.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tapir.sim.commands.activity import am
from tapir.sim.commands.dumpsys import dumpsys
from tapir.sim.commands.handler import DeviceCommand
from tapir.sim.commands.input import getevent, input_
from tapir.sim.commands.keyboard import ime
from tapir.sim.commands.monkey import monkey
from tapir.sim.commands.package import pm
from tapir.sim.commands.process import pidof
from tapir.sim.commands.properties import getprop, setprop
from tapir.sim.commands.screencap import screencap
from tapir.sim.commands.service import cmd
from tapir.sim.commands.settings import settings
from tapir.sim.commands.sleep import sleep
from tapir.sim.commands.uiautomator import uiautomator
from tapir.sim.commands.window import wm

#: Command name -> handler. ``sleep`` replaces the shell's generic one: the apps' time is simulated.
DEVICE_COMMANDS: Mapping[str, DeviceCommand] = MappingProxyType({
    "uiautomator": uiautomator,
    "input": input_,
    "getevent": getevent,
    "am": am,
    "monkey": monkey,
    "ime": ime,
    "pm": pm,
    "cmd": cmd,
    "dumpsys": dumpsys,
    "wm": wm,
    "screencap": screencap,
    "getprop": getprop,
    "setprop": setprop,
    "settings": settings,
    "pidof": pidof,
    "sleep": sleep,
})

#: Handlers that take the device's lock themselves: every other command runs holding it, then the
#: faults armed for it fire. ``sleep`` may let long stretches of app time pass; it holds the lock
#: only while it moves the clock, and a fault armed on "sleep" never fired before either.
SELF_LOCKING: frozenset[str] = frozenset({"sleep"})

__all__ = ["DEVICE_COMMANDS", "SELF_LOCKING", "DeviceCommand"]
