"""The prompt's structure, the example pool and its retrieval, and the prefix cache's file format."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.examples import Example, ExampleStore, load_examples
from tapir.codegen.generate import GenConfig, Generator
from tapir.codegen.prefix_cache import PrefixCache
from tapir.codegen.prompt import ScreenInfo, build_prompt, render_prefix
from tapir.eval import load_suite

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
APPS = ["music", "clock", "contacts", "notes"]


def _doc(app: str) -> L.AppDocument:
    return L.load_document(SAMPLES / app / f"{app}.yaml")


def test_prefix_is_the_same_for_every_task_and_holds_the_document() -> None:
    doc = _doc("music")
    a = build_prompt(doc, "Play the song Lanterns")
    b = build_prompt(doc, "Sort the songs by artist", screen=ScreenInfo("songs_screen", ("songs_screen__song_list",)))
    assert a.prefix == b.prefix and a.rest != b.rest
    assert a.prefix.endswith("\n") and not a.rest.startswith("\n")
    for e in doc.elements:
        assert f"${e.name} (" in a.prefix
    for m in L.element_methods():
        assert f".{m.name}(" in a.prefix
    assert "'Settings'" in a.prefix  # a list's options
    assert b.rest.splitlines()[-1] == "Your task is: Sort the songs by artist"
    assert "The current screen: songs_screen, showing $songs_screen__song_list." in b.rest
    assert "Plan:" in a.prefix and "```python" in a.prefix


def test_names_style_is_the_papers_compressed_form() -> None:
    doc = _doc("music")
    described, names = render_prefix(doc, "described"), render_prefix(doc, "names")

    def listed(text: str) -> str:  # the element lines, which the two forms differ in
        return "".join(line for line in text.splitlines(keepends=True) if line.startswith("- $"))

    assert len(listed(names)) < len(listed(described)) * 0.7
    assert "- $songs_screen__song_list (list)\n" in names


def test_repair_section_carries_the_failure() -> None:
    from tapir.codegen.prompt import RepairNote

    doc = _doc("music")
    note = RepairNote("$songs_screen__song_list.match('Nope').tap()\n", "match or index failure",
                      "no item matches 'Nope'", 1, "$songs_screen__song_list.match('Nope').tap()",
                      ScreenInfo("songs_screen", ("songs_screen__song_list",)))
    p = build_prompt(doc, "Play Nope", repair=note)
    assert "Your previous script for this task:" in p.rest
    assert "It failed at line 1: match or index failure: no item matches 'Nope'" in p.rest
    assert "The screen when it failed: songs_screen" in p.rest
    assert p.rest.rstrip().endswith("Write the whole script again, fixed.")


@pytest.mark.parametrize("app", APPS)
def test_example_files_check_clean_and_are_not_evaluation_tasks(app: str) -> None:
    doc = _doc(app)
    examples = load_examples(SAMPLES / app / "examples" / "hand-written.yaml")
    assert len(examples) >= 4
    table = L.symbols(doc)
    for ex in examples:
        assert not [i for i in L.check(ex.script, table) if i.is_error], ex.task
        assert set(ex.elements) <= {e.name for e in doc.elements}
    # the evaluation suite's tasks are never in-context examples
    tasks = {t.text.lower() for t in load_suite(SAMPLES / "suite").tasks}
    assert not tasks & {ex.task.lower() for ex in examples}


def test_retrieval_ranks_by_similarity_and_keeps_pool_order() -> None:
    pool = [Example("Turn on shuffle", "a()\n"), Example("Play the song Lanterns", "b()\n"),
            Example("Delete a playlist", "c()\n"), Example("Play the Road trip playlist", "d()\n")]
    store = ExampleStore(pool)
    assert [e.task for e in store.retrieve("play the song Midnight Drive", 1)] == ["Play the song Lanterns"]
    two = store.retrieve("play songs of a playlist", 2)
    assert [e.task for e in two] == ["Play the song Lanterns", "Play the Road trip playlist"]  # pool order
    assert store.retrieve("anything", 0) == []
    assert "Play the song Lanterns" not in [e.task for e in
                                            store.retrieve("play the song X", 4, exclude="Play the song Lanterns")]
    standing, rest = store.split(2)
    assert [e.task for e in standing] == ["Turn on shuffle", "Play the song Lanterns"] and len(rest.examples) == 2


def test_example_answers_use_the_answer_format() -> None:
    ex = Example("Play Lanterns", '$songs_screen__song_list.match("Lanterns").tap()\n', "Tap the song")
    assert ex.answer() == ('Plan: Tap the song\nElements: $songs_screen__song_list\n```python\n'
                           '$songs_screen__song_list.match("Lanterns").tap()\n```')


def test_a_plan_that_only_repeats_the_task_is_written_short_and_retrieved_as_before() -> None:
    from tapir.codegen.examples import NO_PLAN

    script = '$songs_screen__song_list.match("Lanterns").tap()\n'
    task = "Play the song Lanterns from the list of all songs in the library"
    for plan in ("", task, NO_PLAN):  # none, a synthesized pair's, one read back from a new pool
        answer = Example(task, script, plan).answer()
        assert answer.startswith(f"Plan: {NO_PLAN}\nElements: ") and task not in answer
    assert Example(task, script, "Tap the song").answer().startswith("Plan: Tap the song\n")
    others = [Example("Turn on shuffle", "$a.tap()\n"), Example("Show the library of playlists", "$b.tap()\n")]
    old = ExampleStore([Example(task, script, task), *others])
    new = ExampleStore([Example(task, script, NO_PLAN), *others])
    assert old._vectors == new._vectors  # the short plan adds no words of its own


def test_jsonl_examples_beside_the_document_are_loaded_and_vetted(tmp_path: Path) -> None:
    doc_src = (SAMPLES / "notes" / "notes.yaml").read_text(encoding="utf-8")
    (tmp_path / "notes.yaml").write_text(doc_src, encoding="utf-8")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "synth.jsonl").write_text(
        '{"task": "Sort notes by title", "script": "$notes_screen__more_options_button.tap()"}\n'
        '{"task": "bad", "script": "$no_such__element.tap()"}\n'
        '{"no": "task"}\n', encoding="utf-8")
    doc = L.load_document(tmp_path / "notes.yaml")
    store = ExampleStore.for_document(tmp_path / "notes.yaml", L.symbols(doc))
    assert [e.task for e in store.examples] == ["Sort notes by title"]


def test_generator_puts_a_small_pool_in_the_prefix_and_retrieves_from_a_large_one() -> None:
    doc = _doc("music")
    pool = [Example(f"Play song number {i}", f'$songs_screen__song_list[{i}].tap()\n') for i in range(12)]
    backend = ScriptedBackend(["x", "y"])
    gen = Generator(doc, backend, examples=ExampleStore(pool), config=GenConfig(prefix_examples=8, examples=2))
    p1, p2 = gen.prompt("Play song number 10"), gen.prompt("Play song number 3")
    assert p1.prefix == p2.prefix and "Play song number 7" in p1.prefix and "number 8" not in p1.prefix
    assert "More examples:" in p1.rest and "Play song number 10" in p1.rest
    small = Generator(doc, backend, examples=ExampleStore(pool[:3]))
    assert "More examples:" not in small.prompt("x").rest


# -- the prefix cache ----------------------------------------------------------------------------

def test_prefix_cache_round_trip_and_keys(tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path)
    tokens = [1, 2, 3, 40000]
    key = cache.key("model-a", 4096, tokens, label="music-p1")
    assert key.startswith("music-p1-")
    assert key != cache.key("model-b", 4096, tokens, label="music-p1")
    assert key != cache.key("model-a", 8192, tokens, label="music-p1")
    assert key != cache.key("model-a", 4096, tokens + [5], label="music-p1")
    assert cache.load(key) is None
    path = cache.save(key, tokens, b"\x00state\xff" * 10)
    hit = cache.load(key)
    assert hit is not None and hit.tokens == tuple(tokens) and hit.state == b"\x00state\xff" * 10
    assert path.name == f"{key}.kv" and not list(tmp_path.glob(".*.tmp"))


def test_a_damaged_prefix_file_is_a_miss_and_is_removed(tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path)
    key = cache.key("m", 1, [1])
    path = cache.save(key, [1], b"abc")
    path.write_bytes(path.read_bytes()[:-2])
    assert cache.load(key) is None and not path.exists()


def test_prefix_cache_prunes_the_least_recently_used(tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path, max_bytes=2500)
    old = cache.save("old", [1], b"x" * 1000)
    os.utime(old, (time.time() - 100, time.time() - 100))
    cache.save("mid", [1], b"x" * 1000)
    cache.save("new", [1], b"x" * 1000)
    assert sorted(p.stem for p in tmp_path.glob("*.kv")) == ["mid", "new"]


class _SmallContext(ScriptedBackend):
    """A scripted model with a context of ``n_ctx`` tokens (estimated: four characters a token)."""

    def __init__(self, n_ctx: int) -> None:
        super().__init__(["Plan: x\nElements: x\n```python\nprint(1)\n```"])
        self.n_ctx = n_ctx


@pytest.mark.parametrize("ctx", [8192, 4096, 3000, 2400])
def test_the_prompt_always_fits_the_models_context(ctx: int) -> None:
    """``auto`` takes the largest form that fits: the described document, else names only, else
    the screens relevant to the task; the whole request then fits beside the answer's tokens."""
    doc = _doc("music")
    backend = _SmallContext(ctx)
    g = Generator(doc, backend, config=GenConfig())
    described = backend.count_tokens(render_prefix(doc, "described"))
    names = backend.count_tokens(render_prefix(doc, "names"))
    expected = "described" if described <= ctx - 1300 else "names" if names <= ctx - 1300 else "focused"
    assert g.style == expected
    p = g.prompt("Play the song Lanterns")
    assert backend.count_tokens(p.system + p.prefix + p.rest) + g.config.max_tokens <= ctx
    if g.style == "focused":
        # the task's screen is among the few kept, after the cached part (the same for every task)
        assert "$songs_screen__song_list" in p.rest and "$songs_screen__song_list" not in p.prefix
        assert p.prefix == g.prompt("Turn on the dark theme").prefix
        assert len(p.prefix) < len(render_prefix(doc, "described"))


