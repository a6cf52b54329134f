"""``pidof PACKAGE...``: the process ids of running apps (exit status 1 when none runs).

    pidof org.tapir.music                 # 4100
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def pidof(device: SimDevice, ctx: Ctx) -> int:
    pids = [str(pid) for p in ctx.args if (pid := device.pid(p)) is not None]
    if not pids:
        return 1
    ctx.out(" ".join(pids) + "\n")
    return 0
