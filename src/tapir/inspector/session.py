"""An inspector session: the device, the live screen, the web page, and the recorder, together.

    options = InspectorOptions(device="sim:music", document=Path("samples/music/music.yaml"), port=0)
    with InspectorSession(options) as session:        # connects, dumps the first screen, serves
        print(session.url)                             # http://127.0.0.1:41873/
        session.live.call(lambda: session.live.act("back"))
    # closing stops the page, the input watcher and the device (a simulator it started)

``tapir inspect`` and ``tapir record`` are this class with different options: ``record`` writes a
script from the start, ``device_input`` also records what a person does on the device itself
(``getevent``, where the device offers it), ``page`` serves the web page (else only device input
is recorded).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.core.errors import UsageError
from tapir.docgen.loader import load_document
from tapir.inspector.device_input import DeviceInput
from tapir.inspector.live import DEFAULT_INTERVAL_S, LiveSession
from tapir.inspector.security import AccessPolicy, is_loopback, new_token
from tapir.inspector.server import Hub, InspectorServer
from tapir.run import Runner, RunOptions
from tapir.runtime.session import DeviceRuntime

__all__ = ["DEFAULT_PORT", "InspectorOptions", "InspectorSession"]

#: The port tried first when none is given (a free one is taken when it is busy).
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class InspectorOptions:
    device: str | None
    document: Path
    host: str = "127.0.0.1"
    #: None: ``DEFAULT_PORT``, or any free port when that one is taken; 0: any free port.
    port: int | None = None
    token: str | None = None
    allow_remote: bool = False
    interval: float = DEFAULT_INTERVAL_S
    screenshots: bool = True
    adb_port: int | None = None
    #: Record a script to this file from the start.
    record: Path | None = None
    #: Also record what a person does on the device (getevent), when it can be read.
    device_input: bool = True
    #: Serve the web page.
    page: bool = True


class InspectorSession:
    """See the module docstring."""

    def __init__(self, options: InspectorOptions) -> None:
        self.options = options
        self.policy = self._policy(options)
        self.hub = Hub()
        self.runtime: DeviceRuntime | None = None
        self.live: LiveSession | None = None
        self.server: InspectorServer | None = None
        self.input: DeviceInput | None = None
        #: Why the device's own input is not recorded (empty when it is, or was not asked for).
        self.input_note = ""

    @staticmethod
    def _policy(o: InspectorOptions) -> AccessPolicy:
        port = o.port if o.port is not None else _free_or(DEFAULT_PORT, o.host)
        if is_loopback(o.host):
            return AccessPolicy.local(port, o.token or None, host=o.host)
        if not o.allow_remote:
            raise UsageError(f"{o.host} would let other machines drive this device: allow remote access "
                             "(--allow-remote; a token is then required, printed with the URL)", setting="host")
        return AccessPolicy.remote(o.host, port, o.token or new_token())

    def open(self) -> InspectorSession:
        o = self.options
        self.runtime = Runner(load_document(o.document), o.device, RunOptions(adb_port=o.adb_port)).connect()
        try:
            self.live = LiveSession(self.runtime, o.document, publish=self.hub.publish, interval=o.interval,
                                    screenshots=o.screenshots, device_name=o.device or self.runtime.device.serial)
            self.live.default_output = o.record
            self.live.start()
            if o.record is not None:
                self.live.start_recording(o.record)
                if o.device_input:
                    self._watch_input()
            if o.page:
                self.server = InspectorServer(self.live, self.policy, self.hub)
        except BaseException:
            self.close()
            raise
        return self

    def _watch_input(self) -> None:
        assert self.live is not None and self.runtime is not None
        watcher, why = DeviceInput.open(self.runtime.device, self.live)
        if watcher is None:
            self.input_note = why
            return
        watcher.start()
        self.input = watcher

    @property
    def url(self) -> str:
        return self.server.url if self.server is not None else ""

    def start_page(self) -> None:
        """Serve the page in a background thread (tests, benches); ``tapir inspect`` serves it in
        the foreground with ``self.server.run()``."""
        if self.server is not None:
            self.server.start()

    def close(self) -> None:
        if self.input is not None:
            self.input.stop()
            self.input = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.live is not None:
            if self.live.recorder is not None:
                self.live.wait_idle(10)  # the last gestures read are written before the script is
                self.live.call(self.live.stop_recording)
            self.live.stop()
            self.live = None
        if self.runtime is not None:
            self.runtime.close()
            self.runtime = None

    def __enter__(self) -> InspectorSession:
        self.open()
        self.start_page()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _free_or(port: int, host: str) -> int:
    """``port`` when nothing listens on it, else 0 (any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return 0
    return port
