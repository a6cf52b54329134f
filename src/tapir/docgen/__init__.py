"""App documents: format, loader, upstream import, compilation to stubs, symbols and prompts;
``tapir.docgen.build`` builds them from exploration traces (``tapir docgen``).

    from tapir.docgen import build_symbols, compile_document, load_document
    doc = load_document("samples/music/music.yaml")        # AppDocument, or DocumentError
    symbols = build_symbols(doc)                           # what the checker knows of the app
    compiled = compile_document("samples/music/music.yaml") # stubs, symbols, prompts, reference

Modules: ``loader`` (YAML to ``AppDocument``, with diagnostics), ``validate`` (the document's own
checks), ``writer`` (back to YAML), ``upstream`` (AutoDroid-V2 documents), ``symbols``, ``stubs``,
``pages`` (the base classes of the generated page objects), ``prompt``, ``reference`` and
``compile`` (all of them at once).
"""

from tapir.docgen.compile import Compiled, compile_document, write_outputs
from tapir.docgen.loader import LoadResult, load_document, load_document_report, loads_document
from tapir.docgen.prompt import PromptText, TokenCount, count_tokens, render_compressed, render_full
from tapir.docgen.reference import render_reference
from tapir.docgen.stubs import generate_stubs
from tapir.docgen.symbols import build_symbols, load_symbols
from tapir.docgen.upstream import ImportReport, import_data, import_file
from tapir.docgen.writer import document_to_dict, to_yaml

__all__ = [
    "Compiled", "ImportReport", "LoadResult", "PromptText", "TokenCount", "build_symbols", "compile_document",
    "count_tokens", "document_to_dict", "generate_stubs", "import_data", "import_file", "load_document",
    "load_document_report", "load_symbols", "loads_document", "render_compressed", "render_full",
    "render_reference", "to_yaml", "write_outputs",
]

# Not here: ``validate`` (``tapir.docgen.validate.validate``): a function of that name would hide
# its module, ``tapir.docgen.validate``, from ``import tapir.docgen.validate as ...`` and patching.
# The page objects' base classes (``tapir.docgen.pages``) are imported as a module by the
# generated code: their ``Element`` and ``Screen`` are not the document model's.
