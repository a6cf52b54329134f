"""Writing a file the person has open elsewhere (a document, a recorded script) all at once.

    write_atomic(Path("app.yaml"), text)     # a reader sees the old text or the new, never half

The text goes to a temporary file beside it, which then replaces it: a crash or a full disk
leaves the old file whole. The file keeps its permission bits.

What the page may name is confined (``confined_recording``): anyone who can reach the inspector (any
local process; a token holder under ``--allow-remote``) must not be able to replace an arbitrary
file of the person running it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tapir.core.errors import UsageError

__all__ = ["RECORDING_SUFFIX", "confined_recording", "write_atomic"]

#: What a recording started from the page is named.
RECORDING_SUFFIX = ".tap"


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


def confined_recording(output: str, folder: Path) -> Path:
    """The file a recording named ``output`` by the page goes to: a ``.tap`` file in ``folder``
    (the document's folder) or below it, in a folder that exists, that is not a link or anything
    but a regular file. Anything else is a ``UsageError`` the page shows (a 400, never a write)."""
    if not output.strip() or "\0" in output:
        raise UsageError("name the recording: a .tap file in the document's folder")
    root = folder.resolve()
    given = Path(output)
    path = given if given.is_absolute() else root / given
    if path.suffix != RECORDING_SUFFIX:
        raise UsageError(f"a recording is a {RECORDING_SUFFIX} file, not {given.name!r}")
    target = path.resolve()
    if target.parent != root and root not in target.parent.parents:
        raise UsageError(f"the page may write recordings only in {root} (the document's folder) or below it; "
                         f"record elsewhere with `tapir inspect --record FILE`")
    if path.is_symlink():
        raise UsageError(f"{given} is a link: the page does not write through links")
    if not target.parent.is_dir():
        raise UsageError(f"there is no folder {target.parent}: create it first")
    if target.exists() and not target.is_file():
        raise UsageError(f"{given} is not a regular file")
    return target
