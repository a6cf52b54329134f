"""Devices, UI hierarchies, grounding, navigation and traces: where scripts meet screens.

For Python code (tests on the generated page objects), ``open_runtime`` is the way in::

    from tapir.runtime import open_runtime
    with open_runtime("samples/music/music.yaml", "sim:music") as runtime:
        connect(runtime).songs_screen.song_list.match("Lanterns").tap()   # music_pages.connect

Importing any module of ``tapir.runtime`` loads these (the device session with its grounding);
none of them loads an embedding model or a web server.
"""

from tapir.runtime.borrowed import Borrowed
from tapir.runtime.connect import open_runtime, reset_app
from tapir.runtime.session import DeviceRuntime

__all__ = ["Borrowed", "DeviceRuntime", "open_runtime", "reset_app"]