def test_standing_examples_give_way_before_the_documents_descriptions() -> None:
    """A pool whose standing examples would push the described document out of the context loses
    standing examples first (they are retrieved per task instead), not the descriptions."""
    doc = _doc("music")
    pool = [Example(f"Play the song number {i} of the list", f"$songs_screen__song_list[{i}].tap()\n",
                    plan=f"Tap the song at index {i} of the songs list, which plays it") for i in range(8)]
    backend = _SmallContext(8192)
    described = backend.count_tokens(render_prefix(doc, "described"))
    backend.n_ctx = described + 1300 + 150  # room for the document and about two examples, not eight
    g = Generator(doc, backend, examples=ExampleStore(pool), config=GenConfig())
    assert g.style == "described" and 0 < len(g.standing) < 8
    assert g.standing == pool[:len(g.standing)]
    # the others are retrieved per task, after the cached part
    p = g.prompt("Play the song number 7 of the list")
    assert "$songs_screen__song_list[7].tap()" in p.rest and "$songs_screen__song_list[7]" not in p.prefix
    assert backend.count_tokens(p.system + p.prefix + p.rest) + g.config.max_tokens <= backend.n_ctx


def test_a_model_without_a_known_context_gets_the_whole_described_document() -> None:
    g = Generator(_doc("music"), ScriptedBackend(["x"]))
    assert g.style == "described" and g.prompt("x").prefix == render_prefix(_doc("music"), "described")


