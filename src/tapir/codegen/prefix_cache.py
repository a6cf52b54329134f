"""The prompt-prefix KV cache on disk: only llama.cpp's context state, not a pickled ``LlamaState``.

A pickled ``LlamaState`` also carries the score matrix (n_batch x vocabulary floats: about 300 MB
for Qwen's 152k vocabulary); the context state alone is the KV cache of the prefix (tens of MB).
A file is one prefix of one model at one context size and llama.cpp version: its name is a hash
of all of these and of the prefix's tokens, so a changed document, prompt version or model is a
new file, never a wrong one::

    cache = PrefixCache(default_cache_dir())
    key = cache.key(model_id, n_ctx, tokens, label="music-p1")
    hit = cache.load(key)            # CachedPrefix(tokens, state) or None
    cache.save(key, tokens, state_bytes)

Writes are atomic (a temporary file renamed into place); the oldest files are removed past
``max_bytes``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CachedPrefix", "PrefixCache", "default_cache_dir"]

_MAGIC = b"TAPIRKV1"
#: Keep at most this much prefix state on disk by default (least recently used files go first).
DEFAULT_MAX_BYTES = 4 * 1024**3


def default_cache_dir() -> Path:
    """``$TAPIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/tapir``, else ``~/.cache/tapir``; prefixes go in ``prefix/``."""
    base = os.environ.get("TAPIR_CACHE_DIR")
    if base:
        return Path(base) / "prefix"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tapir" / "prefix"


@dataclass(frozen=True)
class CachedPrefix:
    tokens: tuple[int, ...]
    state: bytes
    path: Path


class PrefixCache:
    def __init__(self, folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    @staticmethod
    def key(model_id: str, n_ctx: int, tokens: Sequence[int], *, label: str = "prefix", runtime: str = "") -> str:
        h = hashlib.sha256()
        h.update(json.dumps([model_id, n_ctx, runtime, len(tokens)]).encode())
        h.update(struct.pack(f"<{len(tokens)}i", *tokens))
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label)[:60]
        return f"{safe}-{h.hexdigest()[:20]}"

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.kv"

    def load(self, key: str) -> CachedPrefix | None:
        """The stored prefix, or None when absent or unreadable (a damaged file is removed)."""
        path = self.path(key)
        try:
            with path.open("rb") as f:
                if f.read(len(_MAGIC)) != _MAGIC:
                    raise ValueError("not a prefix file")
                (n,) = struct.unpack("<I", f.read(4))
                tokens = struct.unpack(f"<{n}i", f.read(4 * n))
                (size,) = struct.unpack("<Q", f.read(8))
                state = f.read(size)
                if len(state) != size:
                    raise ValueError("truncated")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, struct.error):
            path.unlink(missing_ok=True)
            return None
        os.utime(path)  # least recently *used* goes first when pruning
        return CachedPrefix(tuple(tokens), state, path)

    def save(self, key: str, tokens: Sequence[int], state: bytes | bytearray | memoryview) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(key)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            f.write(_MAGIC)
            f.write(struct.pack("<I", len(tokens)))
            f.write(struct.pack(f"<{len(tokens)}i", *tokens))
            f.write(struct.pack("<Q", len(state)))
            f.write(state)
        os.replace(tmp, path)
        self.prune(keep=path)
        return path

    def prune(self, keep: Path | None = None) -> None:
        files = sorted(self.folder.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for p in files:
            total += p.stat().st_size
            if total > self.max_bytes and p != keep:
                p.unlink(missing_ok=True)
