"""``tapir synth``: walks of the transition graph, validation on fresh simulated apps, repairs,
deduplication, the chat JSONL and the data card."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.docgen.loader import load_document
from tapir.synth import (
    CATEGORIES,
    Action,
    SynthConfig,
    TransitionGraph,
    Validator,
    Walk,
    normalise_script,
    normalise_text,
    synthesize,
    write_outputs,
)
from tapir.synth.graph import _imperative
from tapir.synth.pipeline import _Search, _seen

ROOT = Path(__file__).resolve().parent.parent
MUSIC = ROOT / "samples" / "music" / "music.yaml"
NOTES = ROOT / "samples" / "notes" / "notes.yaml"


@pytest.fixture(scope="module")
def music_run():
    return synthesize([(MUSIC, "sim:music")], SynthConfig(count=10, seed=5, max_complexity=4))


@pytest.fixture(scope="module")
def validator():
    with Validator(load_document(MUSIC), "sim:music") as v:
        yield v


def test_a_seeded_run_gives_validated_pairs_whose_scripts_rerun_green(music_run, validator):
    assert len(music_run.pairs) == 10
    card = music_run.card()
    assert card["pairs"] == 10 and card["per_app"]["music"]["pairs"] == 10
    assert sum(card["per_complexity"].values()) == 10
    assert card["candidates"] == 10 + card["rejected_total"] + card["duplicates"]
    for pair in music_run.pairs:
        assert pair.checks, pair.script
        assert pair.complexity == len([line for line in pair.script.splitlines() if line != "back()"]) or pair.repairs
        # a fresh app, the script again: every derived check holds (and none held on a fresh app)
        assert validator.recheck(pair.script, pair.checks) == [], pair.script
        assert validator.recheck("", pair.checks) != [], pair.checks


def test_the_same_seed_gives_the_same_pairs(music_run):
    again = synthesize([(MUSIC, "sim:music")], SynthConfig(count=10, seed=5, max_complexity=4))
    assert [(p.task, p.script) for p in again.pairs] == [(p.task, p.script) for p in music_run.pairs]
    other = synthesize([(MUSIC, "sim:music")], SynthConfig(count=3, seed=6, max_complexity=4))
    assert [p.script for p in other.pairs] != [p.script for p in music_run.pairs[:3]]


def test_pairs_are_deduplicated_by_script_and_task_text(music_run):
    scripts = [normalise_script(p.script) for p in music_run.pairs]
    texts = [normalise_text(p.task) for p in music_run.pairs]
    assert len(set(scripts)) == len(scripts) and len(set(texts)) == len(texts)
    assert normalise_script("$a.tap()   # go\n\n  $b.tap()\n") == normalise_script("$a.tap()\n$b.tap()")
    assert normalise_text('Play "Lanterns".') == normalise_text('play  "lanterns"')
    walk = Walk("music", (Action("tap", "songs_screen__search_button", "songs_screen"),), ("open the search",))
    scripts_seen: set[str] = set()
    texts_seen: set[str] = set()
    assert not _seen(walk, scripts_seen, texts_seen)
    assert _seen(walk, scripts_seen, texts_seen)
    reworded = Walk("music", walk.actions, ("open the search screen",))
    assert _seen(reworded, scripts_seen, texts_seen)  # same script, other words: still a duplicate


@pytest.mark.parametrize("script, category", [
    ('$songs_screen__song_list.match("Lanterns").tap(\n', "syntax"),
    ("$songs_screen__no_such_button.tap()\n", "check"),
    ("$new_playlist_dialog__create_button.tap()\n", "action"),
    ("$now_playing_screen__next_button.tap()\n", "navigation"),
    ("$songs_screen__play_pause_button.tap()\n", "grounding"),
    ("$songs_screen__search_button.tap()\n", "effect-not-confirmed"),
])
def test_a_failing_script_is_rejected_with_its_category(validator, script, category):
    outcome = validator.validate(script)
    assert not outcome.ok
    assert outcome.category == category, outcome.message
    assert category in CATEGORIES


def test_a_typed_value_must_land_in_the_state(validator):
    script = '$new_playlist_dialog__name_input.set_text("Focus")\n$new_playlist_dialog__create_button.tap()\n'
    assert validator.validate(script, ("Focus",)).ok
    wrong = validator.validate(script, ("Gym",))
    assert (wrong.ok, wrong.category) == (False, "effect-not-confirmed")
    # a value a fresh app already holds proves nothing ("Road" is in the playlist "Road trip")
    search = validator.validate('$search_screen__search_input.set_text("Road")\n$songs_screen__playlists_tab.tap()\n'
                                '$playlists_screen__new_playlist_button.tap()\n'
                                '$new_playlist_dialog__name_input.set_text("Focus")\n'
                                '$new_playlist_dialog__create_button.tap()\n', ("Road", "Focus"))
    assert search.category == "effect-not-confirmed" and search.line == 0


def test_trailing_actions_that_change_nothing_are_trimmed(validator):
    from tapir.synth.pipeline import _trim

    play = '$songs_screen__song_list.match("Cinder").tap()\n'
    outcome = validator.validate(play)
    assert outcome.ok and "position" in validator.time_driven(play, outcome)  # the song plays on
    doc = load_document(MUSIC)
    graph = TransitionGraph(doc, {"songs_screen__song_list": ["Cinder"]})
    rng = random.Random(0)
    actions = (Action("item", "songs_screen__song_list", "songs_screen", "Cinder"),
               Action("option", "main_menu__options", "main_menu", "Sort by", leads_to="sort_dialog"))
    walk = Walk("music", actions, tuple(graph.phrase(a, rng) for a in actions))
    full = validator.validate(walk.script())
    assert full.ok
    trimmed, kept, n = _trim(walk, full, validator)
    assert n == 1 and trimmed.script() == play and kept.ok and "Sort by" not in trimmed.task_text()


def test_an_input_without_its_confirmation_is_repaired(validator):
    doc = load_document(MUSIC)
    graph = TransitionGraph(doc, {})
    rng = random.Random(0)
    typed = Action("input", "new_playlist_dialog__name_input", "new_playlist_dialog", "Focus")
    walk = Walk("music", (typed,), (graph.phrase(typed, rng),))
    search = _Search(graph, validator, rng, SynthConfig(repair_depth=2, repair_budget=4))
    found = search.run(walk)
    assert search.first is not None and search.first.category == "effect-not-confirmed"
    assert found is not None
    repaired, outcome, repairs = found
    assert repairs == ["confirm"] and outcome.ok
    assert repaired.script().splitlines()[-1] == "$new_playlist_dialog__create_button.tap()"
    assert "create the playlist" in repaired.task_text()
    # with no repair budget the same walk is rejected
    assert _Search(graph, validator, rng, SynthConfig(repair_budget=0)).run(walk) is None


def test_walks_follow_the_transition_graph():
    doc = load_document(MUSIC)
    graph = TransitionGraph(doc, {"songs_screen__song_list": ["Lanterns", "Cinder"]})
    assert graph.anchors[0] == "songs_screen" and "playlists_screen" in graph.anchors
    more = next(a for a in graph.actions["songs_screen"] if a.kind == "item_child")
    assert more.leads_to == "song_options_menu"
    delete = next(a for a in graph.actions["song_options_menu"] if a.text == "Delete")
    assert delete.leads_to == "delete_song_dialog"  # from the delete button's document path
    rng = random.Random(3)
    for _ in range(30):
        walk = graph.sample_walk(rng, 3)
        assert walk is not None and 1 <= walk.complexity <= 3
        for i, (before, after) in enumerate(zip(walk.actions, walk.actions[1:], strict=False)):
            if before.leads_to and graph.actions.get(before.leads_to):
                used = {(a.element, a.child) for a in walk.actions[: i + 1]}
                # the next action is on the screen this one led to, unless that screen had nothing left
                assert after.screen == before.leads_to or all(
                    (a.element, a.child) in used for a in graph.actions[before.leads_to])
    assert _imperative("Opens the search screen.") == "open the search screen"
    assert _imperative("Pauses or resumes the song (its description is Pause).") == "pause or resume the song"
    assert _imperative("Deletes the playlist and goes back.") == "delete the playlist and go back"
    assert _imperative("The bar at the bottom.") == "tap the bar at the bottom"


def test_the_jsonl_is_in_chat_format_with_a_data_card(music_run, tmp_path):
    files = write_outputs(music_run, tmp_path / "out.jsonl")
    assert [f.name for f in files] == ["out.jsonl", "out.card.json", "out.card.md"]
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(music_run.pairs)
    for line, pair in zip(lines, music_run.pairs, strict=True):
        record = json.loads(line)
        roles = [m["role"] for m in record["messages"]]
        assert roles == ["system", "user", "assistant"]
        user, answer = record["messages"][1]["content"], record["messages"][2]["content"]
        assert user.rstrip().endswith(f"Your task is: {pair.task}")
        assert "$songs_screen__song_list" in user  # the document's elements, as tapir gen shows them
        assert answer.startswith("Plan: ") and f"```python\n{pair.script}```" in answer
        assert record["meta"]["checks"] == list(pair.checks)
    card = json.loads((tmp_path / "out.card.json").read_text(encoding="utf-8"))
    assert card["format"] == "tapir-synth/1" and card["seed"] == 5 and card["pairs"] == 10
    assert set(card["rejected"]) <= set(CATEGORIES) and sum(card["rejected"].values()) == card["rejected_total"]
    assert "| music | 10 |" in (tmp_path / "out.card.md").read_text(encoding="utf-8")


def test_the_command(tmp_path, capsys):
    out = tmp_path / "notes.jsonl"
    assert main(["synth", "--doc", str(NOTES), "-o", str(out), "--count", "4", "--seed", "2"]) == 0
    printed = capsys.readouterr().out
    assert "4 pairs from" in printed and out.is_file() and len(out.read_text().splitlines()) == 4
    assert main(["synth", "--doc", str(NOTES), "--count", "4"]) == 2
    assert "give -o" in capsys.readouterr().err
    assert main(["synth", "--doc", str(NOTES), "-o", str(out), "--device", "emulator-5554"]) == 2
    assert main(["synth", "--doc", str(NOTES), "-o", str(out), "--device", "sim:music"]) == 2
    assert "has no app org.tapir.notes" in capsys.readouterr().err
    assert main(["synth", "--doc", str(tmp_path / "missing.yaml"), "-o", str(out)]) == 2


def test_a_model_rephrases_the_task_texts_and_the_template_stays_as_the_plan(tmp_path):
    seen: list[str] = []

    def rephrase(document, text: str) -> str:
        seen.append(text)
        return f"In {document.app.name}: {text.lower()}"

    run = synthesize([(NOTES, "sim:notes")], SynthConfig(count=2, seed=4, rephrase=rephrase))
    assert [p.template_task for p in run.pairs] == seen
    assert all(p.task.startswith("In Notes: ") for p in run.pairs)
    write_outputs(run, tmp_path / "r.jsonl")
    record = json.loads((tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert record["messages"][1]["content"].rstrip().endswith(run.pairs[0].task)
    assert record["messages"][2]["content"].startswith(f"Plan: {run.pairs[0].template_task}")
    assert run.card()["config"]["texts"] == "model"
