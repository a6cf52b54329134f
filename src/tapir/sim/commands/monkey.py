"""``monkey -p PACKAGE [-s SEED] COUNT``: start an app, then tap at random (seeded: repeatable).

    monkey -p org.tapir.music -c android.intent.category.LAUNCHER 1     # how many clients start an app
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice

#: Options that take a value the simulated monkey ignores.
_IGNORED_WITH_VALUE = ("-c", "--throttle", "--pct-touch", "--pct-motion", "--pct-syskeys",
                       "--pct-appswitch", "--pct-anyevent", "--pct-nav", "--pct-majornav",
                       "--pct-trackball", "--pct-flip", "--pct-pinchzoom", "--pct-rotation")


def monkey(device: SimDevice, ctx: Ctx) -> int:
    args = list(ctx.args)
    for a in args:
        ctx.out(f"  bash arg: {a}\n")
    packages: list[str] = []
    seed = 0
    count = 0
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-p" and i + 1 < len(args):
            packages.append(args[i + 1])
            i += 2
        elif a == "-s" and i + 1 < len(args):
            seed = int(args[i + 1]) if args[i + 1].isdigit() else 0
            i += 2
        elif a in _IGNORED_WITH_VALUE:
            i += 2
        elif a.isdigit():
            count = int(a)
            i += 1
        else:
            i += 1
    ctx.out(f"args: [{', '.join(args)}]\n")
    for a in args:
        ctx.out(f' arg: "{a}"\n')
    for a in args:
        if not a.startswith("-") and not a.isdigit():
            ctx.out(f'data="{a}"\n')
    installed = device.apps
    runnable = [p for p in packages if p in installed]
    if not runnable or count <= 0:
        if count <= 0:
            ctx.err("** Error: Count not specified\n")
            return 1
        ctx.out("** No activities found to run, monkey aborted.\n")
        return 252
    rng = random.Random(seed)
    device.start_app(runnable[0])
    # Events after the first app switch are random taps on whatever is on screen.
    for _ in range(count - 1):
        device.foreground.tap(rng.randrange(device.screen_size[0]), rng.randrange(device.screen_size[1]))
    ctx.out(f"Events injected: {count}\n")
    ctx.out("## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, 14ms not connected)\n")
    return 0
