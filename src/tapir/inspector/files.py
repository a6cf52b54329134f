"""Writing a file the person has open elsewhere (a document, a recorded script) all at once.

    write_atomic(Path("app.yaml"), text)     # a reader sees the old text or the new, never half

The text goes to a temporary file beside it, which then replaces it: a crash or a full disk
leaves the old file whole. The file keeps its permission bits.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s text with ``text`` in one step (newlines written as given)."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.resolve().parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
