"""``tapir compile``: an app document to page-object stubs, symbols, prompts and a reference.

Every output is a pure function of the document, so compiling twice gives identical files.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from tapir.core.document import AppDocument
from tapir.docgen.loader import load_document
from tapir.docgen.prompt import TokenCount, count_tokens, render_compressed, render_full
from tapir.docgen.reference import render_reference
from tapir.docgen.stubs import generate_stubs
from tapir.docgen.symbols import build_symbols

#: What ``tapir compile`` can produce, in the order it writes them.
OUTPUTS = ("stubs", "symbols", "prompt", "reference")


@dataclass(frozen=True)
class Compiled:
    """The rendered outputs of one document (file name -> text) and what they measured."""

    document: AppDocument
    files: dict[str, str]
    tokens: dict[str, TokenCount] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def module_stem(doc_path: str | Path) -> str:
    """A Python-identifier stem for the outputs: ``samples/music/music.yaml`` -> ``music``."""
    stem = re.sub(r"\W", "_", Path(doc_path).name.split(".", 1)[0], flags=re.ASCII) or "app"
    return "_" + stem if stem[0].isdigit() else stem


def compile_document(
    doc_path: str | Path, outputs: tuple[str, ...] = OUTPUTS, out_dir: str | Path | None = None
) -> Compiled:
    """Load ``doc_path`` and render the requested outputs (nothing is written).

    The symbol table names its document relative to ``out_dir`` (where it will be written), so
    the outputs do not depend on where the checkout is.
    """
    unknown = [o for o in outputs if o not in OUTPUTS]
    if unknown:
        raise ValueError(f"unknown outputs {unknown} (known: {', '.join(OUTPUTS)})")
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    doc = load_document(doc_path)
    seconds["load"] = time.perf_counter() - t0
    stem = module_stem(doc_path)
    files: dict[str, str] = {}
    tokens: dict[str, TokenCount] = {}
    if "stubs" in outputs:
        t = time.perf_counter()
        files[f"{stem}_pages.py"] = generate_stubs(doc, Path(doc_path).name)
        seconds["stubs"] = time.perf_counter() - t
    if "symbols" in outputs:
        t = time.perf_counter()
        where = Path(doc_path).resolve()
        source = os.path.relpath(where, Path(out_dir).resolve()) if out_dir is not None else where.name
        files[f"{stem}.symbols.json"] = replace(build_symbols(doc), source=Path(source).as_posix()).to_json()
        seconds["symbols"] = time.perf_counter() - t
    if "prompt" in outputs:
        t = time.perf_counter()
        for prompt in (render_full(doc), render_compressed(doc)):
            files[f"{stem}.prompt.{prompt.style}.txt"] = prompt.template()
            tokens[prompt.style] = count_tokens(prompt.prefix)
        seconds["prompt"] = time.perf_counter() - t
    if "reference" in outputs:
        t = time.perf_counter()
        files[f"{stem}.reference.md"] = render_reference(doc)
        seconds["reference"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - t0
    return Compiled(doc, files, tokens, seconds)


def write_outputs(compiled: Compiled, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in compiled.files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
