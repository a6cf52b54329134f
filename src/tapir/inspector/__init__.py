"""The inspector and the recorder (``tapir inspect``, ``tapir record``; docs/inspector.md).

    from tapir.inspector.session import InspectorOptions, InspectorSession
    with InspectorSession(InspectorOptions(device="sim:music", document=Path("music.yaml"))) as s:
        print(s.url)                 # the page: the live screen, the hierarchy, the grounding

    DocumentEditor("music.yaml").add_identifier("songs_screen__sort_button", "//node[@text='Sort']")

The web side (``server``, ``session``) needs Starlette and uvicorn (the ``inspect`` extra); document
edits, the recorder and the screen's picture do not.
"""

from tapir.inspector.doc_edit import DocumentEditor, Edit, EditRefused
from tapir.inspector.live import LiveSession
from tapir.inspector.recorder import RecordedStep, ScriptRecorder
from tapir.inspector.screen import ScreenState, screen_state
from tapir.inspector.views import view_details

__all__ = [
    "DocumentEditor", "Edit", "EditRefused", "LiveSession", "RecordedStep", "ScreenState", "ScriptRecorder",
    "screen_state", "view_details",
]

# Not here: ``InspectorOptions``, ``InspectorSession`` (``tapir.inspector.session``) and
# ``InspectorServer`` (``tapir.inspector.server``). Their modules import Starlette and uvicorn (heavy,
# and an optional extra), and every import of a module of this package (the recorder of
# ``tapir record`` included) runs this face first.
