"""The app document of a session that has no script: the REPL, the inspector, the recorder.

    path, why = session_document(Workspace(), "sim:music", None, Path.cwd())
    # (Path('.../samples/music/music.yaml'), 'the sample document of sim:music')

A script names its document itself (``# doc:``); a session is told by ``--doc``, else by the
project's ``tapir.toml`` (``[documents]``, as for a script in the current folder), else, for a
simulated device with one app, by that app's document, which ships with the simulator.
"""

from __future__ import annotations

from pathlib import Path

import tapir.sim
from tapir.core.errors import UsageError
from tapir.service.workspace import Workspace

__all__ = ["sample_document", "session_document"]

def sample_document(device: str | None) -> Path | None:
    """The document of the simulated app of ``--device sim:APP`` (one app), shipped with the
    simulator (``tapir.sim.documents``), in a checkout and in an installed wheel alike."""
    if device and device.startswith("sim:") and "," not in device:
        app = device.split(":", 1)[1]
        if app.isidentifier():  # not a recording's path
            sample = Path(tapir.sim.__file__).resolve().parent / "documents" / f"{app}.yaml"
            if sample.is_file():
                return sample
    return None


def session_document(workspace: Workspace, device: str | None, doc: str | None, cwd: Path
                     ) -> tuple[Path | None, str]:
    """The document a session starts with, and why: ``--doc``; else ``tapir.toml``'s
    ``[documents]`` (for a script in the current folder); else, for ``--device sim:APP`` with one
    app, that app's document. ``(None, "")`` when none."""
    if doc:
        path = Path(doc)
        if not path.is_file():
            raise UsageError(f"{doc} {'is a directory' if path.is_dir() else 'does not exist'}", setting="doc")
        return path, "--doc"
    ref = workspace.document_for(cwd / "<repl>.tap", "\n")
    if ref is not None:
        return ref.path, "tapir.toml" if ref.origin == "config" else ref.origin
    sample = sample_document(device)
    if sample is not None:
        return sample, f"the sample document of {device}"
    return None, ""
