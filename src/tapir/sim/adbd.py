"""A fake ``adbd``: the device side of the ADB transport protocol over TCP.

The real adb server connects to it (``adb connect 127.0.0.1:PORT``) exactly as it connects to a
phone in TCP/IP mode, so every ADB client (adbutils, the adb CLI) works unchanged and the host
side of the protocol is real adb, not a second implementation of ours.

Protocol (``system/core/adb/protocol.txt``): 24-byte little-endian headers
``command arg0 arg1 data_length data_crc32 magic`` and a payload. The host sends ``CNXN``; we
answer ``CNXN`` with our banner (``device::ro.product.name=...;features=...``), optionally after
an ``AUTH`` exchange. Each service request is ``OPEN(remote_id, 0, "service\\0")``; we answer
``OKAY(local_id, remote_id)``, send data in ``WRTE`` packets, each of which must be acknowledged
by an ``OKAY`` before the next (the host advertises no ``delayed_ack``), and end with ``CLSE``.

Services: ``shell:`` (v1: stdout+stderr merged, no exit code), ``shell,v2,...:`` (packets
``id(1) len(u32) data``: 0 stdin, 1 stdout, 2 stderr, 3 exit, 4 close-stdin, 5 window size),
``exec:`` (raw, merged), ``sync:`` (``filesync.py``). An empty shell command opens an interactive
shell. Unknown services are refused with ``CLSE`` as a real adbd does.

Traps, learnt with a probe against adb 29 and 36 (shared/research/adb_sim_report.md):
replies are written as ONE ``WRTE`` when they fit (separate small writes stall 40 ms on the adb
server's client socket); only implemented features are advertised (``sendrecv_v2`` would make
adb 36 use ``RCV2``); payloads never exceed the negotiated maximum.
"""

from __future__ import annotations

import os
import queue
import socket
import struct
import threading
from collections.abc import Callable

from tapir.sim.device import SimDevice
from tapir.sim.filesync import serve_sync
from tapir.sim.shell import ShellResult
from tapir.sim.touch import getevent_header

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_VERSION = 0x01000001  # the first version whose packets may skip the checksum
MAX_PAYLOAD = 1024 * 1024
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3
_HEADER = struct.Struct("<6I")
_NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_OPEN: "OPEN", A_OKAY: "OKAY", A_CLSE: "CLSE", A_WRTE: "WRTE",
          A_AUTH: "AUTH"}

#: What the device says it can do. Each one changes how clients talk to it, so only list what is
#: implemented: shell_v2 (exit codes), stat_v2/ls_v2 (STA2/LST2/LIS2), push creating directories.
FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir", "fixed_push_symlink_timestamp")
_V2_CHUNK = 64 * 1024
_ACK_WAIT_S = 10.0


class _StreamClosed(Exception):
    pass


