"""The `watchers:` section of app documents: loaded, validated with file:line problems, written
back, kept by `tapir docgen --update`, shown in the reference and the full prompt; and the API's
new functions refused as dependency-path steps (only keys move between screens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.core.watchers import DEFAULT_LIMIT, Watcher
from tapir.docgen.loader import load_document, loads_document
from tapir.docgen.prompt import render_compressed, render_full
from tapir.docgen.reference import render_reference
from tapir.docgen.writer import document_to_dict, to_yaml

EXAMPLE = Path(__file__).parent / "golden" / "example_app.yaml"
NOTES = Path(__file__).resolve().parent.parent / "samples" / "notes" / "notes.yaml"


def with_watchers(section: str) -> str:
    return EXAMPLE.read_text() + "watchers:\n" + section


def problems(text: str) -> list[tuple[int | None, str, str]]:
    result = loads_document(text, "app.yaml")
    return [(p.line, p.code, p.message) for p in result.problems]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_watchers_load_in_order_with_their_lines() -> None:
    text = with_watchers("""\
  rate_prompt:
    description: The rating prompt.
    when: song_options_popup__add_to_playlist_button
    tap: home_screen__settings_button
    limit: 2
  allow:
    tap_text: Allow
  whats_new:
    when_text: What's new
    tap: home_screen__songs_button
""")
    result = loads_document(text, "app.yaml")
    assert result.problems == ()
    doc = result.document
    assert doc is not None
    assert doc.watchers == (
        Watcher("rate_prompt", tap="home_screen__settings_button", when="song_options_popup__add_to_playlist_button",
                limit=2, description="The rating prompt."),
        Watcher("allow", tap_text="Allow"),
        Watcher("whats_new", tap="home_screen__songs_button", when_text="What's new"),
    )
    assert [w.line for w in doc.watchers] == [line_of(text, "rate_prompt:"), line_of(text, "allow:"),
                                              line_of(text, "whats_new:")]
    assert doc.watchers[1].limit == DEFAULT_LIMIT


def test_every_watcher_problem_is_reported_with_its_line() -> None:
    text = with_watchers("""\
  typo:
    tap: home_screen__setings_button
  listy:
    tap: songs_screen__song_title
  both:
    tap: home_screen__songs_button
    when: home_screen__songs_button
    when_text: Songs
  neither:
    when_text: Songs
  twice:
    tap: home_screen__songs_button
    tap_text: Songs
  limits:
    tap: home_screen__songs_button
    limit: 0
  odd:
    tap: home_screen__songs_button
    press: back
  not_a_mapping: 3
""")
    found = problems(text)
    expected = {
        (line_of(text, "typo:"), "unknown-name"),
        (line_of(text, "listy:"), "bad-watcher"),
        (line_of(text, "when_text: Songs"), "bad-watcher"),
        (line_of(text, "neither:") + 1, "missing-field"),
        (line_of(text, "twice:") + 1, "bad-watcher"),
        (line_of(text, "limit: 0"), "bad-type"),
        (line_of(text, "press: back"), "unknown-field"),
        (line_of(text, "not_a_mapping"), "bad-type"),
    }
    assert {(line, code) for line, code, _ in found} == expected, found
    messages = {code: message for _, code, message in found}
    assert "did you mean 'home_screen__settings_button'?" in messages["unknown-name"]
    assert "known: description, limit, tap, tap_text, when, when_text" in messages["unknown-field"]


def test_watchers_round_trip_through_the_writer() -> None:
    doc = load_document(NOTES)
    assert [w.name for w in doc.watchers] == ["rate_prompt"]
    text = to_yaml(document_to_dict(doc))
    assert "watchers:\n  rate_prompt:\n" in text and "limit" not in text.split("watchers:")[1]
    again = loads_document(text).document
    assert again == doc and again.watchers == doc.watchers


def test_the_reference_and_the_full_prompt_name_the_watchers() -> None:
    doc = load_document(NOTES)
    reference = render_reference(doc)
    assert "## Watchers" in reference
    assert "- `rate_prompt`: when $rate_dialog__title appears, tap $rate_dialog__not_now_button." in reference
    full = render_full(doc).prefix
    assert "Interruptions the runtime answers by itself (do not handle them in the script):" in full
    assert "rate_prompt" not in render_compressed(doc).prefix
    example = load_document(EXAMPLE)
    assert "Watchers" not in render_reference(example) and "Interruptions" not in render_full(example).prefix


@pytest.mark.parametrize("step,message", [
    ("launch_app()", "is not a global path step (known: back(), enter())"),
    ("sleep()", "is not a global path step"),
    ("home_screen__songs_button.exists()", "'exists' is not an action"),
    ("home_screen__songs_button.wait()", "'wait' is not an action"),
])
def test_new_functions_are_no_path_steps(step: str, message: str) -> None:
    text = EXAMPLE.read_text().replace("          - [back()]", f"          - [{step}]", 1)
    found = problems(text)
    assert any(code == "bad-step" and message in msg for _, code, msg in found), found


def test_docgen_update_keeps_the_hand_written_watchers(tmp_path: Path) -> None:
    from runtime_helpers import sim_device

    from tapir.docgen.build import build_document, merge, read_trace
    from tapir.docgen.build.trace import TraceWriter
    from tapir.runtime.explore import ExploreConfig, Explorer
    from tapir.sim.apps import get_app

    _, device, _ = sim_device(get_app("notes"), foreground=False)
    writer = TraceWriter.create(tmp_path / "trace", app="org.tapir.notes", source="explore")
    Explorer(device, ExploreConfig("org.tapir.notes", max_steps=40, delay=0, screenshots=False), writer).run()
    old = load_document(NOTES)
    data, _ = merge(old, build_document([read_trace(tmp_path / "trace")]))
    merged = loads_document(to_yaml(data)).document
    assert merged is not None and merged.watchers == old.watchers