def test_the_command_lines_prompt_styles_are_the_code_generators() -> None:
    from tapir.cli.gen import PROMPT_STYLES as CLI_STYLES
    from tapir.codegen.prompt import PROMPT_STYLES

    assert CLI_STYLES == PROMPT_STYLES


def test_relevant_screens_put_the_screen_the_task_names_first() -> None:
    from tapir.codegen.prompt import relevant_screens

    doc = _doc("clock")
    order = relevant_screens(doc, "Set a timer for five minutes")
    assert "timer" in order[0]


def test_relevant_screens_follow_the_element_the_task_names_to_the_screen_it_opens() -> None:
    """"a new checklist" names notes_screen's 'New checklist' button, which opens the editor, whose
    own elements never say so: the editor is among the first screens shown (it was third)."""
    from tapir.codegen.prompt import relevant_screens

    order = relevant_screens(_doc("notes"), "Make a new checklist called Groceries")
    assert "edit_note_screen" in order[:2]


def test_a_document_without_examples_gets_the_shape_of_an_answer_in_its_stable_part() -> None:
    """No examples of its own (an imported document): a made-up app's answer shows the shape (few
    elements, set_text, match, a save), with names the answer grammar refuses; and right before the
    task, after the elements, a reminder not to list them."""
    import re

    from tapir.codegen.script_grammar import answer_grammar

    doc = _doc("notes")
    bare = render_prefix(doc, "described")
    assert "For example, in a notes app (not this one)" in bare and '.match("Shopping").tap()' in bare
    shown = set(re.findall(r"\$(\w+__\w+)", bare.split("For example, in a notes app", 1)[1]))
    assert shown and not shown & set(re.findall(r'"\$(\w+)', answer_grammar(doc).to_gbnf()))
    with_examples = render_prefix(doc, "described", [Example("Open the note", "$notes_screen__note_list[0].tap()\n")])
    assert "(not this one)" not in with_examples and "Task: Open the note" in with_examples
    rest = build_prompt(doc, "Add a note").rest.splitlines()
    assert rest[-1] == "Your task is: Add a note" and "not every element of a screen" in rest[-2]
    assert "Write only the steps the task needs" in bare  # the rule, in the cached part
