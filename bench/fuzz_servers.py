"""Fuzz targets that are servers: the language server (``tapir lsp``, a real subprocess) and the
simulator's adbd (``AdbdServer``, spoken to over TCP). ``bench/fuzz.py`` runs them.

A server must answer or ignore whatever it is sent, never die or hang, and still serve a valid
request afterwards: after every case a probe (an LSP ``hover``, an adb ``shell:echo``) must be
answered within ``PROBE_S`` seconds, or the case is a finding (and the server is started again).

LSP messages that keep the framing (a ``Content-Length`` header and that many bytes of body,
whatever the body) go to one server on stdio, as an editor speaks. Broken framing cannot be
survived on the same stream by any server (a header that promises a million bytes swallows
every message after it), so each such case is a fresh TCP connection to a ``tapir lsp --tcp``
server, while a probe connection to the same process checks it is still serving.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from fuzz_inputs import ODD, REPO, SCRIPT_PIECES, Finding, Target, json_values, mutated
from hypothesis import strategies as st

PROBE_S = 20.0
SERVER = [sys.executable, "-m", "tapir.cli", "lsp"]


# ---------------------------------------------------------------------------------------------
# The language server

def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class _Peer:
    """A JSON-RPC byte stream to a server: frames sent as given, answers read by a thread."""

    def __init__(self, reader: IO[bytes], write: Any) -> None:
        self._write = write
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(reader,), daemon=True).start()

    def _read(self, reader: IO[bytes]) -> None:
        try:
            while True:
                length = None
                while True:
                    line = reader.readline()
                    if not line:
                        self.inbox.put(None)
                        return
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                    if line in (b"\r\n", b"\n"):
                        break
                body = reader.read(length or 0)
                self.inbox.put(json.loads(body))
        except (OSError, ValueError):
            self.inbox.put(None)

    def send(self, data: bytes) -> None:
        self._write(data)

    def request(self, msg_id: Any, method: str, params: Any) -> dict[str, Any]:
        self.send(frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()))
        return self.answer(msg_id)

    def notify(self, method: str, params: Any) -> None:
        self.send(frame(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()))

    def answer(self, msg_id: Any, timeout: float = PROBE_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Finding(f"no answer to request {msg_id!r} within {timeout:.0f} s")
            try:
                got = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if got is None:
                raise Finding("the server closed the connection")
            if got.get("id") == msg_id and "method" not in got:
                return got


LSP_METHODS = [
    "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
    "textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/references",
    "textDocument/documentSymbol", "textDocument/signatureHelp", "textDocument/semanticTokens/full",
    "textDocument/semanticTokens/range", "textDocument/codeAction", "textDocument/formatting",
    "textDocument/rangeFormatting", "textDocument/documentHighlight", "textDocument/prepareRename",
    "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles", "workspace/symbol",
    "$/cancelRequest", "$/setTrace", "completionItem/resolve", "initialize", "initialized", "tapir/stats",
    "tapir/noSuchThing", "", "textDocument/", "\u0000",
]


def _lsp_messages(uri: str) -> st.SearchStrategy[bytes]:
    """Well-framed messages: real methods with plausible, odd or random parameters, and bodies
    that are not JSON-RPC at all."""
    uris = st.sampled_from([uri, uri + "x", "file:///nonexistent/a.tap", "untitled:1", "", "file://", "%%",
                            "file:///etc/passwd", "http://example.com/a.tap"])
    ints = st.one_of(st.integers(-5, 200), st.integers(-(2**63), 2**64), st.sampled_from([2**31 - 1, -1, 0]))
    position = st.fixed_dictionaries({"line": ints, "character": ints})
    rng = st.fixed_dictionaries({"start": position, "end": position})
    text = st.one_of(mutated(["x = 1\nprint(x)\n", "$songs_screen__song_list.match('a').tap()\n"], SCRIPT_PIECES),
                     st.text(max_size=100))
    document = st.fixed_dictionaries({"uri": uris}, optional={
        "languageId": st.sampled_from(["tapir", "python", ""]), "version": ints, "text": text})
    change = st.one_of(st.fixed_dictionaries({"text": text}),
                       st.fixed_dictionaries({"range": rng, "text": text}),
                       st.fixed_dictionaries({"range": rng, "rangeLength": ints, "text": text}))
    params = st.one_of(
        st.fixed_dictionaries({"textDocument": document, "position": position}),
        st.fixed_dictionaries({"textDocument": document, "contentChanges": st.lists(change, max_size=3)}),
        st.fixed_dictionaries({"textDocument": document, "range": rng,
                               "context": st.fixed_dictionaries({"diagnostics": st.lists(json_values, max_size=2)})}),
        st.fixed_dictionaries({"textDocument": document, "options": json_values}),
        st.fixed_dictionaries({"settings": json_values}),
        st.fixed_dictionaries({"id": json_values}),
        json_values,
    )
    ids = st.one_of(st.integers(1000, 10**6), st.text(max_size=5), st.none(), json_values)
    request = st.builds(lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
                        ids, st.sampled_from(LSP_METHODS), params)
    notification = st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p},
                             st.sampled_from(LSP_METHODS), params)
    odd = st.one_of(
        st.fixed_dictionaries({}, optional={"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "id": ids,
                                            "method": json_values, "params": json_values, "result": json_values,
                                            "error": json_values}),
        json_values,
    )
    as_json = st.one_of(request, notification, odd).map(lambda m: json.dumps(m).encode())
    garbage = st.one_of(st.binary(max_size=100),
                        st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")),
                        mutated(['{"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {}}'],
                                ["{", "}", '"', ",", ":", "\\u0000", "\\ud800", "[", "null"] + ODD).map(
                            lambda t: t.encode("utf-8", "surrogatepass")))
    return st.lists(st.one_of(as_json, as_json, garbage).map(frame), min_size=1, max_size=3).map(b"".join)


def _broken_frames() -> st.SearchStrategy[bytes]:
    """Byte streams whose framing is wrong: headers, lengths, truncation."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}'
    headers = st.one_of(
        st.integers(-10, 10**12).map(lambda n: b"Content-Length: %d\r\n\r\n" % n),
        st.sampled_from([b"Content-Length: x\r\n\r\n", b"Content-Length:\r\n\r\n", b"\r\n\r\n", b"\r\n",
                         b"Content-Type: text/plain\r\n\r\n", b"content-length: 10\n\n", b"Content-Length: 5\r\n",
                         b"Content-Length: 1e3\r\n\r\n", b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n"]),
        st.binary(max_size=60),
    )
    return st.lists(st.one_of(headers, st.just(body), st.binary(max_size=200), st.just(frame(body))),
                    min_size=1, max_size=5).map(b"".join)


def lsp_target() -> Target:
    work = Path(tempfile.mkdtemp(prefix="tapir-fuzz-lsp-"))
    script = work / "a.tap"
    script.write_text("x = 1\nprint(x)\n", encoding="utf-8")
    uri = script.as_uri()
    counts = {"messages": 0, "framing": 0, "restarts": 0}
    state: dict[str, Any] = {}
    probe_ids = iter(range(10**9))

    def start_stdio() -> None:
        proc = subprocess.Popen([*SERVER, "--log-file", str(work / "stdio.log")], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def write(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        peer = _Peer(proc.stdout, write)
        peer.request(0, "initialize", {"processId": None, "rootUri": work.as_uri(), "capabilities": {}})
        peer.notify("initialized", {})
        state["stdio"], state["stdio_peer"] = proc, peer
        reopen(peer)

    def reopen(peer: _Peer) -> None:
        peer.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "tapir", "version": 1,
                                                              "text": "x = 1\nprint(x)\n"}})

    def start_tcp() -> None:
        proc = subprocess.Popen([*SERVER, "--tcp", "0", "--log-file", str(work / "tcp.log")],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stderr is not None
        deadline = time.monotonic() + 30
        port = None
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
        if port is None:
            raise RuntimeError("tapir lsp --tcp did not say its port")
        threading.Thread(target=lambda: proc.stderr and proc.stderr.read(), daemon=True).start()
        sock = socket.create_connection(("127.0.0.1", port), timeout=PROBE_S)
        peer = _Peer(sock.makefile("rb"), sock.sendall)
        peer.request(0, "initialize", {"processId": None, "rootUri": work.as_uri(), "capabilities": {}})
        peer.notify("initialized", {})
        reopen(peer)
        state["tcp"], state["tcp_port"], state["tcp_peer"], state["tcp_sock"] = proc, port, peer, sock

    def probe(peer: _Peer) -> None:
        msg_id = f"probe-{next(probe_ids)}"
        answer = peer.request(msg_id, "textDocument/hover", {"textDocument": {"uri": uri},
                                                            "position": {"line": 1, "character": 6}})
        if "error" in answer:
            raise Finding(f"the probe was answered with an error: {answer['error']}")

    def restart(which: str) -> None:
        counts["restarts"] += 1
        proc = state.get(which)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        (start_stdio if which == "stdio" else start_tcp)()

    def message_case(data: bytes) -> None:
        counts["messages"] += 1
        peer: _Peer = state["stdio_peer"]
        proc: subprocess.Popen[bytes] = state["stdio"]
        try:
            peer.send(data)
            probe(peer)
        except (Finding, OSError) as exc:
            code = proc.poll()
            restart("stdio")
            raise Finding(f"stdio server {'exited ' + str(code) if code is not None else 'stopped answering'}: "
                          f"{exc}") from None
        if proc.poll() is not None:
            restart("stdio")
            raise Finding("the stdio server exited")

    def framing_case(data: bytes) -> None:
        counts["framing"] += 1
        try:
            with socket.create_connection(("127.0.0.1", state["tcp_port"]), timeout=5) as sock:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(0.2)
                try:
                    while sock.recv(65536):
                        pass
                except (TimeoutError, OSError):
                    pass
            probe(state["tcp_peer"])
        except (Finding, OSError) as exc:
            code = state["tcp"].poll()
            restart("tcp")
            raise Finding(f"tcp server {'exited ' + str(code) if code is not None else 'stopped answering'}: "
                          f"{exc}") from None

    def check(case: tuple[str, bytes]) -> None:
        kind, data = case
        (message_case if kind == "message" else framing_case)(data)

    def close() -> None:
        for which in ("stdio", "tcp"):
            proc = state.get(which)
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        sock = state.get("tcp_sock")
        if sock is not None:
            sock.close()

    start_stdio()
    start_tcp()
    inputs = st.one_of(
        _lsp_messages(uri).map(lambda d: ("message", d)),
        _lsp_messages(uri).map(lambda d: ("message", d)),
        _lsp_messages(uri).map(lambda d: ("message", d)),
        _broken_frames().map(lambda d: ("framing", d)),
    )
    def stats() -> dict[str, Any]:
        # handler errors the server caught and logged (answered as errors): worth reading, not findings
        logs = [work / "stdio.log", work / "tcp.log"]
        caught = sum(p.read_text(encoding="utf-8", errors="replace").count("Traceback") for p in logs if p.exists())
        return {**counts, "tracebacks_logged": caught, "logs": str(work)}

    return Target("lsp", inputs, check, stats=stats, close=close)


# ---------------------------------------------------------------------------------------------
# The simulator's adbd

A_CNXN, A_OPEN, A_OKAY, A_CLSE, A_WRTE, A_AUTH, A_SYNC = (0x4E584E43, 0x4E45504F, 0x59414B4F, 0x45534C43,
                                                         0x45545257, 0x48545541, 0x434E5953)
COMMANDS = [A_CNXN, A_OPEN, A_OKAY, A_CLSE, A_WRTE, A_AUTH, A_SYNC]
VERSION, MAX_PAYLOAD = 0x01000001, 1024 * 1024


def packet(command: int, arg0: int, arg1: int, data: bytes = b"", *, length: int | None = None,
           magic: int | None = None) -> bytes:
    n = len(data) if length is None else length
    check = sum(data) & 0xFFFFFFFF
    return struct.pack("<6I", command, arg0, arg1, n & 0xFFFFFFFF, check,
                       (command ^ 0xFFFFFFFF) if magic is None else magic) + data


CNXN = packet(A_CNXN, VERSION, MAX_PAYLOAD, b"host::features=shell_v2\0")
SERVICES = [b"shell:echo hi\0", b"shell,v2,raw:getprop ro.serialno\0", b"shell:\0", b"shell,v2,pty:\0",
            b"shell,raw:\0", b"exec:cat /sdcard/window_dump.xml\0", b"sync:\0", b"shell:uiautomator dump\0",
            b"shell:input tap 540 1200\0", b"shell:screencap -p\0", b"reverse:list-forward\0", b"shell\0", b"\0",
            b"shell:sleep 1\0", b"shell:cat\0", b"shell:am start -n x/y\0", b"framebuffer:\0"]


def _adb_streams() -> st.SearchStrategy[bytes]:
    u32 = st.one_of(st.integers(0, 5), st.integers(0, 2**32 - 1), st.sampled_from([1, 2**31, 2**32 - 1]))
    payload = st.one_of(st.sampled_from(SERVICES), st.binary(max_size=64),
                        st.sampled_from([b"STAT\x05\x00\x00\x00/data", b"LIST\x01\x00\x00\x00/",
                                         b"RECV\x0c\x00\x00\x00/sdcard/x.y", b"SEND\x10\x00\x00\x00/sdcard/a,33188",
                                         b"DATA\xff\xff\xff\x7f", b"QUIT\x00\x00\x00\x00", b"\x00\x05\x00\x00\x00hello",
                                         b"\x04\x00\x00\x00\x00", b"\x05\x10\x00\x00\x00" + b"\x00" * 16]))
    one = st.one_of(
        st.builds(packet, st.sampled_from(COMMANDS), u32, u32, payload),
        st.builds(lambda c, a, b, d, n: packet(c, a, b, d, length=n), st.sampled_from(COMMANDS), u32, u32, payload,
                  st.integers(0, 2**32 - 1)),
        st.builds(lambda c, a, b, d, m: packet(c, a, b, d, magic=m), st.sampled_from(COMMANDS), u32, u32, payload,
                  u32),
        st.builds(packet, u32, u32, u32, payload),
        st.binary(max_size=40),
    )
    opened = st.builds(lambda n, rest: CNXN + packet(A_OPEN, n, 0, SERVICES[n % len(SERVICES)]) + rest,
                       st.integers(1, 50), st.lists(one, max_size=5).map(b"".join))
    return st.one_of(st.lists(one, min_size=1, max_size=6).map(b"".join),
                     st.lists(one, max_size=6).map(lambda p: CNXN + b"".join(p)),
                     opened, opened)


def _read_packet(sock: socket.socket) -> tuple[int, int, int, bytes]:
    head = b""
    while len(head) < 24:
        chunk = sock.recv(24 - len(head))
        if not chunk:
            raise Finding("adbd closed the probe connection")
        head += chunk
    command, arg0, arg1, length, _, _ = struct.unpack("<6I", head)
    data = b""
    while len(data) < length:
        chunk = sock.recv(length - len(data))
        if not chunk:
            raise Finding("adbd closed the probe connection mid-packet")
        data += chunk
    return command, arg0, arg1, data


def adb_probe(port: int) -> None:
    """A valid connection: handshake, ``shell:echo ok``, its output, its close."""
    with socket.create_connection(("127.0.0.1", port), timeout=PROBE_S) as sock:
        sock.sendall(CNXN)
        command, *_ = _read_packet(sock)
        if command != A_CNXN:
            raise Finding(f"adbd answered the handshake with {command:#x}")
        sock.sendall(packet(A_OPEN, 7, 0, b"shell:echo ok\0"))
        output = b""
        while True:
            command, arg0, _, data = _read_packet(sock)
            if command == A_WRTE:
                output += data
                sock.sendall(packet(A_OKAY, 7, arg0))
            elif command == A_CLSE:
                break
        if output != b"ok\n":
            raise Finding(f"adbd's probe printed {output!r}")


def adb_target() -> Target:
    from tapir.sim.adbd import AdbdServer
    from tapir.sim.apps import get_app
    from tapir.sim.device import SimDevice

    device = SimDevice([get_app("music")])
    device.start_app("org.tapir.music")
    server = AdbdServer(device).start()
    threads_at_start = threading.active_count()
    counts = {"max_threads": threads_at_start, "max_connections": 0}

    def check(data: bytes) -> None:
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(data)
                sock.settimeout(0.02)
                try:
                    while sock.recv(65536):
                        pass
                except (TimeoutError, OSError):
                    pass
        except OSError as exc:
            raise Finding(f"adbd refused a connection: {exc}") from None
        adb_probe(server.port)
        counts["max_threads"] = max(counts["max_threads"], threading.active_count())
        counts["max_connections"] = max(counts["max_connections"], server.connection_count)

    def stats() -> dict[str, Any]:
        deadline = time.monotonic() + 5
        while server.connection_count and time.monotonic() < deadline:
            time.sleep(0.05)
        return {**counts, "threads_at_start": threads_at_start, "threads_at_end": threading.active_count(),
                "connections_left": server.connection_count, "fds": len(os.listdir("/proc/self/fd"))}

    return Target("adb", _adb_streams(), check, stats=stats, close=server.stop)


# ---------------------------------------------------------------------------------------------
# The inspector: its HTTP API and its websocket

_INSPECTOR_PATHS = ("api/state", "api/act", "api/element", "api/identifier", "api/sensitive", "api/record",
                    "api/view/1/1", "api/view/999999/0", "api/shot/1", "api/shot/0", "ws", "", "api/nope")


def _inspector_bodies() -> st.SearchStrategy[bytes]:
    fields = st.fixed_dictionaries({}, optional={
        "action": st.sampled_from(("start", "stop", "tap", "long_tap", "type", "scroll", "back", "enter", "x")),
        "output": st.one_of(st.sampled_from(("play.tap", "../out.tap", "/tmp/x.tap", "no/dir/a.tap", "music.yaml",
                                             "a.txt", "", ".", "..", "sub/../../x.tap")), json_values),
        "seq": st.one_of(st.integers(-2, 5), json_values), "node": st.one_of(st.integers(-2, 50), json_values),
        "element": st.one_of(st.sampled_from(("songs_screen__search_button", "../x", "")), json_values),
        "xpath": st.one_of(st.text(max_size=40), json_values), "screen": json_values, "name": json_values,
        "kind": json_values, "description": json_values, "identifiers": json_values, "text": json_values,
        "direction": json_values, "sensitive": json_values, "first": json_values})
    return st.one_of(fields.map(lambda d: json.dumps(d).encode()), json_values.map(lambda v: json.dumps(v).encode()),
                     st.binary(max_size=80))


def inspector_target() -> Target:
    """Requests to a real inspector on the simulated music app: every answer is under 500 (a
    refusal is a 4xx with a JSON ``error``), nothing is written outside the document's folder, and
    the server still answers ``/api/state`` after each case; websocket messages of any kind are
    survived. Cases are ``("http", method, path, body)`` or ``("ws", frames)``."""
    import shutil
    import urllib.error
    import urllib.request

    from websockets.sync.client import connect

    from tapir.inspector.session import InspectorOptions, InspectorSession

    outside = Path(tempfile.mkdtemp(prefix="fuzz-inspector-"))
    folder = outside / "doc"
    folder.mkdir()
    doc = folder / "music.yaml"
    shutil.copy(REPO / "samples" / "music" / "music.yaml", doc)
    session = InspectorSession(InspectorOptions(device="sim:music", document=doc, port=0, interval=0.5))
    session.__enter__()
    counts = {"http": 0, "ws": 0, "refused_4xx": 0}

    def request(method: str, path: str, body: bytes | None) -> tuple[int, bytes, str]:
        req = urllib.request.Request(session.url + path, data=body, method=method,
                                     headers={"Content-Type": "application/json", "X-Tapir": "1"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read(), r.headers.get_content_type()
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get_content_type()

    def check(case: tuple[Any, ...]) -> None:
        if case[0] == "http":
            _, method, path, body = case
            counts["http"] += 1
            status, raw, ctype = request(method, path, body if method == "POST" else None)
            if status >= 500:
                raise Finding(f"{method} /{path} answered {status}")
            if status >= 400 and ctype == "application/json" and not json.loads(raw).get("error"):
                raise Finding(f"{method} /{path}: a {status} without an error message")
            counts["refused_4xx"] += 400 <= status < 500
        else:
            counts["ws"] += 1
            with connect(session.url.replace("http://", "ws://") + "ws", open_timeout=10) as ws:
                ws.recv(timeout=10)  # the hello
                for frame_ in case[1]:
                    ws.send(frame_)
        if sorted(p.name for p in outside.iterdir()) != ["doc"]:
            raise Finding(f"a file was written outside the document's folder: {sorted(outside.iterdir())}")
        if request("GET", "api/state", None)[0] != 200:
            raise Finding("the server stopped answering /api/state")

    http = st.tuples(st.just("http"), st.sampled_from(("GET", "POST")), st.sampled_from(_INSPECTOR_PATHS),
                     _inspector_bodies())
    sockets = st.tuples(st.just("ws"), st.lists(st.one_of(st.text(max_size=60), st.binary(max_size=60),
                                                         json_values.map(json.dumps)), max_size=4))

    def close() -> None:
        session.__exit__(None, None, None)
        shutil.rmtree(outside, ignore_errors=True)

    return Target("inspector", st.one_of(http, http, http, sockets), check, stats=lambda: dict(counts), close=close)
