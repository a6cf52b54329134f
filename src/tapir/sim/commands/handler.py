"""What a device command is: a plain function of the phone and the command's shell context.

A handler reads and changes the phone only through ``SimDevice``'s methods and attributes, and
prints through ``Ctx`` (``ctx.out``/``ctx.err``), returning the exit status::

    def pidof(device: SimDevice, ctx: Ctx) -> int:
        ...

``SimDevice`` binds each handler to itself when it builds its shell's command table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:  # the device imports the handlers: only type checkers may import it back
    from tapir.sim.device import SimDevice

DeviceCommand = Callable[["SimDevice", Ctx], int]
