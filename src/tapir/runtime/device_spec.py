"""Device specs that name their adb server: ``[HOST:]PORT/SERIAL``.

A ``--device`` value is ``sim``/``sim:APP`` (a simulator), an adb serial (``emulator-5554``,
``R58M123ABC``, or an ``adb connect`` address such as ``10.0.0.7:5555``, which is a serial too), or
a serial on a named adb server::

    parse_device("10.0.0.2:5037/emulator-5554")   # DeviceSpec(serial='emulator-5554', host='10.0.0.2', port=5037)
    parse_device("5038/127.0.0.1:41037")          # host None: --adb-host, $ANDROID_ADB_SERVER_HOST, 127.0.0.1
    parse_device("5038/")                          # the only device of the server on 5038 (or $ANDROID_SERIAL)
    parse_device("127.0.0.1:5555")                 # a plain serial: no '/' in it

The slash is what tells them apart: no adb serial has one (USB serials are letters and digits,
network ones ``HOST:PORT``, mDNS ones ``adb-...._adb-tls-connect._tcp``), while an ``adb connect``
address has the same ``HOST:PORT`` shape as a server. One run can so use phones on several adb
servers (``tapir test --device 5038/emulator-5554 --device 10.0.0.2:5037/R58M123ABC``).

``with_server(spec, host, port)`` is what ``--adb-host``/``--adb-port`` (and ``tapir.toml``'s
``[device] adb_host``/``adb_port``) do to a serial that names no server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tapir.core.errors import UsageError

__all__ = ["DeviceSpec", "format_server", "parse_device", "with_server"]

_SERVER = re.compile(r"(?:(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):)?(?P<port>\d+)")


@dataclass(frozen=True)
class DeviceSpec:
    """A non-simulator ``--device`` value taken apart."""

    #: The adb serial; None: ``$ANDROID_SERIAL``, else the only device the server has.
    serial: str | None
    #: The adb server's host named in the spec (None: the run's default).
    host: str | None = None
    #: The adb server's port named in the spec (None: the run's default).
    port: int | None = None

    @property
    def names_server(self) -> bool:
        return self.port is not None


def _is_sim(spec: str) -> bool:
    from tapir.sim.launch import is_sim_spec

    return is_sim_spec(spec)


def parse_device(spec: str) -> DeviceSpec:
    """``spec`` taken apart (see the module docstring); a ``UsageError`` when the part before the
    slash is not ``PORT`` or ``HOST:PORT``. Simulator specs are not device specs: check them first."""
    server, slash, serial = spec.partition("/")
    if not slash:
        return DeviceSpec(spec.strip() or None)
    found = _SERVER.fullmatch(server.strip())
    if found is None:
        raise UsageError(f"{spec!r}: before the '/' goes the adb server, as PORT or HOST:PORT "
                         f"(e.g. 127.0.0.1:5037/{serial or 'SERIAL'}), not {server!r}", setting="device")
    port = int(found["port"])
    if not 0 < port < 65535:
        raise UsageError(f"{spec!r}: the adb server's port must be between 1 and 65534, not {port}",
                         setting="device")
    host = found["host"]
    if host and host.startswith("["):
        host = host[1:-1]
    return DeviceSpec(serial.strip() or None, host or None, port)


def format_server(host: str | None, port: int | None) -> str:
    """``HOST:PORT`` as a spec writes it (an IPv6 host in brackets)."""
    shown = f"[{host}]" if host and ":" in host else (host or "")
    return f"{shown}:{port}" if shown else str(port)


def with_server(spec: str | None, host: str | None, port: int | None) -> str | None:
    """``spec`` on the server ``host``/``port`` unless it is a simulator or names its own server
    (``--adb-host``/``--adb-port`` are the defaults of every device that names none). None (the
    default device) with a host or port is ``PORT/`` or ``HOST:PORT/``: the only device there."""
    if host is None and port is None:
        return spec
    if spec is not None and (_is_sim(spec) or parse_device(spec).names_server):
        return spec
    from tapir.runtime.adb_transport import server_address

    return f"{format_server(host, port if port is not None else server_address(None)[1])}/{spec or ''}"
