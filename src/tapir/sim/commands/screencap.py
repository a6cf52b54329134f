"""``screencap [-p] [FILE]``: the screen as PNG, or raw RGBA with screencap's 16-byte header.

    screencap -p                          # PNG on stdout (what ``adb exec-out screencap -p`` reads)
    screencap /sdcard/screen.raw          # raw: width, height, format, data space, then pixels
"""

from __future__ import annotations

import io
import struct
from typing import TYPE_CHECKING

from PIL import Image

from tapir.sim.files import FsError
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

_USAGE = ("usage: screencap [-hp] [-d display-id] [FILENAME]\n"
          "   -h: this message\n   -p: save the file as a png.\n"
          "If FILENAME ends with .png it will be saved as a png.\n"
          "If FILENAME is not given, the results will be printed to stdout.\n")


def screencap(device: SimDevice, ctx: Ctx) -> int:
    png = False
    operands = []
    args = list(ctx.args)
    while args:
        a = args.pop(0)
        if a == "-p":
            png = True
        elif a == "-d" and args:
            args.pop(0)
        elif a == "-h":
            ctx.out(_USAGE)
            return 0
        elif a.startswith("-"):
            continue
        else:
            operands.append(a)
    data = device.screenshot_png()
    if operands and operands[0].endswith(".png"):
        png = True
    if not png:
        image = Image.open(io.BytesIO(data)).convert("RGBA")
        # Raw format: width, height, pixel format (1 = RGBA_8888), data space; then pixels.
        data = struct.pack("<4I", image.width, image.height, 1, 0) + image.tobytes()
    if operands:
        try:
            ctx.write_file(operands[0], data)
        except FsError as exc:
            ctx.err(f"Error opening file: {operands[0]} ({exc.reason})\n")
            return 1
    else:
        ctx.out(data)
    return 0
