"""Devices, UI hierarchies, grounding, navigation and traces: where scripts meet screens.

For Python code (tests on the generated page objects), ``open_runtime`` is the way in::

    from tapir.runtime import open_runtime
    with open_runtime("samples/music/music.yaml", "sim:music") as runtime:
        connect(runtime).songs_screen.song_list.match("Lanterns").tap()   # music_pages.connect

The names below are imported on first use, so that importing a sub-package (``hierarchy``, which
documents are built on) does not load the device runtime.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Borrowed", "DeviceRuntime", "open_runtime", "reset_app"]

_WHERE = {"Borrowed": "borrowed", "DeviceRuntime": "session", "open_runtime": "connect", "reset_app": "connect"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"tapir.runtime.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'tapir.runtime' has no attribute {name!r}")
