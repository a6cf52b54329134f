"""The app document of a session that has no script: the REPL, the inspector, the recorder.

    path, why = session_document(Workspace(), "sim:music", None, Path.cwd())
    # (Path('.../samples/music/music.yaml'), 'the sample document of sim:music')

A script names its document itself (``# doc:``); a session is told by ``--doc``, else by the
project's ``tapir.toml`` (``[documents]``, as for a script in the current folder), else, for a
simulated device with one sample app, by that sample's document when this checkout has it.
"""

from __future__ import annotations

from pathlib import Path

from tapir.dsl.errors import UsageError
from tapir.service.workspace import Workspace

__all__ = ["sample_document", "session_document"]

#: The sample apps' folder of this checkout (absent from an installed wheel).
_SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def sample_document(device: str | None) -> Path | None:
    """The sample document of ``--device sim:APP`` (one app) when this checkout has it."""
    if device and device.startswith("sim:") and "," not in device:
        app = device.split(":", 1)[1]
        sample = _SAMPLES / app / f"{app}.yaml"
        if sample.is_file():
            return sample
    return None


def session_document(workspace: Workspace, device: str | None, doc: str | None, cwd: Path
                     ) -> tuple[Path | None, str]:
    """The document a session starts with, and why: ``--doc``; else ``tapir.toml``'s
    ``[documents]`` (for a script in the current folder); else, for ``--device sim:APP`` with one
    sample app, that sample's document when this checkout has it. ``(None, "")`` when none."""
    if doc:
        path = Path(doc)
        if not path.is_file():
            raise UsageError(f"--doc: {doc} {'is a directory' if path.is_dir() else 'does not exist'}")
        return path, "--doc"
    ref = workspace.document_for(cwd / "<repl>.tap", "\n")
    if ref is not None:
        return ref.path, "tapir.toml" if ref.origin == "config" else ref.origin
    sample = sample_document(device)
    if sample is not None:
        return sample, f"the sample document of {device}"
    return None, ""
