"""``getprop`` and ``setprop``: the phone's system properties (``ro.*`` ones are read-only).

    getprop ro.build.version.sdk          # 34
    setprop debug.tapir 1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def getprop(device: SimDevice, ctx: Ctx) -> int:
    if not ctx.args:
        for key in sorted(device.props):
            ctx.out(f"[{key}]: [{device.props[key]}]\n")
        return 0
    default = ctx.args[1] if len(ctx.args) > 1 else ""
    ctx.out(device.props.get(ctx.args[0], default) + "\n")
    return 0


def setprop(device: SimDevice, ctx: Ctx) -> int:
    if len(ctx.args) != 2:
        return ctx.fail("need 2 arguments", 1)
    key, value = ctx.args
    # A read-only property can be set once, while it is unset (as init does at boot).
    if key.startswith("ro.") and key in device.props:
        ctx.err(f"Failed to set property '{key}' to '{value}'.\n")
        return 1
    device.props[key] = value
    return 0
