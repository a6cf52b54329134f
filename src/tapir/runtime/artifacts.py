"""The files a run leaves behind for people: screenshots on demand (``screenshot("name")``),
saved in the run's artifacts folder (``tapir run --artifacts DIR``; by default
``tapir-artifacts/<script>/``), made when the first file is written.

    artifacts = Artifacts(Path("tapir-artifacts/play_song"))
    path = artifacts.save("after save", png_bytes, ".png")   # tapir-artifacts/play_song/after_save.png
    artifacts.save("after save", png_bytes, ".png")           # ... after_save-2.png: nothing is overwritten
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_ROOT", "FAILURE_DUMP", "FAILURE_SCREENSHOT", "Artifacts", "default_folder", "failure_folder",
           "save_failure"]

#: Where runs keep their artifacts unless told otherwise, one folder per script.
DEFAULT_ROOT = Path("tapir-artifacts")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_folder(script: str | Path | None) -> Path:
    """``tapir-artifacts/<script name without .tap>``, under the current folder."""
    stem = Path(script).stem if script else "script"
    return DEFAULT_ROOT / (_UNSAFE.sub("_", stem).strip("._") or "script")


#: The screen when a run failed, and the last hierarchy dump it read (secrets masked), in its folder.
FAILURE_SCREENSHOT = "screenshot.png"
FAILURE_DUMP = "hierarchy.xml"


def failure_folder(script: str | Path | None, when: float | None = None) -> Path:
    """``tapir-artifacts/<script name>-<YYYYmmdd-HHMMSS>/``: where a failed ``tapir run`` keeps its
    screenshot, dump and trace (a folder per run, so that the failure of the last run but one is
    still there to compare)."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
    folder = default_folder(script)
    return folder.with_name(f"{folder.name}-{stamp}")


def save_failure(runtime: Any, folder: Path) -> tuple[str | None, str | None]:
    """The screen now and the last dump ``runtime`` read, saved in ``folder`` (made if needed):
    (``screenshot.png``, ``hierarchy.xml``), None for each that could not be had (the device is
    gone; no dump was read). Raises ``OSError`` only when ``folder`` cannot be made."""
    from tapir.core.errors import TapirError

    folder.mkdir(parents=True, exist_ok=True)
    screenshot = hierarchy = None
    try:
        (folder / FAILURE_SCREENSHOT).write_bytes(runtime.device.screenshot_png())
        screenshot = FAILURE_SCREENSHOT
    except (TapirError, OSError):
        pass  # the device is gone: the error says so; the trace and dump are still saved
    try:
        xml = runtime.failure_dump()  # secrets masked
        if xml is not None:
            (folder / FAILURE_DUMP).write_text(xml, encoding="utf-8")
            hierarchy = FAILURE_DUMP
    except (TapirError, OSError):
        pass
    return screenshot, hierarchy


class Artifacts:
    """One run's artifacts folder: file names made safe and unique within the run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.saved: list[Path] = []
        self._count = 0

    def save(self, name: str | None, data: bytes, suffix: str) -> Path:
        """Write ``data`` as ``<name><suffix>`` (``name`` made a safe file name; numbered when
        None); a name used before in this run gets ``-2``, ``-3``..., while a file left by an
        earlier run of the script is replaced. Raises ``OSError``."""
        self._count += 1
        stem = _UNSAFE.sub("_", name.strip()).strip("._") if name else ""
        stem = stem or f"screenshot-{self._count:03d}"
        path = self.folder / f"{stem}{suffix}"
        n = 1
        while path in self.saved:  # a file of an earlier run of the script is replaced, one of this run is not
            n += 1
            path = self.folder / f"{stem}-{n}{suffix}"
        self.folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.saved.append(path)
        return path
