"""An app document straight from a DroidBot recording, in one call.

    text, report = document_from_recording(Path("recordings/calendar"))
    Path("calendar.yaml").write_text(text)
    print(report.render())        # what was imported, built, left out, and every warning

This is ``tapir explore --import-droidbot`` followed by ``tapir docgen``, with the trace kept in a
temporary directory: for apps that have a recording but no document. A broken recording (files
that cannot be read, events whose states were not recorded) still gives a document; what was left
out is in the report's warnings. The document is named after the recording folder, not the
temporary trace, so the same recording always gives the same text.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.docgen.build.builder import BuildOptions, BuildReport, build_document
from tapir.docgen.build.droidbot import DroidBotImport, import_droidbot
from tapir.docgen.build.trace import read_trace


@dataclass(frozen=True)
class RecordingReport:
    """What ``document_from_recording`` imported (``recording``) and built (``build``)."""

    recording: DroidBotImport
    build: BuildReport

    @property
    def screens(self) -> int:
        return len(self.build.screens)

    @property
    def elements(self) -> int:
        return self.build.elements

    @property
    def warnings(self) -> list[str]:
        """The import's warnings (broken files, missing states), then the build's."""
        return [*self.recording.warnings, *self.build.warnings]

    def render(self) -> str:
        return self.recording.render() + "\n" + self.build.render()

    def to_json(self) -> dict[str, Any]:
        r = self.recording
        return {"recording": {"source": r.source, "package": r.package, "states": r.states, "steps": r.steps,
                              "actions": dict(r.actions), "left_out": dict(r.skipped), "warnings": r.warnings},
                "build": self.build.to_json()}


def document_from_recording(app_dir: str | Path, package: str | None = None,
                            options: BuildOptions | None = None) -> tuple[str, RecordingReport]:
    """The document (YAML text, validated) built from the DroidBot recording in ``app_dir``
    (``states/``, ``events/``), and the report; ``package`` overrides the app the recording
    launched. Raises ``UsageError`` only when nothing of the app can be read at all."""
    source = Path(app_dir)
    base = options or BuildOptions()
    chosen = dataclasses.replace(base, package=package or base.package, sources=base.sources or (str(source),))
    with tempfile.TemporaryDirectory(prefix="tapir-droidbot-") as tmp:
        summary = import_droidbot(source, Path(tmp) / "trace")
        # the build reads hierarchies from the trace lazily: it must finish before the directory goes
        result = build_document([read_trace(summary.output)], chosen)
    # the temporary trace is gone: name what remains, and keep the report the same from run to run
    summary.output = "(temporary trace)"
    return result.text, RecordingReport(summary, result.report)


__all__ = ["RecordingReport", "document_from_recording"]
