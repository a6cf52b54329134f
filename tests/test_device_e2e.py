"""AdbDevice against the simulated device (tapir.sim).

Two tiers run the same scenario on the tiny two-screen test app:

* in process: AdbDevice's command lines go straight into ``SimDevice.run_shell`` (no adb),
  which checks the commands we send against the simulator's shell;
* through adb: ``start_sim`` attaches the simulator to a private real adb server, and
  AdbDevice talks to it through adbutils, as it would to a phone.
"""

from __future__ import annotations

import base64
import importlib.util
import io
from collections.abc import Iterator

import pytest
from PIL import Image

from tapir.core.errors import DeviceError
from tapir.hierarchy import html_view, parse_uiautomator
from tapir.runtime import adb_shell
from tapir.runtime.device import AdbDevice, Device, open_device, resolve_serial

if importlib.util.find_spec("tapir.sim.launch") is None:  # pragma: no cover - sim not installed
    pytest.skip("tapir.sim has no launcher (start_sim) yet", allow_module_level=True)

from runtime_helpers import DirectTransport  # noqa: E402
from sim_tiny_app import DETAILS, MAIN, PACKAGE, TinyApp  # noqa: E402  (tests/ is on sys.path)

from tapir.sim.device import SimDevice  # noqa: E402
from tapir.sim.errors import SimDeviceError  # noqa: E402
from tapir.sim.faults import Faults  # noqa: E402
from tapir.sim.launch import RunningSim, start_sim  # noqa: E402


def _screen(dev: Device):  # type: ignore[no-untyped-def]
    return html_view(parse_uiautomator(dev.dump_hierarchy()))


def _center(dev: Device, xpath: str) -> tuple[int, int]:
    node = _screen(dev).first(xpath)
    assert node is not None, xpath
    return node.center


def run_scenario(dev: Device, app: TinyApp) -> None:
    """Everything the runtime does to a device, checked on the app's side and on the screen."""
    dev.app_start(PACKAGE)
    assert dev.current_app() == (PACKAGE, MAIN)
    assert dev.screen_size() == (1080, 2400)

    dev.tap(*_center(dev, "//*[@resource_id='name']"))
    text = "it's 50%s & (more) $HOME `x` | y; z"
    dev.input_text(text)
    assert app.name == text
    dev.tap(*_center(dev, "//button[text()='Greet']"))
    assert _screen(dev).first("//*[@resource_id='greeting']").text == f"Hello, {text}"  # type: ignore[union-attr]

    dev.swipe(540, 2000, 540, 1300, 200)
    assert _screen(dev).first("//*[text()='Item 2']") is not None
    item = _center(dev, "//*[text()='Item 2']")
    dev.long_tap(*item)
    assert ("long_tap", *item) in app.events and app.selected

    dev.key("del")
    assert app.name == text[:-1]
    dev.tap(*_center(dev, "//*[@resource_id='details']"))
    assert dev.current_app() == (PACKAGE, DETAILS)
    dev.key("back")
    assert dev.current_app() == (PACKAGE, MAIN)

    png = dev.screenshot_png()
    assert Image.open(io.BytesIO(png)).size == (1080, 2400)

    dev.app_stop(PACKAGE)
    assert dev.current_app()[0] != PACKAGE


def test_scenario_in_process() -> None:
    app = TinyApp()
    transport = DirectTransport(SimDevice([app]))
    run_scenario(AdbDevice("sim-inproc", transport=transport), app)
    assert adb_shell.dump_command() in transport.commands


def test_dump_retries_through_injected_idle_state_errors() -> None:
    app = TinyApp()
    sim = SimDevice([app], faults=Faults(dump_errors=2))
    sim.start_app(PACKAGE)
    waits: list[float] = []
    dev = AdbDevice("sim-inproc", transport=DirectTransport(sim), sleep=waits.append)
    assert parse_uiautomator(dev.dump_hierarchy()).find(lambda n: n.text == "Greet")
    assert waits == [0.2, 0.5]


def test_persistent_dump_errors_name_the_device() -> None:
    sim = SimDevice([TinyApp()], faults=Faults(dump_errors=10))
    dev = AdbDevice("sim-inproc", transport=DirectTransport(sim), sleep=lambda s: None)
    with pytest.raises(DeviceError, match="device sim-inproc: `uiautomator dump` failed after 4 attempts"):
        dev.dump_hierarchy()


def test_non_ascii_text_through_adb_keyboard() -> None:
    app = TinyApp()
    sim = SimDevice([app])
    sim.start_app(PACKAGE)
    transport = DirectTransport(sim)
    dev = AdbDevice("sim-inproc", transport=transport)
    with pytest.raises(DeviceError, match="ADBKeyBoard"):
        dev.input_text("caf\u00e9")
    sim.run_shell(f"settings put secure default_input_method {adb_shell.ADB_KEYBOARD_IME}")
    dev.input_text("caf\u00e9 \u4f60\u597d")
    assert app.name == "caf\u00e9 \u4f60\u597d"
    sent = transport.commands[-1].split()[-1]
    assert base64.b64decode(sent).decode() == "caf\u00e9 \u4f60\u597d"


# -- through a real adb server ----------------------------------------------------------------

@pytest.fixture(scope="module")
def running() -> Iterator[tuple[RunningSim, TinyApp]]:
    app = TinyApp()
    try:
        sim = start_sim([app])
    except SimDeviceError as exc:  # no adb binary, or no free port
        pytest.skip(f"cannot start the simulator behind adb: {exc.message}")
    with sim:
        yield sim, app


@pytest.mark.adb
def test_scenario_through_adb(running: tuple[RunningSim, TinyApp]) -> None:
    sim, app = running
    run_scenario(AdbDevice(sim.serial, client=sim.adb_client()), app)


@pytest.mark.adb
def test_resolve_serial_through_adb(running: tuple[RunningSim, TinyApp]) -> None:
    sim, _ = running
    assert resolve_serial(None, client=sim.adb_client(), env={}) == sim.serial
    assert open_device(sim.serial, client=sim.adb_client()).current_app()[0] != ""
    with pytest.raises(DeviceError, match="not connected"):
        resolve_serial("emulator-5554", client=sim.adb_client(), env={})
