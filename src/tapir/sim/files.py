"""The simulated device's file system: just enough of Android's to dump, pull and push.

Files live in memory. Only the places a shell user may write on a real device are writable
(``/data/local/tmp`` and shared storage); ``/sdcard`` and friends are aliases of
``/storage/emulated/0`` as on Android. Errors carry an errno and the C library's wording,
because both the shell (``cat: x: No such file or directory``) and the sync protocol
(``open failed: ...``) show them.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_mod
import threading
import time
from dataclasses import dataclass

SHARED_STORAGE = "/storage/emulated/0"
_ALIASES = ("/sdcard", "/mnt/sdcard", "/storage/self/primary", "/mnt/user/0/primary")
_WRITABLE = ("/data/local/tmp", SHARED_STORAGE)
_READ_ONLY = ("/system", "/vendor", "/product", "/apex")
_INITIAL_DIRS = (
    "/", "/data", "/data/local", "/data/local/tmp", "/dev", "/proc", "/etc", "/mnt",
    "/system", "/system/bin", "/system/xbin", "/vendor", "/product", "/apex", "/sdcard",
    "/storage", "/storage/emulated", "/storage/self", SHARED_STORAGE,
    f"{SHARED_STORAGE}/Download", f"{SHARED_STORAGE}/Pictures", f"{SHARED_STORAGE}/DCIM",
    f"{SHARED_STORAGE}/Music", f"{SHARED_STORAGE}/Documents",
)
DIR_MODE = stat_mod.S_IFDIR | 0o771
FILE_MODE = stat_mod.S_IFREG | 0o644
DEV_MODE = stat_mod.S_IFCHR | 0o666
# Character devices every shell may open; reads give nothing, writes vanish (``/dev/tty`` is
# handled by the shell, which maps it to its own stdout).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty")


class FsError(OSError):
    """A failed file operation; ``str()`` is the C library's message for the errno."""

    def __init__(self, code: int, path: str) -> None:
        super().__init__(code, os.strerror(code), path)
        self.code = code
        self.path = path

    @property
    def reason(self) -> str:
        return os.strerror(self.code)


@dataclass(frozen=True)
class FileStat:
    mode: int
    size: int
    mtime: int

    @property
    def is_dir(self) -> bool:
        return stat_mod.S_ISDIR(self.mode)


@dataclass
class _File:
    data: bytes
    mode: int
    mtime: int


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class FileSystem:
    """An in-memory tree of directories and regular files; safe to use from several threads."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        now = int(time.time())
        self._dirs: dict[str, int] = {d: now for d in _INITIAL_DIRS}
        self._files: dict[str, _File] = {}

    @staticmethod
    def normalize(path: str, cwd: str = "/") -> str:
        """An absolute, canonical path: ``.``/``..`` resolved and storage aliases followed."""
        full = posixpath.normpath(posixpath.join(cwd, path))
        if full.startswith("//"):
            full = "/" + full.lstrip("/")
        for alias in _ALIASES:
            if full == alias or full.startswith(alias + "/"):
                return SHARED_STORAGE + full[len(alias):]
        return full

    # -- queries -----------------------------------------------------------------------------

    def stat(self, path: str) -> FileStat | None:
        p = self.normalize(path)
        with self._lock:
            if p in self._dirs:
                return FileStat(DIR_MODE, 4096, self._dirs[p])
            f = self._files.get(p)
            if f is not None:
                return FileStat(f.mode, len(f.data), f.mtime)
            if p in _DEVICES:
                return FileStat(DEV_MODE, 0, 0)
        return None

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def is_dir(self, path: str) -> bool:
        st = self.stat(path)
        return st is not None and st.is_dir

    def read(self, path: str) -> bytes:
        p = self.normalize(path)
        with self._lock:
            f = self._files.get(p)
            if f is not None:
                return f.data
            if p in self._dirs:
                raise FsError(errno.EISDIR, path)
            if p in _DEVICES:
                return b""
        raise FsError(errno.ENOENT, path)

    def listdir(self, path: str) -> list[tuple[str, FileStat]]:
        """Entries of a directory, sorted by name (without ``.`` and ``..``)."""
        p = self.normalize(path)
        with self._lock:
            if p not in self._dirs:
                raise FsError(errno.ENOTDIR if p in self._files else errno.ENOENT, path)
            prefix = p.rstrip("/") + "/"
            names: set[str] = set()
            for candidate in list(self._dirs) + list(self._files):
                if candidate != p and candidate.startswith(prefix) and "/" not in candidate[len(prefix):]:
                    names.add(candidate[len(prefix):])
            out = []
            for name in sorted(names):
                st = self.stat(prefix + name)
                if st is not None:
                    out.append((name, st))
            return out

    # -- changes -----------------------------------------------------------------------------

    def _check_writable(self, p: str, shown: str) -> None:
        if _under(p, _READ_ONLY) or p == "/":
            raise FsError(errno.EROFS, shown)
        if not _under(p, _WRITABLE):
            raise FsError(errno.EACCES, shown)

    def write(self, path: str, data: bytes, *, mode: int | None = None, mtime: int | None = None,
              append: bool = False, make_parents: bool = False) -> None:
        p = self.normalize(path)
        if p in _DEVICES:
            return
        with self._lock:
            if p in self._dirs:
                raise FsError(errno.EISDIR, path)
            self._check_writable(p, path)
            parent = posixpath.dirname(p)
            if parent not in self._dirs:
                if not make_parents:
                    raise FsError(errno.ENOENT, path)
                self.mkdir(parent, parents=True)
            old = self._files.get(p)
            body = (old.data if (append and old) else b"") + data
            file_mode = FILE_MODE if mode is None else (stat_mod.S_IFREG | stat_mod.S_IMODE(mode))
            self._files[p] = _File(body, file_mode, int(time.time()) if mtime is None else mtime)

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        p = self.normalize(path)
        with self._lock:
            if p in self._dirs:
                if parents:
                    return
                raise FsError(errno.EEXIST, path)
            if p in self._files:
                raise FsError(errno.EEXIST, path)
            self._check_writable(p, path)
            parent = posixpath.dirname(p)
            if parent not in self._dirs:
                if not parents:
                    raise FsError(errno.ENOENT, path)
                self.mkdir(parent, parents=True)
            self._dirs[p] = int(time.time())

    def remove(self, path: str, *, recursive: bool = False) -> None:
        p = self.normalize(path)
        with self._lock:
            if p in self._files:
                self._check_writable(p, path)
                del self._files[p]
                return
            if p not in self._dirs:
                raise FsError(errno.ENOENT, path)
            if not recursive:
                raise FsError(errno.EISDIR, path)
            self._check_writable(p, path)
            prefix = p.rstrip("/") + "/"
            for f in [f for f in self._files if f.startswith(prefix)]:
                del self._files[f]
            for d in [d for d in self._dirs if d.startswith(prefix)]:
                del self._dirs[d]
            del self._dirs[p]
