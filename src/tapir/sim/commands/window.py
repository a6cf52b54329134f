"""``wm size`` and ``wm density``: the display, which the simulated phone cannot change.

    wm size                               # Physical size: 1080x2400
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.phone import DENSITY
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def wm(device: SimDevice, ctx: Ctx) -> int:
    verb = ctx.args[0] if ctx.args else ""
    rest = ctx.args[1:]
    if verb == "size" and not rest:
        ctx.out(f"Physical size: {device.screen_size[0]}x{device.screen_size[1]}\n")
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
