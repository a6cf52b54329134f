"""The names scripts use (``$screen__element``) beside what finds each one on the device, as a
section of an app's hand-written ``ELEMENTS.md`` (which gives resource ids, not script names).

    python -m tapir.docgen.element_names samples/music/music.yaml samples/music/ELEMENTS.md

rewrites the section between its markers (or appends it); ``tests/test_docs_facts.py`` checks
that every sample's section matches its document.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tapir.core.document import AppDocument, Element

__all__ = ["END", "names_section", "update_names"]

BEGIN = "<!-- script names: generated from {doc} by `python -m tapir.docgen.element_names`; do not edit -->"
END = "<!-- end of script names -->"
_BEGIN = re.compile(r"<!-- script names: generated from .*?-->")
_ID = re.compile(r"@resource-id='([^']+)'")
_DESC = re.compile(r"@content-desc='([^']*)'")
_TEXT = re.compile(r"@text='([^']*)'")


def _found_by(element: Element, package: str) -> str:
    """What finds the element: its resource id (short, as ELEMENTS.md writes it), else its
    description or text, from the first identifier that has one."""
    for ident in element.identifiers:
        m = _ID.search(ident.xpath)
        if m:  # the app's own ids short, as ELEMENTS.md writes them; android:id/... as they are
            return f"`{m.group(1).removeprefix(package + ':id/')}`"
    for ident in element.identifiers:
        for pattern, label in ((_DESC, "desc"), (_TEXT, "text")):
            m = pattern.search(ident.xpath)
            if m:
                return f"{label} `{m.group(1)}`"
    return f"XPath `{element.identifiers[0].xpath}`" if element.identifiers else "–"


def names_section(doc: AppDocument, doc_name: str) -> str:
    """The section: one table per screen, each element's script name, kind and what finds it."""
    out = [BEGIN.format(doc=doc_name), "", "## Names for scripts", "",
           f"A script names an element `$screen__element`, as `{doc_name}` defines it; the id column is the "
           f"id the tables above give (the app's own ids without `{doc.app.package}:id/`). A child element "
           "(`in item of`) is used on an item of its list: `item.get_text($child)`.", ""]
    for screen in doc.screens:
        out += [f"### `{screen.name}`", "", "| script name | kind | found by |", "|---|---|---|"]
        for element in screen.elements:
            kind = element.kind.value + (f" (in item of `${element.item_of}`)" if element.item_of else "")
            out.append(f"| `${element.name}` | {kind} | {_found_by(element, doc.app.package)} |")
        out.append("")
    out.append(END)
    return "\n".join(out) + "\n"


def update_names(markdown: str, section: str) -> str:
    """``markdown`` with its names section replaced by ``section`` (appended when it has none)."""
    begin = _BEGIN.search(markdown)
    if begin is not None:
        end = markdown.find(END, begin.start())
        if end >= 0:
            tail = markdown[end + len(END):].lstrip("\n")
            return markdown[:begin.start()] + section + ("\n" + tail if tail else "")
    return markdown.rstrip("\n") + "\n\n" + section


def main(argv: list[str]) -> int:
    from tapir.docgen.loader import load_document

    if len(argv) != 2:
        print("usage: python -m tapir.docgen.element_names APP.yaml ELEMENTS.md", file=sys.stderr)
        return 2
    doc_path, md_path = Path(argv[0]), Path(argv[1])
    section = names_section(load_document(doc_path), doc_path.name)
    md_path.write_text(update_names(md_path.read_text(encoding="utf-8"), section), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
