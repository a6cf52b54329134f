"""``cmd SERVICE ...``: the binder-service front end, answered by the commands that own each service.

    cmd package list packages -3          # as ``pm list packages -3``
    cmd -l                                # the services it knows
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.commands.activity import am
from tapir.sim.commands.handler import DeviceCommand
from tapir.sim.commands.input import input_
from tapir.sim.commands.package import pm
from tapir.sim.commands.settings import settings
from tapir.sim.commands.window import wm
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

SERVICES: dict[str, DeviceCommand] = {"package": pm, "activity": am, "input": input_, "window": wm,
                                      "settings": settings}


def cmd(device: SimDevice, ctx: Ctx) -> int:
    if not ctx.args or ctx.args[0] == "-l":
        ctx.out("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(SERVICES)))
        return 0
    fn = SERVICES.get(ctx.args[0])
    if fn is None:
        ctx.err(f"cmd: Can't find service: {ctx.args[0]}\n")
        return 20
    # The service runs under its own name (its messages say "package:", not "cmd:").
    return fn(device, Ctx([ctx.args[0], *ctx.args[1:]], ctx.env, ctx.stdout, ctx.stderr, ctx.shell,
                          ctx.stdin_source))
