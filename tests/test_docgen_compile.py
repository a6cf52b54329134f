"""`tapir compile`: golden files for every rendering, determinism, symbols, prompts, tokens.

Regenerate the golden files after an intended change with
``TAPIR_UPDATE_GOLDEN=1 python -m pytest -q tests/test_docgen_compile.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.docgen.compile import compile_document, module_stem
from tapir.docgen.loader import load_document
from tapir.docgen.prompt import TASK_HEADER, count_tokens, estimate_tokens, render_compressed, render_full
from tapir.docgen.reference import navigation_edges
from tapir.docgen.symbols import build_symbols, load_symbols
from tapir.dsl.symbols import SymbolTable

GOLDEN = Path(__file__).parent / "golden"
EXAMPLE = GOLDEN / "example_app.yaml"
UPDATE = os.environ.get("TAPIR_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize(
    "name",
    [
        "example_app_pages.py",
        "example_app.symbols.json",
        "example_app.prompt.full.txt",
        "example_app.prompt.compressed.txt",
        "example_app.reference.md",
    ],
)
def test_golden(name: str) -> None:
    compiled = compile_document(EXAMPLE)
    golden = GOLDEN / "compiled" / name
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(compiled.files[name], encoding="utf-8")
    assert compiled.files[name] == golden.read_text(encoding="utf-8"), f"{name} differs from {golden}"


def test_output_is_deterministic(tmp_path: Path) -> None:
    # The same document under another path and name must give byte-identical renderings
    # (apart from the module and file names derived from that name).
    copy = tmp_path / "example_app.yaml"
    copy.write_text(EXAMPLE.read_text())
    assert compile_document(copy).files == compile_document(EXAMPLE).files


def test_symbols_round_trip_through_json(tmp_path: Path) -> None:
    table = build_symbols(load_document(EXAMPLE))
    again = SymbolTable.from_json(table.to_json())
    assert again == table
    path = tmp_path / "music.symbols.json"
    path.write_text(table.to_json())
    assert load_symbols(path) == table
    song_list = table.element("songs_screen__song_list")
    assert song_list is not None and song_list.children == (
        "songs_screen__song_title", "songs_screen__song_artist", "songs_screen__song_menu_button")
    assert table.suggest("songs_screen__song_lst")[0] == "songs_screen__song_list"
    with pytest.raises(ValueError):
        SymbolTable.from_json('{"format": "something else"}')


def test_prompts_put_the_task_last_after_a_stable_prefix() -> None:
    doc = load_document(EXAMPLE)
    for prompt in (render_full(doc), render_compressed(doc)):
        a = prompt.with_task("play a song")
        b = prompt.with_task("add every song of Emil to the Emil playlist")
        assert a.startswith(prompt.prefix) and b.startswith(prompt.prefix)
        assert a.rstrip().endswith(TASK_HEADER + "play a song")
        assert TASK_HEADER not in prompt.prefix
    full = render_full(doc).prefix
    compressed = render_compressed(doc).prefix
    for e in doc.elements:
        assert f"${e.name}" in full and f"${e.name}" in compressed
        assert e.description in full and e.description not in compressed
    assert "Options: 'Title', 'Artist', 'Date added'" in full
    assert "tap to open the song_options_popup." in full
    assert count_tokens(compressed).count < count_tokens(full).count


def test_prompt_api_text_comes_from_the_registry() -> None:
    from tapir.dsl.api import ELEMENT_METHODS, GLOBALS

    full = render_full(load_document(EXAMPLE)).prefix
    for entry in ELEMENT_METHODS.values():
        assert entry.doc in full
    for entry in GLOBALS.values():
        # allow() is the run's permission, never a model's to write (docs/safety.md)
        assert (entry.signature(None) in full) == entry.in_prompts
    assert "allow(" not in full and "secret(name: str) -> secret" in full


def test_token_estimate_is_in_a_sane_range() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 2
    # Long snake_case names split into several tokens, as BPE vocabularies do.
    assert 4 <= estimate_tokens("$songs_screen__song_menu_button") <= 10
    text = render_full(load_document(EXAMPLE)).prefix
    assert len(text) / 6 < estimate_tokens(text) < len(text) / 2.5
    assert count_tokens("x").method in ("estimate",) or ":" in count_tokens("x").method


def test_navigation_edges_come_from_leads_to_and_paths() -> None:
    edges = navigation_edges(load_document(EXAMPLE))
    assert edges[("home_screen", "songs_screen")] == {"songs_button"}
    assert edges[("songs_screen", "song_options_popup")] == {"song_menu_button"}
    # From the path [song_options_popup.back(), home_screen__songs_button.tap()].
    assert edges[("song_options_popup", "home_screen")] == {"back"}
    assert all(src != dst for src, dst in edges)


def test_module_stem() -> None:
    assert module_stem("samples/music/music.yaml") == "music"
    assert module_stem("x/2048-game.app.yaml") == "_2048_game"


def test_cli_compile_writes_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLE), "-o", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    written = sorted(Path(p).name for p in report["written"])
    assert written == sorted(compile_document(EXAMPLE).files)
    for name in written:
        assert (tmp_path / name).read_text() == compile_document(EXAMPLE, out_dir=tmp_path).files[name]
    # The symbol table finds its document again from wherever it was written.
    assert load_symbols(tmp_path / "example_app.symbols.json").source == os.path.normpath(EXAMPLE)
    assert set(report["tokens"]) == {"full", "compressed"}
    assert report["counts"]["elements"] == 12


def test_cli_compile_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(tmp_path / "none.yaml")]) == 2
    assert main(["compile", str(EXAMPLE), "--only", "stubs,pdf", "-o", str(tmp_path)]) == 2
    broken = GOLDEN / "docs" / "broken.yaml"
    assert main(["compile", str(broken), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{broken}:" in err and "unknown kind 'slider'" in err and "^" in err
    assert main(["compile", str(EXAMPLE), "--only", "symbols", "-o", str(tmp_path / "only")]) == 0
    assert [p.name for p in (tmp_path / "only").iterdir()] == ["example_app.symbols.json"]


def test_cli_compile_output_dir_that_is_a_file_is_a_usage_error(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    assert main(["compile", str(EXAMPLE), "-o", str(blocker)]) == 2
    assert "cannot write into" in capsys.readouterr().err
    assert main(["compile", str(EXAMPLE), "-o", str(blocker / "sub")]) == 2
    assert "cannot write into" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("format: 1\napp:\n\tpackage: x\n", "syntax"),
        ("app: 1\napp: 2\n", "duplicate-name"),
        ("- a\n- b\n", "bad-type"),
        ("", "missing-field"),
    ],
)
def test_cli_bad_documents_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                        code: str) -> None:
    doc = tmp_path / "app.yaml"
    doc.write_text(text)
    assert main(["doc", "validate", str(doc)]) == 1
    assert f"error[{code}]" in capsys.readouterr().err
    assert main(["compile", str(doc), "-o", str(tmp_path / "out")]) == 1
    assert f"error[{code}]" in capsys.readouterr().err


def test_cli_binary_document_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "app.yaml"
    doc.write_bytes(b"\x00\xfe\xff\x85" * 40)
    assert main(["doc", "validate", str(doc)]) == 1
    assert "not UTF-8" in capsys.readouterr().err