class Stream:
    """One service stream on a connection: buffered input, flow-controlled output."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
        self.conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self._cv = threading.Condition()
        self._inbuf = bytearray()
        self._eof = False
        self._can_send = True
        self._close_sent = False

    # called by the connection's reader
    def _feed(self, data: bytes) -> None:
        with self._cv:
            self._inbuf += data
            self._cv.notify_all()

    def _peer_closed(self) -> None:
        with self._cv:
            self._eof = True
            self._cv.notify_all()

    def _acked(self) -> None:
        with self._cv:
            self._can_send = True
            self._cv.notify_all()

    # used by services
    def read_some(self) -> bytes:
        """Whatever has arrived (waiting for something); b"" once the peer closed."""
        with self._cv:
            while not self._inbuf and not self._eof:
                self._cv.wait()
            data = bytes(self._inbuf)
            self._inbuf.clear()
            return data

    def read_exact(self, n: int) -> bytes:
        with self._cv:
            while len(self._inbuf) < n and not self._eof:
                self._cv.wait()
            if len(self._inbuf) < n:
                raise EOFError(f"stream closed with {len(self._inbuf)} of {n} bytes")
            data = bytes(self._inbuf[:n])
            del self._inbuf[:n]
            return data

    def write(self, data: bytes) -> None:
        """Send data in as few WRTE packets as the negotiated maximum allows."""
        view = memoryview(data)
        step = self.conn.max_payload
        for start in range(0, len(data), step):
            with self._cv:
                if not self._cv.wait_for(lambda: self._can_send or self._eof, _ACK_WAIT_S) or self._eof:
                    raise _StreamClosed()
                self._can_send = False
            self.conn.send(A_WRTE, self.local_id, self.remote_id, bytes(view[start:start + step]))

    @property
    def closed(self) -> bool:
        """The peer closed the stream (a streaming service stops writing)."""
        with self._cv:
            return self._eof

    def close(self) -> None:
        """Close our side after the last write was acknowledged (as the host expects)."""
        with self._cv:
            if self._close_sent:
                return
            self._close_sent = True
            self._cv.wait_for(lambda: self._can_send or self._eof, _ACK_WAIT_S)
        self.conn.forget(self.local_id)
        self.conn.send(A_CLSE, self.local_id, self.remote_id)


class _Connection:
    """One TCP connection from an adb server: the handshake, then packets for many streams."""

    def __init__(self, server: AdbdServer, sock: socket.socket) -> None:
        self.server = server
        self.device = server.device
        self.sock = sock
        self.max_payload = MAX_PAYLOAD
        self.checksum = False
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self._online = False
        self._closed = False

    # -- packets ---------------------------------------------------------------------------

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        check = (sum(data) & 0xFFFFFFFF) if self.checksum else 0
        header = _HEADER.pack(command, arg0, arg1, len(data), check, command ^ 0xFFFFFFFF)
        with self._send_lock:
            try:
                self.sock.sendall(header + data)  # one write per packet
            except OSError:
                self.abort()

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("adb server closed the connection")
            buf += chunk
        return bytes(buf)

    def _read_packet(self) -> tuple[int, int, int, bytes]:
        command, arg0, arg1, length, _check, magic = _HEADER.unpack(self._recv_exact(_HEADER.size))
        if magic != command ^ 0xFFFFFFFF:
            raise ConnectionError(f"bad packet magic {magic:#x} for command {command:#x}")
        if length > MAX_PAYLOAD:
            raise ConnectionError(f"packet of {length} bytes exceeds {MAX_PAYLOAD}")
        return command, arg0, arg1, self._recv_exact(length) if length else b""

    def abort(self) -> None:
        """Drop the connection at once (a pulled cable); the adb server sees the device go offline."""
        if self._closed:
            return
        self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream._peer_closed()

    def forget(self, local_id: int) -> None:
        with self._streams_lock:
            self._streams.pop(local_id, None)

    # -- main loop ---------------------------------------------------------------------------

    def run(self) -> None:
        try:
            while not self._closed:
                command, arg0, arg1, data = self._read_packet()
                self.server._trace(f"<- {_NAMES.get(command, hex(command))} {arg0} {arg1} {data[:80]!r}")
                if command == A_CNXN:
                    self._on_cnxn(arg0, arg1)
                elif command == A_AUTH:
                    self._on_auth(arg0)
                elif not self._online:
                    continue  # nothing but the handshake counts before it is done
                elif command == A_OPEN:
                    self._on_open(arg0, data)
                elif command == A_OKAY:
                    stream = self._stream(arg1)
                    if stream is not None:
                        stream.remote_id = arg0
                        stream._acked()
                elif command == A_WRTE:
                    stream = self._stream(arg1)
                    if stream is not None:
                        stream._feed(data)
                        self.send(A_OKAY, arg1, arg0)
                elif command == A_CLSE:
                    stream = self._stream(arg1)
                    if stream is not None:
                        stream._peer_closed()
        except (ConnectionError, OSError, struct.error):
            pass
        finally:
            self.abort()
            self.server._forget(self)

    def _stream(self, local_id: int) -> Stream | None:
        with self._streams_lock:
            return self._streams.get(local_id)

    def _banner(self) -> bytes:
        props = self.device.props
        fields = ";".join([f"ro.product.name={props['ro.product.name']}",
                           f"ro.product.model={props['ro.product.model']}",
                           f"ro.product.device={props['ro.product.device']}",
                           "features=" + ",".join(self.server.features)])
        return f"device::{fields}".encode()

    def _on_cnxn(self, version: int, max_payload: int) -> None:
        self.max_payload = max(4096, min(max_payload, MAX_PAYLOAD))
        self.checksum = version < A_VERSION
        if self.server.auth is None:
            self._go_online()
        else:
            self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))

    def _on_auth(self, kind: int) -> None:
        if kind == AUTH_SIGNATURE:
            if self.server.auth == "accept":
                self._go_online()
            else:
                self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
        # AUTH_RSAPUBLICKEY: a real phone would now ask its user; "reject" never answers,
        # which the adb server shows as "unauthorized".

    def _go_online(self) -> None:
        self._online = True
        self.send(A_CNXN, A_VERSION, MAX_PAYLOAD, self._banner())

    def _on_open(self, remote_id: int, data: bytes) -> None:
        service = data.rstrip(b"\0").decode("utf-8", "surrogateescape")
        handler = self.server.resolve(service)
        if handler is None:
            self.send(A_CLSE, 0, remote_id)
            return
        if service.startswith(("shell", "exec:")) and self.device.faults.take_drop():
            command = service.partition(":")[2]
            if self.device.faults.drop_at == "reply" and command:
                # the service opens and the command runs on the device; its answer never comes back
                self.server._trace(f"fault: dropping the connection after running {service!r}")
                self.send(A_OKAY, self._next_id, remote_id)
                self._next_id += 1
                threading.Thread(target=self._run_then_drop, args=(command,), daemon=True,
                                 name="sim-adbd-drop").start()
                return
            self.server._trace(f"fault: dropping the connection at {service!r}")
            self.abort()
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = Stream(self, local_id, remote_id)
            self._streams[local_id] = stream
        self.send(A_OKAY, local_id, remote_id)
        thread = threading.Thread(target=self._serve, args=(handler, stream), daemon=True,
                                  name=f"sim-adbd-{service.split(':', 1)[0]}-{local_id}")
        thread.start()

    def _run_then_drop(self, command: str) -> None:
        try:
            self.device.run_shell(command)
        finally:
            self.abort()

    def _serve(self, handler: Callable[[Stream], None], stream: Stream) -> None:
        try:
            handler(stream)
        except _StreamClosed:
            pass
        except Exception as exc:  # a bug in a service must not take the transport down
            self.server._trace(f"service error: {type(exc).__name__}: {exc}")
        finally:
            if not self._closed:
                stream.close()


class AdbdServer:
    """Listens on a TCP port and serves one ``SimDevice`` to any adb server that connects.

    ``auth``: None (no authentication, like ``ro.adb.secure=0``), ``"accept"`` (an AUTH
    exchange that accepts any key) or ``"reject"`` (the device stays ``unauthorized``).
    """

    def __init__(self, device: SimDevice, *, host: str = "127.0.0.1", port: int = 0,
                 auth: str | None = None, features: tuple[str, ...] = FEATURES,
                 trace: Callable[[str], None] | None = None) -> None:
        if auth not in (None, "accept", "reject"):
            raise ValueError(f"auth must be None, 'accept' or 'reject', not {auth!r}")
        self.device = device
        self.auth = auth
        self.features = features
        self._trace_fn = trace
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, port))
        self._listener.listen(8)
        self._listener.settimeout(0.2)  # lets the accept loop notice stop()
        self.host, self.port = self._listener.getsockname()[:2]
        self._stop = threading.Event()
        self._connections: set[_Connection] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    @property
    def serial(self) -> str:
        """The serial the adb server gives a device it reached with ``adb connect``."""
        return f"{self.host}:{self.port}"

    def start(self) -> AdbdServer:
        thread = threading.Thread(target=self._accept_loop, daemon=True, name=f"sim-adbd-{self.port}")
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop listening and drop every connection; idempotent."""
        self._stop.set()
        try:
            # wakes the accept loop now (Linux fails accept() on a shut-down listener) instead of
            # at its next 0.2 s timeout, which was most of the time a short run spent stopping
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.drop_connections()
        for thread in self._threads:
            thread.join(timeout=2.0)
        try:
            self._listener.close()
        except OSError:
            pass

    def drop_connections(self) -> None:
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.abort()

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def __enter__(self) -> AdbdServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _trace(self, line: str) -> None:
        if self._trace_fn is not None:
            self._trace_fn(line)

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(self, sock)
            with self._lock:
                if self._stop.is_set():
                    sock.close()
                    break
                self._connections.add(conn)
            thread = threading.Thread(target=conn.run, daemon=True, name=f"sim-adbd-conn-{self.port}")
            thread.start()

    # -- services ------------------------------------------------------------------------------

    def resolve(self, service: str) -> Callable[[Stream], None] | None:
        """The handler for a service request, or None to refuse it."""
        if service.startswith("shell"):
            head, sep, command = service.partition(":")
            if not sep:
                return None
            options = head.split(",")[1:]
            if any(not (o in ("v2", "raw", "pty") or o.startswith("TERM=")) for o in options):
                return None
            v2 = "v2" in options
            if not command:
                # No command: a terminal session on a pty, or (``raw``: stdin is not a
                # terminal on the client) sh reading a script from stdin.
                if "pty" in options or "raw" not in options:
                    return lambda stream: self._interactive(stream, v2)
                return lambda stream: self._script(stream, v2)
            if is_watching_getevent(command):
                return lambda stream: self._getevent(stream, v2)
            return lambda stream: self._shell(stream, command, v2)
        if service.startswith("exec:"):
            command = service[len("exec:"):]
            return lambda stream: stream.write(self.device.run_shell(command).output)
        if service == "sync:":
            return lambda stream: serve_sync(stream, self.device.fs)
        return None

    def _shell(self, stream: Stream, command: str, v2: bool) -> None:
        if not v2:
            stream.write(self.device.run_shell(command).output)
            return
        # Only a command that reads its input waits for the client's stdin to end.
        self._send_v2_result(stream, self.device.run_shell(command, lambda: _read_v2_stdin(stream)))

    def _getevent(self, stream: Stream, v2: bool) -> None:
        """``getevent -lt``: the devices it opened, then every input event as it happens, until
        the client closes the stream (a person's touches: ``SimDevice.hands``)."""
        hub = self.device.input_events
        events = hub.subscribe()
        try:
            self._emit(stream, v2, getevent_header().encode())
            while not stream.closed:
                try:
                    lines = [events.get(timeout=0.2)]
                except queue.Empty:
                    continue
                while not events.empty():
                    lines.append(events.get_nowait())
                self._emit(stream, v2, "".join(lines).encode())
        except _StreamClosed:
            pass
        finally:
            hub.unsubscribe(events)

    @staticmethod
    def _emit(stream: Stream, v2: bool, data: bytes) -> None:
        stream.write(struct.pack("<BI", 1, len(data)) + data if v2 else data)

    def _script(self, stream: Stream, v2: bool) -> None:
        if v2:
            script = _read_v2_stdin(stream)
        else:
            chunks = []
            while chunk := stream.read_some():
                chunks.append(chunk)
            script = b"".join(chunks)
        result = self.device.run_shell(script.decode("utf-8", "surrogateescape"))
        if v2:
            self._send_v2_result(stream, result)
        else:
            stream.write(result.output)

    @staticmethod
    def _send_v2_result(stream: Stream, result: ShellResult) -> None:
        out = bytearray()
        for fd, chunk in result.chunks:
            for start in range(0, len(chunk), _V2_CHUNK):
                part = chunk[start:start + _V2_CHUNK]
                out += struct.pack("<BI", fd, len(part)) + part
        out += struct.pack("<BIB", 3, 1, result.exit_code & 0xFF)
        stream.write(bytes(out))

    def _interactive(self, stream: Stream, v2: bool) -> None:
        """``adb shell`` with no command: a line-at-a-time terminal with echo, like a pty."""
        prompt = f"{self.device.props['ro.product.device']}:/ $ ".encode()

        def emit(data: bytes) -> None:
            stream.write(struct.pack("<BI", 1, len(data)) + data if v2 else data)

        emit(prompt)
        line = bytearray()
        status = 0
        while True:
            if v2:
                try:
                    kind, data = _read_v2(stream)
                except EOFError:
                    return
                if kind == 4:
                    break
                if kind != 0:
                    continue
            else:
                data = stream.read_some()
                if not data:
                    return
            echo = bytearray()
            finished = False
            for byte in data:
                if byte in (0x0D, 0x0A):
                    emit(bytes(echo) + b"\r\n")
                    echo.clear()
                    text = line.decode("utf-8", "replace").strip()
                    line.clear()
                    if text in ("exit", "logout") or text.startswith("exit "):
                        parts = text.split()
                        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
                        finished = True
                        break
                    if text:
                        result = self.device.run_shell(text)
                        status = result.exit_code
                        emit(result.output.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
                    echo += prompt
                elif byte == 0x04 and not line:  # Ctrl-D on an empty line
                    finished = True
                    break
                elif byte == 0x03:  # Ctrl-C
                    line.clear()
                    echo += b"^C\r\n" + prompt
                elif byte in (0x7F, 0x08):
                    if line:
                        line.pop()
                        echo += b"\b \b"
                elif byte >= 0x20 or byte == 0x09:
                    line.append(byte)
                    echo.append(byte)
            if echo:
                emit(bytes(echo))
            if finished:
                break
        if v2:
            stream.write(struct.pack("<BIB", 3, 1, status & 0xFF))


def is_watching_getevent(command: str) -> bool:
    """``getevent`` with options that watch events (not ``-p``/``-i``, which list devices and end)."""
    words = command.split()
    if not words or words[0] != "getevent" or any(w in ("|", ";", "&&", "||", ">") for w in words):
        return False
    flags = "".join(w[1:] for w in words[1:] if w.startswith("-"))
    return "p" not in flags and "i" not in flags


def _read_v2_stdin(stream: Stream) -> bytes:
    """stdin packets up to close-stdin (or the end of the stream)."""
    data = bytearray()
    try:
        while True:
            kind, payload = _read_v2(stream)
            if kind == 0:
                data += payload
            elif kind == 4:
                break
    except EOFError:
        pass
    return bytes(data)


def _read_v2(stream: Stream) -> tuple[int, bytes]:
    kind, length = struct.unpack("<BI", stream.read_exact(5))
    return kind, stream.read_exact(length) if length else b""
