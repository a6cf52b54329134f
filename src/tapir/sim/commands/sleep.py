"""``sleep N``: the apps' time is simulated, so N seconds of it pass at once and nothing waits.

    sleep 5                               # every app that keeps time is 5 s later (SimDevice.advance_time)

A client waiting on the device sees the time pass, deterministically. The handler takes the
device's lock itself, briefly (``SELF_LOCKING`` in the command table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def sleep(device: SimDevice, ctx: Ctx) -> int:
    try:
        seconds = float(ctx.args[0]) if ctx.args else 0.0
    except ValueError:
        return ctx.fail(f"invalid number '{ctx.args[0]}'")
    if not seconds >= 0 or seconds == float("inf"):  # also refuses nan
        return ctx.fail(f"invalid number '{ctx.args[0]}'")
    device.advance_time(seconds)
    return 0
