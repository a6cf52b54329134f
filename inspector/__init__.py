"""The inspector and the recorder (``tapir inspect``, ``tapir record``; docs/inspector.md).

    from tapir.inspector import InspectorOptions, InspectorSession
    with InspectorSession(InspectorOptions(device="sim:music", document=Path("music.yaml"))) as s:
        print(s.url)                 # the page: the live screen, the hierarchy, the grounding

    DocumentEditor("music.yaml").add_identifier("songs_screen__sort_button", "//node[@text='Sort']")

The web side (``server``, ``session``) needs Starlette and uvicorn (the ``inspect`` extra) and is
imported only when asked for; document edits, the recorder and the screen's picture do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.inspector.doc_edit import DocumentEditor, Edit, EditRefused
from tapir.inspector.live import LiveSession
from tapir.inspector.recorder import RecordedStep, ScriptRecorder
from tapir.inspector.screen import ScreenState, screen_state
from tapir.inspector.views import view_details

if TYPE_CHECKING:
    from tapir.inspector.server import InspectorServer
    from tapir.inspector.session import InspectorOptions, InspectorSession

__all__ = [
    "DocumentEditor", "Edit", "EditRefused", "InspectorOptions", "InspectorServer", "InspectorSession",
    "LiveSession", "RecordedStep", "ScreenState", "ScriptRecorder", "screen_state", "view_details",
]

_WEB = {"InspectorOptions": "session", "InspectorSession": "session", "InspectorServer": "server"}


def __getattr__(name: str) -> Any:
    module = _WEB.get(name)
    if module is None:
        raise AttributeError(f"module 'tapir.inspector' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"tapir.inspector.{module}"), name)
