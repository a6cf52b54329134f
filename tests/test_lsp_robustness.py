"""The language server survives what editors and networks do to it: malformed messages, bad
parameters, unknown methods, a client that closes its end or dies, and (with --tcp) clients
that come and go. The real `tapir lsp` in a subprocess, spoken to byte by byte."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

SERVER = [sys.executable, "-m", "tapir.cli", "lsp"]


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def message(obj: dict[str, Any]) -> bytes:
    return frame(json.dumps(obj).encode())


class Peer:
    """One end of a JSON-RPC byte stream: messages sent as written, answers read by a thread."""

    def __init__(self, reader: IO[bytes], writer: Any) -> None:
        self.writer = writer
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(reader,), daemon=True).start()

    def _read(self, reader: IO[bytes]) -> None:
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

    def send(self, data: bytes | dict[str, Any]) -> None:
        raw = data if isinstance(data, bytes) else message(data)
        if hasattr(self.writer, "sendall"):
            self.writer.sendall(raw)
        else:
            self.writer.write(raw)
            self.writer.flush()

    def answer(self, msg_id: int, timeout: float = 20) -> dict[str, Any]:
        """The response to request ``msg_id`` (notifications on the way are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to request {msg_id}"
            got = self.inbox.get(timeout=left)
            assert got is not None, "the server closed the connection"
            if got.get("id") == msg_id and "method" not in got:
                return got

    def initialize(self, root: Path, process_id: int | None = None) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": process_id, "rootUri": root.as_uri(), "capabilities": {}}})
        answer = self.answer(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def open(self, uri: str, text: str) -> None:
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri, "languageId": "tapir", "version": 1, "text": text}}})

    def hover(self, msg_id: int, uri: str, line: int, character: int) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
                   "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}})
        return self.answer(msg_id)


@pytest.fixture()
def server(tmp_path: Path) -> Any:
    proc = subprocess.Popen([*SERVER, "--log-file", str(tmp_path / "server.log")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    peer = Peer(proc.stdout, proc.stdin)
    peer.process = proc  # type: ignore[attr-defined]
    yield peer
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_malformed_messages_bad_params_and_unknown_methods_are_answered_and_survived(server: Peer,
                                                                                    tmp_path: Path) -> None:
    server.initialize(tmp_path)
    script = tmp_path / "a.tap"
    script.write_text("x = 1\nprint(x)\n", encoding="utf-8")
    uri = script.as_uri()
    server.open(uri, "x = 1\nprint(x)\n")
    server.send(frame(b"{this is not json"))
    server.send(frame(b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"textDocument": '
                      b'{"uri": "' + uri.encode() + b'"}}}'))  # no position
    bad = server.answer(7)
    assert bad["error"]["code"] == -32602  # invalid params
    server.send({"jsonrpc": "2.0", "id": 8, "method": "tapir/noSuchThing", "params": {}})
    assert server.answer(8)["error"]["code"] == -32601  # method not found
    server.send({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover",
                 "params": {"textDocument": {"uri": uri}, "position": {"line": 999, "character": 500}}})
    out_of_range = server.answer(9)  # positions past the text are clamped to it
    assert "error" not in out_of_range and out_of_range["result"] is None
    answer = server.hover(10, uri, 1, 6)
    assert "(variable) x" in answer["result"]["contents"]["value"]
    proc: subprocess.Popen[bytes] = server.process  # type: ignore[attr-defined]
    assert proc.poll() is None


def test_the_server_exits_when_the_client_closes_stdin(server: Peer, tmp_path: Path) -> None:
    server.initialize(tmp_path)
    proc: subprocess.Popen[bytes] = server.process  # type: ignore[attr-defined]
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(15) == 0


def test_the_server_exits_when_shutdown_and_exit_are_sent(server: Peer, tmp_path: Path) -> None:
    server.initialize(tmp_path)
    server.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert server.answer(2)["result"] is None
    server.send({"jsonrpc": "2.0", "method": "exit"})
    proc: subprocess.Popen[bytes] = server.process  # type: ignore[attr-defined]
    assert proc.wait(15) == 0


def test_the_server_exits_when_the_editor_process_dies(server: Peer, tmp_path: Path) -> None:
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        server.initialize(tmp_path, process_id=editor.pid)
        editor.send_signal(signal.SIGKILL)
        editor.wait(10)
        proc: subprocess.Popen[bytes] = server.process  # type: ignore[attr-defined]
        assert proc.wait(15) == 0  # checked every 2 s
        assert "the client's process" in (tmp_path / "server.log").read_text(encoding="utf-8")
    finally:
        if editor.poll() is None:
            editor.kill()


def test_a_request_on_a_file_that_cannot_be_read_is_answered_and_logged(server: Peer, tmp_path: Path) -> None:
    server.initialize(tmp_path)
    answer = server.hover(3, (tmp_path / "missing.tap").as_uri(), 0, 0)
    assert answer["result"] is None
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "on_hover failed: UsageError: no such file" in log and "Traceback" in log


def test_tcp_serves_one_client_after_another(tmp_path: Path) -> None:
    proc = subprocess.Popen([*SERVER, "--tcp", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, line
        port = int(m.group(1))
        script = tmp_path / "t.tap"
        script.write_text("y = 2\nprint(y)\n", encoding="utf-8")
        for round_ in range(2):  # the first client says exit: the server stays for the next
            with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
                peer = Peer(sock.makefile("rb"), sock)
                peer.initialize(tmp_path)
                peer.open(script.as_uri(), "y = 2\nprint(y)\n")
                assert "(variable) y" in peer.hover(5, script.as_uri(), 1, 6)["result"]["contents"]["value"]
                if round_ == 0:
                    peer.send({"jsonrpc": "2.0", "id": 6, "method": "shutdown"})
                    peer.answer(6)
                    peer.send({"jsonrpc": "2.0", "method": "exit"})
                    assert peer.inbox.get(timeout=10) is None  # the connection is closed
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize(("args", "expected"), [
    (["--tcp", "70000"], "--tcp needs a port from 0 to 65535"),
    (["--stdio", "--tcp", "1"], "choose --stdio or --tcp PORT"),
    (["--log-file", "/nonexistent/dir/x.log"], "cannot write the log file"),
])
def test_bad_options_are_usage_errors(args: list[str], expected: str) -> None:
    done = subprocess.run([*SERVER, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and expected in done.stderr


def test_a_harmless_stdio_flag_is_accepted(tmp_path: Path) -> None:
    proc = subprocess.Popen([*SERVER, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    peer = Peer(proc.stdout, proc.stdin)
    try:
        assert "capabilities" in peer.initialize(tmp_path)["result"]
    finally:
        proc.stdin.close()
        assert proc.wait(15) == 0

