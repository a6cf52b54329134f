"""``pm``: the package manager. Lists, resolves, clears and uninstalls the installed apps.

    pm list packages -3                   # package:org.tapir.music ...
    pm resolve-activity --brief org.tapir.music
    pm clear org.tapir.music              # its data wiped: a freshly installed app (SimApp.reset)

The simulated phone cannot install APKs: ``pm install`` fails as a phone does on a bad APK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.sim.commands.records import apk_path, short_activity
from tapir.sim.launcher import LAUNCHER_PACKAGE
from tapir.sim.phone import SYSTEM_PACKAGES
from tapir.sim.shell import Ctx

if TYPE_CHECKING:
    from tapir.sim.device import SimDevice


def pm(device: SimDevice, ctx: Ctx) -> int:
    if not ctx.args:
        ctx.out("Package manager (package) commands:\n  list packages [-f] [-3] [-s] [FILTER]\n"
                "  path PACKAGE\n  clear PACKAGE\n  uninstall PACKAGE\n")
        return 0
    verb, rest = ctx.args[0], ctx.args[1:]
    installed = device.apps
    if verb == "list" and rest[:1] == ["packages"]:
        return _list_packages(ctx, list(installed), rest[1:])
    if verb == "path":
        pkg = rest[-1] if rest else ""
        if pkg not in installed and pkg != LAUNCHER_PACKAGE:
            return 1
        ctx.out(f"package:{apk_path(pkg)}\n")
        return 0
    if verb == "resolve-activity":
        pkg = next((a for a in reversed(rest) if not a.startswith("-") and "." in a
                    and not a.startswith("android.intent.")), "")
        app = installed.get(pkg)
        if app is None:
            ctx.out("No activity found\n")
            return 0
        activity = getattr(app, "launch_activity", None) or app.activity
        ctx.out("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
                f"{pkg}/{short_activity(pkg, activity)}\n")
        return 0
    if verb == "clear":
        pkg = rest[-1] if rest else ""
        if pkg not in installed:
            ctx.out("Failed\n")
            return 1
        device.clear_data(pkg)
        ctx.out("Success\n")
        return 0
    if verb == "uninstall":
        pkg = rest[-1] if rest else ""
        if device.uninstall(pkg):
            ctx.out("Success\n")
            return 0
        ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
        return 1
    if verb in ("install", "install-create", "install-multiple"):
        ctx.out("Failure [INSTALL_FAILED_INVALID_APK: the simulated device cannot install APKs]\n")
        return 1
    if verb in ("grant", "revoke", "enable", "disable", "disable-user", "set-permission-flags"):
        return 0
    ctx.err(f"Unknown command: {verb}\n")
    return 1


def _list_packages(ctx: Ctx, installed: list[str], args: list[str]) -> int:
    """``pm list packages [-f] [-3] [-s] [FILTER]``: system packages first, then the installed apps."""
    opts = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-") and not a.isdigit()]
    names = installed
    if "-3" not in opts:
        names = [*SYSTEM_PACKAGES, *names]
    if "-s" in opts:
        names = list(SYSTEM_PACKAGES)
    for name in names:
        if operands and operands[0] not in name:
            continue
        prefix = f"{apk_path(name)}=" if "-f" in opts else ""
        ctx.out(f"package:{prefix}{name}\n")
    return 0
