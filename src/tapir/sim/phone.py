"""What the simulated phone is, as fixed facts: build properties, display density, input methods.

Both the phone's state (``device.py``) and its commands (``commands/``) read these, so they live
apart from either::

    from tapir.sim.phone import DENSITY, default_props

    props = default_props("tapir-sim", "TapirSim")
    assert props["ro.sf.lcd_density"] == str(DENSITY)
"""

from __future__ import annotations

from tapir.sim.launcher import LAUNCHER_PACKAGE

DENSITY = 420
LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
#: ADBKeyBoard (github.com/senzhk/ADBKeyBoard) comes with the simulated device, not enabled:
#: clients that need non-ASCII text enable and select it as they would on a phone.
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_ACTIONS = ("ADB_INPUT_TEXT", "ADB_INPUT_B64", "ADB_INPUT_CODE", "ADB_CLEAR_TEXT")
IMES = [LATIN_IME, ADB_KEYBOARD_IME]
SYSTEM_PACKAGES = (LAUNCHER_PACKAGE, "com.android.inputmethod.latin", "com.android.adbkeyboard")


def default_props(serial: str, model: str) -> dict[str, str]:
    return {
        "ro.product.model": model,
        "ro.product.name": "tapir_sim",
        "ro.product.device": "tapir_sim",
        "ro.product.brand": "tapir",
        "ro.product.manufacturer": "Tapir",
        "ro.product.cpu.abi": "x86_64",
        "ro.build.version.sdk": "34",
        "ro.build.version.release": "14",
        "ro.build.version.codename": "REL",
        "ro.build.id": "UQ1A.240205.004",
        "ro.build.type": "userdebug",
        "ro.build.tags": "test-keys",
        "ro.build.fingerprint": f"tapir/tapir_sim/tapir_sim:14/UQ1A.240205.004/1:userdebug/test-keys ({model})",
        "ro.serialno": serial,
        "ro.debuggable": "1",
        "ro.sf.lcd_density": str(DENSITY),
        "sys.boot_completed": "1",
        "init.svc.bootanim": "stopped",
        "persist.sys.locale": "en-US",
        "persist.sys.timezone": "UTC",
    }
