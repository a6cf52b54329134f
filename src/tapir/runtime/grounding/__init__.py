"""Grounding: finding a document element on a live screen, robustly and without wrong taps.

    from tapir.runtime.grounding import Grounder, GroundingConfig

    grounder = Grounder(document)                     # embedder: the default one when installed
    grounder.identify_screen(tree)                    # ScreenMatch(.name, .score, .candidates)
    grounder.ground("main_screen__sort_button", tree) # Grounding(.node, .method, ...) or None
    items = grounder.items("songs_screen__song_list", tree)
    grounder.match_item("songs_screen__song_list", items, tree, "Yesterday")
    grounder.child("songs_screen__song_list", "songs_screen__song_menu_button", items[0], tree)

Modules: ``grounder`` (the cascade), ``screens`` (screen identification), ``identifiers``
(XPath evaluation in both dialects), ``fuzzy`` (rapidfuzz), ``embedding`` and ``minilm``
(all-MiniLM-L6-v2 sentence embeddings, optional), ``items`` (list items, attributes, match),
``targets`` (kind-aware targets), ``terms`` (the HTML form's facts straight from the tree),
``widgets`` (one widget on several screens: a tab bar's copies on each tab's screen),
``baseline`` (upstream AutoDroid-V2's identifier rules and lookup, for comparison).
"""

from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.embedding import (
    Embedder,
    MiniLMEmbedder,
    SentenceEmbedder,
    default_embedder,
    embedding_status,
)
from tapir.runtime.grounding.grounder import Grounder
from tapir.runtime.grounding.items import node_attributes, node_text
from tapir.runtime.grounding.result import Grounding, ScreenMatch

__all__ = [
    "Embedder",
    "Grounder",
    "Grounding",
    "GroundingConfig",
    "MiniLMEmbedder",
    "ScreenMatch",
    "SentenceEmbedder",
    "default_embedder",
    "embedding_status",
    "node_attributes",
    "node_text",
]
