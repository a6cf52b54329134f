"""Building app documents from exploration traces (AutoDroid-V2, section 3.1): ``tapir docgen``.

    from tapir.docgen.build import BuildOptions, build_document, read_trace

    result = build_document([read_trace("music-trace")], BuildOptions(app_name="Music"))
    print(result.report.render())          # screens, elements, paths, what was left out and why
    Path("music.yaml").write_text(result.text)

Modules, in pipeline order: ``trace`` (the recorded trace format, reading and writing),
``droidbot`` (DroidBot recordings into traces), ``anatomy`` (one hierarchy: lists, element keys,
layout, function), ``grouping`` (screens), ``elements`` and ``identifiers`` (abstract elements and
their checked identifier queues), ``graph`` (transitions, effects, dependency paths), ``naming``,
``policy`` (dangerous elements), ``builder`` (the whole), ``merge`` (regenerating with hand edits
kept), ``xpath`` (evaluating identifiers on recorded hierarchies) and ``recording`` (a document from
a DroidBot recording in one call: ``document_from_recording(app_dir) -> (yaml_text, report)``).
"""

from tapir.docgen.build.builder import BuildOptions, BuildReport, BuildResult, build_document
from tapir.docgen.build.droidbot import DroidBotImport, import_droidbot
from tapir.docgen.build.merge import MergeReport, merge
from tapir.docgen.build.naming import Annotation, Annotator
from tapir.docgen.build.policy import DangerPolicy
from tapir.docgen.build.recording import RecordingReport, document_from_recording
from tapir.docgen.build.trace import Action, Target, Trace, TraceWriter, read_trace

__all__ = [
    "Action",
    "Annotation",
    "Annotator",
    "BuildOptions",
    "BuildReport",
    "BuildResult",
    "DangerPolicy",
    "DroidBotImport",
    "MergeReport",
    "RecordingReport",
    "Target",
    "Trace",
    "TraceWriter",
    "build_document",
    "document_from_recording",
    "import_droidbot",
    "merge",
    "read_trace",
]
