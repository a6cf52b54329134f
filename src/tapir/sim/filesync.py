"""The device side of ADB's file sync protocol (the ``sync:`` service): pull, push, stat, ls.

Requests are ``ID(4) LEN(u32 LE) PATH``. Implemented: ``STAT``/``LIST``/``RECV``/``SEND``/``QUIT``
(v1, all that adbutils uses) and ``STA2``/``LST2``/``LIS2`` (used by the adb CLI when the
device advertises ``stat_v2``/``ls_v2``). ``RCV2``/``SND2`` are not implemented, so the device must
not advertise ``sendrecv_v2`` (adb 36 would then use them for ``pull``).

Every reply is built in one buffer and written once: a real adbd coalesces the same way, and
separate small writes cost a 40 ms Nagle/delayed-ACK stall per reply through the adb server.
"""

from __future__ import annotations

import errno
import os
import struct
import zlib
from typing import Protocol

from tapir.sim.files import FileStat, FileSystem, FsError

SYNC_DATA_MAX = 64 * 1024
_REQUEST = struct.Struct("<4sI")
_STAT_V1 = struct.Struct("<4sIII")
_STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
_DENT_V1 = struct.Struct("<4sIIII")
_DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")
_SHELL_UID = 2000


class SyncStream(Protocol):
    def read_exact(self, n: int) -> bytes:
        """Exactly n bytes; raises EOFError when the peer closed first."""
        ...

    def write(self, data: bytes) -> None: ...


def _fail(message: str) -> bytes:
    raw = message.encode("utf-8")
    return b"FAIL" + struct.pack("<I", len(raw)) + raw


def _ino(path: str) -> int:
    return zlib.crc32(path.encode())


def _stat_v2(ident: bytes, fs: FileSystem, path: str) -> bytes:
    st = fs.stat(path)
    if st is None:
        return _STAT_V2.pack(ident, errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return _STAT_V2.pack(ident, 0, 0xFD00, _ino(fs.normalize(path)), st.mode, 2 if st.is_dir else 1,
                         _SHELL_UID, _SHELL_UID, st.size, st.mtime, st.mtime, st.mtime)


def _dent_v2(name: str, st: FileStat, path: str) -> bytes:
    raw = name.encode("utf-8", "surrogateescape")
    return _DENT_V2.pack(b"DNT2", 0, 0xFD00, _ino(path), st.mode, 2 if st.is_dir else 1, _SHELL_UID,
                         _SHELL_UID, st.size, st.mtime, st.mtime, st.mtime, len(raw)) + raw


def _list(fs: FileSystem, path: str, v2: bool) -> bytes:
    out = bytearray()
    try:
        entries = fs.listdir(path)
    except FsError:
        entries = []
    here = fs.stat(path)
    if here is not None and here.is_dir:
        entries = [(".", here), ("..", here), *entries]
    base = fs.normalize(path).rstrip("/")
    for name, st in entries:
        if v2:
            out += _dent_v2(name, st, f"{base}/{name}")
        else:
            raw = name.encode("utf-8", "surrogateescape")
            out += _DENT_V1.pack(b"DENT", st.mode, st.size & 0xFFFFFFFF, st.mtime, len(raw)) + raw
    out += (_DENT_V2.pack(b"DONE", *([0] * 12)) if v2 else _DENT_V1.pack(b"DONE", 0, 0, 0, 0))
    return bytes(out)


def _recv(fs: FileSystem, path: str) -> bytes:
    try:
        data = fs.read(path)
    except FsError as exc:
        return _fail(f"open failed: {exc.reason}")
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start:start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    out += b"DONE" + struct.pack("<I", 0)
    return bytes(out)


def _send(stream: SyncStream, fs: FileSystem, spec: str) -> bytes:
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, "0"
    try:
        mode = int(mode_text)
    except ValueError:
        mode = 0o644
    body = bytearray()
    mtime = 0
    while True:
        ident, length = _REQUEST.unpack(stream.read_exact(8))
        if ident == b"DATA":
            if length > SYNC_DATA_MAX:
                return _fail(f"data chunk of {length} bytes exceeds the maximum of {SYNC_DATA_MAX}")
            body += stream.read_exact(length)
        elif ident == b"DONE":
            mtime = length  # DONE carries the modification time in place of a length
            break
        else:
            return _fail(f"invalid data message '{ident.decode('latin-1')}'")
    try:
        # "fixed_push_mkdir": the device creates missing parent directories.
        fs.write(path, bytes(body), mode=mode, mtime=mtime or None, make_parents=True)
    except FsError as exc:
        return _fail(f"couldn't create file: {exc.reason}")
    return b"OKAY" + struct.pack("<I", 0)


def serve_sync(stream: SyncStream, fs: FileSystem) -> None:
    """Answer sync requests until QUIT or the peer closes the stream."""
    while True:
        try:
            ident, length = _REQUEST.unpack(stream.read_exact(8))
            if length > 1024 and ident != b"QUIT":
                stream.write(_fail(f"path too long: {length}"))
                return
            path = stream.read_exact(length).decode("utf-8", "surrogateescape")
        except EOFError:
            return
        if ident == b"STAT":
            st = fs.stat(path)
            stream.write(_STAT_V1.pack(b"STAT", st.mode, st.size & 0xFFFFFFFF, st.mtime) if st
                         else _STAT_V1.pack(b"STAT", 0, 0, 0))
        elif ident in (b"STA2", b"LST2"):
            stream.write(_stat_v2(ident, fs, path))
        elif ident == b"LIST":
            stream.write(_list(fs, path, v2=False))
        elif ident == b"LIS2":
            stream.write(_list(fs, path, v2=True))
        elif ident == b"RECV":
            stream.write(_recv(fs, path))
        elif ident == b"SEND":
            try:
                stream.write(_send(stream, fs, path))
            except EOFError:
                return
        elif ident == b"QUIT":
            return
        else:
            stream.write(_fail(f"unknown command {ident.decode('latin-1')!r} ({os.strerror(errno.ENOSYS)})"))
            return
