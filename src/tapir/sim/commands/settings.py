"""``settings get|put|delete|list NAMESPACE ...``: the phone's system, secure and global settings.

    settings get secure default_input_method
    settings put global window_animation_scale 0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def settings(device: SimDevice, ctx: Ctx) -> int:
    args = [a for a in ctx.args if a not in ("--user", "current") and not a.isdigit()]
    if len(args) < 2 or args[1] not in device.settings:
        ctx.err("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                "        settings [--user <USER_ID> | current] put namespace key value\n"
                "        settings [--user <USER_ID> | current] list namespace\n")
        return 1
    verb, table = args[0], device.settings[args[1]]
    if verb == "get" and len(args) >= 3:
        ctx.out(table.get(args[2], "null") + "\n")
        return 0
    if verb == "put" and len(args) >= 4:
        table[args[2]] = args[3]
        return 0
    if verb == "delete" and len(args) >= 3:
        ctx.out(f"Deleted {1 if table.pop(args[2], None) is not None else 0} rows\n")
        return 0
    if verb == "list":
        for key in sorted(table):
            ctx.out(f"{key}={table[key]}\n")
        return 0
    return ctx.fail(f"Invalid command: {verb}")
