"""The simulated device behind a REAL adb server (adbutils' bundled adb, or the one on PATH).

One private adb server on a free port serves the whole module (session fixture), so nothing
touches a developer's server on 5037, and it is killed at the end. ``ADBUTILS_ADB_PATH`` points
at /bin/false meanwhile: adbutils would otherwise start a stray server when one is down.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import adbutils
import pytest
from PIL import Image
from sim_tiny_app import DETAILS, DETAILS_BUTTON, LIST_ITEM, MAIN, PACKAGE, TinyApp, center

from tapir.sim.errors import SimDeviceError
from tapir.sim.launch import RunningSim, find_adb, server_running, start_sim
from tapir.sim.launcher import LAUNCHER_PACKAGE

pytestmark = [pytest.mark.adb, pytest.mark.timeout(120)]


@pytest.fixture(scope="session")
def sim() -> Iterator[RunningSim]:
    try:
        find_adb()
    except SimDeviceError as exc:
        pytest.skip(str(exc))
    saved = os.environ.get("ADBUTILS_ADB_PATH")
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
    handle = start_sim([TinyApp()])
    try:
        yield handle
    finally:
        handle.stop()
        if saved is None:
            os.environ.pop("ADBUTILS_ADB_PATH", None)
        else:
            os.environ["ADBUTILS_ADB_PATH"] = saved


@pytest.fixture
def app(sim: RunningSim) -> TinyApp:
    """The tiny app, freshly reset, with the device on the home screen."""
    sim.device.clear_data(PACKAGE)
    sim.device.faults.latency.clear()
    sim.device.faults.dump_errors = 0
    tiny = sim.device.app(PACKAGE)
    assert isinstance(tiny, TinyApp)
    tiny.events.clear()
    return tiny


@pytest.fixture
def d(sim: RunningSim) -> adbutils.AdbDevice:
    return sim.adb_device()


def adb(sim: RunningSim, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(sim.adb_command(*args), env=sim.env(), input=stdin, capture_output=True, timeout=30)


def test_listed_by_the_adb_server(sim: RunningSim) -> None:
    out = adb(sim, "devices", "-l").stdout.decode()
    line = next(line for line in out.splitlines() if line.startswith(sim.serial))
    assert line.split()[1] == "device" and "model:TapirSim" in line
    assert sim.serial in [info.serial for info in sim.adb_client().list() if info.state == "device"]
    assert adb(sim, "get-state").stdout == b"device\n"
    assert "shell_v2" in sim.adb_device().get_features()


def test_shell_v2_exit_codes_and_streams(sim: RunningSim, d: adbutils.AdbDevice) -> None:
    r = d.shell2("echo out; echo err >&2; exit 3", v2=True)
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
    assert d.shell2("false", v2=False).returncode == 1  # the `; echo X4EXIT:$?` fallback
    assert d.shell("echo hi") == "hi"
    p = adb(sim, "shell", "exit 5")
    assert p.returncode == 5
    p = adb(sim, "shell", "nosuch")
    assert p.returncode == 127 and p.stderr == b"/system/bin/sh: nosuch: inaccessible or not found\n"
    p = adb(sim, "shell", stdin=b"echo from-stdin\nexit 4\n")  # no command: sh reads stdin
    assert (p.stdout, p.returncode) == (b"from-stdin\n", 4)


def test_dump_hierarchy_and_pull(sim: RunningSim, d: adbutils.AdbDevice, app: TinyApp, tmp_path: Path) -> None:
    d.app_start(PACKAGE)
    assert d.dump_hierarchy() == app.dump_xml()
    p = adb(sim, "shell", "uiautomator", "dump")
    assert p.stdout == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    local = tmp_path / "window_dump.xml"
    p = adb(sim, "pull", "/sdcard/window_dump.xml", str(local))
    assert p.returncode == 0, p.stderr
    assert local.read_text() == app.dump_xml()
    p = adb(sim, "exec-out", "uiautomator", "dump", "/dev/tty")
    assert p.stdout == app.dump_xml().encode() + b"UI hierchary dumped to: /dev/tty\n"
    p = adb(sim, "pull", "/sdcard/nope.xml", str(tmp_path / "nope.xml"))
    assert p.returncode != 0 and b"No such file or directory" in p.stderr


def test_tap_swipe_long_press_text_and_back(sim: RunningSim, d: adbutils.AdbDevice, app: TinyApp) -> None:
    d.app_start(PACKAGE)
    d.send_keys("Ann 'the' & co")
    assert app.name == "Ann 'the' & co"
    d.swipe(540, 2000, 540, 1200, 0.2)
    assert app.page == 2
    x, y = center(LIST_ITEM)
    d.swipe(x, y, x, y, 1.0)
    assert app.events[-1] == ("long_tap", x, y) and app.selected
    d.click(*center(DETAILS_BUTTON))
    assert d.app_current().activity == DETAILS
    d.keyevent("KEYCODE_BACK")
    assert d.app_current().activity == MAIN
    adb(sim, "shell", "input", "keyevent", "4")  # not consumed by the first screen
    assert d.app_current().package == LAUNCHER_PACKAGE


def test_app_start_with_monkey_and_am_start(d: adbutils.AdbDevice, app: TinyApp) -> None:
    d.app_start(PACKAGE)  # monkey -p PKG -c android.intent.category.LAUNCHER 1
    current = d.app_current()
    assert (current.package, current.activity) == (PACKAGE, MAIN) and app.launches == 1
    d.app_stop(PACKAGE)
    assert d.app_current().package == LAUNCHER_PACKAGE
    d.app_start(PACKAGE, ".MainActivity")  # am start -n PKG/.MainActivity
    assert d.app_current().package == PACKAGE and app.launches == 2
    assert PACKAGE in d.list_packages()


def test_window_size_and_screenshot(sim: RunningSim, d: adbutils.AdbDevice, app: TinyApp) -> None:
    assert tuple(d.window_size()) == (1080, 2400)
    d.app_start(PACKAGE)
    image = d.screenshot(error_ok=False)
    assert image.size == (1080, 2400)
    png = adb(sim, "exec-out", "screencap", "-p").stdout
    assert png == app.screenshot_png()
    assert Image.open(io.BytesIO(png)).format == "PNG"
    assert d.getprop("ro.build.version.sdk") == "34"


def test_push_and_pull_through_sync(sim: RunningSim, d: adbutils.AdbDevice, tmp_path: Path) -> None:
    payload = os.urandom(300_000)  # several sync DATA chunks and adb packets
    d.sync.push(io.BytesIO(payload), "/data/local/tmp/blob.bin")
    assert d.sync.read_bytes("/data/local/tmp/blob.bin") == payload
    src = tmp_path / "up.txt"
    src.write_text("pushed by the adb CLI\n")
    assert adb(sim, "push", str(src), "/sdcard/Download/new/up.txt").returncode == 0
    assert d.shell("cat /sdcard/Download/new/up.txt") == "pushed by the adb CLI"
    p = adb(sim, "pull", "/data/local/tmp/blob.bin", str(tmp_path / "blob.bin"))
    assert p.returncode == 0 and (tmp_path / "blob.bin").read_bytes() == payload
    assert "up.txt" in [e.path for e in d.sync.list("/sdcard/Download/new")]


def test_dump_error_fault_reaches_adbutils(sim: RunningSim, d: adbutils.AdbDevice) -> None:
    sim.device.faults.dump_errors = 1
    with pytest.raises(adbutils.AdbError, match="could not get idle state"):
        d.dump_hierarchy()
    assert d.dump_hierarchy().startswith("<?xml")


def test_latency_fault_through_adb(sim: RunningSim, d: adbutils.AdbDevice) -> None:
    sim.device.faults.latency["input"] = 0.3
    start = time.monotonic()
    d.click(5, 5)
    assert time.monotonic() - start >= 0.3


def test_dropped_connection_then_reconnect(sim: RunningSim) -> None:
    with start_sim([TinyApp()], adb_port=sim.adb_port) as other:
        assert not other.owns_adb_server
        dev = other.adb_device()
        other.device.faults.drop_after = 1
        assert dev.shell("echo one") == "one"
        with pytest.raises(adbutils.AdbError):
            dev.shell("echo two")
        other.reconnect()
        assert dev.shell("echo three") == "three"
    assert other.serial not in [i.serial for i in sim.adb_client().list()]  # disconnected on stop
    assert server_running(sim.adb_port)  # the shared server stays up


def test_unauthorized_and_accepted_auth(sim: RunningSim) -> None:
    with start_sim([], adb_port=sim.adb_port, auth="reject") as locked:
        assert locked.state() == "unauthorized"
        p = adb(locked, "shell", "echo", "hi")
        assert p.returncode != 0 and b"unauthorized" in p.stderr
    with start_sim([], adb_port=sim.adb_port, auth="accept") as ok:
        assert ok.adb_device().shell("echo hi") == "hi"


def test_stop_kills_the_private_server_and_threads(sim: RunningSim) -> None:
    handle = start_sim([])
    port, sim_port = handle.adb_port, handle.server.port
    assert server_running(port)
    handle.stop()
    handle.stop()  # idempotent
    assert not server_running(port)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(str(sim_port) in t.name for t in threading.enumerate()):
        time.sleep(0.02)
    assert not [t.name for t in threading.enumerate() if str(sim_port) in t.name]


def test_large_output_spans_many_packets(sim: RunningSim) -> None:
    raw = adb(sim, "exec-out", "screencap").stdout  # raw RGBA: about 10 MB, ten 1 MiB packets
    assert len(raw) == 16 + 1080 * 2400 * 4


def test_tapir_sim_command_runs_until_interrupted(sim: RunningSim) -> None:
    from tapir.sim.launch import known_app_names

    if "music" not in known_app_names():
        pytest.skip("the sample apps are not installed")
    env = {**sim.env(), "ADBUTILS_ADB_PATH": "/bin/false"}
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "sim", "--app", "music", "--adb-port",
                             str(sim.adb_port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        m = re.fullmatch(r"serial: (127\.0\.0\.1:\d+)\n", first)
        assert m, first + proc.stderr.read() if proc.stderr else first
        serial = m[1]
        focus = subprocess.run([sim.adb_path, "-P", str(sim.adb_port), "-s", serial, "shell", "dumpsys", "window"],
                               env=sim.env(), capture_output=True, text=True, timeout=30).stdout
        assert "mCurrentFocus=Window{" in focus and "org.tapir.music/" in focus
        lines = [proc.stdout.readline() for _ in range(6)]
        dump, _, run = (line.strip() for line in lines[3:6])
        # the commands it suggests work from a fresh shell: no adb server port in the environment
        fresh = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB"))}
        fresh["ADBUTILS_ADB_PATH"] = "/bin/false"
        out = subprocess.run(["bash", "-c", dump], env=fresh, capture_output=True, text=True, timeout=30)
        assert out.stdout.startswith("<?xml") and "org.tapir.music" in out.stdout, lines + [out.stderr]
        assert run.startswith("tapir run SCRIPT.tap --device ") and f"--adb-port {sim.adb_port}" in run
        script = Path(__file__).resolve().parent.parent / "samples" / "music" / "play_song.tap"
        command = run.replace("tapir ", f"{sys.executable} -m tapir.cli ", 1).replace("SCRIPT.tap", str(script))
        out = subprocess.run(["bash", "-c", command], env=fresh, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert serial not in [i.serial for i in sim.adb_client().list()]


def test_interactive_shell_on_a_pty(sim: RunningSim) -> None:
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen(sim.adb_command("shell"), stdin=slave, stdout=slave, stderr=slave, env=sim.env())
    os.close(slave)
    seen = b""

    def read_until(marker: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 10
        while marker not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 4096)

    try:
        read_until(b"$ ")
        os.write(master, b"getprop ro.product.model\r")
        read_until(b"TapirSim\r\n")
        os.write(master, b"exit 3\r")
        assert proc.wait(timeout=10) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert seen.startswith(b"tapir_sim:/ $ ") and b"getprop ro.product.model\r\nTapirSim\r\n" in seen
