"""The sensitive-action guard on real apps: hand-labelled views of the 11 DroidTask recordings
(tests/data/guard_labels.json, bench/guards_precision.py), and the lexicon words that labelling
showed were missing, checked one by one without the recordings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tapir.docgen.build.policy import DangerPolicy
from tapir.runtime.guards.lexicon import dialog_category

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.upstream
def test_the_guard_meets_its_targets_on_labelled_real_apps(upstream: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from guards_precision import evaluate
    finally:
        sys.path.remove(str(REPO / "bench"))
    report = evaluate(upstream=upstream)
    assert not report["missing"], report["missing"][:5]
    assert report["views"] >= 300 and len(report["per_app"]) == 11
    overall = report["overall"]
    assert overall["precision"] >= 0.9 and overall["recall"] >= 0.95, (overall, report["misclassified"])
    assert report["information_dialogs_refused"] == []


@pytest.mark.parametrize(("texts", "category"), [
    (['File "IMG_1.jpg" already exists. Overwrite?'], "warning"),
    (["Le fichier existe déjà. L'écraser ?"], "warning"),
    (["Set Dialer as your default phone app?"], "permission"),
    (["Please grant our app access to all your files."], "permission"),
    (["SMS Messenger would like to send a message to 111111.", "This may cause charges on your mobile account."],
     "payment"),
])
def test_words_the_labelled_set_asked_for(texts: list[str], category: str) -> None:
    found = dialog_category(texts)
    assert found is not None and found[0] == category, found


@pytest.mark.parametrize(("label", "word"), [
    ("Call History", None), ("Add call", None), ("speed_dial_label", None), ("Manage speed dial", None),
    ("Clear call history", "clear call history"), ("clear_call_history", "clear call history"),
    ("Call contact", "call"),
])
def test_nouns_are_not_actions(label: str, word: str | None) -> None:
    assert DangerPolicy.default().reason(label) == word
