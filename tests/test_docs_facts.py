"""Facts the documentation states that the code decides: they must not drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tapir.docgen.element_names import END, names_section, update_names
from tapir.docgen.loader import load_document
from tapir.runner.collect import collect

REPO = Path(__file__).resolve().parent.parent
APPS = sorted(p.parent.name for p in (REPO / "samples").glob("*/ELEMENTS.md"))


@pytest.mark.parametrize("app", APPS)
def test_elements_md_gives_the_script_names_of_its_document(app: str) -> None:
    folder = REPO / "samples" / app
    doc = load_document(folder / f"{app}.yaml")
    text = (folder / "ELEMENTS.md").read_text(encoding="utf-8")
    # the generated section is there and matches the document (regenerate it with the command
    # the section's first line gives)
    assert update_names(text, names_section(doc, f"{app}.yaml")) == text
    assert text.rstrip().endswith(END)
    for screen in doc.screens:
        for element in screen.elements:
            assert f"| `${element.name}` |" in text


def test_update_names_replaces_only_its_section() -> None:
    section = "<!-- script names: generated from a.yaml by x; do not edit -->\nnew\n" + END + "\n"
    old = "# App\n\nintro\n\n<!-- script names: generated from a.yaml by x; do not edit -->\nold\n" + END + "\n"
    assert update_names(old, section) == "# App\n\nintro\n\n" + section
    assert update_names("# App\n", section) == "# App\n\n" + section


def test_testing_md_counts_the_sample_scripts_there_are() -> None:
    text = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    count = len(collect([REPO / "samples"]))
    assert re.findall(r"'passed': (\d+)", text) == [str(count)]
    assert f"[12/{count}]" in text


def test_the_readme_neovim_install_works_in_a_fresh_home() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [line for line in readme.splitlines() if "~/.config/nvim/plugin" in line]
    assert lines and all("mkdir -p ~/.config/nvim/plugin &&" in line for line in lines)
