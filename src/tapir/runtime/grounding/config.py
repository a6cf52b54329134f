"""Thresholds of the grounding cascade, in one frozen value.

Every stage accepts its best candidate only when the score reaches the stage's threshold *and*
beats the best candidate with a different target by the stage's margin: two near-identical
candidates make the stage refuse, so a wrong element is never tapped on a coin flip. The
defaults were tuned on ``bench/drift.py`` (recorded DroidTask screens under synthetic drift).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GroundingConfig:
    #: Fuzzy stage: rapidfuzz similarity in [0, 1] of the element's known labels and resource id.
    fuzzy_threshold: float = 0.8
    fuzzy_margin: float = 0.1
    #: A fallback identifier's hit whose label is less similar than this to every label the
    #: element is known by is doubtful (and refused if the identifier is a bare position).
    verify_threshold: float = 0.6
    #: Embedding stage: cosine similarity of sentence embeddings.
    embedding_threshold: float = 0.6
    embedding_margin: float = 0.15
    #: ``match(text)`` on list items: fuzzy, then embedding (the query is put in the list's context).
    match_fuzzy_threshold: float = 0.85
    match_fuzzy_margin: float = 0.08
    match_embedding_threshold: float = 0.6
    match_embedding_margin: float = 0.05
    #: Screen identification: the least score that names a screen, and the lead over the
    #: runner-up below which the answer is a tie (lower confidence).
    screen_threshold: float = 0.5
    screen_margin: float = 0.1
    #: Refuse an element when another screen that defines the same identifiers is showing
    #: (paper, 3.3.1: "in case the current GUI screen is another state ... identical XPaths").
    check_screen: bool = True
    #: Switches for ablations (``bench/drift.py``) and for runs that must stay exact.
    use_fuzzy: bool = True
    use_embedding: bool = True
