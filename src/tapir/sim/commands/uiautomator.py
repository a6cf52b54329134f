"""``uiautomator dump [FILE]``: the screen's view hierarchy as XML, as clients read it.

    uiautomator dump                      # writes /sdcard/window_dump.xml
    uiautomator dump /dev/tty             # prints it (what adbutils and most clients do)

The faults decide here whether a dump fails (``Faults.dump_errors``) and whether a late app still
shows the screen from before the last input (``SimDevice.observed_xml``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.faults import IDLE_STATE_ERROR
from tapir.sim.files import FsError
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"

_USAGE = ("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
          "help: displays help message\n\n"
          "dump: creates an XML dump of current UI hierarchy\n"
          "    dump [--verbose][file]\n"
          "      [--compressed]: dumps compressed layout information.\n"
          "      [file]: the location where the dumped XML should be stored, default is\n"
          f"      {DEFAULT_DUMP_PATH}\n")


def uiautomator(device: SimDevice, ctx: Ctx) -> int:
    if not ctx.args or ctx.args[0] not in ("dump", "help"):
        if ctx.args and ctx.args[0] in ("runtest", "events"):
            return ctx.fail(f"'{ctx.args[0]}' is not available on the simulated device")
        ctx.out(_USAGE)
        return 0
    if ctx.args[0] == "help":
        ctx.out(_USAGE)
        return 0
    operands = [a for a in ctx.args[1:] if not a.startswith("--")]
    path = operands[0] if operands else DEFAULT_DUMP_PATH
    if device.faults.take_dump_error():
        # uiautomator prints the error and returns normally: exit status 0, no file.
        ctx.err(IDLE_STATE_ERROR + "\n")
        return 0
    xml = device.observed_xml()
    try:
        ctx.write_file(path, xml.encode("utf-8"))
    except FsError as exc:
        ctx.err(f"java.io.FileNotFoundException: {path}: open failed: {exc.reason}\n")
        return 1
    ctx.out(f"UI hierchary dumped to: {ctx.path(path)}\n")
    return 0
