"""Where the REPL keeps its history across sessions.

    history_path()       # $TAPIR_HISTORY, else $XDG_STATE_HOME/tapir/history, else ~/.local/state/tapir/history

The file is prompt_toolkit's ``FileHistory`` format (each entry a block of ``+``-prefixed lines,
so multi-line statements come back whole with the up arrow). ``open_history`` falls back to a
history kept in memory, and says why, when the file cannot be written.
"""

from __future__ import annotations

import os
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

__all__ = ["history_path", "open_history"]


def history_path() -> Path:
    """The history file of the current user (see the module docstring)."""
    explicit = os.environ.get("TAPIR_HISTORY")
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "tapir" / "history"


def open_history(path: Path | None) -> tuple[History, str | None]:
    """The history to use and, when it is not the file asked for, why (None: all is well)."""
    if path is None:
        return InMemoryHistory(), None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return InMemoryHistory(), f"history is not kept: cannot write {path}: {exc.strerror or exc}"
    return FileHistory(str(path)), None
