"""String similarity with rapidfuzz: labels against node texts, resource names against each other.

Scores are in [0, 1]. Labels are compared after case and punctuation folding, whole (in any word
order) or, scaled down, as a part of the other ("Save" / "Save changes"), so a reworded label
still scores high, a view that shows exactly the label scores higher, and unrelated ones low; resource names are split
into words first, so ``saveButton``, ``save_button`` and ``btn_save`` compare as the same words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

#: Labels are compared on their first characters only: upstream writes a container's whole text
#: into its XPath, and ``ScreenView.strings`` caps a container's text at the same length.
LABEL_CAP = 160

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[_\W]+")
_SPACE = re.compile(r"\s+")
# Words that name a widget's kind rather than what it is for ("sort_button" is about sorting).
KIND_WORDS = frozenset({
    "button", "btn", "ib", "iv", "tv", "et", "view", "text", "label", "icon", "image", "img", "list",
    "item", "items", "entry", "entries", "options", "option", "menu", "input", "field", "edit",
    "layout", "container", "holder", "wrapper", "widget", "checkbox", "switch", "toggle", "tab",
    "screen", "dialog", "popup", "bar", "group", "recycler", "recyclerview", "selector", "picker",
})


def fold(text: str) -> str:
    """Case- and space-insensitive form: ``'  Dark\\nTheme '`` -> ``'dark theme'``."""
    return _SPACE.sub(" ", text).strip().casefold()


@lru_cache(maxsize=8192)
def words(name: str) -> str:
    """``main_screen__sortButton`` -> ``'main screen sort button'``; resource ids keep the short part."""
    short = name.rsplit("/", 1)[-1]
    return " ".join(w.lower() for w in _SPLIT.split(_CAMEL.sub(" ", short)) if w)


def topic(name: str) -> str:
    """The words of a name without widget-kind words: ``theme_options`` -> ``'theme'``."""
    kept = [w for w in words(name).split() if w not in KIND_WORDS]
    return " ".join(kept)


# A label found inside a longer one ("Save" in "Save changes") scores this share of a full match:
# enough to pass a threshold, and a clear margin below a view that shows exactly the label.
PARTIAL_SCALE = 0.85


@lru_cache(maxsize=65536)
def label_similarity(a: str, b: str) -> float:
    """Whole-string similarity (in any word order), or a scaled-down partial one."""
    pa, pb = default_process(a), default_process(b)
    if not pa or not pb:
        return 0.0
    if pa == pb:
        return 1.0
    whole = max(fuzz.ratio(pa, pb), fuzz.token_sort_ratio(pa, pb))
    shorter, longer = sorted((len(pa), len(pb)))
    partial = 0.0
    if shorter >= 3:
        partial = max(fuzz.partial_ratio(pa, pb), fuzz.token_set_ratio(pa, pb))
        if longer > 8 * shorter:  # a word inside a paragraph says little
            partial *= 0.7
    return max(whole, PARTIAL_SCALE * partial) / 100.0


def shown_similarity(wanted: str, shown: str) -> float:
    """How well a view showing ``shown`` stands for a label ``wanted``: ``label_similarity``, but a
    view that shows only part of the label's words ("Play" for "Play next", "Add" for "Add to
    playlist") gets no credit for the part: it is another, less specific thing, and more likely a
    sibling of the one meant. A view that shows the label and more ("Gym" in "Gym · Mon, Wed")
    keeps it."""
    pa, pb = default_process(wanted), default_process(shown)
    if pa and pb and pa != pb:
        ta, tb = set(pa.split()), set(pb.split())
        if tb < ta:
            return max(fuzz.ratio(pa, pb), fuzz.token_sort_ratio(pa, pb)) / 100.0
    return label_similarity(wanted, shown)


# Naming-convention affixes that do not change what an id means (``btn_save``, ``save_view``).
_AFFIXES = frozenset({"btn", "tv", "iv", "ib", "et", "view"})


@lru_cache(maxsize=65536)
def rid_similarity(a: str, b: str) -> float:
    """Similarity of two resource names. Convention affixes are ignored at a small cost; other
    words count (``title`` and ``title_icon`` are different views), and when the names share
    words, only the words that differ are compared (``item_checkbox`` is not ``item_delete``)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    if wa.replace(" ", "") == wb.replace(" ", ""):
        return 1.0
    ca = [w for w in wa.split() if w not in _AFFIXES]
    cb = [w for w in wb.split() if w not in _AFFIXES]
    if ca and ca == cb:
        return 0.95
    score = fuzz.token_sort_ratio(wa, wb) / 100.0
    # Words both names have say nothing about which of two sibling views is meant
    # (``checklist_item_checkbox`` and ``checklist_item_delete``): the words that differ must be alike.
    common = set(ca) & set(cb)
    da = " ".join(w for w in ca if w not in common)
    db = " ".join(w for w in cb if w not in common)
    if common and da and db:
        score = min(score, fuzz.ratio(da, db) / 100.0)
    return score


def same_id(a: str, b: str) -> bool:
    """Two resource names for the same view in two naming conventions: the same words whatever
    the case and separators (``songs_list``, ``songsList``), or once convention affixes are
    dropped (``tv_title``, ``title_view``)."""
    return rid_similarity(a, b) >= 0.95


